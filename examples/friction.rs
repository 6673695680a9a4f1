//! Coulomb friction: unit cubes with friction coefficients from 0 to 1 are set down at rest on
//! a 30° static incline.
//!
//! A block on an incline of angle θ slides when μ < tan θ (0.577 at 30°), with acceleration
//! `g (sin θ − μ cos θ)` down the slope; otherwise it stays put. The example prints, for each
//! μ, whether the cube slid, its measured acceleration along the slope, and the expected one.
//!
//! The incline's friction is 1 and the cubes use [`CoefficientCombine::Min`], so each pair's
//! coefficient is exactly the cube's.
//!
//! Headless; run it with:
//!
//! ```text
//! cargo run --example friction
//! ```

// Examples build their scenes with platform math (`sin`, `Quat::from_rotation_y`); the rule
// against it (`clippy.toml`) guards the engine's step.
#![allow(clippy::disallowed_methods)]

use bevy::prelude::*;
use impetus3d::prelude::*;

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;
/// Slope angle, degrees.
const ANGLE_DEG: f32 = 30.0;
/// Friction coefficients of the cubes.
const MUS: [f32; 8] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 1.0];
/// The acceleration is measured between these two times, s, after the contacts have settled.
const T0: f64 = 0.25;
const T1: f64 = 1.5;

fn main() {
    let mut app = impetus3d::headless_app(DT);

    let theta = ANGLE_DEG.to_radians();
    // The incline rises towards +x; its top face passes through the origin.
    let slope_rotation = Quat::from_rotation_z(theta);
    let normal = slope_rotation * Vec3::Y;
    let down_slope = slope_rotation * Vec3::NEG_X;
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::cuboid(60.0, 1.0, 2.0 * MUS.len() as f32 + 2.0),
        Friction::new(1.0),
        Transform::from_translation(-0.5 * normal).with_rotation(slope_rotation),
    ));

    // Each cube rests on the slope, 10 m up it, in a lane of its own along z.
    let cubes: Vec<(f32, Entity)> = MUS
        .iter()
        .enumerate()
        .map(|(i, &mu)| {
            let z = 2.0 * (i as f32 - 0.5 * (MUS.len() - 1) as f32);
            let position = 0.5 * normal - 10.0 * down_slope + Vec3::new(0.0, 0.0, z);
            let cube = app
                .world_mut()
                .spawn((
                    RigidBody::Dynamic,
                    Collider::cuboid(1.0, 1.0, 1.0),
                    Friction::new(mu).with_combine_rule(CoefficientCombine::Min),
                    Transform::from_translation(position).with_rotation(slope_rotation),
                ))
                .id();
            (mu, cube)
        })
        .collect();

    // Distance along the slope and speed along it, per cube.
    let along = |app: &App, e: Entity| {
        let world = app.world();
        (
            world.get::<Position>(e).expect("cube").0.dot(down_slope),
            world
                .get::<LinearVelocity>(e)
                .expect("cube")
                .0
                .dot(down_slope),
        )
    };
    let start: Vec<(f32, f32)> = {
        app.update();
        cubes.iter().map(|&(_, e)| along(&app, e)).collect()
    };
    let steps = |t: f64| (t / DT).round() as usize;
    for _ in 1..steps(T0) {
        app.update();
    }
    let at_t0: Vec<(f32, f32)> = cubes.iter().map(|&(_, e)| along(&app, e)).collect();
    for _ in steps(T0)..steps(T1) {
        app.update();
    }
    let at_t1: Vec<(f32, f32)> = cubes.iter().map(|&(_, e)| along(&app, e)).collect();

    let g = app.world().resource::<Gravity>().0.length();
    println!(
        "incline {ANGLE_DEG}°, tan θ = {:.3}; acceleration measured from {T0} s to {T1} s",
        theta.tan()
    );
    println!(
        "{:>5}  {:>8}  {:>10}  {:>14}  {:>14}",
        "μ", "slides?", "moved/m", "a/(m/s²)", "expected"
    );
    for (i, &(mu, _)) in cubes.iter().enumerate() {
        let moved = at_t1[i].0 - start[i].0;
        let measured = (at_t1[i].1 - at_t0[i].1) / (T1 - T0) as f32;
        let expected = (g * (theta.sin() - mu * theta.cos())).max(0.0);
        // Still moving down the slope at the end (faster than 1 cm/s)?
        let slides = if at_t1[i].1 > 0.01 { "yes" } else { "no" };
        println!("{mu:>5.2}  {slides:>8}  {moved:>10.4}  {measured:>14.4}  {expected:>14.4}");
    }
}
