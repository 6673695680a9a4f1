//! Runs each scene in each engine, interleaved over several repeats, and prints the median time
//! per step with its spread and the quality metrics side by side, as Markdown tables, then one
//! summary table.
//!
//! ```text
//! cargo run --release --manifest-path compare/Cargo.toml                  # all scenes, 5 repeats
//! cargo run --release --manifest-path compare/Cargo.toml -- pile grid     # some scenes
//! cargo run --release --manifest-path compare/Cargo.toml -- --repeats 9 --only impetus3d pyramid
//! cargo run --release --manifest-path compare/Cargo.toml --features parallel -- --threads 2
//! ```
//!
//! Scenes: `sanity pyramid large_pyramid many_pyramids pile pile_from_start grid chain free10k
//! mixed terrain heightfield ragdolls furniture drum` (`chain` times the swinging chain and the
//! chain at rest). Options:
//!
//! - `--repeats N` (default 5): timed runs per scene and engine. For each repeat, each engine in
//!   turn builds the scene, runs its warm-up steps untimed and is timed over the scene's window;
//!   the engine that goes first rotates from one repeat to the next.
//! - `--only ENGINE` (repeatable, or comma-separated: `impetus3d`, `bevy_rapier3d`, `avian3d`,
//!   `rapier3d`, `box3d`, or `impetus`, `bevy_rapier`, `avian`, `rapier`): run only these
//!   engines (e.g. to profile one).
//! - `--snapshot`: instead of timing, print what an impetus3d rollback snapshot
//!   (`PhysicsSnapshot`) of each scene costs at the end of its timing window: bytes, bytes per
//!   body, capture and restore times.
//! - `--threads N`: compute task pool threads for the whole process (effective only in a build
//!   with `--features parallel`).
//!
//! All lengths are read from the bodies' poses, so every engine is measured the same way. The
//! quality metrics are deterministic per engine, so they are computed once, from the first
//! repeat, at the end of the timing window. Each step is timed on its own, for the ratio of the
//! 95th-percentile step to the mean step (a pile whose slow steps are much slower than its
//! mean one stutters in a game).

use std::collections::HashMap;
use std::process::ExitCode;

use impetus3d_compare::scenes::{BIN_HALF_WIDTH, DRUM, Hills, Terrain};
use impetus3d_compare::{DT, Engine, PARALLEL_BUILD, Scene, SceneKind, free_fall, init_task_pools};

const USAGE: &str = "usage: impetus3d-compare [--snapshot] [--repeats N] [--threads N] [--only ENGINE]... \
                     [sanity] [SCENE]... (see the module docs)";

struct Options {
    /// Measure impetus3d's rollback snapshots instead of timing steps.
    snapshot: bool,
    repeats: usize,
    threads: Option<usize>,
    engines: Vec<Engine>,
    scenes: Vec<String>,
}

fn parse_args() -> Result<Options, String> {
    let mut options = Options {
        snapshot: false,
        repeats: 5,
        threads: None,
        engines: Vec::new(),
        scenes: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    let number = |flag: &str, value: Option<String>| -> Result<usize, String> {
        value
            .as_deref()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|&n| n >= 1)
            .ok_or_else(|| format!("{flag} needs a whole number ≥ 1"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--repeats" => options.repeats = number("--repeats", args.next())?,
            "--snapshot" => options.snapshot = true,
            "--threads" => options.threads = Some(number("--threads", args.next())?),
            "--only" => {
                let value = args.next().ok_or("--only needs an engine name")?;
                for name in value.split(',') {
                    let engine =
                        Engine::parse(name).ok_or_else(|| format!("unknown engine `{name}`"))?;
                    if !options.engines.contains(&engine) {
                        options.engines.push(engine);
                    }
                }
            }
            "-h" | "--help" => return Err(String::new()),
            name if name == "sanity" || timed_scenes().iter().any(|(n, _)| *n == name) => {
                options.scenes.push(arg)
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if options.engines.is_empty() {
        options.engines = Engine::ALL.to_vec();
    } else {
        // Keep the tables' column order whatever order the flags gave.
        options.engines = Engine::ALL
            .into_iter()
            .filter(|e| options.engines.contains(e))
            .collect();
    }
    Ok(options)
}

/// Milliseconds per step of `steps` steps that took `elapsed`.
fn ms(elapsed: std::time::Duration, steps: usize) -> f64 {
    elapsed.as_secs_f64() * 1e3 / steps as f64
}

fn median(samples: &[f64]) -> f64 {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        0.5 * (s[n / 2 - 1] + s[n / 2])
    }
}

/// Rounds a time per step to 3 significant figures (at least 2 decimals).
fn fmt_ms(x: f64) -> String {
    let decimals = if x >= 100.0 {
        1
    } else if x >= 10.0 {
        2
    } else {
        3
    };
    format!("{x:.decimals$}")
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}

/// How long two threads take to pass one cache line back and forth, in nanoseconds (the
/// median of five runs of 20,000 round trips): how close the cores the threads run on are.
/// Parallel stages hand work and body state between threads, and gain little when this is
/// long. On the 2-vCPU benchmark machine it ranged from 76 to 798 ns between runs a few
/// seconds apart (2026-11-25), while a compute-bound loop always ran twice as fast on two
/// threads: where the host places the two vCPUs changes from minute to minute. Not measured on
/// one core, where the spinning threads would take turns.
fn core_round_trip() -> String {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    const TRIPS: u32 = 20_000;
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return "not measured (one core)".to_string();
    }
    let mut runs: Vec<f64> = (0..5)
        .map(|_| {
            let ball = Arc::new(AtomicU32::new(0));
            let other = Arc::clone(&ball);
            let partner = std::thread::spawn(move || {
                for trip in 0..TRIPS {
                    while other.load(Ordering::Acquire) != 2 * trip + 1 {}
                    other.store(2 * trip + 2, Ordering::Release);
                }
            });
            let start = std::time::Instant::now();
            for trip in 0..TRIPS {
                ball.store(2 * trip + 1, Ordering::Release);
                while ball.load(Ordering::Acquire) != 2 * trip + 2 {}
            }
            let elapsed = start.elapsed();
            partner.join().expect("the round-trip partner thread");
            elapsed.as_nanos() as f64 / f64::from(TRIPS)
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    format!("{:.0} ns", runs[2])
}

/// The quality figures of one engine on one scene: the cells of the scene's table, and the key
/// figure for the summary table.
struct Quality {
    cells: Vec<String>,
    key: String,
}

/// One timed scene: what it is called in the tables, its quality columns, and how to measure
/// quality from the scene at the end of its window.
struct Timed {
    kind: SceneKind,
    title: &'static str,
    quality_columns: &'static [&'static str],
    /// The quality figure named in the summary table.
    key_column: &'static str,
    quality: fn(&mut Scene) -> Quality,
}

/// The time per step of every repeat, and the quality, of one engine on one scene.
struct Measured {
    engine: Engine,
    /// Wall-clock ms/step, one per repeat, in order.
    samples: Vec<f64>,
    /// Process CPU ms/step (all threads), one per repeat, in order.
    cpu_samples: Vec<f64>,
    /// 95th-percentile step ÷ mean step, one per repeat, in order.
    stutter_samples: Vec<f64>,
    quality: Quality,
}

impl Measured {
    fn median(&self) -> f64 {
        median(&self.samples)
    }

    fn cpu_median(&self) -> f64 {
        median(&self.cpu_samples)
    }

    fn stutter_median(&self) -> f64 {
        median(&self.stutter_samples)
    }
}

/// Times `timed.kind` in every engine `repeats` times, engines interleaved: in each repeat, each
/// engine builds the scene, runs the warm-up untimed and is timed over the window; the engine
/// that goes first rotates with the repeat. Quality comes from the first repeat.
fn measure(timed: &Timed, engines: &[Engine], repeats: usize) -> Vec<Measured> {
    let kind = timed.kind;
    let (warm_up, _) = kind.timing_window();
    let steps = kind.timed_steps();
    let mut results: Vec<Measured> = Vec::new();
    for repeat in 0..repeats {
        for i in 0..engines.len() {
            let engine = engines[(i + repeat) % engines.len()];
            let mut scene = kind.build(engine);
            scene.step(warm_up);
            let times = scene.step_timed(steps);
            let (ms_per_step, cpu_ms_per_step) = (ms(times.total(), steps), ms(times.cpu, steps));
            let stutter = times.p95().as_secs_f64() * steps as f64 / times.total().as_secs_f64();
            match results.iter_mut().find(|r| r.engine == engine) {
                Some(r) => {
                    r.samples.push(ms_per_step);
                    r.cpu_samples.push(cpu_ms_per_step);
                    r.stutter_samples.push(stutter);
                }
                None => results.push(Measured {
                    engine,
                    samples: vec![ms_per_step],
                    cpu_samples: vec![cpu_ms_per_step],
                    stutter_samples: vec![stutter],
                    quality: (timed.quality)(&mut scene),
                }),
            }
            // The scene is dropped here, before the next engine builds its own.
        }
    }
    results.sort_by_key(|r| engines.iter().position(|&e| e == r.engine));
    results
}

fn print_table(timed: &Timed, results: &[Measured], load_before: &str) {
    let (warm_up, end) = timed.kind.timing_window();
    println!("\n### {}\n", timed.title);
    println!(
        "Timed steps {}–{} ({} steps) after {warm_up} untimed; quality at step {end}. \
         Load average before: {load_before}; after: {}.\n",
        warm_up + 1,
        end,
        end - warm_up,
        load_average(),
    );
    print!(
        "| engine | median ms/step | spread (min–max) | ÷ bevy_rapier3d | median CPU ms/step \
         | CPU ÷ bevy_rapier3d | p95 step ÷ mean step |"
    );
    for c in timed.quality_columns {
        print!(" {c} |");
    }
    println!(" all runs (ms/step, in order) |");
    print!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for _ in timed.quality_columns {
        print!(" ---: |");
    }
    println!(" --- |");
    let rapier = results.iter().find(|r| r.engine == Engine::BevyRapier);
    for r in results {
        let min = r.samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = r.samples.iter().copied().fold(0.0, f64::max);
        let ratio = rapier.map_or("–".to_string(), |m| {
            format!("{:.2}", r.median() / m.median())
        });
        let cpu_ratio = rapier.map_or("–".to_string(), |m| {
            format!("{:.2}", r.cpu_median() / m.cpu_median())
        });
        print!(
            "| {} | {} | {}–{} | {ratio} | {} | {cpu_ratio} | {:.2} |",
            r.engine.name(),
            fmt_ms(r.median()),
            fmt_ms(min),
            fmt_ms(max),
            fmt_ms(r.cpu_median()),
            r.stutter_median(),
        );
        for c in &r.quality.cells {
            print!(" {c} |");
        }
        let runs: Vec<String> = r.samples.iter().map(|&x| fmt_ms(x)).collect();
        println!(" {} |", runs.join(", "));
    }
}

fn sanity(engines: &[Engine]) {
    println!("\n### Sanity: one ball in free fall, 60 updates\n");
    println!("| engine | y after 60 updates (m) | ½ g t² at t = 60 × DT (m) |");
    println!("| --- | ---: | ---: |");
    // Semi-implicit Euler with k (sub)steps of h falls g h² k(k + 1)/2, a little more than
    // ½ g t², the more so the fewer the substeps.
    let expected = -0.5 * 9.81 * (60.0 * DT).powi(2);
    for &engine in engines {
        let mut scene = free_fall(engine);
        scene.step(60);
        let y = scene.pose(scene.bodies[0].0).0.y;
        println!("| {} | {y:.4} | {expected:.4} |", engine.name());
    }
}

/// Top-cube drift (and how much of it is a vertical drop), then the cells of
/// [`stands_cells`].
fn pyramid_quality(scene: &mut Scene) -> Quality {
    let (top, start) = *scene.bodies.last().unwrap();
    let top_now = scene.pose(top).0;
    let drift = top_now.distance(start);
    let sag = start.y - top_now.y;
    let mut cells = vec![format!("{:.1}", drift * 1e3), format!("{:.1}", sag * 1e3)];
    cells.extend(stands_cells(scene));
    Quality {
        cells,
        key: format!("{:.1}", drift * 1e3),
    }
}

/// The largest displacement of any cube (and the largest horizontal one: a pyramid that only
/// sags under its own weight moves its cubes down, one that collapses moves them sideways) and
/// whether every cube stayed within 10 cm.
fn stands_cells(scene: &Scene) -> [String; 3] {
    let worst = scene.max_displacement();
    let worst_horizontal = scene
        .bodies
        .iter()
        .map(|&(e, p0)| (scene.pose(e).0 - p0).with_y(0.0).length())
        .fold(0.0, f32::max);
    [
        format!("{:.1}", worst * 1e3),
        format!("{:.1}", worst_horizontal * 1e3),
        (if worst < 0.1 { "yes" } else { "no" }).to_string(),
    ]
}

const PYRAMID_COLUMNS: &[&str] = &[
    "top-cube drift (mm)",
    "of which top-cube drop (mm)",
    "largest cube displacement (mm)",
    "largest horizontal displacement (mm)",
    "stands (every cube within 10 cm)",
];

/// [`stands_cells`]: 64 pyramids have no single top cube to follow.
fn many_pyramids_quality(scene: &mut Scene) -> Quality {
    let cells = stands_cells(scene);
    let key = cells[0].clone();
    Quality {
        cells: cells.to_vec(),
        key,
    }
}

const MANY_PYRAMIDS_COLUMNS: &[&str] = &[
    "largest cube displacement (mm)",
    "largest horizontal displacement (mm)",
    "stands (every cube within 10 cm)",
];

const PILE_COLUMNS: &[&str] = &[
    "max cube–ground penetration (mm)",
    "max cube–cube penetration (mm)",
    "overlapping pairs",
    "cubes below ground",
    "highest centre (m)",
];

fn pile_quality(scene: &mut Scene) -> Quality {
    let o = scene.cube_overlaps();
    Quality {
        cells: vec![
            format!("{:.1}", o.max_ground_penetration * 1e3),
            format!("{:.1}", o.max_cube_penetration * 1e3),
            o.overlapping_pairs.to_string(),
            o.fell_through.to_string(),
            format!("{:.2}", o.highest),
        ],
        key: format!("{:.1}", o.max_cube_penetration * 1e3),
    }
}

fn grid_quality(scene: &mut Scene) -> Quality {
    let errors = scene.joint_errors();
    let max = errors.iter().copied().fold(0.0, f32::max);
    let mean = errors.iter().sum::<f32>() / errors.len() as f32;
    let over = errors.iter().filter(|&&e| e >= 0.1).count();
    Quality {
        cells: vec![
            format!("{:.1}", max * 1e3),
            format!("{:.2}", mean * 1e3),
            over.to_string(),
        ],
        key: format!("{:.1}", max * 1e3),
    }
}

fn swinging_chain_quality(scene: &mut Scene) -> Quality {
    let gap = scene.joint_errors().into_iter().fold(0.0, f32::max);
    Quality {
        cells: vec![format!("{:.2}", gap * 1e3)],
        key: format!("{:.2}", gap * 1e3),
    }
}

fn resting_chain_quality(scene: &mut Scene) -> Quality {
    let stretch = scene.chain_stretch();
    let gap = scene.joint_errors().into_iter().fold(0.0, f32::max);
    Quality {
        cells: vec![
            format!("{:.3}", stretch * 100.0),
            format!("{:.2}", gap * 1e3),
        ],
        key: format!("{:.3}", stretch * 100.0),
    }
}

fn free_quality(scene: &mut Scene) -> Quality {
    let (_, end) = SceneKind::Free10k.timing_window();
    let t = end as f64 * DT;
    let y = scene.mean_height();
    let drop = scene.mean_spawn_height() - y;
    Quality {
        cells: vec![
            format!("{y:.3}"),
            format!("{drop:.3}"),
            format!("{:.3}", 0.5 * 9.81 * t * t),
        ],
        key: format!("{y:.3}"),
    }
}

/// The dynamic bodies' mean speed over one more step, m/s: how still a pile that should have
/// settled is (a jittering pile never gets there).
fn mean_speed(scene: &mut Scene) -> f32 {
    let before = scene.positions();
    scene.step(1);
    let after = scene.positions();
    let sum: f32 = before.iter().zip(&after).map(|(a, b)| a.distance(*b)).sum();
    sum / (before.len() as f64 * DT) as f32
}

/// Bodies out of the bin, the mean height and how still the pile is.
fn mixed_quality(scene: &mut Scene) -> Quality {
    let out = scene
        .positions()
        .iter()
        .filter(|p| p.x.abs() > BIN_HALF_WIDTH || p.z.abs() > BIN_HALF_WIDTH || p.y < 0.0)
        .count();
    let height = scene.mean_height();
    let speed = mean_speed(scene);
    Quality {
        cells: vec![
            out.to_string(),
            format!("{height:.3}"),
            format!("{:.1}", speed * 1e3),
        ],
        key: format!("{:.1}", speed * 1e3),
    }
}

/// Bodies whose centre is below `floor(x, z)` (fell through the ground), bodies off its edge
/// (where `floor` is `None`), and how still they are.
fn ground_quality(scene: &mut Scene, floor: fn(f32, f32) -> Option<f32>) -> Quality {
    let positions = scene.positions();
    let sunk = positions
        .iter()
        .filter(|p| floor(p.x, p.z).is_some_and(|h| p.y < h))
        .count();
    let off = positions
        .iter()
        .filter(|p| floor(p.x, p.z).is_none())
        .count();
    let speed = mean_speed(scene);
    Quality {
        cells: vec![
            sunk.to_string(),
            off.to_string(),
            format!("{:.1}", speed * 1e3),
        ],
        key: format!("{sunk} / {:.1}", speed * 1e3),
    }
}

/// The mesh terrain's: below the mesh's surface.
fn terrain_quality(scene: &mut Scene) -> Quality {
    ground_quality(scene, Terrain::height_at)
}

/// The heightfield's: below the lowest corner of the cell under the body, whichever way an
/// engine splits its cells.
fn heightfield_quality(scene: &mut Scene) -> Quality {
    ground_quality(scene, Hills::lowest_corner)
}

/// The largest and mean joint gap, parts below the ground, and how still the pile is.
fn ragdoll_quality(scene: &mut Scene) -> Quality {
    let errors = scene.joint_errors();
    let max = errors.iter().copied().fold(0.0, f32::max);
    let mean = errors.iter().sum::<f32>() / errors.len() as f32;
    let below = scene.positions().iter().filter(|p| p.y < 0.0).count();
    let speed = mean_speed(scene);
    Quality {
        cells: vec![
            format!("{:.1}", max * 1e3),
            format!("{:.2}", mean * 1e3),
            below.to_string(),
            format!("{:.1}", speed * 1e3),
        ],
        key: format!("{:.1}", max * 1e3),
    }
}

/// Bodies whose centre is below the ground, the mean height and how still the pile is.
fn furniture_quality(scene: &mut Scene) -> Quality {
    let below = scene.positions().iter().filter(|p| p.y < 0.0).count();
    let height = scene.mean_height();
    let speed = mean_speed(scene);
    Quality {
        cells: vec![
            below.to_string(),
            format!("{height:.3}"),
            format!("{:.1}", speed * 1e3),
        ],
        key: format!("{:.1}", speed * 1e3),
    }
}

/// Boxes out of the drum (farther from its axis than its bars, or past its end plates), and
/// the boxes' mean height (they tumble in the lower half).
fn drum_quality(scene: &mut Scene) -> Quality {
    let (radius, half_length) = DRUM;
    let out = scene
        .positions()
        .iter()
        .filter(|p| p.truncate().length() > radius || p.z.abs() > half_length)
        .count();
    let height = scene.mean_height();
    Quality {
        cells: vec![out.to_string(), format!("{height:.3}")],
        key: out.to_string(),
    }
}

/// The timed scenes, in the order they run, each with the command-line name that selects it.
fn timed_scenes() -> Vec<(&'static str, Timed)> {
    vec![
        (
            "pyramid",
            Timed {
                kind: SceneKind::Pyramid,
                title: "Pyramid, base 20 (210 unit cubes), 600 steps = 10 s",
                quality_columns: PYRAMID_COLUMNS,
                key_column: "top-cube drift (mm)",
                quality: pyramid_quality,
            },
        ),
        (
            "large_pyramid",
            Timed {
                kind: SceneKind::LargePyramid,
                title: "Large pyramid, base 100 (5050 unit cubes) on a 400 × 2 × 400 m ground, \
                        200 steps",
                quality_columns: PYRAMID_COLUMNS,
                key_column: "top-cube drift (mm)",
                quality: pyramid_quality,
            },
        ),
        (
            "many_pyramids",
            Timed {
                kind: SceneKind::ManyPyramids,
                title: "Many pyramids: 8 × 8 pyramids of base 8 (2,304 unit cubes), 12 m apart, \
                        200 steps",
                quality_columns: MANY_PYRAMIDS_COLUMNS,
                key_column: "largest cube displacement (mm)",
                quality: many_pyramids_quality,
            },
        ),
        (
            "pile",
            Timed {
                kind: SceneKind::Pile,
                title: "Pile: 4096 unit cubes dropped, metrics at step 300",
                quality_columns: PILE_COLUMNS,
                key_column: "max cube–cube penetration (mm)",
                quality: pile_quality,
            },
        ),
        (
            "grid",
            Timed {
                kind: SceneKind::JointGrid,
                title: "Joint grid 40×40 (1598 dynamic balls, 3120 spherical joints), \
                        300 steps",
                quality_columns: &[
                    "max anchor error (mm)",
                    "mean anchor error (mm)",
                    "joints ≥ 10 cm apart",
                ],
                key_column: "max anchor error (mm)",
                quality: grid_quality,
            },
        ),
        (
            "chain",
            Timed {
                kind: SceneKind::Chain,
                title: "Chain of 100 links, swinging (last link kicked at 5 m/s)",
                quality_columns: &["largest joint gap at step 610 (mm)"],
                key_column: "largest joint gap (mm)",
                quality: swinging_chain_quality,
            },
        ),
        (
            "chain",
            Timed {
                kind: SceneKind::ChainAtRest,
                title: "Chain of 100 links hanging at rest, 600 steps = 10 s",
                quality_columns: &["stretch at rest (%)", "largest joint gap at rest (mm)"],
                key_column: "stretch at rest (%)",
                quality: resting_chain_quality,
            },
        ),
        (
            "free10k",
            Timed {
                kind: SceneKind::Free10k,
                title: "Free fall: 10,000 balls (r = 0.5 m) 3 m apart, never touching, \
                        no ground",
                quality_columns: &[
                    "mean y at step 125 (m)",
                    "mean drop (m)",
                    "½ g t² at t = 125 × DT (m)",
                ],
                key_column: "mean y (m)",
                quality: free_quality,
            },
        ),
        (
            "pile_from_start",
            Timed {
                kind: SceneKind::PileFromStart,
                title: "Pile from its first step: 4096 unit cubes 1.2 m apart dropped, \
                        steps 1–300",
                quality_columns: PILE_COLUMNS,
                key_column: "max cube–cube penetration (mm)",
                quality: pile_quality,
            },
        ),
        (
            "mixed",
            Timed {
                kind: SceneKind::MixedPile,
                title: "Mixed shapes: 1,728 boxes, balls, capsules, cylinders and hulls dropped \
                        into a 16 × 16 m bin, steps 1–360",
                quality_columns: &["out of the bin", "mean height (m)", "mean speed (mm/s)"],
                key_column: "mean speed (mm/s)",
                quality: mixed_quality,
            },
        ),
        (
            "terrain",
            Timed {
                kind: SceneKind::MeshTerrain,
                title: "Mesh terrain: 900 mixed shapes dropped on a 40 × 40-cell triangle mesh, \
                        steps 1–300",
                quality_columns: &["below the surface", "off the edge", "mean speed (mm/s)"],
                key_column: "below / mean speed (mm/s)",
                quality: terrain_quality,
            },
        ),
        (
            "heightfield",
            Timed {
                kind: SceneKind::HeightfieldTerrain,
                title: "Heightfield terrain: 900 mixed shapes dropped on a 41 × 41-sample \
                        heightfield, steps 1–300",
                quality_columns: &["below the surface", "off the edge", "mean speed (mm/s)"],
                key_column: "below / mean speed (mm/s)",
                quality: heightfield_quality,
            },
        ),
        (
            "ragdolls",
            Timed {
                kind: SceneKind::Ragdolls,
                title: "Ragdolls: 48 (528 bodies, 480 spherical and revolute joints) dropped in \
                        a pile, steps 1–300",
                quality_columns: &[
                    "max joint gap (mm)",
                    "mean joint gap (mm)",
                    "parts below the ground",
                    "mean speed (mm/s)",
                ],
                key_column: "max joint gap (mm)",
                quality: ragdoll_quality,
            },
        ),
        (
            "furniture",
            Timed {
                kind: SceneKind::Furniture,
                title: "Furniture: 512 tables and chairs (5–6 boxes each) dropped, steps 1–300",
                quality_columns: &["below the ground", "mean height (m)", "mean speed (mm/s)"],
                key_column: "mean speed (mm/s)",
                quality: furniture_quality,
            },
        ),
        (
            "drum",
            Timed {
                kind: SceneKind::Drum,
                title: "Drum: 1,000 boxes of 0.5 m in a kinematic drum turning at 1 rad/s, \
                        steps 1–360",
                quality_columns: &["out of the drum", "mean height (m)"],
                key_column: "out of the drum",
                quality: drum_quality,
            },
        ),
    ]
}

/// `a ÷ b` with two decimals, or "–" where either is missing.
fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}", a / b),
        _ => "–".to_string(),
    }
}

fn print_summary(done: &[(Timed, Vec<Measured>)], engines: &[Engine]) {
    println!("\n### Summary\n");
    println!(
        "Median wall-clock ms/step over the repeats; impetus3d's ratio of medians to \
         bevy_rapier3d's and to the faster of rapier3d and Box3D (and the first ratio of process \
         CPU time per step, less sensitive to other load on the machine); each engine's median \
         ratio of its 95th-percentile step to its mean step; quality: one key figure per \
         scene.\n"
    );
    print!("| scene |");
    for e in engines {
        print!(" {} ms/step |", e.name());
    }
    print!(" ÷ bevy_rapier3d | same, CPU time | ÷ faster of rapier3d, box3d |");
    for e in engines {
        print!(" {} p95 ÷ mean |", e.name());
    }
    print!(" quality figure |");
    for e in engines {
        print!(" {} |", e.name());
    }
    println!();
    print!("| --- |");
    for _ in 0..2 * engines.len() + 3 {
        print!(" ---: |");
    }
    print!(" --- |");
    for _ in engines {
        print!(" ---: |");
    }
    println!();
    for (timed, results) in done {
        let by_engine: HashMap<_, _> = results.iter().map(|r| (r.engine, r)).collect();
        let median = |e| by_engine.get(&e).map(|r| r.median());
        let cpu_median = |e| by_engine.get(&e).map(|r| r.cpu_median());
        let fastest_peer = [Engine::Rapier, Engine::Box3d]
            .into_iter()
            .filter_map(median)
            .reduce(f64::min);
        print!("| {} |", timed.kind.name());
        for e in engines {
            print!(" {} |", fmt_ms(by_engine[e].median()));
        }
        print!(
            " {} | {} | {} |",
            ratio(median(Engine::Impetus), median(Engine::BevyRapier)),
            ratio(cpu_median(Engine::Impetus), cpu_median(Engine::BevyRapier)),
            ratio(median(Engine::Impetus), fastest_peer),
        );
        for e in engines {
            print!(" {:.2} |", by_engine[e].stutter_median());
        }
        print!(" {} |", timed.key_column);
        for e in engines {
            print!(" {} |", by_engine[e].quality.key);
        }
        println!();
    }
}

/// Prints what an impetus3d `PhysicsSnapshot` costs at the end of each scene's timing
/// window, as a Markdown table.
fn snapshot_costs(wants: &dyn Fn(&str) -> bool) {
    println!("| scene | step | bodies | bytes | bytes per body | capture (ms) | restore (ms) |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (name, timed) in timed_scenes() {
        if !wants(name) {
            continue;
        }
        let (_, end) = timed.kind.timing_window();
        let mut scene = timed.kind.build(Engine::Impetus);
        scene.step(end);
        let Some(cost) = scene.sim.snapshot_cost() else {
            continue;
        };
        println!(
            "| {name} | {end} | {} | {} | {} | {:.3} | {:.3} |",
            cost.bodies,
            cost.bytes,
            cost.bytes / cost.bodies.max(1),
            cost.capture_ms,
            cost.restore_ms
        );
    }
}

fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(options) => options,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("{message}");
            }
            eprintln!("{USAGE}");
            return if message.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            };
        }
    };
    // Before the first app: the task pools are process-wide and created once.
    let compute_threads = init_task_pools(options.threads);
    let wants = |name: &str| options.scenes.is_empty() || options.scenes.iter().any(|s| s == name);
    if options.snapshot {
        snapshot_costs(&wants);
        return ExitCode::SUCCESS;
    }
    let engines = &options.engines;
    println!(
        "Timestep 1/60 s everywhere, one physics step per update, sleeping disabled. \
         Build: {} ({}), {}. Compute task pool: {compute_threads} thread(s){}. \
         Repeats: {}, engines interleaved. Engines: {}. Load average at start: {}. \
         Core-to-core round trip: {}.",
        if PARALLEL_BUILD { "parallel" } else { "serial" },
        if PARALLEL_BUILD {
            "impetus3d/parallel: bevy_tasks/multi_threaded, single-threaded executor"
        } else {
            "no multi_threaded"
        },
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        match (PARALLEL_BUILD, options.threads) {
            (false, Some(_)) => " (--threads ignored: serial build)",
            (true, Some(_)) => " (--threads)",
            (true, None) => " (Bevy's default)",
            (false, None) => "",
        },
        options.repeats,
        engines
            .iter()
            .map(|e| e.name())
            .collect::<Vec<_>>()
            .join(", "),
        load_average(),
        core_round_trip(),
    );
    if wants("sanity") {
        sanity(engines);
    }
    let mut done = Vec::new();
    for (name, timed) in timed_scenes() {
        if !wants(name) {
            continue;
        }
        let load_before = load_average();
        let results = measure(&timed, engines, options.repeats);
        print_table(&timed, &results, &load_before);
        done.push((timed, results));
    }
    if !done.is_empty() {
        print_summary(&done, engines);
    }
    println!(
        "\nLoad average at the end: {}. Core-to-core round trip: {}.",
        load_average(),
        core_round_trip()
    );
    ExitCode::SUCCESS
}
