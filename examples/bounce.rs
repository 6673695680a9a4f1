//! Restitution: three balls with restitution 0, 0.5 and 1 are dropped from 5 m onto a static
//! floor (whose restitution is 0; the larger coefficient wins by default).
//!
//! For each ball it prints the height of the ball's bottom at every apex after a bounce, and
//! the ratio of each apex to the one before. With restitution `e` a bounce keeps a fraction
//! `e` of the speed, so each apex should be `e²` times the previous one. Bounces that hit the
//! floor slower than `SolverConfig::restitution_threshold` (1 m/s) do not bounce at all.
//!
//! Restitution is applied once per step, to the approach speed the contact had at the start of
//! the step, so a ball loses the speed gravity added between the start of the step and the
//! impact: expect the ratios a few per cent under `e²`, more for slow impacts.
//!
//! Headless; run it with:
//!
//! ```text
//! cargo run --example bounce
//! ```

use bevy::prelude::*;
use impetus3d::prelude::*;

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;
/// Simulated time, s.
const SECONDS: f64 = 10.0;
/// Ball radius, m.
const RADIUS: f32 = 0.5;
/// Drop height of the ball's bottom above the floor, m.
const DROP: f32 = 5.0;

struct Ball {
    entity: Entity,
    restitution: f32,
    /// True while the ball rises after a bounce.
    rising: bool,
    /// Height of the ball's bottom at each apex, starting with the drop height.
    apexes: Vec<f32>,
}

fn main() {
    let mut app = impetus3d::headless_app(DT);

    // A static floor whose top face is at y = 0.
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::cuboid(20.0, 1.0, 20.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));

    let mut balls: Vec<Ball> = [0.0, 0.5, 1.0]
        .into_iter()
        .enumerate()
        .map(|(i, restitution)| {
            let entity = app
                .world_mut()
                .spawn((
                    RigidBody::Dynamic,
                    Collider::sphere(RADIUS),
                    Restitution::new(restitution),
                    Transform::from_xyz(3.0 * (i as f32 - 1.0), DROP + RADIUS, 0.0),
                ))
                .id();
            Ball {
                entity,
                restitution,
                rising: false,
                apexes: vec![DROP],
            }
        })
        .collect();

    let g = app.world().resource::<Gravity>().0.y.abs();
    for _ in 0..(SECONDS / DT).round() as usize {
        app.update();
        for ball in &mut balls {
            let world = app.world();
            let y = world.get::<Position>(ball.entity).expect("ball").0.y - RADIUS;
            let vy = world.get::<LinearVelocity>(ball.entity).expect("ball").0.y;
            // Rising clear of the floor (not a resting ball's jitter): a bounce is in flight.
            if vy > 0.0 && y > 1e-3 {
                ball.rising = true;
            }
            // Rising at the previous step, falling now: the apex was inside this step, and the
            // ball is in free flight, so extrapolate back up to it.
            if ball.rising && vy <= 0.0 {
                ball.apexes.push(y + vy * vy / (2.0 * g));
                ball.rising = false;
            }
        }
    }

    println!("drop height {DROP} m (bottom of the ball), {SECONDS} s simulated");
    for ball in &balls {
        let e2 = ball.restitution * ball.restitution;
        println!(
            "restitution {:.1}: {} bounce(s), expected apex ratio e² = {e2:.3}",
            ball.restitution,
            ball.apexes.len() - 1
        );
        for (n, pair) in ball.apexes.windows(2).enumerate() {
            println!(
                "  bounce {:>2}: apex {:>7.4} m, ratio to previous {:.3} (expected {:.3} m)",
                n + 1,
                pair[1],
                pair[1] / pair[0],
                pair[0] * e2,
            );
        }
        let world = app.world();
        let bottom = world.get::<Position>(ball.entity).expect("ball").0.y - RADIUS;
        let vy = world.get::<LinearVelocity>(ball.entity).expect("ball").0.y;
        println!("  after {SECONDS} s: bottom at {bottom:.4} m, vertical speed {vy:.3} m/s");
    }
}
