//! [`ColliderAabb`]: a collider's world-space bounding box, for the game to read.

use bevy::prelude::*;

use super::collider::{ColliderPose, DisabledCollider};
use super::{Collider, ColliderOf};
use crate::body::{Position, Rotation};
use crate::math::{Vector, pose};

/// The collider's axis-aligned bounding box in world space, tight around the shape (not
/// enlarged by the broad phase's margins), as of the end of the last physics step.
///
/// Opt in by inserting it on a collider entity (`ColliderAabb::default()`); the engine fills
/// it at the end of each step, in [`PhysicsStepSet::Finalize`](crate::PhysicsStepSet). Only
/// colliders that have it pay for it. An invalid collider's box is left as it was.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// let mut app = impetus3d::headless_app(1.0 / 60.0);
/// let crate_box = app
///     .world_mut()
///     .spawn((Collider::cuboid(2.0, 1.0, 1.0), ColliderAabb::default(), Transform::from_xyz(0.0, 5.0, 0.0)))
///     .id();
/// app.update();
/// let aabb = app.world().get::<ColliderAabb>(crate_box).unwrap();
/// assert_eq!((aabb.min, aabb.max), (Vec3::new(-1.0, 4.5, -0.5), Vec3::new(1.0, 5.5, 0.5)));
/// ```
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
pub struct ColliderAabb {
    /// The corner with the smallest coordinates.
    pub min: Vector,
    /// The corner with the largest coordinates.
    pub max: Vector,
}

impl ColliderAabb {
    /// The box's centre.
    pub fn center(&self) -> Vector {
        0.5 * (self.min + self.max)
    }

    /// The box's size along each axis.
    pub fn size(&self) -> Vector {
        self.max - self.min
    }

    /// Whether this box and `other` overlap (touching counts).
    pub fn intersects(&self, other: &Self) -> bool {
        self.min.cmple(other.max).all() && other.min.cmple(self.max).all()
    }
}

/// Fills every [`ColliderAabb`] from its collider's pose at the end of the step.
pub(crate) fn update_collider_aabbs(
    mut colliders: Query<
        (
            &mut ColliderAabb,
            &Collider,
            &ColliderPose,
            Option<&ColliderOf>,
        ),
        Without<DisabledCollider>,
    >,
    bodies: Query<(&Position, &Rotation)>,
) {
    for (mut aabb, collider, local, collider_of) in &mut colliders {
        // A collider of no body keeps its world pose in `ColliderPose`.
        let body_pose = collider_of
            .and_then(|of| bodies.get(of.body).ok())
            .map_or(pose(Vector::ZERO, Default::default()), |(p, r)| {
                pose(p.0, r.0)
            });
        let world = collider.shape().compute_aabb(&(body_pose * local.pose()));
        aabb.set_if_neq(ColliderAabb {
            min: world.mins,
            max: world.maxs,
        });
    }
}
