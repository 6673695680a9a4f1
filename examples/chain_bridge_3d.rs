//! A rope bridge in a window: 20 planks hinged to each other by revolute joints, hanging in an
//! arc between two towers, with crates and balls dropped on it. Press space to drop more.
//!
//! ```text
//! cargo run --features examples-render --example chain_bridge_3d
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

mod common_3d;

use bevy::prelude::*;
use common_3d::{ExamplePlugin, OrbitCamera, PALETTE, material, spawn_ground};
use impetus3d::prelude::*;

/// Planks in the bridge.
const PLANKS: usize = 20;
/// Joint-to-joint length of a plank, m.
const PITCH: f32 = 1.0;
/// Height of the bridge's ends, m.
const HEIGHT: f32 = 6.0;
/// Angle the arc of planks turns through from end to end, rad: with 20 one-metre planks it
/// spans 18 m.
const ARC: f32 = 1.575;

fn main() {
    App::new()
        .add_plugins(ExamplePlugin {
            title: "impetus3d: chain bridge",
            help: "space: drop more crates and balls",
            camera: OrbitCamera {
                focus: Vec3::new(0.0, 3.5, 0.0),
                distance: 24.0,
                yaw: 0.55,
                pitch: 0.3,
            },
        })
        .add_systems(Startup, setup)
        .add_systems(Update, drop_more)
        .run();
}

/// Meshes and materials of the dropped loads.
#[derive(Resource)]
struct Loads {
    crate_mesh: Handle<Mesh>,
    ball_mesh: Handle<Mesh>,
    materials: Vec<Handle<StandardMaterial>>,
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    spawn_ground(&mut commands, &mut meshes, &mut materials, 60.0);

    // The joints' points: a polygon of PLANKS one-metre sides, turning evenly through ARC.
    let mut points = vec![Vec3::ZERO];
    for i in 0..PLANKS {
        let angle = -ARC / 2.0 + ARC * (i as f32 + 0.5) / PLANKS as f32;
        let last = points[i];
        points.push(last + PITCH * Vec3::new(angle.cos(), angle.sin(), 0.0));
    }
    let span = points[PLANKS].x;
    for p in &mut points {
        *p += Vec3::new(-span / 2.0, HEIGHT, 0.0);
    }

    // Towers whose tops carry the ends.
    let tower_material = material(&mut materials, Color::srgb(0.45, 0.42, 0.4));
    let tower_mesh = meshes.add(Cuboid::new(1.0, HEIGHT + 0.5, 3.0));
    let tower = |commands: &mut Commands, x: f32| {
        commands
            .spawn((
                RigidBody::Static,
                Collider::cuboid(1.0, HEIGHT + 0.5, 3.0),
                Mesh3d(tower_mesh.clone()),
                MeshMaterial3d(tower_material.clone()),
                Transform::from_xyz(x, (HEIGHT + 0.5) / 2.0, 0.0),
            ))
            .id()
    };
    let left_x = points[0].x - 0.5;
    let right_x = points[PLANKS].x + 0.5;
    let left = tower(&mut commands, left_x);
    let right = tower(&mut commands, right_x);
    // Tower-local position of a world point on the tower's axis.
    let on_tower = |x: f32, p: Vec3| p - Vec3::new(x, (HEIGHT + 0.5) / 2.0, 0.0);

    // The planks, each hinged about Z to the one before (or the left tower).
    let plank_mesh = meshes.add(Cuboid::new(0.9, 0.12, 2.4));
    let wood = [
        material(&mut materials, Color::srgb(0.55, 0.38, 0.22)),
        material(&mut materials, Color::srgb(0.62, 0.44, 0.27)),
    ];
    let hinge = |e1: Entity, e2: Entity, a1: Vec3, a2: Vec3| {
        RevoluteJoint::new(e1, e2)
            .with_hinge_axis(Vec3::Z)
            .with_local_anchor1(a1)
            .with_local_anchor2(a2)
    };
    let mut previous = None;
    for i in 0..PLANKS {
        let (a, b) = (points[i], points[i + 1]);
        let direction = (b - a).normalize();
        let plank = commands
            .spawn((
                RigidBody::Dynamic,
                Collider::cuboid(0.9, 0.12, 2.4),
                Mesh3d(plank_mesh.clone()),
                MeshMaterial3d(wood[i % 2].clone()),
                Transform::from_translation((a + b) / 2.0)
                    .with_rotation(Quat::from_rotation_arc(Vec3::X, direction)),
            ))
            .id();
        let half = Vec3::new(PITCH / 2.0, 0.0, 0.0);
        commands.spawn(match previous {
            None => hinge(left, plank, on_tower(left_x, a), -half),
            Some(previous) => hinge(previous, plank, half, -half),
        });
        previous = Some(plank);
    }
    if let Some(last) = previous {
        commands.spawn(hinge(
            last,
            right,
            Vec3::new(PITCH / 2.0, 0.0, 0.0),
            on_tower(right_x, points[PLANKS]),
        ));
    }

    let loads = Loads {
        crate_mesh: meshes.add(Cuboid::new(0.8, 0.8, 0.8)),
        ball_mesh: meshes.add(Sphere::new(0.45)),
        materials: PALETTE
            .iter()
            .map(|&c| material(&mut materials, c))
            .collect(),
    };
    spawn_loads(&mut commands, &loads, 0);
    commands.insert_resource(loads);
}

/// Drops a wave of three crates and two balls over the bridge; `wave` varies where.
fn spawn_loads(commands: &mut Commands, loads: &Loads, wave: usize) {
    for k in 0..5 {
        let x = -6.0 + 3.0 * k as f32 + 0.7 * (wave % 3) as f32;
        let at = Transform::from_xyz(x, HEIGHT + 2.0 + 0.8 * k as f32, -0.4 + 0.2 * k as f32);
        let material = MeshMaterial3d(loads.materials[(k + wave) % loads.materials.len()].clone());
        if k % 2 == 0 {
            commands.spawn((
                RigidBody::Dynamic,
                Collider::cuboid(0.8, 0.8, 0.8),
                Mesh3d(loads.crate_mesh.clone()),
                material,
                at.with_rotation(Quat::from_rotation_y(0.3 * k as f32)),
            ));
        } else {
            commands.spawn((
                RigidBody::Dynamic,
                Collider::sphere(0.45),
                Mesh3d(loads.ball_mesh.clone()),
                material,
                at,
            ));
        }
    }
}

fn drop_more(
    mut commands: Commands,
    keys: Res<ButtonInput<KeyCode>>,
    loads: Res<Loads>,
    mut waves: Local<usize>,
) {
    if keys.just_pressed(KeyCode::Space) {
        *waves += 1;
        spawn_loads(&mut commands, &loads, *waves);
    }
}
