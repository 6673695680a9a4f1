//! The closest points of two convex shapes for contact manifolds: GJK (Gilbert, Johnson and
//! Keerthi, "A fast procedure for computing the distance between complex objects in
//! three-dimensional space", 1988), in van den Bergen's form with upper and lower bounds on
//! the distance ("Collision Detection in Interactive 3D Environments", 2003, §4.3), over
//! parry's Voronoi simplex, with EPA (van den Bergen, §4.3.7) where the shapes overlap.
//!
//! It answers as parry's `contact_support_map_support_map_with_params` does, with two
//! changes: a pair apart along the start direction (last step's normal or separating
//! direction, as it is for most pairs the broad phase hands over) is answered from that one
//! support point, where parry goes on to a search; and EPA's polytope is kept between calls
//! instead of allocated for each.

use bevy::math::Vec3;
use parry3d::math::Pose;
use parry3d::query::epa::EPA;
use parry3d::query::gjk::{CsoPoint, GJKResult, VoronoiSimplex};
use parry3d::shape::SupportMap;

/// Smallest distance bound (m) GJK still takes for a direction; below it the origin is taken
/// to be inside the shapes' difference.
const ZERO_DISTANCE: f32 = f32::EPSILON * 10.0;

/// The closest points of `g1` and `g2` (`pos12`: `g2`'s frame in `g1`'s), searched from
/// unit direction `start`: [`GJKResult::ClosestPoints`] (in `g1`'s frame; the direction from
/// `g1` to `g2`) if they are closer than `max_dist` or overlap, otherwise
/// [`GJKResult::NoIntersection`] with the direction that showed it.
pub(crate) fn contact_points(
    pos12: &Pose,
    g1: &dyn SupportMap,
    g2: &dyn SupportMap,
    max_dist: f32,
    start: Vec3,
) -> GJKResult {
    let first = CsoPoint::from_shapes(pos12, g1, g2, start);
    // Apart along the start (last step's normal or separating direction), as most pairs
    // that were apart still are: no search needed.
    if -start.dot(first.point) > max_dist {
        return GJKResult::NoIntersection(start);
    }
    let mut simplex = VoronoiSimplex::new();
    simplex.reset(first);
    let found = closest_points(pos12, g1, g2, max_dist, &mut simplex);
    if found != GJKResult::Intersection {
        return found;
    }
    EPA_WORKSPACE.with_borrow_mut(|epa| match epa.closest_points(pos12, g1, g2, &simplex) {
        Some((p1, p2, n)) => GJKResult::ClosestPoints(p1, p2, n),
        None => GJKResult::NoIntersection(Vec3::X),
    })
}

thread_local! {
    /// EPA's polytope, kept between calls so that it allocates only while it grows.
    static EPA_WORKSPACE: std::cell::RefCell<EPA> = std::cell::RefCell::new(EPA::new());
}

/// GJK from the simplex's first point: the closest points, [`GJKResult::Intersection`] if
/// the origin is inside the shapes' difference, or [`GJKResult::NoIntersection`] if they are
/// farther apart than `max_dist`.
fn closest_points(
    pos12: &Pose,
    g1: &dyn SupportMap,
    g2: &dyn SupportMap,
    max_dist: f32,
    simplex: &mut VoronoiSimplex,
) -> GJKResult {
    let mut proj = simplex.project_origin_and_reduce();
    let Some(toward) = (-proj).try_normalize() else {
        return GJKResult::Intersection;
    };
    let mut old_dir = toward;
    let mut upper = f32::MAX;
    // The relative gap between the distance's upper and lower bounds at which GJK stops.
    let relative_gap = ZERO_DISTANCE.sqrt();
    // parry's cap on the iterations (rounding can keep the simplex from settling), and its
    // answer after it.
    for _ in 0..100 {
        let (dir, dist) = (-proj).normalize_and_length();
        if dist <= ZERO_DISTANCE {
            return GJKResult::Intersection;
        }
        if dist >= upper {
            // Rounding stopped the bound from falling: the last simplex is the answer.
            return points(simplex, true, old_dir);
        }
        upper = dist;
        let support = CsoPoint::from_shapes(pos12, g1, g2, dir);
        let lower = -dir.dot(support.point);
        if lower > max_dist {
            return GJKResult::NoIntersection(dir);
        }
        if upper - lower <= relative_gap * upper || !simplex.add_point(support) {
            return points(simplex, false, dir);
        }
        old_dir = dir;
        proj = simplex.project_origin_and_reduce();
        if simplex.dimension() == 3 {
            return if lower >= ZERO_DISTANCE {
                points(simplex, true, old_dir)
            } else {
                GJKResult::Intersection
            };
        }
    }
    GJKResult::NoIntersection(Vec3::X)
}

/// The closest points the simplex (its previous state, with `previous`) gives, along `dir`.
fn points(simplex: &VoronoiSimplex, previous: bool, dir: Vec3) -> GJKResult {
    let (mut p1, mut p2) = (Vec3::ZERO, Vec3::ZERO);
    let corners = if previous {
        simplex.prev_dimension()
    } else {
        simplex.dimension()
    };
    for i in 0..=corners {
        let (coord, point) = if previous {
            (simplex.prev_proj_coord(i), simplex.prev_point(i))
        } else {
            (simplex.proj_coord(i), simplex.point(i))
        };
        p1 += point.orig1 * coord;
        p2 += point.orig2 * coord;
    }
    GJKResult::ClosestPoints(p1, p2, dir)
}

#[cfg(test)]
// Tests build their scenes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use crate::collision::random_vectors;
    use bevy::math::Quat;
    use parry3d::query::details::contact_support_map_support_map_with_params;
    use parry3d::shape::{ConvexPolyhedron, Cuboid, Cylinder, Segment, Triangle};

    #[test]
    fn gives_parrys_answer_and_stops_early_only_for_pairs_apart() {
        // Random boxes, cylinders, hulls, segments and triangles within about a metre of each
        // other, searched from a random direction or from last step's: where the start shows
        // the pair apart, parry's GJK finds it apart too; everywhere else the answer is
        // parry's, bit for bit (the same iterations from the same first point, and EPA's
        // polytope reused).
        let mut vector = random_vectors(0x85eb_ca6b);
        let (mut early, mut searched) = (0, 0);
        for _ in 0..20_000 {
            let size = |v: Vec3| v.abs() + Vec3::splat(0.05);
            let corners: Vec<Vec3> = (0..10).map(|_| vector(0.5)).collect();
            let shapes: [Box<dyn SupportMap>; 5] = [
                Box::new(Cuboid::new(size(vector(0.5)))),
                Box::new(Cylinder::new(size(vector(0.5)).x, size(vector(0.5)).y)),
                Box::new(ConvexPolyhedron::from_convex_hull(&corners).unwrap()),
                Box::new(Segment::new(vector(0.5), vector(0.5))),
                Box::new(Triangle::new(vector(0.8), vector(0.8), vector(0.8))),
            ];
            let pick = |v: Vec3| ((v.x + 1.0) * 2.5) as usize % 5;
            let (g1, g2) = (&*shapes[pick(vector(1.0))], &*shapes[pick(vector(1.0))]);
            let axis = vector(1.0).normalize_or(Vec3::Y);
            let rotation = Quat::from_axis_angle(axis, vector(3.15).x);
            let pos12 = Pose::from_parts(vector(1.2), rotation);
            let reach = 0.05;
            let parrys = |start| {
                let mut simplex = VoronoiSimplex::new();
                contact_support_map_support_map_with_params(
                    &pos12,
                    g1,
                    g2,
                    reach,
                    &mut simplex,
                    start,
                )
            };
            // Half the searches start from the direction a search from nowhere ends with,
            // as a pair's next step does: then the start shows the pair apart right up to
            // the reach.
            let start = match parrys(None) {
                GJKResult::ClosestPoints(_, _, dir) | GJKResult::NoIntersection(dir)
                    if vector(1.0).x > 0.0 =>
                {
                    dir
                }
                _ => vector(1.0).normalize_or(Vec3::X),
            };
            let ours = contact_points(&pos12, g1, g2, reach, start);
            let parrys = parrys(Some(start));
            if ours == GJKResult::NoIntersection(start) {
                early += 1;
                assert!(
                    matches!(parrys, GJKResult::NoIntersection(_)),
                    "apart along the start, but parry finds {parrys:?}"
                );
            } else {
                searched += 1;
                assert_eq!(ours, parrys);
            }
        }
        assert!(
            early > 2_000 && searched > 2_000,
            "{early} early, {searched} searched"
        );
    }
}
