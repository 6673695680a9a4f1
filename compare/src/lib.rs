//! The same scenes in impetus3d, bevy_rapier3d 0.36, avian3d 0.7, rapier3d 0.36 (without Bevy)
//! and Box3D (through boxddd 0.4, the binding under bevy_boxddd), stepped one physics step at a
//! time, and engine-independent behaviour metrics read from each body's pose.
//!
//! A scene is built once, as data, on the handful of primitives of the [`Sim`] trait (a body
//! with a [`Shape`], a spherical or revolute joint), which each engine implements with its own
//! API (see [`engines`]). So the scenes are the same in every engine by construction: same
//! shapes, positions, anchors, timestep, no sleeping. [`SceneKind`] names the timed scenes and
//! their timing windows; [`scenes`] builds them.
//!
//! Settings (see the README for the full list): every engine at its defaults except
//!
//! - the timestep: 1/60 s for every scene in every engine, one physics step per
//!   [`Sim::step`] (impetus3d and avian3d: `Time<Fixed>` = 1/60 s in `FixedPostUpdate`, their
//!   default schedule; bevy_rapier3d: `TimestepMode::Fixed { dt: 1/60, substeps: 1 }` in
//!   `PostUpdate`, its default schedule, all three driven by
//!   `TimeUpdateStrategy::ManualDuration(1/60 s)`; rapier3d: `PhysicsWorld::step` with its
//!   default `IntegrationParameters`, whose `dt` is 1/60 s; Box3D: `World::step(1/60, 4)`, the
//!   four substeps its samples use);
//! - sleeping disabled on every dynamic body;
//! - bodies joined by a joint never collide with each other, in every engine (rapier's joints
//!   collide by default, the others' do not);
//! - the joint grid's balls collide with nothing.
//!
//! Engine defaults that differ and are left alone: substeps / iterations (impetus3d 4 substeps;
//! avian3d 6 substeps; rapier 1 step with 4 solver iterations; Box3D 4 substeps), collider
//! density (impetus3d 1000 kg/m³, the others 1 kg/m³; it cancels out, every body of a scene has
//! the same density), friction and restitution, contact softness.
//!
//! Threads: the Bevy engines' apps are built with `MinimalPlugins`, whose `TaskPoolPlugin`
//! creates Bevy's process-wide task pools on the first app only. [`init_task_pools`] creates
//! them first, with a chosen number of compute threads; it matters only in a build with the
//! `parallel` feature. rapier3d is built without its `parallel` feature and Box3D's world has
//! no task system: both run on the calling thread.

#![warn(missing_docs)]

use std::time::{Duration, Instant};

use bevy::app::TaskPoolOptions;
use bevy::math::{IVec3, Quat, Vec3};
use bevy::tasks::ComputeTaskPool;

pub mod engines;
pub mod scenes;

pub use scenes::{SceneKind, free_fall, resting_chain};

/// Physics step for every scene and every engine, s.
pub const DT: f64 = 1.0 / 60.0;

/// One of the engines compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// impetus3d, this repository (by path).
    Impetus,
    /// bevy_rapier3d 0.36.0.
    BevyRapier,
    /// avian3d 0.7.0.
    Avian,
    /// rapier3d 0.36.1, driven directly without Bevy.
    Rapier,
    /// Box3D, through boxddd 0.4 without Bevy.
    Box3d,
}

impl Engine {
    /// All of them, in the order the tables list them.
    pub const ALL: [Engine; 5] = [
        Engine::Impetus,
        Engine::BevyRapier,
        Engine::Avian,
        Engine::Rapier,
        Engine::Box3d,
    ];

    /// The name used as the bench id and column header.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Impetus => "impetus3d",
            Engine::BevyRapier => "bevy_rapier3d",
            Engine::Avian => "avian3d",
            Engine::Rapier => "rapier3d",
            Engine::Box3d => "box3d",
        }
    }

    /// Parses a name or a short name (`impetus`, `bevy_rapier`, `avian`, `rapier`, `box3d`).
    pub fn parse(name: &str) -> Option<Engine> {
        match name {
            "impetus3d" | "impetus" => Some(Engine::Impetus),
            "bevy_rapier3d" | "bevy_rapier" => Some(Engine::BevyRapier),
            "avian3d" | "avian" => Some(Engine::Avian),
            "rapier3d" | "rapier" => Some(Engine::Rapier),
            "box3d" | "boxddd" => Some(Engine::Box3d),
            _ => None,
        }
    }
}

/// A collider shape, as a scene describes it. Capsules and cylinders are along local Y.
#[derive(Clone, Debug)]
pub enum Shape {
    /// A box of the given half extents.
    Cuboid(Vec3),
    /// A sphere of the given radius.
    Ball(f32),
    /// A capsule: a segment of `2 × half_height` along Y, swept by `radius`.
    Capsule {
        /// Half the length of the segment, m.
        half_height: f32,
        /// m.
        radius: f32,
    },
    /// A cylinder of height `2 × half_height` along Y (Box3D: a 16-sided prism, it has no
    /// round cylinder).
    Cylinder {
        /// m.
        half_height: f32,
        /// m.
        radius: f32,
    },
    /// The convex hull of these points.
    Hull(Vec<Vec3>),
    /// Boxes (centre, half extents) fixed together in one body, unrotated.
    Boxes(Vec<(Vec3, Vec3)>),
    /// A heightfield (static bodies only): a square grid of `samples × samples` heights, row
    /// by row (rows along z, the heights of a row along x), spanning `size.x × size.z` centred
    /// on the body's origin, each height multiplied by `size.y`.
    Heightfield {
        /// The heights, `samples²` of them.
        heights: Vec<f32>,
        /// Grid points along each side.
        samples: usize,
        /// Width along x, height scale, depth along z.
        size: Vec3,
    },
    /// A triangle mesh (static bodies only).
    Trimesh {
        /// The vertices, in the body's frame.
        vertices: Vec<Vec3>,
        /// Counter-clockwise seen from outside (the side bodies rest on).
        triangles: Vec<[u32; 3]>,
    },
}

/// How a body moves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Motion {
    /// Never moves.
    Static,
    /// Simulated, never sleeping.
    Dynamic,
    /// Moves at its velocities, pushes dynamic bodies and is never pushed.
    Kinematic,
}

/// A body as a scene describes it.
#[derive(Clone, Debug)]
pub struct BodyDef {
    /// Its collider, if any.
    pub shape: Option<Shape>,
    /// World position of its origin.
    pub position: Vec3,
    /// World rotation.
    pub rotation: Quat,
    /// How it moves.
    pub motion: Motion,
    /// Whether it collides at all.
    pub collides: bool,
    /// Initial linear velocity, m/s.
    pub linear_velocity: Vec3,
    /// Initial angular velocity, rad/s.
    pub angular_velocity: Vec3,
}

impl BodyDef {
    /// A body of `shape` at `position`, unrotated, at rest, colliding.
    pub fn new(motion: Motion, shape: Shape, position: Vec3) -> Self {
        Self {
            shape: Some(shape),
            position,
            rotation: Quat::IDENTITY,
            motion,
            collides: true,
            linear_velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
        }
    }
}

/// The kind of a joint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointKind {
    /// A ball-and-socket joint.
    Spherical,
    /// A hinge about this axis, the same in both bodies' frames.
    Revolute(Vec3),
}

/// A joint as the scene defined it: body `a`'s local anchor must meet body `b`'s. Bodies joined
/// by a joint do not collide with each other.
#[derive(Clone, Copy, Debug)]
pub struct JointDef {
    /// The kind of joint.
    pub kind: JointKind,
    /// The first body (a handle from [`Sim::add_body`]).
    pub a: usize,
    /// The second body.
    pub b: usize,
    /// The anchor in `a`'s local frame.
    pub anchor_a: Vec3,
    /// The anchor in `b`'s local frame.
    pub anchor_b: Vec3,
}

/// One engine's world, built through these primitives and stepped one step of [`DT`] at a
/// time. Bodies are named by the handle `add_body` returns: their index in the order they were
/// added.
pub trait Sim {
    /// Adds a body and returns its handle.
    fn add_body(&mut self, body: &BodyDef) -> usize;
    /// Adds a joint between two bodies already added.
    fn add_joint(&mut self, joint: &JointDef);
    /// Runs one physics step of [`DT`].
    fn step(&mut self);
    /// A body's pose after the last step.
    fn pose(&self, body: usize) -> (Vec3, Quat);
    /// What a rollback snapshot of the world costs now, for an engine that has snapshots
    /// (impetus3d's `PhysicsSnapshot`); `None` for the others.
    fn snapshot_cost(&mut self) -> Option<SnapshotCost> {
        None
    }
}

/// The size of a rollback snapshot and the time to take and restore one.
#[derive(Clone, Copy, Debug)]
pub struct SnapshotCost {
    /// Bodies in the snapshot (static ones included).
    pub bodies: usize,
    /// The snapshot's memory, bytes.
    pub bytes: usize,
    /// Median time of a capture, ms.
    pub capture_ms: f64,
    /// Median time of a restore, ms.
    pub restore_ms: f64,
}

/// Creates Bevy's process-wide task pools (IO, async compute, compute) before the first app is
/// built, with `compute_threads` threads in the compute pool (`None`: Bevy's default, all cores
/// left after one IO and one async-compute thread, at least one), and returns the compute pool's
/// thread count.
///
/// The pools are singletons initialised once per process: the first call (or, without a call,
/// the first app's `TaskPoolPlugin`) decides for the whole process, later calls change nothing.
/// In a build without `bevy_tasks/multi_threaded` (no `parallel` feature) the pools run every
/// task on the calling thread and report one thread whatever is asked. With it, the thread
/// that hands work out works too, so `n` compute threads can keep up to `n + 1` cores busy.
pub fn init_task_pools(compute_threads: Option<usize>) -> usize {
    let mut options = TaskPoolOptions::default();
    if let Some(n) = compute_threads {
        options.compute.min_threads = n;
        options.compute.max_threads = n;
    }
    options.create_default_pools();
    ComputeTaskPool::get().thread_num()
}

/// CPU time used so far by this process, all threads, user and system
/// (`CLOCK_PROCESS_CPUTIME_ID`); zero where that clock is not available.
pub fn process_cpu_time() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` through a valid pointer.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } == 0;
    if ok {
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    } else {
        Duration::ZERO
    }
}

/// Whether this build has the `parallel` feature (`impetus3d/parallel`, which turns on
/// `bevy_tasks/multi_threaded`, the pools' threads, for the whole binary).
pub const PARALLEL_BUILD: bool = cfg!(feature = "parallel");

/// A built scene: its world, the dynamic bodies with their spawn positions, and the joints.
pub struct Scene {
    /// The engine's world; every [`Sim::step`] is one physics step.
    pub sim: Box<dyn Sim>,
    /// The engine the scene is built in.
    pub engine: Engine,
    /// The dynamic bodies, in spawn order, with their spawn positions.
    pub bodies: Vec<(usize, Vec3)>,
    /// The joints, as the scene defined them.
    pub joints: Vec<JointDef>,
    /// The chain's static anchor body, if any.
    pub anchor: Option<usize>,
}

/// The time each step of a run took, and the process CPU time of the whole run.
pub struct StepTimes {
    /// Wall-clock time of each step, in order.
    pub steps: Vec<Duration>,
    /// CPU time of the whole process (every thread) over the run.
    pub cpu: Duration,
}

impl StepTimes {
    /// The whole run's wall-clock time.
    pub fn total(&self) -> Duration {
        self.steps.iter().sum()
    }

    /// The 95th-percentile step (nearest rank).
    pub fn p95(&self) -> Duration {
        let mut sorted = self.steps.clone();
        sorted.sort();
        let rank = (0.95 * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }
}

impl Scene {
    /// A scene in `engine` with nothing in it yet.
    pub fn empty(engine: Engine) -> Self {
        Scene {
            sim: engines::new_sim(engine),
            engine,
            bodies: Vec::new(),
            joints: Vec::new(),
            anchor: None,
        }
    }

    /// Adds a body; a dynamic one is listed in [`Scene::bodies`].
    pub fn add(&mut self, body: BodyDef) -> usize {
        let handle = self.sim.add_body(&body);
        if body.motion == Motion::Dynamic {
            self.bodies.push((handle, body.position));
        }
        handle
    }

    /// Adds a joint and lists it in [`Scene::joints`].
    pub fn join(&mut self, joint: JointDef) {
        self.sim.add_joint(&joint);
        self.joints.push(joint);
    }

    /// Runs `steps` physics steps and returns the wall-clock time they took.
    pub fn step(&mut self, steps: usize) -> Duration {
        let start = Instant::now();
        for _ in 0..steps {
            self.sim.step();
        }
        start.elapsed()
    }

    /// Runs `steps` physics steps, timing each. On a machine other processes are loading, the
    /// CPU time grows much less than the wall-clock time; in a parallel build it can exceed it.
    pub fn step_timed(&mut self, steps: usize) -> StepTimes {
        let cpu = process_cpu_time();
        let steps = (0..steps)
            .map(|_| {
                let start = Instant::now();
                self.sim.step();
                start.elapsed()
            })
            .collect();
        StepTimes {
            steps,
            cpu: process_cpu_time().saturating_sub(cpu),
        }
    }

    /// A body's pose.
    pub fn pose(&self, body: usize) -> (Vec3, Quat) {
        self.sim.pose(body)
    }

    /// World position of a body-local point.
    pub fn world_point(&self, body: usize, local: Vec3) -> Vec3 {
        let (p, q) = self.pose(body);
        p + q * local
    }

    /// Distance between the two world anchor points of every joint, m.
    pub fn joint_errors(&self) -> Vec<f32> {
        self.joints
            .iter()
            .map(|j| {
                self.world_point(j.a, j.anchor_a)
                    .distance(self.world_point(j.b, j.anchor_b))
            })
            .collect()
    }

    /// The largest distance of any dynamic body from its spawn position, m.
    pub fn max_displacement(&self) -> f32 {
        self.bodies
            .iter()
            .map(|&(e, p0)| self.pose(e).0.distance(p0))
            .fold(0.0, f32::max)
    }

    /// Mean height of the dynamic bodies' positions, m.
    pub fn mean_height(&self) -> f32 {
        let sum: f64 = self
            .bodies
            .iter()
            .map(|&(e, _)| self.pose(e).0.y as f64)
            .sum();
        (sum / self.bodies.len() as f64) as f32
    }

    /// Mean height of the dynamic bodies' spawn positions, m.
    pub fn mean_spawn_height(&self) -> f32 {
        let sum: f64 = self.bodies.iter().map(|&(_, p)| p.y as f64).sum();
        (sum / self.bodies.len() as f64) as f32
    }

    /// The dynamic bodies' positions, in spawn order.
    pub fn positions(&self) -> Vec<Vec3> {
        self.bodies.iter().map(|&(e, _)| self.pose(e).0).collect()
    }

    /// Chain stretch: (distance from the anchor's attachment point to the bottom point of the
    /// last link) / (rest length = 1 m per link) − 1.
    pub fn chain_stretch(&self) -> f32 {
        let anchor = self.anchor.expect("a chain");
        let top = self.world_point(anchor, Vec3::new(0.0, -0.5, 0.0));
        let last = self.bodies.last().unwrap().0;
        let bottom = self.world_point(last, Vec3::new(0.0, -0.5, 0.0));
        top.distance(bottom) / self.bodies.len() as f32 - 1.0
    }

    /// Unit-cube overlap statistics computed from the poses alone: the deepest penetration of a
    /// cube into the ground (top face y = 0), the deepest cube–cube penetration (exact
    /// separating-axis depth of two boxes), how many cubes are below the ground's top face
    /// entirely (fell through) and the height of the highest cube centre.
    pub fn cube_overlaps(&self) -> CubeOverlaps {
        let poses: Vec<(Vec3, Quat)> = self.bodies.iter().map(|&(e, _)| self.pose(e)).collect();
        let mut out = CubeOverlaps::default();
        for &(p, q) in &poses {
            let mut lowest = f32::INFINITY;
            for corner in 0..8 {
                let local = Vec3::new(
                    if corner & 1 == 0 { -0.5 } else { 0.5 },
                    if corner & 2 == 0 { -0.5 } else { 0.5 },
                    if corner & 4 == 0 { -0.5 } else { 0.5 },
                );
                lowest = lowest.min((p + q * local).y);
            }
            out.max_ground_penetration = out.max_ground_penetration.max(-lowest);
            if p.y < -0.5 {
                out.fell_through += 1;
            }
            out.highest = out.highest.max(p.y);
        }
        // Spatial hash on the centres: two unit cubes can only touch if their centres are less
        // than √3 m apart, so cells of 2 m and the 27 cells around each cube find every pair.
        let cell = |p: Vec3| ((p / 2.0).floor()).as_ivec3();
        let mut grid: std::collections::HashMap<IVec3, Vec<usize>> = Default::default();
        for (i, &(p, _)) in poses.iter().enumerate() {
            grid.entry(cell(p)).or_default().push(i);
        }
        for (i, &(p, q)) in poses.iter().enumerate() {
            let c = cell(p);
            for dx in -1..=1 {
                for dy in -1..=1 {
                    for dz in -1..=1 {
                        let Some(others) = grid.get(&(c + IVec3::new(dx, dy, dz))) else {
                            continue;
                        };
                        for &j in others {
                            if j <= i {
                                continue;
                            }
                            let (p2, q2) = poses[j];
                            if p.distance_squared(p2) >= 3.0 {
                                continue;
                            }
                            let depth = box_penetration(p, q, p2, q2);
                            if depth > 0.0 {
                                out.overlapping_pairs += 1;
                            }
                            out.max_cube_penetration = out.max_cube_penetration.max(depth);
                        }
                    }
                }
            }
        }
        out
    }
}

/// See [`Scene::cube_overlaps`]. Lengths in m.
#[derive(Clone, Copy, Debug, Default)]
pub struct CubeOverlaps {
    /// Deepest corner of any cube below the ground's top face (y = 0), m.
    pub max_ground_penetration: f32,
    /// Deepest cube–cube penetration, m.
    pub max_cube_penetration: f32,
    /// Cube pairs that overlap at all.
    pub overlapping_pairs: usize,
    /// Cubes whose centre is below y = −0.5 m (fell through the ground).
    pub fell_through: usize,
    /// Height of the highest cube centre.
    pub highest: f32,
}

/// Penetration depth of two unit cubes (the smallest overlap over the 15 separating axes), or a
/// non-positive number when they are apart.
fn box_penetration(p1: Vec3, q1: Quat, p2: Vec3, q2: Quat) -> f32 {
    let a = [q1 * Vec3::X, q1 * Vec3::Y, q1 * Vec3::Z];
    let b = [q2 * Vec3::X, q2 * Vec3::Y, q2 * Vec3::Z];
    let d = p2 - p1;
    let mut depth = f32::INFINITY;
    let mut test = |axis: Vec3| {
        let len = axis.length();
        if len < 1e-6 {
            return;
        }
        let n = axis / len;
        let r1: f32 = a.iter().map(|u| 0.5 * u.dot(n).abs()).sum();
        let r2: f32 = b.iter().map(|u| 0.5 * u.dot(n).abs()).sum();
        depth = depth.min(r1 + r2 - d.dot(n).abs());
    };
    for &u in a.iter().chain(b.iter()) {
        test(u);
    }
    for &u in &a {
        for &v in &b {
            test(u.cross(v));
        }
    }
    depth
}
