//! Transform interpolation and extrapolation in a window, with the physics slowed to 20 Hz so
//! the difference is easy to see.
//!
//! Three lanes run the same motion: a kinematic box sliding back and forth along its rail at up
//! to 20 m/s, and a free-spinning rotor (a dynamic body without gravity) beside it. Only the
//! way they are drawn differs:
//!
//! - top lane, no component: `Transform` changes only when a step runs, so the bodies jump
//!   about a metre every 50 ms and stand still in between;
//! - middle lane, [`TransformInterpolation`]: drawn between the last two step poses, smooth,
//!   one step behind;
//! - bottom lane, [`TransformExtrapolation`]: drawn ahead of the last step pose by its
//!   velocity, smooth and on time, overshooting a little where the box turns round.
//!
//! Dots trail behind the box and one tip of each rotor: where the last frames drew them. The
//! top lane's dots come in clumps, a few frames on one spot; the others are evenly spaced.
//!
//! ```text
//! cargo run --features examples-render --example interpolation_3d
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

mod common_3d;

use std::collections::VecDeque;
use std::f32::consts::TAU;

use bevy::prelude::*;
use common_3d::{ExamplePlugin, OrbitCamera, PALETTE, material, spawn_ground};
use impetus3d::prelude::*;

/// Physics rate, Hz: slow on purpose.
const PHYSICS_HZ: f64 = 20.0;
/// Half the box's travel, m.
const AMPLITUDE: f32 = 6.5;
/// Time for one trip there and back, s.
const PERIOD: f32 = 2.0;
/// Rotor spin, rad/s.
const SPIN: f32 = 6.0;
/// Rotor arm length from the hub, m.
const ARM: f32 = 1.0;
/// Frames of trail kept.
const TRAIL: usize = 24;
/// Height of each lane's rail top, top lane first, m.
const LANES: [f32; 3] = [6.8, 3.8, 0.8];
/// The rotors' hub, along X.
const ROTOR_X: f32 = 10.5;
/// Height of the rotors' hub above the rail, m.
const ROTOR_HEIGHT: f32 = 1.3;

fn main() {
    App::new()
        .add_plugins(ExamplePlugin {
            title: "impetus3d: interpolation",
            help: "physics at 20 Hz; the same motion in each lane, drawn three ways.\n\
                   dots: where each of the last frames drew the box and a rotor tip",
            camera: OrbitCamera {
                focus: Vec3::new(1.5, 4.3, 0.0),
                distance: 19.0,
                yaw: 0.0,
                pitch: 0.12,
            },
        })
        .insert_resource(Time::<Fixed>::from_hz(PHYSICS_HZ))
        .add_systems(Startup, setup)
        .add_systems(FixedUpdate, drive_sliders)
        .add_systems(Update, place_labels)
        .add_systems(
            PostUpdate,
            record_and_draw_trails
                .after(PhysicsInterpolationSystems)
                .before(bevy::transform::TransformSystems::Propagate),
        )
        .run();
}

/// How a lane's bodies are drawn.
#[derive(Clone, Copy)]
enum Drawing {
    Raw,
    Interpolated,
    Extrapolated,
}

impl Drawing {
    fn label(self) -> &'static str {
        match self {
            Drawing::Raw => "no interpolation: Transform jumps once per step",
            Drawing::Interpolated => "TransformInterpolation: between the last two steps",
            Drawing::Extrapolated => "TransformExtrapolation: ahead of the last step",
        }
    }

    /// Adds this lane's component, if any.
    fn insert(self, entity: &mut EntityCommands) {
        match self {
            Drawing::Raw => {}
            Drawing::Interpolated => {
                entity.insert(TransformInterpolation);
            }
            Drawing::Extrapolated => {
                entity.insert(TransformExtrapolation);
            }
        }
    }
}

/// A kinematic box sliding along X, its path centred on `x = 0`.
#[derive(Component)]
struct Slider;

/// Dots where the last [`TRAIL`] frames drew the point `local` of this body.
#[derive(Component)]
struct Trail {
    local: Vec3,
    color: Color,
    points: VecDeque<Vec3>,
}

impl Trail {
    fn new(local: Vec3, color: impl Into<Color>) -> Self {
        Self {
            local,
            color: color.into(),
            points: VecDeque::with_capacity(TRAIL + 1),
        }
    }
}

/// A text label kept on screen next to a point in the world.
#[derive(Component)]
struct WorldLabel(Vec3);

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    spawn_ground(&mut commands, &mut meshes, &mut materials, 60.0);
    // Each rail runs from just past the box's left end to just past the rotor.
    let (rail_left, rail_right) = (-AMPLITUDE - 1.0, ROTOR_X + 1.0);
    let rail_length = rail_right - rail_left;
    let rail_centre = 0.5 * (rail_left + rail_right);
    let rail_mesh = meshes.add(Cuboid::new(rail_length, 0.2, 1.2));
    let post_mesh = meshes.add(Cuboid::new(0.3, ROTOR_HEIGHT, 0.3));
    let rail_material = material(&mut materials, Color::srgb(0.42, 0.42, 0.47));
    let box_mesh = meshes.add(Cuboid::new(1.0, 1.0, 1.0));
    let bar_x = meshes.add(Cuboid::new(2.0 * ARM, 0.25, 0.25));
    let bar_y = meshes.add(Cuboid::new(0.25, 2.0 * ARM, 0.25));
    let hub_mesh = meshes.add(Cylinder::new(0.18, 0.5));
    let drawings = [Drawing::Raw, Drawing::Interpolated, Drawing::Extrapolated];
    let colors = [PALETTE[0], PALETTE[3], PALETTE[2]];

    for ((drawing, top), color) in drawings.into_iter().zip(LANES).zip(colors) {
        let body_material = material(&mut materials, color);
        // The rail.
        commands.spawn((
            RigidBody::Static,
            Collider::cuboid(rail_length, 0.2, 1.2),
            Mesh3d(rail_mesh.clone()),
            MeshMaterial3d(rail_material.clone()),
            Transform::from_xyz(rail_centre, top - 0.1, 0.0),
        ));

        // The box, resting on the rail (kinematic: it collides with nothing static).
        let mut slider = commands.spawn((
            Slider,
            RigidBody::Kinematic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Mesh3d(box_mesh.clone()),
            MeshMaterial3d(body_material.clone()),
            Transform::from_xyz(0.0, top + 0.5, 0.0),
            Trail::new(Vec3::ZERO, Color::WHITE),
        ));
        drawing.insert(&mut slider);

        // The rotor: a dynamic cross with no gravity, spinning about Z on its own, in front
        // of a grey hub post.
        let hub = Vec3::new(ROTOR_X, top + ROTOR_HEIGHT, 0.0);
        commands.spawn((
            Mesh3d(post_mesh.clone()),
            MeshMaterial3d(rail_material.clone()),
            Transform::from_xyz(ROTOR_X, top + 0.5 * ROTOR_HEIGHT, -0.4),
        ));
        commands.spawn((
            Mesh3d(hub_mesh.clone()),
            MeshMaterial3d(rail_material.clone()),
            Transform::from_translation(hub + Vec3::new(0.0, 0.0, -0.4))
                .with_rotation(Quat::from_rotation_x(TAU / 4.0)),
        ));
        let mut rotor = commands.spawn((
            RigidBody::Dynamic,
            Collider::compound(vec![
                (
                    Vec3::ZERO,
                    Quat::IDENTITY,
                    Collider::cuboid(2.0 * ARM, 0.25, 0.25),
                ),
                (
                    Vec3::ZERO,
                    Quat::IDENTITY,
                    Collider::cuboid(0.25, 2.0 * ARM, 0.25),
                ),
            ]),
            GravityScale(0.0),
            AngularVelocity(Vec3::Z * SPIN),
            SleepingDisabled,
            Transform::from_translation(hub),
            Visibility::default(),
            Trail::new(Vec3::X * ARM, Color::WHITE),
        ));
        drawing.insert(&mut rotor);
        rotor.with_children(|parent| {
            for mesh in [bar_x.clone(), bar_y.clone()] {
                parent.spawn((Mesh3d(mesh), MeshMaterial3d(body_material.clone())));
            }
        });

        // The lane's label, above the left end of its rail.
        commands.spawn((
            WorldLabel(Vec3::new(rail_left, top + 2.2, 0.0)),
            Text::new(drawing.label()),
            TextFont::from_font_size(18.0),
            TextColor(Color::WHITE),
            Node {
                position_type: PositionType::Absolute,
                padding: UiRect::axes(Val::Px(6.0), Val::Px(3.0)),
                ..default()
            },
            BackgroundColor(color.with_alpha(0.8).into()),
        ));
    }
}

/// Where the boxes should be at time `t`.
fn slider_x(t: f32) -> f32 {
    AMPLITUDE * (TAU * t / PERIOD).sin()
}

/// Gives each box the velocity that takes it to its path's point at the end of this step
/// (`Time<Fixed>`'s elapsed time in `FixedUpdate` is the step's end), so every lane follows
/// exactly the same poses.
fn drive_sliders(
    time: Res<Time>,
    mut sliders: Query<(&Position, &mut LinearVelocity), With<Slider>>,
) {
    let dt = time.delta_secs();
    if dt <= 0.0 {
        return;
    }
    let target = slider_x(time.elapsed_secs());
    for (position, mut velocity) in &mut sliders {
        velocity.0 = Vec3::new((target - position.0.x) / dt, 0.0, 0.0);
    }
}

/// Keeps each label next to its point in the world as the camera moves.
fn place_labels(
    cameras: Query<(&Camera, &GlobalTransform)>,
    mut labels: Query<(&WorldLabel, &mut Node)>,
) {
    let Ok((camera, camera_transform)) = cameras.single() else {
        return;
    };
    for (label, mut node) in &mut labels {
        if let Ok(point) = camera.world_to_viewport(camera_transform, label.0) {
            node.left = Val::Px(point.x);
            node.top = Val::Px(point.y);
        }
    }
}

/// Records where this frame draws each trailed point (after the interpolation has written
/// `Transform`) and draws the trail, newest dots brightest.
fn record_and_draw_trails(mut trails: Query<(&Transform, &mut Trail)>, mut gizmos: Gizmos) {
    for (transform, mut trail) in &mut trails {
        let point = transform.transform_point(trail.local);
        trail.points.push_back(point);
        if trail.points.len() > TRAIL {
            trail.points.pop_front();
        }
        let count = trail.points.len();
        for (age, &point) in trail.points.iter().rev().enumerate() {
            let fade = 1.0 - age as f32 / count as f32;
            gizmos.sphere(
                Isometry3d::from_translation(point + Vec3::Z * 0.7),
                0.07,
                trail.color.with_alpha(0.25 + 0.75 * fade),
            );
        }
    }
}
