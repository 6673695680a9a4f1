//! Runs each scene for a fixed number of steps in each engine and prints the time per step and
//! quality metrics side by side, as Markdown tables.
//!
//! ```text
//! cargo run --release --manifest-path compare/Cargo.toml            # all scenes
//! cargo run --release --manifest-path compare/Cargo.toml -- pile    # some: pyramid pile grid chain
//! ```
//!
//! All lengths are read from the bodies' `Transform`s, so every engine is measured the same way.

use impetus3d_compare::{DT, Engine, Scene, SceneKind, free_fall, resting_chain};

/// Milliseconds per step of `steps` steps that took `elapsed`.
fn ms(elapsed: std::time::Duration, steps: usize) -> f64 {
    elapsed.as_secs_f64() * 1e3 / steps as f64
}

fn header(title: &str, columns: &[&str]) {
    println!("\n### {title}\n");
    print!("| engine |");
    for c in columns {
        print!(" {c} |");
    }
    println!();
    print!("| --- |");
    for _ in columns {
        print!(" ---: |");
    }
    println!();
}

fn row(engine: Engine, cells: &[String]) {
    print!("| {} |", engine.name());
    for c in cells {
        print!(" {c} |");
    }
    println!();
}

/// Builds `kind` in `engine`, runs its warm-up steps untimed, then `steps` timed steps.
fn timed(kind: SceneKind, engine: Engine, steps: usize) -> (Scene, f64) {
    let mut scene = kind.build(engine);
    let (warm_up, _) = kind.timing_window();
    scene.step(warm_up);
    let elapsed = scene.step(steps);
    (scene, ms(elapsed, steps))
}

fn sanity() {
    header(
        "Sanity: one ball in free fall, 60 updates",
        &["y after 60 updates (m)", "½ g t² at t = 60 × DT (m)"],
    );
    // Semi-implicit Euler with k (sub)steps of h falls g h² k(k + 1)/2, a little more than
    // ½ g t², the more so the fewer the substeps.
    let expected = -0.5 * 9.81 * (60.0 * DT).powi(2);
    for engine in Engine::ALL {
        let mut scene = free_fall(engine);
        scene.step(60);
        let y = scene.pose(scene.bodies[0].0).0.y;
        row(engine, &[format!("{y:.4}"), format!("{expected:.4}")]);
    }
}

fn pyramid() {
    header(
        "Pyramid, base 20 (210 unit cubes), 600 steps = 10 s",
        &[
            "ms/step (steps 5–600)",
            "top-cube drift (mm)",
            "largest cube displacement (mm)",
            "stands (every cube within 10 cm)",
        ],
    );
    for engine in Engine::ALL {
        let (scene, ms_per_step) = timed(SceneKind::Pyramid, engine, 595);
        let (top, start) = *scene.bodies.last().unwrap();
        let drift = scene.pose(top).0.distance(start);
        let worst = scene.max_displacement();
        row(
            engine,
            &[
                format!("{ms_per_step:.3}"),
                format!("{:.1}", drift * 1e3),
                format!("{:.1}", worst * 1e3),
                (if worst < 0.1 { "yes" } else { "no" }).to_string(),
            ],
        );
    }
}

fn pile() {
    header(
        "Pile: 4096 unit cubes dropped, steps 60–300 timed, metrics at step 300",
        &[
            "ms/step (steps 60–300)",
            "max cube–ground penetration (mm)",
            "max cube–cube penetration (mm)",
            "overlapping pairs",
            "cubes below ground",
            "highest centre (m)",
        ],
    );
    for engine in Engine::ALL {
        let (scene, ms_per_step) = timed(SceneKind::Pile, engine, 240);
        let o = scene.cube_overlaps();
        row(
            engine,
            &[
                format!("{ms_per_step:.2}"),
                format!("{:.1}", o.max_ground_penetration * 1e3),
                format!("{:.1}", o.max_cube_penetration * 1e3),
                o.overlapping_pairs.to_string(),
                o.fell_through.to_string(),
                format!("{:.2}", o.highest),
            ],
        );
    }
}

fn grid() {
    header(
        "Joint grid 40×40 (1598 dynamic balls, 3120 spherical joints), 300 steps at 1/60 s",
        &[
            "ms/step (steps 10–300)",
            "max anchor error (mm)",
            "mean anchor error (mm)",
            "joints ≥ 10 cm apart",
        ],
    );
    for engine in Engine::ALL {
        let (scene, ms_per_step) = timed(SceneKind::JointGrid, engine, 290);
        let errors = scene.joint_errors();
        let max = errors.iter().copied().fold(0.0, f32::max);
        let mean = errors.iter().sum::<f32>() / errors.len() as f32;
        let over = errors.iter().filter(|&&e| e >= 0.1).count();
        row(
            engine,
            &[
                format!("{ms_per_step:.3}"),
                format!("{:.1}", max * 1e3),
                format!("{:.2}", mean * 1e3),
                over.to_string(),
            ],
        );
    }
}

fn chain() {
    header(
        "Chain of 100 links: swinging (kicked) for timing, hanging at rest for 600 steps = 10 s \
         for the stretch",
        &[
            "ms/step, swinging (steps 10–610)",
            "ms/step, at rest (600 steps)",
            "stretch at rest (%)",
            "largest joint gap at rest (mm)",
        ],
    );
    for engine in Engine::ALL {
        let (_, swinging_ms) = timed(SceneKind::Chain, engine, 600);
        let mut scene = resting_chain(engine);
        let resting_ms = ms(scene.step(600), 600);
        let stretch = scene.chain_stretch();
        let gap = scene.joint_errors().into_iter().fold(0.0, f32::max);
        row(
            engine,
            &[
                format!("{swinging_ms:.3}"),
                format!("{resting_ms:.3}"),
                format!("{:.3}", stretch * 100.0),
                format!("{:.2}", gap * 1e3),
            ],
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let wants = |name: &str| args.is_empty() || args.iter().any(|a| a == name);
    println!(
        "Timestep 1/60 s everywhere, one physics step per update, sleeping disabled, \
         single-threaded Bevy. Debug build: {}.",
        cfg!(debug_assertions)
    );
    if wants("sanity") {
        sanity();
    }
    if wants("pyramid") {
        pyramid();
    }
    if wants("pile") {
        pile();
    }
    if wants("grid") {
        grid();
    }
    if wants("chain") {
        chain();
    }
}
