//! The narrow phase's query dispatcher: parry's routing of shape pairs, with impetus3d's own
//! manifolds where they are cheaper for the same points: box pairs
//! ([`box_box`](super::box_box)), and a box and a triangle or two shapes of flat faces and
//! straight edges (hulls, cylinders, cones, capsules against those, triangles:
//! [`polygonal`](super::polygonal)), whose faces are clipped by [`clip`](super::clip); against
//! a triangle, a capsule's core takes its closest points from
//! [`segment_triangle`](super::segment_triangle) and another shape resting over the face from
//! [`over_face`](super::over_face), instead of GJK and EPA. Balls, capsule pairs and
//! half-spaces keep parry's closed forms.
//!
//! A convex shape against a mesh or a heightfield gets one manifold per touching triangle from
//! [`terrain`](super::terrain). parry's dispatcher hands the parts of a compound to itself, so
//! the routing of compound pairs is repeated here with this dispatcher handed down instead:
//! the parts of tables and chairs and a drum's walls reach the manifolds above. Voxels go to
//! parry's own voxel code.

use parry3d::math::{Pose, Real, Vector};
use parry3d::query::details::{
    NormalConstraints, contact_manifolds_composite_shape_composite_shape,
    contact_manifolds_composite_shape_shape, contact_manifolds_heightfield_composite_shape,
};
use parry3d::query::{
    ClosestPoints, Contact, ContactManifoldsWorkspace, DefaultQueryDispatcher,
    NonlinearRigidMotion, PersistentQueryDispatcher, QueryDispatcher, ShapeCastHit,
    ShapeCastOptions, Unsupported,
};
use parry3d::shape::{PolygonalFeatureMap, Shape, ShapeType, Triangle, TypedShape};

use super::box_box::box_box_manifold;
use super::contacts::{FrictionImpulse, Manifold};
use super::over_face::OverFace;
use super::polygonal::{Shortcut, box_triangle_manifold, polygonal_manifold};
use super::segment_triangle::SegmentTriangle;
use super::terrain::{Terrain, terrain_manifolds};
use crate::math::Scalar;

/// parry's routing, with impetus3d's manifolds for box pairs ([`box_box_manifold`]), a box
/// and a triangle ([`box_triangle_manifold`]) and other flat-faced pairs
/// ([`polygonal_manifold`]).
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
        let (t1, t2) = (g1.shape_type(), g2.shape_type());
        let (mesh, heightfield) = (ShapeType::TriMesh, ShapeType::HeightField);
        match (g1.as_composite_shape(), g2.as_composite_shape()) {
            _ if t1 == ShapeType::Voxels || t2 == ShapeType::Voxels => DefaultQueryDispatcher
                .contact_manifolds(pos12, g1, g2, prediction, manifolds, workspace),
            (Some(c1), Some(c2)) => {
                contact_manifolds_composite_shape_composite_shape(
                    self, pos12, c1, c2, prediction, manifolds, workspace,
                );
                Ok(())
            }
            (None, Some(c2)) if t1 == heightfield => {
                let field = g1.as_heightfield().ok_or(Unsupported)?;
                let pos21 = pos12.inverse();
                contact_manifolds_heightfield_composite_shape(
                    self, pos12, &pos21, field, c2, prediction, manifolds, workspace, false,
                );
                Ok(())
            }
            (Some(c1), None) if t2 == heightfield => {
                let field = g2.as_heightfield().ok_or(Unsupported)?;
                let pos21 = pos12.inverse();
                contact_manifolds_heightfield_composite_shape(
                    self, &pos21, pos12, field, c1, prediction, manifolds, workspace, true,
                );
                Ok(())
            }
            _ if t1 == mesh || t1 == heightfield => {
                let terrain = Terrain::of(g1).ok_or(Unsupported)?;
                terrain_manifolds(self, pos12, (terrain, g2), true, prediction, manifolds)
            }
            _ if t2 == mesh || t2 == heightfield => {
                let terrain = Terrain::of(g2).ok_or(Unsupported)?;
                terrain_manifolds(self, pos12, (terrain, g1), false, prediction, manifolds)
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
        use ShapeType::{Ball, Capsule, Cuboid, HalfSpace, Triangle};
        match (g1.shape_type(), g2.shape_type()) {
            (Cuboid, Cuboid) => {
                let (Some(cuboid1), Some(cuboid2)) = (g1.as_cuboid(), g2.as_cuboid()) else {
                    return Err(Unsupported);
                };
                box_box_manifold(pos12, cuboid1, cuboid2, prediction, self.box_bias, manifold);
            }
            (Cuboid, Triangle) => {
                let (Some(cuboid1), Some(triangle2)) = (g1.as_cuboid(), g2.as_triangle()) else {
                    return Err(Unsupported);
                };
                let poses = (pos12, &pos12.inverse());
                let (box1, triangle2) = ((cuboid1, normals1), (triangle2, normals2));
                box_triangle_manifold(poses, box1, triangle2, prediction, manifold, false);
            }
            (Triangle, Cuboid) => {
                let (Some(triangle1), Some(cuboid2)) = (g1.as_triangle(), g2.as_cuboid()) else {
                    return Err(Unsupported);
                };
                let poses = (&pos12.inverse(), pos12);
                let (box2, triangle1) = ((cuboid2, normals2), (triangle1, normals1));
                box_triangle_manifold(poses, box2, triangle1, prediction, manifold, true);
            }
            // parry's own pairs: closed forms for balls and capsule pairs, half-spaces.
            (Ball | HalfSpace, _) | (_, Ball | HalfSpace) | (Capsule, Capsule) => {
                return DefaultQueryDispatcher.contact_manifold_convex_convex(
                    pos12, g1, g2, normals1, normals2, prediction, manifold,
                );
            }
            _ => {
                let (Some((pfm1, radius1)), Some((pfm2, radius2))) =
                    (g1.as_polygonal_feature_map(), g2.as_polygonal_feature_map())
                else {
                    return Err(Unsupported);
                };
                let shortcut = triangle_shortcut(pos12, (g1, pfm1), (g2, pfm2));
                let (shape1, shape2) = ((pfm1, radius1, normals1), (pfm2, radius2, normals2));
                polygonal_manifold(pos12, shape1, shape2, shortcut, prediction, manifold);
            }
        }
        Ok(())
    }
}

/// How [`polygonal_manifold`] may find the closest points of a shape and a triangle without
/// GJK: a capsule's core in closed form, another shape's core (`pfm1` or `pfm2`) where it rests
/// over the face.
fn triangle_shortcut<'a>(
    pos12: &'a Pose,
    (g1, pfm1): (&dyn Shape, &'a dyn PolygonalFeatureMap),
    (g2, pfm2): (&dyn Shape, &'a dyn PolygonalFeatureMap),
) -> Shortcut<'a> {
    let corners = |t: &Triangle| [t.a, t.b, t.c];
    match (g1.as_typed_shape(), g2.as_typed_shape()) {
        (TypedShape::Triangle(_), TypedShape::Triangle(_)) => Shortcut::Gjk,
        (TypedShape::Capsule(capsule), TypedShape::Triangle(triangle)) => {
            Shortcut::SegmentTriangle(SegmentTriangle {
                segment: [capsule.segment.a, capsule.segment.b],
                triangle: corners(triangle).map(|v| pos12 * v),
                segment_first: true,
            })
        }
        (TypedShape::Triangle(triangle), TypedShape::Capsule(capsule)) => {
            Shortcut::SegmentTriangle(SegmentTriangle {
                segment: [capsule.segment.a, capsule.segment.b].map(|v| pos12 * v),
                triangle: corners(triangle),
                segment_first: false,
            })
        }
        (_, TypedShape::Triangle(triangle)) => Shortcut::OverFace(OverFace {
            core: pfm1,
            core_pose: None,
            triangle: corners(triangle).map(|v| pos12 * v),
        }),
        (TypedShape::Triangle(triangle), _) => Shortcut::OverFace(OverFace {
            core: pfm2,
            core_pose: Some(pos12),
            triangle: corners(triangle),
        }),
        _ => Shortcut::Gjk,
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
