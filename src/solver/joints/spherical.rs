//! The spherical (ball-and-socket) joint, with optional swing and twist limits and friction.

use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;

use super::contact_blocks::Held;
use super::point::PointRow;
use super::prepared::{JointList, XpbdJoint, XpbdJoints, solve_alone};
use super::spring::check_friction;
use super::{
    JointBase, JointBody, JointCache, JointSolve, Substep, check_axis, check_limits, impl_joint,
};
use crate::math::{Quaternion, Scalar, Vector};
use crate::solver::RigidBodyQueryItem;
use crate::solver::xpbd::XpbdConstraint;
use crate::validation::{Validate, join};

/// Joins two anchors at a point; the bodies turn freely about it.
///
/// Limits follow Müller et al. 2020: the *swing* is the angle between the two bodies' swing
/// axes (each given in its own body's frame by [`with_swing_axis`](Self::with_swing_axis),
/// default Y); the *twist* is the rotation about the mean swing axis, measured between the
/// bodies' twist axes (default X, perpendicular to the swing axis).
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # use std::f32::consts::FRAC_PI_4;
/// # let mut world = World::new();
/// # let (a, b) = (world.spawn_empty().id(), world.spawn_empty().id());
/// let shoulder = SphericalJoint::new(a, b)
///     .with_local_anchor1(Vec3::new(0.0, -0.5, 0.0))
///     .with_local_anchor2(Vec3::new(0.0, 0.5, 0.0))
///     .with_swing_limits(0.0, FRAC_PI_4)
///     .with_twist_limits(-0.2, 0.2);
/// ```
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component, MapEntities, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
#[component(map_entities)]
#[require(crate::body::CreationOrder)]
pub struct SphericalJoint {
    base: JointBase,
    swing_axis: Vector,
    twist_axis: Vector,
    swing_limits: Option<(Scalar, Scalar)>,
    twist_limits: Option<(Scalar, Scalar)>,
    friction: Option<Scalar>,
    position_lagrange: Vector,
    swing_lagrange: Scalar,
    twist_lagrange: Scalar,
    friction_lagrange: Vector,
}

impl_joint!(SphericalJoint);

impl SphericalJoint {
    /// A spherical joint between the origins of `entity1` and `entity2`.
    pub fn new(entity1: Entity, entity2: Entity) -> Self {
        Self {
            base: JointBase::new(entity1, entity2),
            swing_axis: Vector::Y,
            twist_axis: Vector::X,
            swing_limits: None,
            twist_limits: None,
            friction: None,
            position_lagrange: Vector::ZERO,
            swing_lagrange: 0.0,
            twist_lagrange: 0.0,
            friction_lagrange: Vector::ZERO,
        }
    }

    /// Sets the swing axis (in each body's frame); the twist axis is made perpendicular to it.
    /// A zero or non-finite swing axis is replaced by Y, with a warning, when the joint enters
    /// the world.
    pub fn with_swing_axis(mut self, axis: Vector) -> Self {
        self.swing_axis = axis;
        if let Some(unit) = axis.try_normalize() {
            self.swing_axis = unit;
            self.twist_axis = perpendicular(self.twist_axis, unit);
        }
        self
    }

    /// Sets the twist reference axis (in each body's frame), made perpendicular to the swing
    /// axis when the joint enters the world; an axis with no direction off the swing axis is
    /// replaced by a perpendicular one, with a warning.
    pub fn with_twist_axis(mut self, axis: Vector) -> Self {
        self.twist_axis = axis;
        self
    }

    /// Limits the swing angle to `[min, max]` radians (swing is never negative; a NaN end
    /// removes the limit, with a warning).
    pub fn with_swing_limits(mut self, min: Scalar, max: Scalar) -> Self {
        self.swing_limits = Some((min, max));
        self
    }

    /// Limits the twist angle to `[min, max]` radians (a NaN end removes the limit, with a
    /// warning).
    pub fn with_twist_limits(mut self, min: Scalar, max: Scalar) -> Self {
        self.twist_limits = Some((min, max));
        self
    }

    /// Adds friction: up to `torque` N·m about any axis resists the bodies' turning relative
    /// to each other (a stiff shoulder, a ball joint that holds its pose under smaller loads).
    /// A NaN or negative torque is replaced by 0 with a warning when the joint enters the
    /// world.
    pub fn with_friction(mut self, torque: Scalar) -> Self {
        self.friction = Some(torque);
        self
    }

    /// The friction torque, N·m, if any.
    pub fn friction(&self) -> Option<Scalar> {
        self.friction
    }

    /// Normalises the swing axis and makes the twist axis a unit vector perpendicular to it.
    fn check_axes(&mut self) -> Option<String> {
        let swing = check_axis(&mut self.swing_axis, "swing axis", Vector::Y);
        // Checked every step: a unit twist axis already perpendicular is left as it is.
        let t = self.twist_axis;
        let tolerance = 4.0 * Scalar::EPSILON;
        if (t.length_squared() - 1.0).abs() <= tolerance
            && t.dot(self.swing_axis).abs() <= tolerance
        {
            return swing;
        }
        let twist = (self.twist_axis - self.swing_axis * self.twist_axis.dot(self.swing_axis))
            .try_normalize();
        let twist = match twist {
            Some(unit) => {
                self.twist_axis = unit;
                None
            }
            None => {
                let message = format!(
                    "twist axis {} has no direction off the swing axis; using a perpendicular one",
                    self.twist_axis
                );
                self.twist_axis = self.swing_axis.any_orthonormal_vector();
                Some(message)
            }
        };
        join([swing, twist])
    }
}

/// The rotation vector (world) a body has turned since the start of the substep: what the
/// XPBD sets turned it since its position integration, plus that integration's `ω h`
/// (velocities change only after the XPBD sets).
fn turned_this_substep(body: &JointBody, h: Scalar) -> Vector {
    let xpbd = body.rotation() * body.pre_xpbd_rotation().inverse();
    // Small per substep: the rotation vector is twice the quaternion's vector part.
    2.0 * xpbd.w.signum() * xpbd.xyz() + body.angular_velocity() * h
}

/// `axis` with its component along `normal` removed, normalised (any perpendicular if none is
/// left).
fn perpendicular(axis: Vector, normal: Vector) -> Vector {
    (axis - normal * axis.dot(normal))
        .try_normalize()
        .unwrap_or_else(|| normal.any_orthonormal_vector())
}

impl Validate for SphericalJoint {
    fn validate(&mut self) -> Option<String> {
        join([
            self.base.validate(),
            self.check_axes(),
            check_limits(&mut self.swing_limits, "swing limits"),
            check_limits(&mut self.twist_limits, "twist limits"),
            check_friction(&mut self.friction),
        ])
    }
}

impl XpbdConstraint<2> for SphericalJoint {
    fn entities(&self) -> [Entity; 2] {
        [self.base.entity1, self.base.entity2]
    }

    fn clear_lagrange_multipliers(&mut self) {
        self.base.begin_substep();
        self.position_lagrange = Vector::ZERO;
        self.swing_lagrange = 0.0;
        self.twist_lagrange = 0.0;
        self.friction_lagrange = Vector::ZERO;
    }

    fn solve(&mut self, bodies: [&mut RigidBodyQueryItem; 2], dt: Scalar) {
        solve_alone(self, bodies, dt);
    }
}

impl XpbdJoint for SphericalJoint {
    fn held(&self, _: Quaternion) -> [Held; 2] {
        [Held::All, Held::Free]
    }

    #[inline(always)]
    fn solve_pass(
        &mut self,
        [mut b1, mut b2]: [JointBody; 2],
        step: Substep,
        cache: &mut JointCache,
    ) {
        if self.base.is_broken() {
            return;
        }
        let mut solve = JointSolve::new(step, cache);
        let compliance = self.base.compliance;
        if self.swing_limits.is_some() || self.twist_limits.is_some() {
            self.solve_limits(&mut solve, &mut b1, &mut b2);
        }
        solve.point(&mut b1, &mut b2, &mut self.position_lagrange, compliance);
        if let Some(torque) = self.friction {
            let turned = turned_this_substep(&b2, step.h) - turned_this_substep(&b1, step.h);
            solve.angular_friction(
                (&mut b1, &mut b2),
                turned,
                &mut self.friction_lagrange,
                torque,
            );
        }
        solve.finish(&mut self.base, &mut b1, &mut b2);
    }

    fn store(&self, component: &mut Self) {
        component.base.store(&self.base);
        component.position_lagrange = self.position_lagrange;
        component.swing_lagrange = self.swing_lagrange;
        component.twist_lagrange = self.twist_lagrange;
        component.friction_lagrange = self.friction_lagrange;
    }

    fn list(joints: &mut XpbdJoints) -> &mut JointList<Self> {
        &mut joints.spherical
    }

    const POINT_ROWS: bool = true;

    fn point_only(&self) -> bool {
        self.swing_limits.is_none()
            && self.twist_limits.is_none()
            && self.friction.is_none()
            && self.base.linear_damping == 0.0
            && self.base.angular_damping == 0.0
    }

    fn absorb_point(&mut self, row: &PointRow) {
        // What a substep of `solve_pass` leaves behind.
        self.clear_lagrange_multipliers();
        self.position_lagrange = row.lagrange();
        self.base.absorb_point(row);
    }
}

impl SphericalJoint {
    /// The swing and twist limits of one pass.
    fn solve_limits(&mut self, solve: &mut JointSolve, b1: &mut JointBody, b2: &mut JointBody) {
        let compliance = self.base.compliance;
        let a1 = b1.rotation() * self.swing_axis;
        let a2 = b2.rotation() * self.swing_axis;
        if let Some(limits) = self.swing_limits
            && let Some(normal) = a1.cross(a2).try_normalize()
        {
            solve.limit_angle(
                b1,
                b2,
                normal,
                a1,
                a2,
                limits,
                &mut self.swing_lagrange,
                compliance,
            );
        }
        if let Some(limits) = self.twist_limits
            && let Some(normal) = (a1 + a2).try_normalize()
        {
            let t1 = perpendicular(b1.rotation() * self.twist_axis, normal);
            let t2 = perpendicular(b2.rotation() * self.twist_axis, normal);
            solve.limit_angle(
                b1,
                b2,
                normal,
                t1,
                t2,
                limits,
                &mut self.twist_lagrange,
                compliance,
            );
        }
    }
}
