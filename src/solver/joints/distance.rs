//! The distance joint: keeps two anchors at a distance, or within a range.

use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;

use super::prepared::{JointList, XpbdJoint, XpbdJoints, solve_alone};
use super::{
    Anchors, JointBase, JointBody, JointCache, JointSolve, Substep, check_limits, clamp_range,
    impl_joint,
};
use crate::math::{Scalar, Vector};
use crate::solver::RigidBodyQueryItem;
use crate::solver::xpbd::XpbdConstraint;
use crate::validation::{Validate, join};

/// Keeps the distance between two anchors at a rest length, or between limits. Rotation is
/// free. Without [`with_rest_length`](Self::with_rest_length) or
/// [`with_limits`](Self::with_limits), the rest length is the distance when the joint is first
/// solved.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # let mut world = World::new();
/// # let (a, b) = (world.spawn_empty().id(), world.spawn_empty().id());
/// let rope = DistanceJoint::new(a, b).with_limits(0.0, 2.0); // slack up to 2 m
/// let rod = DistanceJoint::new(a, b).with_rest_length(1.5).with_compliance(1e-4);
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
    lagrange: Scalar,
}

impl_joint!(DistanceJoint);

impl DistanceJoint {
    /// A distance joint between the origins of `entity1` and `entity2`.
    pub fn new(entity1: Entity, entity2: Entity) -> Self {
        Self {
            base: JointBase::new(entity1, entity2),
            limits: None,
            lagrange: 0.0,
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
        join([base, range, self.check_negative()])
    }
}

impl XpbdConstraint<2> for DistanceJoint {
    fn entities(&self) -> [Entity; 2] {
        [self.base.entity1, self.base.entity2]
    }

    fn clear_lagrange_multipliers(&mut self) {
        self.base.begin_substep();
        self.lagrange = 0.0;
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
    }

    fn list(joints: &mut XpbdJoints) -> &mut JointList<Self> {
        &mut joints.distance
    }

    fn prepare(&mut self, b1: &RigidBodyQueryItem, b2: &RigidBodyQueryItem) {
        if !self.base.is_broken() && self.limits.is_none() {
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
        // `prepare` gave the joint its limits.
        let (false, Some((min, max))) = (self.base.is_broken(), self.limits) else {
            return;
        };
        let mut solve = JointSolve::new(step, cache);
        let anchors = Anchors::new(&b1, &b2);
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
                &mut b1,
                &mut b2,
                (&anchors, excess),
                &mut self.lagrange,
                self.base.compliance,
            );
        }
        solve.finish(&mut self.base, &mut b1, &mut b2);
    }
}
