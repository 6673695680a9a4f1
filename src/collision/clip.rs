//! Contact points between two polygonal faces that touch along a separating axis: the
//! polygon where the faces overlap seen along the axis (Catto, "Contact Manifolds",
//! GDC 2007; C. Ericson, *Real-Time Collision Detection*, 2005, §5.1.9).
//!
//! The points are the ones parry's `PolygonalFeature::contacts` gives for two faces, in the
//! same order and with the same feature ids: each corner of one face that lies inside the
//! other (seen along the axis), then each crossing of an edge of one face with an edge of the
//! other. parry finds the crossings by intersecting the lines of all sixteen edge pairs, two
//! divisions each; here every corner's side of every edge line of the other face is computed
//! once (a 2D cross product), which answers both the corner-inside tests and which edge pairs
//! cross, and only a pair that crosses is intersected.

use bevy::math::{Vec2, Vec3};
use parry3d::math::Pose;
use parry3d::query::TrackedContact;
use parry3d::shape::PolygonalFeature;

use super::contacts::Manifold;

/// Appends to `manifold` the contact points of faces `face1` and `face2` (each of three or
/// four corners, `face2` in its own frame, `pos12` its pose in `face1`'s frame) touching
/// along `axis` (in `face1`'s frame, from face 1 towards face 2), leaving out those farther
/// apart than `max_dist` (m): they could not act within the step, and the narrow phase would
/// drop them.
pub(crate) fn face_face_contacts(
    pos12: &Pose,
    axis: Vec3,
    face1: &PolygonalFeature,
    face2: &PolygonalFeature,
    max_dist: f32,
    manifold: &mut Manifold,
) {
    debug_assert!((3..=4).contains(&face1.num_vertices) && (3..=4).contains(&face2.num_vertices));
    // With the corner counts known to the compiler, the loops over corners and edges unroll.
    match (face1.num_vertices, face2.num_vertices) {
        (4, 4) => clip::<4, 4>(pos12, axis, face1, face2, max_dist, manifold),
        (4, _) => clip::<4, 3>(pos12, axis, face1, face2, max_dist, manifold),
        (_, 4) => clip::<3, 4>(pos12, axis, face1, face2, max_dist, manifold),
        _ => clip::<3, 3>(pos12, axis, face1, face2, max_dist, manifold),
    }
}

/// [`face_face_contacts`] for faces of `N1` and `N2` corners.
fn clip<const N1: usize, const N2: usize>(
    pos12: &Pose,
    axis: Vec3,
    face1: &PolygonalFeature,
    face2: &PolygonalFeature,
    max_dist: f32,
    manifold: &mut Manifold,
) {
    let corners1: [Vec3; N1] = std::array::from_fn(|i| face1.vertices[i]);
    let corners2: [Vec3; N2] = std::array::from_fn(|j| pos12 * face2.vertices[j]);
    let (u, v) = axis.any_orthonormal_pair();
    let flat = |p: Vec3| Vec2::new(p.dot(u), p.dot(v));
    let (flat1, flat2) = (corners1.map(flat), corners2.map(flat));
    // sides1[i][j]: which side of face 1's edge i corner j of face 2 lies on, and the reverse.
    let sides1 = edge_sides(&flat1, &flat2);
    let sides2 = edge_sides(&flat2, &flat1);

    let normal2 = (corners2[2] - corners2[1]).cross(corners2[0] - corners2[1]);
    let across2 = normal2.dot(axis);
    if !nearly_zero(across2) {
        for i in (0..N1).filter(|&i| inside(&sides2, i)) {
            let p1 = corners1[i];
            let dist = (corners2[0] - p1).dot(normal2) / across2;
            if dist > max_dist {
                continue;
            }
            let p2 = pos12.inverse_transform_point(p1 + dist * axis);
            let (fid1, fid2) = (face1.vids[i], face2.fid);
            manifold
                .points
                .push(TrackedContact::new(p1, p2, fid1, fid2, dist));
        }
    }
    let normal1 = (corners1[2] - corners1[1]).cross(corners1[0] - corners1[1]);
    let across1 = -normal1.dot(axis);
    if !nearly_zero(across1) {
        for j in (0..N2).filter(|&j| inside(&sides1, j)) {
            let dist = (corners1[0] - corners2[j]).dot(normal1) / across1;
            if dist > max_dist {
                continue;
            }
            let p1 = corners2[j] - dist * axis;
            let (fid1, fid2) = (face1.fid, face2.vids[j]);
            manifold
                .points
                .push(TrackedContact::new(p1, face2.vertices[j], fid1, fid2, dist));
        }
    }
    for j in 0..N2 {
        let j1 = (j + 1) % N2;
        for i in 0..N1 {
            let i1 = (i + 1) % N1;
            // Edge i crosses edge j where each edge's ends lie strictly on either side of the
            // other's line; `s` and `t` are where along each edge.
            let (a, b) = (sides2[j][i], sides2[j][i1]);
            let (c, d) = (sides1[i][j], sides1[i][j1]);
            if a * b >= 0.0 || c * d >= 0.0 || parallel(flat1[i1] - flat1[i], flat2[j1] - flat2[j])
            {
                continue;
            }
            let (s, t) = (a / (a - b), c / (c - d));
            let p1 = corners1[i].lerp(corners1[i1], s);
            let dist = (corners2[j].lerp(corners2[j1], t) - p1).dot(axis);
            if dist > max_dist {
                continue;
            }
            let p2 = face2.vertices[j].lerp(face2.vertices[j1], t);
            let (fid1, fid2) = (face1.eids[i], face2.eids[j]);
            manifold
                .points
                .push(TrackedContact::new(p1, p2, fid1, fid2, dist));
        }
    }
}

/// `sides[i][j]`: twice the signed area of point `j` of `points` against edge `i` of
/// `polygon`, positive on its left.
fn edge_sides<const N: usize, const M: usize>(
    polygon: &[Vec2; N],
    points: &[Vec2; M],
) -> [[f32; M]; N] {
    std::array::from_fn(|i| {
        let (from, to) = (polygon[i], polygon[(i + 1) % N]);
        points.map(|point| (to - from).perp_dot(point - from))
    })
}

/// Whether corner `j` lies inside the polygon whose edges' sides are `sides`: on no two
/// edges' opposite sides (either winding; a corner on an edge line is inside).
fn inside<const N: usize, const M: usize>(sides: &[[f32; M]; N], j: usize) -> bool {
    let (mut left, mut right) = (false, false);
    for row in sides {
        left |= row[j] > 0.0;
        right |= row[j] < 0.0;
    }
    !(left && right)
}

/// parry's test for edges too close to parallel to intersect (its
/// `closest_points_line2d`): the squared cross product of the edges, `a e - b²`, within
/// `f32::EPSILON` (absolute, in m⁴) or a few ulps of its terms.
fn parallel(dir1: Vec2, dir2: Vec2) -> bool {
    let (a, e, b) = (dir1.length_squared(), dir2.length_squared(), dir1.dot(dir2));
    let (ae, bb) = (a * e, b * b);
    ae - bb <= f32::EPSILON || ulps_apart(ae, bb) <= 4
}

/// parry's `relative_eq!(x, 0.0)` with its default tolerances.
fn nearly_zero(x: f32) -> bool {
    x.abs() <= f32::EPSILON
}

/// How many representable floats lie between `x` and `y` of the same sign.
fn ulps_apart(x: f32, y: f32) -> u32 {
    if x.is_sign_negative() != y.is_sign_negative() {
        return u32::MAX;
    }
    x.to_bits().abs_diff(y.to_bits())
}

#[cfg(test)]
// Tests build their scenes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use crate::collision::random_vectors;
    use bevy::math::{DVec3, Quat};
    use parry3d::query::sat;
    use parry3d::shape::{Cuboid, PackedFeatureId, Triangle};

    #[test]
    fn stacked_boxes_get_the_points_parry_gives() {
        // Equal boxes resting on each other turned by under a milliradian, as in a pile: their
        // edges nearly coincide seen from above, and parry takes pairs of edges closer to
        // parallel than its threshold to have no crossing.
        let mut vector = random_vectors(0xc2b2_ae35);
        let mut clipped = 0;
        for case in 0..5_000 {
            let cuboid = Cuboid::new(vector(0.5).abs() + 0.05);
            let tilt = Quat::from_scaled_axis(vector(1e-3));
            let offset = vector(1e-3) + Vec3::Y * (2.0 * cuboid.half_extents.y - 1e-3);
            let pos12 = Pose::from_parts(offset, tilt);
            let face1 = cuboid.support_feature(Vec3::Y);
            let face2 = cuboid.support_feature(pos12.rotation.inverse() * -Vec3::Y);
            clipped += check(&pos12, Vec3::Y, &face1, &face2, &format!("case {case}"));
        }
        assert!(clipped > 20_000, "{clipped} points");
    }

    /// Clips the faces both ways, parry's and ours, and checks that ours gives the points
    /// parry gives from the same features in the same order (with a maximum distance, those
    /// within it), each where exact arithmetic puts it: a corner's point within `1e-5` m (a hundred roundings of coordinates of about
    /// 1 m), a crossing of two edges within that over the sine of the angle between them seen
    /// along `axis` (the side areas' rounding moves the crossing along the edges).
    ///
    /// Points whose presence rounding decides are left out of the comparison of lists: a
    /// corner within `1e-5` m of an edge line of the other face, and a crossing within
    /// `1e-5` m over the squared sine of an end of its edges, as parry's line intersection
    /// loses precision as the square of the sine (its crossings are 20 cm off at a sine of
    /// 8e-4, and at 1e-3 it drops one that exact arithmetic puts 1 cm inside).
    fn check(
        pos12: &Pose,
        axis: Vec3,
        face1: &PolygonalFeature,
        face2: &PolygonalFeature,
        case: &str,
    ) -> usize {
        let (mut parry, mut ours) = (Manifold::new(), Manifold::new());
        let pos21 = pos12.inverse();
        let axis2 = pos21.rotation * -axis;
        PolygonalFeature::contacts(pos12, &pos21, axis, axis2, face1, face2, &mut parry, false);
        face_face_contacts(pos12, axis, face1, face2, f32::INFINITY, &mut ours);
        // With a maximum distance, the points within it, in the same order.
        let mut near = Manifold::new();
        face_face_contacts(pos12, axis, face1, face2, 0.02, &mut near);
        let ids = |points: &mut dyn Iterator<Item = &TrackedContact<f32>>| {
            points.map(|c| (c.fid1, c.fid2)).collect::<Vec<_>>()
        };
        let within = ids(&mut ours.points.iter().filter(|c| c.dist <= 0.02));
        assert_eq!(ids(&mut near.points.iter()), within, "{case}");
        let exact =
            |c: &TrackedContact<f32>| exact_point(pos12, axis, face1, face2, c.fid1, c.fid2);
        let clear = |m: &Manifold| {
            (m.points.iter())
                .filter(|c| exact(c).margin > 1e-5 / exact(c).sine.powi(2))
                .map(|c| (c.fid1, c.fid2))
                .collect::<Vec<_>>()
        };
        assert_eq!(clear(&parry), clear(&ours), "{case}");
        for point in &ours.points {
            let exact = exact(point);
            let off = (point.local_p1.as_dvec3().distance(exact.p1))
                .max(point.local_p2.as_dvec3().distance(exact.p2))
                .max((f64::from(point.dist) - exact.dist).abs());
            assert!(
                off <= 1e-5 / exact.sine,
                "{case}: {point:?} against {exact:?}"
            );
        }
        ours.points.len()
    }

    /// A contact point in exact arithmetic.
    #[derive(Debug)]
    struct Exact {
        /// Its witnesses on face 1 and face 2, each in its face's frame (m).
        p1: DVec3,
        p2: DVec3,
        /// Their distance along the axis (m).
        dist: f64,
        /// The sine of the angle of its edges seen along the axis; 1 for a corner.
        sine: f64,
        /// How far it is, seen along the axis, from the nearest edge line of the other face
        /// (a corner) or from the nearest end of its edges (a crossing; m).
        margin: f64,
    }

    /// Where the contact point of features `fid1` and `fid2` is in exact arithmetic.
    fn exact_point(
        pos12: &Pose,
        axis: Vec3,
        face1: &PolygonalFeature,
        face2: &PolygonalFeature,
        fid1: PackedFeatureId,
        fid2: PackedFeatureId,
    ) -> Exact {
        let (rotation, shift) = (pos12.rotation.as_dquat(), pos12.translation.as_dvec3());
        let to1 = |p: Vec3| rotation * p.as_dvec3() + shift;
        let to2 = |p: DVec3| rotation.inverse() * (p - shift);
        let n = axis.as_dvec3();
        let flat = |v: DVec3| v - n * v.dot(n);
        let (n1, n2) = (face1.num_vertices, face2.num_vertices);
        let corners1 = face1.vertices.map(|v| v.as_dvec3());
        let corners2 = face2.vertices.map(to1);
        let across = |corners: &[DVec3; 4], p: DVec3| {
            let normal = (corners[2] - corners[1]).cross(corners[0] - corners[1]);
            (corners[0] - p).dot(normal) / normal.dot(n)
        };
        let margin = |corners: &[DVec3], p: DVec3| {
            let edges = corners.iter().zip(corners.iter().cycle().skip(1));
            (edges.map(|(&a, &b)| flat(b - a).normalize().cross(flat(p - a)).length()))
                .fold(f64::INFINITY, f64::min)
        };
        if let Some(i) = (0..n1).find(|&i| face1.vids[i] == fid1) {
            let (p1, dist) = (corners1[i], across(&corners2, corners1[i]));
            let margin = margin(&corners2[..n2], p1);
            return Exact {
                p1,
                p2: to2(p1 + dist * n),
                dist,
                sine: 1.0,
                margin,
            };
        }
        if let Some(j) = (0..n2).find(|&j| face2.vids[j] == fid2) {
            let (p2, dist) = (corners2[j], -across(&corners1, corners2[j]));
            let margin = margin(&corners1[..n1], p2);
            let p2 = face2.vertices[j].as_dvec3();
            return Exact {
                p1: corners2[j] - dist * n,
                p2,
                dist,
                sine: 1.0,
                margin,
            };
        }
        let i = (0..n1).find(|&i| face1.eids[i] == fid1).expect("an edge");
        let j = (0..n2).find(|&j| face2.eids[j] == fid2).expect("an edge");
        let (a, b) = (corners1[i], corners1[(i + 1) % n1]);
        let (c, d) = (corners2[j], corners2[(j + 1) % n2]);
        let side = |from: DVec3, to: DVec3, p: DVec3| (to - from).cross(p - from).dot(n);
        let s = side(c, d, a) / (side(c, d, a) - side(c, d, b));
        let t = side(a, b, c) / (side(a, b, c) - side(a, b, d));
        let (p1, p2) = (a.lerp(b, s), c.lerp(d, t));
        let sine = flat(b - a)
            .normalize()
            .cross(flat(d - c).normalize())
            .length();
        let ends = |u: f64, length: f64| u.min(1.0 - u) * length;
        let margin = ends(s, flat(b - a).length()).min(ends(t, flat(d - c).length()));
        let dist = (p2 - p1).dot(n);
        Exact {
            p1,
            p2: to2(p2),
            dist,
            sine,
            margin,
        }
    }

    #[test]
    fn boxes_get_the_points_parry_gives() {
        // Boxes of 0.1–1.1 m within reach of each other, turned at random: the faces the
        // box–box manifold clips along each kind of axis (a face of either box, an edge
        // pair) give the points parry's clipping gives. Rounding moves them by a few ulps of
        // the boxes' size; 1e-5 m is ten times that.
        let mut vector = random_vectors(0x9e37_79b9);
        let mut clipped = 0;
        for case in 0..20_000 {
            let (half1, half2) = (vector(0.5).abs() + 0.05, vector(0.5).abs() + 0.05);
            let axis = vector(1.0).normalize_or(Vec3::Y);
            let rotation = Quat::from_axis_angle(axis, vector(3.15).x + 3.15);
            let pos12 = Pose::from_parts(vector(0.8), rotation);
            let (cuboid1, cuboid2) = (Cuboid::new(half1), Cuboid::new(half2));
            let pos21 = pos12.inverse();
            let axes = [
                sat::cuboid_cuboid_find_local_separating_normal_oneway(&cuboid1, &cuboid2, &pos12)
                    .1,
                pos12.rotation
                    * -sat::cuboid_cuboid_find_local_separating_normal_oneway(
                        &cuboid2, &cuboid1, &pos21,
                    )
                    .1,
                sat::cuboid_cuboid_find_local_separating_edge_twoway(&cuboid1, &cuboid2, &pos12).1,
            ];
            for axis in axes.into_iter().filter(|a| a.is_normalized()) {
                let face1 = cuboid1.support_feature(axis);
                let face2 = cuboid2.support_feature(pos21.rotation * -axis);
                let case = format!("case {case}, axis {axis}");
                clipped += check(&pos12, axis, &face1, &face2, &case);
            }
        }
        assert!(clipped > 100_000, "{clipped} points");
    }

    #[test]
    fn triangles_get_the_points_parry_gives() {
        // Random triangles against random box faces, along the triangle's normal: faces of
        // three corners against four.
        let mut vector = random_vectors(0x85eb_ca6b);
        let mut clipped = 0;
        for case in 0..20_000 {
            let triangle = Triangle::new(vector(1.0), vector(1.0), vector(1.0));
            let Some(axis) = triangle.normal() else {
                continue;
            };
            let cuboid = Cuboid::new(vector(0.5).abs() + 0.05);
            let rotation = Quat::from_axis_angle(vector(1.0).normalize_or(Vec3::Y), vector(3.15).x);
            let pos12 = Pose::from_parts(vector(0.3), rotation);
            let face1 = triangle.support_face(axis);
            let face2 = cuboid.support_feature(pos12.rotation.inverse() * -axis);
            clipped += check(&pos12, axis, &face1, &face2, &format!("case {case}"));
        }
        assert!(clipped > 20_000, "{clipped} points");
    }
}
