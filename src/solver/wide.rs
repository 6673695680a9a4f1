//! Lane arithmetic for the wide contact solver and the four-joint solve: a lane is one
//! contact manifold or one joint, and a [`V3`] holds one 3D vector per lane (structure of
//! arrays), so that every operation works on all lanes at once (Catto, "SIMD Matters", 2024;
//! Box2D v3's wide contact solver).
//!
//! Four lanes are glam's [`Vec4`], which is one SSE2 register on x86-64 (NEON on AArch64; a
//! plain array elsewhere). The contact solver's passes are written over the [`Lane`] trait,
//! and on x86-64 CPUs with AVX also run eight lanes (`F8`, one 256-bit register: two blocks
//! of four), selected at run time; that is the only `unsafe` here (AVX intrinsics, reachable
//! only after the CPU check). Every operation is written in the same order as the scalar
//! `glam::Vec3` operation it replaces (a dot product is `(x·x + y·y) + z·z`, a cross product
//! glam's), and nothing is fused, so a lane computes bit for bit what the scalar code
//! computes, in either width.

use std::ops::{Add, Div, Mul, Neg, Sub};

use glam::{BVec4A, Mat4, Vec3, Vec4};

/// One `f32` per lane.
pub(crate) type F4 = Vec4;

/// A lane type of the wide contact solver: [`F4`] (one block of four manifolds), or on x86-64
/// with AVX `F8` (two blocks of one colour in one register). Every operation is the IEEE
/// operation of each lane, so a manifold computes the same bits whichever type carries it.
pub(crate) trait Lane:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// A lane mask.
    type Mask: Copy;
    /// Blocks of four lanes one value holds.
    const BLOCKS: usize;
    /// Every lane `v`.
    fn splat(v: f32) -> Self;
    /// The value whose lanes of block `b` are `get(b)`.
    fn load(get: impl Fn(usize) -> F4) -> Self;
    /// The lanes of each block (for one block, the second entry repeats the first).
    fn split(self) -> [F4; 2];
    /// The mask whose lanes of block `b` are `get(b)`.
    fn load_mask(get: impl Fn(usize) -> BVec4A) -> Self::Mask;
    /// Lane by lane, as `_mm_max_ps`.
    fn max(self, rhs: Self) -> Self;
    /// Lane by lane, as `_mm_min_ps`.
    fn min(self, rhs: Self) -> Self;
    /// Lane by lane.
    fn sqrt(self) -> Self;
    /// Lane by lane `self > rhs` (false for NaN).
    fn cmpgt(self, rhs: Self) -> Self::Mask;
    /// Lane by lane, `a` where `mask` is set and `b` elsewhere.
    fn select(mask: Self::Mask, a: Self, b: Self) -> Self;
    /// Whether any lane of `mask` is set.
    fn any(mask: Self::Mask) -> bool;
}

impl Lane for F4 {
    type Mask = BVec4A;
    const BLOCKS: usize = 1;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        Vec4::splat(v)
    }
    #[inline(always)]
    fn load(get: impl Fn(usize) -> F4) -> Self {
        get(0)
    }
    #[inline(always)]
    fn split(self) -> [F4; 2] {
        [self, self]
    }
    #[inline(always)]
    fn load_mask(get: impl Fn(usize) -> BVec4A) -> BVec4A {
        get(0)
    }
    #[inline(always)]
    fn max(self, rhs: Self) -> Self {
        Vec4::max(self, rhs)
    }
    #[inline(always)]
    fn min(self, rhs: Self) -> Self {
        Vec4::min(self, rhs)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        Vec4::sqrt(self)
    }
    #[inline(always)]
    fn cmpgt(self, rhs: Self) -> BVec4A {
        Vec4::cmpgt(self, rhs)
    }
    #[inline(always)]
    fn select(mask: BVec4A, a: Self, b: Self) -> Self {
        Vec4::select(mask, a, b)
    }
    #[inline(always)]
    fn any(mask: BVec4A) -> bool {
        mask.any()
    }
}

/// One 3D vector per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct V3<L> {
    pub x: L,
    pub y: L,
    pub z: L,
}

/// One 3D vector per lane of a block of four.
pub(crate) type Vec3x4 = V3<F4>;

impl Vec3x4 {
    /// Sets lane `lane` to `v`.
    #[inline]
    pub fn set_lane(&mut self, lane: usize, v: Vec3) {
        lane_mut(&mut self.x)[lane] = v.x;
        lane_mut(&mut self.y)[lane] = v.y;
        lane_mut(&mut self.z)[lane] = v.z;
    }
}

impl<L: Lane> V3<L> {
    /// The vector whose lanes of block `b` are `get(b)`.
    #[inline(always)]
    pub fn load(get: impl Fn(usize) -> Vec3x4) -> Self {
        Self {
            x: L::load(|b| get(b).x),
            y: L::load(|b| get(b).y),
            z: L::load(|b| get(b).z),
        }
    }

    /// The lanes of each block, as [`Lane::split`].
    #[inline(always)]
    pub fn split(self) -> [Vec3x4; 2] {
        let ([x0, x1], [y0, y1], [z0, z1]) = (self.x.split(), self.y.split(), self.z.split());
        [
            V3 {
                x: x0,
                y: y0,
                z: z0,
            },
            V3 {
                x: x1,
                y: y1,
                z: z1,
            },
        ]
    }

    /// `(x·x + y·y) + z·z`, as `Vec3::dot`.
    #[inline(always)]
    pub fn dot(self, rhs: Self) -> L {
        (self.x * rhs.x) + (self.y * rhs.y) + (self.z * rhs.z)
    }

    /// `√(self · self)`, as `Vec3::length`.
    #[inline(always)]
    pub fn length(self) -> L {
        self.dot(self).sqrt()
    }

    /// Lane by lane, `a` where `mask` is set and `b` elsewhere.
    #[inline(always)]
    pub fn select(mask: L::Mask, a: Self, b: Self) -> Self {
        Self {
            x: L::select(mask, a.x, b.x),
            y: L::select(mask, a.y, b.y),
            z: L::select(mask, a.z, b.z),
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
    pub fn scale(self, s: L) -> Self {
        Self {
            x: s * self.x,
            y: s * self.y,
            z: s * self.z,
        }
    }
}

impl<L: Lane> Add for V3<L> {
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

impl<L: Lane> Sub for V3<L> {
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

impl<L: Lane> Mul for V3<L> {
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

impl<L: Lane> Neg for V3<L> {
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

impl<L: Lane> std::ops::AddAssign for V3<L> {
    #[inline(always)]
    fn add_assign(&mut self, rhs: Self) {
        *self = *self + rhs;
    }
}

impl<L: Lane> std::ops::SubAssign for V3<L> {
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

/// Four lanes in plain scalar code, one `f32` operation per lane: what a CPU without vector
/// registers computes ([`SolverLanes::One`](crate::settings::SolverLanes::One)). Each
/// operation is the IEEE operation [`F4`]'s instruction performs, with the same choice of
/// operand where one is NaN (`max`, `min`), so a manifold computes the same bits in either.
#[derive(Clone, Copy, Debug)]
pub(crate) struct S4([f32; 4]);

macro_rules! scalar_binary {
    ($trait:ident, $method:ident, $op:tt) => {
        impl $trait for S4 {
            type Output = Self;
            #[inline(always)]
            fn $method(self, rhs: Self) -> Self {
                Self(std::array::from_fn(|i| self.0[i] $op rhs.0[i]))
            }
        }
    };
}
scalar_binary!(Add, add, +);
scalar_binary!(Sub, sub, -);
scalar_binary!(Mul, mul, *);
scalar_binary!(Div, div, /);

impl Neg for S4 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self(self.0.map(|x| -x))
    }
}

impl Lane for S4 {
    type Mask = [bool; 4];
    const BLOCKS: usize = 1;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        Self([v; 4])
    }
    #[inline(always)]
    fn load(get: impl Fn(usize) -> F4) -> Self {
        Self(get(0).to_array())
    }
    #[inline(always)]
    fn split(self) -> [F4; 2] {
        [F4::from_array(self.0); 2]
    }
    #[inline(always)]
    fn load_mask(get: impl Fn(usize) -> BVec4A) -> [bool; 4] {
        let mask = get(0).bitmask();
        std::array::from_fn(|i| mask & (1 << i) != 0)
    }
    /// As `_mm_max_ps`: `rhs` unless `self > rhs`.
    #[inline(always)]
    fn max(self, rhs: Self) -> Self {
        Self(std::array::from_fn(|i| {
            if self.0[i] > rhs.0[i] {
                self.0[i]
            } else {
                rhs.0[i]
            }
        }))
    }
    /// As `_mm_min_ps`: `rhs` unless `self < rhs`.
    #[inline(always)]
    fn min(self, rhs: Self) -> Self {
        Self(std::array::from_fn(|i| {
            if self.0[i] < rhs.0[i] {
                self.0[i]
            } else {
                rhs.0[i]
            }
        }))
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        Self(self.0.map(f32::sqrt))
    }
    #[inline(always)]
    fn cmpgt(self, rhs: Self) -> [bool; 4] {
        std::array::from_fn(|i| self.0[i] > rhs.0[i])
    }
    #[inline(always)]
    fn select(mask: [bool; 4], a: Self, b: Self) -> Self {
        Self(std::array::from_fn(
            |i| if mask[i] { a.0[i] } else { b.0[i] },
        ))
    }
    #[inline(always)]
    fn any(mask: [bool; 4]) -> bool {
        mask.contains(&true)
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use avx::{F8, avx_available};

/// Eight lanes in one AVX register: two blocks of four.
#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    use glam::BVec4A;

    use super::{F4, Lane};

    /// Whether this CPU runs AVX (checked once, then cached by the standard library).
    #[inline]
    pub(crate) fn avx_available() -> bool {
        std::arch::is_x86_feature_detected!("avx")
    }

    /// Eight `f32` lanes: block 0 in the low half, block 1 in the high half.
    ///
    /// Its operations are AVX instructions: an `F8` may only exist inside a function compiled
    /// with `#[target_feature(enable = "avx")]` that runs after [`avx_available`] said yes
    /// (every method is `#[inline(always)]`, so it becomes part of that function).
    #[derive(Clone, Copy)]
    pub(crate) struct F8(__m256);

    /// Lanes for a mask are all ones or all zeros, as AVX comparisons produce.
    #[derive(Clone, Copy)]
    pub(crate) struct Mask8(__m256);

    macro_rules! binary {
        ($trait:ident, $method:ident, $intrinsic:ident) => {
            impl std::ops::$trait for F8 {
                type Output = Self;
                #[inline(always)]
                fn $method(self, rhs: Self) -> Self {
                    // SAFETY: see `F8`.
                    Self(unsafe { $intrinsic(self.0, rhs.0) })
                }
            }
        };
    }
    binary!(Add, add, _mm256_add_ps);
    binary!(Sub, sub, _mm256_sub_ps);
    binary!(Mul, mul, _mm256_mul_ps);
    binary!(Div, div, _mm256_div_ps);

    impl std::ops::Neg for F8 {
        type Output = Self;
        /// A sign flip, as glam's `Vec4` negation.
        #[inline(always)]
        fn neg(self) -> Self {
            // SAFETY: see `F8`.
            Self(unsafe { _mm256_xor_ps(self.0, _mm256_set1_ps(-0.0)) })
        }
    }

    impl Lane for F8 {
        type Mask = Mask8;
        const BLOCKS: usize = 2;
        #[inline(always)]
        fn splat(v: f32) -> Self {
            // SAFETY: see `F8`.
            Self(unsafe { _mm256_set1_ps(v) })
        }
        #[inline(always)]
        fn load(get: impl Fn(usize) -> F4) -> Self {
            let (low, high) = (__m128::from(get(0)), __m128::from(get(1)));
            // SAFETY: see `F8`.
            Self(unsafe { _mm256_set_m128(high, low) })
        }
        #[inline(always)]
        fn split(self) -> [F4; 2] {
            // SAFETY: see `F8`.
            unsafe {
                [
                    F4::from(_mm256_castps256_ps128(self.0)),
                    F4::from(_mm256_extractf128_ps(self.0, 1)),
                ]
            }
        }
        #[inline(always)]
        fn load_mask(get: impl Fn(usize) -> BVec4A) -> Mask8 {
            let (low, high) = (__m128::from(get(0)), __m128::from(get(1)));
            // SAFETY: see `F8`.
            Mask8(unsafe { _mm256_set_m128(high, low) })
        }
        #[inline(always)]
        fn max(self, rhs: Self) -> Self {
            // SAFETY: see `F8`.
            Self(unsafe { _mm256_max_ps(self.0, rhs.0) })
        }
        #[inline(always)]
        fn min(self, rhs: Self) -> Self {
            // SAFETY: see `F8`.
            Self(unsafe { _mm256_min_ps(self.0, rhs.0) })
        }
        #[inline(always)]
        fn sqrt(self) -> Self {
            // SAFETY: see `F8`.
            Self(unsafe { _mm256_sqrt_ps(self.0) })
        }
        #[inline(always)]
        fn cmpgt(self, rhs: Self) -> Mask8 {
            // SAFETY: see `F8`.
            Mask8(unsafe { _mm256_cmp_ps::<_CMP_GT_OQ>(self.0, rhs.0) })
        }
        #[inline(always)]
        fn select(mask: Mask8, a: Self, b: Self) -> Self {
            // SAFETY: see `F8`.
            Self(unsafe { _mm256_blendv_ps(b.0, a.0, mask.0) })
        }
        #[inline(always)]
        fn any(mask: Mask8) -> bool {
            // SAFETY: see `F8`.
            unsafe { _mm256_movemask_ps(mask.0) != 0 }
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// Values that exercise rounding, signed zeros, infinities and NaN.
    fn samples() -> Vec<F4> {
        let mut state = 0x2545_f491_u32;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state as f32 / u32::MAX as f32 - 0.5) * 200.0
        };
        let special = [0.0, -0.0, 1.0, f32::INFINITY, f32::NAN, 1e-30, -3.5, 7.0];
        let mut values: Vec<F4> = (0..64)
            .map(|_| Vec4::new(next(), next(), next(), next()))
            .collect();
        values.push(Vec4::from_array([
            special[0], special[1], special[2], special[3],
        ]));
        values.push(Vec4::from_array([
            special[4], special[5], special[6], special[7],
        ]));
        values
    }

    fn same(a: [F4; 2], b: [F4; 2]) -> bool {
        let bits = |v: [F4; 2]| v.map(|v| v.to_array().map(f32::to_bits));
        bits(a) == bits(b)
    }

    /// `F8` computes, lane for lane, the bits `F4` computes (the wide solver relies on it to
    /// give the same result whichever width solves a manifold).
    #[test]
    fn eight_lanes_compute_the_bits_of_two_times_four() {
        if !avx_available() {
            return;
        }
        let values = samples();
        let mut checked = 0;
        for pair in values.windows(4) {
            let [a0, a1, b0, b1] = [pair[0], pair[1], pair[2], pair[3]];
            // SAFETY: AVX is available.
            unsafe { check(a0, a1, b0, b1) };
            checked += 1;
        }
        assert!(checked > 60);

        #[target_feature(enable = "avx")]
        fn check(a0: F4, a1: F4, b0: F4, b1: F4) {
            let a = F8::load(|b| [a0, a1][b]);
            let b = F8::load(|b| [b0, b1][b]);
            assert!(same(a.split(), [a0, a1]));
            let expect = |f: fn(F4, F4) -> F4| [f(a0, b0), f(a1, b1)];
            assert!(same((a + b).split(), expect(|x, y| x + y)));
            assert!(same((a - b).split(), expect(|x, y| x - y)));
            assert!(same((a * b).split(), expect(|x, y| x * y)));
            assert!(same((a / b).split(), expect(|x, y| x / y)));
            assert!(same((-a).split(), [-a0, -a1]));
            assert!(same(a.max(b).split(), expect(|x, y| x.max(y))));
            assert!(same(a.min(b).split(), expect(|x, y| x.min(y))));
            assert!(same(a.sqrt().split(), [a0.sqrt(), a1.sqrt()]));
            let selected = F8::select(a.cmpgt(b), a, b);
            assert!(same(
                selected.split(),
                expect(|x, y| F4::select(x.cmpgt(y), x, y))
            ));
            assert_eq!(
                F8::any(a.cmpgt(b)),
                a0.cmpgt(b0).any() || a1.cmpgt(b1).any()
            );
            let mask = F8::load_mask(|b| [a0.cmpgt(b0), a1.cmpgt(b1)][b]);
            assert!(same(
                F8::select(mask, a, b).split(),
                expect(|x, y| F4::select(x.cmpgt(y), x, y))
            ));
        }
    }
}
