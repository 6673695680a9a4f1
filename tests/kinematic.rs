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
    assert_rider_slipped_then_rode(&app, rider, platform, v);
    assert!(
        (velocity(&app, rider) - v).length() <= 1e-3,
        "rider velocity {}",
        velocity(&app, rider)
    );
}

/// Turns `q` by `n` substeps of the integrator's first-order quaternion update at angular
/// velocity `w` over substeps of `h`, in f64: what the velocities the engine chose do.
fn integrate_turn(q: Quat, w: Vec3, h: f64, n: usize) -> bevy::math::DQuat {
    let w = w.as_dvec3() * h;
    let mut q = q.as_dquat();
    for _ in 0..n {
        let dq = bevy::math::DQuat::from_xyzw(w.x, w.y, w.z, 0.0) * q;
        q = (q + dq * 0.5).normalize();
    }
    q
}

/// A kinematic body (its centre of mass off its origin) given a target pose is there after one
/// step, and the velocities it was given are the ones that carry it there under the
/// integrator's rules: the centre moves by `v dt`, and `n` substeps of the quaternion update at
/// `ω` turn it onto the target rotation (to 1e-6 rad, f64 re-integration of f32 inputs; the
/// naive `ω = θ / dt` would fall short by `2 n (ωh/2 − atan(ωh/2))`, 3e-3 rad here). The pose
/// is set to the target to the bit, and a second step holds it with zero velocities.
#[test]
fn kinematic_target_is_reached_in_one_step() {
    let mut app = app();
    let com = Vec3::new(0.3, -0.2, 0.1);
    let start = Transform::from_xyz(1.0, 2.0, -1.0).with_rotation(Quat::from_rotation_x(0.3));
    let body = spawn(
        &mut app,
        (
            RigidBody::Kinematic,
            Collider::cuboid(1.0, 0.5, 2.0),
            CenterOfMass(com),
            start,
        ),
    );
    step(&mut app, 1);
    let (p0, q0) = (position(&app, body), rotation(&app, body));
    let axis = Vec3::new(1.0, 2.0, -0.5).normalize();
    let target = KinematicTarget::new(
        Vec3::new(1.5, 1.8, -0.7),
        Quat::from_axis_angle(axis, 0.8) * q0,
    );
    set(&mut app, body, target);
    step(&mut app, 1);
    assert_eq!(position(&app, body), target.position);
    assert_eq!(rotation(&app, body), target.rotation.normalize());

    let (v, w) = (velocity(&app, body), angular_velocity(&app, body));
    let (c0, c1) = (p0 + q0 * com, target.position + target.rotation * com);
    // f32 rounding of positions of a few metres and of v dt: ≤ 1e-6 m.
    let moved = c0 + v * DT;
    assert!(
        (moved - c1).length() <= 1e-6,
        "centre lands at {moved}, not {c1}"
    );
    let substeps = SubstepCount::default().0 as usize;
    let landed = integrate_turn(q0, w, DT as f64 / substeps as f64, substeps);
    // The angle of the rotation between the two, from its vector part (`angle_between`'s
    // `acos` of a dot product near 1 loses half the digits).
    let between = landed * target.rotation.as_dquat().normalize().conjugate();
    let miss = 2.0 * bevy::math::DVec3::new(between.x, between.y, between.z).length();
    assert!(miss <= 1e-6, "rotation lands {miss} rad off the target");

    // Held: the body is there, so it does not move, and its velocities are zero.
    step(&mut app, 1);
    assert_eq!(velocity(&app, body), Vec3::ZERO);
    assert_eq!(angular_velocity(&app, body), Vec3::ZERO);
    assert_eq!(position(&app, body), target.position);
}

/// A box resting on a platform driven by targets at constant speed (one per step, `v dt`
/// further each time) is carried by friction exactly as on a platform driven by its velocity:
/// it slips back by `v² / (2 μ g)` while kinetic friction brings it up to speed, then rides
/// along. Once the platform holds its last target, the box comes to rest on it and sleeps.
#[test]
fn kinematic_targets_carry_a_box_by_friction() {
    let mut app = app();
    let v = Vec3::new(0.0, 0.0, 1.0);
    let start = Vec3::new(0.0, -0.25, 0.0);
    let platform = spawn(
        &mut app,
        (
            RigidBody::Kinematic,
            Collider::cuboid(4.0, 0.5, 4.0),
            Transform::from_translation(start),
        ),
    );
    let rider = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 1.0, 1.0),
            Transform::from_xyz(0.0, 0.5, 0.0),
        ),
    );
    for k in 1..=64 {
        let target = KinematicTarget::new(start + v * (k as f32 * DT), Quat::IDENTITY);
        set(&mut app, platform, target);
        app.update();
        // v dt = 1/64 m is exact in binary, so are the targets; the velocity is their
        // difference over dt, to rounding.
        assert!((velocity(&app, platform) - v).length() <= 1e-5, "step {k}");
        assert_eq!(position(&app, platform), target.position, "step {k}");
    }
    assert_rider_slipped_then_rode(&app, rider, platform, v);
    assert!((velocity(&app, rider) - v).length() <= 1e-3);
    // The last target is held: the platform stops dead and the rider settles and sleeps.
    step(&mut app, 128);
    assert_eq!(velocity(&app, platform), Vec3::ZERO);
    assert!(
        is_sleeping(&app, rider),
        "the rider should sleep on a still platform"
    );
}

/// A target with a non-finite component, or on a body that is not kinematic, is reported
/// once (naming the entity) and ignored: the kinematic body keeps moving by its velocity, the
/// dynamic one falls freely.
#[test]
fn bad_kinematic_targets_warn_and_are_ignored() {
    let (bodies, warnings) = capture_warnings(|| {
        let mut app = app();
        let v = Vec3::new(1.0, 0.0, 0.0);
        let kinematic = spawn(
            &mut app,
            (
                RigidBody::Kinematic,
                Collider::sphere(0.5),
                LinearVelocity(v),
                KinematicTarget::new(Vec3::new(f32::NAN, 0.0, 0.0), Quat::IDENTITY),
            ),
        );
        let dynamic = spawn(
            &mut app,
            (
                RigidBody::Dynamic,
                Collider::sphere(0.5),
                Transform::from_xyz(5.0, 0.0, 0.0),
                KinematicTarget::new(Vec3::new(5.0, 3.0, 0.0), Quat::IDENTITY),
            ),
        );
        let zero_rotation = spawn(
            &mut app,
            (
                RigidBody::Kinematic,
                Collider::sphere(0.5),
                Transform::from_xyz(-5.0, 0.0, 0.0),
                KinematicTarget::new(
                    Vec3::new(-5.0, 1.0, 0.0),
                    Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
                ),
            ),
        );
        step(&mut app, 64);
        let state = |e| (position(&app, e), velocity(&app, e));
        (
            [kinematic, dynamic, zero_rotation],
            [state(kinematic), state(dynamic), state(zero_rotation)],
        )
    });
    let ([kinematic, dynamic, zero_rotation], [k, d, z]) = bodies;
    // The kinematic body moved by its own velocity: 1 m in 64 steps (exact in binary).
    assert_eq!(k, (Vec3::new(1.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0)));
    // The dynamic body fell under gravity (1 s of free fall, ≈ g/2), not up to y = 3.
    assert!((d.0.y + 0.5 * g()).abs() < 0.05, "dynamic body at {}", d.0);
    assert_eq!(z, (Vec3::new(-5.0, 0.0, 0.0), Vec3::ZERO));
    for entity in [kinematic, dynamic, zero_rotation] {
        let named: Vec<_> = (warnings.iter())
            .filter(|w| w.contains(&entity.to_string()) && w.contains("KinematicTarget"))
            .collect();
        assert_eq!(named.len(), 1, "{entity}: {warnings:?}");
    }
}

/// A platform that started at `v` at once: kinetic friction (μ = 0.5, default on both)
/// accelerates the rider at μ g until it matches, so it slips back by v² / (2 μ g) and then
/// rides along. 5 %: the friction bar used for sliding (friction.rs); plus linear_slop
/// vertically.
fn assert_rider_slipped_then_rode(app: &App, rider: Entity, platform: Entity, v: Vec3) {
    let lag = v.z * v.z / (2.0 * 0.5 * g());
    let offset = position(app, rider) - position(app, platform);
    assert!(
        (offset.z + lag).abs() <= 0.05 * lag,
        "rider lags {} m, expected {lag} m",
        -offset.z
    );
    assert!(
        (offset.y - 0.75).abs() <= slop() && offset.x.abs() <= slop(),
        "rider offset {offset}"
    );
}
