//! Scalar and vector aliases, and the few small helpers the pipeline shares.
//!
//! The engine works in `f32` throughout. Bevy's `Vec3`/`Quat` and parry's vectors are the same
//! glam 0.32 types, so values pass between the ECS and collision detection without conversion.

pub use bevy::math::{Mat3, Quat, Vec3};

/// The floating-point type of every physical quantity.
pub type Scalar = f32;
/// A 3D vector of [`Scalar`]s.
pub type Vector = Vec3;
/// A rotation quaternion.
pub type Quaternion = Quat;
/// A 3×3 matrix, used for inertia tensors.
pub type Matrix3 = Mat3;

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
    xyz / sin_half * (2.0 * sin_half.atan2(q.w))
}

/// True when every component is finite and the quaternion can be normalised: its squared
/// length is neither about zero nor past `f32::MAX` (a component of 10³⁰ overflows it, and
/// normalising then gives a zero quaternion).
#[inline]
pub(crate) fn is_finite_quat(q: Quaternion) -> bool {
    let length_squared = q.length_squared();
    q.is_finite() && length_squared > 1e-12 && length_squared.is_finite()
}
