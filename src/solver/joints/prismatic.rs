//! The prismatic (slider) joint, with optional limits, spring, friction and motor.

use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;

use super::contact_blocks::Held;
use super::prepared::{JointList, XpbdJoint, XpbdJoints, solve_alone};
use super::spring::{Row, check_friction, check_spring};
use super::{
    Anchors, JointBase, JointBody, JointCache, JointMotor, JointSolve, JointSpring, MotorTarget,
    Substep, check_axis, check_limits, check_motor, clamp_range, impl_joint,
};
use crate::math::{Quaternion, Scalar, Vector, rotation_vector};
use crate::solver::RigidBodyQueryItem;
use crate::solver::xpbd::XpbdConstraint;
use crate::validation::{Validate, join};

/// A slider: body 2 moves only along the free axis (in body 1's frame, default X) and keeps
/// the relative rotation it had when the joint was first solved.
///
/// The slider position is `(anchor₂ − anchor₁) · axis`. A [spring](Self::with_spring) pulls it
/// towards a rest position, and [friction](Self::with_friction) resists sliding with a limited
/// force.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # let mut world = World::new();
/// # let (a, b) = (world.spawn_empty().id(), world.spawn_empty().id());
/// let piston = PrismaticJoint::new(a, b)
///     .with_slider_axis(Vec3::Y)
///     .with_limits(0.0, 0.5)
///     .with_motor(JointMotor::position(0.25, 1000.0));
/// // A damped suspension strut, 1.5 Hz at 0.7 of critical damping, resting at −0.1 m.
/// let strut = PrismaticJoint::new(a, b)
///     .with_slider_axis(Vec3::Y)
///     .with_limits(-0.3, 0.1)
///     .with_spring(JointSpring::new(1.5, 0.7).with_rest(-0.1));
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
pub struct PrismaticJoint {
    base: JointBase,
    free_axis: Vector,
    limits: Option<(Scalar, Scalar)>,
    motor: Option<JointMotor>,
    spring: Option<JointSpring>,
    friction: Option<Scalar>,
    relative_rotation: Option<Quaternion>,
    position: Scalar,
    perpendicular_lagrange: Scalar,
    angle_lagrange: Vector,
    limit_lagrange: Scalar,
    motor_lagrange: Scalar,
    spring_lagrange: Scalar,
    friction_lagrange: Scalar,
}

impl_joint!(PrismaticJoint);

impl PrismaticJoint {
    /// A slider along X between the origins of `entity1` and `entity2`.
    pub fn new(entity1: Entity, entity2: Entity) -> Self {
        Self {
            base: JointBase::new(entity1, entity2),
            free_axis: Vector::X,
            limits: None,
            motor: None,
            spring: None,
            friction: None,
            relative_rotation: None,
            position: 0.0,
            perpendicular_lagrange: 0.0,
            angle_lagrange: Vector::ZERO,
            limit_lagrange: 0.0,
            motor_lagrange: 0.0,
            spring_lagrange: 0.0,
            friction_lagrange: 0.0,
        }
    }

    /// Sets the axis body 2 may slide along, in body 1's frame (normalised when the joint
    /// enters the world; a zero or non-finite axis is replaced by X with a warning).
    pub fn with_slider_axis(mut self, axis: Vector) -> Self {
        self.free_axis = axis;
        self
    }

    /// Limits the slider position to `[min, max]` metres (swapped if given in the wrong
    /// order; a NaN end removes the limit, with a warning).
    pub fn with_limits(mut self, min: Scalar, max: Scalar) -> Self {
        self.limits = Some((min, max));
        self
    }

    /// Adds a motor driving the slider's speed or position; its force is in newtons. Together
    /// with [friction](Self::with_friction), the motor must overcome the friction force: one
    /// with less force than the friction stalls, one with more drives the slider with the
    /// difference of the two until it reaches its target.
    pub fn with_motor(mut self, motor: JointMotor) -> Self {
        self.motor = Some(motor);
        self
    }

    /// The motor, for changing its target at run time.
    pub fn motor_mut(&mut self) -> Option<&mut JointMotor> {
        self.motor.as_mut()
    }

    /// Adds a spring pulling the slider position towards `spring.rest` (m). Its stiffness is
    /// in N/m, or relative to the bodies' effective mass along the axis (see [`JointSpring`]).
    pub fn with_spring(mut self, spring: JointSpring) -> Self {
        self.spring = Some(spring);
        self
    }

    /// The spring, if any.
    pub fn spring(&self) -> Option<JointSpring> {
        self.spring
    }

    /// The spring, for changing it at run time.
    pub fn spring_mut(&mut self) -> Option<&mut JointSpring> {
        self.spring.as_mut()
    }

    /// Adds friction: up to `force` N resists sliding along the axis (the slider holds still
    /// under smaller loads). A NaN or negative force is replaced by 0 with a warning when the
    /// joint enters the world. With a motor, the motor works against the friction (see
    /// [`with_motor`](Self::with_motor)).
    pub fn with_friction(mut self, force: Scalar) -> Self {
        self.friction = Some(force);
        self
    }

    /// The friction force, N, if any.
    pub fn friction(&self) -> Option<Scalar> {
        self.friction
    }

    /// The slider position at the last solve, m.
    pub fn position(&self) -> Scalar {
        self.position
    }
}

impl Validate for PrismaticJoint {
    fn validate(&mut self) -> Option<String> {
        join([
            self.base.validate(),
            check_axis(&mut self.free_axis, "free axis", Vector::X),
            check_limits(&mut self.limits, "limits"),
            check_motor(&mut self.motor),
            check_spring(&mut self.spring),
            check_friction(&mut self.friction),
        ])
    }
}

impl PrismaticJoint {
    /// The slider position now and how far it slid since the start of the substep: what the
    /// XPBD sets slid since the poses before them, plus what the position integration slid,
    /// the anchors' relative velocity along the axis times `h` (velocities change only after
    /// the XPBD sets).
    fn slid(
        &self,
        b1: &JointBody,
        b2: &JointBody,
        axis: Vector,
        h: Scalar,
    ) -> (Anchors, Scalar, Scalar) {
        let anchors = Anchors::new(b1, b2);
        let position = (anchors.p2 - anchors.p1).dot(axis);
        let anchor = |b: &JointBody| b.pre_xpbd_center() + b.pre_xpbd_rotation() * b.arm();
        let before = (anchor(b2) - anchor(b1)).dot(b1.pre_xpbd_rotation() * self.free_axis);
        let speed = (b2.velocity_at(anchors.r2) - b1.velocity_at(anchors.r1)).dot(axis);
        (anchors, position, position - before + speed * h)
    }

    /// One pass of the motor, along `axis` (body 1's free axis at the start of the pass).
    fn drive(
        &mut self,
        solve: &mut JointSolve,
        (b1, b2): (&mut JointBody, &mut JointBody),
        axis: Vector,
        motor: JointMotor,
    ) {
        let dt = solve.h;
        let anchors = Anchors::new(b1, b2);
        let position = (anchors.p2 - anchors.p1).dot(axis);
        // Slid so far this substep, against what a target speed asks for.
        let speed_excess = |speed: Scalar| {
            let anchor = |b: &JointBody| b.pre_xpbd_center() + b.pre_xpbd_rotation() * b.arm();
            let before = (anchor(b2) - anchor(b1)).dot(b1.pre_xpbd_rotation() * self.free_axis);
            let speed_now = (b2.velocity_at(anchors.r2) - b1.velocity_at(anchors.r1)).dot(axis);
            position - before - (speed - speed_now) * dt
        };
        let (excess, compliance) = match motor.target {
            MotorTarget::Position { target, compliance } => {
                let error = position - target;
                // The joint keeps the bodies from turning: only their masses resist.
                let inverse_mass = b1.positional_inverse_mass(Vector::ZERO, axis)
                    + b2.positional_inverse_mass(Vector::ZERO, axis);
                match motor.servo_speed(error, inverse_mass, dt) {
                    Some(speed) => (speed_excess(speed), 0.0),
                    None => (error, compliance),
                }
            }
            MotorTarget::Velocity(speed) => (speed_excess(speed), 0.0),
        };
        let max = motor.max_force * dt * dt;
        solve.position_clamped(
            b1,
            b2,
            &anchors,
            -excess * axis,
            &mut self.motor_lagrange,
            compliance,
            max,
        );
    }

    /// The spring and friction rows along body 1's axis.
    #[inline(never)]
    fn spring_and_friction(
        &mut self,
        solve: &mut JointSolve,
        (b1, b2): (&mut JointBody, &mut JointBody),
    ) {
        let axis = b1.rotation() * self.free_axis;
        if let Some(spring) = self.spring {
            let (anchors, position, slid) = self.slid(b1, b2, axis, solve.h);
            solve.spring_row(
                (b1, b2),
                Row::Linear(&anchors, axis),
                (position - spring.rest, slid),
                &mut self.spring_lagrange,
                &spring,
            );
        }
        if let Some(force) = self.friction {
            let (anchors, _, slid) = self.slid(b1, b2, axis, solve.h);
            solve.friction_row(
                (b1, b2),
                Row::Linear(&anchors, axis),
                slid,
                &mut self.friction_lagrange,
                force,
            );
        }
    }
}

impl XpbdConstraint<2> for PrismaticJoint {
    fn entities(&self) -> [Entity; 2] {
        [self.base.entity1, self.base.entity2]
    }

    fn clear_lagrange_multipliers(&mut self) {
        self.base.begin_substep();
        self.perpendicular_lagrange = 0.0;
        self.angle_lagrange = Vector::ZERO;
        self.limit_lagrange = 0.0;
        self.motor_lagrange = 0.0;
        self.spring_lagrange = 0.0;
        self.friction_lagrange = 0.0;
    }

    fn solve(&mut self, bodies: [&mut RigidBodyQueryItem; 2], dt: Scalar) {
        solve_alone(self, bodies, dt);
    }
}

impl XpbdJoint for PrismaticJoint {
    fn held(&self, rotation1: Quaternion) -> [Held; 2] {
        [Held::AllBut(rotation1 * self.free_axis), Held::All]
    }

    fn store(&self, component: &mut Self) {
        component.base.store(&self.base);
        component.relative_rotation = component.relative_rotation.or(self.relative_rotation);
        component.position = self.position;
        component.perpendicular_lagrange = self.perpendicular_lagrange;
        component.angle_lagrange = self.angle_lagrange;
        component.limit_lagrange = self.limit_lagrange;
        component.motor_lagrange = self.motor_lagrange;
        component.spring_lagrange = self.spring_lagrange;
        component.friction_lagrange = self.friction_lagrange;
    }

    fn list(joints: &mut XpbdJoints) -> &mut JointList<Self> {
        &mut joints.prismatic
    }

    fn motor_load(&self) -> Option<(JointMotor, Scalar)> {
        Some((self.motor?, self.motor_lagrange))
    }

    fn prepare(&mut self, b1: &RigidBodyQueryItem, b2: &RigidBodyQueryItem) {
        if !self.base.is_broken() {
            self.relative_rotation
                .get_or_insert(b1.start_rotation.inverse() * b2.start_rotation);
        }
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
        let mut solve = JointSolve::new(step, cache);
        let compliance = self.base.compliance;
        let relative = self.relative_rotation.unwrap_or_default();
        let error = rotation_vector((b1.rotation() * relative) * b2.rotation().inverse());
        solve.orientation(
            &mut b1,
            &mut b2,
            error,
            &mut self.angle_lagrange,
            compliance,
        );
        let axis = b1.rotation() * self.free_axis;
        let anchors = Anchors::new(&b1, &b2);
        let offset = anchors.p1 - anchors.p2;
        let sideways = offset - axis * offset.dot(axis);
        solve.position(
            &mut b1,
            &mut b2,
            (&anchors, sideways),
            &mut self.perpendicular_lagrange,
            compliance,
        );

        let axis = b1.rotation() * self.free_axis;
        let anchors = Anchors::new(&b1, &b2);
        self.position = (anchors.p2 - anchors.p1).dot(axis);
        if let Some((min, max)) = self.limits {
            let excess = (clamp_range(self.position, min, max) - self.position) * axis;
            solve.position_clamped(
                &mut b1,
                &mut b2,
                &anchors,
                excess,
                &mut self.limit_lagrange,
                compliance,
                Scalar::INFINITY,
            );
        }
        // With friction, the motor is solved both before and after it (sharing its multiplier),
        // so that even a single pass splits the load between them as the passes converge to.
        if let (Some(motor), Some(_)) = (self.motor, self.friction) {
            self.drive(&mut solve, (&mut b1, &mut b2), axis, motor);
        }
        if self.spring.is_some() || self.friction.is_some() {
            self.spring_and_friction(&mut solve, (&mut b1, &mut b2));
        }
        if let Some(motor) = self.motor {
            self.drive(&mut solve, (&mut b1, &mut b2), axis, motor);
        }
        solve.finish(&mut self.base, &mut b1, &mut b2);
    }
}
