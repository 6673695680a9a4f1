//! A pyramid of 55 cubes in a window; click to shoot a ball at where the cursor points.
//!
//! The aim is a [`SpatialQuery::cast_ray`] from the camera through the cursor: a marker shows
//! the point and surface normal it hits, and a left click fires a 0.4 m ball from the camera
//! at that point at 35 m/s (aimed above it by the drop gravity gives it on the way, so it
//! arrives where the marker is). Beside the pyramid stand a static torus built from its mesh with
//! [`ColliderConstructor::TrimeshFromMesh`] and a few dynamic rocks (icospheres) built with
//! [`ColliderConstructor::ConvexHullFromMesh`].
//!
//! ```text
//! cargo run --features examples-render --example stacking_3d
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

mod common_3d;

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use common_3d::{ExamplePlugin, OrbitCamera, PALETTE, cursor_ray, material, spawn_ground};
use impetus3d::prelude::*;

/// Cubes in the bottom row.
const BASE: usize = 10;
/// Speed of a shot ball, m/s.
const SHOT_SPEED: f32 = 35.0;

fn main() {
    App::new()
        .add_plugins(ExamplePlugin {
            title: "impetus3d: stacking",
            help: "left click: shoot a ball at the cursor",
            camera: OrbitCamera {
                focus: Vec3::new(0.0, 3.0, 0.0),
                distance: 26.0,
                yaw: 0.45,
                pitch: 0.3,
            },
        })
        .add_systems(Startup, setup)
        .add_systems(Update, (aim_and_shoot, scripted_shot))
        .run();
}

/// Mesh and material of the shot balls.
#[derive(Resource)]
struct Shot {
    mesh: Handle<Mesh>,
    material: Handle<StandardMaterial>,
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    spawn_ground(&mut commands, &mut meshes, &mut materials, 80.0);

    // The pyramid: row `i` from the bottom has BASE - i unit cubes, each on two below it.
    let cube = meshes.add(Cuboid::new(1.0, 1.0, 1.0));
    for row in 0..BASE {
        let count = BASE - row;
        let color = material(&mut materials, PALETTE[row % PALETTE.len()]);
        for i in 0..count {
            let x = i as f32 - 0.5 * (count - 1) as f32;
            commands.spawn((
                RigidBody::Dynamic,
                Collider::cuboid(1.0, 1.0, 1.0),
                Mesh3d(cube.clone()),
                MeshMaterial3d(color.clone()),
                Transform::from_xyz(x, 0.5 + row as f32, 0.0),
            ));
        }
    }

    // A static torus standing on edge, its collider the triangles of its own mesh.
    commands.spawn((
        RigidBody::Static,
        Mesh3d(meshes.add(Torus::new(1.2, 2.0))),
        MeshMaterial3d(material(&mut materials, Color::srgb(0.8, 0.8, 0.85))),
        ColliderConstructor::TrimeshFromMesh,
        Transform::from_xyz(-9.0, 2.0, 2.0).with_rotation(Quat::from_rotation_x(1.2)),
    ));

    // Rocks: icospheres squashed by their Transform's scale; each collider is the convex hull
    // of its mesh at that scale.
    let rock = meshes.add(Sphere::new(0.6).mesh().ico(1).expect("a small icosphere"));
    let stone = material(&mut materials, Color::srgb(0.5, 0.47, 0.44));
    for (i, x) in [6.5, 8.0, 9.5].into_iter().enumerate() {
        commands.spawn((
            RigidBody::Dynamic,
            Mesh3d(rock.clone()),
            MeshMaterial3d(stone.clone()),
            ColliderConstructor::ConvexHullFromMesh,
            Transform::from_xyz(x, 1.0 + i as f32, 3.0).with_scale(Vec3::new(
                1.0,
                0.6 + 0.2 * i as f32,
                1.2,
            )),
        ));
    }

    commands.insert_resource(Shot {
        mesh: meshes.add(Sphere::new(0.4)),
        material: material(&mut materials, Color::srgb(0.15, 0.15, 0.18)),
    });
}

/// What firing a ball needs: the ray cast that finds the target, the ball's mesh and material,
/// and gravity for the aim.
#[derive(SystemParam)]
struct Shooter<'w, 's> {
    commands: Commands<'w, 's>,
    query: SpatialQuery<'w, 's>,
    shot: Res<'w, Shot>,
    gravity: Res<'w, Gravity>,
}

impl Shooter<'_, '_> {
    /// Fires a ball from the camera towards the first thing the ray hits (or along the ray),
    /// aimed above it by as much as gravity pulls the ball down on the way.
    fn fire(&mut self, ray: Ray3d) {
        let target = self
            .query
            .cast_ray(ray.origin, ray.direction, 500.0, true, &default())
            .map_or(ray.origin + *ray.direction * 50.0, |hit| {
                ray.origin + *ray.direction * hit.distance
            });
        let start = ray.origin + *ray.direction * 1.0;
        let flight = start.distance(target) / SHOT_SPEED;
        let aim = target - 0.5 * self.gravity.0 * flight * flight;
        let direction = (aim - start).normalize_or(*ray.direction);
        self.commands.spawn((
            RigidBody::Dynamic,
            Collider::sphere(0.4),
            ColliderDensity(3000.0),
            Mesh3d(self.shot.mesh.clone()),
            MeshMaterial3d(self.shot.material.clone()),
            Transform::from_translation(start),
            LinearVelocity(direction * SHOT_SPEED),
        ));
    }
}

/// Shows where the cursor's ray hits and shoots there on a left click.
fn aim_and_shoot(
    mut shooter: Shooter,
    buttons: Res<ButtonInput<MouseButton>>,
    windows: Query<&Window>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    mut gizmos: Gizmos,
) {
    let (Ok(window), Ok((camera, camera_transform))) = (windows.single(), cameras.single()) else {
        return;
    };
    let Some(ray) = cursor_ray(window, camera, camera_transform) else {
        return;
    };
    if let Some(hit) = shooter
        .query
        .cast_ray(ray.origin, ray.direction, 500.0, true, &default())
    {
        let point = ray.origin + *ray.direction * hit.distance;
        let normal = Dir3::new(hit.normal).unwrap_or(Dir3::Y);
        gizmos.circle(
            Isometry3d::new(
                point + *normal * 0.01,
                Quat::from_rotation_arc(Vec3::Z, *normal),
            ),
            0.3,
            Color::WHITE,
        );
        gizmos.arrow(point, point + *normal * 0.8, Color::WHITE);
    }
    if buttons.just_pressed(MouseButton::Left) {
        shooter.fire(ray);
    }
}

/// In screenshot mode, one shot through the middle of the window at frame 30, as a click there
/// would fire.
fn scripted_shot(
    mut shooter: Shooter,
    mut frame: Local<u32>,
    windows: Query<&Window>,
    cameras: Query<(&Camera, &GlobalTransform)>,
) {
    *frame += 1;
    if !common_3d::screenshot_mode() || *frame != 30 {
        return;
    }
    let (Ok(window), Ok((camera, camera_transform))) = (windows.single(), cameras.single()) else {
        return;
    };
    let centre = window.size() * Vec2::new(0.5, 0.6);
    if let Ok(ray) = camera.viewport_to_world(camera_transform, centre) {
        shooter.fire(ray);
    }
}
