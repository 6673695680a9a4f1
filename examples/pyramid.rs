//! A pyramid of 210 unit cubes (a base of 20) standing on a static ground, simulated headless
//! for 10 s at the default 1/64 s step.
//!
//! Once per simulated second it prints the average wall-clock time of a physics step over that
//! second, how many cubes are awake (not [`Sleeping`]), how many collider pairs are touching,
//! and how far the top cube has drifted from where it was spawned.
//!
//! The top cube sinks while the soft contacts below it compress under the pyramid's weight:
//! at the default 40 Hz contact stiffness a contact compresses by about `g / ω²` = 0.16 mm per
//! cube weight it carries, which adds up to about 1.5 cm at the top of this pyramid. After that it
//! should stay put, and the whole pyramid should fall asleep half a second after coming to
//! rest.
//!
//! Run it with optimisations, since the timings are the point:
//!
//! ```text
//! cargo run --release --example pyramid
//! ```

use std::time::{Duration, Instant};

use bevy::ecs::system::SystemState;
use bevy::prelude::*;
use impetus3d::prelude::*;

/// Cubes in the bottom row.
const BASE: usize = 20;
/// Side length of a cube, m.
const SIZE: f32 = 1.0;
/// Horizontal gap between neighbouring cubes in a row, m. Exactly touching stands best: with
/// gaps of 1 to 50 mm the rows spread as they settle and the top cube drifts 1.5 to 6.5 mm
/// further.
const GAP: f32 = 0.0;
/// Physics step, s.
const DT: f64 = 1.0 / 64.0;
/// Simulated time, s.
const SECONDS: usize = 10;

fn main() {
    let mut app = impetus3d::headless_app(DT);

    // A static ground whose top face is at y = 0.
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::cuboid(100.0, 1.0, 100.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));

    // Row `i` (from the bottom) has `BASE - i` cubes, centred on x = 0 so the pyramid is
    // symmetric, each resting exactly on the two cubes below it.
    let mut top = None;
    let mut top_spawn = Vec3::ZERO;
    for row in 0..BASE {
        let count = BASE - row;
        let y = SIZE * (0.5 + row as f32);
        for i in 0..count {
            let x = (i as f32 - 0.5 * (count - 1) as f32) * (SIZE + GAP);
            let position = Vec3::new(x, y, 0.0);
            let cube = app
                .world_mut()
                .spawn((
                    RigidBody::Dynamic,
                    Collider::cuboid(SIZE, SIZE, SIZE),
                    Transform::from_translation(position),
                ))
                .id();
            top = Some(cube);
            top_spawn = position;
        }
    }
    let top = top.expect("the pyramid has at least one cube");
    let cubes = BASE * (BASE + 1) / 2;

    println!(
        "pyramid: {cubes} cubes, base {BASE}, step {:.4} s, {} substeps",
        DT,
        app.world().resource::<SubstepCount>().0
    );
    println!(
        "{:>4}  {:>12}  {:>6}  {:>9}  {:>14}",
        "t/s", "ms/step", "awake", "contacts", "top drift/mm"
    );

    let steps_per_second = (1.0 / DT).round() as usize;
    let mut awake_query = app
        .world_mut()
        .query_filtered::<&RigidBody, Without<Sleeping>>();
    let mut collisions = SystemState::<Collisions>::new(app.world_mut());
    let mut total = Duration::ZERO;
    let mut worst_drift: f32 = 0.0;
    let mut drift = 0.0;
    for second in 1..=SECONDS {
        let start = Instant::now();
        for _ in 0..steps_per_second {
            app.update();
        }
        let elapsed = start.elapsed();
        total += elapsed;

        let world = app.world_mut();
        let awake = awake_query.iter(world).filter(|rb| rb.is_dynamic()).count();
        let contacts = collisions
            .get(world)
            .expect("the physics plugin is added")
            .len();
        drift = (world.get::<Position>(top).expect("top cube").0 - top_spawn).length() * 1000.0;
        worst_drift = worst_drift.max(drift);
        println!(
            "{second:>4}  {:>12.3}  {awake:>6}  {contacts:>9}  {drift:>14.2}",
            elapsed.as_secs_f64() * 1000.0 / steps_per_second as f64,
        );
    }

    let steps = SECONDS * steps_per_second;
    println!(
        "summary: {steps} steps in {:.2} s ({:.3} ms/step), top cube drift {drift:.2} mm at the \
         end ({worst_drift:.2} mm at worst)",
        total.as_secs_f64(),
        total.as_secs_f64() * 1000.0 / steps as f64,
    );
}
