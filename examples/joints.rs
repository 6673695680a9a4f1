//! Every joint kind at work, side by side, headless:
//!
//! - `fixed`: a 2 m beam welded by one end to a static block (a cantilever under gravity);
//! - `distance`: a ball on a 2 m rod (distance joint with a rest length), released at 45°;
//! - `spherical`: a 1 m rod hanging from a ball joint, kicked sideways, its swing limited to
//!   30° and its twist to ±20°;
//! - `revolute`: a 1 m arm on a hinge, driven by a velocity motor at 1 rad/s (max 800 N·m);
//! - `prismatic`: a block on a slider tilted 30° down from horizontal, sliding between limits
//!   0 and 2 m.
//!
//! Every half second it prints, for each joint, its positional error (the gap between its two
//! anchors for the fixed, spherical and revolute joints; the rod's length error for the
//! distance joint; the slider's distance off its rail for the prismatic joint), the force and
//! torque it applied to its second body during the last substep, and the joint's own reading
//! (beam turn, rod length, swing, hinge angle and speed, slider position), for 4 s of
//! simulated time. The bodies never sleep, so every joint keeps working (and reporting).
//!
//! ```text
//! cargo run --example joints
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

use bevy::prelude::*;
use impetus3d::prelude::*;

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;

fn spawn(app: &mut App, bundle: impl Bundle) -> Entity {
    app.world_mut().spawn(bundle).id()
}

/// World position of the point `local` of `body`.
fn point(world: &World, body: Entity, local: Vec3) -> Vec3 {
    world.get::<Position>(body).expect("body").0
        + world.get::<Rotation>(body).expect("body").0 * local
}

/// Anchor offset (anchor 1 − anchor 2), force and torque of the joint on `entity`.
fn readout<J: Joint>(world: &World, entity: Entity) -> (Vec3, Vec3, Vec3) {
    let joint = world.get::<J>(entity).expect("joint");
    let base = joint.base();
    let offset = point(world, base.entity1, base.local_anchor1)
        - point(world, base.entity2, base.local_anchor2);
    (offset, joint.force(), joint.torque())
}

fn main() {
    let mut app = impetus3d::headless_app(DT);

    // Each scene sits on its own z plane, 5 m apart; none of the bodies touch.
    let block = |z: f32| {
        (
            RigidBody::Static,
            Collider::cuboid(0.4, 0.4, 0.4),
            Transform::from_xyz(0.0, 0.0, z),
        )
    };
    // Dynamic bodies never sleep here (a resting cantilever or slider would, and a sleeping
    // body's joint is not solved).
    let dynamic = || (RigidBody::Dynamic, SleepingDisabled);

    // Fixed: a 2 m × 0.2 m × 0.2 m beam welded to the block's right face.
    let base = spawn(&mut app, block(0.0));
    let beam = spawn(
        &mut app,
        (
            dynamic(),
            Collider::cuboid(2.0, 0.2, 0.2),
            Transform::from_xyz(1.2, 0.0, 0.0),
        ),
    );
    let fixed = spawn(
        &mut app,
        FixedJoint::new(base, beam)
            .with_local_anchor1(Vec3::new(0.2, 0.0, 0.0))
            .with_local_anchor2(Vec3::new(-1.0, 0.0, 0.0)),
    );

    // Distance: a ball of radius 0.2 on a 2 m rod from the block's centre, released at 45°.
    let pivot = spawn(&mut app, block(5.0));
    let angle = std::f32::consts::FRAC_PI_4;
    let ball = spawn(
        &mut app,
        (
            dynamic(),
            Collider::sphere(0.2),
            Transform::from_xyz(2.0 * angle.sin(), -2.0 * angle.cos(), 5.0),
        ),
    );
    let distance = spawn(
        &mut app,
        DistanceJoint::new(pivot, ball).with_rest_length(2.0),
    );

    // Spherical: a 1 m rod hanging from the block's bottom, kicked at 4 rad/s about X and
    // spun at 3 rad/s about its own axis.
    let socket = spawn(&mut app, block(10.0));
    let spin = Vec3::new(4.0, 3.0, 0.0);
    let rod = spawn(
        &mut app,
        (
            dynamic(),
            Collider::cuboid(0.1, 1.0, 0.1),
            Transform::from_xyz(0.0, -0.7, 10.0),
            AngularVelocity(spin),
            LinearVelocity(spin.cross(Vec3::new(0.0, -0.5, 0.0))),
        ),
    );
    let spherical = spawn(
        &mut app,
        SphericalJoint::new(socket, rod)
            .with_local_anchor1(Vec3::new(0.0, -0.2, 0.0))
            .with_local_anchor2(Vec3::new(0.0, 0.5, 0.0))
            .with_swing_limits(0.0, 30f32.to_radians())
            .with_twist_limits(-20f32.to_radians(), 20f32.to_radians()),
    );

    // Revolute: a 1 m arm hinged about Z at the block's right face, motor at 1 rad/s.
    let hinge = spawn(&mut app, block(15.0));
    let arm = spawn(
        &mut app,
        (
            dynamic(),
            Collider::cuboid(1.0, 0.1, 0.1),
            Transform::from_xyz(0.7, 0.0, 15.0),
        ),
    );
    let revolute = spawn(
        &mut app,
        RevoluteJoint::new(hinge, arm)
            .with_hinge_axis(Vec3::Z)
            .with_local_anchor1(Vec3::new(0.2, 0.0, 0.0))
            .with_local_anchor2(Vec3::new(-0.5, 0.0, 0.0))
            .with_motor(JointMotor::velocity(1.0, 800.0)),
    );

    // Prismatic: a 0.3 m cube sliding along a rail tilted 30° down, between 0 and 2 m.
    let rail = spawn(&mut app, block(20.0));
    let tilt = -30f32.to_radians();
    let axis = Vec3::new(tilt.cos(), tilt.sin(), 0.0);
    let slider = spawn(
        &mut app,
        (
            dynamic(),
            Collider::cuboid(0.3, 0.3, 0.3),
            Transform::from_xyz(0.0, 0.0, 20.0),
        ),
    );
    let prismatic = spawn(
        &mut app,
        PrismaticJoint::new(rail, slider)
            .with_slider_axis(axis)
            .with_limits(0.0, 2.0),
    );

    println!(
        "every joint kind, step {DT:.4} s, {} substeps",
        app.world().resource::<SubstepCount>().0
    );
    println!(
        "{:>5}  {:<10} {:>10}  {:>24}  {:>24}  {:>20}",
        "t/s", "joint", "error/mm", "force on body 2/N", "torque on body 2/(N·m)", "reading"
    );
    let per_half = (0.5 / DT).round() as usize;
    for half in 1..=8 {
        for _ in 0..per_half {
            app.update();
        }
        let t = half as f32 * 0.5;
        let world = app.world();
        // (name, positional error, force, torque, reading)
        let (offset, f_fixed, t_fixed) = readout::<FixedJoint>(world, fixed);
        let turn = world
            .get::<Rotation>(beam)
            .expect("beam")
            .0
            .angle_between(Quat::IDENTITY);
        let fixed_row = (
            "fixed",
            offset.length(),
            f_fixed,
            t_fixed,
            format!("beam turned {:.3}°", turn.to_degrees()),
        );
        let (offset, f_distance, t_distance) = readout::<DistanceJoint>(world, distance);
        let distance_row = (
            "distance",
            (offset.length() - 2.0).abs(),
            f_distance,
            t_distance,
            format!("rod {:.5} m", offset.length()),
        );
        let (offset, f_spherical, t_spherical) = readout::<SphericalJoint>(world, spherical);
        let q = world.get::<Rotation>(rod).expect("rod").0;
        let spherical_row = (
            "spherical",
            offset.length(),
            f_spherical,
            t_spherical,
            format!(
                "swing {:.2}°",
                (q * Vec3::Y).angle_between(Vec3::Y).to_degrees()
            ),
        );
        let (offset, f_revolute, t_revolute) = readout::<RevoluteJoint>(world, revolute);
        let hinge_angle = world.get::<RevoluteJoint>(revolute).expect("joint").angle();
        let w = world.get::<AngularVelocity>(arm).expect("arm").0.z;
        let revolute_row = (
            "revolute",
            offset.length(),
            f_revolute,
            t_revolute,
            format!("{:.1}°, {w:.3} rad/s", hinge_angle.to_degrees()),
        );
        let (offset, f_prismatic, t_prismatic) = readout::<PrismaticJoint>(world, prismatic);
        let position = world
            .get::<PrismaticJoint>(prismatic)
            .expect("joint")
            .position();
        let prismatic_row = (
            "prismatic",
            (offset - axis * offset.dot(axis)).length(),
            f_prismatic,
            t_prismatic,
            format!("at {position:.4} m"),
        );
        let rows = [
            fixed_row,
            distance_row,
            spherical_row,
            revolute_row,
            prismatic_row,
        ];
        for (name, error, force, torque, reading) in rows {
            println!(
                "{t:>5.1}  {name:<10} {:>10.3}  {:>24}  {:>24}  {reading:>20}",
                1000.0 * error,
                format!("{force:.1}"),
                format!("{torque:.1}")
            );
        }
    }
}
