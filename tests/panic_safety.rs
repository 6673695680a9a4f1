//! A panic in user code during a step (a custom parry shape inside the parallel narrow phase,
//! a collision hook, a user constraint inside a substep) reaches the caller of `app.update()`
//! with its own message, and leaves nothing broken behind: the same world steps on, and a new
//! app in the same process steps, both on two threads, neither hanging.
//!
//! Bevy 0.19 drops every schedule a panic unwinds through (`World::try_schedule_scope` puts a
//! schedule back only when it returns), so the app whose update panicked has lost its `Main`
//! schedule and cannot `update()` again; the physics schedules are the engine's and it keeps
//! them, so the world steps on through `PhysicsSchedule` itself.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;
use std::time::Duration;

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use impetus3d::prelude::*;
use impetus3d::schedule::PARALLEL_COUNTERS;
use parry3d::bounding_volume::{Aabb, BoundingSphere};
use parry3d::mass_properties::MassProperties;
use parry3d::math::{Real, Vector};
use parry3d::query::{PointProjection, PointQuery, Ray, RayCast, RayIntersection};
use parry3d::shape::{Ball, FeatureId, Shape, ShapeType, TypedShape};

use crate::common::*;

/// Where the user code below panics: nowhere, on any thread, or only on threads other than
/// the test's (the compute pool's helper).
#[derive(Clone, Copy, PartialEq)]
enum Armed {
    Off,
    AnyThread,
    HelperThread(std::thread::ThreadId),
}

static ARMED: std::sync::Mutex<Armed> = std::sync::Mutex::new(Armed::Off);

/// The user code's panic message.
const MESSAGE: &str = "a bug in user code";

fn trip() {
    let armed = *ARMED.lock().unwrap_or_else(|e| e.into_inner());
    let here = std::thread::current().id();
    if armed == Armed::AnyThread || matches!(armed, Armed::HelperThread(test) if test != here) {
        panic!("{MESSAGE}");
    }
}

fn arm(armed: Armed) {
    *ARMED.lock().unwrap_or_else(|e| e.into_inner()) = armed;
}

/// A ball-shaped custom parry shape whose point projection, which the narrow phase calls for
/// each ball touching it, panics when armed.
#[derive(Clone)]
struct Tripwire(Ball);

impl PointQuery for Tripwire {
    fn project_local_point(&self, point: Vector, solid: bool) -> PointProjection {
        trip();
        self.0.project_local_point(point, solid)
    }

    fn project_local_point_and_get_feature(&self, point: Vector) -> (PointProjection, FeatureId) {
        trip();
        self.0.project_local_point_and_get_feature(point)
    }
}

impl RayCast for Tripwire {
    fn cast_local_ray_and_get_normal(
        &self,
        ray: &Ray,
        max_time_of_impact: Real,
        solid: bool,
    ) -> Option<RayIntersection> {
        self.0
            .cast_local_ray_and_get_normal(ray, max_time_of_impact, solid)
    }
}

impl Shape for Tripwire {
    fn compute_local_aabb(&self) -> Aabb {
        self.0.compute_local_aabb()
    }
    fn compute_local_bounding_sphere(&self) -> BoundingSphere {
        self.0.compute_local_bounding_sphere()
    }
    fn clone_dyn(&self) -> Box<dyn Shape> {
        Box::new(self.clone())
    }
    fn scale_dyn(&self, _: Vector, _: u32) -> Option<Box<dyn Shape>> {
        None
    }
    fn mass_properties(&self, density: Real) -> MassProperties {
        self.0.mass_properties(density)
    }
    fn shape_type(&self) -> ShapeType {
        ShapeType::Custom
    }
    fn as_typed_shape(&self) -> TypedShape<'_> {
        TypedShape::Custom(self)
    }
    fn ccd_thickness(&self) -> Real {
        self.0.ccd_thickness()
    }
    fn ccd_angular_thickness(&self) -> Real {
        self.0.ccd_angular_thickness()
    }
}

/// Collision hooks whose contact modification panics when armed.
#[derive(SystemParam)]
struct TripHooks<'w> {
    _time: Res<'w, Time>,
}

impl CollisionHooks for TripHooks<'_> {
    fn modify_contacts(&self, _: &mut ContactPairMut, _: &mut Commands) -> bool {
        trip();
        true
    }
}

/// A user constraint holding a body at its height, whose solve panics when armed.
#[derive(Component)]
struct TripConstraint {
    body: Entity,
    lagrange: f32,
}

impl XpbdConstraint<1> for TripConstraint {
    fn entities(&self) -> [Entity; 1] {
        [self.body]
    }
    fn clear_lagrange_multipliers(&mut self) {
        self.lagrange = 0.0;
    }
    fn solve(&mut self, [_]: [&mut RigidBodyQueryItem; 1], _: f32) {
        trip();
    }
}

impl MapEntities for TripConstraint {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.body = mapper.get_mapped(self.body);
    }
}

const SIDE: usize = 33;
const RADIUS: f32 = 0.2;

/// A headless app with the hooks and the constraint above, stepping on the compute pool: a
/// ground, 1,089 balls resting on it (enough pairs for the narrow phase to share them out), a
/// static tripwire ball with a ball resting on it, and a user constraint on that ball.
fn scene() -> App {
    two_compute_threads();
    let step = Duration::from_secs_f64(DT as f64);
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        PhysicsPlugin::default().with_collision_hooks::<TripHooks<'static>>(),
    ))
    .add_systems(
        SubstepSchedule,
        (
            solve_constraint::<TripConstraint, 1>.in_set(SubstepSolverSet::SolveUserConstraints),
            count_runs::<1>.in_set(SubstepSolverSet::IntegrateVelocities),
        ),
    )
    .add_systems(
        PhysicsSchedule,
        count_runs::<0>.in_set(PhysicsStepSet::Prepare),
    )
    .init_resource::<Runs>()
    .insert_resource(Time::<Fixed>::from_duration(step))
    .insert_resource(TimeUpdateStrategy::ManualDuration(step))
    .insert_resource(ThreadUse::Parallel);
    app.update();
    ground(&mut app);
    for i in 0..SIDE {
        for j in 0..SIDE {
            let at = Vec3::new(0.6 * i as f32 - 10.0, RADIUS, 0.6 * j as f32 - 10.0);
            spawn(&mut app, ball(at));
        }
    }
    let tripwire = Collider::from(parry3d::shape::SharedShape::new(Tripwire(Ball::new(0.5))));
    assert!(tripwire.validate().is_none());
    spawn(
        &mut app,
        (
            RigidBody::Static,
            tripwire,
            Transform::from_xyz(15.0, 0.5, 0.0),
        ),
    );
    let rider = spawn(
        &mut app,
        (
            ball(Vec3::new(15.0, 1.0 + RADIUS, 0.0)),
            ActiveCollisionHooks::MODIFY_CONTACTS,
        ),
    );
    spawn(
        &mut app,
        TripConstraint {
            body: rider,
            lagrange: 0.0,
        },
    );
    app
}

fn ball(at: Vec3) -> impl Bundle {
    (
        RigidBody::Dynamic,
        Collider::sphere(RADIUS),
        Transform::from_translation(at),
        SleepingDisabled,
    )
}

/// How often the first stage of a step (0) and of a substep (1) ran.
#[derive(Resource, Default)]
struct Runs([u32; 2]);

fn count_runs<const STAGE: usize>(mut runs: ResMut<Runs>) {
    runs.0[STAGE] += 1;
}

fn helper_chunks() -> u64 {
    PARALLEL_COUNTERS.helper_chunks.load(Ordering::SeqCst)
}

/// Runs `steps` calls of `step`, and more (up to 1,000: a loaded machine may start the helper
/// late in many steps in a row) until the compute pool's helper took part (with the `parallel`
/// feature); checks that it did and every body stayed finite, failing (not hanging) after a
/// minute.
fn steps_on_two_threads(app: &mut App, steps: usize, step: impl Fn(&mut App)) {
    let before = helper_chunks();
    let helped = || !cfg!(feature = "parallel") || helper_chunks() > before;
    with_deadline(60, "steps after a panic", || {
        for _ in 0..steps {
            step(app);
        }
        for _ in 0..1000 {
            if helped() {
                break;
            }
            step(app);
        }
    });
    assert!(all_bodies_finite(app));
    if cfg!(feature = "parallel") {
        assert!(
            helper_chunks() > before,
            "a helper thread took part in the steps"
        );
    }
}

/// Arms the user code as `armed` says and updates `app` until it panics (a panic on the helper
/// thread needs a step in which the helper claims the chunk with the tripwire's pair), at most
/// 2,000 times, and
/// checks that the panic reached the caller with its own message; then the same world steps
/// on, and so does a new app.
fn survives_a_panic_in_user_code(mut app: App, armed: Armed) {
    steps_on_two_threads(&mut app, 5, App::update);
    arm(armed);
    // A loaded machine may start the helper late in many steps in a row.
    let result = (0..2000)
        .map(|_| catch_unwind(AssertUnwindSafe(|| app.update())))
        .find(Result::is_err);
    arm(Armed::Off);
    let panic = result
        .expect("the user code ran")
        .expect_err("the panic reached the caller");
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied());
    assert_eq!(message, Some(MESSAGE), "the user's own panic");

    // The first step after the panic runs every stage, from the first on (a schedule whose
    // run was cut short must not skip what had already run).
    let before = app.world().resource::<Runs>().0;
    app.world_mut().run_schedule(PhysicsSchedule);
    let after = app.world().resource::<Runs>().0;
    let substeps = app.world().resource::<SubstepCount>().0;
    assert_eq!(after, [before[0] + 1, before[1] + substeps], "stages run");

    steps_on_two_threads(&mut app, 10, |app| {
        app.world_mut().run_schedule(PhysicsSchedule)
    });
    let world = app.world_mut();
    let mut balls = world.query_filtered::<&Position, With<SleepingDisabled>>();
    let resting = balls.iter(world).filter(|p| p.0.y < 2.0 * RADIUS).count();
    assert_eq!(resting, SIDE * SIDE, "the grid still rests on the ground");

    steps_on_two_threads(&mut scene(), 10, App::update);
}

/// The panic reaches the caller from a worker of the parallel narrow phase: the calling
/// thread, or (with the `parallel` feature) the helper.
#[test]
fn a_panic_in_a_custom_shape_inside_the_parallel_narrow_phase() {
    let _one_at_a_time = ARMING.lock().unwrap_or_else(|e| e.into_inner());
    survives_a_panic_in_user_code(shape_only(), Armed::AnyThread);
    if cfg!(feature = "parallel") {
        let test = std::thread::current().id();
        survives_a_panic_in_user_code(shape_only(), Armed::HelperThread(test));
    }
}

/// The scene with only the tripwire shape armed: the hook and the constraint taken away.
fn shape_only() -> App {
    let mut app = scene();
    let world = app.world_mut();
    let mut hooked = world.query_filtered::<Entity, With<ActiveCollisionHooks>>();
    let rider = hooked.single(world).unwrap();
    world.entity_mut(rider).remove::<ActiveCollisionHooks>();
    let mut constraints = world.query_filtered::<Entity, With<TripConstraint>>();
    let constraint = constraints.single(world).unwrap();
    world.despawn(constraint);
    app
}

/// The panic reaches the caller from a collision hook, which runs on the calling thread after
/// the parallel manifold update.
#[test]
fn a_panic_in_a_collision_hook() {
    let _one_at_a_time = ARMING.lock().unwrap_or_else(|e| e.into_inner());
    let mut app = scene();
    let world = app.world_mut();
    let mut constraints = world.query_filtered::<Entity, With<TripConstraint>>();
    let constraint = constraints.single(world).unwrap();
    world.despawn(constraint);
    replace_tripwire(&mut app);
    survives_a_panic_in_user_code(app, Armed::AnyThread);
}

/// The panic reaches the caller from inside a substep, half way through the solver.
#[test]
fn a_panic_in_a_user_constraint_inside_a_substep() {
    let _one_at_a_time = ARMING.lock().unwrap_or_else(|e| e.into_inner());
    let mut app = scene();
    let world = app.world_mut();
    let mut hooked = world.query_filtered::<Entity, With<ActiveCollisionHooks>>();
    let rider = hooked.single(world).unwrap();
    world.entity_mut(rider).remove::<ActiveCollisionHooks>();
    replace_tripwire(&mut app);
    survives_a_panic_in_user_code(app, Armed::AnyThread);
}

/// Makes the tripwire an ordinary ball, so that only the hook or the constraint trips.
fn replace_tripwire(app: &mut App) {
    let world = app.world_mut();
    let mut colliders = world.query::<(Entity, &Collider)>();
    let tripwire = colliders
        .iter(world)
        .find(|(_, collider)| collider.shape().shape_type() == ShapeType::Custom)
        .map(|(e, _)| e)
        .unwrap();
    world.entity_mut(tripwire).insert(Collider::sphere(0.5));
}

/// The tests share [`ARMED`], so they take turns.
static ARMING: std::sync::Mutex<()> = std::sync::Mutex::new(());
