//! Time per physics step on these scenes, stepped headless exactly as the tests do (one
//! `app.update()` = one physics step with the default 4 substeps; 1/64 s unless noted).
//!
//! - `pyramid/base_20`: a pyramid of 210 unit cubes on a static ground, measured while it
//!   settles and stands.
//! - `large_pyramid/base_100`: the same with a base of 100 (5050 cubes) on a 400 × 2 × 400 m
//!   ground (Box3D's large-pyramid benchmark), measured from its 6th step on.
//! - `pile/4096_cubes`: a 16 × 16 × 16 grid of unit cubes dropped onto the ground, measured
//!   from its 60th step on, as the bottom layers land and the pile collapses.
//! - `free10k/balls`: 10,000 balls (radius 0.5 m) 3 m apart in a 25 × 16 × 25 grid, falling
//!   with nothing to touch: the per-body cost of a step (integration, broad phase, writeback),
//!   measured from its 6th step on.
//! - `joint_grid/40x40`: 1600 balls (radius 0.4 m, 1 m apart, in no collision layer) joined
//!   to their right and lower neighbours by 3120 spherical joints, hanging from the two top
//!   corners (static) and swinging down, at a 1/60 s step, measured from its 10th step on.
//! - `chain/100_links`: 100 balls (radius 0.25 m) 1 m apart joined by spherical joints,
//!   hanging from a static anchor with a kick on the last link, measured from its 10th step on.
//!
//! - `joints_1000/{spherical,d6_ball,d6_locked,user_point,no_joints}`: 100 chains of 10 balls
//!   (radius 0.25 m, 1 m apart, in no collision layer), each hanging from a static anchor,
//!   joined by 1000 joints: XPBD spherical joints, D6 joints with the linear axes locked and the
//!   angular ones free (the same constraint on velocity rows), D6 joints with every axis
//!   locked, a user XPBD constraint joining the same anchors (`solve_constraint::<_, 2>`, the
//!   custom-constraint path); and the same balls without joints and at rest, for the cost of
//!   the bodies alone. The last link of each chain is kicked sideways; measured from the 10th
//!   step on.
//!
//! Every dynamic body has [`SleepingDisabled`]: a resting pyramid or a hanging chain would
//! otherwise fall asleep and its steps would cost almost nothing, and the point here is the
//! broad phase, narrow phase and solver work of an awake scene.
//!
//! The scene keeps evolving across criterion's iterations (there is no cheap way to reset an
//! app), so each figure is the average over the steps the measurement happened to cover.
//!
//! ```text
//! cargo bench --bench step
//! ```

mod common;

use std::hint::black_box;
use std::time::Duration;

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::prelude::*;
use criterion::{Criterion, criterion_group, criterion_main};
use impetus3d::prelude::*;

/// Physics step, s.
const DT: f64 = 1.0 / 64.0;

fn pyramid(base: usize) -> App {
    common::pyramid(DT, base, common::GROUND).0
}

fn pile(n: usize) -> App {
    common::pile(DT, n)
}

/// Which joint the `joints_1000` scene uses.
#[derive(Clone, Copy)]
enum JointKind {
    Spherical,
    D6Ball,
    D6Locked,
    User,
    None,
}

/// A user constraint that joins two anchors, as a user would write one with the helpers of
/// [`PositionConstraint`]: one correction along the anchors' separation per solve.
#[derive(Component)]
struct UserPoint {
    bodies: [Entity; 2],
    anchors: [Vec3; 2],
    lagrange: f32,
}

impl PositionConstraint for UserPoint {}

impl XpbdConstraint<2> for UserPoint {
    fn entities(&self) -> [Entity; 2] {
        self.bodies
    }

    fn clear_lagrange_multipliers(&mut self) {
        self.lagrange = 0.0;
    }

    fn solve(&mut self, [b1, b2]: [&mut RigidBodyQueryItem; 2], dt: f32) {
        let r1 = b1.rotation * (self.anchors[0] - b1.center_of_mass());
        let r2 = b2.rotation * (self.anchors[1] - b2.center_of_mass());
        let delta = (b1.current_center_of_mass() + r1) - (b2.current_center_of_mass() + r2);
        let Some((n, c)) = delta.try_normalize().map(|n| (n, delta.length())) else {
            return;
        };
        let w1 = self.compute_generalized_inverse_mass(b1, r1, n);
        let w2 = self.compute_generalized_inverse_mass(b2, r2, n);
        let dl = self.compute_lagrange_update(self.lagrange, c, &[w1, w2], 0.0, dt);
        self.lagrange += dl;
        self.apply_positional_correction(b1, b2, dl, n, r1, r2);
    }
}

impl MapEntities for UserPoint {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.bodies = self.bodies.map(|e| mapper.get_mapped(e));
    }
}

/// 100 chains of 10 links each (1000 joints of `kind`), 1.5 m apart.
fn chains(kind: JointKind) -> App {
    let mut app = impetus3d::headless_app(DT);
    if let JointKind::User = kind {
        app.add_systems(
            SubstepSchedule,
            solve_constraint::<UserPoint, 2>.in_set(SubstepSolverSet::SolveUserConstraints),
        );
    }
    for chain in 0..100 {
        let x = (chain % 10) as f32 * 1.5;
        let z = (chain / 10) as f32 * 1.5;
        let mut previous = app
            .world_mut()
            .spawn((RigidBody::Static, Transform::from_xyz(x, 0.0, z)))
            .id();
        for i in 0..10 {
            let mut link = app.world_mut().spawn((
                RigidBody::Dynamic,
                Collider::sphere(0.25),
                CollisionLayers::NONE,
                SleepingDisabled,
                Transform::from_xyz(x, -(i as f32 + 1.0), z),
            ));
            if i == 9 {
                link.insert(LinearVelocity(Vec3::new(5.0, 0.0, 0.0)));
            }
            let link = link.id();
            let (a1, a2) = (Vec3::new(0.0, -0.5, 0.0), Vec3::new(0.0, 0.5, 0.0));
            let d6 = || {
                D6Joint::new(previous, link)
                    .with_local_anchor1(a1)
                    .with_local_anchor2(a2)
            };
            let world = app.world_mut();
            match kind {
                JointKind::Spherical => {
                    world.spawn(
                        SphericalJoint::new(previous, link)
                            .with_local_anchor1(a1)
                            .with_local_anchor2(a2),
                    );
                }
                JointKind::D6Ball => {
                    world.spawn(
                        d6().with_motion(D6Axis::Twist, D6Motion::Free)
                            .with_motion(D6Axis::Swing1, D6Motion::Free)
                            .with_motion(D6Axis::Swing2, D6Motion::Free),
                    );
                }
                JointKind::D6Locked => {
                    world.spawn(d6());
                }
                JointKind::User => {
                    world.spawn(UserPoint {
                        bodies: [previous, link],
                        anchors: [a1, a2],
                        lagrange: 0.0,
                    });
                }
                // Unjoined balls would fall, and their speculative boxes grow every step;
                // at rest they cost what the bodies of the hanging chains cost.
                JointKind::None => {
                    world
                        .entity_mut(link)
                        .insert((GravityScale(0.0), LinearVelocity(Vec3::ZERO)));
                }
            }
            previous = link;
        }
    }
    app
}

fn bench_joints_1000(c: &mut Criterion) {
    let mut group = c.benchmark_group("joints_1000");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for (name, kind) in [
        ("spherical", JointKind::Spherical),
        ("d6_ball", JointKind::D6Ball),
        ("d6_locked", JointKind::D6Locked),
        ("user_point", JointKind::User),
        ("no_joints", JointKind::None),
    ] {
        let mut app = chains(kind);
        step(&mut app, 10);
        group.bench_function(name, |b| b.iter(|| black_box(&mut app).update()));
    }
    group.finish();
}

use common::step;

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

/// Times single steps of the scenes `fresh()` builds, from step `first` (the steps before it
/// run untimed) to step `last`; at the end of that window a new scene is built, untimed, so
/// every sample times the same window of the scene's life.
fn windowed(b: &mut criterion::Bencher, fresh: impl Fn() -> App, first: usize, last: usize) {
    let build = || {
        let mut app = fresh();
        step(&mut app, first - 1);
        app
    };
    let mut app = build();
    let mut steps = first - 1;
    b.iter_custom(|iterations| {
        let mut timed = Duration::ZERO;
        for _ in 0..iterations {
            if steps == last {
                app = build();
                steps = first - 1;
            }
            let start = std::time::Instant::now();
            black_box(&mut app).update();
            timed += start.elapsed();
            steps += 1;
        }
        timed
    });
}

fn bench_large_pyramid(c: &mut Criterion) {
    let mut group = c.benchmark_group("large_pyramid");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    // Steps 6 to 200, as in the side-by-side comparison.
    let fresh = || common::pyramid(DT, 100, common::LARGE_GROUND).0;
    group.bench_function("base_100", |b| windowed(b, fresh, 6, 200));
    group.finish();
}

fn bench_free10k(c: &mut Criterion) {
    let mut group = c.benchmark_group("free10k");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    // Steps 6 to 125: kept short, since a falling body's speculative box grows with its
    // speed.
    group.bench_function("balls", |b| windowed(b, || common::free_balls(DT), 6, 125));
    group.finish();
}

fn bench_pile(c: &mut Criterion) {
    let mut group = c.benchmark_group("pile");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    // Steps 61 to 300: the bottom layer has landed (just under a second of falling) and the
    // pile collapses onto it.
    group.bench_function("4096_cubes", |b| windowed(b, || pile(16), 61, 300));
    group.finish();
}

fn bench_joint_grid(c: &mut Criterion) {
    let mut group = c.benchmark_group("joint_grid");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let mut app = common::joint_grid(1.0 / 60.0, 40);
    // A few steps so every joint has been prepared and the grid is moving.
    step(&mut app, 10);
    group.bench_function("40x40", |b| b.iter(|| black_box(&mut app).update()));
    group.finish();
}

fn bench_chain(c: &mut Criterion) {
    let mut group = c.benchmark_group("chain");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let mut app = common::chain(DT, 100);
    step(&mut app, 10);
    group.bench_function("100_links", |b| b.iter(|| black_box(&mut app).update()));
    group.finish();
}

criterion_group!(
    benches,
    bench_pyramid,
    bench_large_pyramid,
    bench_pile,
    bench_free10k,
    bench_joint_grid,
    bench_chain,
    bench_joints_1000
);
criterion_main!(benches);
