//! The narrow phase's query dispatcher: parry's, with impetus3d's box–box manifolds
//! ([`box_box`](super::box_box)) for every pair of boxes, whether colliders of their own or
//! parts of compound colliders (the tables and chairs of a game, a rotating drum's walls).
//!
//! parry's dispatcher hands the parts of a compound to itself, so the routing of compound pairs
//! is repeated here with this dispatcher handed down instead. Pairs with a mesh or a
//! heightfield (triangles, never two boxes) or voxels (parry's own voxel code) go to parry's
//! functions as they are.

use parry3d::math::{Pose, Real, Vector};
use parry3d::query::details::{
    NormalConstraints, contact_manifolds_composite_shape_composite_shape,
    contact_manifolds_composite_shape_shape,
};
use parry3d::query::{
    ClosestPoints, Contact, ContactManifoldsWorkspace, DefaultQueryDispatcher,
    NonlinearRigidMotion, PersistentQueryDispatcher, QueryDispatcher, ShapeCastHit,
    ShapeCastOptions, Unsupported,
};
use parry3d::shape::{Shape, ShapeType};

use super::box_box::box_box_manifold;
use super::contacts::{FrictionImpulse, Manifold};
use crate::math::Scalar;

/// parry's dispatcher with box pairs built by [`box_box_manifold`].
pub(crate) struct Dispatcher {
    /// How much more another axis must separate two boxes to replace the preferred one (m).
    pub(crate) box_bias: f32,
}

impl PersistentQueryDispatcher<FrictionImpulse, Scalar> for Dispatcher {
    fn contact_manifolds(
        &self,
        pos12: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
        prediction: Real,
        manifolds: &mut Vec<Manifold>,
        workspace: &mut Option<ContactManifoldsWorkspace>,
    ) -> Result<(), Unsupported> {
        let parrys = |shape: &dyn Shape| {
            matches!(
                shape.shape_type(),
                ShapeType::TriMesh | ShapeType::HeightField | ShapeType::Voxels
            )
        };
        match (g1.as_composite_shape(), g2.as_composite_shape()) {
            _ if parrys(g1) || parrys(g2) => DefaultQueryDispatcher
                .contact_manifolds(pos12, g1, g2, prediction, manifolds, workspace),
            (Some(c1), Some(c2)) => {
                contact_manifolds_composite_shape_composite_shape(
                    self, pos12, c1, c2, prediction, manifolds, workspace,
                );
                Ok(())
            }
            (Some(c1), None) => {
                contact_manifolds_composite_shape_shape(
                    self, pos12, c1, g2, prediction, manifolds, workspace, false,
                );
                Ok(())
            }
            (None, Some(c2)) => {
                let pos21 = pos12.inverse();
                contact_manifolds_composite_shape_shape(
                    self, &pos21, c2, g1, prediction, manifolds, workspace, true,
                );
                Ok(())
            }
            (None, None) => {
                manifolds.truncate(1);
                if manifolds.is_empty() {
                    manifolds.push(Manifold::with_data(0, 0, Default::default()));
                }
                self.contact_manifold_convex_convex(
                    pos12,
                    g1,
                    g2,
                    None,
                    None,
                    prediction,
                    &mut manifolds[0],
                )
            }
        }
    }

    fn contact_manifold_convex_convex(
        &self,
        pos12: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
        normals1: Option<&dyn NormalConstraints>,
        normals2: Option<&dyn NormalConstraints>,
        prediction: Real,
        manifold: &mut Manifold,
    ) -> Result<(), Unsupported> {
        if let (Some(cuboid1), Some(cuboid2)) = (g1.as_cuboid(), g2.as_cuboid()) {
            box_box_manifold(pos12, cuboid1, cuboid2, prediction, self.box_bias, manifold);
            return Ok(());
        }
        DefaultQueryDispatcher
            .contact_manifold_convex_convex(pos12, g1, g2, normals1, normals2, prediction, manifold)
    }
}

/// The other queries are parry's.
impl QueryDispatcher for Dispatcher {
    fn intersection_test(
        &self,
        pos12: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
    ) -> Result<bool, Unsupported> {
        DefaultQueryDispatcher.intersection_test(pos12, g1, g2)
    }

    fn distance(&self, pos12: &Pose, g1: &dyn Shape, g2: &dyn Shape) -> Result<Real, Unsupported> {
        DefaultQueryDispatcher.distance(pos12, g1, g2)
    }

    fn contact(
        &self,
        pos12: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
        prediction: Real,
    ) -> Result<Option<Contact>, Unsupported> {
        DefaultQueryDispatcher.contact(pos12, g1, g2, prediction)
    }

    fn closest_points(
        &self,
        pos12: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
        max_dist: Real,
    ) -> Result<ClosestPoints, Unsupported> {
        DefaultQueryDispatcher.closest_points(pos12, g1, g2, max_dist)
    }

    fn cast_shapes(
        &self,
        pos12: &Pose,
        local_vel12: Vector,
        g1: &dyn Shape,
        g2: &dyn Shape,
        options: ShapeCastOptions,
    ) -> Result<Option<ShapeCastHit>, Unsupported> {
        DefaultQueryDispatcher.cast_shapes(pos12, local_vel12, g1, g2, options)
    }

    fn cast_shapes_nonlinear(
        &self,
        motion1: &NonlinearRigidMotion,
        g1: &dyn Shape,
        motion2: &NonlinearRigidMotion,
        g2: &dyn Shape,
        start_time: Real,
        end_time: Real,
        stop_at_penetration: bool,
    ) -> Result<Option<ShapeCastHit>, Unsupported> {
        DefaultQueryDispatcher.cast_shapes_nonlinear(
            motion1,
            g1,
            motion2,
            g2,
            start_time,
            end_time,
            stop_at_penetration,
        )
    }
}
