//! Free fall against the closed form, with the integrator's exact discretisation error.
//!
//! The engine integrates with semi-implicit (symplectic) Euler over substeps of length
//! h = dt / 4. Under constant gravity g, after k substeps (t = k h):
//!   v_k = -g k h = -g t                                   (exact)
//!   y_k = y_0 + Σ_{i=1..k} v_i h = y_0 - g h² k (k + 1) / 2 = y_0 - ½ g t² - ½ g h t
//! so the position sits exactly g h t / 2 below the closed form ½ g t². The tests compare
//! with that discrete solution, so only f32 rounding is left as tolerance.

use crate::common;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

/// Substep length with the default 4 substeps.
const H: f32 = DT / 4.0;

/// f32 rounding bound for |y| ≤ 5 m, |v| ≤ 10 m/s over 256 substeps: the velocity takes 256
/// additions of g h, each off by at most ½ ulp(16) = 9.5e-7 → ≤ 2.4e-4 m/s worst case, which
/// moves the position by ≤ 1 s × 2.4e-4 m; plus 64 position roundings of ½ ulp(8) = 4.8e-7.
/// The bound is 60× smaller than the g h t / 2 = 1.9 cm integrator offset at t = 1 s.
const ROUNDING: f32 = 3.0e-4;

#[test]
fn free_fall_matches_semi_implicit_euler_solution() {
    let mut app = app();
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::from_xyz(0.0, 0.0, 0.0),
        ),
    );
    let g = g();
    for k in 1..=64u32 {
        app.update();
        let t = k as f32 * DT;
        let y = position(&app, ball).y;
        let closed_form = -0.5 * g * t * t;
        // The position lags the closed form by exactly g h t / 2 (derived in the module docs).
        let offset = closed_form - y;
        assert!(
            (offset - 0.5 * g * H * t).abs() <= ROUNDING,
            "step {k}: y = {y}, closed form {closed_form}, offset {offset}, expected {}",
            0.5 * g * H * t
        );
        // Semi-implicit Euler's velocity is exact for constant acceleration (up to rounding).
        let v = velocity(&app, ball).y;
        assert!(
            (v + g * t).abs() <= ROUNDING,
            "step {k}: v = {v}, expected {}",
            -g * t
        );
    }
}

#[test]
fn projectile_keeps_horizontal_velocity_and_moves_uniformly() {
    let mut app = app();
    let v0 = Vec3::new(3.0, 5.0, -2.0);
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.25),
            LinearVelocity(v0),
        ),
    );
    let g = g();
    step(&mut app, 64);
    let t = 1.0;
    let v = velocity(&app, ball);
    // Gravity has no horizontal component, so x and z velocity are untouched bit for bit.
    assert_eq!(v.x.to_bits(), v0.x.to_bits());
    assert_eq!(v.z.to_bits(), v0.z.to_bits());
    let p = position(&app, ball);
    // x = v t: 64 position roundings of ½ ulp(4) = 2.4e-7 each → ≤ 2e-5.
    assert!((p.x - v0.x * t).abs() <= 2e-5, "x = {}", p.x);
    assert!((p.z - v0.z * t).abs() <= 2e-5, "z = {}", p.z);
    // y = v0 t - ½ g t (t + h), the discrete solution (module docs), within ROUNDING.
    let expected_y = v0.y * t - 0.5 * g * t * (t + H);
    assert!(
        (p.y - expected_y).abs() <= ROUNDING,
        "y = {}, expected {expected_y}",
        p.y
    );
}

#[test]
fn more_substeps_shrink_the_offset_as_predicted() {
    // With 8 substeps h halves, so the offset g h t / 2 halves: the error is the integrator's,
    // not a fixed bias.
    let mut app = app();
    app.insert_resource(SubstepCount(8));
    let ball = spawn(&mut app, (RigidBody::Dynamic, Collider::sphere(0.5)));
    step(&mut app, 64);
    let g = g();
    let (t, h) = (1.0, DT / 8.0);
    let y = position(&app, ball).y;
    let offset = -0.5 * g * t * t - y;
    // 512 velocity additions instead of 256: twice the velocity-rounding share of ROUNDING.
    assert!(
        (offset - 0.5 * g * h * t).abs() <= 2.0 * ROUNDING,
        "offset {offset}, expected {}",
        0.5 * g * h * t
    );
}

#[test]
fn zero_gravity_scale_keeps_velocity_bit_exact() {
    let mut app = app();
    let v0 = Vec3::new(1.5, -2.25, 3.0);
    let w0 = Vec3::new(0.5, -1.0, 0.25);
    let ball = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            GravityScale(0.0),
            LinearVelocity(v0),
            AngularVelocity(w0),
            SleepingDisabled,
        ),
    );
    let start = position(&app, ball);
    step(&mut app, 128);
    // No force, no damping: velocity is never changed, so it must be equal bit for bit.
    assert_eq!(
        velocity(&app, ball).to_array().map(f32::to_bits),
        v0.to_array().map(f32::to_bits)
    );
    // A sphere's inertia is isotropic, so torque-free rotation keeps ω exactly too.
    assert_eq!(
        angular_velocity(&app, ball).to_array().map(f32::to_bits),
        w0.to_array().map(f32::to_bits)
    );
    // x = x0 + v t over 2 s: 128 roundings of ½ ulp(8) = 4.8e-7 → ≤ 1e-4.
    let expected = start + v0 * 2.0;
    assert!(
        position(&app, ball).distance(expected) <= 1e-4,
        "{:?} vs {expected:?}",
        position(&app, ball)
    );
}

#[test]
fn zero_world_gravity_keeps_velocity_bit_exact() {
    let mut app = app();
    app.insert_resource(Gravity::ZERO);
    let v0 = Vec3::new(-0.75, 0.125, 4.0);
    let body = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::cuboid(1.0, 0.5, 2.0),
            LinearVelocity(v0),
            SleepingDisabled,
        ),
    );
    step(&mut app, 128);
    assert_eq!(
        velocity(&app, body).to_array().map(f32::to_bits),
        v0.to_array().map(f32::to_bits)
    );
    assert_eq!(angular_velocity(&app, body), Vec3::ZERO);
    assert_eq!(rotation(&app, body), Quat::IDENTITY);
}
