//! The revolute (hinge) joint, with an optional angle limit, spring, friction and motor.

use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;

use super::contact_blocks::Held;
use super::prepared::{JointList, XpbdJoint, XpbdJoints, solve_alone};
use super::spring::{Row, check_friction, check_spring};
use super::{
    JointBase, JointBody, JointCache, JointMotor, JointSolve, JointSpring, MotorTarget, Substep,
    check_axis, check_limits, check_motor, clamp_range, impl_joint, signed_angle, wrap_angle,
};
use crate::math::{Quaternion, Scalar, Vector};
use crate::solver::RigidBodyQueryItem;
use crate::solver::xpbd::XpbdConstraint;
use crate::validation::{Validate, join};

/// A hinge: the anchors coincide and the bodies only turn about the aligned axis (given in each
/// body's frame, default Z).
///
/// The hinge angle is body 2's rotation relative to body 1 about the axis, zero where the
/// bodies' frames agree about the axis. It counts whole turns (see [`angle`](Self::angle)), so
/// angle limits, like a spring's rest angle, may lie beyond ±π: limits of `(−3π, 3π)` let the
/// hinge turn one and a half turns each way.
///
/// A [spring](Self::with_spring) pulls the angle towards a rest angle, and
/// [friction](Self::with_friction) resists turning with a limited torque.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # let mut world = World::new();
/// # let (a, b) = (world.spawn_empty().id(), world.spawn_empty().id());
/// let door = RevoluteJoint::new(a, b)
///     .with_hinge_axis(Vec3::Y)
///     .with_angle_limits(-1.5, 1.5)
///     .with_motor(JointMotor::velocity(1.0, 50.0));
/// // Swings shut at 1 Hz, lightly damped, and sticks a little.
/// let saloon_door = RevoluteJoint::new(a, b)
///     .with_hinge_axis(Vec3::Y)
///     .with_spring(JointSpring::new(1.0, 0.2))
///     .with_friction(2.0);
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
    spring: Option<JointSpring>,
    friction: Option<Scalar>,
    /// The hinge angle counting whole turns: at the end of the last step, or during a step at
    /// the start of the substep in progress.
    angle: Scalar,
    position_lagrange: Vector,
    align_lagrange: Scalar,
    limit_lagrange: Scalar,
    motor_lagrange: Scalar,
    spring_lagrange: Scalar,
    friction_lagrange: Scalar,
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
            spring: None,
            friction: None,
            angle: 0.0,
            position_lagrange: Vector::ZERO,
            align_lagrange: 0.0,
            limit_lagrange: 0.0,
            motor_lagrange: 0.0,
            spring_lagrange: 0.0,
            friction_lagrange: 0.0,
        }
    }

    /// Sets the hinge axis, in each body's frame (normalised when the joint enters the world;
    /// a zero or non-finite axis is replaced by Z with a warning).
    pub fn with_hinge_axis(mut self, axis: Vector) -> Self {
        self.aligned_axis = axis;
        self
    }

    /// Limits the hinge angle to `[min, max]` radians (swapped if given in the wrong order; a
    /// NaN end removes the limit, with a warning). The angle counts whole turns, so the range
    /// may be wider than a turn.
    pub fn with_angle_limits(mut self, min: Scalar, max: Scalar) -> Self {
        self.angle_limits = Some((min, max));
        self
    }

    /// Adds a motor driving the hinge's angular speed or angle; its force is a torque in N·m.
    ///
    /// A position motor turns the short way to its target angle (the difference is taken
    /// modulo a turn), unlike a [spring](Self::with_spring), which winds and unwinds like a
    /// torsion spring. Together with [friction](Self::with_friction), the motor must
    /// overcome the friction torque: one with less torque than the friction stalls, one with
    /// more drives the hinge with the difference of the two until it reaches its target.
    pub fn with_motor(mut self, motor: JointMotor) -> Self {
        self.motor = Some(motor);
        self
    }

    /// The motor, for changing its target at run time.
    pub fn motor_mut(&mut self) -> Option<&mut JointMotor> {
        self.motor.as_mut()
    }

    /// Adds a torsion spring pulling the hinge angle towards `spring.rest` (rad, counting
    /// whole turns: a rest angle of 2π is one turn wound up). Its stiffness is in N·m/rad,
    /// or relative to the bodies' moments of inertia about the axis (see [`JointSpring`]).
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

    /// Adds friction: up to `torque` N·m resists turning about the hinge (the hinge holds
    /// still under smaller loads). A NaN or negative torque is replaced by 0 with a warning
    /// when the joint enters the world. With a motor, the motor works against the friction
    /// (see [`with_motor`](Self::with_motor)).
    pub fn with_friction(mut self, torque: Scalar) -> Self {
        self.friction = Some(torque);
        self
    }

    /// The friction torque, N·m, if any.
    pub fn friction(&self) -> Option<Scalar> {
        self.friction
    }

    /// The hinge angle at the end of the last step, rad, counting whole turns: it grows past
    /// π as the hinge keeps turning (by 2π per turn) instead of wrapping round to −π.
    ///
    /// On a hinge with limits, a spring or friction it is followed in every substep, so it
    /// counts turns correctly up to half a turn per substep (about 800 rad/s at 60 Hz and 4
    /// substeps); on a plain hinge, whose solve does not need it, once per step (up to half a
    /// turn per step, about 190 rad/s at 60 Hz). A new joint starts from the angle in
    /// `(−π, π]` of its bodies' poses. The angle is kept in the component, so snapshots and
    /// saved scenes keep the count. As an `f32`, it loses resolution as turns accumulate (its
    /// rounding step is 1e-6 rad at one turn, 1e-3 rad after a thousand turns).
    pub fn angle(&self) -> Scalar {
        self.angle
    }
}

/// The angle `wrapped` (in `(−π, π]`) plus the whole turns that bring it nearest to
/// `reference`.
fn unwrap_near(reference: Scalar, wrapped: Scalar) -> Scalar {
    reference + wrap_angle(wrapped - reference)
}

impl RevoluteJoint {
    /// The hinge angle, counting turns, at the bodies' poses before this substep's XPBD sets:
    /// on the substep's first pass, the last known angle (`self.angle`) is carried over to
    /// those poses by the nearest whole turn; later passes take it from the cache. Followed in
    /// every substep, so the count is right while the hinge turns less than half a turn per
    /// substep.
    fn start_angle(
        &mut self,
        b1: &JointBody,
        b2: &JointBody,
        reference: Vector,
        cache: &mut JointCache,
    ) -> Scalar {
        if let Some(angle) = cache.start_angle {
            return angle;
        }
        let (q1, q2) = (b1.pre_xpbd_rotation(), b2.pre_xpbd_rotation());
        let wrapped = signed_angle(q1 * reference, q2 * reference, q1 * self.aligned_axis);
        self.angle = unwrap_near(self.angle, wrapped);
        cache.start_angle = Some(self.angle);
        self.angle
    }

    /// The hinge angle, counting turns, at the bodies' current poses in a pass (which turn it
    /// by far less than half a turn from `start`).
    fn angle_now(
        &self,
        b1: &JointBody,
        b2: &JointBody,
        reference: Vector,
        start: Scalar,
    ) -> Scalar {
        let wrapped = signed_angle(
            b1.rotation() * reference,
            b2.rotation() * reference,
            b1.rotation() * self.aligned_axis,
        );
        unwrap_near(start, wrapped)
    }

    /// One pass of the motor.
    fn drive(
        &mut self,
        solve: &mut JointSolve,
        (b1, b2): (&mut JointBody, &mut JointBody),
        reference: Vector,
        motor: JointMotor,
    ) {
        let dt = solve.h;
        let a1 = b1.rotation() * self.aligned_axis;
        let angle = signed_angle(b1.rotation() * reference, b2.rotation() * reference, a1);
        let (excess, compliance) = match motor.target {
            MotorTarget::Position { target, compliance } => {
                let error = wrap_angle(angle - target);
                let inverse_mass = b1.pivot_inverse_inertia(a1) + b2.pivot_inverse_inertia(a1);
                match motor.servo_speed(error, inverse_mass, dt) {
                    Some(speed) => (
                        self.speed_excess((b1, b2), reference, angle, speed, dt),
                        0.0,
                    ),
                    None => (error, compliance),
                }
            }
            MotorTarget::Velocity(speed) => (
                self.speed_excess((b1, b2), reference, angle, speed, dt),
                0.0,
            ),
        };
        let max = motor.max_force * dt * dt;
        solve.angle_clamped(
            b1,
            b2,
            -excess * a1,
            &mut self.motor_lagrange,
            compliance,
            max,
        );
    }

    /// How far the hinge has turned this substep past what `speed` asks for: the turn of the
    /// XPBD sets so far against the change of the relative angular velocity to `speed`.
    fn speed_excess(
        &self,
        (b1, b2): (&JointBody, &JointBody),
        reference: Vector,
        angle: Scalar,
        speed: Scalar,
        dt: Scalar,
    ) -> Scalar {
        let before = (
            b1.pre_xpbd_rotation() * reference,
            b2.pre_xpbd_rotation() * reference,
        );
        let angle_before = signed_angle(
            before.0,
            before.1,
            b1.pre_xpbd_rotation() * self.aligned_axis,
        );
        let a1 = b1.rotation() * self.aligned_axis;
        let speed_now = (b2.angular_velocity() - b1.angular_velocity()).dot(a1);
        wrap_angle(angle - angle_before) - (speed - speed_now) * dt
    }

    /// The spring and friction rows, about body 1's axis. The turn since the start of the
    /// substep that the spring damps and the friction takes back is what the XPBD sets turned
    /// since `start` plus what the position integration turned, the relative angular velocity
    /// times `h` (velocities change only after the XPBD sets).
    #[inline(never)]
    fn spring_and_friction(
        &mut self,
        solve: &mut JointSolve,
        (b1, b2): (&mut JointBody, &mut JointBody),
        reference: Vector,
        start: Scalar,
    ) {
        let h = solve.h;
        let turned = |joint: &Self, b1: &JointBody, b2: &JointBody| {
            let a1 = b1.rotation() * joint.aligned_axis;
            let angle = joint.angle_now(b1, b2, reference, start);
            let spin = (b2.angular_velocity() - b1.angular_velocity()).dot(a1);
            (a1, angle, angle - start + spin * h)
        };
        if let Some(spring) = self.spring {
            let (a1, angle, turned) = turned(self, b1, b2);
            solve.spring_row(
                (b1, b2),
                Row::Angular(a1),
                (angle - spring.rest, turned),
                &mut self.spring_lagrange,
                &spring,
            );
        }
        if let Some(torque) = self.friction {
            let (a1, _, turned) = turned(self, b1, b2);
            solve.friction_row(
                (b1, b2),
                Row::Angular(a1),
                turned,
                &mut self.friction_lagrange,
                torque,
            );
        }
    }
}

impl Validate for RevoluteJoint {
    fn validate(&mut self) -> Option<String> {
        join([
            self.base.validate(),
            check_axis(&mut self.aligned_axis, "aligned axis", Vector::Z),
            check_limits(&mut self.angle_limits, "angle limits"),
            check_motor(&mut self.motor),
            check_spring(&mut self.spring),
            check_friction(&mut self.friction),
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
        self.spring_lagrange = 0.0;
        self.friction_lagrange = 0.0;
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
        component.spring_lagrange = self.spring_lagrange;
        component.friction_lagrange = self.friction_lagrange;
    }

    fn list(joints: &mut XpbdJoints) -> &mut JointList<Self> {
        &mut joints.revolute
    }

    fn motor_load(&self) -> Option<(JointMotor, Scalar)> {
        Some((self.motor?, self.motor_lagrange))
    }

    fn read_out(&mut self, [q1, q2]: [Quaternion; 2]) {
        let reference = self.aligned_axis.any_orthonormal_vector();
        let wrapped = signed_angle(q1 * reference, q2 * reference, q1 * self.aligned_axis);
        self.angle = unwrap_near(self.angle, wrapped);
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
        let reference = self.aligned_axis.any_orthonormal_vector();
        // Only limits, springs and friction read the angle within a step; a plain hinge's is
        // followed once per step, in `read_out` (an `atan2` per substep saved on every elbow
        // and wheel).
        let tracks_angle =
            self.angle_limits.is_some() || self.spring.is_some() || self.friction.is_some();
        let start = if tracks_angle {
            self.start_angle(&b1, &b2, reference, cache)
        } else {
            self.angle
        };
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

        if let Some((min, max)) = self.angle_limits {
            let a1 = b1.rotation() * self.aligned_axis;
            let angle = self.angle_now(&b1, &b2, reference, start);
            let excess = angle - clamp_range(angle, min, max);
            if excess != 0.0 {
                // Body 2 is turned `excess` too far about `a1`: body 1 is turned `-excess`.
                solve.angle(
                    &mut b1,
                    &mut b2,
                    -excess * a1,
                    &mut self.limit_lagrange,
                    compliance,
                );
            }
        }
        solve.point(&mut b1, &mut b2, &mut self.position_lagrange, compliance);
        // With friction, the motor is solved both before and after it (sharing its multiplier),
        // so that even a single pass splits the load between them as the passes converge to.
        if let (Some(motor), Some(_)) = (self.motor, self.friction) {
            self.drive(&mut solve, (&mut b1, &mut b2), reference, motor);
        }
        if self.spring.is_some() || self.friction.is_some() {
            self.spring_and_friction(&mut solve, (&mut b1, &mut b2), reference, start);
        }
        // The motor goes last, so no other part of this pass turns the hinge after it.
        if let Some(motor) = self.motor {
            self.drive(&mut solve, (&mut b1, &mut b2), reference, motor);
        }
        solve.finish(&mut self.base, &mut b1, &mut b2);
    }
}
