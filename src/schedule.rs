//! The physics schedules, their system sets, and the loop that drives them.
//!
//! [`PhysicsSchedule`] runs once per physics step from a parent schedule (`FixedPostUpdate` by
//! default), with its systems in the [`PhysicsStepSet`] stages. Inside
//! [`PhysicsStepSet::Solver`], [`SolverSet::Substep`] runs [`SubstepSchedule`] [`SubstepCount`]
//! times; each run is one substep of length `h = dt / SubstepCount`, ordered by
//! [`SubstepSolverSet`].
//!
//! Both schedules use the single-threaded executor: their systems are a strict chain, and the
//! parallel work (with the `parallel` feature) happens inside systems on Bevy's task pools.

use std::sync::atomic::AtomicU64;

use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel, SingleThreadedExecutor};
use bevy::prelude::*;

use crate::math::Scalar;

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
            .init_resource::<PhysicsStepTime>();

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

        app.add_systems(self.parent, run_physics_step);
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
    world.run_schedule(PhysicsSchedule);
}

/// Runs [`SubstepSchedule`] once per substep.
fn run_substeps(world: &mut World) {
    let substeps = world.resource::<PhysicsStepTime>().substeps;
    world.schedule_scope(SubstepSchedule, |world, schedule| {
        for index in 0..substeps {
            world.resource_mut::<PhysicsStepTime>().substep = index;
            schedule.run(world);
        }
    });
    world.resource_mut::<PhysicsStepTime>().substep = 0;
}

/// Counters that show whether (and how much) the parallel paths ran. Not part of the API:
/// the determinism test reads them.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct ParallelCounters {
    /// Parallel loops (solver stages, integration, narrow phases) handed to several workers.
    pub parallel_stages: AtomicU64,
    /// Chunks run by helper tasks (not by the thread that handed the loop out).
    pub helper_chunks: AtomicU64,
}

/// The process-wide counters.
#[doc(hidden)]
pub static PARALLEL_COUNTERS: ParallelCounters = ParallelCounters {
    parallel_stages: AtomicU64::new(0),
    helper_chunks: AtomicU64::new(0),
};
