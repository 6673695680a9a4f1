//! The same four scenes in impetus3d, bevy_rapier3d 0.36 and avian3d 0.7, stepped headless one
//! physics step per `App::update`, and engine-independent quality metrics read from each body's
//! `Transform` (all three engines write their poses back to `Transform` every step).
//!
//! Each scene is one generic function ([`pyramid`], [`pile`], [`joint_grid`], [`chain`]) built on
//! the handful of primitives of the [`Backend`] trait (a ground, a cube, a ball, a spherical
//! joint, ...), which each engine implements with its own components. So the scenes are the same
//! in every engine by construction: same shapes, positions, anchors, timestep, no sleeping.
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

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;

/// Physics step for every scene and every engine, s.
pub const DT: f64 = 1.0 / 60.0;

/// One of the three engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Impetus,
    Rapier,
    Avian,
}

impl Engine {
    pub const ALL: [Engine; 3] = [Engine::Impetus, Engine::Rapier, Engine::Avian];

    /// The crate name, used as the bench id and column header.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Impetus => "impetus3d",
            Engine::Rapier => "bevy_rapier3d",
            Engine::Avian => "avian3d",
        }
    }
}

/// A spherical joint as the scene defined it: body `a`'s local anchor must meet body `b`'s.
#[derive(Clone, Copy, Debug)]
pub struct JointSpec {
    pub a: Entity,
    pub b: Entity,
    pub anchor_a: Vec3,
    pub anchor_b: Vec3,
}

/// A built scene: its app (every further `update` is one physics step of [`DT`]), the dynamic
/// bodies with their spawn positions, and the joints.
pub struct Scene {
    pub app: App,
    pub engine: Engine,
    pub bodies: Vec<(Entity, Vec3)>,
    pub joints: Vec<JointSpec>,
    /// The chain's static anchor body, if any.
    pub anchor: Option<Entity>,
}

/// The scene primitives, one implementation per engine.
pub trait Backend {
    /// A headless app (`MinimalPlugins` + the engine) in which every further `update` is one
    /// physics step of [`DT`]; the first update has already run.
    fn app() -> App;
    /// A static 200 × 1 × 200 m box whose top face is at y = 0.
    fn ground(world: &mut World);
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

/// What `App::run` does before its first update and a hand-stepped app must do itself: finish
/// and clean up the plugins, then run the first (empty) update.
fn finish_and_update(app: &mut App) {
    app.finish();
    app.cleanup();
    app.update();
}

pub mod impetus {
    use super::*;
    use impetus3d::prelude as ip;
    use impetus3d::prelude::Joint as _;

    pub struct Impetus;

    impl Backend for Impetus {
        fn app() -> App {
            let mut app = minimal_app();
            // Default plugin: steps in FixedPostUpdate by Time<Fixed>'s timestep, 4 substeps.
            app.add_plugins(ip::PhysicsPlugin::default());
            finish_and_update(&mut app);
            app
        }
        fn ground(world: &mut World) {
            world.spawn((
                ip::RigidBody::Static,
                ip::Collider::cuboid(200.0, 1.0, 200.0),
                Transform::from_xyz(0.0, -0.5, 0.0),
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

pub mod rapier {
    use super::*;
    use bevy_rapier3d::prelude as rp;

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
                });
            finish_and_update(&mut app);
            app
        }
        fn ground(world: &mut World) {
            // Rapier's cuboid takes half-extents.
            world.spawn((
                rp::RigidBody::Fixed,
                rp::Collider::cuboid(100.0, 0.5, 100.0),
                Transform::from_xyz(0.0, -0.5, 0.0),
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

pub mod avian {
    use super::*;
    use avian3d::prelude as av;

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
        fn ground(world: &mut World) {
            world.spawn((
                av::RigidBody::Static,
                av::Collider::cuboid(200.0, 1.0, 200.0),
                Transform::from_xyz(0.0, -0.5, 0.0),
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

/// Scene 1: a pyramid of `base` rows of unit cubes (210 cubes for a base of 20) on a static
/// ground, symmetric about x = 0, cubes exactly touching.
pub fn pyramid<B: Backend + 'static>(base: usize) -> Scene {
    let mut scene = empty_scene::<B>();
    let world = scene.app.world_mut();
    B::ground(world);
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

/// Scene 2: an `n × n × n` grid of unit cubes 1.1 m apart, its bottom layer's centres 3.5 m above
/// the ground, dropped.
pub fn pile<B: Backend + 'static>(n: usize) -> Scene {
    let mut scene = empty_scene::<B>();
    let world = scene.app.world_mut();
    B::ground(world);
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

/// Scene 3: an `n × n` grid of balls (radius 0.4 m, 1 m apart in the vertical x–y plane,
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

/// Scene 4: `links` balls (radius 0.25 m, colliding normally) whose centres are 1 m apart straight
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

/// The four scenes, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SceneKind {
    Pyramid,
    Pile,
    JointGrid,
    Chain,
}

impl SceneKind {
    /// Builds the timing version of this scene in `engine`.
    pub fn build(self, engine: Engine) -> Scene {
        match engine {
            Engine::Impetus => self.build_in::<impetus::Impetus>(),
            Engine::Rapier => self.build_in::<rapier::Rapier>(),
            Engine::Avian => self.build_in::<avian::Avian>(),
        }
    }

    fn build_in<B: Backend + 'static>(self) -> Scene {
        match self {
            SceneKind::Pyramid => pyramid::<B>(20),
            SceneKind::Pile => pile::<B>(16),
            SceneKind::JointGrid => joint_grid::<B>(40),
            SceneKind::Chain => chain::<B>(100, true),
        }
    }

    /// The steps run before timing starts and the step at which a timing run starts over from a
    /// freshly built scene, so every engine is timed over the same window of the scene's life.
    pub fn timing_window(self) -> (usize, usize) {
        match self {
            SceneKind::Pyramid => (5, 600),
            SceneKind::Pile => (60, 300),
            SceneKind::JointGrid => (10, 300),
            SceneKind::Chain => (10, 600),
        }
    }
}

/// Builds the chain that hangs at rest (no kick) in `engine`.
pub fn resting_chain(engine: Engine) -> Scene {
    match engine {
        Engine::Impetus => chain::<impetus::Impetus>(100, false),
        Engine::Rapier => chain::<rapier::Rapier>(100, false),
        Engine::Avian => chain::<avian::Avian>(100, false),
    }
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
    pub max_ground_penetration: f32,
    pub max_cube_penetration: f32,
    pub overlapping_pairs: usize,
    pub fell_through: usize,
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
