//! A profiling and quality harness over the benchmark scenes, at the 1/60 s step of the
//! side-by-side comparison (`compare/`). Not a criterion bench: it runs a fixed number of steps
//! so that instruction counts are repeatable.
//!
//! ```text
//! cargo bench --bench profile -- <scene> [warm-up steps] [timed steps]
//! cargo bench --bench profile -- quality
//! cargo bench --bench profile --features parallel -- <scene> [warm-up] [steps] --threads 2
//! cargo bench --bench profile --features parallel -- pile 60 240 --threads 2 --thread-use pool
//! ```
//!
//! Scenes: `pyramid` (base 20), `large_pyramid` (base 100), `pile` (4096 cubes), `free10k`,
//! `grid` (40×40 balls, 3,120 spherical joints), `chain` (100 links), `empty` (no bodies).
//! It prints the wall-clock time per timed step. The timed steps run inside `timed_steps`, so
//! callgrind can count only them:
//!
//! ```text
//! valgrind --tool=callgrind --toggle-collect='*timed_steps*' \
//!     target/release/deps/profile-<hash> pyramid 5 50
//! ```
//!
//! `quality` runs the comparison's quality windows: the top-cube drift of the pyramid after
//! 600 steps and of the large pyramid after 200, and the deepest cube–cube and cube–ground
//! penetration of the pile at step 300.

mod common;

use std::time::Instant;

use bevy::prelude::*;
use common::*;
use impetus3d::prelude::*;

const DT: f64 = 1.0 / 60.0;

#[inline(never)]
fn timed_steps(app: &mut App, steps: usize) {
    for _ in 0..steps {
        std::hint::black_box(&mut *app).update();
    }
}

fn scene(name: &str) -> Option<(App, usize)> {
    Some(match name {
        "pyramid" => (pyramid(DT, 20, GROUND).0, 5),
        "large_pyramid" => (pyramid(DT, 100, LARGE_GROUND).0, 5),
        "pile" => (pile(DT, 16), 60),
        "free10k" => (free_balls(DT), 5),
        "grid" => (joint_grid(DT, 40), 5),
        "chain" => (chain(DT, 100), 5),
        "empty" => (impetus3d::headless_app(DT), 5),
        _ => return None,
    })
}

fn drift(app: &App, top: Entity, spawn: Vec3) -> f32 {
    (app.world().get::<Position>(top).expect("top cube").0 - spawn).length()
}

fn quality() {
    for (name, base, ground, steps) in [
        ("pyramid", 20, GROUND, 600),
        ("large_pyramid", 100, LARGE_GROUND, 200),
    ] {
        let (mut app, top, spawn) = pyramid(DT, base, ground);
        step(&mut app, steps);
        println!(
            "{name}: top-cube drift after {steps} steps {:.2} mm",
            drift(&app, top, spawn) * 1000.0
        );
    }
    let mut app = pile(DT, 16);
    // The deepest penetration at one step is a chaotic figure; its mean over the settled
    // pile (every 10th step from 150 to 300) is steadier.
    let mut samples = Vec::new();
    let mut steps = 0;
    for sample in (150..=300).step_by(10) {
        step(&mut app, sample - steps);
        steps = sample;
        samples.push(cube_penetrations(&mut app));
    }
    let (cube, ground) = *samples.last().expect("samples");
    let mean = samples.iter().map(|s| s.0).sum::<f32>() / samples.len() as f32;
    let worst = samples.iter().map(|s| s.0).fold(0.0, f32::max);
    println!(
        "pile: at step 300 deepest cube-cube penetration {:.2} mm, cube-ground {:.2} mm; \
         deepest cube-cube every 10 steps from 150 to 300: mean {:.2} mm, worst {:.2} mm",
        cube * 1000.0,
        ground * 1000.0,
        mean * 1000.0,
        worst * 1000.0
    );
}

fn main() {
    let all: Vec<String> = std::env::args().skip(1).collect();
    // `--threads N`: the compute task pool's thread count (with the `parallel` feature). The
    // pools are process-wide, so they are made before the first app.
    if let Some(i) = all.iter().position(|a| a == "--threads") {
        let threads: usize = all[i + 1].parse().expect("a thread count");
        bevy::tasks::ComputeTaskPool::get_or_init(|| {
            bevy::tasks::TaskPoolBuilder::new()
                .num_threads(threads)
                .build()
        });
    }
    let args: Vec<String> = all
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            !a.starts_with("--")
                && (*i == 0 || !["--threads", "--thread-use"].contains(&all[i - 1].as_str()))
        })
        .map(|(_, a)| a.clone())
        .collect();
    let Some(name) = args.first() else {
        println!(
            "usage: profile <pyramid|large_pyramid|pile|free10k|grid|chain|empty> [warm-up] [steps] | quality"
        );
        return;
    };
    if name == "quality" {
        quality();
        return;
    }
    if name == "hash" {
        // The final-state hash of every scene after a fixed number of steps, to check that a
        // restructuring left the results bit-identical.
        for (scene_name, steps) in [
            ("pyramid", 100),
            ("large_pyramid", 20),
            ("pile", 120),
            ("free10k", 20),
            ("grid", 60),
            ("chain", 100),
        ] {
            let (mut app, _) = scene(scene_name).expect("a scene");
            step(&mut app, steps);
            println!(
                "{scene_name} after {steps} steps: {:016x}",
                physics_checksum(app.world_mut())
            );
        }
        return;
    }
    let Some((mut app, default_warm_up)) = scene(name) else {
        eprintln!("unknown scene {name}");
        std::process::exit(2);
    };
    // `--thread-use one|pool`: every step on one thread or on the pool, instead of the
    // default adaptive choice, to time each way on its own.
    if let Some(i) = all.iter().position(|a| a == "--thread-use") {
        app.insert_resource(match all[i + 1].as_str() {
            "one" => ThreadUse::OneThread,
            "pool" => ThreadUse::Parallel,
            other => panic!("--thread-use {other}: one or pool"),
        });
    }
    let number = |i: usize, default: usize| {
        args.get(i)
            .map_or(default, |a| a.parse().expect("a number of steps"))
    };
    let warm_up = number(1, default_warm_up);
    let steps = number(2, 50);
    step(&mut app, warm_up);
    let start = Instant::now();
    timed_steps(&mut app, steps);
    let elapsed = start.elapsed();
    println!(
        "{name}: steps {}-{}: {:.3} ms/step",
        warm_up + 1,
        warm_up + steps,
        elapsed.as_secs_f64() * 1000.0 / steps as f64
    );
}
