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
pub mod integrator;
pub mod joints;
pub mod rows;
pub mod softness;
pub mod solver_body;
pub mod xpbd;

pub use ccd::{SweepMode, SweptCcd};
pub use softness::SoftCoefficients;
pub use solver_body::{RigidBodyQueryItem, SolverBodies};

use bevy::prelude::*;

use crate::math::{Scalar, Vector};
use crate::schedule::{PhysicsSchedule, SolverSet, SubstepSchedule, SubstepSolverSet};
use crate::validation::{Validate, ValidationApp, check, join, non_negative};

/// World gravity, m/s². Default `(0, -9.81, 0)`. A non-finite gravity is replaced by the
/// default with a warning.
#[derive(Resource, Clone, Copy, Debug, PartialEq, Deref, DerefMut)]
pub struct Gravity(pub Vector);

impl Default for Gravity {
    fn default() -> Self {
        Self(Vector::new(0.0, -9.81, 0.0))
    }
}

impl Validate for Gravity {
    fn validate(&mut self) -> Option<String> {
        if self.0.is_finite() {
            return None;
        }
        let message = format!("{} is not finite; using the default", self.0);
        *self = Self::default();
        Some(message)
    }
}

/// Tuning of the contact solver. The defaults suit bodies from centimetres to tens of metres.
///
/// Every field must be finite and ≥ 0 (the frequency and the static stiffness factor > 0); a
/// field that is not is replaced by its default, with a warning.
#[derive(Resource, Clone, Copy, Debug, PartialEq)]
pub struct SolverConfig {
    /// Contact stiffness as a frequency, Hz. Capped at a quarter of the substep rate, where the
    /// soft step stays stable. Default 30.
    pub contact_frequency: Scalar,
    /// Contact damping ratio. Default 10 (heavily over-damped: no bounce from the bias).
    pub contact_damping_ratio: Scalar,
    /// How much stiffer contacts against static bodies are. Default 2.
    pub static_stiffness_factor: Scalar,
    /// The fastest the position bias may push overlapping bodies apart, m/s. Default 3.
    pub max_push_out_speed: Scalar,
    /// Approach speed below which contacts do not bounce, m/s. Default 1.
    pub restitution_threshold: Scalar,
    /// Contact tolerance, m: points closer than this count as touching, and the speculative
    /// margin is four times it. Default 0.005.
    pub linear_slop: Scalar,
}

impl Default for SolverConfig {
    fn default() -> Self {
        Self {
            contact_frequency: 30.0,
            contact_damping_ratio: 10.0,
            static_stiffness_factor: 2.0,
            max_push_out_speed: 3.0,
            restitution_threshold: 1.0,
            linear_slop: 0.005,
        }
    }
}

impl Validate for SolverConfig {
    fn validate(&mut self) -> Option<String> {
        let d = Self::default();
        let positive = |x: Scalar| x.is_finite() && x > 0.0;
        let why = "is not a finite number ≥ 0";
        let why_positive = "is not a finite number > 0";
        join([
            check(
                &mut self.contact_frequency,
                positive,
                "contact_frequency",
                why_positive,
                d.contact_frequency,
            ),
            check(
                &mut self.contact_damping_ratio,
                non_negative,
                "contact_damping_ratio",
                why,
                d.contact_damping_ratio,
            ),
            check(
                &mut self.static_stiffness_factor,
                positive,
                "static_stiffness_factor",
                why_positive,
                d.static_stiffness_factor,
            ),
            check(
                &mut self.max_push_out_speed,
                non_negative,
                "max_push_out_speed",
                why,
                d.max_push_out_speed,
            ),
            check(
                &mut self.restitution_threshold,
                non_negative,
                "restitution_threshold",
                why,
                d.restitution_threshold,
            ),
            check(
                &mut self.linear_slop,
                non_negative,
                "linear_slop",
                why,
                d.linear_slop,
            ),
        ])
    }
}

impl SolverConfig {
    /// How far apart surfaces may be and still get a (speculative) contact point.
    pub fn speculative_distance(&self) -> Scalar {
        // Also read outside the step (spatial queries), possibly before validation has
        // replaced a bad slop: use the fallback here too.
        let slop = if non_negative(self.linear_slop) {
            self.linear_slop
        } else {
            Self::default().linear_slop
        };
        4.0 * slop
    }

    pub(crate) fn contact_coefficients(&self, h: Scalar) -> contact::ContactCoefficients {
        let hertz = self.contact_frequency.min(0.25 / h);
        contact::ContactCoefficients {
            dynamic: SoftCoefficients::new(hertz, self.contact_damping_ratio, h),
            fixed: SoftCoefficients::new(
                self.static_stiffness_factor * hertz,
                self.contact_damping_ratio,
                h,
            ),
        }
    }
}

/// Body gathering, contacts, integration and writeback.
pub(crate) struct SolverPlugin;

impl Plugin for SolverPlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins(rows::RowPlugin)
            .init_resource::<Gravity>()
            .init_resource::<SolverConfig>()
            .validate_resource::<Gravity>()
            .validate_resource::<SolverConfig>()
            .validate_component::<crate::GravityScale>()
            .validate_component::<crate::LinearDamping>()
            .validate_component::<crate::AngularDamping>()
            .validate_component::<crate::ConstantForce>()
            .validate_component::<crate::ConstantTorque>()
            .validate_component::<crate::ExternalImpulse>()
            .init_resource::<SolverBodies>()
            .init_resource::<contact::ContactConstraints>()
            .add_systems(
                PhysicsSchedule,
                (
                    solver_body::prepare_solver_bodies.in_set(SolverSet::PrepareSolverBodies),
                    contact::prepare_contacts.in_set(SolverSet::PrepareContacts),
                    contact::apply_restitution.in_set(SolverSet::Restitution),
                    (contact::store_impulses, solver_body::write_back_bodies)
                        .chain()
                        .in_set(SolverSet::Writeback),
                ),
            )
            .add_systems(
                SubstepSchedule,
                (
                    integrator::integrate_velocities.in_set(SubstepSolverSet::IntegrateVelocities),
                    contact::warm_start.in_set(SubstepSolverSet::WarmStart),
                    contact::solve_contacts.in_set(SubstepSolverSet::SolveContacts),
                    integrator::integrate_positions.in_set(SubstepSolverSet::IntegratePositions),
                    contact::relax_contacts.in_set(SubstepSolverSet::Relax),
                    xpbd::project_velocities.in_set(SubstepSolverSet::XpbdVelocityProjection),
                ),
            );
    }
}
