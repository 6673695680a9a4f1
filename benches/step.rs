//! Time per physics step on two scenes, stepped headless exactly as the tests do (one
//! `app.update()` = one 1/64 s step with the default 4 substeps).
//!
//! - `pyramid/base_20`: a pyramid of 210 unit cubes on a static ground, measured while it
//!   settles and stands.
//! - `pile/4096_cubes`: a 16 × 16 × 16 grid of unit cubes dropped onto the ground, measured
//!   from its 60th step on, as the bottom layers land and the pile collapses.
//!
//! Every cube has [`SleepingDisabled`]: a resting pyramid would otherwise fall asleep and its
//! steps would cost almost nothing, and the point here is the broad phase, narrow phase and
//! solver work of an awake scene.
//!
//! The scene keeps evolving across criterion's iterations (there is no cheap way to reset an
//! app), so each figure is the average over the steps the measurement happened to cover.
//!
//! ```text
//! cargo bench --bench step
//! ```

use std::hint::black_box;
use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use criterion::{Criterion, criterion_group, criterion_main};
use impetus3d::prelude::*;

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;

/// A headless app in which every further `update` is one physics step, with a static ground
/// whose top face is at y = 0.
fn app() -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, PhysicsPlugin::default()))
        .insert_resource(Time::<Fixed>::from_seconds(DT))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            DT,
        )));
    app.update();
    app.world_mut().spawn((
        RigidBody::Static,
        Collider::cuboid(200.0, 1.0, 200.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));
    app
}

/// A unit cube that never sleeps.
fn cube(position: Vec3) -> impl Bundle {
    (
        RigidBody::Dynamic,
        Collider::cuboid(1.0, 1.0, 1.0),
        SleepingDisabled,
        Transform::from_translation(position),
    )
}

/// A pyramid with `base` cubes in the bottom row, symmetric about x = 0, cubes exactly
/// touching.
fn pyramid(base: usize) -> App {
    let mut app = app();
    for row in 0..base {
        let count = base - row;
        for i in 0..count {
            let x = i as f32 - 0.5 * (count - 1) as f32;
            app.world_mut()
                .spawn(cube(Vec3::new(x, 0.5 + row as f32, 0.0)));
        }
    }
    app
}

/// An `n × n × n` grid of cubes 1.1 m apart, its bottom layer 3 m above the ground.
fn pile(n: usize) -> App {
    let mut app = app();
    let offset = 0.5 * (n - 1) as f32 * 1.1;
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                let position = Vec3::new(
                    i as f32 * 1.1 - offset,
                    3.5 + j as f32 * 1.1,
                    k as f32 * 1.1 - offset,
                );
                app.world_mut().spawn(cube(position));
            }
        }
    }
    app
}

fn step(app: &mut App, steps: usize) {
    for _ in 0..steps {
        app.update();
    }
}

fn bench_pyramid(c: &mut Criterion) {
    let mut group = c.benchmark_group("pyramid");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let mut app = pyramid(20);
    // A few steps so contacts exist and impulses are warm-started.
    step(&mut app, 5);
    group.bench_function("base_20", |b| b.iter(|| black_box(&mut app).update()));
    group.finish();
}

fn bench_pile(c: &mut Criterion) {
    let mut group = c.benchmark_group("pile");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let mut app = pile(16);
    // Just under a second of falling: the bottom layer has landed and contacts are forming.
    step(&mut app, 60);
    group.bench_function("4096_cubes", |b| b.iter(|| black_box(&mut app).update()));
    group.finish();
}

criterion_group!(benches, bench_pyramid, bench_pile);
criterion_main!(benches);
