//! One-dimensional velocity constraint rows, solved inside the soft-step contact solver.
//!
//! A [`ConstraintRow`] constrains one relative velocity of two bodies, as PhysX's
//! `Px1DConstraint` does. With the Jacobian `J = {linear0, angular0, −linear1, −angular1}` the
//! row's speed is
//!
//! `J·v = linear0·v₀ + angular0·ω₀ − linear1·v₁ − angular1·ω₁`,
//!
//! angular parts taken about each body's centre of mass; an impulse `λ` along the row gives
//! body 0 the linear impulse `λ linear0` and angular impulse `λ angular0`, and body 1 the
//! opposite `−λ linear1`, `−λ angular1`. The geometric error `C` is the position-level value
//! whose rate is `J·v`.
//!
//! | [`ConstraintRow`] | `Px1DConstraint` |
//! | --- | --- |
//! | `linear0`, `angular0`, `linear1`, `angular1` | same names: `J = {linear0, angular0, −linear1, −angular1}` |
//! | `geometric_error` | `geometricError` |
//! | `velocity_target` | `velocityTarget` |
//! | `min_impulse`, `max_impulse` (per step, N·s) | `minImpulse`, `maxImpulse` |
//! | [`RowMode::Hard`] | a row without `eSPRING` or `eRESTITUTION` |
//! | [`RowMode::Spring`] `{ stiffness, damping, acceleration }` | `eSPRING` (+ `eACCELERATION_SPRING`), `mods.spring` |
//! | [`RowMode::Restitution`] `{ restitution, velocity_threshold }` | `eRESTITUTION`, `mods.bounce` |
//! | `keep_bias` | `eKEEPBIAS` |
//!
//! ## How rows are solved
//!
//! Rows are gathered once per step (in [`SolverSet::PrepareJoints`]): their Jacobians, the
//! velocity change per unit impulse of each body and the effective mass `m = 1 / (J M⁻¹ Jᵀ)`
//! are fixed for the step, like the contact constraints'. Each substep of length
//! `h` they are warm started with their accumulated impulse, solved with bias in
//! [`SubstepSolverSet::SolveContacts`] and without it in [`SubstepSolverSet::Relax`], each
//! right after the contacts, with the accumulated impulse clamped to
//! `[min_impulse, max_impulse]`. The error follows the bodies within the step: it is the
//! step's `geometric_error` plus `J` applied to the displacement of the bodies since the step
//! began (rotations linearised, as the contact solver does with separations).
//!
//! - **Hard** rows drive `J·v + bias − velocity_target` to zero. The bias is the soft-step
//!   bias of Catto ("Solver2D: soft step", 2024; "Soft Constraints", GDC 2011):
//!   `Δλ = −m·mass_scale·(J·v − v_target + bias_rate·C) − impulse_scale·λ`, with the
//!   coefficients of [`SoftCoefficients`](crate::solver::SoftCoefficients) for the row's
//!   frequency and damping ratio, by default those of contacts against static bodies (as
//!   Box2D v3 gives its joints twice the contact stiffness). The relax pass drops the bias
//!   (`Δλ = −m (J·v − v_target)`) unless the row keeps it. A row with a velocity target
//!   follows a moving target: its error is measured from where the target has moved,
//!   `C − v_target·t` after `t` seconds of the step, so the bias never fights the drive.
//!   A one-sided row (`min_impulse ≥ 0`, or `max_impulse ≤ 0`) whose error lies on the side
//!   it cannot pull back from is speculative, as contacts are: it only stops the approach
//!   at `C / h`.
//! - **Spring** rows apply the implicit spring of the reference,
//!   `F = k·(−C′) + c·(v_target − J·v′)`, with `C′` and `J·v′` the error and speed *after* the
//!   substep's solve and position update (force springs; acceleration springs multiply by the
//!   effective mass). Per substep that is `λ = h F`, and with `s = h (h k + c)` (force) the
//!   accumulated-impulse form is `Δλ = −m·s/(s+m)·(J·v + (k C − c v_target)/(c + h k))
//!   − m/(s+m)·λ`, which for `k = m ω²`, `c = 2 m ζ ω` is exactly the soft coefficients
//!   above. For a lone row one update solves this exactly, so springs are solved once per
//!   substep, in the biased pass, and the relax pass leaves their impulse alone: solving
//!   them again after the position update would apply the spring of a position one substep
//!   ahead, which measurably over-damps them (a ζ = 0.4 oscillator decays as ζ = 0.407
//!   instead of backward Euler's 0.403 at h = 1/256 s). `keep_bias` has no effect on them.
//! - **Restitution** rows are hard rows that bounce: with the speed `J·v` before the step's
//!   solve and `bounce = −e·(J·v)`, if `−J·v` exceeds the threshold and the bounce points
//!   against the error, the error is replaced by zero and the velocity target by `bounce`.
//!   Because rows act speculatively, "the error" here is the error the row would reach by the
//!   end of the step at the pre-solve speed (the reference checks the error at the step's
//!   start, which a speculative row never lets go negative).
//!
//! Impulses are reported and limited per step (N·s); internally each substep applies and
//! clamps `1 / substeps` of them, as the contact solver does.
//!
//! Beside the rows, [`VelocityRows`] holds three-dimensional velocity *blocks* (the engine's
//! own, not user-facing): a joint's anchors or rotations held together in every direction (or
//! every direction but one free axis) and solved exactly in one update, after the rows in each
//! pass. The built-in XPBD joints whose bodies rest on contacts add them (see the module
//! `block` in the source).
//!
//! [`SolverSet::PrepareJoints`]: crate::SolverSet::PrepareJoints
//! [`SubstepSolverSet::SolveContacts`]: crate::SubstepSolverSet::SolveContacts
//! [`SubstepSolverSet::Relax`]: crate::SubstepSolverSet::Relax

mod block;
mod solve;
mod user;

pub(crate) use block::PreparedBlock;
pub use solve::VelocityRows;
pub(crate) use user::RowMap;
pub use user::{
    RowSink, VelocityConstraint, VelocityConstraintCache, VelocityConstraintCaches,
    solve_velocity_constraint,
};

use bevy::prelude::*;

use crate::math::{Scalar, Vector};
use crate::schedule::{PhysicsSchedule, SolverSet, SubstepSchedule, SubstepSolverSet};
use crate::solver::contact;

/// Solves every velocity row right after the contacts in each substep pass.
pub(crate) struct RowPlugin;

impl Plugin for RowPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<solve::VelocityRows>()
            .init_resource::<user::VelocityConstraintCaches>()
            .add_systems(
                PhysicsSchedule,
                (
                    solve::clear_rows.in_set(SolverSet::PrepareContacts),
                    solve::finish_rows.in_set(SolverSet::Writeback),
                ),
            )
            .add_systems(
                SubstepSchedule,
                (
                    solve::warm_start_rows
                        .in_set(SubstepSolverSet::WarmStart)
                        .after(contact::warm_start),
                    solve::solve_rows
                        .in_set(SubstepSolverSet::SolveContacts)
                        .after(contact::solve_contacts),
                    solve::relax_rows
                        .in_set(SubstepSolverSet::Relax)
                        .after(contact::relax_contacts),
                ),
            );
    }
}

/// How stiff a hard row's position correction is.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum RowSoftness {
    /// The soft-step coefficients of contacts against static bodies
    /// ([`SolverConfig`](crate::SolverConfig): twice the contact frequency, the contact damping
    /// ratio).
    #[default]
    Contact,
    /// A soft constraint of its own frequency (Hz) and damping ratio. A frequency of 0 leaves
    /// the error uncorrected.
    Custom {
        /// Stiffness as a frequency, Hz.
        frequency: Scalar,
        /// Damping ratio (1 is critical).
        damping_ratio: Scalar,
    },
}

/// What kind of row a [`ConstraintRow`] is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RowMode {
    /// A rigid row: `J·v` is driven to `velocity_target` minus the softness's bias on the error.
    Hard(RowSoftness),
    /// An implicit spring `F = stiffness·(−C) + damping·(velocity_target − J·v)`.
    Spring {
        /// N/m (or N·m/rad); with `acceleration`, 1/s².
        stiffness: Scalar,
        /// N·s/m (or N·m·s/rad); with `acceleration`, 1/s.
        damping: Scalar,
        /// The spring gives an acceleration along the row rather than a force: the effective
        /// mass multiplies it.
        acceleration: bool,
    },
    /// A hard row (contact softness) that bounces at `−restitution` times its pre-solve speed
    /// when that speed exceeds `velocity_threshold` and the bounce opposes the error.
    Restitution {
        /// The coefficient of restitution (may exceed 1 or be negative, as in the reference).
        restitution: Scalar,
        /// The approach speed below which the row does not bounce, m/s (or rad/s).
        velocity_threshold: Scalar,
    },
}

/// One velocity constraint row between two bodies (see the [module docs](self) for the
/// mapping to PhysX's `Px1DConstraint`).
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// // Pull body 0 up along y at 0.5 m/s, with at most 100 N·s per step.
/// let row = ConstraintRow::linear(Vec3::Y, Vec3::ZERO, Vec3::ZERO)
///     .with_velocity_target(0.5)
///     .with_impulse_limits(-100.0, 100.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConstraintRow {
    /// Linear Jacobian of body 0.
    pub linear0: Vector,
    /// Angular Jacobian of body 0 (about its centre of mass).
    pub angular0: Vector,
    /// Linear Jacobian of body 1 (enters `J` negated).
    pub linear1: Vector,
    /// Angular Jacobian of body 1 (enters `J` negated).
    pub angular1: Vector,
    /// The position error `C` at the start of the step, whose rate is `J·v`.
    pub geometric_error: Scalar,
    /// The speed `J·v` the row aims for.
    pub velocity_target: Scalar,
    /// Least impulse the row may apply in one step, N·s (may be `−∞`).
    pub min_impulse: Scalar,
    /// Largest impulse the row may apply in one step, N·s (may be `∞`).
    pub max_impulse: Scalar,
    /// Hard, spring or restitution.
    pub mode: RowMode,
    /// The relax pass keeps the bias (the reference's `eKEEPBIAS`).
    pub keep_bias: bool,
}

impl ConstraintRow {
    /// A hard, unlimited row with the given Jacobian, no error and no velocity target.
    pub fn new(linear0: Vector, angular0: Vector, linear1: Vector, angular1: Vector) -> Self {
        Self {
            linear0,
            angular0,
            linear1,
            angular1,
            geometric_error: 0.0,
            velocity_target: 0.0,
            min_impulse: Scalar::NEG_INFINITY,
            max_impulse: Scalar::INFINITY,
            mode: RowMode::Hard(RowSoftness::Contact),
            keep_bias: false,
        }
    }

    /// A row along the unit `direction` between a point at offset `r0` from body 0's centre of
    /// mass and one at offset `r1` from body 1's: `J·v` is the speed of point 0 relative to
    /// point 1 along `direction`.
    pub fn linear(direction: Vector, r0: Vector, r1: Vector) -> Self {
        Self::new(
            direction,
            r0.cross(direction),
            direction,
            r1.cross(direction),
        )
    }

    /// A row about the unit `axis`: `J·v` is body 0's angular velocity relative to body 1's
    /// about `axis`.
    pub fn angular(axis: Vector) -> Self {
        Self::new(Vector::ZERO, axis, Vector::ZERO, axis)
    }

    /// Sets the geometric error.
    pub fn with_error(mut self, error: Scalar) -> Self {
        self.geometric_error = error;
        self
    }

    /// Sets the velocity target.
    pub fn with_velocity_target(mut self, target: Scalar) -> Self {
        self.velocity_target = target;
        self
    }

    /// Limits the impulse per step to `[min, max]` N·s.
    pub fn with_impulse_limits(mut self, min: Scalar, max: Scalar) -> Self {
        self.min_impulse = min;
        self.max_impulse = max;
        self
    }

    /// Makes the row a force spring (N/m and N·s/m, or the angular equivalents).
    pub fn with_spring(mut self, stiffness: Scalar, damping: Scalar) -> Self {
        self.mode = RowMode::Spring {
            stiffness,
            damping,
            acceleration: false,
        };
        self
    }

    /// Makes the row an acceleration spring (1/s² and 1/s): the same response whatever the
    /// masses.
    pub fn with_acceleration_spring(mut self, stiffness: Scalar, damping: Scalar) -> Self {
        self.mode = RowMode::Spring {
            stiffness,
            damping,
            acceleration: true,
        };
        self
    }

    /// Makes the row a restitution row.
    pub fn with_restitution(mut self, restitution: Scalar, velocity_threshold: Scalar) -> Self {
        self.mode = RowMode::Restitution {
            restitution,
            velocity_threshold,
        };
        self
    }

    /// Makes the row hard with its own softness (frequency in Hz, damping ratio).
    pub fn with_softness(mut self, frequency: Scalar, damping_ratio: Scalar) -> Self {
        self.mode = RowMode::Hard(RowSoftness::Custom {
            frequency,
            damping_ratio,
        });
        self
    }

    /// Keeps the bias in the relax pass.
    pub fn keeping_bias(mut self) -> Self {
        self.keep_bias = true;
        self
    }

    /// Why the row cannot be solved, if it cannot.
    pub(crate) fn defect(&self) -> Option<&'static str> {
        let vectors = [self.linear0, self.angular0, self.linear1, self.angular1];
        if !vectors.iter().all(|v| v.is_finite()) {
            return Some("a non-finite Jacobian");
        }
        if !self.geometric_error.is_finite() || !self.velocity_target.is_finite() {
            return Some("a non-finite geometric error or velocity target");
        }
        if self.min_impulse.is_nan() || self.max_impulse.is_nan() {
            return Some("a NaN impulse limit");
        }
        if self.min_impulse > self.max_impulse {
            return Some("min_impulse > max_impulse");
        }
        match self.mode {
            RowMode::Hard(RowSoftness::Custom {
                frequency,
                damping_ratio,
            }) if !(frequency.is_finite()
                && damping_ratio.is_finite()
                && frequency >= 0.0
                && damping_ratio >= 0.0) =>
            {
                Some("a negative or non-finite softness")
            }
            RowMode::Spring {
                stiffness, damping, ..
            } if !(stiffness.is_finite()
                && damping.is_finite()
                && stiffness >= 0.0
                && damping >= 0.0) =>
            {
                Some("a negative or non-finite spring stiffness or damping")
            }
            RowMode::Restitution {
                restitution,
                velocity_threshold,
            } if !(restitution.is_finite() && velocity_threshold.is_finite()) => {
                Some("a non-finite restitution or bounce threshold")
            }
            _ => None,
        }
    }
}
