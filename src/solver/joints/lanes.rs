//! Quaternions and 3×3 matrices of four joints at once, one per lane (structure of arrays,
//! with [`Vec3x4`] for vectors), for the four-joint solve of plain spherical joints
//! ([`point`](super::point)).
//!
//! Every operation does, lane by lane, exactly the floating-point operations glam's `Vec3A`,
//! `Mat3A` and `Quat` do for one value, in the same order and grouping, so a joint solved in
//! a lane moves its bodies to the same bits as the one-joint solve (the test
//! `plain_spherical_joints_solved_four_at_a_time_move_bodies_as_the_general_path_does` holds
//! them to it): `(x + y) + z` for a 3-vector dot product, `(x + z) + (y + w)` for a 4-vector
//! one, `(c₀ vₓ + c₁ v_y) + c₂ v_z` for a matrix product, and the quaternion product of
//! glam's SSE2 path, whose sign flips are products by −1, that is negations.

use bevy::math::{Mat3A, Mat4, Quat, Vec3A, Vec4};

use crate::solver::wide::{Vec3x4, transpose_in, transpose_out};

/// Four quaternions, by component.
#[derive(Clone, Copy, Debug)]
pub(super) struct Quatx4 {
    pub x: Vec4,
    pub y: Vec4,
    pub z: Vec4,
    pub w: Vec4,
}

/// Four 3×3 matrices, by column.
pub(super) type Mat3x4 = [Vec3x4; 3];

/// The four vectors in lanes 0 to 3.
#[inline(always)]
pub(super) fn gather(v: [Vec3A; 4]) -> Vec3x4 {
    let [a, b, c, d] = v.map(|v| v.extend(0.0));
    transpose_in(a, b, c, d)
}

/// The vector of each lane.
#[inline(always)]
pub(super) fn lanes(v: Vec3x4) -> [Vec3A; 4] {
    transpose_out(v).map(Vec3A::from_vec4)
}

/// The four matrices in lanes 0 to 3.
#[inline(always)]
pub(super) fn gather_matrices(m: [&Mat3A; 4]) -> Mat3x4 {
    [
        gather(m.map(|m| m.x_axis)),
        gather(m.map(|m| m.y_axis)),
        gather(m.map(|m| m.z_axis)),
    ]
}

/// `m v`, as `Mat3A * Vec3A`: `(c₀ vₓ + c₁ v_y) + c₂ v_z`.
#[inline(always)]
pub(super) fn mat_mul(m: &Mat3x4, v: Vec3x4) -> Vec3x4 {
    m[0].scale(v.x) + m[1].scale(v.y) + m[2].scale(v.z)
}

impl Quatx4 {
    /// The four quaternions in lanes 0 to 3.
    #[inline(always)]
    pub fn gather(q: [Quat; 4]) -> Self {
        let m = Mat4::from_cols(q[0].into(), q[1].into(), q[2].into(), q[3].into()).transpose();
        Self {
            x: m.x_axis,
            y: m.y_axis,
            z: m.z_axis,
            w: m.w_axis,
        }
    }

    /// The quaternion of each lane.
    #[inline(always)]
    pub fn lanes(self) -> [Quat; 4] {
        let m = Mat4::from_cols(self.x, self.y, self.z, self.w).transpose();
        [m.x_axis, m.y_axis, m.z_axis, m.w_axis].map(Quat::from_vec4)
    }

    fn vector(self) -> Vec3x4 {
        Vec3x4 {
            x: self.x,
            y: self.y,
            z: self.z,
        }
    }

    /// `v` turned by `self`, as `Quat * Vec3A`: `(v (w² − b·b) + b (2 v·b)) + (b × v)(2 w)`,
    /// `b` the vector part.
    #[inline(always)]
    pub fn rotate(self, v: Vec3x4) -> Vec3x4 {
        let b = self.vector();
        let k = self.w * self.w - b.dot(b);
        let along = v.dot(b) * 2.0;
        let across = self.w * 2.0;
        v.scale(k) + b.scale(along) + b.cross(v).scale(across)
    }

    /// `self · r`, as `Quat * Quat`.
    #[inline(always)]
    pub fn mul(self, r: Self) -> Self {
        let l = self;
        Self {
            x: (l.w * r.x + l.x * r.w) + (l.y * r.z + -(l.z * r.y)),
            y: (l.w * r.y + -(l.x * r.z)) + (l.y * r.w + l.z * r.x),
            z: (l.w * r.z + l.x * r.y) + (-(l.y * r.x) + l.z * r.w),
            w: (l.w * r.w + -(l.x * r.x)) + (-(l.y * r.y) + -(l.z * r.z)),
        }
    }

    /// `self` nudged by the small rotation vector `theta` and renormalised, as
    /// `renormalized(nudge_rotation(q, θ))`: `q + ½ (θ, 0) q`, times the reciprocal of its
    /// length.
    #[inline(always)]
    pub fn nudge(self, theta: Vec3x4) -> Self {
        let turn = Self {
            x: theta.x,
            y: theta.y,
            z: theta.z,
            w: Vec4::ZERO,
        }
        .mul(self);
        let q = Self {
            x: self.x + turn.x * 0.5,
            y: self.y + turn.y * 0.5,
            z: self.z + turn.z * 0.5,
            w: self.w + turn.w * 0.5,
        };
        let length = ((q.x * q.x + q.z * q.z) + (q.y * q.y + q.w * q.w)).sqrt();
        let inverse = Vec4::ONE / length;
        Self {
            x: q.x * inverse,
            y: q.y * inverse,
            z: q.z * inverse,
            w: q.w * inverse,
        }
    }
}
