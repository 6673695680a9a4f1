//! Joint motors, springs and friction in a window, left to right:
//!
//! - a wheel on a hinge driven at a speed by `JointMotor::velocity(speed, max_torque)`
//!   (Up/Down change the speed);
//! - a servo arm held at an angle by `JointMotor::position(angle, max_torque)` (A/D turn it):
//!   with its torque limit it swings up, brakes in time and stops at the angle;
//! - an arm on a hinge spring (`JointSpring::new(0.8 Hz, ζ = 0.1)`), released from 90°: it
//!   swings about its rest angle and settles;
//! - a piston on a slider spring (`JointSpring` with a rest position, W/S move it) with
//!   friction on the slider;
//! - a door whose motor is weaker than its hinge's friction: it does not open, and after two
//!   seconds the engine logs a warning naming its joint.
//!
//! ```text
//! cargo run --features examples-render --example joint_motors_3d
//! ```

// Examples build their scenes with platform math; the rule against it (`clippy.toml`) guards
// the engine's step.
#![allow(clippy::disallowed_methods)]

mod common_3d;

use std::f32::consts::FRAC_PI_2;

use bevy::prelude::*;
use common_3d::{ExamplePlugin, OrbitCamera, PALETTE, material, spawn_ground};
use impetus3d::prelude::*;

/// Height of the hinges, m.
const HEIGHT: f32 = 3.0;

fn main() {
    App::new()
        .add_plugins(ExamplePlugin {
            title: "impetus3d: joint motors",
            help: "Up/Down: wheel speed, A/D: servo angle, W/S: piston rest position",
            camera: OrbitCamera {
                focus: Vec3::new(0.0, 2.5, 0.0),
                distance: 20.0,
                yaw: 0.0,
                pitch: 0.15,
            },
        })
        .add_systems(Startup, setup)
        .add_systems(Update, steer)
        .run();
}

/// Marks each driven joint, for the keys.
#[derive(Component)]
enum Driven {
    Wheel,
    Servo,
    Piston,
}

fn setup(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    spawn_ground(&mut commands, &mut meshes, &mut materials, 40.0);
    let colors: Vec<_> = PALETTE
        .iter()
        .map(|&c| material(&mut materials, c))
        .collect();
    let post_material = material(&mut materials, Color::srgb(0.45, 0.45, 0.5));
    // A static post whose top holds a joint at (x, HEIGHT).
    let mut post = |commands: &mut Commands, x: f32| {
        let shape = Cuboid::new(0.4, HEIGHT, 0.4);
        commands
            .spawn((
                RigidBody::Static,
                Collider::from(shape),
                Mesh3d(meshes.add(shape)),
                MeshMaterial3d(post_material.clone()),
                Transform::from_xyz(x, HEIGHT / 2.0, -0.5),
            ))
            .id()
    };
    let posts: Vec<Entity> = (0..5)
        .map(|i| post(&mut commands, -8.0 + 4.0 * i as f32))
        .collect();
    // The hinge point on each post's front, in the post's frame.
    let hinge = Vec3::new(0.0, HEIGHT / 2.0, 0.5);
    let mut part = |commands: &mut Commands, shape: Cuboid, color: usize, at: Vec3| {
        commands
            .spawn((
                RigidBody::Dynamic,
                Collider::from(shape),
                Mesh3d(meshes.add(shape)),
                MeshMaterial3d(colors[color].clone()),
                Transform::from_translation(at),
                SleepingDisabled,
            ))
            .id()
    };

    // Velocity motor: a paddle wheel turning at 2 rad/s, with up to 500 N·m.
    let wheel = part(
        &mut commands,
        Cuboid::new(2.4, 0.3, 0.2),
        0,
        Vec3::new(-8.0, HEIGHT, 0.0),
    );
    commands.spawn((
        Driven::Wheel,
        RevoluteJoint::new(posts[0], wheel)
            .with_local_anchor1(hinge)
            .with_motor(JointMotor::velocity(2.0, 500.0)),
    ));

    // Position motor: an arm hinged at one end, held at 45° against gravity.
    let servo = part(
        &mut commands,
        Cuboid::new(2.0, 0.25, 0.2),
        1,
        Vec3::new(-3.0, HEIGHT, 0.0),
    );
    commands.spawn((
        Driven::Servo,
        RevoluteJoint::new(posts[1], servo)
            .with_local_anchor1(hinge)
            .with_local_anchor2(Vec3::new(-1.0, 0.0, 0.0))
            .with_motor(JointMotor::position(FRAC_PI_2 / 2.0, 2000.0)),
    ));

    // Spring: an arm hanging from a hinge spring, released from horizontal.
    let arm = part(
        &mut commands,
        Cuboid::new(0.25, 2.0, 0.2),
        2,
        Vec3::new(1.0, HEIGHT, 0.0),
    );
    commands.spawn(
        RevoluteJoint::new(posts[2], arm)
            .with_local_anchor1(hinge)
            .with_local_anchor2(Vec3::new(0.0, 1.0, 0.0))
            .with_spring(JointSpring::new(0.8, 0.1).with_rest(-FRAC_PI_2)),
    );

    // Slider spring with friction: a piston on a vertical rail, held at its rest position.
    let piston = part(
        &mut commands,
        Cuboid::new(0.8, 0.5, 0.8),
        3,
        Vec3::new(4.0, HEIGHT, 0.0),
    );
    commands.spawn((
        Driven::Piston,
        PrismaticJoint::new(posts[3], piston)
            .with_local_anchor1(hinge)
            .with_slider_axis(Vec3::Y)
            .with_limits(-2.0, 1.0)
            .with_spring(JointSpring::new(2.0, 0.7).with_rest(0.5))
            .with_friction(20.0),
    ));

    // A door whose 50 N·m motor cannot beat the 200 N·m of friction in its hinge.
    let door = part(
        &mut commands,
        Cuboid::new(1.6, 2.4, 0.1),
        4,
        Vec3::new(8.8, 1.4, 0.0),
    );
    commands.spawn(
        RevoluteJoint::new(posts[4], door)
            .with_local_anchor1(Vec3::new(0.0, 1.4 - HEIGHT / 2.0, 0.5))
            .with_local_anchor2(Vec3::new(-0.8, 0.0, 0.0))
            .with_hinge_axis(Vec3::Y)
            .with_friction(200.0)
            .with_motor(JointMotor::velocity(1.0, 50.0)),
    );
}

/// The keys change the motors' and the spring's targets.
fn steer(keys: Res<ButtonInput<KeyCode>>, time: Res<Time>, mut joints: Query<(&Driven, AnyJoint)>) {
    let axis = |up: KeyCode, down: KeyCode| {
        (keys.pressed(up) as i32 - keys.pressed(down) as i32) as f32 * time.delta_secs()
    };
    for (driven, (revolute, prismatic)) in &mut joints {
        match (driven, revolute, prismatic) {
            (Driven::Wheel, Some(mut joint), _) => {
                if let Some(motor) = joint.motor_mut()
                    && let MotorTarget::Velocity(speed) = &mut motor.target
                {
                    *speed += 4.0 * axis(KeyCode::ArrowUp, KeyCode::ArrowDown);
                }
            }
            (Driven::Servo, Some(mut joint), _) => {
                if let Some(motor) = joint.motor_mut()
                    && let MotorTarget::Position { target, .. } = &mut motor.target
                {
                    *target += 1.5 * axis(KeyCode::KeyA, KeyCode::KeyD);
                }
            }
            (Driven::Piston, _, Some(mut joint)) => {
                if let Some(spring) = joint.spring_mut() {
                    let rest = spring.rest + 1.5 * axis(KeyCode::KeyW, KeyCode::KeyS);
                    spring.rest = rest.clamp(-2.0, 1.0);
                }
            }
            _ => {}
        }
    }
}

/// A revolute or a prismatic joint.
type AnyJoint = (
    Option<&'static mut RevoluteJoint>,
    Option<&'static mut PrismaticJoint>,
);
