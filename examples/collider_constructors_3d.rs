//! Colliders built from meshes, all made in code (no asset files):
//!
//! - left: a static torus lying flat, its collider the triangles of its own mesh
//!   ([`ColliderConstructor::TrimeshFromMesh`]); balls land on the ring or drop through the
//!   hole;
//! - middle: a dynamic torus dropped over a peg, and a dumbbell (a mesh merged from two spheres
//!   and a cylinder), both split into convex parts
//!   ([`ColliderConstructor::ConvexDecompositionFromMesh`]): the ring threads the peg and the
//!   dumbbell rests on its bar's ends, where one convex hull would have filled the hole and the
//!   waist;
//! - right: a cone, a frustum, a tetrahedron and a rock, each the convex hull of its Bevy mesh
//!   ([`ColliderConstructor::ConvexHullFromMesh`]);
//! - back: a chair made as an entity hierarchy of named meshes, given its colliders by one
//!   [`ColliderConstructorHierarchy`]: convex hulls by default, exact cylinders for the parts
//!   named "Leg", a heavy "Back" (a density override, so it tips over backwards) and no
//!   collider for the "Cushion". The chair hangs in the air until an observer of
//!   [`ColliderConstructorHierarchyReady`] says its colliders are in place, then drops.
//!
//! ```text
//! cargo run --features examples-render --example collider_constructors_3d
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

fn main() {
    App::new()
        .add_plugins(ExamplePlugin {
            title: "impetus3d: colliders from meshes",
            help: "trimesh, convex decomposition and convex hull colliders from meshes made in code,\n\
                   and a ColliderConstructorHierarchy on a chair",
            camera: OrbitCamera {
                focus: Vec3::new(0.0, 1.0, 0.5),
                distance: 17.0,
                yaw: 0.0,
                pitch: 0.45,
            },
        })
        .add_systems(Startup, setup)
        .add_systems(Update, show_chair)
        .add_observer(release_chair)
        .run();
}

/// The chair's root.
#[derive(Component)]
struct Chair;

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    spawn_ground(&mut commands, &mut meshes, &mut materials, 60.0);
    let colours: Vec<_> = PALETTE
        .iter()
        .map(|&c| material(&mut materials, c))
        .collect();
    let grey = material(&mut materials, Color::srgb(0.75, 0.75, 0.8));

    // Left: the static torus (major radius 1.6, tube 0.45), and balls dropped over it.
    commands.spawn((
        RigidBody::Static,
        Mesh3d(meshes.add(Torus::new(1.15, 2.05))),
        MeshMaterial3d(grey.clone()),
        ColliderConstructor::TrimeshFromMesh,
        Transform::from_xyz(-6.5, 0.45, 0.0),
    ));
    let ball = meshes.add(Sphere::new(0.35));
    for (i, (x, z)) in [
        (-6.5, 0.0),
        (-5.0, 0.3),
        (-8.0, -0.2),
        (-6.3, 1.6),
        (-6.8, -0.4),
    ]
    .into_iter()
    .enumerate()
    {
        commands.spawn((
            RigidBody::Dynamic,
            Collider::sphere(0.35),
            Mesh3d(ball.clone()),
            MeshMaterial3d(colours[i % colours.len()].clone()),
            Transform::from_xyz(x, 3.0 + 0.9 * i as f32, z),
        ));
    }

    // Middle: a peg, a torus falling over it, and a dumbbell beside it. A convex decomposition
    // is computed once, when the mesh is ready (a few milliseconds for these).
    commands.spawn((
        RigidBody::Static,
        Collider::cylinder(0.25, 2.4),
        Mesh3d(meshes.add(Cylinder::new(0.25, 2.4))),
        MeshMaterial3d(grey.clone()),
        Transform::from_xyz(-1.0, 1.2, 0.0),
    ));
    commands.spawn((
        RigidBody::Dynamic,
        Mesh3d(meshes.add(Torus::new(0.55, 0.95))),
        MeshMaterial3d(colours[3].clone()),
        ColliderConstructor::ConvexDecompositionFromMesh,
        Transform::from_xyz(-1.0, 3.6, 0.1).with_rotation(Quat::from_rotation_x(0.25)),
    ));
    commands.spawn((
        RigidBody::Dynamic,
        Mesh3d(meshes.add(dumbbell())),
        MeshMaterial3d(colours[4].clone()),
        ColliderConstructor::ConvexDecompositionFromMesh,
        Transform::from_xyz(1.8, 1.5, 0.5).with_rotation(Quat::from_rotation_y(0.4)),
    ));

    // Right: convex hulls of Bevy's primitive meshes, dropped tumbling.
    let rock = Sphere::new(0.5)
        .mesh()
        .ico(1)
        .expect("a small icosphere")
        .scaled_by(Vec3::new(1.3, 0.7, 1.0));
    let hulls: [Mesh; 4] = [
        Cone::new(0.5, 1.0).into(),
        ConicalFrustum {
            radius_top: 0.25,
            radius_bottom: 0.55,
            height: 0.7,
        }
        .into(),
        Tetrahedron::default().into(),
        rock,
    ];
    for (i, mesh) in hulls.into_iter().enumerate() {
        commands.spawn((
            RigidBody::Dynamic,
            Mesh3d(meshes.add(mesh)),
            MeshMaterial3d(colours[i].clone()),
            ColliderConstructor::ConvexHullFromMesh,
            Transform::from_xyz(
                5.0 + 1.2 * (i % 2) as f32,
                1.5 + 1.2 * i as f32,
                -1.0 + 0.8 * i as f32,
            )
            .with_rotation(Quat::from_euler(EulerRot::XYZ, 0.6 * i as f32, 0.3, 0.9)),
        ));
    }

    // Back: the chair. Only the root is a body; its parts are named meshes below it. It
    // hangs without gravity until its colliders are built (see `release_chair`).
    let wood = material(&mut materials, Color::srgb(0.55, 0.36, 0.2));
    let cushion = material(&mut materials, Color::srgb(0.75, 0.15, 0.2));
    let mut part = |name: &str, mesh: Mesh, material: &Handle<StandardMaterial>, at: Vec3| {
        (
            Name::new(name.to_string()),
            Mesh3d(meshes.add(mesh)),
            MeshMaterial3d(material.clone()),
            Transform::from_translation(at),
        )
    };
    let seat = part(
        "Seat",
        Cuboid::new(1.2, 0.12, 1.2).into(),
        &wood,
        Vec3::ZERO,
    );
    let back = part(
        "Back",
        Cuboid::new(1.2, 1.2, 0.12).into(),
        &wood,
        // Behind the seat's back edge: the heavy back brings the chair's centre of mass
        // behind its back legs, so it tips over.
        Vec3::new(0.0, 0.66, -0.66),
    );
    let pad = part(
        "Cushion",
        Sphere::new(0.5)
            .mesh()
            .uv(24, 12)
            .scaled_by(Vec3::new(1.0, 0.16, 1.0)),
        &cushion,
        Vec3::new(0.0, 0.12, 0.0),
    );
    let legs: Vec<_> = [(-0.45, -0.45), (0.45, -0.45), (-0.45, 0.45), (0.45, 0.45)]
        .map(|(x, z)| {
            part(
                "Leg",
                Cylinder::new(0.06, 0.8).into(),
                &wood,
                Vec3::new(x, -0.46, z),
            )
        })
        .into();
    commands
        .spawn((
            Chair,
            RigidBody::Dynamic,
            GravityScale(0.0),
            Transform::from_xyz(0.0, 2.5, -4.5).with_rotation(Quat::from_rotation_y(0.3)),
            Visibility::default(),
            ColliderConstructorHierarchy::new(ColliderConstructor::ConvexHullFromMesh)
                .with_constructor_for_name(
                    "Leg",
                    ColliderConstructor::Cylinder {
                        radius: 0.06,
                        height: 0.8,
                    },
                )
                .with_density_for_name("Back", 6000.0)
                .without_constructor_for_name("Cushion"),
        ))
        .with_children(|chair| {
            chair.spawn(seat);
            chair.spawn(back);
            chair.spawn(pad);
            for leg in legs {
                chair.spawn(leg);
            }
        });
    spawn_readout(&mut commands);
}

/// A dumbbell: two balls on a bar, merged into one mesh from Bevy's primitive meshes.
fn dumbbell() -> Mesh {
    let mut mesh: Mesh = Cylinder::new(0.12, 1.4)
        .mesh()
        .resolution(16)
        .build()
        .rotated_by(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2));
    for x in [-0.75, 0.75] {
        let ball = Sphere::new(0.35)
            .mesh()
            .uv(20, 12)
            .translated_by(Vec3::X * x);
        mesh.merge(&ball).expect("meshes with the same attributes");
    }
    mesh
}

/// Once every part of the chair has its collider, give it gravity. (Released earlier, it
/// would fall with no collider and a fallback mass, through the ground.)
fn release_chair(
    ready: On<ColliderConstructorHierarchyReady>,
    mut chairs: Query<&mut GravityScale, With<Chair>>,
) {
    if let Ok(mut gravity) = chairs.get_mut(ready.entity) {
        gravity.0 = 1.0;
        info!("chair {}: colliders ready, dropping it", ready.entity);
    }
}

/// The readout: the chair's parts with and without colliders, and its mass.
fn show_chair(
    chairs: Query<(&GravityScale, &ComputedMass, &Children), With<Chair>>,
    parts: Query<(&Name, Option<&Collider>, Option<&ColliderDensity>)>,
    mut readout: Query<&mut Text, With<Readout>>,
) {
    let Ok((gravity, mass, children)) = chairs.single() else {
        return;
    };
    let mut text = if gravity.0 == 0.0 {
        "chair: waiting for its colliders\n".to_string()
    } else {
        format!("chair: colliders ready, mass {:.1} kg\n", mass.mass())
    };
    for (name, collider, density) in parts.iter_many(children) {
        let shape = match collider.map(|c| c.shape().shape_type()) {
            None => "no collider".to_string(),
            Some(kind) => format!("{kind:?}"),
        };
        let density = density.map_or(String::new(), |d| format!(", {:.0} kg/m^3", d.0));
        text += &format!("  {name}: {shape}{density}\n");
    }
    for mut readout in &mut readout {
        if readout.0 != text {
            readout.0.clone_from(&text);
        }
    }
}
