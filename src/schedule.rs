//! The physics schedules, their system sets, and the loop that drives them.
//!
//! [`PhysicsSchedule`] runs once per physics step from a parent schedule (`FixedPostUpdate` by
//! default), in [`PhysicsSystems::StepSimulation`] there, with its systems in the
//! [`PhysicsStepSet`] stages. Inside
//! [`PhysicsStepSet::Solver`], [`SolverSet::Substep`] runs [`SubstepSchedule`] [`SubstepCount`]
//! times; each run is one substep of length `h = dt / SubstepCount`, ordered by
//! [`SubstepSolverSet`].
//!
//! Both schedules use the single-threaded executor: their systems are a strict chain, and the
//! parallel work (with the `parallel` feature) happens inside systems on Bevy's task pools.

use std::time::Duration;

use bevy::platform::time::Instant;

use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel, SingleThreadedExecutor};
use bevy::prelude::*;

use crate::math::Scalar;

/// Where the physics step runs in its parent schedule (the schedule given to
/// [`PhysicsPlugin::new`](crate::PhysicsPlugin::new), `FixedPostUpdate` by default), in this
/// order. Order your own systems in that schedule against these sets, e.g. systems that set
/// forces or motor targets `.before(PhysicsSystems::StepSimulation)`. A parent schedule that
/// rejects ambiguous systems (such as bevy_ggrs' `GgrsSchedule`) needs every system that touches
/// physics components ordered against the step.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PhysicsSystems {
    /// Before the step; empty unless you add to it.
    First,
    /// The physics step: one run of [`PhysicsSchedule`].
    StepSimulation,
    /// After the step; empty unless you add to it.
    Last,
}

/// The schedule that advances the simulation by one physics step.
#[derive(ScheduleLabel, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PhysicsSchedule;

/// The schedule run once per substep, inside [`SolverSet::Substep`].
///
/// Add user constraints here, in [`SubstepSolverSet::SolveUserConstraints`].
#[derive(ScheduleLabel, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SubstepSchedule;

/// The stages of one physics step, run in this order in [`PhysicsSchedule`].
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PhysicsStepSet {
    /// Transform → Position/Rotation for moved bodies, mass properties, collider AABBs.
    Prepare,
    /// Candidate pairs from overlapping AABBs.
    BroadPhase,
    /// Contact manifolds for candidate pairs.
    NarrowPhase,
    /// Contact and joint solving with substeps (see [`SolverSet`]).
    Solver,
    /// Island-based sleeping and waking.
    Sleeping,
    /// Position/Rotation → Transform, then collision events (see [`crate::collision::events`]).
    Finalize,
    /// The spatial-query tree follows the bodies that moved; ray and shape casters refresh
    /// their hits.
    SpatialQuery,
}

/// The parts of [`PhysicsStepSet::Solver`], run in this order.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SolverSet {
    /// Gather awake bodies into dense solver storage.
    PrepareSolverBodies,
    /// Build contact constraints from the narrow phase's manifolds.
    PrepareContacts,
    /// Resolve joint entities to dense body indices.
    PrepareJoints,
    /// Run [`SubstepSchedule`] [`SubstepCount`] times.
    Substep,
    /// Apply restitution once, after all substeps.
    Restitution,
    /// Sweep bodies with [`SweptCcd`](crate::solver::ccd::SweptCcd) from their step-start to
    /// their step-end pose and move them back to their first impact.
    SweptCcd,
    /// Store impulses for warm starting and write bodies back to the ECS.
    Writeback,
}

/// The parts of one substep in [`SubstepSchedule`], run in this order.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SubstepSolverSet {
    /// Gravity, external forces and damping.
    IntegrateVelocities,
    /// Apply last step's (and last substep's) contact impulses.
    WarmStart,
    /// Soft contact solve with position bias.
    SolveContacts,
    /// Advance positions and rotations by the velocities.
    IntegratePositions,
    /// Contact solve without bias, removing the energy the bias added.
    Relax,
    /// Built-in joints, at the position level.
    SolveXpbdConstraints,
    /// User constraints added with `solve_constraint::<C, N>`.
    SolveUserConstraints,
    /// Velocity from the position changes the XPBD sets made.
    XpbdVelocityProjection,
}

/// How many substeps each physics step is divided into. Default 4.
///
/// More substeps make stacks and joint chains stiffer at a roughly linear cost. 0 is replaced by
/// 1, and a count above [`MAX_SUBSTEPS`](crate::validation::MAX_SUBSTEPS) by that maximum, with
/// a warning.
#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq, Eq)]
#[reflect(Resource, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct SubstepCount(pub u32);

impl Default for SubstepCount {
    fn default() -> Self {
        Self(4)
    }
}

impl crate::validation::Validate for SubstepCount {
    fn validate(&mut self) -> Option<String> {
        use crate::validation::MAX_SUBSTEPS;
        let usable = self.0.clamp(1, MAX_SUBSTEPS);
        (usable != self.0).then(|| {
            let message = format!(
                "{} substeps is not in 1..={MAX_SUBSTEPS}; using {usable}",
                self.0
            );
            self.0 = usable;
            message
        })
    }
}

/// How a step uses the compute threads with the `parallel` feature (without it, or with one
/// compute thread, every step runs on the calling thread whatever this says).
///
/// Whether sharing a stage out pays depends on the machine as much as on the scene: it costs
/// a hand-over per stage and moves the stage's data between the cores' caches, and on a
/// virtual machine whose cores are sometimes far apart two threads can be slower than one
/// (see the README's benchmarks). Results are bit-identical either way, so the engine can
/// choose by timing.
#[derive(Resource, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[reflect(Resource, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub enum ThreadUse {
    /// Time it: a few steps run on one thread and a few on the compute pool, and the faster
    /// way is kept until the next such trial: from a world's first steps on, 15 steps after
    /// the first trial, then 30, 60 and every 120. Large stages then run in parallel only
    /// while that is faster; a trial costs the slower way's extra time on three or four
    /// steps.
    #[default]
    Adaptive,
    /// Large stages always run on the compute pool.
    Parallel,
    /// Every step runs on the calling thread.
    OneThread,
}

/// Timing of the step in progress, readable by systems in both physics schedules.
#[derive(Resource, Reflect, Clone, Copy, Debug, Default, PartialEq)]
#[reflect(Resource, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct PhysicsStepTime {
    /// Length of the whole step, in seconds.
    pub delta: Scalar,
    /// Length of one substep, `delta / substeps`.
    pub substep_delta: Scalar,
    /// Index of the substep running now (0 during the rest of the step).
    pub substep: u32,
    /// Number of substeps in this step.
    pub substeps: u32,
    /// How many steps have run since the plugin was added.
    pub step_count: u64,
}

/// Builds both schedules and runs [`PhysicsSchedule`] from the parent schedule.
pub(crate) struct PhysicsSchedulePlugin {
    pub(crate) parent: InternedScheduleLabel,
}

impl Plugin for PhysicsSchedulePlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<SubstepCount>()
            .init_resource::<PhysicsStepTime>()
            .init_resource::<ThreadUse>();

        let mut step = Schedule::new(PhysicsSchedule);
        step.set_executor(SingleThreadedExecutor::new())
            .configure_sets(
                (
                    PhysicsStepSet::Prepare,
                    PhysicsStepSet::BroadPhase,
                    PhysicsStepSet::NarrowPhase,
                    PhysicsStepSet::Solver,
                    PhysicsStepSet::Sleeping,
                    PhysicsStepSet::Finalize,
                    PhysicsStepSet::SpatialQuery,
                )
                    .chain(),
            )
            .configure_sets(
                (
                    SolverSet::PrepareSolverBodies,
                    SolverSet::PrepareContacts,
                    SolverSet::PrepareJoints,
                    SolverSet::Substep,
                    SolverSet::Restitution,
                    SolverSet::SweptCcd,
                    SolverSet::Writeback,
                )
                    .chain()
                    .in_set(PhysicsStepSet::Solver),
            )
            .configure_sets(crate::validation::ValidationSet.in_set(PhysicsStepSet::Prepare))
            .add_systems(run_substeps.in_set(SolverSet::Substep));
        app.add_schedule(step);

        let mut substep = Schedule::new(SubstepSchedule);
        substep
            .set_executor(SingleThreadedExecutor::new())
            .configure_sets(
                (
                    SubstepSolverSet::IntegrateVelocities,
                    SubstepSolverSet::WarmStart,
                    SubstepSolverSet::SolveContacts,
                    SubstepSolverSet::IntegratePositions,
                    SubstepSolverSet::Relax,
                    SubstepSolverSet::SolveXpbdConstraints,
                    SubstepSolverSet::SolveUserConstraints,
                    SubstepSolverSet::XpbdVelocityProjection,
                )
                    .chain(),
            );
        app.add_schedule(substep);

        app.configure_sets(
            self.parent,
            (
                PhysicsSystems::First,
                PhysicsSystems::StepSimulation,
                PhysicsSystems::Last,
            )
                .chain(),
        )
        .add_systems(
            self.parent,
            run_physics_step.in_set(PhysicsSystems::StepSimulation),
        );
    }
}

/// Runs one physics step of the parent schedule's `Time` delta (none for a zero delta: a
/// paused clock). The [`SubstepCount`] is validated here, where it is read.
fn run_physics_step(world: &mut World) {
    let delta = world.resource::<Time>().delta_secs();
    if delta <= 0.0 || !delta.is_finite() {
        return;
    }
    world
        .run_system_cached(crate::validation::validate_resource::<SubstepCount>)
        .ok();
    let substeps = world.resource::<SubstepCount>().0.max(1);
    {
        let mut time = world.resource_mut::<PhysicsStepTime>();
        time.delta = delta;
        time.substeps = substeps;
        time.substep_delta = delta / substeps as Scalar;
        time.substep = 0;
        time.step_count += 1;
    }
    run_with_thread_use(world);
}

/// Runs [`PhysicsSchedule`] with the thread use its [`ThreadUse`] asks for, and times it for
/// [`ThreadUse::Adaptive`].
fn run_with_thread_use(world: &mut World) {
    if crate::parallel::compute_pool().is_none() {
        run_schedule_kept(world, PhysicsSchedule, Schedule::run);
        return;
    }
    let mode = world
        .get_resource::<ThreadUse>()
        .copied()
        .unwrap_or_default();
    let one_thread = match mode {
        ThreadUse::Adaptive => world.get_resource_or_init::<ThreadTrial>().one_thread_now(),
        ThreadUse::Parallel => false,
        ThreadUse::OneThread => true,
    };
    let start = Instant::now();
    crate::parallel::on_one_thread_if(one_thread, || {
        run_schedule_kept(world, PhysicsSchedule, Schedule::run);
    });
    let time = start.elapsed();
    if mode == ThreadUse::Adaptive {
        world.resource_mut::<ThreadTrial>().record(time);
    }
}

/// Steps between two timing trials of [`ThreadUse::Adaptive`]: 15 after a world's first
/// trial, doubling after each trial up to 120 (a new scene changes fast at first: cubes that
/// fall for a second, then pile up).
const TRIAL_PERIODS: (u32, u32) = (15, 120);

/// A trial's steps: on one thread (`true`) or on the pool, and whether the step's time counts.
/// The counted steps of each way have the same mean position in the trial, so a scene whose
/// steps get steadily faster or slower (cubes settling) favours neither way.
const TRIAL: [(bool, bool); 7] = [
    (true, false),
    (true, true),
    (false, false),
    (false, true),
    (false, true),
    (true, false),
    (true, true),
];

/// The timing trials of [`ThreadUse::Adaptive`] for one world: a cycle of a trial (the first
/// steps of a world among them) and a period of steps the way it chose ([`TRIAL_PERIODS`]).
///
/// A trial ([`TRIAL`]) runs two steps on one thread, three on the pool and two on one thread,
/// and compares each way's total over its counted steps. The first step after a change of
/// way does not count: it pays for the change, as the data the other way left in the other
/// core's cache comes back to this one (the 5,050-cube pyramid, vCPUs far apart, steps
/// alternating between the ways: 10.4 ms on one thread, 9.2 ms on the pool, against 9.6 and
/// 11.1 ms per step when each way runs on its own).
#[derive(Resource, Default)]
pub(crate) struct ThreadTrial {
    /// Position in the cycle.
    step: u32,
    /// The time of each way's counted trial steps: one thread, compute pool.
    totals: [Duration; 2],
    /// Whether the last trial found the compute pool faster.
    parallel: bool,
    /// Steps from the end of this trial to the next (0 before the first trial ends).
    period: u32,
}

impl ThreadTrial {
    /// Whether the next step runs on one thread.
    fn one_thread_now(&self) -> bool {
        TRIAL
            .get(self.step as usize)
            .map_or(!self.parallel, |&(one_thread, _)| one_thread)
    }

    /// Records the time of the step that [`Self::one_thread_now`] was asked about.
    fn record(&mut self, time: Duration) {
        if let Some(&(one_thread, counted)) = TRIAL.get(self.step as usize) {
            if self.step == 0 {
                self.totals = [Duration::ZERO; 2];
            }
            if counted {
                self.totals[usize::from(!one_thread)] += time;
            }
            if self.step as usize == TRIAL.len() - 1 {
                self.parallel = self.totals[1] < self.totals[0];
                self.period = match self.period {
                    0 => TRIAL_PERIODS.0,
                    period => (2 * period).min(TRIAL_PERIODS.1),
                };
            }
        }
        self.step = (self.step + 1) % (TRIAL.len() as u32 + self.period);
    }
}

/// Runs [`SubstepSchedule`] once per substep.
fn run_substeps(world: &mut World) {
    let substeps = world.resource::<PhysicsStepTime>().substeps;
    run_schedule_kept(world, SubstepSchedule, |schedule, world| {
        for index in 0..substeps {
            world.resource_mut::<PhysicsStepTime>().substep = index;
            schedule.run(world);
        }
    });
    world.resource_mut::<PhysicsStepTime>().substep = 0;
}

/// Takes the schedule `label` out of the world and calls `run` with it, like
/// `World::schedule_scope`, but puts it back even if a system panics, and lets the panic go
/// on. Bevy's own scope drops a schedule a panic unwinds through; the physics schedules are
/// kept, with a fresh executor (the old one would skip, in the next run, the systems that ran
/// before the panic), so that the world can step on after a caught panic (see the crate docs).
fn run_schedule_kept(
    world: &mut World,
    label: impl ScheduleLabel,
    run: impl FnOnce(&mut Schedule, &mut World),
) {
    let label = label.intern();
    let Some(mut schedule) = world.resource_mut::<Schedules>().remove(label) else {
        error!("the physics schedule {label:?} is missing; the step is skipped");
        return;
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(&mut schedule, world);
    }));
    if result.is_err() {
        schedule.set_executor(SingleThreadedExecutor::new());
    }
    world.resource_mut::<Schedules>().insert(schedule);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// The counters of the parallel paths, for the determinism test. Not part of the API.
#[doc(hidden)]
pub use crate::parallel::{PARALLEL_COUNTERS, ParallelCounters};

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds a whole trial to `trial`: the times (ms) of its steps on one thread and of its
    /// steps on the pool, each in order.
    fn run_trial(trial: &mut ThreadTrial, one: [u64; 4], pool: [u64; 3]) {
        let (mut one, mut pool) = (one.into_iter(), pool.into_iter());
        for &(one_thread, _) in &TRIAL {
            assert_eq!(trial.one_thread_now(), one_thread, "the trial's order");
            let ms = if one_thread { one.next() } else { pool.next() };
            trial.record(Duration::from_millis(ms.expect("a time per step")));
        }
    }

    /// Runs `steps` steps after a trial, checking that they all go the same way.
    fn keep(trial: &mut ThreadTrial, one_thread: bool, steps: u32) {
        for _ in 0..steps {
            assert_eq!(trial.one_thread_now(), one_thread);
            trial.record(Duration::from_millis(1));
        }
    }

    #[test]
    fn the_adaptive_trial_keeps_the_faster_way_until_the_next_trial() {
        let mut trial = ThreadTrial::default();
        // Each way's first step after a change does not count (9 ms on one thread, 1 on the
        // pool here): one thread wins, 2 + 2 ms against 3 + 3.
        run_trial(&mut trial, [9, 2, 9, 2], [1, 3, 3]);
        keep(&mut trial, true, 15);
        // In a scene that slows down by 1 ms every step, the order of the trial's steps
        // favours neither way: the pool, 1 ms faster at the fifth step, wins by that
        // (one thread 2 + 7 ms, the pool 4 + 4; the pool's later steps would lose if the
        // trial were all one thread, then all pool).
        run_trial(&mut trial, [1, 2, 6, 7], [3, 4, 4]);
        assert!(trial.parallel);
        keep(&mut trial, false, 30);
        run_trial(&mut trial, [1, 2, 6, 6], [3, 4, 5]);
        keep(&mut trial, true, 60);
        // The periods double up to 120 steps.
        for period in [120, 120] {
            run_trial(&mut trial, [4, 4, 4, 4], [9, 3, 3]);
            keep(&mut trial, false, period);
        }
        assert!(trial.one_thread_now(), "a new trial starts");
    }

    /// Steps a world whose physics schedule records whether its stages may use the compute
    /// pool, with each thread use in turn.
    #[cfg(feature = "parallel")]
    #[test]
    fn a_step_uses_the_pool_as_its_thread_use_says() {
        use std::sync::atomic::{AtomicBool, Ordering};
        static ON_POOL: AtomicBool = AtomicBool::new(false);
        bevy::tasks::ComputeTaskPool::get_or_init(|| {
            bevy::tasks::TaskPoolBuilder::new().num_threads(2).build()
        });
        let mut world = World::new();
        let mut schedule = Schedule::new(PhysicsSchedule);
        schedule.add_systems(|| {
            let on_pool = crate::parallel::pool_with_helpers().is_some();
            ON_POOL.store(on_pool, Ordering::SeqCst);
        });
        world.add_schedule(schedule);
        let mut on_pool = |mode| {
            world.insert_resource(mode);
            run_with_thread_use(&mut world);
            ON_POOL.load(Ordering::SeqCst)
        };
        assert!(on_pool(ThreadUse::Parallel));
        assert!(!on_pool(ThreadUse::OneThread));
        // Adaptive: a trial starts the world's steps, on one thread and then on the pool.
        let trial: Vec<bool> = TRIAL.iter().map(|_| on_pool(ThreadUse::Adaptive)).collect();
        assert_eq!(trial, [false, false, true, true, true, false, false]);
    }
}
