//! Two ways to make a character, side by side on an obstacle course:
//!
//! - **kinematic** (blue, near lanes): a [`CharacterController`]. The game only sets
//!   `desired_velocity` and calls `jump`; the controller slides it along walls, climbs the
//!   0.25 m stairs, walks up and down the 20° ramp, stops at the foot of the 55° ramp (too
//!   steep) and shoves the crates out of its way with a kinematic body's infinite mass.
//! - **dynamic** (red, far lane): a [`RigidBody::Dynamic`] capsule with
//!   [`LockedAxes::ROTATION_LOCKED`], steered by impulses through the [`Forces`] query data,
//!   with its own ground check (a sphere cast down from its feet with [`SpatialQuery`]) for
//!   jumping and for braking. It is a body like any other: it pushes and is pushed by the
//!   balls as mass for mass, walks up the 15° ramp and falls off ledges, but does not climb
//!   steps, so it jumps the hurdle.
//!
//! Both walk a demo path until a movement key is pressed. Then WASD or the arrow keys move the
//! active character relative to the camera (which follows it), Space jumps, and Tab hands the
//! keys to the other character; the one not under the keys walks its path. The circle under
//! each character's feet is its ground check: green on ground, red in the air.
//!
//! ```text
//! cargo run --features examples-render --example character_3d
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

mod common_3d;

use bevy::prelude::*;
use common_3d::{
    ExamplePlugin, OrbitCamera, PALETTE, Readout, material, spawn_ground, spawn_readout,
};
use impetus3d::prelude::*;

/// Walking speed, m/s.
const SPEED: f32 = 3.5;
/// Take-off speed of a jump, m/s (about 0.8 m high).
const JUMP_SPEED: f32 = 4.0;
/// Capsule radius and the length of its cylinder: 1.6 m tall.
const RADIUS: f32 = 0.3;
const LENGTH: f32 = 1.0;
/// How fast the dynamic character reaches the walking speed it wants, on the ground and in the
/// air, m/s²: not at once, so that it is a body with inertia, not a teleporter.
const GROUND_ACCELERATION: f32 = 30.0;
const AIR_ACCELERATION: f32 = 6.0;
/// Steepest ground the dynamic character stands on, as the cosine of its angle (50°).
const MIN_GROUND_COS: f32 = 0.64;

fn main() {
    App::new()
        .add_plugins(ExamplePlugin {
            title: "impetus3d: characters",
            help: "WASD / arrows: walk (camera-relative), space: jump, tab: switch character\n\
                   until a key is pressed both walk a demo path",
            camera: OrbitCamera {
                focus: Vec3::new(3.0, 0.0, -1.0),
                distance: 19.0,
                yaw: 0.2,
                pitch: 0.5,
            },
        })
        .init_resource::<Control>()
        .add_systems(Startup, setup)
        .add_systems(
            Update,
            (steer, follow_active, draw_ground_checks, show_state).chain(),
        )
        // Movement runs in FixedUpdate, once per physics step just before it, so that every
        // step sees the input however many steps a frame runs (zero or two at times).
        .add_systems(FixedUpdate, (drive_kinematic, drive_dynamic))
        .run();
}

/// Which character the keys move, and whether a key has been pressed yet.
#[derive(Resource, Default)]
struct Control {
    active: Kind,
    manual: bool,
}

#[derive(Component, Clone, Copy, Default, PartialEq, Eq, Debug)]
enum Kind {
    #[default]
    Kinematic,
    Dynamic,
}

/// What a character wants this step: a horizontal heading (unit or zero) and a jump. Written
/// in `Update` from the keys or the demo path, read in `FixedUpdate`.
#[derive(Component, Default)]
struct Intent {
    heading: Vec3,
    /// Set by a key press or the path, cleared by the next step whether it could jump or not.
    jump: bool,
}

/// The dynamic character's ground check, from its last step.
#[derive(Component, Default)]
struct Ground {
    /// The ground's normal, if the character stands on walkable ground.
    normal: Option<Vec3>,
}

/// A demo path: points on the ground walked in a loop.
#[derive(Component)]
struct Path {
    points: &'static [Waypoint],
    next: usize,
    /// Time spent heading for `next`, s.
    time: f32,
}

/// A point of a demo path (x, z), whether to jump on reaching it, and how long to try before
/// giving up on it (the steep ramp cannot be climbed, a crate may be in the way).
struct Waypoint(f32, f32, bool, f32);

const KINEMATIC_PATH: &[Waypoint] = &[
    // Along the near edge, shoving the crates.
    Waypoint(3.0, 3.0, false, 4.0),
    // Round to the foot of the stairs, up them, a jump on the platform, down the 20° ramp.
    Waypoint(-0.5, 0.0, false, 3.0),
    Waypoint(4.5, 0.0, true, 3.0),
    Waypoint(10.0, 0.0, false, 3.0),
    // Into the 55° ramp: it stops at the foot until it gives up.
    Waypoint(13.0, 0.0, false, 1.5),
    // Back along the near edge.
    Waypoint(10.0, 3.0, false, 3.0),
    Waypoint(-7.0, 3.0, false, 6.0),
];

const DYNAMIC_PATH: &[Waypoint] = &[
    // A jump over the hurdle, up the 15° ramp, off the end of the platform, into the balls.
    Waypoint(-5.6, -5.0, true, 3.0),
    Waypoint(10.0, -5.0, false, 6.0),
    Waypoint(10.0, -7.5, false, 2.0),
    Waypoint(-8.0, -7.5, false, 6.0),
    Waypoint(-8.0, -5.0, false, 2.0),
];

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    spawn_ground(&mut commands, &mut meshes, &mut materials, 60.0);
    let stone = material(&mut materials, Color::srgb(0.6, 0.58, 0.55));
    let mut block = |commands: &mut Commands, size: Vec3, transform: Transform| {
        commands.spawn((
            RigidBody::Static,
            Collider::cuboid(size.x, size.y, size.z),
            Mesh3d(meshes.add(Cuboid::from_size(size))),
            MeshMaterial3d(stone.clone()),
            transform,
        ));
    };

    // The kinematic course (z from -1.5 to 1.5): four 0.25 m stairs up to a 1 m platform, a 20°
    // ramp down from its far end, and a 55° ramp beyond.
    for i in 0..4 {
        let height = 0.25 * (i + 1) as f32;
        let (x0, x1) = (
            1.0 + 0.6 * i as f32,
            if i == 3 { 6.0 } else { 1.6 + 0.6 * i as f32 },
        );
        let at = Vec3::new((x0 + x1) / 2.0, height / 2.0, 0.0);
        block(
            &mut commands,
            Vec3::new(x1 - x0, height, 3.0),
            Transform::from_translation(at),
        );
    }
    let (size, transform) = slab(Vec3::new(6.0, 1.0, 0.0), Vec3::new(8.75, 0.0, 0.0), 3.0);
    block(&mut commands, size, transform);
    let steep = 55f32.to_radians();
    let (size, transform) = slab(
        Vec3::new(11.0, 0.0, 0.0),
        Vec3::new(11.0 + 2.0 / steep.tan(), 2.0, 0.0),
        3.0,
    );
    block(&mut commands, size, transform);

    // The dynamic course (z from -6 to -4): a 0.35 m hurdle, a 15° ramp up to a platform it
    // walks off.
    block(
        &mut commands,
        Vec3::new(0.3, 0.35, 2.0),
        Transform::from_xyz(-4.0, 0.175, -5.0),
    );
    let rise = 4.0 * 15f32.to_radians().tan();
    let (size, transform) = slab(Vec3::new(-1.0, 0.0, -5.0), Vec3::new(3.0, rise, -5.0), 2.0);
    block(&mut commands, size, transform);
    block(
        &mut commands,
        Vec3::new(3.0, rise, 2.0),
        Transform::from_xyz(4.5, rise / 2.0, -5.0),
    );

    // Crates on the kinematic character's way, and balls on the dynamic one's. Light (200
    // kg/m³) so that they fly a little when shoved.
    let crate_mesh = meshes.add(Cuboid::new(0.8, 0.8, 0.8));
    let wood = material(&mut materials, Color::srgb(0.62, 0.44, 0.27));
    for (x, z) in [(-4.0, 3.0), (-3.0, 3.4), (-3.0, 2.6), (-2.0, 3.0)] {
        commands.spawn((
            RigidBody::Dynamic,
            Collider::cuboid(0.8, 0.8, 0.8),
            ColliderDensity(200.0),
            Mesh3d(crate_mesh.clone()),
            MeshMaterial3d(wood.clone()),
            Transform::from_xyz(x, 0.4, z),
        ));
    }
    let ball_mesh = meshes.add(Sphere::new(0.35));
    for (i, (x, z)) in [(8.5, -5.0), (9.0, -5.6), (9.0, -4.4)]
        .into_iter()
        .enumerate()
    {
        commands.spawn((
            RigidBody::Dynamic,
            Collider::sphere(0.35),
            ColliderDensity(200.0),
            Mesh3d(ball_mesh.clone()),
            MeshMaterial3d(material(&mut materials, PALETTE[1 + i])),
            Transform::from_xyz(x, 0.35, z),
        ));
    }

    // The characters: the same capsule, drawn between physics steps (physics runs at 64 Hz,
    // the screen at 60 or more).
    let capsule = meshes.add(Capsule3d::new(RADIUS, LENGTH));
    let stand = RADIUS + LENGTH / 2.0 + 0.01;
    commands.spawn((
        Kind::Kinematic,
        CharacterController::default(),
        Collider::capsule(RADIUS, LENGTH),
        Mesh3d(capsule.clone()),
        MeshMaterial3d(material(&mut materials, PALETTE[3])),
        Transform::from_xyz(-7.0, stand, 3.0),
        TransformInterpolation,
        Intent::default(),
        Path::new(KINEMATIC_PATH),
    ));
    commands.spawn((
        Kind::Dynamic,
        RigidBody::Dynamic,
        Collider::capsule(RADIUS, LENGTH),
        // Upright whatever hits it: the solver never turns it.
        LockedAxes::ROTATION_LOCKED,
        // A person's mass, whatever the capsule's volume.
        Mass(80.0),
        // No friction, so that it does not stick to walls it runs into; the drive brakes it
        // on the ground instead.
        Friction::new(0.0).with_combine_rule(CoefficientCombine::Min),
        // It must keep answering the keys even when it stands still.
        SleepingDisabled,
        Mesh3d(capsule),
        MeshMaterial3d(material(&mut materials, PALETTE[0])),
        Transform::from_xyz(-8.0, stand, -5.0),
        TransformInterpolation,
        Intent::default(),
        Ground::default(),
        Path::new(DYNAMIC_PATH),
    ));
    spawn_readout(&mut commands);
}

/// A static slab `width` wide (along Z) whose top surface runs from `from` to `to` (both at
/// z = from.z): its size and transform. For ramps.
fn slab(from: Vec3, to: Vec3, width: f32) -> (Vec3, Transform) {
    const THICKNESS: f32 = 0.2;
    let along = to - from;
    let rotation = Quat::from_rotation_z(along.y.atan2(along.x));
    let centre = (from + to) / 2.0 - rotation * Vec3::Y * (THICKNESS / 2.0);
    (
        Vec3::new(along.length(), THICKNESS, width),
        Transform::from_translation(centre).with_rotation(rotation),
    )
}

impl Path {
    fn new(points: &'static [Waypoint]) -> Self {
        Self {
            points,
            next: 0,
            time: 0.0,
        }
    }

    /// The heading towards the next point, moving on to the one after when the character is
    /// there (jumping if the point says so) or has tried long enough.
    fn steer(&mut self, position: Vec3, dt: f32, intent: &mut Intent) {
        let Waypoint(x, z, jump, patience) = self.points[self.next];
        let offset = Vec3::new(x - position.x, 0.0, z - position.z);
        self.time += dt;
        if offset.length() < 0.3 || self.time > patience {
            intent.jump |= jump && self.time <= patience;
            self.next = (self.next + 1) % self.points.len();
            self.time = 0.0;
        }
        intent.heading = offset.normalize_or_zero();
    }
}

/// Turns the keys (or the demo paths) into each character's [`Intent`].
fn steer(
    keys: Res<ButtonInput<KeyCode>>,
    time: Res<Time>,
    mut control: ResMut<Control>,
    camera: Query<&Transform, With<Camera3d>>,
    mut characters: Query<(&Kind, &Transform, &mut Intent, &mut Path)>,
) {
    if keys.just_pressed(KeyCode::Tab) {
        control.active = match control.active {
            Kind::Kinematic => Kind::Dynamic,
            Kind::Dynamic => Kind::Kinematic,
        };
    }
    let pressed = |codes: [KeyCode; 2]| keys.any_pressed(codes);
    let forward = pressed([KeyCode::KeyW, KeyCode::ArrowUp]);
    let back = pressed([KeyCode::KeyS, KeyCode::ArrowDown]);
    let left = pressed([KeyCode::KeyA, KeyCode::ArrowLeft]);
    let right = pressed([KeyCode::KeyD, KeyCode::ArrowRight]);
    if forward || back || left || right || keys.just_pressed(KeyCode::Space) {
        control.manual = true;
    }
    // Camera-relative: "forward" is where the camera looks, flattened onto the ground.
    let (ahead, side) = camera.single().map_or((Vec3::NEG_Z, Vec3::X), |camera| {
        let ahead = (camera.forward().as_vec3() * Vec3::new(1.0, 0.0, 1.0)).normalize_or_zero();
        (ahead, ahead.cross(Vec3::Y))
    });
    let axis = |plus: bool, minus: bool| f32::from(u8::from(plus)) - f32::from(u8::from(minus));
    for (kind, transform, mut intent, mut path) in &mut characters {
        if control.manual && *kind == control.active {
            let wish = ahead * axis(forward, back) + side * axis(right, left);
            intent.heading = wish.normalize_or_zero();
            intent.jump |= keys.just_pressed(KeyCode::Space);
        } else {
            path.steer(transform.translation, time.delta_secs(), &mut intent);
        }
    }
}

/// The kinematic character: the controller does the walking, the game only says where to.
fn drive_kinematic(
    mut characters: Query<(
        &mut CharacterController,
        &mut CharacterControllerState,
        &mut Intent,
    )>,
) {
    for (mut controller, mut state, mut intent) in &mut characters {
        controller.desired_velocity = intent.heading * SPEED;
        if std::mem::take(&mut intent.jump) && state.grounded {
            state.jump(JUMP_SPEED);
        }
    }
}

/// The dynamic character: a ground check, then impulses that bring its horizontal velocity
/// towards the one it wants (quickly on the ground, slowly in the air), and a jump impulse.
fn drive_dynamic(
    query: SpatialQuery,
    time: Res<Time>,
    mut characters: Query<(Entity, Forces, &ComputedMass, &mut Intent, &mut Ground)>,
) {
    let dt = time.delta_secs();
    for (entity, mut body, mass, mut intent, mut ground) in &mut characters {
        // Cast a sphere a little smaller than the capsule's bottom cap straight down from the
        // cap's centre: it finds ground under any part of the foot (a ray from the centre
        // would miss it on a ledge's edge). The capsule itself is left out.
        let foot = body.center_of_mass() - Vec3::Y * (LENGTH / 2.0);
        let probe = Collider::sphere(RADIUS * 0.9);
        let reach = RADIUS * 0.1 + 0.08;
        let filter = SpatialQueryFilter::from_excluded_entities([entity]);
        let config = ShapeCastConfig::from_max_distance(reach);
        let hit = query.cast_shape(&probe, foot, Quat::IDENTITY, Dir3::NEG_Y, &config, &filter);
        ground.normal = hit
            .map(|hit| hit.normal2)
            .filter(|normal| normal.y >= MIN_GROUND_COS);

        let velocity = body.linear_velocity();
        let horizontal = velocity * Vec3::new(1.0, 0.0, 1.0);
        let acceleration = if ground.normal.is_some() {
            GROUND_ACCELERATION
        } else {
            AIR_ACCELERATION
        };
        let change = (intent.heading * SPEED - horizontal).clamp_length_max(acceleration * dt);
        body.apply_linear_impulse(mass.mass() * change);
        if std::mem::take(&mut intent.jump) && ground.normal.is_some() {
            // Whatever it was doing vertically, it leaves at the jump speed.
            body.apply_linear_impulse(Vec3::Y * mass.mass() * (JUMP_SPEED - velocity.y));
        }
    }
}

/// Once the keys are in use, the camera follows the character they move.
fn follow_active(
    control: Res<Control>,
    time: Res<Time>,
    characters: Query<(&Kind, &Transform), Without<OrbitCamera>>,
    mut cameras: Query<&mut OrbitCamera>,
) {
    if !control.manual {
        return;
    }
    let Some((_, target)) = characters.iter().find(|(k, _)| **k == control.active) else {
        return;
    };
    for mut orbit in &mut cameras {
        let blend = 1.0 - (-5.0 * time.delta_secs()).exp();
        orbit.focus = orbit.focus.lerp(target.translation, blend);
        orbit.distance = orbit.distance.min(14.0);
    }
}

/// A circle under each character's feet: green when its ground check finds ground.
fn draw_ground_checks(
    mut gizmos: Gizmos,
    kinematic: Query<(&Transform, &CharacterControllerState)>,
    dynamic: Query<(&Transform, &Ground)>,
) {
    let feet = |transform: &Transform| transform.translation - Vec3::Y * (RADIUS + LENGTH / 2.0);
    let states = kinematic.iter().map(|(t, s)| (feet(t), s.grounded));
    let states = states.chain(dynamic.iter().map(|(t, g)| (feet(t), g.normal.is_some())));
    for (at, grounded) in states {
        let color = if grounded {
            Color::srgb(0.2, 0.9, 0.3)
        } else {
            Color::srgb(0.95, 0.2, 0.2)
        };
        let circle = Isometry3d::new(
            at + Vec3::Y * 0.02,
            Quat::from_rotation_x(-90f32.to_radians()),
        );
        gizmos.circle(circle, RADIUS + 0.1, color);
    }
}

/// The readout: who has the keys, and what each character's ground check says.
fn show_state(
    control: Res<Control>,
    kinematic: Query<&CharacterControllerState>,
    dynamic: Query<(&Ground, &LinearVelocity)>,
    mut readout: Query<&mut Text, With<Readout>>,
) {
    let who = match (control.manual, control.active) {
        (false, _) => "demo: both walk their paths",
        (true, Kind::Kinematic) => "keys move the kinematic character (blue)",
        (true, Kind::Dynamic) => "keys move the dynamic character (red)",
    };
    let mut text = format!("{who}\n");
    for state in &kinematic {
        text += &format!(
            "kinematic: {}, speed {:.1} m/s, stepped {:.2} m, {} obstacle(s)\n",
            if state.grounded {
                "grounded"
            } else {
                "in the air"
            },
            state.velocity.length(),
            state.step_climbed,
            state.hits.len(),
        );
    }
    for (ground, velocity) in &dynamic {
        text += &format!(
            "dynamic: {}, speed {:.1} m/s",
            match ground.normal {
                Some(n) => format!("grounded (slope {:.0} deg)", n.y.acos().to_degrees()),
                None => "in the air".to_string(),
            },
            velocity.length(),
        );
    }
    for mut readout in &mut readout {
        if readout.0 != text {
            readout.0.clone_from(&text);
        }
    }
}
