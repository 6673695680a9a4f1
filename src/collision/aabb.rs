//! [`ColliderAabb`]: a collider's world-space bounding box, for the game to read.

use bevy::prelude::*;
use parry3d::bounding_volume::Aabb;
use parry3d::math::Pose;
use parry3d::shape::{Shape, TypedShape};

use super::collider::{ColliderPose, DisabledCollider};
use super::{Collider, ColliderOf};
use crate::body::{Position, Rotation};
use crate::math::{Scalar, Vector, pose};

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
        let world = shape_aabb(collider.shape().as_ref(), &(body_pose * local.pose()));
        aabb.set_if_neq(ColliderAabb {
            min: world.mins,
            max: world.maxs,
        });
    }
}

/// `shape`'s world-space AABB at `pose`. Cylinders and cones in closed form (a rim of radius
/// r about the unit axis a spans r·√(1 − a_i²) along world axis i); every other shape as
/// parry computes it. parry's own box for these two takes six support-point searches, and the
/// broad phase needs every moving collider's box each step.
pub(crate) fn shape_aabb(shape: &dyn Shape, pose: &Pose) -> Aabb {
    let rim = |axis: Vector, radius: Scalar| {
        radius * (Vector::ONE - axis * axis).max(Vector::ZERO).sqrt()
    };
    match shape.as_typed_shape() {
        TypedShape::Cylinder(cylinder) => {
            let axis = pose.rotation * Vector::Y;
            let half = (axis * cylinder.half_height).abs() + rim(axis, cylinder.radius);
            Aabb::new(pose.translation - half, pose.translation + half)
        }
        TypedShape::Cone(cone) => {
            let axis = pose.rotation * Vector::Y;
            let (apex, base) = (
                pose.translation + axis * cone.half_height,
                pose.translation - axis * cone.half_height,
            );
            let rim = rim(axis, cone.radius);
            Aabb::new(apex.min(base - rim), apex.max(base + rim))
        }
        _ => shape.compute_aabb(pose),
    }
}

#[cfg(test)]
// Tests build their scenes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use parry3d::bounding_volume::details::support_map_aabb;
    use parry3d::shape::{Cone, Cylinder};

    use super::*;
    use crate::collision::random_vectors;

    /// The closed forms give the box of the exact shape: the one parry finds from six support
    /// points, to rounding (both round a handful of products of coordinates up to about 11 m:
    /// f32 carries 6e-8 of that, the test allows 1e-5).
    #[test]
    fn cylinder_and_cone_boxes_match_their_support_points() {
        let mut random = random_vectors(7);
        for _ in 0..2_000 {
            let size = random(1.0).abs() + Vector::splat(0.05);
            let axis = random(1.0).normalize_or(Vector::X);
            let pose = crate::math::pose(random(10.0), Quat::from_scaled_axis(axis * 3.0));
            let cylinder = Cylinder::new(size.x, size.y);
            let cone = Cone::new(size.x, size.z);
            for (ours, exact) in [
                (
                    shape_aabb(&cylinder, &pose),
                    support_map_aabb(&pose, &cylinder),
                ),
                (shape_aabb(&cone, &pose), support_map_aabb(&pose, &cone)),
            ] {
                let tolerance = 1e-5 * (1.0 + pose.translation.abs().max_element());
                assert!(
                    (ours.mins - exact.mins).abs().max_element() < tolerance
                        && (ours.maxs - exact.maxs).abs().max_element() < tolerance,
                    "{ours:?} against {exact:?}"
                );
            }
        }
    }
}
