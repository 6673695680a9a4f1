//! A kinematic paddle pushing boxes: the paddle moves only by the velocity it is given, pushes
//! the dynamic boxes in its way, and is never pushed back.
//!
//! The paddle (a thin wall across the floor) moves along +x at 2 m/s for 2.5 s, then is
//! stopped by setting its velocity to zero. In front of it stand three single cubes and a row
//! of two cubes one behind the other. The example prints the paddle's front face and the
//! boxes' x positions every quarter second: while pushed, the boxes' back faces ride on the
//! paddle's front face at its speed; once it stops they slide on and friction (μ = 0.5, so a
//! deceleration of 4.9 m/s²) stops them about 0.4 m further on.
//!
//! Headless; run it with:
//!
//! ```text
//! cargo run --example kinematic
//! ```

use bevy::prelude::*;
use impetus3d::prelude::*;

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;
/// Paddle speed, m/s.
const SPEED: f32 = 2.0;
/// When the paddle stops, s.
const STOP: f64 = 2.5;
/// Simulated time, s.
const SECONDS: f64 = 3.5;
/// Paddle thickness along x, m.
const PADDLE: f32 = 0.2;

fn main() {
    let mut app = impetus3d::headless_app(DT);

    // A static floor whose top face is at y = 0.
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::cuboid(40.0, 1.0, 20.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));

    // The paddle floats 1 cm above the floor (kinematic bodies do not collide with static
    // ones, but this keeps the picture clean) and starts 1 m behind the first boxes.
    let paddle = app
        .world_mut()
        .spawn((
            RigidBody::Kinematic,
            Collider::cuboid(PADDLE, 1.0, 8.0),
            Transform::from_xyz(-1.5 - 0.5 * PADDLE, 0.51, 0.0),
            LinearVelocity(Vec3::new(SPEED, 0.0, 0.0)),
        ))
        .id();

    // Three single cubes across the paddle, and behind the middle lane a second cube 0.5 m
    // further on, which the first one reaches and pushes.
    let boxes: Vec<(&str, Entity)> = [
        ("left", Vec3::new(0.0, 0.5, -2.5)),
        ("middle", Vec3::new(0.0, 0.5, 0.0)),
        ("right", Vec3::new(0.0, 0.5, 2.5)),
        ("middle, 2nd", Vec3::new(1.5, 0.5, 0.0)),
    ]
    .into_iter()
    .map(|(name, position)| {
        let entity = app
            .world_mut()
            .spawn((
                RigidBody::Dynamic,
                Collider::cuboid(1.0, 1.0, 1.0),
                Transform::from_translation(position),
            ))
            .id();
        (name, entity)
    })
    .collect();

    let x = |app: &App, e: Entity| app.world().get::<Position>(e).expect("body").0.x;
    print!("{:>5}  {:>13}", "t/s", "paddle front");
    for (name, _) in &boxes {
        print!("  {name:>11}");
    }
    println!("   (x in m; box rows are centres)");

    let steps = (SECONDS / DT).round() as usize;
    let report_every = (0.25 / DT).round() as usize;
    for step in 1..=steps {
        if step == (STOP / DT).round() as usize + 1 {
            app.world_mut()
                .get_mut::<LinearVelocity>(paddle)
                .expect("paddle")
                .0 = Vec3::ZERO;
        }
        app.update();
        if step % report_every == 0 {
            print!(
                "{:>5.2}  {:>13.3}",
                step as f64 * DT,
                x(&app, paddle) + 0.5 * PADDLE
            );
            for &(_, e) in &boxes {
                print!("  {:>11.3}", x(&app, e));
            }
            println!();
        }
    }

    let front = x(&app, paddle) + 0.5 * PADDLE;
    println!(
        "paddle front stopped at {front:.3} m (expected {:.3} m)",
        -1.5 + SPEED * STOP as f32
    );
    for &(name, e) in &boxes {
        let y = app.world().get::<Position>(e).expect("box").0.y;
        println!(
            "{name:>11}: back face {:.3} m ahead of the paddle, centre height {y:.4} m",
            x(&app, e) - 0.5 - front
        );
    }
}
