//! A four-wheeled vehicle on [`D6Joint`]s: each wheel hangs from the chassis on a joint whose
//! vertical axis is a limited prismatic suspension with a spring–damper drive, whose twist
//! axis (the axle) is free and driven by a motor with a maximum torque, and whose other four
//! axes are locked.
//!
//! The 800 kg car starts on flat ground, drives at a commanded 10 m/s wheel speed, and meets a
//! 10° slope after 20 m. Every half second the example prints its speed, height, the
//! suspension travel of the front-left wheel and the motor torque read back from the
//! joint's rows.
//!
//! ```text
//! cargo run --example vehicle
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

use bevy::prelude::*;
use impetus3d::prelude::*;

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;
/// Wheel radius, m.
const RADIUS: f32 = 0.4;
/// Wheel speed the motors aim for, m/s at the rim.
const TARGET_SPEED: f32 = 10.0;

fn main() {
    let mut app = impetus3d::headless_app(DT);
    let world = app.world_mut();
    // Flat ground up to z = 20, then a 10° slope going up along +z.
    world.spawn((
        RigidBody::Static,
        Collider::cuboid(20.0, 1.0, 40.0),
        Friction::new(1.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));
    let slope = 10f32.to_radians();
    let length = 60.0;
    world.spawn((
        RigidBody::Static,
        Collider::cuboid(20.0, 1.0, length),
        Friction::new(1.0),
        Transform::from_xyz(
            0.0,
            -0.5 + 0.5 * length * slope.sin(),
            20.0 + 0.5 * length * slope.cos(),
        )
        .with_rotation(Quat::from_rotation_x(-slope)),
    ));

    let chassis = world
        .spawn((
            RigidBody::Dynamic,
            Collider::cuboid(1.8, 0.5, 4.0),
            Mass(800.0),
            SleepingDisabled,
            Transform::from_xyz(0.0, 1.0, 0.0),
        ))
        .id();
    let mut joints = Vec::new();
    for (x, z) in [(-1.1, 1.4), (1.1, 1.4), (-1.1, -1.4), (1.1, -1.4)] {
        let mount = Vec3::new(x, -0.25, z);
        let wheel = world
            .spawn((
                RigidBody::Dynamic,
                Collider::sphere(RADIUS),
                Mass(20.0),
                Friction::new(1.0),
                SleepingDisabled,
                Transform::from_xyz(x, 1.0 - 0.25, z),
            ))
            .id();
        // Frame X is the axle (the chassis's X); Y is the suspension travel.
        let joint = D6Joint::new(chassis, wheel)
            .with_local_anchor1(mount)
            .with_limit(D6Axis::Y, -0.25, 0.1)
            // 40 kN/m carries the car's 2 kN per wheel with 5 cm of sag; ζ ≈ 0.6.
            .with_drive(D6Axis::Y, D6Drive::new(40_000.0, 5_000.0))
            .with_motion(D6Axis::Twist, D6Motion::Free)
            .with_drive(D6Axis::Twist, D6Drive::motor(400.0))
            .with_drive_target(D6Axis::Twist, 0.0, TARGET_SPEED / RADIUS);
        joints.push(world.spawn(joint).id());
    }

    println!("  t (s)   speed (m/s)   z (m)   height (m)   travel FL (m)   torque FL (N·m)");
    let steps_per_half_second = (0.5 / DT) as usize;
    for n in 1..=16 * steps_per_half_second {
        app.update();
        if n % steps_per_half_second == 0 {
            let world = app.world();
            let p = world.get::<Position>(chassis).unwrap().0;
            let r = world.get::<Rotation>(chassis).unwrap().0;
            let v = world.get::<LinearVelocity>(chassis).unwrap().0;
            let joint = world.get::<D6Joint>(joints[0]).unwrap();
            let wheel = joint.entity2;
            let coordinates = joint.coordinates(
                (p, r),
                (
                    world.get::<Position>(wheel).unwrap().0,
                    world.get::<Rotation>(wheel).unwrap().0,
                ),
            );
            // The motor's row is the last one; its impulse over a step divided by the step.
            let torque = joint.row_impulses().last().copied().unwrap_or(0.0) / DT as f32;
            println!(
                "{:7.2}   {:11.2}   {:5.1}   {:10.2}   {:13.3}   {:15.0}",
                n as f64 * DT,
                v.length(),
                p.z,
                p.y,
                coordinates[1],
                torque
            );
        }
    }
}
