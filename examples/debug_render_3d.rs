//! `PhysicsDebugPlugin` (feature `debug-render`) drawing a scene with every kind of collider.
//!
//! - in front, left to right, resting on the ground: a sphere, a cuboid, a capsule, a cylinder,
//!   a cone, a convex hull (a rock built from its mesh with
//!   [`ColliderConstructor::ConvexHullFromMesh`]), a compound (a dumbbell of two spheres and a
//!   cylinder), and a crate with [`DebugRender::hidden()`], which draws nothing;
//! - behind, left to right: a static triangle mesh (a torus built from its mesh with
//!   [`ColliderConstructor::TrimeshFromMesh`]) holding a ball in its hole; a gantry with a box
//!   swinging on a [`SphericalJoint`] and two balls hanging from it on [`DistanceJoint`]s; and
//!   a heightfield hill with a few bodies on it.
//!
//! What the colours mean: orange outlines are awake colliders and grey ones sleeping colliders
//! (most bodies fall asleep within a second of landing); cyan crosses are contact points and red
//! lines their normals; yellow lines run from each joined body's origin to its joint anchor and
//! magenta ones between two anchors that are apart (a distance joint's length); red, green and
//! blue lines are body axes; white boxes are the AABBs of two bodies that ask for them with
//! [`DebugRender::with_aabb_color`]. The lines are drawn over the meshes (depth bias -1), so the
//! contacts underneath bodies show through.
//!
//! ```text
//! cargo run --features examples-render --example debug_render_3d
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

mod common_3d;

use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI};

use bevy::asset::RenderAssetUsages;
use bevy::mesh::{Indices, PrimitiveTopology};
use bevy::prelude::*;
use common_3d::{ExamplePlugin, OrbitCamera, PALETTE, material, spawn_ground};
use impetus3d::prelude::*;

/// Height of the gantry's beam (its centre), m.
const GANTRY: f32 = 4.6;
/// The back row's depth, m.
const BACK: f32 = -3.0;
/// The front row's depth, m.
const FRONT: f32 = 2.5;
/// The heightfield's centre along X, m.
const HILL_X: f32 = 7.0;
/// The heightfield's side, m.
const HILL_SIZE: f32 = 6.0;

fn main() {
    App::new()
        .add_plugins(ExamplePlugin {
            title: "impetus3d: debug rendering",
            help: "orange: colliders, grey: asleep, cyan/red: contacts and normals,\n\
                   yellow: joint anchors, magenta: anchors apart, white: AABBs.\n\
                   The purple crate (front right) has DebugRender::hidden().\n\
                   D: debug drawing on/off, A: every AABB on/off, M: meshes on/off",
            camera: OrbitCamera {
                focus: Vec3::new(0.6, 1.4, -1.2),
                distance: 17.0,
                yaw: 0.2,
                pitch: 0.5,
            },
        })
        .add_plugins(PhysicsDebugPlugin)
        .insert_gizmo_config(
            PhysicsGizmos::default(),
            GizmoConfig {
                // Over the meshes, so outlines and the contacts under bodies show.
                depth_bias: -1.0,
                line: GizmoLineConfig {
                    width: 1.5,
                    ..default()
                },
                ..default()
            },
        )
        .add_systems(Startup, setup)
        .add_systems(Update, toggles)
        .run();
}

/// The ground, left visible when the meshes are hidden.
#[derive(Component)]
struct Ground;

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    // The ground's outline in a dim colour of its own (hiding it would hide its contacts too).
    let ground = spawn_ground(&mut commands, &mut meshes, &mut materials, 60.0);
    commands.entity(ground).insert((
        Ground,
        DebugRender::default().with_collider_color(Color::srgb(0.3, 0.36, 0.27)),
    ));
    let colors: Vec<_> = PALETTE
        .iter()
        .map(|&c| material(&mut materials, c))
        .collect();
    let grey = material(&mut materials, Color::srgb(0.55, 0.55, 0.6));
    let aabb = DebugRender::default().with_aabb_color(Color::WHITE);

    // Front row: one body of each primitive shape, just above the ground.
    let mut x = -7.5;
    let mut next_x = || {
        let at = x;
        x += 2.0;
        at
    };
    let primitives: [(Collider, Mesh, Transform); 5] = [
        (
            Collider::sphere(0.5),
            Sphere::new(0.5).into(),
            Transform::from_xyz(next_x(), 0.52, FRONT),
        ),
        (
            Collider::cuboid(1.0, 1.0, 1.0),
            Cuboid::new(1.0, 1.0, 1.0).into(),
            Transform::from_xyz(next_x(), 0.52, FRONT).with_rotation(Quat::from_rotation_y(0.4)),
        ),
        (
            Collider::capsule(0.35, 1.2),
            Capsule3d::new(0.35, 1.2).into(),
            // Lying on its side, along Z.
            Transform::from_xyz(next_x(), 0.37, FRONT)
                .with_rotation(Quat::from_rotation_x(FRAC_PI_2)),
        ),
        (
            Collider::cylinder(0.5, 1.0),
            Cylinder::new(0.5, 1.0).into(),
            Transform::from_xyz(next_x(), 0.52, FRONT),
        ),
        (
            // Collider has no cone constructor: any parry shape converts into one.
            Collider::from(parry3d::shape::SharedShape::cone(0.6, 0.6)),
            Cone {
                radius: 0.6,
                height: 1.2,
            }
            .into(),
            Transform::from_xyz(next_x(), 0.62, FRONT),
        ),
    ];
    for (i, (collider, mesh, transform)) in primitives.into_iter().enumerate() {
        commands.spawn((
            RigidBody::Dynamic,
            collider,
            Mesh3d(meshes.add(mesh)),
            MeshMaterial3d(colors[i % colors.len()].clone()),
            transform,
        ));
    }

    // A convex hull: the hull of a squashed icosphere, built from its mesh at its scale.
    commands.spawn((
        RigidBody::Dynamic,
        ColliderConstructor::ConvexHullFromMesh,
        Mesh3d(meshes.add(Sphere::new(0.6).mesh().ico(1).expect("a small icosphere"))),
        MeshMaterial3d(grey.clone()),
        Transform::from_xyz(next_x(), 0.5, FRONT)
            .with_rotation(Quat::from_rotation_y(0.7))
            .with_scale(Vec3::new(1.3, 0.75, 1.0)),
        aabb,
    ));

    // A compound: a dumbbell lying along X, on its two spheres.
    let bar = Quat::from_rotation_z(FRAC_PI_2);
    commands
        .spawn((
            RigidBody::Dynamic,
            Collider::compound(vec![
                (Vec3::X * -0.75, Quat::IDENTITY, Collider::sphere(0.4)),
                (Vec3::X * 0.75, Quat::IDENTITY, Collider::sphere(0.4)),
                (Vec3::ZERO, bar, Collider::cylinder(0.12, 1.5)),
            ]),
            Transform::from_xyz(next_x() + 0.3, 0.42, FRONT)
                .with_rotation(Quat::from_rotation_y(-0.3)),
            Visibility::default(),
            aabb,
        ))
        .with_children(|parent| {
            let ball = meshes.add(Sphere::new(0.4));
            for side in [-0.75, 0.75] {
                parent.spawn((
                    Mesh3d(ball.clone()),
                    MeshMaterial3d(colors[5].clone()),
                    Transform::from_xyz(side, 0.0, 0.0),
                ));
            }
            parent.spawn((
                Mesh3d(meshes.add(Cylinder::new(0.12, 1.5))),
                MeshMaterial3d(grey.clone()),
                Transform::from_rotation(bar),
            ));
        });

    // A crate that debug drawing leaves out: no outline, axes or contacts.
    commands.spawn((
        RigidBody::Dynamic,
        Collider::cuboid(1.0, 1.0, 1.0),
        Mesh3d(meshes.add(Cuboid::new(1.0, 1.0, 1.0))),
        MeshMaterial3d(material(&mut materials, Color::srgb(0.55, 0.3, 0.75))),
        Transform::from_xyz(next_x() + 0.8, 0.52, FRONT),
        DebugRender::hidden(),
    ));

    // Back left: a static triangle mesh (a coarse torus lying flat) with a ball in its hole.
    let torus = Vec3::new(-7.0, 0.5, BACK);
    commands.spawn((
        RigidBody::Static,
        ColliderConstructor::TrimeshFromMesh,
        Mesh3d(
            meshes.add(
                Torus::new(0.9, 1.9)
                    .mesh()
                    .minor_resolution(8)
                    .major_resolution(16),
            ),
        ),
        MeshMaterial3d(grey.clone()),
        Transform::from_translation(torus),
    ));
    commands.spawn((
        RigidBody::Dynamic,
        Collider::sphere(1.0),
        Mesh3d(meshes.add(Sphere::new(1.0))),
        MeshMaterial3d(colors[3].clone()),
        Transform::from_translation(torus + Vec3::Y * 0.7),
    ));

    spawn_gantry(&mut commands, &mut meshes, &colors, &grey);
    spawn_hill(&mut commands, &mut meshes, &colors, &grey);
}

/// Back middle: a static gantry, a box on a spherical joint and a chain of two balls on
/// distance joints, both let go from the side so they swing.
fn spawn_gantry(
    commands: &mut Commands,
    meshes: &mut Assets<Mesh>,
    colors: &[Handle<StandardMaterial>],
    grey: &Handle<StandardMaterial>,
) {
    let (left, right) = (-4.2, 3.4);
    let post = meshes.add(Cuboid::new(0.3, GANTRY, 0.3));
    for x in [left, right] {
        commands.spawn((
            RigidBody::Static,
            Collider::cuboid(0.3, GANTRY, 0.3),
            Mesh3d(post.clone()),
            MeshMaterial3d(grey.clone()),
            Transform::from_xyz(x, GANTRY / 2.0, BACK),
        ));
    }
    let beam_centre = Vec3::new(0.5 * (left + right), GANTRY, BACK);
    let beam_length = right - left + 0.3;
    let beam = commands
        .spawn((
            RigidBody::Static,
            Collider::cuboid(beam_length, 0.3, 0.3),
            Mesh3d(meshes.add(Cuboid::new(beam_length, 0.3, 0.3))),
            MeshMaterial3d(grey.clone()),
            Transform::from_translation(beam_centre),
        ))
        .id();
    // A point under the beam, in the beam's frame.
    let under_beam = |x: f32| Vec3::new(x - beam_centre.x, -0.15, 0.0);

    // The pendulum: a box 1.5 m under its ball joint, let go at 45° to the left.
    let pivot = Vec3::new(-2.4, GANTRY - 0.15, BACK);
    let arm = Vec3::Y * 1.5;
    let tilt = Quat::from_rotation_z(-FRAC_PI_4);
    let pendulum = commands
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(0.6, 0.6, 0.6),
            Mesh3d(meshes.add(Cuboid::new(0.6, 0.6, 0.6))),
            MeshMaterial3d(colors[0].clone()),
            Transform::from_translation(pivot - tilt * arm).with_rotation(tilt),
        ))
        .id();
    commands.spawn(
        SphericalJoint::new(beam, pendulum)
            .with_local_anchor1(under_beam(pivot.x))
            .with_local_anchor2(arm),
    );

    // The chain: two balls, 1.2 m apart, let go at 35° to the right.
    let top = Vec3::new(1.2, GANTRY - 0.15, BACK);
    let link = 1.2;
    let slant = Quat::from_rotation_z(35f32.to_radians()) * (Vec3::NEG_Y * link);
    let ball = meshes.add(Sphere::new(0.3));
    let mut previous = (beam, under_beam(top.x));
    for k in 1..=2 {
        let body = commands
            .spawn((
                RigidBody::Dynamic,
                Collider::sphere(0.3),
                Mesh3d(ball.clone()),
                MeshMaterial3d(colors[2].clone()),
                Transform::from_translation(top + slant * k as f32),
            ))
            .id();
        commands.spawn(
            DistanceJoint::new(previous.0, body)
                .with_local_anchor1(previous.1)
                .with_rest_length(link),
        );
        previous = (body, Vec3::ZERO);
    }
}

/// The hill's height above its base at `(x, z)` in its own frame (both in ±HILL_SIZE/2).
fn hill_height(x: f32, z: f32) -> f32 {
    let k = 2.0 * PI / HILL_SIZE;
    0.15 + 0.35 * 0.5 * ((k * x).cos() * (k * z).cos() + 1.0)
}

/// Back right: a static heightfield hill and its mesh, with two boxes and a capsule on it.
fn spawn_hill(
    commands: &mut Commands,
    meshes: &mut Assets<Mesh>,
    colors: &[Handle<StandardMaterial>],
    grey: &Handle<StandardMaterial>,
) {
    const SAMPLES: usize = 9;
    let coordinate = |i: usize| (i as f32 / (SAMPLES - 1) as f32 - 0.5) * HILL_SIZE;
    // Row i runs along X at z = coordinate(i); see `Collider::heightfield`.
    let heights: Vec<Vec<f32>> = (0..SAMPLES)
        .map(|i| {
            (0..SAMPLES)
                .map(|j| hill_height(coordinate(j), coordinate(i)))
                .collect()
        })
        .collect();
    let positions: Vec<[f32; 3]> = (0..SAMPLES)
        .flat_map(|i| (0..SAMPLES).map(move |j| (i, j)))
        .map(|(i, j)| [coordinate(j), heights[i][j], coordinate(i)])
        .collect();
    let mut indices = Vec::new();
    for i in 0..SAMPLES - 1 {
        for j in 0..SAMPLES - 1 {
            let at = |i: usize, j: usize| (i * SAMPLES + j) as u32;
            // Counter-clockwise seen from above.
            indices.extend([at(i, j), at(i + 1, j), at(i, j + 1)]);
            indices.extend([at(i, j + 1), at(i + 1, j), at(i + 1, j + 1)]);
        }
    }
    let mesh = Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_indices(Indices::U32(indices))
    .with_computed_normals();
    let centre = Vec3::new(HILL_X, 0.0, BACK);
    commands.spawn((
        RigidBody::Static,
        Collider::heightfield(heights, Vec3::new(HILL_SIZE, 1.0, HILL_SIZE)),
        Mesh3d(meshes.add(mesh)),
        MeshMaterial3d(grey.clone()),
        Transform::from_translation(centre),
    ));

    // Bodies set down just above the surface.
    let on_hill =
        |x: f32, z: f32, lift: f32| centre + Vec3::new(x, hill_height(x, z) + lift + 0.03, z);
    let box_mesh = meshes.add(Cuboid::new(0.8, 0.8, 0.8));
    for (k, (x, z)) in [(-1.6, -1.4), (1.4, 1.3)].into_iter().enumerate() {
        commands.spawn((
            RigidBody::Dynamic,
            Collider::cuboid(0.8, 0.8, 0.8),
            Mesh3d(box_mesh.clone()),
            MeshMaterial3d(colors[1 + 3 * k].clone()),
            Transform::from_translation(on_hill(x, z, 0.4)),
        ));
    }
    commands.spawn((
        RigidBody::Dynamic,
        Collider::capsule(0.25, 1.0),
        Mesh3d(meshes.add(Capsule3d::new(0.25, 1.0))),
        MeshMaterial3d(colors[3].clone()),
        Transform::from_translation(on_hill(1.4, -1.3, 0.25))
            .with_rotation(Quat::from_rotation_z(FRAC_PI_2)),
    ));
}

/// D: all debug drawing on/off; A: every collider's AABB on/off; M: meshes on/off.
fn toggles(
    keys: Res<ButtonInput<KeyCode>>,
    mut store: ResMut<GizmoConfigStore>,
    mut meshes: Query<&mut Visibility, (With<Mesh3d>, Without<Ground>)>,
) {
    let (config, physics) = store.config_mut::<PhysicsGizmos>();
    if keys.just_pressed(KeyCode::KeyD) {
        config.enabled = !config.enabled;
    }
    if keys.just_pressed(KeyCode::KeyA) {
        physics.aabb_color = match physics.aabb_color {
            Some(_) => None,
            None => Some(Color::srgb(0.8, 0.8, 0.8)),
        };
    }
    if keys.just_pressed(KeyCode::KeyM) {
        for mut visibility in &mut meshes {
            *visibility = match *visibility {
                Visibility::Hidden => Visibility::Inherited,
                _ => Visibility::Hidden,
            };
        }
    }
}
