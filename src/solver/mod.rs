//! The solver: dense body storage, the soft-step contact solver, integration, XPBD constraints
//! and joints, all driven by the substep loop.
//!
//! Per step (in [`SolverSet`] order): gather awake bodies, build contact constraints, prepare
//! joints, run the substeps, apply restitution, store impulses and write bodies back. Per
//! substep (in [`SubstepSolverSet`] order): integrate velocities, warm start, solve contacts,
//! integrate positions, relax contacts, solve joints and user constraints, project velocities.

pub mod ccd;
mod colouring;
pub mod contact;
mod groups;
pub mod integrator;
pub mod joints;
pub(crate) mod kinematic;
pub mod rows;
pub mod softness;
pub mod solver_body;
mod wide;
pub mod xpbd;

pub use crate::settings::{Gravity, SolverConfig};
pub use ccd::{SweepMode, SweptCcd};
pub use softness::SoftCoefficients;
pub use solver_body::{RigidBodyQueryItem, SolverBodies};

use bevy::prelude::*;

use crate::schedule::{
    PhysicsSchedule, PhysicsStepSet, SolverSet, SubstepSchedule, SubstepSolverSet,
};
use crate::validation::ValidationApp;

/// Body gathering, contacts, integration and writeback.
pub(crate) struct SolverPlugin;

impl Plugin for SolverPlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins(rows::RowPlugin)
            .init_resource::<Gravity>()
            .init_resource::<SolverConfig>()
            .validate_resource::<Gravity>()
            .validate_resource::<SolverConfig>()
            .validate_component::<crate::body::GravityScale>()
            .validate_component::<crate::body::LinearDamping>()
            .validate_component::<crate::body::AngularDamping>()
            .validate_component::<crate::body::ConstantForce>()
            .validate_component::<crate::body::ConstantTorque>()
            .validate_component::<crate::body::ExternalImpulse>()
            .init_resource::<SolverBodies>()
            .init_resource::<contact::ContactConstraints>()
            .add_systems(
                PhysicsSchedule,
                (
                    solver_body::prepare_solver_bodies.in_set(SolverSet::PrepareSolverBodies),
                    (contact::prepare_contacts, contact::track_contact_forces)
                        .chain()
                        .in_set(SolverSet::PrepareContacts),
                    contact::apply_restitution.in_set(SolverSet::Restitution),
                    (
                        contact::store_impulses,
                        contact::store_step_impulses,
                        solver_body::write_back_bodies,
                        kinematic::snap_to_kinematic_targets,
                    )
                        .chain()
                        .in_set(SolverSet::Writeback),
                    // Before the broad phase, which reaches as far as the velocities move.
                    kinematic::drive_kinematic_targets
                        .in_set(PhysicsStepSet::Prepare)
                        .after(crate::body::reject_non_finite_velocities)
                        .after(crate::collision::mass_properties::update_mass_properties),
                ),
            )
            .add_systems(
                SubstepSchedule,
                (
                    integrator::integrate_velocities.in_set(SubstepSolverSet::IntegrateVelocities),
                    contact::warm_start.in_set(SubstepSolverSet::WarmStart),
                    contact::solve_contacts.in_set(SubstepSolverSet::SolveContacts),
                    (integrator::integrate_positions, xpbd::record_xpbd_starts)
                        .chain()
                        .in_set(SubstepSolverSet::IntegratePositions),
                    contact::relax_contacts.in_set(SubstepSolverSet::Relax),
                    xpbd::project_velocities.in_set(SubstepSolverSet::XpbdVelocityProjection),
                ),
            );
    }
}
