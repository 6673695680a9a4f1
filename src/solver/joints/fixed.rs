//! The fixed joint: no relative motion at all.

use bevy::ecs::reflect::ReflectMapEntities;
use bevy::prelude::*;

use super::contact_blocks::Held;
use super::prepared::{JointList, XpbdJoint, XpbdJoints, solve_alone};
use super::{JointBase, JointBody, JointCache, JointSolve, Substep, impl_joint};
use crate::math::{Quaternion, Scalar, Vector, rotation_vector};
use crate::solver::RigidBodyQueryItem;
use crate::solver::xpbd::XpbdConstraint;
use crate::validation::Validate;

/// Welds two bodies together: the anchors coincide and the relative rotation stays what it was
/// when the joint was first solved (or the one given by [`FixedJoint::with_relative_rotation`]).
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # let mut world = World::new();
/// # let (a, b) = (world.spawn_empty().id(), world.spawn_empty().id());
/// let weld = FixedJoint::new(a, b).with_local_anchor1(Vec3::X).with_local_anchor2(-Vec3::X);
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
pub struct FixedJoint {
    base: JointBase,
    /// Body 2's rotation relative to body 1 that the joint holds.
    relative_rotation: Option<Quaternion>,
    position_lagrange: Vector,
    angle_lagrange: Vector,
}

impl_joint!(FixedJoint);

impl FixedJoint {
    /// A fixed joint between `entity1` and `entity2`, anchored at both origins.
    pub fn new(entity1: Entity, entity2: Entity) -> Self {
        Self {
            base: JointBase::new(entity1, entity2),
            relative_rotation: None,
            position_lagrange: Vector::ZERO,
            angle_lagrange: Vector::ZERO,
        }
    }

    /// Holds body 2 at `rotation` relative to body 1 (`q₂ = q₁ · rotation`) instead of the
    /// relative rotation found on the first solve.
    pub fn with_relative_rotation(mut self, rotation: Quaternion) -> Self {
        self.relative_rotation = Some(rotation.normalize());
        self
    }
}

impl Validate for FixedJoint {
    fn validate(&mut self) -> Option<String> {
        self.base.validate()
    }
}

impl XpbdConstraint<2> for FixedJoint {
    fn entities(&self) -> [Entity; 2] {
        [self.base.entity1, self.base.entity2]
    }

    fn clear_lagrange_multipliers(&mut self) {
        self.base.begin_substep();
        self.position_lagrange = Vector::ZERO;
        self.angle_lagrange = Vector::ZERO;
    }

    fn solve(&mut self, bodies: [&mut RigidBodyQueryItem; 2], dt: Scalar) {
        solve_alone(self, bodies, dt);
    }
}

impl XpbdJoint for FixedJoint {
    fn held(&self, _: Quaternion) -> [Held; 2] {
        [Held::All, Held::All]
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
        let relative = self.relative_rotation.unwrap_or_default();
        let compliance = self.base.compliance;
        let error = rotation_vector((b1.rotation() * relative) * b2.rotation().inverse());
        solve.orientation(
            &mut b1,
            &mut b2,
            error,
            &mut self.angle_lagrange,
            compliance,
        );
        solve.point(&mut b1, &mut b2, &mut self.position_lagrange, compliance);
        solve.finish(&mut self.base, &mut b1, &mut b2);
    }

    fn store(&self, component: &mut Self) {
        component.base.store(&self.base);
        component.relative_rotation = component.relative_rotation.or(self.relative_rotation);
        component.position_lagrange = self.position_lagrange;
        component.angle_lagrange = self.angle_lagrange;
    }

    fn list(joints: &mut XpbdJoints) -> &mut JointList<Self> {
        &mut joints.fixed
    }
}
