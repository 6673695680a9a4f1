//! Kinematic bodies move only by their velocity: they push dynamic bodies and are never
//! pushed back, and gravity does not act on them.

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

fn bits(v: Vec3) -> [u32; 3] {
    v.to_array().map(f32::to_bits)
}

#[test]
fn kinematic_box_pushes_dynamic_box_and_keeps_its_velocity() {
    let mut app = app();
    ground(&mut app);
    let v = Vec3::new(2.0, 0.0, 0.0);
    let start = Vec3::new(-2.0, 0.5, 0.0);
    let pusher = spawn(
        &mut app,
        (
            RigidBody::Kinematic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_translation(start),
            LinearVelocity(v),
        ),
    );
    // Resting on the ground 0.5 m in front of the pusher's face.
    let pushed = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(-0.5, 0.5, 0.0),
            SleepingDisabled,
        ),
    );
    // 2 s: contact after 0.25 s, then 1.75 s of pushing against friction.
    for k in 1..=128u32 {
        app.update();
        // Infinite mass: the contact never changes the kinematic velocity, bit for bit.
        assert_eq!(bits(velocity(&app, pusher)), bits(v), "step {k}");
        assert_eq!(angular_velocity(&app, pusher), Vec3::ZERO, "step {k}");
    }
    let t = 2.0;
    let p = position(&app, pusher);
    // x = x0 + v t over 128 steps: ≤ 128 roundings of ½ ulp(2) = 1.2e-7 each → 2e-5.
    assert!((p.x - (start.x + v.x * t)).abs() <= 2e-5, "pusher at {p}");
    // No gravity on a kinematic body: y is untouched.
    assert_eq!(p.y.to_bits(), start.y.to_bits(), "pusher fell to {}", p.y);
    assert_eq!(rotation(&app, pusher), Quat::IDENTITY);

    // The pushed box is in front of the pusher's face, in contact (within the tolerance),
    // moving with it: friction would stop it at once if the pusher let go.
    let q = position(&app, pushed);
    let gap = (q.x - 0.5) - (p.x + 0.5);
    assert!(
        gap.abs() <= slop(),
        "gap between pusher and pushed box: {gap} m"
    );
    let u = velocity(&app, pushed);
    // Carried at the pusher's speed; a velocity error above 1 mm/s (the resting bar) would
    // open or close the gap by > 2 mm over a step-to-step scale.
    assert!(
        (u.x - v.x).abs() <= 1e-3 && u.z.abs() <= 1e-3,
        "pushed box velocity {u}"
    );
    // Still on the ground, not lifted or tipped by the push.
    assert!((q.y - 0.5).abs() <= slop(), "pushed box at height {}", q.y);
}

#[test]
fn kinematic_body_follows_its_angular_velocity() {
    let mut app = app();
    let w = Vec3::new(0.0, 1.5, 0.0);
    let spinner = spawn(
        &mut app,
        (
            RigidBody::Kinematic,
            Collider::cuboid(2.0, 0.2, 0.2),
            AngularVelocity(w),
        ),
    );
    step(&mut app, 64);
    assert_eq!(bits(angular_velocity(&app, spinner)), bits(w));
    assert_eq!(position(&app, spinner), Vec3::ZERO);
    let angle = rotation(&app, spinner).angle_between(Quat::IDENTITY);
    // The first-order quaternion update renormalised advances each substep by
    // 2 atan(ω h / 2) instead of ω h: relative error (ω h)² / 12 = 2e-6, far below the
    // f32 rounding of 256 quaternion updates (≈ 256 × 6e-8 × 1.5 rad ≈ 2.3e-5 rad).
    assert!(
        (angle - 1.5).abs() <= 1e-4,
        "turned {angle} rad, expected 1.5"
    );
}

#[test]
fn kinematic_platform_carries_a_box_by_friction() {
    // A box resting on a kinematic platform that starts moving sideways is carried along.
    let mut app = app();
    let v = Vec3::new(0.0, 0.0, 1.0);
    let platform = spawn(
        &mut app,
        (
            RigidBody::Kinematic,
            Collider::cuboid(4.0, 0.5, 4.0),
            Transform::from_xyz(0.0, -0.25, 0.0),
            LinearVelocity(v),
        ),
    );
    let rider = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.5, 0.0),
            SleepingDisabled,
        ),
    );
    step(&mut app, 64);
    assert_eq!(bits(velocity(&app, platform)), bits(v));
    // The platform starts at 1 m/s at once; kinetic friction (μ = 0.5, default on both)
    // accelerates the rider at μ g until it matches, so it slips back by v² / (2 μ g) = 0.102 m
    // and then rides along.
    let lag = v.z * v.z / (2.0 * 0.5 * g());
    let offset = position(&app, rider) - position(&app, platform);
    // 5 %: the friction bar used for sliding (friction.rs); plus linear_slop vertically.
    assert!(
        (offset.z + lag).abs() <= 0.05 * lag,
        "rider lags {} m, expected {lag} m",
        -offset.z
    );
    assert!(
        (offset.y - 0.75).abs() <= slop() && offset.x.abs() <= slop(),
        "rider offset {offset}"
    );
    assert!(
        (velocity(&app, rider) - v).length() <= 1e-3,
        "rider velocity {}",
        velocity(&app, rider)
    );
}
