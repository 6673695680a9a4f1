//! Swept CCD: 1 cm bullets (spheres of radius 5 mm, 10 g) at 400 m/s against a static wall
//! 1 cm thick, with and without `SweptCcd`.
//!
//! At 400 m/s a bullet moves 6.25 m per 1/64 s step, 625 times the wall's thickness. Two ways
//! of firing are shown:
//!
//! - spawned with its `LinearVelocity`: the broad phase sees the velocity before the step, so
//!   speculative contacts alone find the wall up to 6.25 m ahead and stop the bullet on the
//!   near face; `SweptCcd` changes nothing;
//! - fired by an `ExternalImpulse` from rest: the impulse is applied after the broad phase has
//!   sized the speculative margin from the (zero) velocity, so without `SweptCcd` the bullet
//!   goes straight through in its first step; the sweep, which runs on the step's actual
//!   motion, stops it on the near face.
//!
//! Each case fires eight bullets from distances spread over one step's travel, and prints where
//! each ends after half a second: `near side` means touching the wall's near face.
//!
//! Headless; run it with:
//!
//! ```text
//! cargo run --example bullet
//! ```

use bevy::prelude::*;
use impetus3d::prelude::*;

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;
/// Bullet speed, m/s.
const SPEED: f32 = 400.0;
/// Bullet radius (1 cm diameter), m.
const RADIUS: f32 = 0.005;
/// Bullet mass, kg.
const MASS: f32 = 0.01;
/// Wall thickness, m; the wall is centred on x = 0.
const WALL: f32 = 0.01;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Fire {
    Velocity,
    Impulse,
}

fn main() {
    let travel = SPEED * DT as f32;
    let touching = -0.5 * WALL - RADIUS;
    println!(
        "bullets of radius {RADIUS} m at {SPEED} m/s ({travel} m per step) against a {WALL} m wall \
         (near face at x = {}, bullet touching it at x = {touching})",
        -0.5 * WALL
    );
    for fire in [Fire::Velocity, Fire::Impulse] {
        for swept in [false, true] {
            let ends = shoot(fire, swept, touching, travel);
            let label = if swept { "with SweptCcd" } else { "without" };
            println!("\nfired by {fire:?}, {label}:");
            for (start, end) in ends {
                let where_ = if end > 0.5 * WALL {
                    "THROUGH the wall"
                } else if (end - touching).abs() < 1e-3 {
                    "near side, touching"
                } else {
                    "near side"
                };
                println!("  from x = {start:8.3} -> ends at x = {end:9.4}  ({where_})");
            }
        }
    }
}

/// Fires eight bullets in separate worlds (so they cannot hit each other) and returns each
/// one's start and end x after 0.5 s.
fn shoot(fire: Fire, swept: bool, touching: f32, travel: f32) -> Vec<(f32, f32)> {
    (0..8)
        .map(|i| {
            let start = touching - 0.05 - i as f32 * travel / 8.0;
            let mut app = impetus3d::headless_app(DT);
            app.world_mut().spawn((
                RigidBody::Static,
                Collider::cuboid(WALL, 4.0, 4.0),
                Transform::default(),
            ));
            let mut bullet = app.world_mut().spawn((
                RigidBody::Dynamic,
                Collider::sphere(RADIUS),
                Mass(MASS),
                Transform::from_xyz(start, 0.0, 0.0),
                GravityScale(0.0),
            ));
            match fire {
                Fire::Velocity => bullet.insert(LinearVelocity(Vec3::X * SPEED)),
                Fire::Impulse => bullet.insert(ExternalImpulse::new(Vec3::X * SPEED * MASS)),
            };
            if swept {
                bullet.insert(SweptCcd::default());
            }
            let bullet = bullet.id();
            for _ in 0..32 {
                app.update();
            }
            (start, app.world().get::<Position>(bullet).unwrap().x)
        })
        .collect()
}
