//! Every joint kind in a window, left to right:
//!
//! - `FixedJoint`: a beam welded to the side of a post (a cantilever);
//! - `DistanceJoint`: a ball on a 2.5 m rod, released at 60°;
//! - `SphericalJoint`: a rod hanging from a ball joint, kicked, its swing held to a 40° cone;
//! - `RevoluteJoint`: a paddle on a hinge turned by a velocity motor at 1.5 rad/s;
//! - `PrismaticJoint`: a lift sliding up and down a vertical rail between 0 and 2.5 m, its
//!   motor reversed at each end, with a crate riding on it;
//! - `D6Joint`: a wheel on an axle (twist free, every other axis locked) spun by a drive.
//!
//! A white line joins each joint's two anchors (it stays a dot while the joint holds).
//!
//! ```text
//! cargo run --features examples-render --example joints_3d
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

mod common_3d;

use std::f32::consts::FRAC_PI_2;

use bevy::prelude::*;
use common_3d::{ExamplePlugin, OrbitCamera, PALETTE, material, spawn_ground};
use impetus3d::prelude::*;

/// Height of the posts' tops, m.
const TOP: f32 = 5.0;
/// Lift speed, m/s.
const LIFT_SPEED: f32 = 1.0;
/// Lift travel, m.
const LIFT_TRAVEL: f32 = 2.5;

fn main() {
    App::new()
        .add_plugins(ExamplePlugin {
            title: "impetus3d: joints",
            help: "fixed, distance, spherical, revolute (motor), prismatic (motor), D6 (drive)",
            camera: OrbitCamera {
                focus: Vec3::new(2.5, 3.0, 0.0),
                distance: 24.0,
                yaw: 0.15,
                pitch: 0.2,
            },
        })
        .add_systems(Startup, setup)
        .add_systems(
            Update,
            (
                reverse_lift,
                draw_anchors::<FixedJoint>,
                draw_anchors::<DistanceJoint>,
                draw_anchors::<SphericalJoint>,
                draw_anchors::<RevoluteJoint>,
                draw_anchors::<PrismaticJoint>,
            ),
        )
        .run();
}

/// Spawns a body with a collider and the matching mesh.
fn body(
    commands: &mut Commands,
    meshes: &mut Assets<Mesh>,
    material: Handle<StandardMaterial>,
    kind: RigidBody,
    shape: (Collider, Mesh),
    transform: Transform,
) -> Entity {
    commands
        .spawn((
            kind,
            shape.0,
            Mesh3d(meshes.add(shape.1)),
            MeshMaterial3d(material),
            transform,
            SleepingDisabled,
        ))
        .id()
}

fn cuboid(x: f32, y: f32, z: f32) -> (Collider, Mesh) {
    (Collider::cuboid(x, y, z), Cuboid::new(x, y, z).into())
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    spawn_ground(&mut commands, &mut meshes, &mut materials, 60.0);
    let post_material = material(&mut materials, Color::srgb(0.45, 0.45, 0.5));
    let colors: Vec<_> = PALETTE
        .iter()
        .map(|&c| material(&mut materials, c))
        .collect();
    // A static post whose top is at TOP, at `x`.
    let mut post = |commands: &mut Commands, x: f32| {
        body(
            commands,
            &mut meshes,
            post_material.clone(),
            RigidBody::Static,
            cuboid(0.5, TOP, 0.5),
            Transform::from_xyz(x, TOP / 2.0, 0.0),
        )
    };
    let posts: Vec<Entity> = (0..6)
        .map(|i| post(&mut commands, -12.5 + 5.0 * i as f32))
        .collect();
    let x = |i: usize| -12.5 + 5.0 * i as f32;

    // Fixed: a 2.5 m beam welded to the post's right side, near the top.
    let beam = body(
        &mut commands,
        &mut meshes,
        colors[0].clone(),
        RigidBody::Dynamic,
        cuboid(2.5, 0.3, 0.3),
        Transform::from_xyz(x(0) + 1.5, TOP - 0.5, 0.0),
    );
    commands.spawn(
        FixedJoint::new(posts[0], beam)
            .with_local_anchor1(Vec3::new(0.25, TOP / 2.0 - 0.5, 0.0))
            .with_local_anchor2(Vec3::new(-1.25, 0.0, 0.0)),
    );

    // Distance: a ball 2.5 m from the post's top, released at 60°.
    let angle = 60f32.to_radians();
    let pivot = Vec3::new(x(1), TOP + 0.2, 0.0);
    let ball = body(
        &mut commands,
        &mut meshes,
        colors[1].clone(),
        RigidBody::Dynamic,
        (Collider::sphere(0.35), Sphere::new(0.35).into()),
        Transform::from_translation(pivot + 2.5 * Vec3::new(angle.sin(), -angle.cos(), 0.0)),
    );
    commands.spawn(
        DistanceJoint::new(posts[1], ball)
            .with_local_anchor1(Vec3::new(0.0, TOP / 2.0 + 0.2, 0.0))
            .with_rest_length(2.5),
    );

    // Spherical: a 2 m rod hanging from a ball joint on the post's side, kicked sideways
    // and spun; its swing is held to a 40° cone.
    let socket = Vec3::new(x(2) + 0.45, TOP - 0.2, 0.0);
    let rod = commands
        .spawn((
            RigidBody::Dynamic,
            Collider::capsule(0.12, 1.8),
            Mesh3d(meshes.add(Capsule3d::new(0.12, 1.8))),
            MeshMaterial3d(colors[2].clone()),
            Transform::from_translation(socket - Vec3::Y * 1.0),
            LinearVelocity(Vec3::new(0.0, 0.0, 3.0)),
            AngularVelocity(Vec3::new(-3.0, 2.0, 0.0)),
            SleepingDisabled,
        ))
        .id();
    commands.spawn(
        SphericalJoint::new(posts[2], rod)
            .with_local_anchor1(Vec3::new(0.45, TOP / 2.0 - 0.2, 0.0))
            .with_local_anchor2(Vec3::new(0.0, 1.0, 0.0))
            .with_swing_limits(0.0, 40f32.to_radians()),
    );

    // Revolute: a cross-shaped paddle in front of the post, turned about Z by a motor.
    let hub = Vec3::new(x(3), TOP - 1.5, 0.6);
    let paddle = commands
        .spawn((
            RigidBody::Dynamic,
            Collider::compound(vec![
                (Vec3::ZERO, Quat::IDENTITY, Collider::cuboid(3.0, 0.3, 0.2)),
                (Vec3::ZERO, Quat::IDENTITY, Collider::cuboid(0.3, 3.0, 0.2)),
            ]),
            Transform::from_translation(hub),
            SleepingDisabled,
            Visibility::default(),
        ))
        .with_children(|c| {
            for size in [Vec3::new(3.0, 0.3, 0.2), Vec3::new(0.3, 3.0, 0.2)] {
                c.spawn((
                    Mesh3d(meshes.add(Cuboid::from_size(size))),
                    MeshMaterial3d(colors[3].clone()),
                ));
            }
        })
        .id();
    commands.spawn(
        RevoluteJoint::new(posts[3], paddle)
            .with_hinge_axis(Vec3::Z)
            .with_local_anchor1(Vec3::new(0.0, TOP / 2.0 - 1.5, 0.6))
            .with_motor(JointMotor::velocity(1.5, 2000.0)),
    );

    // Prismatic: a lift platform beside the post, sliding along Y, with a crate on it.
    let lift = body(
        &mut commands,
        &mut meshes,
        colors[4].clone(),
        RigidBody::Dynamic,
        cuboid(1.6, 0.2, 1.6),
        Transform::from_xyz(x(4) + 1.1, 0.6, 0.0),
    );
    commands.spawn((
        Lift,
        PrismaticJoint::new(posts[4], lift)
            .with_slider_axis(Vec3::Y)
            .with_local_anchor1(Vec3::new(1.1, 0.6 - TOP / 2.0, 0.0))
            .with_limits(0.0, LIFT_TRAVEL)
            // The platform and crate weigh about 730 kg (7.1 kN): room to spare to lift them.
            .with_motor(JointMotor::velocity(LIFT_SPEED, 20_000.0)),
    ));
    body(
        &mut commands,
        &mut meshes,
        colors[5].clone(),
        RigidBody::Dynamic,
        cuboid(0.6, 0.6, 0.6),
        Transform::from_xyz(x(4) + 1.1, 1.1, 0.0),
    );

    // D6: a wheel on an axle along Z in front of the post; twist (frame X, turned onto Z) is
    // free and driven at 3 rad/s, the other five axes are locked.
    let axle = Quat::from_rotation_y(-FRAC_PI_2);
    let wheel = commands
        .spawn((
            RigidBody::Dynamic,
            Collider::cylinder(1.0, 0.3),
            Mesh3d(meshes.add(Cylinder::new(1.0, 0.3))),
            MeshMaterial3d(colors[0].clone()),
            Transform::from_xyz(x(5), TOP - 1.5, 0.6)
                .with_rotation(Quat::from_rotation_x(FRAC_PI_2)),
            SleepingDisabled,
        ))
        .id();
    commands.spawn(
        D6Joint::new(posts[5], wheel)
            .with_local_anchor1(Vec3::new(0.0, TOP / 2.0 - 1.5, 0.6))
            .with_local_basis_1(axle)
            .with_local_basis_2(Quat::from_rotation_x(-FRAC_PI_2) * axle)
            .with_motion(D6Axis::Twist, D6Motion::Free)
            .with_drive(D6Axis::Twist, D6Drive::motor(3000.0))
            .with_drive_target(D6Axis::Twist, 0.0, 3.0),
    );
}

/// Marks the lift's joint.
#[derive(Component)]
struct Lift;

/// Sends the lift back down at the top and up again at the bottom.
fn reverse_lift(mut lifts: Query<&mut PrismaticJoint, With<Lift>>) {
    for mut joint in &mut lifts {
        let position = joint.position();
        if let Some(motor) = joint.motor_mut()
            && let MotorTarget::Velocity(speed) = motor.target
        {
            if position >= LIFT_TRAVEL - 0.05 && speed > 0.0 {
                motor.target = MotorTarget::Velocity(-LIFT_SPEED);
            } else if position <= 0.05 && speed < 0.0 {
                motor.target = MotorTarget::Velocity(LIFT_SPEED);
            }
        }
    }
}

/// A line between each joint's two anchors, and a dot on the first.
fn draw_anchors<J: Joint + Component>(
    joints: Query<&J>,
    bodies: Query<(&Position, &Rotation)>,
    mut gizmos: Gizmos,
) {
    for joint in &joints {
        let base = joint.base();
        let (Ok((p1, r1)), Ok((p2, r2))) = (bodies.get(base.entity1), bodies.get(base.entity2))
        else {
            continue;
        };
        let a1 = p1.0 + r1.0 * base.local_anchor1;
        let a2 = p2.0 + r2.0 * base.local_anchor2;
        gizmos.line(a1, a2, Color::WHITE);
        gizmos.sphere(Isometry3d::from_translation(a1), 0.06, Color::WHITE);
    }
}
