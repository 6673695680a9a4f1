//! The six-axis joint (`D6Joint`): locked axes hold under load, a swing cone stops a heavy
//! swinging body, a position drive follows its spring–damper, a free axis is free, and bad
//! input is reported.

use crate::common;

use std::f32::consts::{FRAC_PI_2, PI};

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// A static body at the origin to hang things from.
fn anchor(app: &mut App) -> Entity {
    spawn(app, (RigidBody::Static, Transform::default()))
}

/// A dynamic box of `size` and `mass` at `at`, colliding with nothing.
fn block(app: &mut App, size: Vec3, mass: f32, at: Vec3) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(size.x, size.y, size.z),
            CollisionLayers::NONE,
            Mass(mass),
            SleepingDisabled,
            Transform::from_translation(at),
        ),
    )
}

/// The world anchor points and frames of a joint.
fn anchors(app: &App, joint: &D6Joint) -> (Vec3, Vec3) {
    let pose = |e: Entity, local: Vec3| position(app, e) + rotation(app, e) * local;
    (
        pose(joint.entity1, joint.local_anchor1),
        pose(joint.entity2, joint.local_anchor2),
    )
}

/// The angle (degrees) between the two joint frames.
fn frame_angle(app: &App, joint: &D6Joint) -> f32 {
    let f1 = rotation(app, joint.entity1) * joint.local_basis1;
    let f2 = rotation(app, joint.entity2) * joint.local_basis2;
    (f1.inverse() * f2)
        .angle_between(Quat::IDENTITY)
        .to_degrees()
}

/// A 10 kg, 2 m bar held horizontally at one end by a fully locked joint carries a 98 N·m
/// moment. The soft-step rows sag by about g/ω² (0.07 mm at their 60 Hz): the joint holds
/// within 1 mm and 0.1° at every step, including the first, where the load arrives at once.
#[test]
fn locked_axes_hold_under_load() {
    let mut app = app();
    let wall = anchor(&mut app);
    let bar = block(
        &mut app,
        Vec3::new(2.0, 0.2, 0.2),
        10.0,
        Vec3::new(1.0, 0.0, 0.0),
    );
    let joint = D6Joint::new(wall, bar).with_local_anchor2(Vec3::new(-1.0, 0.0, 0.0));
    spawn(&mut app, joint.clone());
    let (mut worst_gap, mut worst_angle) = (0.0f32, 0.0f32);
    for _ in 0..192 {
        step(&mut app, 1);
        let (p1, p2) = anchors(&app, &joint);
        worst_gap = worst_gap.max(p1.distance(p2));
        worst_angle = worst_angle.max(frame_angle(&app, &joint));
    }
    println!("locked: worst anchor error {worst_gap} m, worst angle {worst_angle}°");
    assert!(worst_gap < 1e-3, "{worst_gap}");
    assert!(worst_angle < 0.1, "{worst_angle}");
}

/// A 50 kg, 1 m bar starts along the axis of a 30° swing cone, horizontal, and gravity swings
/// it down into the cone's edge, where it stays. It never passes the cone by more than 0.5°.
#[test]
fn swing_cone_stops_a_heavy_bar() {
    let mut app = app();
    let wall = anchor(&mut app);
    let bar = block(
        &mut app,
        Vec3::new(1.0, 0.1, 0.1),
        50.0,
        Vec3::new(0.5, 0.0, 0.0),
    );
    let limit = 30f32.to_radians();
    let joint = D6Joint::new(wall, bar)
        .with_local_anchor2(Vec3::new(-0.5, 0.0, 0.0))
        .with_motion(D6Axis::Twist, D6Motion::Free)
        .with_swing_cone(limit, limit);
    spawn(&mut app, joint);
    let mut worst = 0.0f32;
    let mut at_rest = 0.0;
    for _ in 0..256 {
        step(&mut app, 1);
        let x2 = rotation(&app, bar) * Vec3::X;
        let swing = x2.angle_between(Vec3::X).to_degrees();
        worst = worst.max(swing);
        at_rest = swing;
    }
    println!("cone 30°: largest swing {worst}°, final {at_rest}°");
    assert!(worst < 30.5, "{worst}");
    // It did reach the cone (gravity holds it there).
    assert!(at_rest > 29.0, "{at_rest}");
}

/// The time at which the response of θ'' = k (1 − θ) − c θ' from rest at zero first reaches
/// `fraction`, with poles p₁, p₂ (the roots of s² + c s + k): θ = 1 − (p₂e^{−p₁t} − p₁e^{−p₂t}) /
/// (p₂ − p₁), found by bisection.
fn crossing_time(k: f32, c: f32, fraction: f32) -> f32 {
    let root = (c * c - 4.0 * k).sqrt();
    let (p1, p2) = ((c - root) / 2.0, (c + root) / 2.0);
    let theta = |t: f32| 1.0 - (p2 * (-p1 * t).exp() - p1 * (-p2 * t).exp()) / (p2 - p1);
    let (mut lo, mut hi) = (0.0f32, 100.0f32);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if theta(mid) < fraction {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// A twist drive (acceleration spring k = 25/s², c = 12.5/s: over-damped, poles 2.5/s and
/// 10/s) turns a box about a vertical axis to 1 rad. The angle follows the spring–damper
/// θ'' = k (θ* − θ) − c θ': it crosses 50 %, 63.2 % and 95 % of the target at the analytic
/// times within 2 % (the implicit drive is backward Euler at h = 1/256 s, which delays these
/// crossings by about 0.5 %), and settles on the target.
#[test]
fn twist_drive_follows_its_spring_damper() {
    let mut app = app();
    let wall = anchor(&mut app);
    let body = block(&mut app, Vec3::new(1.0, 0.2, 0.6), 3.0, Vec3::ZERO);
    let (k, c) = (25.0f32, 12.5f32);
    let up = Quat::from_rotation_z(FRAC_PI_2); // frame X along world Y
    let joint = D6Joint::new(wall, body)
        .with_local_basis_1(up)
        .with_local_basis_2(up)
        .with_motion(D6Axis::Twist, D6Motion::Free)
        .with_drive(D6Axis::Twist, D6Drive::new(k, c).as_acceleration())
        .with_drive_target(D6Axis::Twist, 1.0, 0.0);
    spawn(&mut app, joint);
    let mut samples = vec![0.0f32];
    for _ in 0..(3.0 / DT) as usize {
        step(&mut app, 1);
        let (axis, angle) = rotation(&app, body).to_axis_angle();
        samples.push(angle * axis.y.signum());
    }
    let first_time = |fraction: f32| {
        let i = samples.iter().position(|&a| a >= fraction).unwrap();
        let (a, b) = (samples[i - 1], samples[i]);
        (i as f32 - 1.0 + (fraction - a) / (b - a)) * DT
    };
    for fraction in [0.5, 0.632, 0.95] {
        let (measured, theory) = (first_time(fraction), crossing_time(k, c, fraction));
        println!("drive reaches {fraction}: {measured} s (theory {theory} s)");
        assert!(
            (measured / theory - 1.0).abs() < 0.02,
            "{measured} vs {theory}"
        );
    }
    let last = *samples.last().unwrap();
    assert!((last - 1.0).abs() < 1e-3, "{last}");
}

/// A ball on a 1 m arm hangs from a joint whose only free axis is the horizontal twist axis:
/// released 0.1 rad out, it swings with the period of a free compound pendulum,
/// 2π √(I_pivot / (m g L)) (1 + θ₀²/16), within 1 %.
#[test]
fn free_axis_swings_as_a_free_pendulum() {
    let mut app = app();
    let pivot = anchor(&mut app);
    let (radius, length, mass, theta0) = (0.1f32, 1.0f32, 2.0f32, 0.1f32);
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(radius),
            CollisionLayers::NONE,
            Mass(mass),
            SleepingDisabled,
            Transform::from_xyz(length * theta0.sin(), -length * theta0.cos(), 0.0)
                .with_rotation(Quat::from_rotation_z(theta0)),
        ),
    );
    let along_z = Quat::from_rotation_y(-FRAC_PI_2); // frame X along world Z
    spawn(
        &mut app,
        D6Joint::new(pivot, ball)
            .with_local_basis_1(along_z)
            .with_local_basis_2(Quat::from_rotation_z(theta0).inverse() * along_z)
            .with_local_anchor2(Vec3::new(0.0, length, 0.0))
            .with_motion(D6Axis::Twist, D6Motion::Free),
    );
    let mut x = vec![position(&app, ball).x];
    for _ in 0..(8.0 / DT) as usize {
        step(&mut app, 1);
        x.push(position(&app, ball).x);
    }
    let crossings: Vec<f32> = (1..x.len())
        .filter(|&i| x[i - 1] < 0.0 && x[i] >= 0.0)
        .map(|i| (i as f32 - 1.0 + -x[i - 1] / (x[i] - x[i - 1])) * DT)
        .collect();
    let period = (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f32;
    let inertia = 0.4 * mass * radius * radius + mass * length * length;
    let expected =
        2.0 * PI * (inertia / (mass * g() * length)).sqrt() * (1.0 + theta0 * theta0 / 16.0);
    println!("free twist pendulum: period {period} s, theory {expected} s");
    assert!(
        (period / expected - 1.0).abs() < 0.01,
        "{period} vs {expected}"
    );
}

/// A D6 joint naming a despawned body is reported once, naming the joint, and the rest of
/// the world keeps simulating.
#[test]
fn d6_joint_to_a_missing_body_is_reported() {
    let ((joint, finite, fall), warnings) = capture_warnings(|| {
        let mut app = app();
        let wall = anchor(&mut app);
        let gone = block(&mut app, Vec3::ONE, 1.0, Vec3::ZERO);
        let falling = block(&mut app, Vec3::ONE, 1.0, Vec3::new(5.0, 0.0, 0.0));
        let joint = spawn(&mut app, D6Joint::new(wall, gone));
        app.world_mut().despawn(gone);
        step(&mut app, 32);
        (
            joint,
            all_bodies_finite(&mut app),
            velocity(&app, falling).y,
        )
    });
    assert!(finite);
    assert!((fall + g() * 32.0 * DT).abs() < 1e-3, "{fall}");
    let name = format!("{joint}");
    assert_eq!(
        warnings.iter().filter(|w| w.contains(&name)).count(),
        1,
        "{warnings:?}"
    );
}

/// A slider (Y limited to ±0.1 m, every other axis locked) on which a body hangs: its `y`
/// position and velocity (anchor 2 below anchor 1 is a negative coordinate) after each step.
fn slider(joint: impl FnOnce(D6Joint) -> D6Joint, mass: f32, seconds: f32) -> Vec<(f32, f32)> {
    let mut app = app();
    let top = anchor(&mut app);
    let body = block(&mut app, Vec3::splat(0.2), mass, Vec3::ZERO);
    let joint = joint(D6Joint::new(top, body).with_limit(D6Axis::Y, -0.1, 0.1));
    spawn(&mut app, joint);
    (0..(seconds / DT) as usize)
        .map(|_| {
            step(&mut app, 1);
            (position(&app, body).y, velocity(&app, body).y)
        })
        .collect()
}

/// A soft limit is a spring past the limit: a 2 kg body hanging on a slider whose limit has
/// stiffness 2000 N/m comes to rest `m g / k` (9.8 mm) below the limit, which a hard limit
/// holds at the limit itself (within the soft-step sag of 0.07 mm).
#[test]
fn soft_limit_settles_at_the_springs_equilibrium() {
    let (mass, k) = (2.0, 2000.0);
    let soft = slider(|j| j.with_soft_limit(D6Axis::Y, k, 100.0), mass, 4.0);
    let expected = -0.1 - mass * g() / k;
    let end = soft.last().unwrap().0;
    assert!(
        (end - expected).abs() < 1e-4,
        "soft limit: rests at {end}, expected {expected}"
    );
    let hard = slider(|j| j, mass, 4.0).last().unwrap().0;
    assert!((hard + 0.1).abs() < 1e-4, "hard limit: rests at {hard}");
}

/// A limit with restitution 0.5: a body falling onto the slider's lower limit leaves it at
/// half its approach speed (the pre-solve speed: its velocity at the step's start plus the
/// step's gravity), exactly, as the bounce is the limit row's velocity target. Below the
/// threshold speed it does not bounce.
#[test]
fn limit_restitution_bounces_at_e_times_the_approach_speed() {
    let restitution = 0.5;
    let run = |threshold: f32| {
        let motion = slider(
            |j| {
                j.with_limit(D6Axis::Y, -0.1, 0.0).with_limit_restitution(
                    D6Axis::Y,
                    restitution,
                    threshold,
                )
            },
            2.0,
            0.5,
        );
        // The step in which the fall is reversed or stopped.
        let k = motion.iter().position(|&(_, v)| v >= 0.0).unwrap();
        (motion[k - 1].1 - g() * DT, motion[k].1, motion)
    };
    let (approach, leaving, _) = run(0.5);
    assert!(approach < -1.0, "approach {approach}");
    assert!(
        (leaving + restitution * approach).abs() < 1e-3 * approach.abs(),
        "left at {leaving}, expected {}",
        -restitution * approach
    );
    let (_, _, motion) = run(5.0);
    let rise = motion.iter().map(|&(_, v)| v).fold(f32::MIN, f32::max);
    assert!(rise < 1e-3, "below the threshold it rose at {rise} m/s");
    let end = motion.last().unwrap().0;
    assert!(
        (end + 0.1).abs() < 1e-3,
        "below the threshold it ends at {end}"
    );
}
