//! Pendulums on a revolute joint (a physical pendulum) and on a distance joint (a point mass):
//! the period matches theory and the mechanical energy never grows.
//!
//! For a pendulum of mass m whose centre of mass is L below the pivot, with moment of inertia
//! I_p about the pivot, small oscillations have the period T₀ = 2π √(I_p / (m g L)); for an
//! amplitude θ₀ the period is T₀ (1 + θ₀²/16 + O(θ₀⁴)) (the first term of the complete elliptic
//! integral series; at θ₀ = 10° the next term, 11θ₀⁴/3072, is 3e-6 and negligible).

use crate::common;
use crate::joints_common;

use std::f32::consts::PI;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;
use joints_common::*;

/// Initial amplitude.
const THETA0_DEG: f32 = 10.0;
/// Distance from the pivot to the bob's centre, m.
const L: f32 = 1.0;
/// Radius of the bob, m.
const RADIUS: f32 = 0.2;

/// Period tolerance (the brief's 1 %). The method's own period error is far smaller: the
/// substep is h = 1/256 s, ωh ≈ 0.012 rad, and symplectic Euler's phase error is O((ωh)²)
/// ≈ 1.5e-4; zero crossings interpolated linearly between 1/64 s samples, where the motion is
/// at its most linear, add well under 1e-4 s per crossing.
const PERIOD_TOLERANCE: f32 = 0.01;

/// Interpolated times of the upward zero crossings of `xs` (sampled every `DT`).
fn upward_crossings(xs: &[f32]) -> Vec<f32> {
    xs.windows(2)
        .enumerate()
        .filter(|(_, w)| w[0] < 0.0 && w[1] >= 0.0)
        .map(|(i, w)| (i as f32 + 1.0 + w[0] / (w[0] - w[1])) * DT)
        .collect()
}

/// Mass of the bob: a solid ball of density 1000 kg/m³ (the collider default), kg.
fn bob_mass() -> f32 {
    1000.0 * 4.0 / 3.0 * PI * RADIUS.powi(3)
}

/// Runs the pendulum for 60 s from rest at θ₀ (centre of mass at y = −L cos θ₀). Returns the
/// bob's x sampled every step, and checks that the mechanical energy never exceeds its initial
/// value by more than f32 round-off.
fn run_and_check_energy(app: &mut App, bob: Entity, label: &str) -> Vec<f32> {
    let m = bob_mass();
    // The initial state is the spawn pose at rest (the ECS pose and mass are only filled in
    // by the first step): E0 = m g y0.
    let e0 = (m * g()) as f64 * (-L * THETA0_DEG.to_radians().cos()) as f64;
    // Round-off allowance: the state is f32. Positions near 1 m carry ½ ulp = 6e-8 m of
    // rounding per update; over 60 s × 256 substeps/s = 15 360 updates a random walk grows to
    // √15 360 × 6e-8 ≈ 7.4e-6 m, i.e. 7.4e-6 m × m g of potential energy; doubled for the
    // velocity rounding (v ≈ 0.5 m/s). Scale: 1.5e-5 m × m g.
    let allowance = 1.5e-5 * (m * g()) as f64;
    let mut xs = Vec::new();
    let mut worst_gain = f64::NEG_INFINITY;
    let mut last = e0;
    for k in 1..=(60.0 / DT) as usize {
        step(app, 1);
        if k == 1 {
            assert!(
                (mass(app, bob) / m - 1.0).abs() <= 1e-5,
                "bob mass {}",
                mass(app, bob)
            );
        }
        let e = mechanical_energy(app, bob);
        worst_gain = worst_gain.max(e - e0);
        assert!(
            e <= e0 + allowance,
            "{label}: energy grew at t = {:.3} s: E = {e:.6} J, E0 = {e0:.6} J (+{:.3e} J, \
             allowance {allowance:.3e} J)",
            k as f32 * DT,
            e - e0
        );
        last = e;
        xs.push(position(app, bob).x);
    }
    let swing = (m * g() * L * (1.0 - THETA0_DEG.to_radians().cos())) as f64;
    println!(
        "{label}: E0 = {e0:.4} J, largest gain {worst_gain:.3e} J, after 60 s E − E0 = {:.4} J \
         ({:.2} % of the swing energy {swing:.4} J)",
        last - e0,
        100.0 * (e0 - last) / swing
    );
    xs
}

fn check_period(xs: &[f32], t0: f32, label: &str) {
    let theta0 = THETA0_DEG.to_radians();
    let expected = t0 * (1.0 + theta0 * theta0 / 16.0);
    // Zero crossings of the first 12 s: several periods, before the amplitude has decayed
    // (numerical dissipation changes the amplitude, and with it the period, a little).
    let steps = (12.0 / DT) as usize;
    let crossings = upward_crossings(&xs[..steps]);
    assert!(
        crossings.len() >= 5,
        "{label}: only {} crossings",
        crossings.len()
    );
    let periods: Vec<f32> = crossings.windows(2).map(|w| w[1] - w[0]).collect();
    let mean = (crossings[crossings.len() - 1] - crossings[0]) / periods.len() as f32;
    println!(
        "{label}: {} periods, mean {mean:.5} s, expected {expected:.5} s (T₀ = {t0:.5} s), \
         error {:+.3} %",
        periods.len(),
        100.0 * (mean / expected - 1.0)
    );
    for (i, p) in periods.iter().enumerate() {
        assert!(
            (p / expected - 1.0).abs() <= PERIOD_TOLERANCE,
            "{label}: period {i} is {p:.5} s, expected {expected:.5} s ({:+.3} %)",
            100.0 * (p / expected - 1.0)
        );
    }
    assert!(
        (mean / expected - 1.0).abs() <= PERIOD_TOLERANCE,
        "{label}: mean period {mean:.5} s, expected {expected:.5} s"
    );
}

/// A ball of radius `RADIUS` hinged about Z at the point `L` above its centre (the pivot is the
/// origin), released at rest at angle θ₀: a physical pendulum.
#[test]
fn revolute_pendulum_period_and_energy() {
    let mut app = app();
    let theta0 = THETA0_DEG.to_radians();
    let pivot = spawn(&mut app, (RigidBody::Static, Transform::default()));
    // The ball's frame is the hanging pose turned by θ₀ about Z, so its local point (0, L, 0)
    // sits on the pivot.
    let turn = Quat::from_rotation_z(theta0);
    let bob = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(RADIUS),
            Transform::from_translation(turn * Vec3::new(0.0, -L, 0.0)).with_rotation(turn),
            SleepingDisabled,
        ),
    );
    let joint = spawn(
        &mut app,
        RevoluteJoint::new(pivot, bob)
            .with_hinge_axis(Vec3::Z)
            .with_local_anchor2(Vec3::new(0.0, L, 0.0)),
    );

    // I_p = I_cm + m L², I_cm = (2/5) m r² for a solid ball.
    let m = bob_mass();
    let i_cm = 0.4 * m * RADIUS * RADIUS;
    let i_pivot = i_cm + m * L * L;
    let t0 = 2.0 * PI * (i_pivot / (m * g() * L)).sqrt();

    let xs = run_and_check_energy(&mut app, bob, "revolute pendulum");
    // The body's computed inertia is the ball's.
    let computed = 1.0 / computed_mass(&app, bob).local_inverse_inertia().z_axis.z;
    assert!(
        (computed / i_cm - 1.0).abs() <= 1e-4,
        "ball inertia {computed}, expected {i_cm}"
    );
    let gap = anchor_error::<RevoluteJoint>(&app, joint);
    println!("revolute pendulum: hinge gap after 60 s {gap:.2e} m");
    check_period(&xs, t0, "revolute pendulum");
}

/// A ball on a distance joint whose anchor is the ball's centre: no torque ever acts on the
/// ball, so it does not turn and swings as a point mass, T₀ = 2π √(L / g).
#[test]
fn distance_pendulum_period_and_energy() {
    let mut app = app();
    let theta0 = THETA0_DEG.to_radians();
    let pivot = spawn(&mut app, (RigidBody::Static, Transform::default()));
    let bob = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(RADIUS),
            Transform::from_xyz(L * theta0.sin(), -L * theta0.cos(), 0.0),
            SleepingDisabled,
        ),
    );
    spawn(&mut app, DistanceJoint::new(pivot, bob).with_rest_length(L));
    let t0 = 2.0 * PI * (L / g()).sqrt();
    let xs = run_and_check_energy(&mut app, bob, "distance pendulum");
    check_period(&xs, t0, "distance pendulum");
    // The ball never turned.
    assert_eq!(angular_velocity(&app, bob), Vec3::ZERO);
    // And it stayed on its circle: the rigid joint is re-projected every substep, leaving f32
    // round-off of coordinates ≈ 1 m (a few ulps of 1.2e-7).
    let r = position(&app, bob).length();
    assert!((r - L).abs() <= 1e-5, "length {r}");
}
