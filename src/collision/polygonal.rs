//! Manifolds of convex shapes with flat faces or straight edges (hulls, cylinders, cones,
//! capsules, triangles, boxes against triangles), built as parry builds them but clipping
//! faces with [`clip`](super::clip), and keeping the warm-start impulses without a copy of
//! the old points.
//!
//! The normal comes from GJK (against a triangle, from the closest points of a capsule's core
//! in closed form, or from the face for a shape resting over it where that is proven; for a
//! box and a triangle, from the separating-axis test over the box's faces, the triangle's
//! face and their edge pairs); the features of both
//! shapes farthest along it are clipped against each other (Catto, "Contact Manifolds",
//! GDC 2007). Pairs of a mesh's triangles may have their normal bent by the mesh's
//! pseudo-normals (parry's `NormalConstraints`), which keeps bodies from catching on the
//! edges between triangles.

use bevy::math::Vec3;
use parry3d::math::Pose;
use parry3d::query::details::{NormalConstraints, NormalConstraintsPair};
use parry3d::query::gjk::GJKResult;
use parry3d::query::{TrackedContact, sat};
use parry3d::shape::{Cuboid, PackedFeatureId, PolygonalFeature, PolygonalFeatureMap, Triangle};

use super::clip::face_face_contacts;
use super::contacts::Manifold;
use super::gjk::contact_points;
use super::over_face::OverFace;
use super::segment_triangle::SegmentTriangle;

/// A shape's polygonal features, its rounding radius and its normal constraints.
pub(crate) type Rounded<'a> = (
    &'a dyn PolygonalFeatureMap,
    f32,
    Option<&'a dyn NormalConstraints>,
);

/// Replaces `manifold`'s points with the ones `build` appends, each keeping the impulse of
/// the old point of the same features. `build` finds the old points still in the list, before
/// the ones it appends: it may only append.
pub(crate) fn rebuild_points(manifold: &mut Manifold, build: impl FnOnce(&mut Manifold)) {
    let old = manifold.points.len();
    build(manifold);
    debug_assert!(manifold.points.len() >= old, "`build` removed old points");
    let old = old.min(manifold.points.len());
    let (before, after) = manifold.points.split_at_mut(old);
    for point in after {
        let same = |o: &&TrackedContact<f32>| o.fid1 == point.fid1 && o.fid2 == point.fid2;
        if let Some(kept) = before.iter().rev().find(same) {
            point.data = kept.data;
        }
    }
    manifold.points.drain(..old);
}

/// Appends the contact points of `feature1` and `feature2` touching along `axis1` (in
/// feature 1's frame; `pos12` is feature 2's frame in it); two faces' points farther apart
/// than `max_dist` are left out. With `flipped`, the points are stored as seen from feature 2:
/// its witness and feature first.
pub(crate) fn feature_contacts(
    pos12: &Pose,
    axis1: Vec3,
    (feature1, feature2): (&PolygonalFeature, &PolygonalFeature),
    max_dist: f32,
    manifold: &mut Manifold,
    flipped: bool,
) {
    let first = manifold.points.len();
    if feature1.num_vertices >= 3 && feature2.num_vertices >= 3 {
        face_face_contacts(pos12, axis1, feature1, feature2, max_dist, manifold);
    } else {
        // An edge against a face or an edge: parry's clipping (the edge–face case through
        // `clip` left piles of cylinders more restless: compare/results/mixed-pile-settling.md).
        let pos21 = pos12.inverse();
        let axis2 = pos21.rotation * -axis1;
        PolygonalFeature::contacts(
            pos12, &pos21, axis1, axis2, feature1, feature2, manifold, false,
        );
    }
    if flipped {
        for c in &mut manifold.points[first..] {
            *c = TrackedContact::flipped(c.local_p1, c.local_p2, c.fid1, c.fid2, c.dist, true);
        }
    }
}

/// How the closest points of two shapes' cores are found where GJK need not search: closed
/// forms for a shape and a triangle.
pub(crate) enum Shortcut<'a> {
    /// None: GJK.
    Gjk,
    /// A capsule's core and a triangle ([`SegmentTriangle`]).
    SegmentTriangle(SegmentTriangle),
    /// Another convex core over a triangle's face ([`OverFace`]).
    OverFace(OverFace<'a>),
}

impl Shortcut<'_> {
    /// GJK's answer for the cores, if this shortcut finds it.
    fn closest(&self, max_dist: f32) -> Option<GJKResult> {
        match self {
            Shortcut::Gjk => None,
            Shortcut::SegmentTriangle(cores) => cores.closest(max_dist),
            Shortcut::OverFace(cores) => cores.closest(max_dist),
        }
    }

    /// Where GJK should start for a pair without a normal from last step, if this shortcut
    /// knows a better direction than the one between the shapes' origins.
    fn start(&self) -> Option<Vec3> {
        match self {
            Shortcut::OverFace(cores) => cores.start(),
            _ => None,
        }
    }
}

/// Rebuilds the manifold of two convex shapes given by their polygonal features: GJK finds
/// the normal (starting from the manifold's last one, or for a new pair from what `shortcut`
/// suggests), and the features along it are clipped. GJK's closest points are added as one
/// more point, so a pair always has one even where clipping finds none. Against a triangle,
/// `shortcut` finds the closest points instead where it can: in closed form for a capsule's
/// core, and from two support points for a shape resting over the face.
pub(crate) fn polygonal_manifold(
    pos12: &Pose,
    (shape1, radius1, normals1): Rounded,
    (shape2, radius2, normals2): Rounded,
    shortcut: Shortcut,
    prediction: f32,
    manifold: &mut Manifold,
) {
    let reach = prediction + radius1 + radius2;
    let found = shortcut.closest(reach).unwrap_or_else(|| {
        let start = (manifold.local_n1.try_normalize())
            .or_else(|| shortcut.start())
            .or_else(|| pos12.translation.try_normalize())
            .unwrap_or(Vec3::X);
        contact_points(pos12, shape1, shape2, reach, start)
    });
    let GJKResult::ClosestPoints(p1, p2, dir) = found else {
        manifold.clear();
        // Apart: the direction that showed it seeds the next search. Otherwise none.
        manifold.local_n1 = match found {
            GJKResult::NoIntersection(dir) => dir,
            _ => Vec3::ZERO,
        };
        return;
    };
    let depth = (p2 - p1).dot(dir);
    let (mut n1, mut n2) = (dir, pos12.rotation.inverse() * -dir);
    if !(normals1, normals2).project_local_normals(pos12, &mut n1, &mut n2) {
        // The mesh's pseudo-normals rule this contact out.
        manifold.clear();
        return;
    }
    rebuild_points(manifold, |manifold| {
        let (mut feature1, mut feature2) = Default::default();
        shape1.local_support_feature(n1, &mut feature1);
        shape2.local_support_feature(n2, &mut feature2);
        feature_contacts(pos12, n1, (&feature1, &feature2), reach, manifold, false);
        if n1 == dir {
            let unknown = PackedFeatureId::UNKNOWN;
            let p2 = pos12.inverse_transform_point(p2);
            manifold
                .points
                .push(TrackedContact::new(p1, p2, unknown, unknown, depth));
        }
    });
    // Only the new points are left now.
    if normals1.is_some() || normals2.is_some() {
        drop_far_from_bent_normal(manifold, depth);
    }
    for c in &mut manifold.points {
        c.local_p1 += n1 * radius1;
        c.local_p2 += n2 * radius2;
        c.dist -= radius1 + radius2;
    }
    manifold.local_n1 = n1;
    manifold.local_n2 = n2;
}

/// Drops points far deeper than the unbent normal's depth `depth`: a normal bent by a
/// mesh's pseudo-normals can measure a depth across the whole other shape (parry's rule:
/// more than five times as deep, while both are penetrating).
fn drop_far_from_bent_normal(manifold: &mut Manifold, depth: f32) {
    (manifold.points).retain(|c| depth >= 0.0 || c.dist >= 0.0 || c.dist >= depth * 5.0);
}

/// Rebuilds the manifold of box `cuboid1` and triangle `triangle2` (`pos12` and `pos21`
/// their relative poses), with the separating-axis test over the box's faces, the
/// triangle's face and their edge pairs; the deepest axis wins (parry's rule: a tie keeps
/// the box's face). The normal constraints are the box's and the triangle's; with `flipped`
/// the points are stored as seen from the triangle.
pub(crate) fn box_triangle_manifold(
    (pos12, pos21): (&Pose, &Pose),
    (cuboid1, normals1): (&Cuboid, Option<&dyn NormalConstraints>),
    (triangle2, normals2): (&Triangle, Option<&dyn NormalConstraints>),
    prediction: f32,
    manifold: &mut Manifold,
    flipped: bool,
) {
    let apart = |manifold: &mut Manifold, (gap, _): (f32, Vec3)| {
        let apart = gap > prediction;
        if apart {
            manifold.clear();
        }
        apart
    };
    let face1 =
        sat::cuboid_support_map_find_local_separating_normal_oneway(cuboid1, triangle2, pos12);
    if apart(manifold, face1) {
        return;
    }
    let face2 = sat::triangle_cuboid_find_local_separating_normal_oneway(triangle2, cuboid1, pos21);
    if apart(manifold, face2) {
        return;
    }
    let edges = sat::cuboid_triangle_find_local_separating_edge_twoway(cuboid1, triangle2, pos12);
    if apart(manifold, edges) {
        return;
    }
    let (depth, mut n1) = if face2.0 > face1.0 && face2.0 > edges.0 {
        (face2.0, pos12.rotation * -face2.1)
    } else if edges.0 > face1.0 {
        edges
    } else {
        face1
    };
    let mut n2 = pos21.rotation * -n1;
    if !(normals1, normals2).project_local_normals(pos12, &mut n1, &mut n2) {
        manifold.clear();
        return;
    }
    rebuild_points(manifold, |manifold| {
        let feature1 = cuboid1.support_face(n1);
        let feature2 = PolygonalFeature::from(*triangle2);
        feature_contacts(
            pos12,
            n1,
            (&feature1, &feature2),
            prediction,
            manifold,
            flipped,
        );
    });
    if normals1.is_some() || normals2.is_some() {
        drop_far_from_bent_normal(manifold, depth);
    }
    (manifold.local_n1, manifold.local_n2) = if flipped { (n2, n1) } else { (n1, n2) };
}

#[cfg(test)]
// Tests build their scenes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use crate::collision::dispatcher::Dispatcher;
    use crate::collision::random_vectors;
    use bevy::math::Quat;
    use parry3d::query::{DefaultQueryDispatcher, PersistentQueryDispatcher};
    use parry3d::shape::{
        Ball, Capsule, ConvexPolyhedron, Cylinder, HeightField, Shape, TriMesh, TriMeshFlags,
    };

    /// One shape of each kind the narrow phase routes differently, of random sizes: a box, a
    /// cylinder, a hull, a capsule, a triangle, a ball, a bumpy 2 × 2-cell mesh with its
    /// internal edges fixed (pseudo-normals), and a bumpy heightfield.
    fn shapes(vector: &mut impl FnMut(f32) -> Vec3) -> Vec<Box<dyn Shape>> {
        let size = |v: Vec3| v.abs() + 0.1;
        let corners: Vec<Vec3> = (0..12).map(|_| vector(0.6)).collect();
        let grid: Vec<Vec3> = (0..9)
            .map(|i| Vec3::new((i % 3) as f32 - 1.0, vector(0.2).y, (i / 3) as f32 - 1.0))
            .collect();
        let cells = [
            [0, 3, 1],
            [1, 3, 4],
            [1, 4, 2],
            [2, 4, 5],
            [3, 6, 4],
            [4, 6, 7],
        ];
        let cells = [cells.as_slice(), &[[4, 7, 5], [5, 7, 8]]].concat();
        let mesh = TriMesh::with_flags(grid, cells, TriMeshFlags::FIX_INTERNAL_EDGES).unwrap();
        let heights = parry3d::utils::Array2::new(3, 3, (0..9).map(|_| vector(0.2).y).collect());
        let hull = ConvexPolyhedron::from_convex_hull(&corners).unwrap();
        vec![
            Box::new(Cuboid::new(size(vector(0.5)))),
            Box::new(Cylinder::new(size(vector(0.5)).x, size(vector(0.5)).y)),
            Box::new(hull),
            Box::new(Capsule::new_y(size(vector(0.5)).x, 0.2)),
            Box::new(Triangle::new(vector(1.0), vector(1.0), vector(1.0))),
            Box::new(Ball::new(0.3)),
            Box::new(mesh),
            Box::new(HeightField::new(heights, Vec3::new(2.0, 1.0, 2.0))),
        ]
    }

    #[test]
    fn pairs_get_the_manifolds_parry_gives() {
        // Every ordered pair of the shapes above, placed within reach and turned at random,
        // except box pairs (`box_box` has its own rule) and pairs of two meshes or
        // heightfields: the same manifolds as parry's dispatcher (without the points beyond the
        // prediction distance, which the narrow phase drops), with the same normals and
        // the same points from the same features within 0.1 mm. Rounding alone may differ
        // where it decides whether a point is there at all (a crossing at the very end of an
        // edge, next to the corner's own point) and where parry's crossing of nearly parallel
        // edges is off (its error grows as the inverse square of the angle's sine; the
        // clipping's own tests compare both with exact arithmetic): at most 1 pair in 1,000.
        // A capsule, cylinder, cone or hull against triangles is left out too: the closest
        // points come in closed form or from the face here where they can (`segment_triangle`
        // and `over_face` test them against exact references), where GJK stops within a
        // relative 1.1e-3 of the distance and so tilts the normal by up to √(2.2e-3) rad.
        let mut vector = random_vectors(0x27d4_eb2f);
        let dispatcher = Dispatcher { box_bias: 0.0 };
        let (mut pairs, mut differing, mut points, mut rebuilt_apart) = (0, 0, 0, 0);
        for _ in 0..1_500 {
            let all = shapes(&mut vector);
            for (g1, g2) in all.iter().flat_map(|a| all.iter().map(move |b| (a, b))) {
                let terrain = |g: &dyn Shape| {
                    g.as_composite_shape().is_some() || g.as_heightfield().is_some()
                };
                let boxes = g1.as_cuboid().is_some() && g2.as_cuboid().is_some();
                let triangles = |g: &dyn Shape| terrain(g) || g.as_triangle().is_some();
                let shortcut = |g: &dyn Shape| {
                    !triangles(g) && g.as_ball().is_none() && g.as_cuboid().is_none()
                };
                let over_triangles =
                    (shortcut(&**g1) && triangles(&**g2)) || (triangles(&**g1) && shortcut(&**g2));
                if boxes || over_triangles || (terrain(&**g1) && terrain(&**g2)) {
                    continue;
                }
                let axis = vector(1.0).normalize_or(Vec3::Y);
                let rotation = Quat::from_axis_angle(axis, vector(3.15).x);
                let pos12 = Pose::from_parts(vector(0.6), rotation);
                let (mut ours, mut parrys) = (Vec::new(), Vec::new());
                let (mut work1, mut work2) = (None, None);
                let (g1, g2) = (&**g1, &**g2);
                dispatcher
                    .contact_manifolds(&pos12, g1, g2, 0.02, &mut ours, &mut work1)
                    .unwrap();
                DefaultQueryDispatcher
                    .contact_manifolds(&pos12, g1, g2, 0.02, &mut parrys, &mut work2)
                    .unwrap();
                let nudge = Pose::from_parts(vector(0.01), Quat::from_scaled_axis(vector(0.05)));
                let later = pos12 * nudge;
                rebuilt_apart +=
                    usize::from(!rebuilt_as_fresh(&dispatcher, &pos12, &later, g1, g2));
                // The narrow phase drops points farther apart than the prediction distance.
                for m in ours.iter_mut().chain(&mut parrys) {
                    m.points.retain(|c| c.dist <= 0.02);
                }
                pairs += 1;
                points += ours.iter().map(|m| m.points.len()).sum::<usize>();
                // parry turns the pose of a pair with the terrain second round twice (inverted
                // for the triangles, and back for each triangle), which moves its normals by
                // f32 rounding: a few units in the 7th digit.
                let rounding = if terrain(g2) && !terrain(g1) {
                    1e-5
                } else {
                    0.0
                };
                differing += usize::from(!same(&ours, &parrys, rounding));
            }
        }
        assert!(points > 40_000, "{points} points in {pairs} pairs");
        assert_eq!(
            rebuilt_apart, 0,
            "pairs whose rebuilt manifolds differ from fresh ones"
        );
        assert!(
            differing * 1_000 <= pairs,
            "{differing} of {pairs} pairs differ"
        );
    }

    /// Whether manifolds built at `pos12` and then again at `later` over the old ones (from the
    /// same starting normal: none) have exactly the points a build at `later` from scratch has.
    fn rebuilt_as_fresh(
        dispatcher: &Dispatcher,
        pos12: &Pose,
        later: &Pose,
        g1: &dyn Shape,
        g2: &dyn Shape,
    ) -> bool {
        let build = |manifolds: &mut Vec<Manifold>, work: &mut Option<_>, pose: &Pose| {
            let result = dispatcher.contact_manifolds(pose, g1, g2, 0.02, manifolds, work);
            result.unwrap();
        };
        let (mut rebuilt, mut work) = (Vec::new(), None);
        build(&mut rebuilt, &mut work, pos12);
        for m in &mut rebuilt {
            (m.local_n1, m.local_n2) = (Vec3::ZERO, Vec3::ZERO);
        }
        build(&mut rebuilt, &mut work, later);
        let (mut fresh, mut work) = (Vec::new(), None);
        build(&mut fresh, &mut work, later);
        let points = |manifolds: &[Manifold]| {
            (touching(manifolds).into_iter())
                .map(|m| {
                    let points = m.points.iter();
                    let points = points.map(|c| (c.fid1, c.fid2, c.local_p1, c.local_p2, c.dist));
                    ((m.subshape1, m.subshape2), points.collect::<Vec<_>>())
                })
                .collect::<Vec<_>>()
        };
        points(&rebuilt) == points(&fresh)
    }

    /// The same touching manifolds (those with points, by sub-shapes: a mesh pair keeps one
    /// manifold per touching triangle here, parry one per nearby triangle), with the same
    /// normals (within `rounding`), and the same points from the same features within 0.1 mm.
    fn same(ours: &[Manifold], parrys: &[Manifold], rounding: f32) -> bool {
        let (ours, parrys) = (touching(ours), touching(parrys));
        ours.len() == parrys.len()
            && ours.iter().zip(&parrys).all(|(a, b)| {
                (a.subshape1, a.subshape2) == (b.subshape1, b.subshape2)
                    && a.local_n1.distance(b.local_n1) <= rounding
                    && a.local_n2.distance(b.local_n2) <= rounding
                    && a.points.len() == b.points.len()
                    && a.points.iter().zip(&b.points).all(|(p, q)| {
                        (p.fid1, p.fid2) == (q.fid1, q.fid2)
                            && p.local_p1.distance(q.local_p1) <= 1e-4
                            && p.local_p2.distance(q.local_p2) <= 1e-4
                            && (p.dist - q.dist).abs() <= 1e-4
                    })
            })
    }

    /// The manifolds with points, sorted by their sub-shapes.
    fn touching(manifolds: &[Manifold]) -> Vec<&Manifold> {
        let mut touching: Vec<_> = manifolds.iter().filter(|m| !m.points.is_empty()).collect();
        touching.sort_by_key(|m| (m.subshape1, m.subshape2));
        touching
    }

    /// The manifold of `shape` at `pose` over a large triangle at the origin, with the shape as
    /// the pair's first shape and as its second: the normal made to point up (from the
    /// triangle), and each point's witness on the shape with its distance.
    fn on_a_triangle(shape: &dyn Shape, pose: Pose) -> [(Vec3, Vec<(Vec3, f32)>); 2] {
        let triangle = Triangle::new(
            Vec3::new(-2.0, 0.0, -2.0),
            Vec3::new(0.0, 0.0, 3.0),
            Vec3::new(2.0, 0.0, -2.0),
        );
        let dispatcher = Dispatcher { box_bias: 0.0 };
        [true, false].map(|shape_first| {
            let mut manifold = Manifold::new();
            let (pos12, g1, g2): (Pose, &dyn Shape, &dyn Shape) = if shape_first {
                (pose.inverse(), shape, &triangle)
            } else {
                (pose, &triangle, shape)
            };
            dispatcher
                .contact_manifold_convex_convex(&pos12, g1, g2, None, None, 0.02, &mut manifold)
                .unwrap();
            let up = if shape_first {
                -manifold.local_n1
            } else {
                manifold.local_n1
            };
            let points = manifold.points.iter().map(|c| {
                let on_shape = if shape_first { c.local_p1 } else { c.local_p2 };
                (on_shape, c.dist)
            });
            (up, points.collect())
        })
    }

    #[test]
    fn a_capsule_lying_on_a_triangle_touches_at_both_ends() {
        // A capsule of half-height 0.5 and radius 0.2 lying along X, 3 mm into a large
        // triangle, as either shape of the pair: the normal is the face's, and the manifold
        // has points under both ends of the core, each 3 mm deep.
        let pose = Pose::from_translation(Vec3::new(0.3, 0.197, 0.1));
        for (up, points) in on_a_triangle(&Capsule::new_x(0.5, 0.2), pose) {
            assert!((up - Vec3::Y).length() < 1e-6, "{up}");
            for end in [-0.5, 0.5] {
                let under = (points.iter())
                    .any(|&(p, dist)| (p.x - end).abs() < 1e-5 && (dist + 0.003).abs() < 1e-5);
                assert!(under, "no point under the end at {end}: {points:?}");
            }
        }
    }

    #[test]
    fn a_cylinder_standing_on_a_triangle_rests_on_its_cap() {
        // A cylinder of radius 0.3 standing 3 mm into a large triangle, as either shape of the
        // pair: the normal is the face's (from its two support points, no EPA), and the cap's
        // points are each 3 mm deep.
        let pose = Pose::from_translation(Vec3::new(0.3, 0.397, 0.1));
        for (up, points) in on_a_triangle(&Cylinder::new(0.4, 0.3), pose) {
            assert_eq!(up, Vec3::Y);
            assert!(points.len() >= 3, "{points:?}");
            for (p, dist) in points {
                assert!((p.y + 0.4).abs() < 1e-5, "{p} not on the cap");
                assert!((dist + 0.003).abs() < 1e-5, "{p} not 3 mm deep: {dist}");
            }
        }
    }

    #[test]
    fn a_rebuilt_manifold_keeps_the_impulses_of_its_points() {
        // A box on a triangle, its manifold built, given impulses, and built again 1 mm and
        // 0.01 rad on: each point of the same features keeps its impulse, a new one has none,
        // and the old points are gone.
        let cuboid = Cuboid::new(Vec3::splat(0.5));
        let triangle = Triangle::new(
            Vec3::new(-2.0, 0.0, -2.0),
            Vec3::new(0.0, 0.0, 3.0),
            Vec3::new(2.0, 0.0, -2.0),
        );
        let at = |x: f32, tilt: f32| {
            Pose::from_parts(Vec3::new(x, 0.499, 0.0), Quat::from_rotation_z(tilt))
        };
        let build = |pose: Pose, manifold: &mut Manifold| {
            let poses = (&pose.inverse(), &pose);
            box_triangle_manifold(
                poses,
                (&cuboid, None),
                (&triangle, None),
                0.02,
                manifold,
                true,
            );
        };
        let mut manifold = Manifold::new();
        build(at(0.0, 0.0), &mut manifold);
        assert_eq!(manifold.points.len(), 4);
        for (i, c) in manifold.points.iter_mut().enumerate() {
            c.data = 1.0 + i as f32;
        }
        let old = manifold.points.clone();
        build(at(0.001, 0.01), &mut manifold);
        assert_eq!(manifold.points.len(), 4);
        for c in &manifold.points {
            let kept = old.iter().find(|o| (o.fid1, o.fid2) == (c.fid1, c.fid2));
            assert_eq!(c.data, kept.map_or(0.0, |o| o.data), "{c:?}");
            assert!(
                old.iter().all(|o| o.local_p1 != c.local_p1),
                "{c:?} not rebuilt"
            );
        }
        assert!(manifold.points.iter().filter(|c| c.data > 0.0).count() >= 2);
    }
}
