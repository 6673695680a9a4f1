//! Prepared rows and the systems that warm start, solve and relax them each substep.

use bevy::prelude::*;

use super::{ConstraintRow, PreparedBlock, RowMode, RowSoftness};
use crate::math::{Scalar, Vector};
use crate::schedule::PhysicsStepTime;
use crate::settings::SolverConfig;
use crate::solver::SoftCoefficients;
use crate::solver::solver_body::{BodyState, RigidBodyQueryItem, SolverBodies};

/// What a prepared row needs of the step: substep length, step length, substep count and the
/// default (contact) softness.
#[derive(Clone, Copy)]
pub(crate) struct StepContext {
    pub h: Scalar,
    pub dt: Scalar,
    pub substeps: Scalar,
    pub contact: SoftCoefficients,
}

impl StepContext {
    pub(crate) fn new(time: &PhysicsStepTime, config: &SolverConfig) -> Self {
        let h = time.substep_delta;
        Self {
            h,
            dt: time.delta,
            substeps: time.substeps.max(1) as Scalar,
            contact: crate::solver::contact::ContactCoefficients::new(config, h).fixed,
        }
    }
}

/// A row ready for the substep loop: body slots, Jacobian, the velocity change of each body
/// per unit impulse, effective mass and coefficients, all fixed for the step.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PreparedRow {
    b0: u32,
    b1: u32,
    /// Whether each body is dynamic (only those change).
    moves: [bool; 2],
    j_linear0: Vector,
    j_angular0: Vector,
    j_linear1: Vector,
    j_angular1: Vector,
    /// Velocity change of body 0 per unit impulse (linear, angular).
    dv0: Vector,
    dw0: Vector,
    /// Velocity change of body 1 per unit impulse (already negated).
    dv1: Vector,
    dw1: Vector,
    mass: Scalar,
    error: Scalar,
    /// Hard rows: the velocity target. Springs: `c v_target / (c + h k)`.
    target: Scalar,
    /// Rate at which the error's reference moves (the velocity target of hard rows, 0 for
    /// springs).
    target_rate: Scalar,
    soft: SoftCoefficients,
    /// Per substep.
    min: Scalar,
    max: Scalar,
    /// Whether the relax pass keeps the bias.
    keep_bias: bool,
    /// Springs have no speculative or relaxed form.
    spring: bool,
    /// +1: the row only pushes `J·v` up, so a positive error is free space (speculative);
    /// −1: the opposite; 0: two-sided.
    free_side: Scalar,
    /// Accumulated impulse of this substep (carried to the next substep and step).
    pub impulse: Scalar,
}

/// Every velocity row of the step, in the order the constraints added them (the engine's
/// dense row storage; it has no public fields).
///
/// Reflected without its contents (every field is ignored): it is the engine's working state,
/// rebuilt every step, so inspectors list it and scenes carry it empty, leaving the loading
/// world's own state in place (see [`reflection`](crate::reflection)).
#[derive(Resource, Default, Clone, Reflect)]
#[reflect(Resource, Default)]
pub struct VelocityRows {
    #[reflect(ignore)]
    pub(crate) rows: Vec<PreparedRow>,
    /// The step's velocity blocks, solved after the rows.
    #[reflect(ignore)]
    pub(crate) blocks: Vec<PreparedBlock>,
    /// The per-step impulses of the rows of the last finished step, by row index (kept by
    /// [`finish_rows`] at the end of each step).
    #[reflect(ignore)]
    pub(crate) last_impulses: Vec<Scalar>,
    /// The step those rows belonged to.
    #[reflect(ignore)]
    pub(crate) last_step: u64,
    /// The step the current rows belong to.
    #[reflect(ignore)]
    pub(crate) step: u64,
}

impl PreparedRow {
    /// Prepares `row` between slots `b0` and `b1`, warm started with the per-step impulse
    /// `warm`. Returns `None` for a row nothing can move.
    pub(crate) fn new(
        row: &ConstraintRow,
        (b0, b1): (usize, usize),
        bodies: &[RigidBodyQueryItem],
        step: &StepContext,
        warm: Scalar,
    ) -> Option<Self> {
        let (body0, body1) = (&bodies[b0], &bodies[b1]);
        let dv0 = body0.inverse_mass * body0.translation_mask * row.linear0;
        let dw0 = body0.step_inverse_inertia * row.angular0;
        let dv1 = -(body1.inverse_mass * body1.translation_mask * row.linear1);
        let dw1 = -(body1.step_inverse_inertia * row.angular1);
        let k = row.linear0.dot(dv0) + row.angular0.dot(dw0)
            - row.linear1.dot(dv1)
            - row.angular1.dot(dw1);
        if !k.is_finite() || k <= Scalar::EPSILON {
            return None;
        }
        let mass = 1.0 / k;
        let per_substep = 1.0 / step.substeps;
        let mut prepared = Self {
            b0: b0 as u32,
            b1: b1 as u32,
            moves: [body0, body1].map(|b| b.inverse_mass > 0.0),
            j_linear0: row.linear0,
            j_angular0: row.angular0,
            j_linear1: row.linear1,
            j_angular1: row.angular1,
            dv0,
            dw0,
            dv1,
            dw1,
            mass,
            error: row.geometric_error,
            target: row.velocity_target,
            target_rate: row.velocity_target,
            soft: step.contact,
            min: row.min_impulse * per_substep,
            max: row.max_impulse * per_substep,
            keep_bias: row.keep_bias,
            spring: false,
            free_side: if row.min_impulse >= 0.0 {
                1.0
            } else if row.max_impulse <= 0.0 {
                -1.0
            } else {
                0.0
            },
            impulse: (warm * per_substep)
                .clamp(row.min_impulse * per_substep, row.max_impulse * per_substep),
        };
        match row.mode {
            RowMode::Hard(RowSoftness::Contact) => {}
            RowMode::Hard(RowSoftness::Custom {
                frequency,
                damping_ratio,
            }) => prepared.soft = SoftCoefficients::new(frequency, damping_ratio, step.h),
            RowMode::Spring {
                stiffness,
                damping,
                acceleration,
            } => prepared.make_spring(
                stiffness,
                damping,
                acceleration,
                row.velocity_target,
                step.h,
            ),
            RowMode::Restitution {
                restitution,
                velocity_threshold,
            } => {
                let speed = pre_solve_speed(row, body0, body1, step.dt);
                let bounce = -restitution * speed;
                let end_error = row.geometric_error + step.dt * speed;
                if -speed > velocity_threshold && bounce * end_error <= 0.0 {
                    prepared.error = 0.0;
                    prepared.target = bounce;
                    prepared.target_rate = bounce;
                }
            }
        }
        Some(prepared)
    }

    /// The implicit spring's coefficients for the substep `h` (see the module docs).
    fn make_spring(&mut self, k: Scalar, c: Scalar, acceleration: bool, target: Scalar, h: Scalar) {
        self.spring = true;
        self.free_side = 0.0;
        self.target_rate = 0.0;
        let rate = c + h * k;
        // s = h (h k + c), in kg for force springs; an acceleration spring's is m times larger.
        let s = h * rate * if acceleration { self.mass } else { 1.0 };
        if rate <= 0.0 || s + self.mass <= 0.0 {
            // Neither stiffness nor damping: a row that applies nothing.
            self.soft = SoftCoefficients {
                bias_rate: 0.0,
                mass_scale: 0.0,
                impulse_scale: 1.0,
            };
            self.target = 0.0;
            return;
        }
        self.soft = SoftCoefficients {
            bias_rate: k / rate,
            mass_scale: s / (s + self.mass),
            impulse_scale: self.mass / (s + self.mass),
        };
        self.target = c * target / rate;
    }

    /// The row's speed `J·v` now.
    #[inline]
    fn speed(&self, body0: &BodyState, body1: &BodyState) -> Scalar {
        self.j_linear0.dot(body0.linear_velocity()) + self.j_angular0.dot(body0.angular_velocity())
            - self.j_linear1.dot(body1.linear_velocity())
            - self.j_angular1.dot(body1.angular_velocity())
    }

    /// The error now: the step's error plus `J` times the bodies' displacement since the step
    /// began, minus how far the target has moved in `elapsed` seconds.
    #[inline]
    fn error_now(&self, body0: &BodyState, body1: &BodyState, elapsed: Scalar) -> Scalar {
        self.error + self.j_linear0.dot(body0.moved()) + self.j_angular0.dot(body0.turned())
            - self.j_linear1.dot(body1.moved())
            - self.j_angular1.dot(body1.turned())
            - self.target_rate * elapsed
    }

    /// The impulse change of one solve (`biased`: the SolveContacts pass).
    #[inline]
    fn delta(
        &self,
        body0: &BodyState,
        body1: &BodyState,
        biased: bool,
        h: Scalar,
        elapsed: Scalar,
    ) -> Scalar {
        let speed = self.speed(body0, body1) - self.target;
        if self.spring {
            let c = self.error_now(body0, body1, elapsed);
            return -self.mass * self.soft.mass_scale * (speed + self.soft.bias_rate * c)
                - self.soft.impulse_scale * self.impulse;
        }
        let c = self.error_now(body0, body1, elapsed);
        if self.free_side * c > 0.0 {
            // Speculative: only stop the approach where it would cross zero this substep.
            return -self.mass * (speed + c / h);
        }
        if biased || self.keep_bias {
            -self.mass * self.soft.mass_scale * (speed + self.soft.bias_rate * c)
                - self.soft.impulse_scale * self.impulse
        } else {
            -self.mass * speed
        }
    }

    /// Applies the impulse `lambda` to the two bodies (only dynamic ones change).
    #[inline]
    fn apply(&self, bodies: &mut [BodyState], lambda: Scalar) {
        if self.moves[0] {
            bodies[self.b0 as usize].add_velocities(lambda * self.dv0, lambda * self.dw0);
        }
        if self.moves[1] {
            bodies[self.b1 as usize].add_velocities(lambda * self.dv1, lambda * self.dw1);
        }
    }

    /// One Gauss–Seidel update of the row.
    #[inline]
    fn solve(&mut self, bodies: &mut [BodyState], biased: bool, h: Scalar, elapsed: Scalar) {
        // A row limited to nothing is a placeholder (an inactive limit); springs are solved
        // once, in the biased pass: re-solving them after the position update would apply
        // the spring of a position one substep ahead (backward Euler becomes more dissipative:
        // a ζ = 0.4 oscillator then decays as ζ = 0.407 instead of 0.403 at h = 1/256 s).
        if (self.min == 0.0 && self.max == 0.0) || (self.spring && !biased) {
            return;
        }
        let delta = self.delta(
            &bodies[self.b0 as usize],
            &bodies[self.b1 as usize],
            biased,
            h,
            elapsed,
        );
        let new = (self.impulse + delta).clamp(self.min, self.max);
        let applied = new - self.impulse;
        self.impulse = new;
        self.apply(bodies, applied);
    }
}

/// The row's speed before the solve, after the step's external forces (gravity, constant
/// forces and torques), as the reference defines it. It also over-estimates how far the row
/// closes during the step (the substeps add those forces gradually), so a bounce is never
/// missed because gravity closed the last gap within the step.
fn pre_solve_speed(
    row: &ConstraintRow,
    body0: &RigidBodyQueryItem,
    body1: &RigidBodyQueryItem,
    dt: Scalar,
) -> Scalar {
    let v = |b: &RigidBodyQueryItem| {
        (
            b.linear_velocity + b.linear_acceleration * dt,
            b.angular_velocity + b.angular_acceleration * dt,
        )
    };
    let ((v0, w0), (v1, w1)) = (v(body0), v(body1));
    row.linear0.dot(v0) + row.angular0.dot(w0) - row.linear1.dot(v1) - row.angular1.dot(w1)
}

/// Starts a step's rows.
pub(crate) fn clear_rows(mut rows: ResMut<VelocityRows>, time: Res<PhysicsStepTime>) {
    rows.step = time.step_count;
    rows.rows.clear();
    rows.blocks.clear();
}

/// Ends a step's rows: keeps their per-step impulses for the next step's read-back and warm
/// starting. After this the prepared rows and blocks are not read again (the next step clears
/// them), so a snapshot leaves them out ([`VelocityRows::carried`]).
pub(crate) fn finish_rows(mut rows: ResMut<VelocityRows>, time: Res<PhysicsStepTime>) {
    let rows = &mut *rows;
    let substeps = time.substeps.max(1) as Scalar;
    rows.last_impulses.clear();
    rows.last_impulses
        .extend(rows.rows.iter().map(|r| r.impulse * substeps));
    rows.last_step = rows.step;
}

impl VelocityRows {
    /// What the next step reads: the last step's impulses and which step that was, without
    /// the prepared rows and blocks (per-step scratch once [`finish_rows`] has run).
    pub(crate) fn carried(&self) -> Self {
        Self {
            rows: Vec::new(),
            blocks: Vec::new(),
            last_impulses: self.last_impulses.clone(),
            last_step: self.last_step,
            step: self.step,
        }
    }

    /// The heap memory it holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        use crate::math::vec_bytes;
        vec_bytes(&self.rows) + vec_bytes(&self.blocks) + vec_bytes(&self.last_impulses)
    }
}

/// Re-applies the accumulated impulses at the start of each substep (after the contacts').
pub(crate) fn warm_start_rows(mut solver: ResMut<SolverBodies>, rows: Res<VelocityRows>) {
    let bodies = &mut solver.states;
    for row in &rows.rows {
        row.apply(bodies, row.impulse);
    }
    for block in &rows.blocks {
        block.apply(bodies, block.impulse);
    }
}

/// The biased solve (after the contacts').
pub(crate) fn solve_rows(
    mut solver: ResMut<SolverBodies>,
    mut rows: ResMut<VelocityRows>,
    time: Res<PhysicsStepTime>,
) {
    let (h, elapsed) = (
        time.substep_delta,
        time.substep as Scalar * time.substep_delta,
    );
    let bodies = &mut solver.states;
    for row in &mut rows.rows {
        row.solve(bodies, true, h, elapsed);
    }
    for block in &mut rows.blocks {
        block.solve(bodies);
    }
}

/// The relax solve, after position integration (after the contacts').
pub(crate) fn relax_rows(
    mut solver: ResMut<SolverBodies>,
    mut rows: ResMut<VelocityRows>,
    time: Res<PhysicsStepTime>,
) {
    let h = time.substep_delta;
    let elapsed = (time.substep + 1) as Scalar * h;
    let bodies = &mut solver.states;
    for block in rows.blocks.iter_mut().rev() {
        block.solve(bodies);
    }
    for row in rows.rows.iter_mut().rev() {
        row.solve(bodies, false, h, elapsed);
    }
}
