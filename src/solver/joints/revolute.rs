//! The revolute (hinge) joint, with an optional angle limit and motor.

use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;

use super::contact_blocks::Held;
use super::prepared::{JointList, XpbdJoint, XpbdJoints, solve_alone};
use super::{
    JointBase, JointBody, JointCache, JointMotor, JointSolve, MotorTarget, Substep, check_axis,
    check_limits, check_motor, impl_joint, signed_angle, wrap_angle,
};
use crate::math::{Quaternion, Scalar, Vector};
use crate::solver::RigidBodyQueryItem;
use crate::solver::xpbd::XpbdConstraint;
use crate::validation::{Validate, join};

/// A hinge: the anchors coincide and the bodies only turn about the aligned axis (given in each
/// body's frame, default Z).
///
/// The hinge angle is body 2's rotation relative to body 1 about the axis, in `(−π, π]`, zero
/// where the bodies' frames agree about the axis.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # let mut world = World::new();
/// # let (a, b) = (world.spawn_empty().id(), world.spawn_empty().id());
/// let door = RevoluteJoint::new(a, b)
///     .with_aligned_axis(Vec3::Y)
///     .with_angle_limits(-1.5, 1.5)
///     .with_motor(JointMotor::velocity(1.0).with_max_force(50.0));
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
pub struct RevoluteJoint {
    base: JointBase,
    aligned_axis: Vector,
    angle_limits: Option<(Scalar, Scalar)>,
    motor: Option<JointMotor>,
    angle: Scalar,
    position_lagrange: Vector,
    align_lagrange: Scalar,
    limit_lagrange: Scalar,
    motor_lagrange: Scalar,
}

impl_joint!(RevoluteJoint);

impl RevoluteJoint {
    /// A hinge about Z between the origins of `entity1` and `entity2`.
    pub fn new(entity1: Entity, entity2: Entity) -> Self {
        Self {
            base: JointBase::new(entity1, entity2),
            aligned_axis: Vector::Z,
            angle_limits: None,
            motor: None,
            angle: 0.0,
            position_lagrange: Vector::ZERO,
            align_lagrange: 0.0,
            limit_lagrange: 0.0,
            motor_lagrange: 0.0,
        }
    }

    /// Sets the hinge axis, in each body's frame (normalised when the joint enters the world;
    /// a zero or non-finite axis is replaced by Z with a warning).
    pub fn with_aligned_axis(mut self, axis: Vector) -> Self {
        self.aligned_axis = axis;
        self
    }

    /// Limits the hinge angle to `[min, max]` radians (swapped if given in the wrong order; a
    /// NaN end removes the limit, with a warning).
    pub fn with_angle_limits(mut self, min: Scalar, max: Scalar) -> Self {
        self.angle_limits = Some((min, max));
        self
    }

    /// Adds a motor driving the hinge's angular speed or angle; its force is a torque in N·m.
    pub fn with_motor(mut self, motor: JointMotor) -> Self {
        self.motor = Some(motor);
        self
    }

    /// The motor, for changing its target at run time.
    pub fn motor_mut(&mut self) -> Option<&mut JointMotor> {
        self.motor.as_mut()
    }

    /// The hinge angle at the end of the last step, rad.
    pub fn angle(&self) -> Scalar {
        self.angle
    }
}

impl Validate for RevoluteJoint {
    fn validate(&mut self) -> Option<String> {
        join([
            self.base.validate(),
            check_axis(&mut self.aligned_axis, "aligned axis", Vector::Z),
            check_limits(&mut self.angle_limits, "angle limits"),
            check_motor(&mut self.motor),
        ])
    }
}

impl XpbdConstraint<2> for RevoluteJoint {
    fn entities(&self) -> [Entity; 2] {
        [self.base.entity1, self.base.entity2]
    }

    fn clear_lagrange_multipliers(&mut self) {
        self.base.begin_substep();
        self.position_lagrange = Vector::ZERO;
        self.align_lagrange = 0.0;
        self.limit_lagrange = 0.0;
        self.motor_lagrange = 0.0;
    }

    fn solve(&mut self, bodies: [&mut RigidBodyQueryItem; 2], dt: Scalar) {
        solve_alone(self, bodies, dt);
    }
}

impl XpbdJoint for RevoluteJoint {
    fn held(&self, rotation1: Quaternion) -> [Held; 2] {
        [Held::All, Held::AllBut(rotation1 * self.aligned_axis)]
    }

    fn store(&self, component: &mut Self) {
        component.base.store(&self.base);
        component.angle = self.angle;
        component.position_lagrange = self.position_lagrange;
        component.align_lagrange = self.align_lagrange;
        component.limit_lagrange = self.limit_lagrange;
        component.motor_lagrange = self.motor_lagrange;
    }

    fn list(joints: &mut XpbdJoints) -> &mut JointList<Self> {
        &mut joints.revolute
    }

    fn read_out(&mut self, b1: &RigidBodyQueryItem, b2: &RigidBodyQueryItem) {
        let reference = self.aligned_axis.any_orthonormal_vector();
        self.angle = signed_angle(
            b1.rotation * reference,
            b2.rotation * reference,
            b1.rotation * self.aligned_axis,
        );
    }

    fn solve_pass(
        &mut self,
        [mut b1, mut b2]: [JointBody; 2],
        step: Substep,
        cache: &mut JointCache,
    ) {
        if self.base.is_broken() {
            return;
        }
        let dt = step.h;
        let mut solve = JointSolve::new(step, cache);
        let compliance = self.base.compliance;
        let axis = self.aligned_axis;
        // `a₂ × a₁`, of length sin θ for a misalignment θ: the hinge correction of Müller et al.
        // (2020, §3.3.2), the same fixed point as θ without an `atan2` in every pass.
        let misalignment = (b2.rotation() * axis).cross(b1.rotation() * axis);
        solve.angle(
            &mut b1,
            &mut b2,
            misalignment,
            &mut self.align_lagrange,
            compliance,
        );

        let reference = self.aligned_axis.any_orthonormal_vector();
        if let Some(limits) = self.angle_limits {
            let a1 = b1.rotation() * self.aligned_axis;
            let (r1, r2) = (b1.rotation() * reference, b2.rotation() * reference);
            solve.limit_angle(
                &mut b1,
                &mut b2,
                a1,
                r1,
                r2,
                limits,
                &mut self.limit_lagrange,
                compliance,
            );
        }
        solve.point(&mut b1, &mut b2, &mut self.position_lagrange, compliance);
        // The motor goes last, so no other part of this pass turns the hinge after it.
        if let Some(motor) = self.motor {
            let a1 = b1.rotation() * self.aligned_axis;
            let angle = signed_angle(b1.rotation() * reference, b2.rotation() * reference, a1);
            let (excess, compliance) = match motor.target {
                MotorTarget::Position { target, compliance } => {
                    (wrap_angle(angle - target), compliance)
                }
                MotorTarget::Velocity(speed) => {
                    // Turned so far this substep, against what the target speed asks for.
                    let before = (
                        b1.pre_xpbd_rotation() * reference,
                        b2.pre_xpbd_rotation() * reference,
                    );
                    let angle_before = signed_angle(
                        before.0,
                        before.1,
                        b1.pre_xpbd_rotation() * self.aligned_axis,
                    );
                    let speed_now = (b2.angular_velocity() - b1.angular_velocity()).dot(a1);
                    (
                        wrap_angle(angle - angle_before) - (speed - speed_now) * dt,
                        0.0,
                    )
                }
            };
            let max = motor.max_force * dt * dt;
            solve.angle_clamped(
                &mut b1,
                &mut b2,
                -excess * a1,
                &mut self.motor_lagrange,
                compliance,
                max,
            );
        }

        solve.finish(&mut self.base, &mut b1, &mut b2);
    }
}
