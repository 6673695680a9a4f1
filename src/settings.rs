//! World-wide settings that more than one stage reads: [`Gravity`] (the integrator and the
//! character controller) and [`SolverConfig`] (the contact tolerance is used by the broad and
//! narrow phases and the spatial queries; the stiffness by the contact solver). They sit below
//! every stage so that each stage can read them without depending on the others.

use bevy::prelude::*;

use crate::math::{Scalar, Vector};
use crate::validation::{
    MAX_LINEAR_SLOP, MAX_LINEAR_SPEED, Validate, cap, check, join, non_negative,
};

/// World gravity, m/s². Default `(0, -9.81, 0)`. A non-finite gravity is replaced by the
/// default with a warning.
#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq, Deref, DerefMut)]
#[reflect(Resource, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct Gravity(pub Vector);

impl Default for Gravity {
    fn default() -> Self {
        Self(Vector::new(0.0, -9.81, 0.0))
    }
}

impl Gravity {
    /// No gravity (space, a top-down game).
    pub const ZERO: Self = Self(Vector::ZERO);
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
/// Every field must be finite and ≥ 0 (the frequency, the static stiffness factor and the
/// speed limit > 0); a field that is not is replaced by its default, and a length or speed
/// above its cap by the cap, with a warning. A field missing from a file
/// takes its default.
#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Resource, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    serde(default),
    reflect(Serialize, Deserialize)
)]
pub struct SolverConfig {
    /// Contact stiffness as a frequency, Hz. Stiffer contacts sag less under load, but from
    /// about a fifth of the substep rate on, tall stacks settle erratically; capped at a
    /// quarter of the substep rate, where the soft step stays stable. Default 40 (a sixth of
    /// the substep rate at 4 substeps of 1/60 s; see the crate docs' "Defaults").
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
    /// margin is four times it. Default 0.005, at most
    /// [`MAX_LINEAR_SLOP`].
    pub linear_slop: Scalar,
    /// The fastest a dynamic body may move, m/s: a faster one is slowed to it at the start of
    /// each substep, and the broad phase never looks further ahead than this speed carries
    /// a body in a step (a kinematic body is not slowed, but is looked ahead of as if it
    /// were). Default 400, faster than sound (Box2D v3's `maximumLinearSpeed`). It bounds the
    /// work of a step: a body gone wild (an exploding joint, a velocity of 10³⁰ from a file)
    /// cannot reach every other body's neighbourhood in one step and make every pair a
    /// candidate. Raise it (up to [`MAX_LINEAR_SPEED`])
    /// for faster projectiles, or give them [`SweptCcd`](crate::solver::ccd::SweptCcd).
    pub max_linear_speed: Scalar,
    /// How many contacts and joints the solver computes at once. Every choice gives the same
    /// bits (each lane computes what the one-at-a-time code computes); the choice is for
    /// checking that, and for measuring. Default [`SolverLanes::Widest`].
    pub lanes: SolverLanes,
}

/// How many contacts and joints the solver computes at once (see [`SolverConfig::lanes`]).
#[derive(Reflect, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub enum SolverLanes {
    /// As many as the CPU's vector registers hold: contacts eight at a time where it has AVX
    /// (x86-64), else four; plain spherical joints four at a time.
    #[default]
    Widest,
    /// Contacts and plain spherical joints four at a time (SSE2 on x86-64, NEON on ARM).
    Four,
    /// The contact passes in plain scalar code, one `f32` operation per lane, and spherical
    /// joints one at a time: what a CPU without vector registers runs. (The contact blocks
    /// are still prepared with glam's four-wide types, which on such a CPU are the same
    /// operations in scalar code.)
    One,
}

impl Default for SolverConfig {
    fn default() -> Self {
        Self {
            contact_frequency: 40.0,
            contact_damping_ratio: 10.0,
            static_stiffness_factor: 2.0,
            max_push_out_speed: 3.0,
            restitution_threshold: 1.0,
            linear_slop: 0.005,
            max_linear_speed: 400.0,
            lanes: SolverLanes::Widest,
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
            )
            .or_else(|| cap(&mut self.linear_slop, MAX_LINEAR_SLOP, "linear_slop")),
            check(
                &mut self.max_linear_speed,
                positive,
                "max_linear_speed",
                why_positive,
                d.max_linear_speed,
            )
            .or_else(|| {
                cap(
                    &mut self.max_linear_speed,
                    MAX_LINEAR_SPEED,
                    "max_linear_speed",
                )
            }),
        ])
    }
}

impl SolverConfig {
    /// [`Self::max_linear_speed`] as the validation stage leaves it: also read where that
    /// stage may not have run yet.
    pub(crate) fn max_linear_speed(&self) -> Scalar {
        let mut usable = *self;
        usable.validate();
        usable.max_linear_speed
    }

    /// How far apart surfaces may be and still get a (speculative) contact point: four times
    /// [`Self::linear_slop`] as the validation stage leaves it (this is also read outside the
    /// step, by spatial queries, possibly before that stage has run).
    pub fn speculative_distance(&self) -> Scalar {
        let mut usable = *self;
        usable.validate();
        4.0 * usable.linear_slop
    }
}
