//! Three-dimensional velocity blocks: the relative velocity of two anchors (linear) or of two
//! bodies (angular) held at zero in every direction at once, or in every direction but one
//! free axis, solved beside the rows.
//!
//! A block is the three rows along the world axes solved together: with the effective mass
//! matrix `K` (for anchors at arms `r₀`, `r₁`: `K = M₀⁻¹ − [r₀]× I₀⁻¹ [r₀]× + M₁⁻¹ −
//! [r₁]× I₁⁻¹ [r₁]×`; for rotations `K = I₀⁻¹ + I₁⁻¹`), one update `Δλ = −K⁻¹ (J·v)` solves
//! them exactly, where three scalar rows would each undo part of the others. With a free axis
//! `f`, the block acts in the plane `P = I − f fᵀ` and uses `(P K P + s f fᵀ)⁻¹` (any `s > 0`),
//! which inverts `K` within the plane and leaves `f` alone. Blocks are rigid, without position bias: the
//! built-in XPBD joints use them, beside their position passes, where a body rests on a contact
//! (see `solver::joints::contact_blocks`).

use bevy::math::{Mat3A, Vec3A};

use crate::math::{Matrix3, Scalar, Vector};
use crate::solver::solver_body::{BodyState, RigidBodyQueryItem};

/// A velocity block ready for the substep loop.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PreparedBlock {
    b0: u32,
    b1: u32,
    /// Whether each body is dynamic (only those change).
    moves: [bool; 2],
    /// The anchors' arms from each centre of mass (world, at the step's start) for a linear
    /// block; `None` for an angular one.
    arms: Option<[Vector; 2]>,
    /// The free axis (unit), or zero.
    free: Vector,
    /// `(P K P + s f fᵀ)⁻¹` (`s` the plane's mean eigenvalue), fixed for the step.
    inverse: Mat3A,
    /// Each body's velocity change per unit impulse, linear (per axis; zero for an angular
    /// block) and angular, body 1's negated; zero for a body that cannot move.
    dv: [Vec3A; 2],
    dw: [Mat3A; 2],
    /// Accumulated impulse on body 0 in this substep (carried to the next substep).
    pub impulse: Vector,
}

impl PreparedBlock {
    /// A block between slots `b0` and `b1` (linear at `arms`, or angular), free along `free`
    /// (unit, or zero), warm started with `warm` per substep. `None` if the bodies cannot
    /// move within the block.
    pub(crate) fn new(
        (b0, b1): (usize, usize),
        arms: Option<[Vector; 2]>,
        free: Vector,
        bodies: &[RigidBodyQueryItem],
        warm: Vector,
    ) -> Option<Self> {
        let k = match arms {
            Some([r0, r1]) => point_mass(&bodies[b0], r0) + point_mass(&bodies[b1], r1),
            None => bodies[b0].step_inverse_inertia + bodies[b1].step_inverse_inertia,
        };
        let free_part = Matrix3::from_cols(free * free.x, free * free.y, free * free.z);
        let plane = Matrix3::IDENTITY - free_part;
        let in_plane = plane * k * plane;
        // The free axis gets the plane's mean eigenvalue, so the matrix's scale stays that of
        // `K` (only its inverse within the plane is ever used).
        let scale = trace(&in_plane) / if free == Vector::ZERO { 3.0 } else { 2.0 };
        let reduced = in_plane + free_part * scale;
        // Singular within the plane: the bodies cannot move there (a locked axis, infinite
        // masses); the block is left out rather than half solved.
        let det = reduced.determinant();
        if !det.is_finite() || det <= Scalar::EPSILON * scale * scale * scale {
            return None;
        }
        // The velocity change of a body per unit impulse, times `sign`.
        let response = |slot: usize, arm: Option<Vector>, sign: Scalar| {
            let body = &bodies[slot];
            let inertia = body.step_inverse_inertia * sign;
            match arm {
                Some(r) => (
                    Vec3A::from(body.effective_inverse_mass() * sign),
                    Mat3A::from(inertia * cross_matrix(r)),
                ),
                None => (Vec3A::ZERO, Mat3A::from(inertia)),
            }
        };
        let (dv0, dw0) = response(b0, arms.map(|[r0, _]| r0), 1.0);
        let (dv1, dw1) = response(b1, arms.map(|[_, r1]| r1), -1.0);
        let block = Self {
            b0: b0 as u32,
            b1: b1 as u32,
            moves: [b0, b1].map(|b| bodies[b].inverse_mass > 0.0),
            arms,
            free,
            inverse: Mat3A::from(reduced.inverse()),
            dv: [dv0, dv1],
            dw: [dw0, dw1],
            impulse: Vector::ZERO,
        };
        Some(Self {
            impulse: block.in_plane(warm),
            ..block
        })
    }

    /// `v` without its component along the free axis.
    #[inline]
    fn in_plane(&self, v: Vector) -> Vector {
        v - self.free * self.free.dot(v)
    }

    /// The block's relative velocity now.
    #[inline]
    fn speed(&self, body0: &BodyState, body1: &BodyState) -> Vector {
        match self.arms {
            Some([r0, r1]) => body0.velocity_at(r0) - body1.velocity_at(r1),
            None => body0.angular_velocity() - body1.angular_velocity(),
        }
    }

    /// Applies `impulse` to body 0 and its opposite to body 1 (only dynamic ones change).
    #[inline]
    pub(crate) fn apply(&self, bodies: &mut [BodyState], impulse: Vector) {
        let impulse = Vec3A::from(impulse);
        for (i, slot) in [self.b0, self.b1].into_iter().enumerate() {
            if self.moves[i] {
                let (dv, dw) = (self.dv[i] * impulse, self.dw[i] * impulse);
                bodies[slot as usize].add_velocities(dv.into(), dw.into());
            }
        }
    }

    /// One exact update of the block.
    #[inline]
    pub(crate) fn solve(&mut self, bodies: &mut [BodyState]) {
        let speed = self.speed(&bodies[self.b0 as usize], &bodies[self.b1 as usize]);
        let delta = Vector::from(-(self.inverse * Vec3A::from(self.in_plane(speed))));
        self.impulse += delta;
        self.apply(bodies, delta);
    }
}

/// The sum of the diagonal.
fn trace(m: &Matrix3) -> Scalar {
    m.x_axis.x + m.y_axis.y + m.z_axis.z
}

/// `[r]×`, the matrix of `v ↦ r × v`.
fn cross_matrix(r: Vector) -> Matrix3 {
    Matrix3::from_cols(
        Vector::new(0.0, r.z, -r.y),
        Vector::new(-r.z, 0.0, r.x),
        Vector::new(r.y, -r.x, 0.0),
    )
}

/// The effective mass matrix `M⁻¹ − [r]× I⁻¹ [r]×` of `body` at the arm `r`.
fn point_mass(body: &RigidBodyQueryItem, r: Vector) -> Matrix3 {
    let cross = cross_matrix(r);
    Matrix3::from_diagonal(body.effective_inverse_mass())
        - cross * body.step_inverse_inertia * cross
}

#[cfg(test)]
// Tests build their scenes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use crate::body::RigidBody;
    use crate::math::Quaternion;
    use bevy::prelude::Entity;

    /// A dynamic body at the origin with the given inverse mass, inverse inertia and velocities.
    fn body(
        inverse_mass: Scalar,
        inverse_inertia: Matrix3,
        v: Vector,
        w: Vector,
    ) -> RigidBodyQueryItem {
        let mut body = RigidBodyQueryItem::fixed(
            Entity::PLACEHOLDER,
            RigidBody::Dynamic,
            Vector::ZERO,
            Quaternion::IDENTITY,
            Vector::ZERO,
        );
        body.inverse_mass = inverse_mass;
        body.translation_mask = Vector::ONE;
        body.step_inverse_inertia = inverse_inertia;
        (body.linear_velocity, body.angular_velocity) = (v, w);
        body
    }

    /// Two bodies of different, anisotropic inertia moving apart and spinning.
    fn bodies() -> Vec<RigidBodyQueryItem> {
        let turned = Matrix3::from_quat(Quaternion::from_rotation_y(0.7));
        let inertia =
            turned * Matrix3::from_diagonal(Vector::new(2.0, 0.5, 1.0)) * turned.transpose();
        vec![
            body(
                0.5,
                inertia,
                Vector::new(1.0, -2.0, 0.5),
                Vector::new(0.3, 1.0, -2.0),
            ),
            body(
                2.0,
                Matrix3::from_diagonal(Vector::splat(3.0)),
                Vector::new(-1.0, 0.5, 2.0),
                Vector::new(-1.0, 0.2, 0.4),
            ),
        ]
    }

    /// One update of a block with free axis `free`: the relative velocity within the plane is
    /// zero (to f32 rounding of the 3×3 solve), the impulse has no part along `free` (the
    /// motion there is free; it still changes where the bodies' inertia couples it to the
    /// plane), and the impulses are equal and opposite (linear momentum kept).
    fn check(arms: Option<[Vector; 2]>, free: Vector) {
        let bodies = bodies();
        let mut states: Vec<BodyState> = bodies.iter().map(BodyState::of).collect();
        let mut block = PreparedBlock::new((0, 1), arms, free, &bodies, Vector::ZERO).unwrap();
        let before = block.speed(&states[0], &states[1]);
        let momentum = |s: &[BodyState]| {
            s[0].linear_velocity() / bodies[0].inverse_mass
                + s[1].linear_velocity() / bodies[1].inverse_mass
        };
        let p = momentum(&states);
        block.solve(&mut states);
        let after = block.speed(&states[0], &states[1]);
        let scale = before.length();
        assert!(
            block.in_plane(after).length() <= 1e-5 * scale,
            "{after} in the plane of {free}"
        );
        let impulse = block.impulse;
        assert!(
            impulse.dot(free).abs() <= 1e-6 * impulse.length(),
            "impulse {impulse} along {free}"
        );
        assert!(
            (momentum(&states) - p).length() <= 1e-5 * p.length(),
            "momentum"
        );
    }

    #[test]
    fn one_update_stops_the_anchors_relative_motion() {
        let arms = Some([Vector::new(0.3, 0.5, -0.2), Vector::new(-0.4, 0.1, 0.6)]);
        check(arms, Vector::ZERO);
        check(arms, Vector::new(1.0, 1.0, 0.0).normalize());
    }

    #[test]
    fn one_update_stops_the_relative_rotation() {
        check(None, Vector::ZERO);
        check(None, Vector::new(0.0, 0.6, 0.8));
    }
}
