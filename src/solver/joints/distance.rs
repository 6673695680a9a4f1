//! The distance joint: keeps two anchors at a distance, or within a range, or pulls them
//! towards a distance with a spring.

use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;

use super::prepared::{JointList, XpbdJoint, XpbdJoints, solve_alone};
use super::spring::{Row, check_spring};
use super::{
    Anchors, JointBase, JointBody, JointCache, JointSolve, JointSpring, Substep, check_limits,
    clamp_range, impl_joint,
};
use crate::math::{Scalar, Vector};
use crate::solver::RigidBodyQueryItem;
use crate::solver::xpbd::XpbdConstraint;
use crate::validation::{Validate, join};

/// Keeps the distance between two anchors at a rest length, or between limits. Rotation is
/// free. Without [`with_rest_length`](Self::with_rest_length),
/// [`with_limits`](Self::with_limits) or [`with_spring`](Self::with_spring), the rest length
/// is the distance when the joint is first solved.
///
/// With a [spring](Self::with_spring), the distance is pulled towards the spring's rest
/// length from both sides, and the limits, if any, stay hard bounds.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # let mut world = World::new();
/// # let (a, b) = (world.spawn_empty().id(), world.spawn_empty().id());
/// let rope = DistanceJoint::new(a, b).with_limits(0.0, 2.0); // slack up to 2 m
/// let rod = DistanceJoint::new(a, b).with_rest_length(1.5).with_compliance(1e-4);
/// // A bungee: 2 Hz around 1 m, lightly damped, never longer than 1.6 m.
/// let bungee = DistanceJoint::new(a, b)
///     .with_spring(JointSpring::new(2.0, 0.05).with_rest(1.0))
///     .with_limits(0.0, 1.6);
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
pub struct DistanceJoint {
    base: JointBase,
    limits: Option<(Scalar, Scalar)>,
    spring: Option<JointSpring>,
    lagrange: Scalar,
    spring_lagrange: Scalar,
}

impl_joint!(DistanceJoint);

impl DistanceJoint {
    /// A distance joint between the origins of `entity1` and `entity2`.
    pub fn new(entity1: Entity, entity2: Entity) -> Self {
        Self {
            base: JointBase::new(entity1, entity2),
            limits: None,
            spring: None,
            lagrange: 0.0,
            spring_lagrange: 0.0,
        }
    }

    /// Holds the anchors exactly `length` apart.
    pub fn with_rest_length(self, length: Scalar) -> Self {
        self.with_limits(length, length)
    }

    /// Keeps the anchors between `min` and `max` apart. The two are swapped if given in the
    /// wrong order. When the joint enters the world, a negative end is replaced by 0 and a
    /// NaN end removes the limits (the joint then keeps its starting distance), each with a
    /// warning.
    pub fn with_limits(mut self, min: Scalar, max: Scalar) -> Self {
        self.limits = Some((min, max));
        self
    }

    /// Adds a spring pulling the distance towards `spring.rest` (m). Its stiffness is in N/m,
    /// or relative to the bodies' effective mass along the line between the anchors (see
    /// [`JointSpring`]). The joint then has no limits but those given with
    /// [`with_limits`](Self::with_limits) (it does not hold its starting distance). A negative
    /// rest length is replaced by 0 with a warning when the joint enters the world.
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

    /// Checks the spring, and replaces a negative rest length by 0.
    fn check_spring(&mut self) -> Option<String> {
        let problem = check_spring(&mut self.spring);
        let spring = self.spring.as_mut()?;
        let negative = (spring.rest < 0.0).then(|| {
            let message = format!("spring rest length {} is negative; using 0", spring.rest);
            spring.rest = 0.0;
            message
        });
        join([problem, negative])
    }

    /// Replaces negative ends by 0.
    fn check_negative(&mut self) -> Option<String> {
        let (min, max) = self.limits?;
        if min >= 0.0 && max >= 0.0 {
            return None;
        }
        self.limits = Some((min.max(0.0), max.max(0.0)));
        Some(format!(
            "limits ({min}, {max}) are negative; using 0 for a negative end"
        ))
    }

    /// The allowed range of distances, once known.
    pub fn limits(&self) -> Option<(Scalar, Scalar)> {
        self.limits
    }
}

impl Validate for DistanceJoint {
    fn validate(&mut self) -> Option<String> {
        let base = self.base.validate();
        // NaN first: a NaN end removes the limits, so it is not also called negative.
        let range = check_limits(&mut self.limits, "limits");
        join([base, range, self.check_negative(), self.check_spring()])
    }
}

impl DistanceJoint {
    /// Keeps the distance within `[min, max]`.
    fn solve_limits(
        &mut self,
        solve: &mut JointSolve,
        (b1, b2): (&mut JointBody, &mut JointBody),
        (min, max): (Scalar, Scalar),
    ) {
        let anchors = Anchors::new(b1, b2);
        let offset = anchors.p1 - anchors.p2;
        let length = offset.length();
        let target = clamp_range(length, min, max);
        if length != target {
            // Anchors on top of each other have no direction: push apart along world Y.
            let direction = if length > Scalar::EPSILON {
                offset / length
            } else {
                Vector::Y
            };
            let excess = (length - target) * direction;
            solve.position(
                b1,
                b2,
                (&anchors, excess),
                &mut self.lagrange,
                self.base.compliance,
            );
        }
    }

    /// The spring row along the line from anchor 1 to anchor 2. The change of length since the
    /// start of the substep, which the spring damps, is what the XPBD sets changed since the
    /// poses before them plus what the position integration changed, the anchors' relative
    /// velocity along the line times `h` (velocities change only after the XPBD sets).
    #[inline(never)]
    fn solve_spring(
        &mut self,
        solve: &mut JointSolve,
        (b1, b2): (&mut JointBody, &mut JointBody),
        spring: &JointSpring,
    ) {
        let anchors = Anchors::new(b1, b2);
        let offset = anchors.p2 - anchors.p1;
        let length = offset.length();
        // Anchors on top of each other have no direction: body 2 is pushed along world Y.
        let n = if length > Scalar::EPSILON {
            offset / length
        } else {
            Vector::Y
        };
        let anchor = |b: &JointBody| b.pre_xpbd_center() + b.pre_xpbd_rotation() * b.arm();
        let before = (anchor(b2) - anchor(b1)).length();
        let speed = (b2.velocity_at(anchors.r2) - b1.velocity_at(anchors.r1)).dot(n);
        let moved = length - before + speed * solve.h;
        solve.spring_row(
            (b1, b2),
            Row::Linear(&anchors, n),
            (length - spring.rest, moved),
            &mut self.spring_lagrange,
            spring,
        );
    }
}

impl XpbdConstraint<2> for DistanceJoint {
    fn entities(&self) -> [Entity; 2] {
        [self.base.entity1, self.base.entity2]
    }

    fn clear_lagrange_multipliers(&mut self) {
        self.base.begin_substep();
        self.lagrange = 0.0;
        self.spring_lagrange = 0.0;
    }

    fn solve(&mut self, bodies: [&mut RigidBodyQueryItem; 2], dt: Scalar) {
        solve_alone(self, bodies, dt);
    }
}

impl XpbdJoint for DistanceJoint {
    fn store(&self, component: &mut Self) {
        component.base.store(&self.base);
        component.limits = component.limits.or(self.limits);
        component.lagrange = self.lagrange;
        component.spring_lagrange = self.spring_lagrange;
    }

    fn list(joints: &mut XpbdJoints) -> &mut JointList<Self> {
        &mut joints.distance
    }

    fn prepare(&mut self, b1: &RigidBodyQueryItem, b2: &RigidBodyQueryItem) {
        if !self.base.is_broken() && self.limits.is_none() && self.spring.is_none() {
            let length = Anchors::distance_at_step_start(&self.base, b1, b2);
            self.limits = Some((length, length));
        }
    }

    fn solve_pass(
        &mut self,
        [mut b1, mut b2]: [JointBody; 2],
        step: Substep,
        cache: &mut JointCache,
    ) {
        // `prepare` gave the joint limits unless it has a spring.
        if self.base.is_broken() || (self.limits.is_none() && self.spring.is_none()) {
            return;
        }
        let mut solve = JointSolve::new(step, cache);
        if let Some(spring) = self.spring {
            self.solve_spring(&mut solve, (&mut b1, &mut b2), &spring);
        }
        if let Some((min, max)) = self.limits {
            self.solve_limits(&mut solve, (&mut b1, &mut b2), (min, max));
        }
        solve.finish(&mut self.base, &mut b1, &mut b2);
    }
}
