//! Time per physics step of every engine on every timed scene (see `src/lib.rs` and the
//! README), one criterion group per scene and one bench per engine, all in one run:
//!
//! ```text
//! cargo bench --manifest-path compare/Cargo.toml
//! cargo bench --manifest-path compare/Cargo.toml -- pile     # one group
//! ```
//!
//! Each scene is built, stepped through its warm-up steps untimed, then timed one step at a time.
//! A scene evolves (the pile falls, the grid swings), so to time every engine over the same part
//! of the scene's life, a timed run that reaches the end of the scene's window
//! ([`SceneKind::timing_window`]) rebuilds the scene and warms it up again, untimed. A slow engine
//! may still cover only the start of the window in the time criterion gives it: the release
//! binary (`src/main.rs`) times the whole window for every engine.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use impetus3d_compare::{Engine, Scene, SceneKind};

/// A scene in its timing window.
struct Timed {
    kind: SceneKind,
    engine: Engine,
    scene: Scene,
    steps: usize,
}

impl Timed {
    fn new(kind: SceneKind, engine: Engine) -> Self {
        let mut scene = kind.build(engine);
        let (warm_up, _) = kind.timing_window();
        scene.step(warm_up);
        Timed {
            kind,
            engine,
            scene,
            steps: warm_up,
        }
    }

    /// Times `iters` steps, starting the scene over (untimed) at the end of its window.
    fn run(&mut self, iters: u64) -> Duration {
        let (_, end) = self.kind.timing_window();
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            if self.steps >= end {
                *self = Timed::new(self.kind, self.engine);
            }
            let start = Instant::now();
            black_box(&mut self.scene.sim).step();
            total += start.elapsed();
            self.steps += 1;
        }
        total
    }
}

fn group(c: &mut Criterion, name: &str, kind: SceneKind, measurement: Duration) {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(measurement);
    for engine in Engine::ALL {
        let mut timed = Timed::new(kind, engine);
        group.bench_function(engine.name(), |b| b.iter_custom(|iters| timed.run(iters)));
    }
    group.finish();
}

fn scenes(c: &mut Criterion) {
    for kind in SceneKind::ALL {
        // The chain at rest costs what the swinging chain does; its group adds nothing.
        if kind == SceneKind::ChainAtRest {
            continue;
        }
        group(c, kind.name(), kind, Duration::from_secs(4));
    }
}

criterion_group!(benches, scenes);
criterion_main!(benches);
