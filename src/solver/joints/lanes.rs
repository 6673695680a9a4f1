//! Vectors and quaternions of four joints at once, one per lane of a [`Vec4`]
//! (structure-of-arrays), for the four-joint solve of plain spherical joints
//! ([`point`](super::point)).
//!
//! Every operation does, lane by lane, exactly the floating-point operations glam's SIMD
//! `Vec3A` and `Quat` do for one vector, in the same order and grouping, so a joint solved in
//! a lane moves its bodies to the same bits as the one-joint solve (the test
//! `plain_spherical_joints_solved_four_at_a_time_move_bodies_as_the_general_path_does` holds
//! them to it). The sums' groupings below are glam's: `(x + y) + z` for a 3-vector dot
//! product, `(x + z) + (y + w)` for a 4-vector one, and the quaternion product of its
//! SSE2 path.

use bevy::math::{BVec4A, Mat3A, Quat, Vec3A, Vec4};

/// Four 3-vectors, by component.
#[derive(Clone, Copy, Debug)]
pub(super) struct Vec3x4 {
    pub x: Vec4,
    pub y: Vec4,
    pub z: Vec4,
}

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

impl Vec3x4 {
    pub const ZERO: Self = Self {
        x: Vec4::ZERO,
        y: Vec4::ZERO,
        z: Vec4::ZERO,
    };

    /// The four vectors in lanes 0 to 3.
    #[inline(always)]
    pub fn gather(v: [Vec3A; 4]) -> Self {
        let [x, y, z, _] = transpose(v.map(|v| v.extend(0.0)));
        Self { x, y, z }
    }

    /// The vector of each lane.
    #[inline(always)]
    pub fn lanes(self) -> [Vec3A; 4] {
        transpose([self.x, self.y, self.z, Vec4::ZERO]).map(Vec3A::from_vec4)
    }

    #[inline(always)]
    pub fn add(self, o: Self) -> Self {
        Self {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }

    #[inline(always)]
    pub fn sub(self, o: Self) -> Self {
        Self {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }

    /// Component by component.
    #[inline(always)]
    pub fn mul(self, o: Self) -> Self {
        Self {
            x: self.x * o.x,
            y: self.y * o.y,
            z: self.z * o.z,
        }
    }

    /// Each lane's vector times that lane's scalar.
    #[inline(always)]
    pub fn scale(self, s: Vec4) -> Self {
        Self {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }

    #[inline(always)]
    pub fn neg(self) -> Self {
        Self {
            x: -self.x,
            y: -self.y,
            z: -self.z,
        }
    }

    /// `(x x' + y y') + z z'`.
    #[inline(always)]
    pub fn dot(self, o: Self) -> Vec4 {
        (self.x * o.x + self.y * o.y) + self.z * o.z
    }

    /// `√(self · self)`.
    #[inline(always)]
    pub fn length(self) -> Vec4 {
        sqrt(self.dot(self))
    }

    /// `self × o`, each component as glam forms it (`a.y b.z − b.y a.z` and so on).
    #[inline(always)]
    pub fn cross(self, o: Self) -> Self {
        Self {
            x: self.y * o.z - o.y * self.z,
            y: self.z * o.x - o.z * self.x,
            z: self.x * o.y - o.x * self.y,
        }
    }

    /// Lane by lane, `if_true` where `mask` is set, `self` elsewhere.
    #[inline(always)]
    pub fn select(self, mask: BVec4A, if_true: Self) -> Self {
        Self {
            x: Vec4::select(mask, if_true.x, self.x),
            y: Vec4::select(mask, if_true.y, self.y),
            z: Vec4::select(mask, if_true.z, self.z),
        }
    }
}

/// The four matrices in lanes 0 to 3.
#[inline(always)]
pub(super) fn gather_matrices(m: [&Mat3A; 4]) -> Mat3x4 {
    [
        Vec3x4::gather(m.map(|m| m.x_axis)),
        Vec3x4::gather(m.map(|m| m.y_axis)),
        Vec3x4::gather(m.map(|m| m.z_axis)),
    ]
}

/// `m v`: `(c₀ vₓ + c₁ v_y) + c₂ v_z`.
#[inline(always)]
pub(super) fn mat_mul(m: &Mat3x4, v: Vec3x4) -> Vec3x4 {
    m[0].scale(v.x).add(m[1].scale(v.y)).add(m[2].scale(v.z))
}

impl Quatx4 {
    /// The four quaternions in lanes 0 to 3.
    #[inline(always)]
    pub fn gather(q: [Quat; 4]) -> Self {
        let [x, y, z, w] = transpose(q.map(Vec4::from));
        Self { x, y, z, w }
    }

    /// The quaternion of each lane.
    #[inline(always)]
    pub fn lanes(self) -> [Quat; 4] {
        transpose([self.x, self.y, self.z, self.w]).map(Quat::from_vec4)
    }

    fn vector(self) -> Vec3x4 {
        Vec3x4 {
            x: self.x,
            y: self.y,
            z: self.z,
        }
    }

    /// `v` turned by `self`: `(v (w² − b·b) + b (2 v·b)) + (b × v)(2 w)`, `b` the vector part.
    #[inline(always)]
    pub fn rotate(self, v: Vec3x4) -> Vec3x4 {
        let b = self.vector();
        let k = self.w * self.w - b.dot(b);
        let along = v.dot(b) * 2.0;
        let across = self.w * 2.0;
        v.scale(k).add(b.scale(along)).add(b.cross(v).scale(across))
    }

    /// `self · rhs`, with glam's groupings and signs (a product by −1 is a negation).
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

    /// `self` nudged by the small rotation vector `theta` and renormalised:
    /// `q + ½ (θ, 0) q`, divided by its length.
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
        let length = sqrt((q.x * q.x + q.z * q.z) + (q.y * q.y + q.w * q.w));
        Self {
            x: q.x / length,
            y: q.y / length,
            z: q.z / length,
            w: q.w / length,
        }
    }
}

/// Lane-wise square root (correctly rounded, as the one-lane square root).
#[inline(always)]
fn sqrt(v: Vec4) -> Vec4 {
    Vec4::new(v.x.sqrt(), v.y.sqrt(), v.z.sqrt(), v.w.sqrt())
}

/// The 4×4 transpose: lane `j` of vector `i` becomes lane `i` of vector `j`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn transpose(rows: [Vec4; 4]) -> [Vec4; 4] {
    use std::arch::x86_64::{
        __m128, _mm_movehl_ps, _mm_movelh_ps, _mm_unpackhi_ps, _mm_unpacklo_ps,
    };
    // SAFETY: SSE is part of every x86_64 processor; `__m128` and `[f32; 4]` are both 16
    // bytes of four `f32`s, and every bit pattern is valid for either.
    unsafe {
        let [a, b, c, d] = rows.map(|v| std::mem::transmute::<[f32; 4], __m128>(v.to_array()));
        let (ab_low, cd_low) = (_mm_unpacklo_ps(a, b), _mm_unpacklo_ps(c, d));
        let (ab_high, cd_high) = (_mm_unpackhi_ps(a, b), _mm_unpackhi_ps(c, d));
        [
            _mm_movelh_ps(ab_low, cd_low),
            _mm_movehl_ps(cd_low, ab_low),
            _mm_movelh_ps(ab_high, cd_high),
            _mm_movehl_ps(cd_high, ab_high),
        ]
        .map(|v| Vec4::from_array(std::mem::transmute::<__m128, [f32; 4]>(v)))
    }
}

/// The 4×4 transpose: lane `j` of vector `i` becomes lane `i` of vector `j`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn transpose(rows: [Vec4; 4]) -> [Vec4; 4] {
    let [a, b, c, d] = rows;
    [
        Vec4::new(a.x, b.x, c.x, d.x),
        Vec4::new(a.y, b.y, c.y, d.y),
        Vec4::new(a.z, b.z, c.z, d.z),
        Vec4::new(a.w, b.w, c.w, d.w),
    ]
}
