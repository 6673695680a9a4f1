//! Four-lane arithmetic for the wide contact solver and the four-joint solve: a lane is one
//! contact manifold or one joint, and a [`Vec3x4`] holds one 3D vector per lane (structure of
//! arrays), so that every operation works on four at once (Catto, "SIMD Matters", 2024;
//! Box2D v3's wide contact solver).
//!
//! The lanes are glam's [`Vec4`], which is one SSE2 register on x86-64 (NEON on AArch64; a
//! plain array elsewhere): no extra dependency, stable Rust, and no `unsafe` here. Every
//! operation is written in the same order as the scalar `glam::Vec3` operation it replaces
//! (a dot product is `(x·x + y·y) + z·z`, a cross product glam's), and nothing is fused, so a
//! lane computes bit for bit what the scalar code computes.

use glam::{BVec4A, Mat4, Vec3, Vec4};

/// One `f32` per lane.
pub(crate) type F4 = Vec4;

/// One 3D vector per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Vec3x4 {
    pub x: F4,
    pub y: F4,
    pub z: F4,
}

impl Vec3x4 {
    /// Sets lane `lane` to `v`.
    #[inline]
    pub fn set_lane(&mut self, lane: usize, v: Vec3) {
        lane_mut(&mut self.x)[lane] = v.x;
        lane_mut(&mut self.y)[lane] = v.y;
        lane_mut(&mut self.z)[lane] = v.z;
    }

    /// `(x·x + y·y) + z·z`, as `Vec3::dot`.
    #[inline(always)]
    pub fn dot(self, rhs: Self) -> F4 {
        (self.x * rhs.x) + (self.y * rhs.y) + (self.z * rhs.z)
    }

    /// `√(self · self)`, as `Vec3::length`.
    #[inline(always)]
    pub fn length(self) -> F4 {
        self.dot(self).sqrt()
    }

    /// Lane by lane, `a` where `mask` is set and `b` elsewhere.
    #[inline(always)]
    pub fn select(mask: BVec4A, a: Self, b: Self) -> Self {
        Self {
            x: select(mask, a.x, b.x),
            y: select(mask, a.y, b.y),
            z: select(mask, a.z, b.z),
        }
    }

    /// `self × rhs`, as `Vec3::cross`.
    #[inline(always)]
    pub fn cross(self, rhs: Self) -> Self {
        Self {
            x: self.y * rhs.z - rhs.y * self.z,
            y: self.z * rhs.x - rhs.z * self.x,
            z: self.x * rhs.y - rhs.x * self.y,
        }
    }

    /// Every component times the lane's `s`, as `f32 * Vec3`.
    #[inline(always)]
    pub fn scale(self, s: F4) -> Self {
        Self {
            x: s * self.x,
            y: s * self.y,
            z: s * self.z,
        }
    }
}

impl std::ops::Add for Vec3x4 {
    type Output = Self;
    #[inline(always)]
    fn add(self, rhs: Self) -> Self {
        Self {
            x: self.x + rhs.x,
            y: self.y + rhs.y,
            z: self.z + rhs.z,
        }
    }
}

impl std::ops::Sub for Vec3x4 {
    type Output = Self;
    #[inline(always)]
    fn sub(self, rhs: Self) -> Self {
        Self {
            x: self.x - rhs.x,
            y: self.y - rhs.y,
            z: self.z - rhs.z,
        }
    }
}

impl std::ops::Mul for Vec3x4 {
    type Output = Self;
    /// Component by component, as `Vec3 * Vec3`.
    #[inline(always)]
    fn mul(self, rhs: Self) -> Self {
        Self {
            x: self.x * rhs.x,
            y: self.y * rhs.y,
            z: self.z * rhs.z,
        }
    }
}

impl std::ops::Neg for Vec3x4 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self {
            x: -self.x,
            y: -self.y,
            z: -self.z,
        }
    }
}

impl std::ops::AddAssign for Vec3x4 {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Self) {
        *self = *self + rhs;
    }
}

impl std::ops::SubAssign for Vec3x4 {
    #[inline(always)]
    fn sub_assign(&mut self, rhs: Self) {
        *self = *self - rhs;
    }
}

/// The lanes of `v` as an array, to write one (glam's `IndexMut` matches on the index).
#[inline(always)]
pub(crate) fn lane_mut(v: &mut F4) -> &mut [f32; 4] {
    v.as_mut()
}

/// `mask ? a : b` per lane.
#[inline(always)]
pub(crate) fn select(mask: BVec4A, a: F4, b: F4) -> F4 {
    F4::select(mask, a, b)
}

/// Four 3D vectors (the `xyz` of `a`, `b`, `c`, `d`) as one [`Vec3x4`].
#[inline(always)]
pub(crate) fn transpose_in(a: Vec4, b: Vec4, c: Vec4, d: Vec4) -> Vec3x4 {
    let m = Mat4::from_cols(a, b, c, d).transpose();
    Vec3x4 {
        x: m.x_axis,
        y: m.y_axis,
        z: m.z_axis,
    }
}

/// The four lanes of `v` as `xyz` of four `Vec4`s (their `w` is zero).
#[inline(always)]
pub(crate) fn transpose_out(v: Vec3x4) -> [Vec4; 4] {
    let m = Mat4::from_cols(v.x, v.y, v.z, Vec4::ZERO).transpose();
    [m.x_axis, m.y_axis, m.z_axis, m.w_axis]
}
