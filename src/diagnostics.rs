//! Step timings and counts in Bevy's
//! [`DiagnosticsStore`](bevy::diagnostic::DiagnosticsStore), for on-screen readouts, logs and
//! profiling a game's physics without a profiler.
//!
//! Add [`PhysicsDiagnosticsPlugin`] beside the physics plugin. Each physics step then records
//! how long the whole step and each [`PhysicsStepSet`] took, in milliseconds, and how many
//! bodies were awake and how many collider pairs touched. Read them like any diagnostic, by the
//! paths of [`PhysicsDiagnostics`]; `LogDiagnosticsPlugin` prints them all.
//!
//! ```
//! use bevy::diagnostic::DiagnosticsStore;
//! use bevy::prelude::*;
//! use impetus3d::prelude::*;
//!
//! let mut app = impetus3d::headless_app(1.0 / 60.0);
//! app.add_plugins(PhysicsDiagnosticsPlugin);
//! app.world_mut().spawn((RigidBody::Dynamic, Collider::sphere(0.5)));
//! app.update();
//! let store = app.world().resource::<DiagnosticsStore>();
//! let step = store.get(&PhysicsDiagnostics::STEP).and_then(|d| d.value());
//! assert!(step.is_some_and(|ms| ms >= 0.0));
//! let bodies = store.get(&PhysicsDiagnostics::AWAKE_BODIES).and_then(|d| d.value());
//! assert_eq!(bodies, Some(1.0));
//! ```
//!
//! The clock is read between the stages, so the stage times add up to the step time, less the
//! few microseconds the schedule spends between systems. Nothing the simulation computes
//! depends on them.
//!
//! [`DiagnosticsStore`]: bevy::diagnostic::DiagnosticsStore

use bevy::diagnostic::{Diagnostic, DiagnosticPath, Diagnostics, RegisterDiagnostic};
use bevy::platform::time::Instant;
use bevy::prelude::*;

use crate::body::{RigidBody, Sleeping};
use crate::collision::Collisions;
use crate::schedule::{PhysicsSchedule, PhysicsStepSet};

/// The diagnostic paths [`PhysicsDiagnosticsPlugin`] records.
pub struct PhysicsDiagnostics;

impl PhysicsDiagnostics {
    /// The whole physics step, ms.
    pub const STEP: DiagnosticPath = DiagnosticPath::const_new("impetus3d/step");
    /// [`PhysicsStepSet::Prepare`], ms.
    pub const PREPARE: DiagnosticPath = DiagnosticPath::const_new("impetus3d/prepare");
    /// [`PhysicsStepSet::BroadPhase`], ms.
    pub const BROAD_PHASE: DiagnosticPath = DiagnosticPath::const_new("impetus3d/broad_phase");
    /// [`PhysicsStepSet::NarrowPhase`], ms.
    pub const NARROW_PHASE: DiagnosticPath = DiagnosticPath::const_new("impetus3d/narrow_phase");
    /// [`PhysicsStepSet::Solver`], all substeps, ms.
    pub const SOLVER: DiagnosticPath = DiagnosticPath::const_new("impetus3d/solver");
    /// [`PhysicsStepSet::Sleeping`], ms.
    pub const SLEEPING: DiagnosticPath = DiagnosticPath::const_new("impetus3d/sleeping");
    /// [`PhysicsStepSet::Finalize`] (transforms and collision events), ms.
    pub const FINALIZE: DiagnosticPath = DiagnosticPath::const_new("impetus3d/finalize");
    /// [`PhysicsStepSet::SpatialQuery`], ms.
    pub const SPATIAL_QUERY: DiagnosticPath = DiagnosticPath::const_new("impetus3d/spatial_query");
    /// Dynamic and kinematic bodies not asleep at the end of the step.
    pub const AWAKE_BODIES: DiagnosticPath = DiagnosticPath::const_new("impetus3d/awake_bodies");
    /// Collider pairs touching at the end of the step.
    pub const TOUCHING_PAIRS: DiagnosticPath =
        DiagnosticPath::const_new("impetus3d/touching_pairs");

    /// Each stage with its path, in the order they run.
    pub const STAGES: [(PhysicsStepSet, DiagnosticPath); 7] = [
        (PhysicsStepSet::Prepare, Self::PREPARE),
        (PhysicsStepSet::BroadPhase, Self::BROAD_PHASE),
        (PhysicsStepSet::NarrowPhase, Self::NARROW_PHASE),
        (PhysicsStepSet::Solver, Self::SOLVER),
        (PhysicsStepSet::Sleeping, Self::SLEEPING),
        (PhysicsStepSet::Finalize, Self::FINALIZE),
        (PhysicsStepSet::SpatialQuery, Self::SPATIAL_QUERY),
    ];
}

/// Records the physics step's timings and counts in Bevy's [`DiagnosticsStore`] (see the
/// [module docs](self)). Add it after the physics plugin.
///
/// [`DiagnosticsStore`]: bevy::diagnostic::DiagnosticsStore
pub struct PhysicsDiagnosticsPlugin;

impl Plugin for PhysicsDiagnosticsPlugin {
    fn build(&self, app: &mut App) {
        let stages = PhysicsDiagnostics::STAGES.map(|(_, path)| path);
        for path in [PhysicsDiagnostics::STEP].into_iter().chain(stages) {
            app.register_diagnostic(Diagnostic::new(path).with_suffix("ms"));
        }
        app.register_diagnostic(Diagnostic::new(PhysicsDiagnostics::AWAKE_BODIES))
            .register_diagnostic(Diagnostic::new(PhysicsDiagnostics::TOUCHING_PAIRS));
        app.init_resource::<StageClock>();
        let stages = PhysicsDiagnostics::STAGES.map(|(set, _)| set);
        app.add_systems(PhysicsSchedule, start_clock.before(stages[0]));
        for (index, pair) in stages.windows(2).enumerate() {
            let mark = move |mut clock: ResMut<StageClock>| clock.marks[index + 1] = Instant::now();
            app.add_systems(PhysicsSchedule, mark.after(pair[0]).before(pair[1]));
        }
        app.add_systems(PhysicsSchedule, report.after(stages[stages.len() - 1]));
    }
}

/// When each stage started, and (last) when the step ended.
#[derive(Resource)]
struct StageClock {
    marks: [Instant; 8],
}

impl Default for StageClock {
    fn default() -> Self {
        Self {
            marks: [Instant::now(); 8],
        }
    }
}

fn start_clock(mut clock: ResMut<StageClock>) {
    clock.marks[0] = Instant::now();
}

fn report(
    mut clock: ResMut<StageClock>,
    mut diagnostics: Diagnostics,
    bodies: Query<&RigidBody, Without<Sleeping>>,
    collisions: Collisions,
) {
    clock.marks[7] = Instant::now();
    let ms = |from: usize, to: usize| {
        (clock.marks[to].saturating_duration_since(clock.marks[from])).as_secs_f64() * 1000.0
    };
    diagnostics.add_measurement(&PhysicsDiagnostics::STEP, || ms(0, 7));
    for (index, (_, path)) in PhysicsDiagnostics::STAGES.iter().enumerate() {
        diagnostics.add_measurement(path, || ms(index, index + 1));
    }
    diagnostics.add_measurement(&PhysicsDiagnostics::AWAKE_BODIES, || {
        bodies.iter().filter(|body| !body.is_static()).count() as f64
    });
    diagnostics.add_measurement(&PhysicsDiagnostics::TOUCHING_PAIRS, || {
        collisions.len() as f64
    });
}
