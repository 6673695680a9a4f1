//! Code written for avian3d 0.7, with the crate renamed, runs here (docs/MIGRATING_FROM_AVIAN.md
//! says which names are the same): a scene in avian's idioms (a glob import of `math`, Bevy
//! primitives as colliders and mass, avian's joint builders, `adjust_precision`, layers from a
//! derived enum, `MoveAndSlide` and `Forces` as system parameters) steps and behaves. And every
//! impetus3d name in the guide's rename table exists.

use crate::common;

use bevy::ecs::system::RunSystemOnce;
use bevy::prelude::*;
use common::*;
use impetus3d::{math::*, prelude::*};

#[derive(PhysicsLayer, Clone, Copy, Default)]
enum GameLayer {
    #[default]
    Default,
    Player,
    Ground,
}

/// avian's `chain_3d` and `joint_motors_3d` idioms: a particle chain from primitives' mass
/// properties and local anchors, a hinged wheel on a motor, a slider on a spring.
fn avian_scene(mut commands: Commands) {
    commands.spawn((
        RigidBody::Static,
        Collider::from(Cuboid::new(20.0, 1.0, 20.0)),
        Transform::from_xyz(0.0, -0.5, 0.0),
        CollisionLayers::new(GameLayer::Ground, LayerMask::ALL),
        Friction::ZERO.with_combine_rule(CoefficientCombine::Min),
    ));
    let anchor = commands
        .spawn((RigidBody::Static, Transform::from_xyz(0.0, 6.0, 0.0)))
        .id();
    let radius: Scalar = 0.1;
    let mut previous = anchor;
    for i in 1..=5 {
        let particle = commands
            .spawn((
                RigidBody::Dynamic,
                MassPropertiesBundle::from_shape(&Sphere::new(radius.f32()), 1.0),
                Transform::from_xyz(0.0, 6.0 - i as f32 * 0.22, 0.0),
            ))
            .id();
        commands.spawn(
            SphericalJoint::new(previous, particle)
                .with_local_anchor1(Vector::NEG_Y * radius * 1.1)
                .with_local_anchor2(Vector::Y * radius * 1.1)
                .with_compliance(0.00001),
        );
        previous = particle;
    }
    let wheel = commands
        .spawn((
            RigidBody::Dynamic,
            MassPropertiesBundle::from_shape(&Cylinder::new(1.0, 0.3), 1.0),
            Transform::from_xyz(-4.0, 3.0, 0.0),
            SleepingDisabled,
        ))
        .id();
    let hub = commands
        .spawn((RigidBody::Static, Transform::from_xyz(-4.0, 3.0, 0.0)))
        .id();
    commands.spawn(
        RevoluteJoint::new(hub, wheel)
            .with_hinge_axis(Vector::Z)
            .with_motor(JointMotor::velocity(5.0, 1000.0)),
    );
    let base = commands
        .spawn((RigidBody::Static, Transform::from_xyz(4.0, 3.0, 0.0)))
        .id();
    let piston = commands
        .spawn((
            RigidBody::Dynamic,
            MassPropertiesBundle::from_shape(&Cuboid::from_size(Vec3::new(0.8, 0.5, 0.8)), 1.0),
            Transform::from_xyz(4.0, 3.0, 0.0),
        ))
        .id();
    commands.spawn(
        PrismaticJoint::new(base, piston)
            .with_slider_axis(Vector::Y)
            .with_limits(-1.0, 1.0)
            .with_spring(JointSpring::new(20.0, 1.0).with_rest(0.5)),
    );
    commands.spawn((
        RigidBody::Kinematic,
        Collider::capsule(0.3, 1.0),
        Transform::from_xyz(8.0, 0.81, 0.0),
        CollisionLayers::new(GameLayer::Player, [GameLayer::Default, GameLayer::Ground]),
        Player,
    ));
}

#[derive(Component)]
struct Player;

/// avian's `move_and_slide_3d` idiom: the game moves a kinematic shape itself.
fn walk_player(
    slide: MoveAndSlide,
    mut players: Query<(Entity, &Collider, &mut Transform, &Rotation), With<Player>>,
) {
    for (entity, collider, mut transform, rotation) in &mut players {
        let step = (*rotation * Vec3::X) * 0.02;
        let out = slide.move_and_slide(
            collider,
            transform.translation.adjust_precision(),
            transform.rotation.adjust_precision(),
            step,
            &MoveAndSlideConfig::default(),
            &SpatialQueryFilter::from_excluded_entities([entity]),
        );
        transform.translation = out.position.f32();
    }
}

#[test]
fn an_avian_style_scene_runs() {
    let mut app = app();
    app.insert_resource(Gravity(Vector::NEG_Y * 9.81))
        .add_plugins(PhysicsDiagnosticsPlugin)
        .add_systems(Update, walk_player);
    app.world_mut()
        .run_system_once(avian_scene)
        .expect("the scene spawns");
    step(&mut app, 120);
    let world = app.world_mut();
    // The motor spun the wheel up to its 5 rad/s.
    let mut wheels = world.query::<(&AngularVelocity, &ComputedMass)>();
    let fastest = wheels
        .iter(world)
        .map(|(w, _)| w.z.abs())
        .fold(0.0, Scalar::max);
    assert!((fastest - 5.0).abs() < 5e-3, "wheel at {fastest} rad/s");
    // The player walked: 120 frames of 2 cm along X from x = 8.
    let mut players = world.query_filtered::<&Transform, With<Player>>();
    let x = players.single(world).unwrap().translation.x;
    assert!((x - (8.0 + 120.0 * 0.02)).abs() < 1e-3, "player at x = {x}");
    // Nothing left the world.
    assert!(all_bodies_finite(&mut app));
    let _ = (
        PI,
        FRAC_PI_2,
        Vector2::ZERO,
        Dir::Y,
        Gravity::ZERO,
        Restitution::ZERO,
    );
}

/// Every impetus3d name in the migration guide's rename table is a public item of the crate.
#[test]
fn the_guides_renames_name_real_items() {
    let guide = include_str!("../docs/MIGRATING_FROM_AVIAN.md");
    let rows: Vec<(&str, &str)> = guide
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            match cells.as_slice() {
                ["", avian, ours, ""] if avian.starts_with('`') && ours.starts_with('`') => {
                    Some((avian.trim_matches('`'), ours.trim_matches('`')))
                }
                _ => None,
            }
        })
        .collect();
    assert!(
        (1..=10).contains(&rows.len()),
        "{} rename rows (at most 10)",
        rows.len()
    );
    let sources = crate_sources();
    for (avian, ours) in rows {
        let defined = [
            format!("pub struct {ours}"),
            format!("pub enum {ours}"),
            format!("pub trait {ours}"),
            format!("fn {ours}("),
        ];
        let found = ours == "impetus3d" || defined.iter().any(|d| sources.contains(d.as_str()));
        assert!(found, "`{avian}` → `{ours}`: no such item in src/");
    }
}

/// The text of every file in `src/`.
fn crate_sources() -> String {
    fn walk(dir: &std::path::Path, out: &mut String) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push_str(&std::fs::read_to_string(path).unwrap());
            }
        }
    }
    let mut out = String::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut out,
    );
    out
}
