//! Collide-and-slide from the game's own code: three shapes (a ball, a cube and a capsule) are
//! moved each frame by a system of this example through the [`MoveAndSlide`] system parameter,
//! not by the solver and not by a [`CharacterController`].
//!
//! Each shape chases a point circling just outside the walled yard, so it runs into the walls
//! and slides along them, and on its way meets the boxes scattered in the yard: the low slabs
//! (0.2 m) it steps onto, the tall blocks it slides round. Its own vertical speed falls under
//! gravity and is taken back out by [`MoveAndSlideOutput::projected_velocity`] whenever the
//! ground or a wall stops it, so pressing into a wall never builds up speed.
//!
//! Arrows show what the moves hit in the last 0.6 s: at each [`SlideHit`]'s point, its
//! normal (pointing back at the shape). The white arrow on each shape is its velocity.
//!
//! ```text
//! cargo run --features examples-render --example move_and_slide_3d
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

mod common_3d;

use bevy::prelude::*;
use common_3d::{ExamplePlugin, OrbitCamera, PALETTE, material, spawn_ground};
use impetus3d::prelude::*;

/// Speed the shapes drive at, m/s.
const SPEED: f32 = 4.0;
/// Half the yard's inner width, m.
const YARD: f32 = 7.0;
/// Radius of the circle the chased points run round, m (outside the walls), and their
/// angular speed, rad/s.
const CHASE_RADIUS: f32 = 9.5;
const CHASE_SPIN: f32 = 0.45;
/// How long a hit's arrow stays, s.
const HIT_LIFE: f32 = 0.6;

fn main() {
    App::new()
        .add_plugins(ExamplePlugin {
            title: "impetus3d: move and slide",
            help: "three shapes moved by the example's own system with MoveAndSlide;\n\
                   arrows: what the moves hit lately, along the hits' normals",
            camera: OrbitCamera {
                focus: Vec3::new(0.0, 0.0, 0.5),
                distance: 18.5,
                yaw: 0.25,
                pitch: 0.85,
            },
        })
        .init_resource::<RecentHits>()
        .add_systems(Startup, setup)
        .add_systems(Update, (slide_shapes, draw_hits).chain())
        .run();
}

/// A shape this example moves: its velocity (kept between frames, as a game would keep it)
/// and where on the chase circle its target starts.
#[derive(Component)]
struct Slider {
    velocity: Vec3,
    phase: f32,
}

/// Hits of recent moves, with their age, for drawing.
#[derive(Resource, Default)]
struct RecentHits(Vec<(SlideHit, f32)>);

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut gizmo_config: ResMut<GizmoConfigStore>,
) {
    // Thicker lines than the default 2 px, to see the arrows from afar.
    gizmo_config
        .config_mut::<DefaultGizmoConfigGroup>()
        .0
        .line
        .width = 4.0;
    spawn_ground(&mut commands, &mut meshes, &mut materials, 40.0);
    let stone = material(&mut materials, Color::srgb(0.6, 0.58, 0.55));
    let slab_colour = material(&mut materials, Color::srgb(0.45, 0.5, 0.6));
    let mut fixed = |commands: &mut Commands, size: Vec3, at: Vec3, turn: f32, low: bool| {
        commands.spawn((
            RigidBody::Static,
            Collider::cuboid(size.x, size.y, size.z),
            Mesh3d(meshes.add(Cuboid::from_size(size))),
            MeshMaterial3d(if low {
                slab_colour.clone()
            } else {
                stone.clone()
            }),
            Transform::from_translation(at).with_rotation(Quat::from_rotation_y(turn)),
        ));
    };

    // The yard's four walls, 1.2 m high.
    let long = 2.0 * YARD + 1.0;
    for (size, at) in [
        (Vec3::new(long, 1.2, 0.5), Vec3::new(0.0, 0.6, YARD + 0.25)),
        (Vec3::new(long, 1.2, 0.5), Vec3::new(0.0, 0.6, -YARD - 0.25)),
        (Vec3::new(0.5, 1.2, long), Vec3::new(YARD + 0.25, 0.6, 0.0)),
        (Vec3::new(0.5, 1.2, long), Vec3::new(-YARD - 0.25, 0.6, 0.0)),
    ] {
        fixed(&mut commands, size, at, 0.0, false);
    }
    // Tall blocks, turned every which way, and low slabs the shapes step onto.
    for (x, z, turn) in [
        (3.0, 2.5, 0.4),
        (-3.5, 3.0, 1.1),
        (-2.0, -3.5, 0.2),
        (4.0, -3.0, 0.9),
        (0.5, 5.0, 0.0),
    ] {
        fixed(
            &mut commands,
            Vec3::new(1.6, 1.0, 1.0),
            Vec3::new(x, 0.5, z),
            turn,
            false,
        );
    }
    for (x, z, turn) in [
        (5.2, 0.5, 0.3),
        (-5.3, -0.5, 0.8),
        (0.0, -5.5, 0.0),
        (-4.5, 5.0, 0.5),
    ] {
        fixed(
            &mut commands,
            Vec3::new(2.0, 0.2, 1.4),
            Vec3::new(x, 0.1, z),
            turn,
            true,
        );
    }

    // The shapes. Kinematic bodies, so that the others see them as obstacles and the solver
    // leaves them where this example puts them.
    let shapes: [(Collider, Mesh, f32); 3] = [
        (Collider::sphere(0.45), Sphere::new(0.45).into(), 0.45),
        (
            Collider::cuboid(0.8, 0.8, 0.8),
            Cuboid::new(0.8, 0.8, 0.8).into(),
            0.4,
        ),
        (
            Collider::capsule(0.3, 0.8),
            Capsule3d::new(0.3, 0.8).into(),
            0.7,
        ),
    ];
    for (i, (collider, mesh, half_height)) in shapes.into_iter().enumerate() {
        let phase = i as f32 * std::f32::consts::TAU / 3.0;
        let start = Vec3::new(phase.cos(), 0.0, phase.sin()) * 2.0;
        commands.spawn((
            Slider {
                velocity: Vec3::ZERO,
                phase,
            },
            RigidBody::Kinematic,
            collider,
            Mesh3d(meshes.add(mesh)),
            MeshMaterial3d(material(&mut materials, PALETTE[i * 2])),
            Transform::from_translation(start + Vec3::Y * (half_height + 0.05)),
        ));
    }
}

/// Moves each shape by its velocity through the world with `MoveAndSlide`: steer towards the
/// chased point, fall under gravity, slide, keep what is left of the velocity.
fn slide_shapes(
    slide: MoveAndSlide,
    time: Res<Time>,
    gravity: Res<Gravity>,
    mut recent: ResMut<RecentHits>,
    mut shapes: Query<(Entity, &Collider, &mut Transform, &mut Slider)>,
) {
    let dt = time.delta_secs();
    if dt <= 0.0 {
        return;
    }
    let config = MoveAndSlideConfig::default();
    for (entity, collider, mut transform, mut slider) in &mut shapes {
        // Steering sets the horizontal part; the vertical part is the shape's own, so that it
        // falls off slabs and is held up by the ground.
        let angle = slider.phase + CHASE_SPIN * time.elapsed_secs();
        let target = Vec3::new(angle.cos(), 0.0, angle.sin()) * CHASE_RADIUS;
        let heading =
            ((target - transform.translation) * Vec3::new(1.0, 0.0, 1.0)).normalize_or_zero();
        let vertical = slider.velocity.y + gravity.0.y * dt;
        let velocity = heading * SPEED + Vec3::Y * vertical;

        // The shape itself is not an obstacle to its own move.
        let filter = SpatialQueryFilter::from_excluded_entities([entity]);
        let out = slide.move_and_slide(
            collider,
            transform.translation,
            transform.rotation,
            velocity * dt,
            &config,
            &filter,
        );
        // The shape is moved through its `Transform` (in `Update`, every frame): the physics
        // step reads it as a teleport of the kinematic body, and nothing waits for a step.
        transform.translation = out.position;
        // What drove it into the ground or a wall is gone: no speed builds up against them.
        slider.velocity = out.projected_velocity(velocity);
        // Keep a hit for drawing unless one close by is already shown: a shape sliding along
        // a wall hits it every frame.
        for hit in &out.hits {
            if !recent
                .0
                .iter()
                .any(|(h, _)| h.point.distance(hit.point) < 0.4)
            {
                recent.0.push((*hit, 0.0));
            }
        }
    }
}

/// Arrows along the normals of recent hits, fading; the shapes' velocities.
fn draw_hits(
    time: Res<Time>,
    mut recent: ResMut<RecentHits>,
    shapes: Query<(&Transform, &Slider)>,
    mut gizmos: Gizmos,
) {
    let dt = time.delta_secs();
    recent.0.retain_mut(|(_, age)| {
        *age += dt;
        *age < HIT_LIFE
    });
    for (hit, age) in &recent.0 {
        let fade = 1.0 - age / HIT_LIFE;
        let colour = Color::srgba(1.0, 0.85, 0.1, fade);
        gizmos.arrow(hit.point, hit.point + hit.normal, colour);
        gizmos.sphere(Isometry3d::from_translation(hit.point), 0.05, colour);
    }
    for (transform, slider) in &shapes {
        let from = transform.translation + Vec3::Y * 0.9;
        gizmos.arrow(from, from + slider.velocity * 0.3, Color::WHITE);
    }
}
