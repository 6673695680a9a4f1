//! The same scenes in impetus3d, bevy_rapier3d 0.36 and avian3d 0.7, stepped headless one
//! physics step per `App::update`, and engine-independent quality metrics read from each body's
//! `Transform` (all three engines write their poses back to `Transform` every step).
//!
//! Each scene is one generic function ([`pyramid`], [`pile`], [`joint_grid`], [`chain`],
//! [`free_balls`]) built on the handful of primitives of the [`Backend`] trait (a ground, a cube,
//! a ball, a spherical joint, ...), which each engine implements with its own components. So the
//! scenes are the same in every engine by construction: same shapes, positions, anchors,
//! timestep, no sleeping. [`SceneKind`] names the timed scenes and their timing windows.
//!
//! Settings (see the README for the full list): every engine at its defaults except
//!
//! - the timestep: 1/60 s for every scene in every engine, one physics step per update
//!   (impetus3d and avian3d: `Time<Fixed>` = 1/60 s in `FixedPostUpdate`, their default
//!   schedule; bevy_rapier3d: `TimestepMode::Fixed { dt: 1/60, substeps: 1 }` in `PostUpdate`,
//!   its default schedule), driven by `TimeUpdateStrategy::ManualDuration(1/60 s)`;
//! - sleeping disabled on every dynamic body (impetus3d / avian3d `SleepingDisabled`,
//!   bevy_rapier3d `Sleeping::disabled()`), so a resting scene costs its full price;
//! - the joint grid's balls collide with nothing (impetus3d / avian3d `CollisionLayers::NONE`,
//!   bevy_rapier3d `CollisionGroups::new(Group::NONE, Group::NONE)`).
//!
//! Engine defaults that differ and are left alone: substeps / iterations (impetus3d 4 substeps;
//! avian3d 6 substeps; rapier 1 step with 4 solver iterations, each with one internal PGS and one
//! stabilisation iteration), collider density (impetus3d 1000 kg/m³, the others 1 kg/m³; it
//! cancels out in these scenes, where every dynamic body has the same mass), contact softness.
//!
//! Threads: every app is built with `MinimalPlugins`, whose `TaskPoolPlugin` creates Bevy's
//! process-wide task pools on the first app only. [`init_task_pools`] creates them first, with a
//! chosen number of compute threads; it matters only in a build with the `parallel` feature
//! (`impetus3d/parallel`, which gives the pools real threads; Bevy's executor stays
//! single-threaded for every engine).

#![warn(missing_docs)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bevy::app::TaskPoolOptions;
use bevy::prelude::*;
use bevy::tasks::ComputeTaskPool;
use bevy::time::TimeUpdateStrategy;
use bevy::transform::StaticTransformOptimizations;

/// Physics step for every scene and every engine, s.
pub const DT: f64 = 1.0 / 60.0;

/// One of the three engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// impetus3d, this repository (by path).
    Impetus,
    /// bevy_rapier3d 0.36.0.
    Rapier,
    /// avian3d 0.7.0.
    Avian,
}

impl Engine {
    /// All three, in the order the tables list them.
    pub const ALL: [Engine; 3] = [Engine::Impetus, Engine::Rapier, Engine::Avian];

    /// The crate name, used as the bench id and column header.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Impetus => "impetus3d",
            Engine::Rapier => "bevy_rapier3d",
            Engine::Avian => "avian3d",
        }
    }

    /// Parses a crate name or a short name (`impetus`, `rapier`, `avian`).
    pub fn parse(name: &str) -> Option<Engine> {
        match name {
            "impetus3d" | "impetus" => Some(Engine::Impetus),
            "bevy_rapier3d" | "rapier" | "rapier3d" => Some(Engine::Rapier),
            "avian3d" | "avian" => Some(Engine::Avian),
            _ => None,
        }
    }
}

/// A spherical joint as the scene defined it: body `a`'s local anchor must meet body `b`'s.
#[derive(Clone, Copy, Debug)]
pub struct JointSpec {
    /// The first body.
    pub a: Entity,
    /// The second body.
    pub b: Entity,
    /// The anchor in `a`'s local frame.
    pub anchor_a: Vec3,
    /// The anchor in `b`'s local frame.
    pub anchor_b: Vec3,
}

/// A built scene: its app (every further `update` is one physics step of [`DT`]), the dynamic
/// bodies with their spawn positions, and the joints.
pub struct Scene {
    /// The headless app; every `update` is one physics step.
    pub app: App,
    /// The engine the scene is built in.
    pub engine: Engine,
    /// The dynamic bodies, in spawn order, with their spawn positions.
    pub bodies: Vec<(Entity, Vec3)>,
    /// The joints, as the scene defined them.
    pub joints: Vec<JointSpec>,
    /// The chain's static anchor body, if any.
    pub anchor: Option<Entity>,
}

/// The scene primitives, one implementation per engine.
pub trait Backend {
    /// A headless app (`MinimalPlugins` + the engine) in which every further `update` is one
    /// physics step of [`DT`]; the first update has already run.
    fn app() -> App;
    /// A static box of full size `size` (m) centred on the y axis whose top face is at y = 0.
    fn ground(world: &mut World, size: Vec3);
    /// A dynamic unit cube that never sleeps.
    fn cube(world: &mut World, position: Vec3) -> Entity;
    /// A ball of `radius`; static or dynamic (never sleeping); colliding with everything or
    /// with nothing.
    fn ball(
        world: &mut World,
        position: Vec3,
        radius: f32,
        dynamic: bool,
        collides: bool,
    ) -> Entity;
    /// A static body without a collider.
    fn anchor(world: &mut World, position: Vec3) -> Entity;
    /// A spherical joint between `a` and `b` at the given local anchors.
    fn spherical(world: &mut World, a: Entity, b: Entity, anchor_a: Vec3, anchor_b: Vec3);
    /// Sets a dynamic body's linear velocity.
    fn kick(world: &mut World, body: Entity, velocity: Vec3);
}

/// A headless app with `MinimalPlugins` stepping by exactly [`DT`] per update.
fn minimal_app() -> App {
    let mut app = App::new();
    app.add_plugins(MinimalPlugins)
        .insert_resource(Time::<Fixed>::from_seconds(DT))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            DT,
        )));
    app
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

/// What `App::run` does before its first update and a hand-stepped app must do itself: finish
/// and clean up the plugins, then run the first (empty) update.
fn finish_and_update(app: &mut App) {
    app.finish();
    app.cleanup();
    app.update();
}

/// impetus3d's implementation of the scene primitives.
pub mod impetus {
    use super::*;
    use impetus3d::prelude as ip;
    use impetus3d::prelude::Joint as _;

    /// The impetus3d [`Backend`].
    pub struct Impetus;

    impl Backend for Impetus {
        fn app() -> App {
            let mut app = minimal_app();
            // Default plugin: steps in FixedPostUpdate by Time<Fixed>'s timestep, 4 substeps.
            app.add_plugins(ip::PhysicsPlugin::default());
            finish_and_update(&mut app);
            app
        }
        fn ground(world: &mut World, size: Vec3) {
            world.spawn((
                ip::RigidBody::Static,
                ip::Collider::cuboid(size.x, size.y, size.z),
                Transform::from_xyz(0.0, -0.5 * size.y, 0.0),
            ));
        }
        fn cube(world: &mut World, position: Vec3) -> Entity {
            world
                .spawn((
                    ip::RigidBody::Dynamic,
                    ip::Collider::cuboid(1.0, 1.0, 1.0),
                    ip::SleepingDisabled,
                    Transform::from_translation(position),
                ))
                .id()
        }
        fn ball(
            world: &mut World,
            position: Vec3,
            radius: f32,
            dynamic: bool,
            collides: bool,
        ) -> Entity {
            let mut e = world.spawn((
                ip::Collider::sphere(radius),
                Transform::from_translation(position),
            ));
            if dynamic {
                e.insert((ip::RigidBody::Dynamic, ip::SleepingDisabled));
            } else {
                e.insert(ip::RigidBody::Static);
            }
            if !collides {
                e.insert(ip::CollisionLayers::NONE);
            }
            e.id()
        }
        fn anchor(world: &mut World, position: Vec3) -> Entity {
            world
                .spawn((ip::RigidBody::Static, Transform::from_translation(position)))
                .id()
        }
        fn spherical(world: &mut World, a: Entity, b: Entity, anchor_a: Vec3, anchor_b: Vec3) {
            world.spawn(
                ip::SphericalJoint::new(a, b)
                    .with_local_anchor_1(anchor_a)
                    .with_local_anchor_2(anchor_b),
            );
        }
        fn kick(world: &mut World, body: Entity, velocity: Vec3) {
            world.entity_mut(body).insert(ip::LinearVelocity(velocity));
        }
    }
}

/// bevy_rapier3d's implementation of the scene primitives.
pub mod rapier {
    use super::*;
    use bevy_rapier3d::prelude as rp;

    /// The bevy_rapier3d [`Backend`].
    pub struct Rapier;

    impl Backend for Rapier {
        fn app() -> App {
            let mut app = minimal_app();
            // Default plugin: runs in PostUpdate (every update). `TimestepMode::Fixed` with one
            // substep makes every update exactly one rapier step of DT (the default,
            // `Variable`, would step by the frame's delta, which here is also DT; Fixed makes
            // it explicit). Everything else (IntegrationParameters) is rapier's default.
            app.add_plugins(rp::RapierPhysicsPlugin::<rp::NoUserData>::default())
                .insert_resource(rp::TimestepMode::Fixed {
                    dt: DT as f32,
                    substeps: 1,
                })
                // bevy_rapier adds Bevy's `propagate_parent_transforms` to its own sets. With
                // `bevy/multi_threaded` (which no build of this binary turns on; a user's might)
                // that system is the parallel variant, which reads this resource, normally
                // inserted by `TransformPlugin` (not part of `MinimalPlugins`): without it, the
                // first update panics. `Disabled` propagates every tree like the serial variant
                // does; no rapier body in these scenes has a child with a `Transform` anyway.
                .insert_resource(StaticTransformOptimizations::Disabled);
            finish_and_update(&mut app);
            app
        }
        fn ground(world: &mut World, size: Vec3) {
            // Rapier's cuboid takes half-extents.
            let half = 0.5 * size;
            world.spawn((
                rp::RigidBody::Fixed,
                rp::Collider::cuboid(half.x, half.y, half.z),
                Transform::from_xyz(0.0, -half.y, 0.0),
            ));
        }
        fn cube(world: &mut World, position: Vec3) -> Entity {
            world
                .spawn((
                    rp::RigidBody::Dynamic,
                    rp::Collider::cuboid(0.5, 0.5, 0.5),
                    rp::Sleeping::disabled(),
                    Transform::from_translation(position),
                ))
                .id()
        }
        fn ball(
            world: &mut World,
            position: Vec3,
            radius: f32,
            dynamic: bool,
            collides: bool,
        ) -> Entity {
            let mut e = world.spawn((
                rp::Collider::ball(radius),
                Transform::from_translation(position),
            ));
            if dynamic {
                e.insert((rp::RigidBody::Dynamic, rp::Sleeping::disabled()));
            } else {
                e.insert(rp::RigidBody::Fixed);
            }
            if !collides {
                e.insert(rp::CollisionGroups::new(rp::Group::NONE, rp::Group::NONE));
            }
            e.id()
        }
        fn anchor(world: &mut World, position: Vec3) -> Entity {
            world
                .spawn((rp::RigidBody::Fixed, Transform::from_translation(position)))
                .id()
        }
        fn spherical(world: &mut World, a: Entity, b: Entity, anchor_a: Vec3, anchor_b: Vec3) {
            // An `ImpulseJoint` sits on (a child of) its second body and names its first: a
            // body with several joints carries them on child entities.
            let joint = rp::SphericalJointBuilder::new()
                .local_anchor1(anchor_a)
                .local_anchor2(anchor_b);
            world.spawn((rp::ImpulseJoint::new(a, joint), ChildOf(b)));
        }
        fn kick(world: &mut World, body: Entity, velocity: Vec3) {
            world
                .entity_mut(body)
                .insert(rp::Velocity::linear(velocity));
        }
    }
}

/// avian3d's implementation of the scene primitives.
pub mod avian {
    use super::*;
    use avian3d::prelude as av;

    /// The avian3d [`Backend`].
    pub struct Avian;

    impl Backend for Avian {
        fn app() -> App {
            let mut app = minimal_app();
            // Default plugins: step in FixedPostUpdate by Time<Fixed>'s timestep, 6 substeps,
            // XPBD joints. (Avian registers its diagnostics resources in `Plugin::finish`,
            // which `finish_and_update` runs: without it the first physics step panics.)
            app.add_plugins(av::PhysicsPlugins::default());
            finish_and_update(&mut app);
            app
        }
        fn ground(world: &mut World, size: Vec3) {
            world.spawn((
                av::RigidBody::Static,
                av::Collider::cuboid(size.x, size.y, size.z),
                Transform::from_xyz(0.0, -0.5 * size.y, 0.0),
            ));
        }
        fn cube(world: &mut World, position: Vec3) -> Entity {
            world
                .spawn((
                    av::RigidBody::Dynamic,
                    av::Collider::cuboid(1.0, 1.0, 1.0),
                    av::SleepingDisabled,
                    Transform::from_translation(position),
                ))
                .id()
        }
        fn ball(
            world: &mut World,
            position: Vec3,
            radius: f32,
            dynamic: bool,
            collides: bool,
        ) -> Entity {
            let mut e = world.spawn((
                av::Collider::sphere(radius),
                Transform::from_translation(position),
            ));
            if dynamic {
                e.insert((av::RigidBody::Dynamic, av::SleepingDisabled));
            } else {
                e.insert(av::RigidBody::Static);
            }
            if !collides {
                e.insert(av::CollisionLayers::NONE);
            }
            e.id()
        }
        fn anchor(world: &mut World, position: Vec3) -> Entity {
            world
                .spawn((av::RigidBody::Static, Transform::from_translation(position)))
                .id()
        }
        fn spherical(world: &mut World, a: Entity, b: Entity, anchor_a: Vec3, anchor_b: Vec3) {
            world.spawn(
                av::SphericalJoint::new(a, b)
                    .with_local_anchor1(anchor_a)
                    .with_local_anchor2(anchor_b),
            );
        }
        fn kick(world: &mut World, body: Entity, velocity: Vec3) {
            world.entity_mut(body).insert(av::LinearVelocity(velocity));
        }
    }
}

fn engine_of<B: Backend + 'static>() -> Engine {
    let id = std::any::TypeId::of::<B>();
    if id == std::any::TypeId::of::<impetus::Impetus>() {
        Engine::Impetus
    } else if id == std::any::TypeId::of::<rapier::Rapier>() {
        Engine::Rapier
    } else {
        Engine::Avian
    }
}

fn empty_scene<B: Backend + 'static>() -> Scene {
    Scene {
        app: B::app(),
        engine: engine_of::<B>(),
        bodies: Vec::new(),
        joints: Vec::new(),
        anchor: None,
    }
}

/// The ground of the pyramid (base 20) and the pile: 200 × 1 × 200 m.
pub const GROUND: Vec3 = Vec3::new(200.0, 1.0, 200.0);

/// The ground of the large pyramid (base 100), as in Box3D's benchmark: 400 × 2 × 400 m.
pub const LARGE_GROUND: Vec3 = Vec3::new(400.0, 2.0, 400.0);

/// Scenes 1 and 2: a one-layer pyramid of `base` rows of unit cubes (rows of `base`, `base` − 1,
/// …, 1: 210 cubes for a base of 20, 5050 for a base of 100) on a static `ground` box (full size,
/// top face at y = 0), symmetric about x = 0, in the plane z = 0, cubes exactly touching. The
/// last body is the top cube.
pub fn pyramid<B: Backend + 'static>(base: usize, ground: Vec3) -> Scene {
    let mut scene = empty_scene::<B>();
    let world = scene.app.world_mut();
    B::ground(world, ground);
    for row in 0..base {
        let count = base - row;
        for i in 0..count {
            let position = Vec3::new(i as f32 - 0.5 * (count - 1) as f32, 0.5 + row as f32, 0.0);
            let cube = B::cube(world, position);
            scene.bodies.push((cube, position));
        }
    }
    scene
}

/// Scene 3: an `n × n × n` grid of unit cubes 1.1 m apart, its bottom layer's centres 3.5 m above
/// the [`GROUND`], dropped.
pub fn pile<B: Backend + 'static>(n: usize) -> Scene {
    let mut scene = empty_scene::<B>();
    let world = scene.app.world_mut();
    B::ground(world, GROUND);
    let offset = 0.5 * (n - 1) as f32 * 1.1;
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                let position = Vec3::new(
                    i as f32 * 1.1 - offset,
                    3.5 + j as f32 * 1.1,
                    k as f32 * 1.1 - offset,
                );
                let cube = B::cube(world, position);
                scene.bodies.push((cube, position));
            }
        }
    }
    scene
}

/// Scene 4: an `n × n` grid of balls (radius 0.4 m, 1 m apart in the vertical x–y plane,
/// colliding with nothing), each joined to its right and lower neighbours by a spherical joint
/// with anchors ±0.5 m; the two top corners are static; no ground.
pub fn joint_grid<B: Backend + 'static>(n: usize) -> Scene {
    let mut scene = empty_scene::<B>();
    let world = scene.app.world_mut();
    let mut balls = Vec::with_capacity(n * n);
    for row in 0..n {
        for column in 0..n {
            let corner = row == 0 && (column == 0 || column == n - 1);
            let position = Vec3::new(column as f32, -(row as f32), 0.0);
            let ball = B::ball(world, position, 0.4, !corner, false);
            if !corner {
                scene.bodies.push((ball, position));
            }
            balls.push(ball);
        }
    }
    for row in 0..n {
        for column in 0..n {
            let here = balls[row * n + column];
            let mut join = |other: Entity, anchor_a: Vec3, anchor_b: Vec3| {
                B::spherical(world, here, other, anchor_a, anchor_b);
                scene.joints.push(JointSpec {
                    a: here,
                    b: other,
                    anchor_a,
                    anchor_b,
                });
            };
            if column + 1 < n {
                join(
                    balls[row * n + column + 1],
                    Vec3::new(0.5, 0.0, 0.0),
                    Vec3::new(-0.5, 0.0, 0.0),
                );
            }
            if row + 1 < n {
                join(
                    balls[(row + 1) * n + column],
                    Vec3::new(0.0, -0.5, 0.0),
                    Vec3::new(0.0, 0.5, 0.0),
                );
            }
        }
    }
    scene
}

/// Scene 5: `links` balls (radius 0.25 m, colliding normally) whose centres are 1 m apart straight
/// below a static anchor body at the origin, each joined to the one above (the first to the
/// anchor) by a spherical joint with anchors ±0.5 m; no ground. With `kick`, the last link
/// starts at 5 m/s sideways so the chain keeps swinging (the timing scene); without, it hangs
/// at rest (the stretch measurement).
pub fn chain<B: Backend + 'static>(links: usize, kick: bool) -> Scene {
    let mut scene = empty_scene::<B>();
    let world = scene.app.world_mut();
    let anchor = B::anchor(world, Vec3::ZERO);
    scene.anchor = Some(anchor);
    let mut previous = anchor;
    let up = Vec3::new(0.0, 0.5, 0.0);
    for i in 0..links {
        let position = Vec3::new(0.0, -(i as f32 + 1.0), 0.0);
        let link = B::ball(world, position, 0.25, true, true);
        if kick && i == links - 1 {
            B::kick(world, link, Vec3::new(5.0, 0.0, 0.0));
        }
        B::spherical(world, previous, link, -up, up);
        scene.joints.push(JointSpec {
            a: previous,
            b: link,
            anchor_a: -up,
            anchor_b: up,
        });
        scene.bodies.push((link, position));
        previous = link;
    }
    scene
}

/// Scene 6: a 3D grid of `counts.x × counts.y × counts.z` dynamic balls of radius 0.5 m,
/// colliding normally, `spacing` m apart (centre to centre) with the lowest layer's centres at
/// [`FREE_BALLS_BOTTOM`], no ground: all fall freely under gravity, side by side, and never
/// touch (with a spacing of 3 m, the gaps between their bounding boxes are 2 m). What it costs is
/// the per-body work of a step: integration, broad-phase updates, writing poses back.
pub fn free_balls<B: Backend + 'static>(counts: UVec3, spacing: f32) -> Scene {
    let mut scene = empty_scene::<B>();
    let world = scene.app.world_mut();
    let centre = 0.5 * (counts.as_vec3() - Vec3::ONE) * spacing;
    for i in 0..counts.x {
        for j in 0..counts.y {
            for k in 0..counts.z {
                let position = Vec3::new(
                    i as f32 * spacing - centre.x,
                    FREE_BALLS_BOTTOM + j as f32 * spacing,
                    k as f32 * spacing - centre.z,
                );
                let ball = B::ball(world, position, 0.5, true, true);
                scene.bodies.push((ball, position));
            }
        }
    }
    scene
}

/// Height of the lowest layer of [`free_balls`], m.
pub const FREE_BALLS_BOTTOM: f32 = 10.0;

/// The timed scenes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SceneKind {
    /// [`pyramid`] of base 20 (210 cubes) on the 200 × 1 × 200 m [`GROUND`].
    Pyramid,
    /// [`pyramid`] of base 100 (5050 cubes) on the 400 × 2 × 400 m [`LARGE_GROUND`] (Box3D's
    /// large-pyramid benchmark).
    LargePyramid,
    /// [`pile`] of 16 × 16 × 16 = 4096 cubes.
    Pile,
    /// [`joint_grid`] of 40 × 40 balls, 3120 joints.
    JointGrid,
    /// [`chain`] of 100 links, the last kicked sideways so it keeps swinging.
    Chain,
    /// [`chain`] of 100 links hanging at rest (the stretch measurement).
    ChainAtRest,
    /// [`free_balls`]: 25 × 16 × 25 = 10,000 balls 3 m apart in free fall.
    Free10k,
}

impl SceneKind {
    /// Every timed scene, in the order the tables list them.
    pub const ALL: [SceneKind; 7] = [
        SceneKind::Pyramid,
        SceneKind::LargePyramid,
        SceneKind::Pile,
        SceneKind::JointGrid,
        SceneKind::Chain,
        SceneKind::ChainAtRest,
        SceneKind::Free10k,
    ];

    /// The short name used on the command line, in bench ids and in the summary table.
    pub fn name(self) -> &'static str {
        match self {
            SceneKind::Pyramid => "pyramid",
            SceneKind::LargePyramid => "large_pyramid",
            SceneKind::Pile => "pile",
            SceneKind::JointGrid => "grid",
            SceneKind::Chain => "chain",
            SceneKind::ChainAtRest => "chain_at_rest",
            SceneKind::Free10k => "free10k",
        }
    }

    /// Builds the scene in `engine`.
    pub fn build(self, engine: Engine) -> Scene {
        match engine {
            Engine::Impetus => self.build_in::<impetus::Impetus>(),
            Engine::Rapier => self.build_in::<rapier::Rapier>(),
            Engine::Avian => self.build_in::<avian::Avian>(),
        }
    }

    fn build_in<B: Backend + 'static>(self) -> Scene {
        match self {
            SceneKind::Pyramid => pyramid::<B>(20, GROUND),
            SceneKind::LargePyramid => pyramid::<B>(100, LARGE_GROUND),
            SceneKind::Pile => pile::<B>(16),
            SceneKind::JointGrid => joint_grid::<B>(40),
            SceneKind::Chain => chain::<B>(100, true),
            SceneKind::ChainAtRest => chain::<B>(100, false),
            SceneKind::Free10k => free_balls::<B>(UVec3::new(25, 16, 25), 3.0),
        }
    }

    /// `(warm_up, end)`: the steps run untimed after building the scene, and the step at which
    /// timing stops, so that every engine is timed over the same window of the scene's life
    /// (steps `warm_up + 1 ..= end`). The binary measures quality at `end`; the criterion bench
    /// starts over from a freshly built scene when it reaches `end`.
    pub fn timing_window(self) -> (usize, usize) {
        match self {
            SceneKind::Pyramid => (5, 600),
            SceneKind::LargePyramid => (5, 200),
            SceneKind::Pile => (60, 300),
            SceneKind::JointGrid => (10, 300),
            SceneKind::Chain => (10, 610),
            SceneKind::ChainAtRest => (10, 600),
            SceneKind::Free10k => (5, 125),
        }
    }

    /// The number of timed steps, `end − warm_up`.
    pub fn timed_steps(self) -> usize {
        let (warm_up, end) = self.timing_window();
        end - warm_up
    }
}

/// Builds the chain that hangs at rest (no kick) in `engine`.
pub fn resting_chain(engine: Engine) -> Scene {
    SceneKind::ChainAtRest.build(engine)
}

/// A single dynamic ball falling freely for a sanity check of the stepping.
pub fn free_fall(engine: Engine) -> Scene {
    fn build<B: Backend + 'static>() -> Scene {
        let mut scene = empty_scene::<B>();
        let ball = B::ball(scene.app.world_mut(), Vec3::ZERO, 0.5, true, true);
        scene.bodies.push((ball, Vec3::ZERO));
        scene
    }
    match engine {
        Engine::Impetus => build::<impetus::Impetus>(),
        Engine::Rapier => build::<rapier::Rapier>(),
        Engine::Avian => build::<avian::Avian>(),
    }
}

impl Scene {
    /// Runs `steps` physics steps and returns the wall-clock time they took.
    pub fn step(&mut self, steps: usize) -> Duration {
        let start = Instant::now();
        for _ in 0..steps {
            self.app.update();
        }
        start.elapsed()
    }

    /// Runs `steps` physics steps and returns the wall-clock time and the CPU time of the whole
    /// process (every thread) they took. On a machine other processes are loading, the CPU
    /// time grows much less than the wall-clock time; in a parallel build it can exceed it.
    pub fn step_timed(&mut self, steps: usize) -> (Duration, Duration) {
        let cpu = process_cpu_time();
        let start = Instant::now();
        for _ in 0..steps {
            self.app.update();
        }
        (start.elapsed(), process_cpu_time().saturating_sub(cpu))
    }

    /// A body's pose, read from its `Transform` (every engine writes it back each step).
    pub fn pose(&self, body: Entity) -> (Vec3, Quat) {
        let t = self
            .app
            .world()
            .get::<Transform>(body)
            .expect("body has a Transform");
        (t.translation, t.rotation)
    }

    /// World position of a body-local point.
    pub fn world_point(&self, body: Entity, local: Vec3) -> Vec3 {
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
        let mut grid: HashMap<IVec3, Vec<usize>> = HashMap::new();
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
    /// Height of the highest cube centre, m.
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
