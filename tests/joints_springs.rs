//! Joint springs, joint friction and hinge angles over several turns, against closed forms.
//!
//! ## What the integrator does to a spring
//!
//! Every spring scene puts one dynamic body on a spring to a static body, moved through its
//! centre of mass along a fixed line (or turned about a fixed axis through it), with gravity
//! off: one row, linear in the coordinate, whose inverse mass `w` never changes. The XPBD
//! spring row's fixed point, which such a row reaches in its first pass, is the backward
//! Euler step of the spring–damper over the substep `h` (see `JointSpring`'s docs):
//! `v' = v + h (−ω² x' − 2ζω v')`, `x' = x + h v'`, velocities being the position change over
//! `h`. A mode `e^{st}` of the continuous oscillator, `s = −ζω ± iω_d` with
//! `ω_d = ω √(1 − ζ²)`, is multiplied by `1 / (1 − s h)` per substep, so the simulated
//! oscillation decays at
//!
//! `σ_h = ln((1 + ζωh)² + (ω_d h)²) / 2h = ζω + ω² h (1 − 2ζ²) / 2 + O(h²)`
//!
//! and turns at `ω_h = atan(ω_d h / (1 + ζωh)) / h = ω_d (1 − ζωh + O(h²))`. The tests expect
//! the continuous closed forms, period `2π / ω_d` and envelope `e^{−ζωt}`, and allow exactly the
//! integrator's departure from them: a measured value must lie between the continuous value
//! and the backward Euler one, widened by the measurement's own error (below). At 1 Hz,
//! ζ = 0.1 and `h = 1/256 s` that allows 0.075 1/s of extra decay against the spring's
//! 0.63 1/s, and a period 0.26 % long; an undamped row would decay at only 0.077 1/s.
//!
//! With critical damping (ζ = 1) the continuous solution from rest at `x₀` is
//! `x₀ (1 + ωt) e^{−ωt}` and the backward Euler one, with its double root `z = 1 / (1 + ωh)`,
//! `x₀ zⁿ (1 + n (1 − z))` after `n` substeps: both stay above zero.

use crate::common;
use crate::joints_common;

use std::f32::consts::PI;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;
use joints_common::*;

/// One substep, s (4 substeps per step).
const H: f64 = DT as f64 / 4.0;

/// Where each spring scene's spring rests: a distance of 0.25 m, slider position 0, hinge
/// angle 0. Coordinates are kept small because positions are `f32`: near 1 m each substep's
/// position update rounds by up to 6e-8 m, against the spring's velocity change of
/// `ω² A h² ≈ 1.2e-4` m per substep, and over 1280 substeps that shifted the period of a
/// distance spring resting at 1 m by 8e-5 s; at 0.25 m the round-off is four times smaller.
const DISTANCE_REST: f32 = 0.25;

/// The joint a spring scene puts its spring on.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Distance,
    Prismatic,
    Revolute,
}

/// The static body every scene joins to, at the origin.
fn static_anchor(app: &mut App) -> Entity {
    spawn(app, (RigidBody::Static, Transform::default()))
}

/// A ball of radius 0.25 and mass `mass` (moment of inertia `0.4 m r²`), turned by `angle`
/// about Z, at `at`.
fn ball(app: &mut App, mass: f32, at: Vec3, angle: f32) -> Entity {
    spawn(
        app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.25),
            Mass(mass),
            Transform::from_translation(at).with_rotation(Quat::from_rotation_z(angle)),
            SleepingDisabled,
        ),
    )
}

/// The hinge angle of `body` about Z (its X axis from world X), rad, in (−π, π].
fn hinge_angle(app: &App, body: Entity) -> f32 {
    signed_angle(Vec3::X, rotation(app, body) * Vec3::X, Vec3::Z)
}

/// A ball of mass `mass` on a `kind` joint to a static body, with `spring` (its rest value set
/// to the scene's), released from rest `offset` away from the rest value, gravity off: the
/// coordinate minus its rest value at the start and after each step for `seconds`, and the
/// app.
fn release(kind: Kind, spring: JointSpring, mass: f32, offset: f32, seconds: f32) -> Vec<f64> {
    let mut app = app();
    no_gravity(&mut app);
    let anchor = static_anchor(&mut app);
    let body = match kind {
        Kind::Distance => {
            let body = ball(&mut app, mass, Vec3::X * (DISTANCE_REST + offset), 0.0);
            let spring = spring.with_rest(DISTANCE_REST);
            spawn(
                &mut app,
                DistanceJoint::new(anchor, body).with_spring(spring),
            );
            body
        }
        Kind::Prismatic => {
            let body = ball(&mut app, mass, Vec3::X * offset, 0.0);
            let joint = PrismaticJoint::new(anchor, body).with_slider_axis(Vec3::X);
            spawn(&mut app, joint.with_spring(spring.with_rest(0.0)));
            body
        }
        Kind::Revolute => {
            let body = ball(&mut app, mass, Vec3::ZERO, offset);
            let joint = RevoluteJoint::new(anchor, body).with_hinge_axis(Vec3::Z);
            spawn(&mut app, joint.with_spring(spring.with_rest(0.0)));
            body
        }
    };
    let coordinate = |app: &App| -> f64 {
        match kind {
            Kind::Distance => (position(app, body).length() - DISTANCE_REST) as f64,
            Kind::Prismatic => position(app, body).x as f64,
            Kind::Revolute => hinge_angle(app, body) as f64,
        }
    };
    let mut samples = vec![offset as f64];
    for _ in 0..(seconds / DT) as usize {
        step(&mut app, 1);
        samples.push(coordinate(&app));
    }
    samples
}

/// The period and decay rate of the oscillation sampled once per step in `d` (from t = 0).
///
/// The period is the mean over the zero crossings, each found by linear interpolation between
/// the samples around it. For `e^{−σt} cos(ω t)` that misplaces each crossing by at most
/// `|x''| DT² / 8 |x'| = σ DT² / 4` (x'' = −2σ x' at a crossing), 4e-5 s here, and by the same
/// amount at every crossing, so the mean period is off by far less: 1e-4 s is allowed.
///
/// The decay rate is the least-squares slope of the log of the peaks, each taken from the
/// parabola through the three samples around it, which is off by `O((ω DT)⁴)` ≈ 1e-4 of the
/// peak: over the 4 s the peaks span, 1e-3 1/s is allowed.
fn measure(d: &[f64]) -> (f64, f64) {
    let dt = DT as f64;
    let crossings: Vec<f64> = (0..d.len() - 1)
        .filter(|&k| d[k] != 0.0 && d[k] * d[k + 1] <= 0.0)
        .map(|k| (k as f64 + d[k] / (d[k] - d[k + 1])) * dt)
        .collect();
    assert!(
        crossings.len() >= 6,
        "only {} zero crossings",
        crossings.len()
    );
    let period =
        2.0 * (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64;
    let mut peaks = Vec::new();
    for k in 1..d.len() - 1 {
        let s = d[k].signum();
        let (y0, y1, y2) = (s * d[k - 1], s * d[k], s * d[k + 1]);
        if y1 > y0 && y1 >= y2 {
            let curvature = y0 - 2.0 * y1 + y2;
            let shift = (y2 - y0) / (2.0 * curvature);
            let top = y1 - (y2 - y0) * (y2 - y0) / (8.0 * curvature);
            peaks.push(((k as f64 - shift) * dt, top.ln()));
        }
    }
    assert!(peaks.len() >= 6, "only {} peaks", peaks.len());
    let n = peaks.len() as f64;
    let (mt, my) = (
        peaks.iter().map(|p| p.0).sum::<f64>() / n,
        peaks.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let slope = peaks.iter().map(|p| (p.0 - mt) * (p.1 - my)).sum::<f64>()
        / peaks.iter().map(|p| (p.0 - mt) * (p.0 - mt)).sum::<f64>();
    (period, -slope)
}

/// Checks an under-damped oscillation of `hertz` and `zeta` (see the module docs).
fn assert_oscillates(what: &str, d: &[f64], hertz: f64, zeta: f64) {
    let omega = std::f64::consts::TAU * hertz;
    let omega_d = omega * (1.0 - zeta * zeta).sqrt();
    let (decay, decay_h) = (
        zeta * omega,
        ((1.0 + zeta * omega * H).powi(2) + (omega_d * H).powi(2)).ln() / (2.0 * H),
    );
    let omega_h = (omega_d * H / (1.0 + zeta * omega * H)).atan() / H;
    let (period, period_h) = (
        std::f64::consts::TAU / omega_d,
        std::f64::consts::TAU / omega_h,
    );
    let (measured_period, measured_decay) = measure(d);
    println!(
        "{what}: period {measured_period:.5} s (continuous {period:.5}, backward Euler \
         {period_h:.5}), decay {measured_decay:.4} 1/s (continuous {decay:.4}, backward Euler \
         {decay_h:.4})"
    );
    let within =
        |x: f64, a: f64, b: f64, margin: f64| x >= a.min(b) - margin && x <= a.max(b) + margin;
    assert!(
        within(measured_period, period, period_h, 1e-4),
        "{what}: period {measured_period} s, expected {period} s (backward Euler {period_h} s)"
    );
    assert!(
        within(measured_decay, decay, decay_h, 1e-3),
        "{what}: envelope decays at {measured_decay} 1/s, expected ζω = {decay} 1/s (backward \
         Euler {decay_h} 1/s)"
    );
}

/// Checks a critically damped release from `x0` (see the module docs): never past the rest
/// value, and between the continuous and the backward Euler solutions throughout, up to f32
/// round-off of unit coordinates over the run (1e-5).
fn assert_critically_damped(what: &str, d: &[f64], hertz: f64, x0: f64) {
    let omega = std::f64::consts::TAU * hertz;
    let z = 1.0 / (1.0 + omega * H);
    let mut lowest = f64::MAX;
    for (k, &x) in d.iter().enumerate() {
        let t = k as f64 * DT as f64;
        let continuous = x0 * (1.0 + omega * t) * (-omega * t).exp();
        let n = 4.0 * k as f64;
        let discrete = x0 * z.powf(n) * (1.0 + n * (1.0 - z));
        assert!(
            x >= continuous.min(discrete) - 1e-5 && x <= continuous.max(discrete) + 1e-5,
            "{what}: step {k}: {x}, continuous {continuous}, backward Euler {discrete}"
        );
        lowest = lowest.min(x);
    }
    println!("{what}: lowest {lowest:.3e} (released at {x0})");
    assert!(
        lowest >= -1e-5,
        "{what}: overshot the rest value to {lowest}"
    );
}

#[test]
fn distance_spring_oscillates_at_its_frequency_whatever_the_mass() {
    // The frequency is relative to the effective mass, so a light and a heavy ball swing
    // alike.
    for mass in [0.5, 40.0] {
        let d = release(Kind::Distance, JointSpring::new(1.0, 0.1), mass, 0.2, 5.0);
        assert_oscillates(&format!("distance spring, {mass} kg"), &d, 1.0, 0.1);
    }
}

#[test]
fn prismatic_spring_in_physical_units() {
    // 10 kg on k = m ω² and c = 2 ζ m ω for 1.5 Hz and ζ = 0.1.
    let (m, hertz, zeta) = (10.0_f32, 1.5_f32, 0.1_f32);
    let omega = 2.0 * PI * hertz;
    let spring = JointSpring::from_stiffness(m * omega * omega, 2.0 * zeta * m * omega);
    let d = release(Kind::Prismatic, spring, m, 0.2, 5.0);
    assert_oscillates("prismatic spring", &d, hertz as f64, zeta as f64);
}

#[test]
fn revolute_spring_oscillates_at_its_frequency() {
    let d = release(Kind::Revolute, JointSpring::new(1.0, 0.1), 3.0, 0.3, 5.0);
    assert_oscillates("revolute spring", &d, 1.0, 0.1);
}

#[test]
fn critically_damped_springs_do_not_overshoot() {
    for (kind, offset) in [
        (Kind::Distance, 0.2),
        (Kind::Prismatic, -0.2),
        (Kind::Revolute, 0.3),
    ] {
        let d = release(kind, JointSpring::new(1.0, 1.0), 2.0, offset, 3.0);
        // Mirrored so that the release is above the rest value.
        let d: Vec<f64> = d.iter().map(|x| x * offset.signum() as f64).collect();
        assert_critically_damped(&format!("{kind:?}"), &d, 1.0, offset.abs() as f64);
    }
}

/// A world without gravity holding a static anchor and the wheel: a ball of radius 0.5 m and
/// density 1000 at the origin ([`WHEEL_INERTIA`]); returns the app, the anchor and the wheel.
fn wheel_and_anchor() -> (App, Entity, Entity) {
    let mut app = app();
    no_gravity(&mut app);
    let anchor = static_anchor(&mut app);
    let wheel = spawn(
        &mut app,
        (
            RigidBody::Dynamic,
            Collider::sphere(0.5),
            Transform::default(),
            SleepingDisabled,
        ),
    );
    (app, anchor, wheel)
}

/// A ball (radius 0.5, 523.6 kg, I = 0.4 m r² = 52.4 kg·m²) on a hinge about Z through its
/// centre, gravity off, with `joint` built on the hinge; returns the app, ball and joint.
fn wheel(joint: impl FnOnce(RevoluteJoint) -> RevoluteJoint) -> (App, Entity, Entity) {
    let (mut app, anchor, wheel) = wheel_and_anchor();
    let hinge = RevoluteJoint::new(anchor, wheel).with_hinge_axis(Vec3::Z);
    let j = spawn(&mut app, joint(hinge));
    (app, wheel, j)
}

/// The wheel's moment of inertia about its axis, kg·m².
const WHEEL_INERTIA: f32 = 0.4 * (1000.0 * 4.0 / 3.0 * PI * 0.125) * 0.25;

/// A 10 kg ball on a slider along X, gravity off, with `joint` built on the slider.
fn slider(joint: impl FnOnce(PrismaticJoint) -> PrismaticJoint) -> (App, Entity) {
    let mut app = app();
    no_gravity(&mut app);
    let anchor = static_anchor(&mut app);
    let body = ball(&mut app, 10.0, Vec3::ZERO, 0.0);
    spawn(
        &mut app,
        joint(PrismaticJoint::new(anchor, body).with_slider_axis(Vec3::X)),
    );
    (app, body)
}

// Friction is a rigid row asking the coordinate not to move during the substep, its
// multiplier clamped to the friction: below the clamp it takes back exactly what the load
// moved in the substep (a single row on a body joined to a static one), so the body stays
// put up to f32 round-off; at the clamp every substep adds exactly (load − friction) h / I
// to the speed, so the speed is (load − friction) t / I up to round-off, within 1e-3
// relative (as the motor tests allow).

#[test]
fn hinge_friction_holds_a_smaller_torque_and_yields_to_a_larger_one() {
    let friction = 50.0;
    for torque in [30.0, 80.0] {
        let (mut app, wheel, joint) = wheel(|j| j.with_friction(friction));
        set(&mut app, wheel, ConstantTorque(Vec3::Z * torque));
        step(&mut app, 64);
        let t = 64.0 * DT;
        let w = angular_velocity(&app, wheel).z;
        let angle = hinge_angle(&app, wheel);
        let expected = (torque - friction).max(0.0) * t / WHEEL_INERTIA;
        let reported = joint_state::<RevoluteJoint>(&app, joint).torque();
        println!(
            "hinge friction {friction} N·m, torque {torque} N·m: ω = {w:.6} rad/s (expected \
             {expected:.6}), angle {angle:.3e} rad, joint torque {reported}"
        );
        if torque < friction {
            assert!(w.abs() <= 1e-5, "turning at {w} rad/s under {torque} N·m");
            assert!(
                angle.abs() <= 1e-5,
                "turned to {angle} rad under {torque} N·m"
            );
            assert!(
                (reported.z + torque).abs() <= 1e-3 * torque,
                "torque {reported}"
            );
        } else {
            assert!(
                (w / expected - 1.0).abs() <= 1e-3,
                "ω = {w} rad/s, (τ − T) t / I = {expected}"
            );
            assert!(
                (reported.z + friction).abs() <= 1e-3 * friction,
                "torque {reported}"
            );
        }
    }
}

/// The same ball on a spherical joint at its centre, friction isotropic: a torque about a
/// tilted axis is held below the friction and turns the ball about that same axis at
/// (τ − T) t / I above it; a spin about another axis runs down at T / I to rest.
#[test]
fn ball_joint_friction_holds_yields_and_stops_a_spin_about_any_axis() {
    let friction = 50.0;
    let ball_joint = || {
        let (mut app, anchor, ball) = wheel_and_anchor();
        let joint = spawn(
            &mut app,
            SphericalJoint::new(anchor, ball).with_friction(friction),
        );
        (app, ball, joint)
    };
    let axis = Vec3::new(1.0, 2.0, 2.0) / 3.0;
    for torque in [30.0, 80.0] {
        let (mut app, ball, joint) = ball_joint();
        set(&mut app, ball, ConstantTorque(axis * torque));
        step(&mut app, 64);
        let w = angular_velocity(&app, ball);
        let turned = rotation(&app, ball).angle_between(Quat::IDENTITY);
        let expected = (torque - friction).max(0.0) * 64.0 * DT / WHEEL_INERTIA;
        let reported = joint_state::<SphericalJoint>(&app, joint).torque();
        println!(
            "ball-joint friction {friction} N·m, torque {torque} N·m about {axis}: ω = {w} \
             (|ω| expected {expected:.6}), turned {turned:.3e} rad, joint torque {reported}"
        );
        if torque < friction {
            assert!(
                w.length() <= 1e-5,
                "turning at {w} rad/s under {torque} N·m"
            );
            assert!(turned <= 1e-5, "turned {turned} rad under {torque} N·m");
            assert!(
                (reported + axis * torque).length() <= 1e-3 * torque,
                "torque {reported}"
            );
        } else {
            assert!(
                (w.length() / expected - 1.0).abs() <= 1e-3,
                "|ω| = {} rad/s, (τ − T) t / I = {expected}",
                w.length()
            );
            assert!(
                w.normalize().angle_between(axis) <= 1e-3,
                "turns about {w}, torque about {axis}"
            );
            assert!(
                (reported + axis * friction).length() <= 1e-3 * friction,
                "torque {reported}"
            );
        }
    }
    // A spin of 3 rad/s about (2, −1, 2)/3 runs down at T / I = 0.955 rad/s² and stops
    // after 3.14 s; after 2 s it is 3 − 2 T / I.
    let (mut app, ball, _) = ball_joint();
    let spin = Vec3::new(2.0, -1.0, 2.0);
    set(&mut app, ball, AngularVelocity(spin));
    step(&mut app, 128);
    let w = angular_velocity(&app, ball);
    let expected = 3.0 - friction * 128.0 * DT / WHEEL_INERTIA;
    println!("ball-joint spin after 2 s: {w}, |ω| expected {expected}");
    assert!(
        (w.length() / expected - 1.0).abs() <= 1e-3,
        "|ω| = {} after 2 s, 3 − T t / I = {expected}",
        w.length()
    );
    assert!(
        w.normalize().angle_between(spin) <= 1e-3,
        "spins about {w}, started about {spin}"
    );
    step(&mut app, 128);
    let w = angular_velocity(&app, ball);
    assert!(w.length() <= 1e-5, "still turning at {w} rad/s after 4 s");
}

#[test]
fn slider_friction_holds_a_smaller_force_and_yields_to_a_larger_one() {
    let friction = 20.0;
    for force in [15.0, 50.0] {
        let (mut app, body) = slider(|j| j.with_friction(friction));
        set(&mut app, body, ConstantForce(Vec3::X * force));
        step(&mut app, 64);
        let t = 64.0 * DT;
        let v = velocity(&app, body).x;
        let x = position(&app, body).x;
        let expected = (force - friction).max(0.0) * t / 10.0;
        println!(
            "slider friction {friction} N, force {force} N: v = {v:.6} m/s (expected \
             {expected:.6}), x = {x:.3e} m"
        );
        if force < friction {
            assert!(v.abs() <= 1e-5, "sliding at {v} m/s under {force} N");
            assert!(x.abs() <= 1e-5, "slid to {x} m under {force} N");
        } else {
            assert!(
                (v / expected - 1.0).abs() <= 1e-3,
                "v = {v} m/s, (F − f) t / m = {expected}"
            );
        }
    }
}

// A motor with friction: each at its force limit, the difference drives the joint; a motor
// stronger than the friction then holds its target speed exactly, a weaker one stalls (the
// friction row takes back its push in full). With the default 4 passes per substep and with
// one (what a joint with a body on a contact gets): solved before and after the friction,
// the motor reaches that split in a single pass too. Round-off only, 1e-3 relative as in the
// motor tests, 1e-5 for standing still.

#[test]
fn a_hinge_motor_works_against_the_friction() {
    let (friction, target) = (40.0, 2.0);
    for (passes, max_torque) in [(4, 100.0), (1, 100.0), (4, 30.0), (1, 30.0)] {
        let (mut app, wheel, _) = wheel(|j| {
            j.with_friction(friction)
                .with_motor(JointMotor::velocity(target, max_torque))
        });
        app.insert_resource(XpbdIterations(passes));
        step(&mut app, 32);
        let t = 32.0 * DT;
        let w = angular_velocity(&app, wheel).z;
        let expected = (max_torque - friction).max(0.0) * t / WHEEL_INERTIA;
        let what = format!("motor {max_torque} N·m, friction {friction} N·m, {passes} passes");
        println!("{what}: ω({t} s) = {w:.6}");
        if max_torque < friction {
            assert!(
                w.abs() <= 1e-5,
                "{what}: a stalled motor turns at {w} rad/s"
            );
            continue;
        }
        assert!(
            (w / expected - 1.0).abs() <= 1e-3,
            "{what}: ω = {w} rad/s, (τ − T) t / I = {expected}"
        );
        // (τ − T) / I = 1.15 rad/s², so 2 rad/s is reached by 1.8 s.
        step(&mut app, 128);
        let w = angular_velocity(&app, wheel).z;
        assert!(
            (w - target).abs() <= 1e-3 * target,
            "{what}: ω = {w}, target {target}"
        );
    }
}

#[test]
fn a_slider_motor_works_against_the_friction() {
    let (friction, target) = (20.0, 1.0);
    for (passes, max_force) in [(4, 50.0), (1, 50.0), (4, 15.0), (1, 15.0)] {
        let (mut app, body) = slider(|j| {
            j.with_friction(friction)
                .with_motor(JointMotor::velocity(target, max_force))
        });
        app.insert_resource(XpbdIterations(passes));
        step(&mut app, 16);
        let t = 16.0 * DT;
        let v = velocity(&app, body).x;
        let expected = (max_force - friction).max(0.0) * t / 10.0;
        let what = format!("motor {max_force} N, friction {friction} N, {passes} passes");
        println!("{what}: v({t} s) = {v:.6}");
        if max_force < friction {
            assert!(v.abs() <= 1e-5, "{what}: a stalled motor slides at {v} m/s");
            continue;
        }
        assert!(
            (v / expected - 1.0).abs() <= 1e-3,
            "{what}: v = {v} m/s, (F − f) t / m = {expected}"
        );
        // (F − f) / m = 3 m/s², so 1 m/s is reached by 0.33 s.
        step(&mut app, 64);
        let v = velocity(&app, body).x;
        assert!(
            (v - target).abs() <= 1e-3 * target,
            "{what}: v = {v}, target {target}"
        );
    }
}

/// A wheel driven at 4 rad/s by a motor of at most 200 N·m, with `joint` built on the hinge.
fn driven_wheel(joint: impl FnOnce(RevoluteJoint) -> RevoluteJoint) -> (App, Entity, Entity) {
    wheel(|j| joint(j.with_motor(JointMotor::velocity(4.0, 200.0))))
}

#[test]
fn multi_turn_limits_stop_the_hinge_after_one_and_a_half_turns() {
    let max = 3.0 * PI;
    let (mut app, wheel, joint) = driven_wheel(|j| j.with_angle_limits(-max, max));
    // The test's own count of the turns: the pose's angle plus the whole turns that bring it
    // nearest to the last count (so round-off does not build up from step to step).
    let mut turned = 0.0_f32;
    let mut furthest = 0.0_f32;
    // Spin-up takes I ω / τ ≈ 1 s (2 rad), then 7.4 rad at 4 rad/s: at the limit by 3 s.
    for _ in 0..(5.0 / DT) as usize {
        step(&mut app, 1);
        let change = hinge_angle(&app, wheel) - turned;
        turned += change - 2.0 * PI * (change / (2.0 * PI)).round();
        furthest = furthest.max(turned);
        let reported = joint_state::<RevoluteJoint>(&app, joint).angle();
        // The joint's angle is the pose's, counting turns: round-off of a 10 rad angle.
        assert!(
            (reported - turned).abs() <= 1e-4,
            "joint angle {reported}, pose turned {turned}"
        );
    }
    let reported = joint_state::<RevoluteJoint>(&app, joint).angle();
    let w = angular_velocity(&app, wheel).z;
    println!(
        "multi-turn limit ±3π: turned {turned:.5} rad (furthest {furthest:.5}), joint angle \
         {reported:.5}, ω = {w:.2e}"
    );
    // At the limit the motor's clamped push of at most τ h² / I = 6e-5 rad per substep is
    // taken back by the limit in the next pass, and the limit is projected exactly: f32
    // round-off of a 9.4 rad angle, plus that push; 1e-3 rad is generous.
    assert!(
        (turned - max).abs() <= 1e-3 && (reported - max).abs() <= 1e-3,
        "stopped at {turned} rad (joint says {reported}), limit {max}"
    );
    assert!(furthest <= max + 1e-3, "went past the limit to {furthest}");
    assert!(w.abs() <= 1e-3, "still turning at {w} rad/s");
}

#[test]
fn the_hinge_angle_counts_turns_across_a_snapshot() {
    let (mut app, _, joint) = driven_wheel(|j| j);
    let angle = |app: &App| joint_state::<RevoluteJoint>(app, joint).angle();
    // 2 s: over a turn (2 rad of spin-up and 4 rad at 4 rad/s).
    step(&mut app, 128);
    let at_capture = angle(&app);
    assert!(at_capture > 1.5 * PI, "angle {at_capture} at the capture");
    let snapshot = PhysicsSnapshot::capture(app.world_mut());
    step(&mut app, 64);
    let later = angle(&app);
    snapshot.restore(app.world_mut());
    let restored = angle(&app);
    step(&mut app, 64);
    let again = angle(&app);
    println!(
        "snapshot: angle {at_capture:.5} at the capture, {later:.5} a second later, \
         {restored:.5} restored, {again:.5} a second after the restore"
    );
    // Restored to the bit, and the steps after it repeat those after the capture.
    assert_eq!(restored.to_bits(), at_capture.to_bits());
    assert_eq!(again.to_bits(), later.to_bits());
    assert!(again > 2.0 * PI + 1.0, "angle {again} after another second");
}

#[cfg(feature = "serialize")]
#[test]
fn springs_friction_and_turns_survive_a_saved_level() {
    let (mut app, _, joint) = driven_wheel(|j| {
        j.with_spring(JointSpring::new(0.2, 0.5).with_rest(9.0))
            .with_friction(5.0)
    });
    step(&mut app, 128);
    let saved = joint_state::<RevoluteJoint>(&app, joint);
    assert!(saved.angle() > PI, "angle {}", saved.angle());
    let text = common::level::save(&app);
    let mut other = impetus3d::headless_app(DT as f64);
    let map = common::level::load_into(&mut other, &text).expect("the level loads");
    let loaded = joint_state::<RevoluteJoint>(&other, map[&joint]);
    assert_eq!(loaded.angle().to_bits(), saved.angle().to_bits());
    assert_eq!(loaded.spring(), saved.spring());
    assert_eq!(loaded.friction(), saved.friction());
}

#[test]
fn bad_springs_and_friction_are_reported_and_fall_back() {
    let ((mut app, joints), warnings) = capture_warnings(|| {
        let mut app = app();
        no_gravity(&mut app);
        let anchor = static_anchor(&mut app);
        let mut body = |x: f32| ball(&mut app, 1.0, Vec3::new(x, 1.0, 0.0), 0.0);
        let (a, b, c) = (body(0.0), body(3.0), body(6.0));
        let hinge = spawn(
            &mut app,
            RevoluteJoint::new(anchor, a)
                .with_spring(JointSpring::new(f32::NAN, -1.0))
                .with_friction(f32::NAN),
        );
        let slide = spawn(
            &mut app,
            PrismaticJoint::new(anchor, b)
                .with_spring(JointSpring::from_stiffness(10.0, 1.0).with_rest(f32::INFINITY))
                .with_friction(-3.0),
        );
        let rope = spawn(
            &mut app,
            DistanceJoint::new(anchor, c).with_spring(JointSpring::new(2.0, 0.5).with_rest(-1.0)),
        );
        step(&mut app, 10);
        (app, [hinge, slide, rope])
    });
    println!("{warnings:#?}");
    for (joint, shown) in joints.iter().zip(["NaN", "inf", "-1"]) {
        let named: Vec<&String> = warnings
            .iter()
            .filter(|w| w.starts_with(&format!("{joint}:")))
            .collect();
        assert_eq!(named.len(), 1, "warnings naming {joint}: {warnings:?}");
        assert!(named[0].contains(shown), "{}", named[0]);
    }
    let hinge = joint_state::<RevoluteJoint>(&app, joints[0]);
    assert_eq!(hinge.spring(), Some(JointSpring::new(0.0, 0.0)));
    assert_eq!(hinge.friction(), Some(0.0));
    let slide = joint_state::<PrismaticJoint>(&app, joints[1]);
    assert_eq!(slide.spring(), None);
    assert_eq!(slide.friction(), Some(0.0));
    let rope = joint_state::<DistanceJoint>(&app, joints[2]);
    assert_eq!(rope.spring(), Some(JointSpring::new(2.0, 0.5)));
    assert!(all_bodies_finite(&mut app));
}
