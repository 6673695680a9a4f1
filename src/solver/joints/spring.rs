//! Joint springs and joint friction: one-dimensional rows along a joint's free coordinate (a
//! distance joint's length, a hinge's angle, a slider's position).
//!
//! How a [`JointSpring`] is solved and what its frequency is relative to is in its own docs.
//!
//! ## Friction
//!
//! Joint friction is a velocity drive to zero relative speed along the free coordinate whose
//! force is limited to the friction force (or torque): an XPBD row asking the coordinate not to
//! have moved during the substep (integration and corrections together), with its multiplier
//! kept within `±F h²`. Below that force the joint holds still; above it the friction force is
//! `F` against the motion.
//!
//! A joint with both friction and a motor solves its motor before and after the friction in
//! every pass, each with its own clamped multiplier (the motor's shared by its two solves).
//! They settle where the friction is at its limit and the motor holds its target (a motor
//! strong enough for the load and the friction), or the motor is at its limit and the
//! friction holds the joint still (a weaker one stalls), or both are at their limits and the
//! difference of the two forces drives the joint; the motor's second solve makes a single
//! pass (as a joint with a body on a contact gets) reach that split too, where a motor solved
//! only after the friction would creep on by a substep's push in every substep, and one
//! solved only before it would fall short of its target speed.
//!
//! - M. Macklin, M. Müller, N. Chentanez, *XPBD: Position-Based Simulation of Compliant
//!   Constrained Dynamics*, Motion in Games 2016.
//! - E. Catto, *Soft Constraints: Reinventing the Spring*, GDC 2011; *Solver2D*, 2024
//!   (Box2D v3's soft step).

use bevy::prelude::*;

use super::{Anchors, JointBody, JointSolve, clamp_range};
use crate::math::{PI, Scalar, Vector};
use crate::validation::{check, join, non_negative};

/// How stiff and how damped a [`JointSpring`] is.
#[derive(Clone, Reflect, Copy, Debug, PartialEq)]
#[reflect(Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub enum SpringCoefficients {
    /// Relative to the joint's effective mass along the spring (see [`JointSpring`]): the
    /// same oscillation whatever the bodies weigh.
    Frequency {
        /// Undamped natural frequency, Hz (0: no spring).
        hertz: Scalar,
        /// Damping ratio: 1 is critical damping, below it the spring oscillates.
        damping_ratio: Scalar,
    },
    /// Physical coefficients.
    Stiffness {
        /// N/m (distance, slider) or N·m/rad (hinge).
        stiffness: Scalar,
        /// N·s/m (distance, slider) or N·m·s/rad (hinge).
        damping: Scalar,
    },
}

/// A spring–damper pulling a joint's free coordinate towards a rest value: a
/// [`DistanceJoint`](super::DistanceJoint)'s length (m), a
/// [`RevoluteJoint`](super::RevoluteJoint)'s angle (rad, counting whole turns) or a
/// [`PrismaticJoint`](super::PrismaticJoint)'s position (m).
///
/// The spring pulls the coordinate `x` towards its rest value `x₀` with the force
/// `F = −k (x − x₀) − c ẋ`, on both sides of the rest value and with its damping everywhere
/// (unlike a compliant limit, which acts only outside its range).
///
/// ## Frequency and damping ratio, or stiffness and damping
///
/// [`JointSpring::new`] takes a frequency `f` (Hz) and a damping ratio `ζ` and sets the
/// stiffness and damping *relative to the joint's effective mass* `m = 1 / w` along the
/// spring, as Box2D and Jolt do for their soft constraints (Catto 2011, 2024): with `ω = 2πf`,
/// `k = m ω²` and `c = 2 ζ m ω`. The spring then has the same feel on a pebble and on a truck,
/// and no choice of masses makes it unstable. The effective mass is that of the spring's row
/// on its own: both bodies' inverse masses and inertias at the anchors, along the row. For a
/// hinge that means the moments of inertia about the bodies' centres of mass, not about the
/// hinge, so an arm hinged at one end swings slower than `f` (by `√(I_centre / I_hinge)`), as
/// in those engines. A body pulled through its centre of mass by a spring to a static body (a
/// ball on a distance joint, a block on a slider, a wheel on its axle) oscillates at `f` with
/// damping ratio `ζ`, up to the integrator's error below.
///
/// [`JointSpring::from_stiffness`] takes a physical stiffness and damping coefficient instead
/// (N/m and N·s/m, or N·m/rad and N·m·s/rad), for springs given in physical units.
///
/// ## How it is solved
///
/// As an XPBD row with the damping term of Macklin, Müller & Chentanez (2016, eq. 26): with
/// `α̃ = 1 / (k h²)`, `γ = α̃ c h` and `Δx` the change of the coordinate since the start of the
/// substep `h`, `Δλ = (−C − α̃ λ − γ Δx) / ((1 + γ) w + α̃)`. Multiplied through by `k h²`,
/// `Δλ = (−k h² C − λ − c h Δx) / ((k h² + c h) w + 1)`, a pure damper (`k = 0`) and an
/// undamped spring (`c = 0`) need no special case, and in the frequency form `k h² w = (ω h)²`
/// and `c h w = 2 ζ ω h` do not depend on the masses at all. For a single row the fixed point
/// is the backward (implicit) Euler step of the spring–damper: unconditionally stable, and
/// damping a little on its own (an undamped spring's amplitude falls by `1 / √(1 + ω² h²)`
/// per substep, a decay rate of about `ω² h / 2`; 0.08 1/s for 1 Hz at 60 Hz and 4 substeps).
///
/// - M. Macklin, M. Müller, N. Chentanez, *XPBD: Position-Based Simulation of Compliant
///   Constrained Dynamics*, Motion in Games 2016.
/// - E. Catto, *Soft Constraints: Reinventing the Spring*, GDC 2011; *Solver2D*, 2024
///   (Box2D v3's soft step).
///
/// ```
/// # use impetus3d::prelude::*;
/// // 2 Hz, a tenth of critical damping, towards 0.5 m.
/// let soft = JointSpring::new(2.0, 0.1).with_rest(0.5);
/// // 800 N/m and 40 N·s/m, towards 0.
/// let physical = JointSpring::from_stiffness(800.0, 40.0);
/// ```
#[derive(Clone, Reflect, Copy, Debug, PartialEq)]
#[reflect(Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct JointSpring {
    /// The value of the coordinate the spring pulls towards (default 0).
    pub rest: Scalar,
    /// Its stiffness and damping.
    pub coefficients: SpringCoefficients,
}

impl JointSpring {
    /// A spring of frequency `hertz` and damping ratio `damping_ratio` relative to the
    /// joint's effective mass, towards 0. When the joint enters the world, a NaN, infinite or
    /// negative frequency or ratio is replaced by 0 with a warning (a frequency of 0 is no
    /// spring).
    pub fn new(hertz: Scalar, damping_ratio: Scalar) -> Self {
        Self {
            rest: 0.0,
            coefficients: SpringCoefficients::Frequency {
                hertz,
                damping_ratio,
            },
        }
    }

    /// A spring of physical `stiffness` (N/m or N·m/rad) and `damping` (N·s/m or N·m·s/rad),
    /// towards 0. When the joint enters the world, a NaN, infinite or negative coefficient is
    /// replaced by 0 with a warning.
    pub fn from_stiffness(stiffness: Scalar, damping: Scalar) -> Self {
        Self {
            rest: 0.0,
            coefficients: SpringCoefficients::Stiffness { stiffness, damping },
        }
    }

    /// Sets the rest value. When the joint enters the world, a non-finite rest value removes
    /// the spring with a warning.
    pub fn with_rest(mut self, rest: Scalar) -> Self {
        self.rest = rest;
        self
    }

    /// `(k h² w, c h w)`: the spring's stiffness and damping over a substep `h`, scaled by the
    /// row's inverse mass `w`.
    fn gains(&self, w: Scalar, h: Scalar) -> (Scalar, Scalar) {
        match self.coefficients {
            SpringCoefficients::Frequency {
                hertz,
                damping_ratio,
            } => {
                let omega_h = 2.0 * PI * hertz * h;
                (omega_h * omega_h, 2.0 * damping_ratio * omega_h)
            }
            SpringCoefficients::Stiffness { stiffness, damping } => {
                (stiffness * h * h * w, damping * h * w)
            }
        }
    }
}

/// Checks a spring: a non-finite rest value removes it; bad coefficients are 0.
pub(crate) fn check_spring(spring: &mut Option<JointSpring>) -> Option<String> {
    let s = spring.as_mut()?;
    if !s.rest.is_finite() {
        let rest = s.rest;
        *spring = None;
        return Some(format!(
            "spring rest value {rest} is not finite; spring removed"
        ));
    }
    let why = "is not a finite number ≥ 0";
    let (a, b, names) = match &mut s.coefficients {
        SpringCoefficients::Frequency {
            hertz,
            damping_ratio,
        } => (
            hertz,
            damping_ratio,
            ["spring frequency", "spring damping ratio"],
        ),
        SpringCoefficients::Stiffness { stiffness, damping } => {
            (stiffness, damping, ["spring stiffness", "spring damping"])
        }
    };
    join([
        check(a, non_negative, names[0], why, 0.0),
        check(b, non_negative, names[1], why, 0.0),
    ])
}

/// Checks a friction force or torque: NaN or negative is 0 (no friction).
pub(crate) fn check_friction(friction: &mut Option<Scalar>) -> Option<String> {
    let f = friction.as_mut()?;
    check(f, |f| f >= 0.0, "friction", "is NaN or negative", 0.0)
}

/// A one-dimensional row of a joint: the direction in which a positive multiplier moves
/// body 2 relative to body 1 (body 1 gets the opposite).
#[derive(Clone, Copy)]
pub(crate) enum Row<'a> {
    /// A push along the unit vector at the anchors.
    Linear(&'a Anchors, Vector),
    /// A turn about the unit axis.
    Angular(Vector),
}

impl JointSolve<'_> {
    /// The row's generalized inverse mass `w`.
    fn row_inverse_mass(b1: &JointBody, b2: &JointBody, row: Row) -> Scalar {
        match row {
            Row::Linear(anchors, n) => {
                b1.positional_inverse_mass(anchors.r1, n)
                    + b2.positional_inverse_mass(anchors.r2, n)
            }
            Row::Angular(axis) => b1.angular_inverse_mass(axis) + b2.angular_inverse_mass(axis),
        }
    }

    /// Moves the bodies by the multiplier change `dl` along the row.
    fn apply_row(&mut self, b1: &mut JointBody, b2: &mut JointBody, row: Row, dl: Scalar) {
        match row {
            Row::Linear(anchors, n) => self.push(b1, b2, anchors, -dl * n),
            Row::Angular(axis) => self.turn(b1, b2, -dl * axis),
        }
    }

    /// One pass of a spring row (see [`JointSpring`]): `offset` is the coordinate minus the
    /// rest value, `moved` how far the coordinate moved since the start of the substep.
    pub(crate) fn spring_row(
        &mut self,
        (b1, b2): (&mut JointBody, &mut JointBody),
        row: Row,
        (offset, moved): (Scalar, Scalar),
        lagrange: &mut Scalar,
        spring: &JointSpring,
    ) {
        let w = Self::row_inverse_mass(b1, b2, row);
        if w <= Scalar::EPSILON {
            return;
        }
        let (stiffness, damping) = spring.gains(w, self.h);
        // `k h² C + c h Δx`, the spring's whole position impulse at this pose, times `w`.
        let pull = stiffness * offset + damping * moved;
        let dl = (-pull / w - *lagrange) / (stiffness + damping + 1.0);
        if !dl.is_finite() {
            return;
        }
        *lagrange += dl;
        self.apply_row(b1, b2, row, dl);
    }

    /// One pass of a friction row: `moved` is how far the coordinate moved since the start of
    /// the substep, which the row takes back with at most `max_force` (N or N·m).
    pub(crate) fn friction_row(
        &mut self,
        (b1, b2): (&mut JointBody, &mut JointBody),
        row: Row,
        moved: Scalar,
        lagrange: &mut Scalar,
        max_force: Scalar,
    ) {
        let w = Self::row_inverse_mass(b1, b2, row);
        if w <= Scalar::EPSILON || !moved.is_finite() {
            return;
        }
        let max = max_force * self.h * self.h;
        let new = clamp_range(*lagrange - moved / w, -max, max);
        let dl = new - *lagrange;
        *lagrange = new;
        self.apply_row(b1, b2, row, dl);
    }

    /// One pass of an isotropic angular friction: `turned` is the rotation vector body 2
    /// turned relative to body 1 since the start of the substep, which the friction takes
    /// back with a torque of at most `max_torque` about any axis. The multiplier is a vector
    /// clamped to a ball (a cone of torques, not a box per axis); each pass solves along the
    /// direction of what is left to take back, exact for an isotropic inertia and converging
    /// over the passes otherwise.
    pub(crate) fn angular_friction(
        &mut self,
        (b1, b2): (&mut JointBody, &mut JointBody),
        turned: Vector,
        lagrange: &mut Vector,
        max_torque: Scalar,
    ) {
        let Some(axis) = turned.try_normalize() else {
            return;
        };
        let w = Self::row_inverse_mass(b1, b2, Row::Angular(axis));
        if w <= Scalar::EPSILON {
            return;
        }
        let max = max_torque * self.h * self.h;
        let new = (*lagrange - turned / w).clamp_length_max(max);
        let dl = new - *lagrange;
        *lagrange = new;
        self.turn(b1, b2, -dl);
    }
}
