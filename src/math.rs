//! Scalar and vector aliases, deterministic math, and the few small helpers the pipeline
//! shares.
//!
//! The engine works in `f32` throughout. Bevy's `Vec3`/`Quat` and parry's vectors are the same
//! glam 0.32 types, so values pass between the ECS and collision detection without conversion.
//!
//! ## Deterministic math
//!
//! `+`, `-`, `*`, `/` and `sqrt` are correctly rounded by IEEE 754 and give the same bits on
//! every CPU; `sin`, `atan2`, `exp` and the other transcendental functions are not: `f32::sin`
//! calls the platform's C library (glibc, Apple's libm, the Windows CRT, or Rust's own port on
//! wasm), and they round some inputs differently. So the engine's step never calls them: it
//! calls [`sin_cos`], [`atan2`] and the rest below, which use the `libm` crate (a Rust port of
//! musl's libm), compiled from the same source on every target. `clippy.toml` forbids the
//! platform versions, and glam's methods that call them (`Quat::from_axis_angle`,
//! `Quat::from_scaled_axis`, `slerp`, ...), everywhere in the crate. Use these in your own
//! constraints and systems too if your game must give the same bits on every machine.
//!
//! parry, which the step calls for collision detection, uses platform math in two places,
//! neither of which decides a result:
//! - the feature id of a ball's contact point on a convex hull comes from comparisons with
//!   `cos 1°` and `sin 1°` (`sin_cos` of a constant). A ball–hull manifold has one point,
//!   which keeps its impulse whatever its id, and the engine reads no feature ids (a test wipes
//!   them every step and gets the same bits, where a box's results change);
//! - the vertex pseudo-normals of a triangle mesh built with `TriMeshFlags::ORIENTED` or
//!   `FIX_INTERNAL_EDGES` are weighted by angles from `acos`, at construction. Contacts read
//!   only the edge pseudo-normals, which use none; the vertex ones decide, in a point query
//!   on an oriented mesh, whether a point nearest to a vertex is inside.

pub use bevy::math::{Mat3, Quat, Vec2, Vec3};
/// π as a [`Scalar`], for angles (as `avian3d::math::PI`).
pub use std::f32::consts::PI;
/// Constants for angles, as in `avian3d::math`.
pub use std::f32::consts::{FRAC_1_SQRT_2, FRAC_PI_2, TAU};

/// The floating-point type of every physical quantity.
pub type Scalar = f32;
/// A 3D vector of [`Scalar`]s.
pub type Vector = Vec3;
/// A 3D vector of [`Scalar`]s (the same as [`Vector`]; avian's name).
pub type Vector3 = Vec3;
/// A 2D vector of [`Scalar`]s, for input axes and screen positions.
pub type Vector2 = Vec2;
/// A rotation quaternion.
pub type Quaternion = Quat;
/// A 3×3 matrix, used for inertia tensors.
pub type Matrix3 = Mat3;
/// A 3×3 matrix (the same as [`Matrix3`]; avian's name).
pub type Matrix = Mat3;
/// A unit-length 3D direction, as in ray casts.
pub type Dir = bevy::math::Dir3;

/// Converts a value to the engine's precision. The engine is `f32` throughout, so for `f32`
/// values this is the identity; `f64` values are rounded to `f32`.
///
/// It exists so that code written for avian3d, which has an `f64` build and calls
/// `.adjust_precision()` on values it passes to the engine, compiles unchanged. New code does
/// not need it.
pub trait AdjustPrecision {
    /// The type at the engine's precision.
    type Adjusted;
    /// The value at the engine's precision.
    fn adjust_precision(&self) -> Self::Adjusted;
}

/// Converts a value from the engine's precision to `f32`: the identity here, since the engine
/// is `f32` throughout. Like [`AdjustPrecision`], it exists so that code written for avian3d
/// (which calls `.f32()` on engine values it hands to Bevy) compiles unchanged.
pub trait AsF32 {
    /// The `f32` type.
    type F32;
    /// The value as `f32`.
    fn f32(&self) -> Self::F32;
}

macro_rules! precision_identity {
    ($($ty:ty),*) => {$(
        impl AdjustPrecision for $ty {
            type Adjusted = $ty;
            fn adjust_precision(&self) -> $ty {
                *self
            }
        }
        impl AsF32 for $ty {
            type F32 = $ty;
            fn f32(&self) -> $ty {
                *self
            }
        }
    )*};
}
precision_identity!(
    f32,
    Vec2,
    Vec3,
    bevy::math::Vec4,
    Quat,
    Mat3,
    bevy::math::Mat2
);

macro_rules! precision_from_f64 {
    ($($ty:ty => $f32:ty, $convert:ident);*) => {$(
        impl AdjustPrecision for $ty {
            type Adjusted = $f32;
            fn adjust_precision(&self) -> $f32 {
                self.$convert()
            }
        }
    )*};
}
precision_from_f64!(
    bevy::math::DVec2 => Vec2, as_vec2;
    bevy::math::DVec3 => Vec3, as_vec3;
    bevy::math::DQuat => Quat, as_quat;
    bevy::math::DMat3 => Mat3, as_mat3
);

impl AdjustPrecision for f64 {
    type Adjusted = f32;
    fn adjust_precision(&self) -> f32 {
        *self as f32
    }
}

/// `sin(x)`, the same bits on every target.
#[inline]
pub fn sin(x: Scalar) -> Scalar {
    libm::sinf(x)
}

/// `cos(x)`, the same bits on every target.
#[inline]
pub fn cos(x: Scalar) -> Scalar {
    libm::cosf(x)
}

/// `(sin(x), cos(x))`, the same bits on every target.
#[inline]
pub fn sin_cos(x: Scalar) -> (Scalar, Scalar) {
    libm::sincosf(x)
}

/// `tan(x)`, the same bits on every target.
#[inline]
pub fn tan(x: Scalar) -> Scalar {
    libm::tanf(x)
}

/// The angle of the point `(x, y)` from the x axis, in `[-π, π]` (`y.atan2(x)`), the same bits
/// on every target.
#[inline]
pub fn atan2(y: Scalar, x: Scalar) -> Scalar {
    libm::atan2f(y, x)
}

/// `acos(x)` for `x` in `[-1, 1]` (NaN outside), the same bits on every target.
#[inline]
pub fn acos(x: Scalar) -> Scalar {
    libm::acosf(x)
}

/// `e^x`, the same bits on every target.
#[inline]
pub fn exp(x: Scalar) -> Scalar {
    libm::expf(x)
}

/// The rotation by `|v|` radians about `v` (glam's `Quat::from_scaled_axis`), the same bits
/// on every target.
#[inline]
pub fn rotation_from_vector(v: Vector) -> Quaternion {
    let angle = v.length();
    if angle == 0.0 {
        return Quaternion::IDENTITY;
    }
    let (sin_half, cos_half) = sin_cos(0.5 * angle);
    let xyz = v * (sin_half / angle);
    Quaternion::from_xyzw(xyz.x, xyz.y, xyz.z, cos_half)
}

/// The rotation by `angle` radians about the unit vector `axis` (glam's
/// `Quat::from_axis_angle`), the same bits on every target.
#[inline]
pub fn rotation_about(axis: Vector, angle: Scalar) -> Quaternion {
    let (sin_half, cos_half) = sin_cos(0.5 * angle);
    let xyz = axis * sin_half;
    Quaternion::from_xyzw(xyz.x, xyz.y, xyz.z, cos_half)
}

/// The heap memory `v` holds (its capacity, not its length).
pub(crate) fn vec_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

/// A parry pose (rotation + translation) for a body or collider.
pub(crate) fn pose(translation: Vector, rotation: Quaternion) -> parry3d::math::Pose {
    parry3d::math::Pose::from_parts(translation, rotation)
}

/// Rotates the inverse inertia tensor `local` (body frame) into world space.
// Always inlined: a call takes the matrix through memory (see `RigidBodyQueryItem::dynamic`).
#[inline(always)]
pub(crate) fn rotate_inertia(local: Matrix3, rotation: Quaternion) -> Matrix3 {
    // A ball's or a cube's inertia is the same about every axis, so turning it changes
    // nothing; skipping the products also keeps it exactly isotropic.
    if is_isotropic(local) {
        return local;
    }
    let r = Matrix3::from_quat(rotation);
    r * local * r.transpose()
}

/// Whether `m` is a multiple of the identity, exactly.
#[inline]
fn is_isotropic(m: Matrix3) -> bool {
    m == Matrix3::from_diagonal(Vector::splat(m.x_axis.x))
}

/// Integrates a rotation by the angular displacement `omega_dt` (angular velocity × time),
/// using the first-order quaternion update `q + ½ (ω dt, 0) q`, renormalised.
#[inline]
pub(crate) fn integrate_rotation(rotation: Quaternion, omega_dt: Vector) -> Quaternion {
    let dq = Quaternion::from_xyzw(omega_dt.x, omega_dt.y, omega_dt.z, 0.0) * rotation;
    (rotation + dq * 0.5).normalize()
}

/// [`integrate_rotation`] without renormalising: for the many small corrections of one
/// substep, whose length error is second order in the angle and removed once per substep.
#[inline]
pub(crate) fn nudge_rotation(rotation: Quaternion, omega_dt: Vector) -> Quaternion {
    let dq = Quaternion::from_xyzw(omega_dt.x, omega_dt.y, omega_dt.z, 0.0) * rotation;
    rotation + dq * 0.5
}

/// The angular velocity that turns `from` into `to` over `dt`: twice the vector part of the
/// delta quaternion, taken on the short arc.
#[inline]
pub(crate) fn angular_velocity_between(from: Quaternion, to: Quaternion, inv_dt: Scalar) -> Vector {
    let dq = to * from.conjugate();
    let sign = if dq.w >= 0.0 { 1.0 } else { -1.0 };
    2.0 * inv_dt * sign * Vector::new(dq.x, dq.y, dq.z)
}

/// The rotation vector (axis × angle, angle in `[0, π]`) of a rotation quaternion.
#[inline]
pub(crate) fn rotation_vector(q: Quaternion) -> Vector {
    let q = if q.w < 0.0 { -q } else { q };
    let xyz = Vector::new(q.x, q.y, q.z);
    let sin_half = xyz.length();
    if sin_half <= Scalar::EPSILON {
        return 2.0 * xyz;
    }
    xyz / sin_half * (2.0 * atan2(sin_half, q.w))
}

/// True when every component is finite and the quaternion can be normalised: its squared
/// length is neither about zero nor past `f32::MAX` (a component of 10³⁰ overflows it, and
/// normalising then gives a zero quaternion).
#[inline]
pub(crate) fn is_finite_quat(q: Quaternion) -> bool {
    let length_squared = q.length_squared();
    q.is_finite() && length_squared > 1e-12 && length_squared.is_finite()
}

#[cfg(test)]
// The deterministic functions are checked against the platform's.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    /// Angles and axes spread over the range the step uses.
    fn vectors() -> impl Iterator<Item = Vector> {
        (1..40).map(|i| {
            let t = i as Scalar * 0.37;
            Vector::new(sin(t), cos(1.3 * t), sin(0.7 * t + 0.2)) * (0.05 * i as Scalar)
        })
    }

    /// Each function agrees with the platform's to within 2 units in the last place (both are
    /// faithfully rounded; which of two neighbours they return is what differs).
    #[test]
    fn the_deterministic_functions_agree_with_the_platform_s() {
        let ulps = |a: Scalar, b: Scalar| (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs();
        for i in 0..2000 {
            let x = (i as Scalar - 1000.0) * 0.0137;
            assert!(ulps(sin(x), x.sin()) <= 2, "sin({x})");
            assert!(ulps(cos(x), x.cos()) <= 2, "cos({x})");
            assert_eq!(sin_cos(x), (sin(x), cos(x)), "sin_cos({x})");
            assert!(ulps(atan2(x, 1.7), x.atan2(1.7)) <= 2, "atan2({x}, 1.7)");
            assert!(
                ulps(atan2(-1.1, x), (-1.1f32).atan2(x)) <= 2,
                "atan2(-1.1, {x})"
            );
            assert!(ulps(exp(0.1 * x), (0.1 * x).exp()) <= 2, "exp({x})");
            let c = x / 13.7;
            assert!(ulps(acos(c), c.acos()) <= 2, "acos({c})");
            if x.abs() < 1.5 {
                assert!(ulps(tan(x), x.tan()) <= 2, "tan({x})");
            }
        }
    }

    /// A rotation vector turned into a quaternion and back is itself, and the quaternion is
    /// glam's (which uses the platform's functions) to rounding.
    #[test]
    fn rotation_from_vector_inverts_rotation_vector() {
        assert_eq!(rotation_from_vector(Vector::ZERO), Quaternion::IDENTITY);
        for v in vectors() {
            let q = rotation_from_vector(v);
            assert!((q.length() - 1.0).abs() < 1e-6, "{v}: |q| = {}", q.length());
            assert!(rotation_vector(q).abs_diff_eq(v, 2e-6), "{v} -> {q}");
            assert!(q.abs_diff_eq(Quaternion::from_scaled_axis(v), 1e-6), "{v}");
            let axis = v.normalize();
            let about = rotation_about(axis, v.length());
            assert!(about.abs_diff_eq(Quaternion::from_axis_angle(axis, v.length()), 1e-6));
        }
    }
}
