//! The fast path of the most common joint: a spherical joint without limits or damping, which
//! only joins two anchors. Everything its passes read and write sits in one 128-byte
//! [`PointRow`], so a pass touches that row and the two bodies' compact records and nothing
//! else; the joint component's copy is brought up to date once, when the step's state is
//! stored.
//!
//! The solve is [`JointSolve::point`](super::JointSolve::point) followed by the joint's force
//! bookkeeping and break test, operation for operation, so both paths give bit-identical
//! results.

use bevy::math::{Mat3A, Vec3A};

use super::{JointBase, Substep, XBody, point_inverse};
use crate::math::{Scalar, Vector};

/// Where the row's `(K + α̃ I)⁻¹` stands this substep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
enum BlockState {
    /// Not built yet.
    #[default]
    Empty,
    /// Built, and singular: the joint cannot move its bodies.
    Singular,
    /// Built.
    Built,
}

/// The hot state of one spherical joint without limits or damping (see the module docs), or a
/// placeholder saying that the joint at this place in the list takes the general path.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct PointRow {
    /// `(K + α̃ I)⁻¹` of this substep (symmetric, so its columns are its rows).
    inverse: Mat3A,
    /// Each anchor relative to its body's centre of mass, in the body frame.
    arms: [Vec3A; 2],
    /// This substep's multiplier.
    lagrange: Vec3A,
    /// This substep's force on body 2, N.
    pub(super) force: Vector,
    /// The bodies' places in the compact body array.
    records: [u32; 2],
    compliance: Scalar,
    /// `∞` for a joint that never breaks.
    break_force: Scalar,
    state: BlockState,
    pub(super) broken: bool,
    /// The joint takes the general path; the row is unused.
    pub(super) general: bool,
}

impl PointRow {
    /// This substep's multiplier.
    pub(crate) fn lagrange(&self) -> Vector {
        self.lagrange.into()
    }

    /// The placeholder of a joint that takes the general path.
    pub(crate) fn general() -> Self {
        Self {
            general: true,
            ..Self::default()
        }
    }

    /// The row of a joint with the given shared data, bodies and arms.
    pub(crate) fn new(base: &JointBase, records: [usize; 2], arms: [Vec3A; 2]) -> Self {
        Self {
            inverse: Mat3A::ZERO,
            arms,
            lagrange: Vec3A::ZERO,
            force: base.force,
            records: records.map(|r| r as u32),
            compliance: base.compliance,
            break_force: base.break_force.unwrap_or(Scalar::INFINITY),
            state: BlockState::Empty,
            broken: base.is_broken(),
            general: false,
        }
    }

    /// One pass; the first pass of a substep first clears the multiplier, the force (unless
    /// the joint has broken) and the block.
    #[inline(always)]
    pub(crate) fn solve(&mut self, records: &mut [XBody], step: Substep, first_pass: bool) {
        if first_pass {
            self.lagrange = Vec3A::ZERO;
            if !self.broken {
                self.force = Vector::ZERO;
            }
            self.state = BlockState::Empty;
        }
        if self.broken {
            return;
        }
        let [i1, i2] = self.records;
        let Ok([x1, x2]) = records.get_disjoint_mut([i1 as usize, i2 as usize]) else {
            return;
        };
        let r1 = x1.rotation * self.arms[0];
        let r2 = x2.rotation * self.arms[1];
        let delta = (x1.center() + r1) - (x2.center() + r2);
        let tilde = self.compliance * step.inv_h2;
        if self.state == BlockState::Empty {
            (self.state, self.inverse) = match point_inverse(x1, x2, r1, r2, tilde) {
                Some(inverse) => (BlockState::Built, inverse),
                None => (BlockState::Singular, Mat3A::ZERO),
            };
        }
        if self.state != BlockState::Built {
            return;
        }
        let rhs = if tilde == 0.0 {
            delta
        } else {
            delta + tilde * self.lagrange
        };
        let p = -(self.inverse * rhs);
        self.lagrange += p;
        x1.apply_position_impulse(p, r1);
        x2.apply_position_impulse(-p, r2);
        self.force += Vector::from(Vec3A::ZERO - p * step.inv_h2);
        if self.break_force < Scalar::INFINITY && self.force.length() > self.break_force {
            self.broken = true;
        }
    }
}
