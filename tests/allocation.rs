//! Steady-state steps allocate nothing (once warm, a step reuses its buffers): a counting global allocator watches 100
//! steps of a resting scene of about 1000 bodies, after a warm-up, with sleeping off.
//!
//! The scene exercises the whole step: 900 boxes resting side by side on the ground (contacts,
//! broad and narrow phase, contact events, the colour-partitioned solver), chains of
//! spherical, revolute, fixed and distance joints, of D6 joints and of a user XPBD constraint
//! hanging from static anchors (the XPBD joint lists, velocity rows, `solve_constraint`, joint
//! force readback), a ray caster and a shape caster (spatial query refresh), a character
//! controller standing on the ground, a parked car (the vehicle controller), and the sleeping stage (islands), which runs although no
//! body may sleep.
//!
//! Every allocation counts, on any thread, so the file holds this one test. To see where
//! allocations come from, run it with `ALLOCATION_BACKTRACES=5`: the first five print a
//! backtrace.
//!
//! Bevy's task pool allocates when work fans out over threads: `async_executor` puts every
//! task it spawns on the heap. With the `parallel` feature and a thread to spare, the engine's
//! parallel stages start helper tasks on the compute pool whenever the previous ones have
//! left (after 100 µs without work, so in a game usually once per step), so the test gives
//! the app a one-thread compute pool, on which the engine never fans out. (`parallel` does
//! not turn on Bevy's multi-threaded executor, which would spawn a task per system run.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::prelude::*;
use impetus3d::prelude::*;

/// Counts allocations (and reallocations) while [`COUNTING`] is set.
struct CountingAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
/// How many allocations get a backtrace printed (set from `ALLOCATION_BACKTRACES`).
static BACKTRACES: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set while this thread prints a backtrace (which allocates itself, uncounted).
    static REPORTING: Cell<bool> = const { Cell::new(false) };
}

fn count(size: usize) {
    if !COUNTING.load(Ordering::Relaxed) || REPORTING.get() {
        return;
    }
    let n = ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    if n < BACKTRACES.load(Ordering::Relaxed) {
        REPORTING.set(true);
        let trace = std::backtrace::Backtrace::force_capture();
        eprintln!("allocation {n} of {size} bytes:\n{trace}");
        REPORTING.set(false);
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; counting touches only
// atomics and a thread-local flag.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// A user constraint keeping two anchors together, one correction along their separation per
/// solve, written with the helpers of [`PositionConstraint`].
#[derive(Component)]
struct Tie {
    bodies: [Entity; 2],
    anchors: [Vec3; 2],
    lagrange: f32,
}

impl PositionConstraint for Tie {}

impl XpbdConstraint<2> for Tie {
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
        let Some(n) = delta.try_normalize() else {
            return;
        };
        let w1 = self.compute_generalized_inverse_mass(b1, r1, n);
        let w2 = self.compute_generalized_inverse_mass(b2, r2, n);
        let dl = self.compute_lagrange_update(self.lagrange, delta.length(), &[w1, w2], 0.0, dt);
        self.lagrange += dl;
        self.apply_positional_correction(b1, b2, dl, n, r1, r2);
    }
}

impl MapEntities for Tie {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.bodies = self.bodies.map(|e| mapper.get_mapped(e));
    }
}

/// Boxes per side of the resting grid.
const GRID: usize = 30;
/// Links per joint chain.
const LINKS: usize = 20;

/// A headless app like [`impetus3d::headless_app`], one step of 1/60 s per update, with a
/// one-thread compute pool (see the module docs).
fn app() -> App {
    use bevy::app::{TaskPoolOptions, TaskPoolPlugin};
    use bevy::time::TimeUpdateStrategy;
    let step = std::time::Duration::from_secs_f64(1.0 / 60.0);
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins.set(TaskPoolPlugin {
            task_pool_options: TaskPoolOptions::with_num_threads(1),
        }),
        PhysicsPlugin::default(),
    ))
    .insert_resource(Time::<Fixed>::from_duration(step))
    .insert_resource(TimeUpdateStrategy::ManualDuration(step));
    app.update();
    app
}

/// The resting scene: ground, boxes, joint chains, a ray caster.
fn scene() -> App {
    let mut app = app();
    app.add_systems(
        SubstepSchedule,
        solve_constraint::<Tie, 2>.in_set(SubstepSolverSet::SolveUserConstraints),
    );
    let world = app.world_mut();
    world.spawn((
        RigidBody::Static,
        Collider::cuboid(200.0, 1.0, 200.0),
        Transform::from_xyz(0.0, -0.5, 0.0),
    ));
    // Boxes resting on the ground, 0.5 m apart, with contact events on some of them.
    for i in 0..GRID {
        for j in 0..GRID {
            let mut cube = world.spawn((
                RigidBody::Dynamic,
                Collider::cuboid(1.0, 1.0, 1.0),
                SleepingDisabled,
                Transform::from_xyz(1.5 * i as f32, 0.5, 1.5 * j as f32),
            ));
            if (i + j) % 7 == 0 {
                cube.insert((CollisionEventsEnabled, CollidingEntities::default()));
            }
        }
    }
    // Chains hanging from static anchors beside the grid, well above the ground.
    let chain = |world: &mut World, x: f32, join: &dyn Fn(&mut World, Entity, Entity)| {
        let mut previous = world
            .spawn((RigidBody::Static, Transform::from_xyz(x, 30.0, -10.0)))
            .id();
        for k in 0..LINKS {
            let link = world
                .spawn((
                    RigidBody::Dynamic,
                    Collider::cuboid(0.3, 0.8, 0.3),
                    SleepingDisabled,
                    Transform::from_xyz(x, 29.0 - k as f32, -10.0),
                ))
                .id();
            join(world, previous, link);
            previous = link;
        }
    };
    let (up, down) = (Vec3::new(0.0, 0.5, 0.0), Vec3::new(0.0, -0.5, 0.0));
    chain(world, 0.0, &|world, a, b| {
        world.spawn(
            SphericalJoint::new(a, b)
                .with_local_anchor1(down)
                .with_local_anchor2(up),
        );
    });
    chain(world, 5.0, &|world, a, b| {
        world.spawn(
            RevoluteJoint::new(a, b)
                .with_local_anchor1(down)
                .with_local_anchor2(up)
                .with_angle_limits(-1.0, 1.0),
        );
    });
    chain(world, 10.0, &|world, a, b| {
        world.spawn(
            FixedJoint::new(a, b)
                .with_local_anchor1(down)
                .with_local_anchor2(up),
        );
    });
    chain(world, 15.0, &|world, a, b| {
        world.spawn(
            D6Joint::new(a, b)
                .with_local_anchor1(down)
                .with_local_anchor2(up)
                .with_motion(D6Axis::Twist, D6Motion::Free)
                .with_swing_cone(0.5, 0.5),
        );
    });
    chain(world, 20.0, &|world, a, b| {
        world.spawn(
            DistanceJoint::new(a, b)
                .with_local_anchor1(down)
                .with_local_anchor2(up),
        );
    });
    chain(world, 25.0, &|world, a, b| {
        world.spawn(Tie {
            bodies: [a, b],
            anchors: [down, up],
            lagrange: 0.0,
        });
    });
    // A character standing on the ground, away from the boxes.
    world.spawn((
        CharacterController::default(),
        Collider::capsule(0.3, 1.0),
        Transform::from_xyz(-5.0, 0.81, -5.0),
    ));
    // A car parked on the ground away from the boxes, idling: its wheels cast rays into the
    // spatial-query tree, and its suspension, tyres and powertrain run every step.
    world.spawn((
        RigidBody::Dynamic,
        Collider::cuboid(1.8, 0.5, 4.2),
        VehicleController::default(),
        SleepingDisabled,
        Transform::from_xyz(-12.0, 0.7, 10.0),
    ));
    // A ray caster and a shape caster pointing down onto the boxes.
    world.spawn((
        RayCaster::new(Vec3::new(0.0, 10.0, 0.0), Dir3::NEG_Y).with_max_hits(4),
        Transform::default(),
    ));
    world.spawn((
        ShapeCaster::new(
            Collider::sphere(0.5),
            Vec3::new(3.0, 10.0, 3.0),
            Quat::IDENTITY,
            Dir3::NEG_Y,
        )
        .with_max_hits(4),
        Transform::default(),
    ));
    app
}

#[test]
fn resting_scene_steps_without_allocating() {
    let mut app = scene();
    let bodies = app
        .world_mut()
        .query::<&RigidBody>()
        .iter(app.world())
        .filter(|rb| rb.is_dynamic())
        .count();
    assert!(bodies >= 1000, "{bodies} dynamic bodies");
    // Warm-up: contacts found, buffers grown to the scene's size.
    for _ in 0..120 {
        app.update();
    }
    let backtraces = std::env::var("ALLOCATION_BACKTRACES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    BACKTRACES.store(backtraces, Ordering::Relaxed);
    ALLOCATIONS.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    for _ in 0..100 {
        app.update();
    }
    COUNTING.store(false, Ordering::Relaxed);
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);
    // The scene did work: the boxes touch the ground.
    let touching = app
        .world_mut()
        .query::<&CollidingEntities>()
        .iter(app.world())
        .filter(|c| !c.as_slice().is_empty())
        .count();
    assert!(touching > 100, "only {touching} boxes touch the ground");
    assert_eq!(
        allocations, 0,
        "100 steps of a resting scene allocated {allocations} times \
         (ALLOCATION_BACKTRACES=5 shows where)"
    );
}
