//! A ragdoll of ten bodies on [`D6Joint`]s tumbling down a flight of steps.
//!
//! The neck, shoulders and hips are ball joints with an elliptical swing cone and a twist
//! range; the elbows and knees are hinges (twist limited, swings locked). Every joint's
//! linear axes are locked. The example pushes the ragdoll off the top step and, every half
//! second, prints the height of the pelvis and, over all joints, the largest amount by which
//! a joint is past its swing cone or twist range now, and the largest so far. The limits are
//! soft-step rows, so they give a little under impacts. Every angular axis has joint friction
//! (a velocity drive towards zero): without it nothing dissipates a limb's swing, and a head
//! hanging against its neck cone would swing along the cone's edge like a frictionless
//! pendulum.
//!
//! ```text
//! cargo run --example ragdoll
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

use std::f32::consts::FRAC_PI_2;

use bevy::prelude::*;
use impetus3d::prelude::*;

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;

/// A limb, torso or head: a capsule or box at `at`.
fn part(world: &mut World, collider: Collider, mass: f32, at: Vec3) -> Entity {
    world
        .spawn((
            RigidBody::Dynamic,
            collider,
            Mass(mass),
            SleepingDisabled,
            Transform::from_translation(at),
        ))
        .id()
}

/// Joint friction, N·m·s/rad: a velocity drive towards zero on every angular axis.
const JOINT_DAMPING: f32 = 2.0;

/// A joint at world point `at` between two bodies spawned at `p1` and `p2` (unrotated), with
/// frame X along `twist` (world) and joint friction on its angular axes.
fn joint(e1: Entity, p1: Vec3, e2: Entity, p2: Vec3, at: Vec3, twist: Quat) -> D6Joint {
    let friction = D6Drive::new(0.0, JOINT_DAMPING);
    D6Joint::new(e1, e2)
        .with_local_anchor1(at - p1)
        .with_local_anchor2(at - p2)
        .with_local_basis_1(twist)
        .with_local_basis_2(twist)
        .with_drive(D6Axis::Twist, friction)
        .with_drive(D6Axis::Swing1, friction)
        .with_drive(D6Axis::Swing2, friction)
}

/// How far (rad) the joint's current angles are outside its swing cone and twist range.
fn excess(joint: &D6Joint, coordinates: &[f32; 6]) -> (f32, f32) {
    let swing = Vec2::new(coordinates[4], coordinates[5]);
    let cone = if joint.motions[4] == D6Motion::Limited {
        let (a, b) = (joint.limits[4].max, joint.limits[5].max);
        let angle = swing.length();
        let direction = swing.normalize_or(Vec2::X);
        let radius = 1.0 / ((direction.x / a).powi(2) + (direction.y / b).powi(2)).sqrt();
        (angle - radius).max(0.0)
    } else {
        // Hinges: both swings locked.
        swing.length()
    };
    let twist = joint.limits[3];
    let twist = (coordinates[3] - coordinates[3].clamp(twist.min, twist.max)).abs();
    (cone, twist)
}

fn main() {
    let mut app = impetus3d::headless_app(DT);
    let world = app.world_mut();
    // Eight steps, each 0.3 m down and 0.6 m along +z.
    for i in 0..8 {
        let top = -0.3 * i as f32;
        world.spawn((
            RigidBody::Static,
            Collider::cuboid(6.0, 1.0, 0.6),
            Transform::from_xyz(0.0, top - 0.5, 0.6 * i as f32 + 0.3),
        ));
    }
    world.spawn((
        RigidBody::Static,
        Collider::cuboid(20.0, 1.0, 20.0),
        Transform::from_xyz(0.0, -2.4 - 0.5, 14.8),
    ));

    // Standing on the top step, arms at the sides. Limb frames: X along the limb (down).
    let down = Quat::from_rotation_z(-FRAC_PI_2);
    let up = Quat::from_rotation_z(FRAC_PI_2);
    let sideways = Quat::IDENTITY;
    let at = |x: f32, y: f32| Vec3::new(x, y + 0.1, 0.3);
    let pelvis_p = at(0.0, 1.0);
    let torso_p = at(0.0, 1.4);
    let head_p = at(0.0, 1.85);
    let pelvis = part(world, Collider::cuboid(0.35, 0.2, 0.2), 12.0, pelvis_p);
    let torso = part(world, Collider::cuboid(0.4, 0.5, 0.22), 25.0, torso_p);
    let head = part(world, Collider::sphere(0.12), 5.0, head_p);
    let mut joints = vec![
        joint(pelvis, pelvis_p, torso, torso_p, at(0.0, 1.12), up)
            .with_swing_cone(0.4, 0.3)
            .with_limit(D6Axis::Twist, -0.3, 0.3),
        joint(torso, torso_p, head, head_p, at(0.0, 1.7), up)
            .with_swing_cone(0.6, 0.5)
            .with_limit(D6Axis::Twist, -0.8, 0.8),
    ];
    for side in [-1.0f32, 1.0] {
        let upper_arm_p = at(0.27 * side, 1.45);
        let forearm_p = at(0.27 * side, 1.1);
        let thigh_p = at(0.1 * side, 0.7);
        let shin_p = at(0.1 * side, 0.3);
        let capsule = |length: f32| Collider::capsule(0.05, length);
        let upper_arm = part(world, capsule(0.25), 2.5, upper_arm_p);
        let forearm = part(world, capsule(0.25), 1.8, forearm_p);
        let thigh = part(world, Collider::capsule(0.07, 0.26), 8.0, thigh_p);
        let shin = part(world, Collider::capsule(0.06, 0.26), 4.0, shin_p);
        joints.extend([
            joint(
                torso,
                torso_p,
                upper_arm,
                upper_arm_p,
                at(0.27 * side, 1.62),
                down,
            )
            .with_swing_cone(1.4, 1.0)
            .with_limit(D6Axis::Twist, -0.8, 0.8),
            joint(
                upper_arm,
                upper_arm_p,
                forearm,
                forearm_p,
                at(0.27 * side, 1.27),
                sideways,
            )
            .with_limit(D6Axis::Twist, -2.4, 0.0),
            joint(pelvis, pelvis_p, thigh, thigh_p, at(0.1 * side, 0.9), down)
                .with_swing_cone(1.2, 0.5)
                .with_limit(D6Axis::Twist, -0.3, 0.3),
            joint(thigh, thigh_p, shin, shin_p, at(0.1 * side, 0.5), sideways).with_limit(
                D6Axis::Twist,
                0.0,
                2.4,
            ),
        ]);
    }
    let joints: Vec<Entity> = joints.into_iter().map(|j| world.spawn(j).id()).collect();
    // A push off the top step.
    world
        .entity_mut(torso)
        .insert(LinearVelocity(Vec3::new(0.0, 0.0, 2.5)));

    println!(
        "  t (s)   pelvis y (m)   pelvis z (m)   cone excess now / worst (°)   twist excess now / worst (°)"
    );
    let (mut worst_cone, mut worst_twist) = (0.0f32, 0.0f32);
    let steps_per_half_second = (0.5 / DT) as usize;
    for n in 1..=10 * steps_per_half_second {
        app.update();
        let world = app.world();
        let pose = |e: Entity| {
            (
                world.get::<Position>(e).unwrap().0,
                world.get::<Rotation>(e).unwrap().0,
            )
        };
        let (mut cone_now, mut twist_now) = (0.0f32, 0.0f32);
        for &entity in &joints {
            let joint = world.get::<D6Joint>(entity).unwrap();
            let coordinates = joint.coordinates(pose(joint.entity1), pose(joint.entity2));
            let (cone, twist) = excess(joint, &coordinates);
            cone_now = cone_now.max(cone);
            twist_now = twist_now.max(twist);
        }
        worst_cone = worst_cone.max(cone_now);
        worst_twist = worst_twist.max(twist_now);
        if n % steps_per_half_second == 0 {
            let (p, _) = pose(pelvis);
            println!(
                "{:7.2}   {:12.2}   {:12.2}   {:18.2} / {:6.2}   {:19.2} / {:6.2}",
                n as f64 * DT,
                p.y,
                p.z,
                cone_now.to_degrees(),
                worst_cone.to_degrees(),
                twist_now.to_degrees(),
                worst_twist.to_degrees()
            );
        }
    }
}
