//! The closest points of a segment and a triangle in closed form: a capsule's core against a
//! triangle of a mesh or a heightfield, where GJK would search for them.
//!
//! Unless the segment pierces the triangle, one of the two closest points lies on a boundary
//! feature: an end of the segment (against the triangle's face), or an edge of the triangle
//! (against the segment: two segments' closest points, Ericson, "Real-Time Collision
//! Detection", 2005, §5.1.9). Five candidates, the nearest wins.

use bevy::math::Vec3;
use parry3d::query::gjk::GJKResult;

/// Squared lengths below this (m²) count as zero: a segment this short is a point, a triangle
/// whose doubled area is this small is degenerate, and cores this close touch.
const TINY_SQUARED: f32 = 1e-12;

/// A segment and a triangle in the frame of the pair's first shape.
pub(crate) struct SegmentTriangle {
    /// The segment's ends.
    pub(crate) segment: [Vec3; 2],
    /// The triangle's corners.
    pub(crate) triangle: [Vec3; 3],
    /// Whether the segment is the pair's first shape.
    pub(crate) segment_first: bool,
}

impl SegmentTriangle {
    /// What GJK would answer for the two, exactly: [`GJKResult::ClosestPoints`] (first shape's
    /// point, second shape's point, unit direction from the first to the second) if they are
    /// at most `max_dist` apart, else [`GJKResult::NoIntersection`] with the direction between
    /// the closest points. `None` where the segment touches or pierces the triangle, or the
    /// triangle is degenerate: GJK and EPA answer those.
    pub(crate) fn closest(&self, max_dist: f32) -> Option<GJKResult> {
        let (segment, triangle) = (self.segment, self.triangle);
        let normal = (triangle[1] - triangle[0]).cross(triangle[2] - triangle[0]);
        if normal.length_squared() <= TINY_SQUARED {
            return None;
        }
        let normal = normal.normalize();
        // The ends' heights over the triangle's plane.
        let heights = segment.map(|end| normal.dot(end - triangle[0]));
        // Toward the triangle from the segment, the way the first shape sees it.
        let toward = |gap: Vec3| if self.segment_first { gap } else { -gap };
        // Both ends farther than `max_dist` on one side: apart along the plane's normal.
        if heights[0].min(heights[1]) > max_dist {
            return Some(GJKResult::NoIntersection(toward(-normal)));
        }
        if heights[0].max(heights[1]) < -max_dist {
            return Some(GJKResult::NoIntersection(toward(normal)));
        }
        let feet = [0, 1].map(|i| segment[i] - normal * heights[i]);
        let inside = feet.map(|foot| inside(foot, triangle, normal));
        if pierces(segment, heights, triangle, normal) {
            return None;
        }
        let (on_segment, on_triangle) = if inside == [true, true] {
            // The segment's shadow is on the face, and its height is least at an end.
            let nearer = usize::from(heights[1].abs() < heights[0].abs());
            (segment[nearer], feet[nearer])
        } else {
            closest_points(segment, triangle, (feet, inside))
        };
        let gap = on_triangle - on_segment;
        let distance_squared = gap.length_squared();
        if distance_squared <= TINY_SQUARED {
            return None;
        }
        let distance = distance_squared.sqrt();
        let dir = toward(gap / distance);
        Some(if distance > max_dist {
            GJKResult::NoIntersection(dir)
        } else if self.segment_first {
            GJKResult::ClosestPoints(on_segment, on_triangle, dir)
        } else {
            GJKResult::ClosestPoints(on_triangle, on_segment, dir)
        })
    }
}

/// Whether `point`, in the plane of `triangle` (of normal `normal`), is inside it: on the
/// inner side of all three edges.
fn inside(point: Vec3, [a, b, c]: [Vec3; 3], normal: Vec3) -> bool {
    let inner = |from: Vec3, to: Vec3| (to - from).cross(point - from).dot(normal) >= 0.0;
    inner(a, b) && inner(b, c) && inner(c, a)
}

/// Whether `segment`, its ends `heights` over the plane of `triangle` (of unit normal
/// `normal`), crosses that plane inside the triangle: then the closest points of the
/// boundaries would miss the crossing.
fn pierces([p, q]: [Vec3; 2], heights: [f32; 2], triangle: [Vec3; 3], normal: Vec3) -> bool {
    let [above_p, above_q] = heights;
    if (above_p > 0.0 && above_q > 0.0) || (above_p < 0.0 && above_q < 0.0) {
        return false;
    }
    let span = above_p - above_q;
    // In the plane, an end inside or an edge crossed gives a zero distance.
    span != 0.0 && inside(p + (q - p) * (above_p / span), triangle, normal)
}

/// The closest points of `segment` and `triangle` (on the segment, on the triangle), which do
/// not pierce each other, given the feet of the segment's ends on the triangle's plane and
/// whether each is inside the triangle; where several pairs are as close, the first
/// candidate found: the ends over the face, then the triangle's edges in order. An end whose
/// foot is outside the triangle is no candidate: the triangle's point nearest to it is then
/// on an edge, and that edge's candidate is at least as close.
fn closest_points(
    segment: [Vec3; 2],
    triangle: [Vec3; 3],
    (feet, inside): ([Vec3; 2], [bool; 2]),
) -> (Vec3, Vec3) {
    let mut best = (Vec3::ZERO, Vec3::ZERO);
    let mut best_squared = f32::INFINITY;
    let mut consider = |pair: (Vec3, Vec3)| {
        let squared = pair.0.distance_squared(pair.1);
        if squared < best_squared {
            (best, best_squared) = (pair, squared);
        }
    };
    for i in 0..2 {
        if inside[i] {
            consider((segment[i], feet[i]));
        }
    }
    for i in 0..3 {
        let edge = [triangle[i], triangle[(i + 1) % 3]];
        consider(closest_on_segments(segment, edge));
    }
    best
}

/// The closest points of segments `[p1, q1]` and `[p2, q2]`: the closest points of their
/// lines, each clamped to its segment and the other recomputed from it.
fn closest_on_segments([p1, q1]: [Vec3; 2], [p2, q2]: [Vec3; 2]) -> (Vec3, Vec3) {
    let (d1, d2, r) = (q1 - p1, q2 - p2, p1 - p2);
    let (len1, len2) = (d1.length_squared(), d2.length_squared());
    let along2 = d2.dot(r);
    if len1 <= TINY_SQUARED {
        // The first is a point.
        let t = if len2 <= TINY_SQUARED {
            0.0
        } else {
            (along2 / len2).clamp(0.0, 1.0)
        };
        return (p1, p2 + d2 * t);
    }
    let along1 = d1.dot(r);
    if len2 <= TINY_SQUARED {
        return (p1 + d1 * (-along1 / len1).clamp(0.0, 1.0), p2);
    }
    let cross = d1.dot(d2);
    let denominator = len1 * len2 - cross * cross;
    // Parallel lines: any point of the first will do; its start is taken.
    let mut s = if denominator > 0.0 {
        ((cross * along2 - along1 * len2) / denominator).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut t = (cross * s + along2) / len2;
    if t < 0.0 {
        t = 0.0;
        s = (-along1 / len1).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((cross - along1) / len1).clamp(0.0, 1.0);
    }
    (p1 + d1 * s, p2 + d2 * t)
}

#[cfg(test)]
// Tests build their cases and references with platform math; the rule (`clippy.toml`) guards
// the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use crate::collision::random_vectors;

    /// The distance from `point` to `triangle` in f64, by minimising over a fine grid of
    /// barycentric coordinates and refining: a reference that shares nothing with the code.
    fn point_triangle_distance(point: [f64; 3], triangle: [[f64; 3]; 3]) -> f64 {
        let at = |u: f64, v: f64| {
            let w = 1.0 - u - v;
            let p: Vec<f64> = (0..3)
                .map(|k| w * triangle[0][k] + u * triangle[1][k] + v * triangle[2][k])
                .collect();
            ((0..3).map(|k| (p[k] - point[k]).powi(2)).sum::<f64>()).sqrt()
        };
        // The squared distance is convex in (u, v): pattern search with shrinking steps.
        let (mut u, mut v, mut step) = (1.0 / 3.0, 1.0 / 3.0, 0.25);
        let inside = |u: f64, v: f64| u >= 0.0 && v >= 0.0 && u + v <= 1.0;
        let mut best = at(u, v);
        while step > 1e-12 {
            let mut moved = false;
            for (du, dv) in [
                (1.0, 0.0),
                (-1.0, 0.0),
                (0.0, 1.0),
                (0.0, -1.0),
                (1.0, -1.0),
                (-1.0, 1.0),
            ] {
                let (nu, nv) = (u + du * step, v + dv * step);
                if inside(nu, nv) && at(nu, nv) < best {
                    (u, v, best, moved) = (nu, nv, at(nu, nv), true);
                }
            }
            if !moved {
                step *= 0.5;
            }
        }
        best
    }

    fn f64s(v: Vec3) -> [f64; 3] {
        [f64::from(v.x), f64::from(v.y), f64::from(v.z)]
    }

    /// The segment–triangle distance in f64: the point–triangle distance is convex along the
    /// segment, so a golden-section search over it finds the minimum.
    fn reference_distance(segment: [Vec3; 2], triangle: [Vec3; 3]) -> f64 {
        let triangle = triangle.map(f64s);
        let (p, q) = (f64s(segment[0]), f64s(segment[1]));
        let at = |s: f64| {
            let point = [0, 1, 2].map(|k| p[k] + (q[k] - p[k]) * s);
            point_triangle_distance(point, triangle)
        };
        let ratio = (5f64.sqrt() - 1.0) / 2.0;
        let (mut lo, mut hi) = (0.0, 1.0);
        for _ in 0..60 {
            let (m1, m2) = (hi - ratio * (hi - lo), lo + ratio * (hi - lo));
            if at(m1) < at(m2) {
                hi = m2;
            } else {
                lo = m1;
            }
        }
        at(0.5 * (lo + hi)).min(at(0.0)).min(at(1.0))
    }

    #[test]
    fn closest_points_match_a_brute_force_search() {
        // Random segments and triangles within about a metre of each other, some segments
        // short, some lying in a plane parallel to the triangle: the two points lie on their
        // shapes, and their distance is the least distance of the shapes, to f32 rounding of
        // metre-sized coordinates.
        let mut vector = random_vectors(0x2545_f491);
        let mut checked = 0;
        for case in 0..1_000 {
            let triangle = [vector(1.0), vector(1.0), vector(1.0)];
            let p = vector(1.2);
            let q = match case % 4 {
                0 => p + vector(0.01),
                1 => {
                    // Parallel to the triangle's plane.
                    let n = (triangle[1] - triangle[0]).cross(triangle[2] - triangle[0]);
                    let d = vector(1.0);
                    p + d - n * (d.dot(n) / n.length_squared())
                }
                _ => vector(1.2),
            };
            let segment = [p, q];
            let pair = SegmentTriangle {
                segment,
                triangle,
                segment_first: true,
            };
            let reference = reference_distance(segment, triangle);
            let Some(GJKResult::ClosestPoints(on_segment, on_triangle, _)) = pair.closest(10.0)
            else {
                assert!(reference < 1e-4, "{segment:?} {triangle:?} left to GJK");
                continue;
            };
            if reference < 1e-4 {
                continue; // Touching: GJK's to answer where they pierce.
            }
            let found = f64::from(on_segment.distance(on_triangle));
            assert!(
                (found - reference).abs() < 2e-6,
                "{segment:?} {triangle:?}: {found} against {reference}"
            );
            // The points lie on their shapes.
            let on_line = reference_distance([on_segment, on_segment], [p, q, q]);
            let in_triangle = reference_distance([on_triangle, on_triangle], triangle);
            assert!(
                on_line < 2e-6 && in_triangle < 2e-6,
                "{on_line} {in_triangle}"
            );
            checked += 1;
        }
        assert!(checked > 700, "{checked} cases checked");
    }

    #[test]
    fn gjk_finds_the_same_distance_and_direction() {
        // The segment and the triangle as parry's shapes in their own frames, posed at
        // random, in either order: GJK's distance agrees within its stopping gap (relative
        // √(10 ε) ≈ 1.1e-3), and its direction within √(2 · 1.1e-3) rad (the gap between
        // two convex shapes' closest points is unique even where the points are not).
        use crate::collision::gjk::contact_points;
        use bevy::math::Quat;
        use parry3d::math::Pose;
        use parry3d::shape::{Segment, Triangle};
        let mut vector = random_vectors(0x9e37_79b9);
        let mut compared = 0;
        for case in 0..2_000 {
            let segment = Segment::new(vector(0.6), vector(0.6));
            let triangle = Triangle::new(vector(1.0), vector(1.0), vector(1.0));
            let axis = vector(1.0).normalize_or(Vec3::Y);
            let rotation = Quat::from_axis_angle(axis, vector(3.1).x);
            let pos12 = Pose::from_parts(vector(1.0), rotation);
            let segment_first = case % 2 == 0;
            let cores = if segment_first {
                SegmentTriangle {
                    segment: [segment.a, segment.b],
                    triangle: [triangle.a, triangle.b, triangle.c].map(|v| pos12 * v),
                    segment_first,
                }
            } else {
                SegmentTriangle {
                    segment: [segment.a, segment.b].map(|v| pos12 * v),
                    triangle: [triangle.a, triangle.b, triangle.c],
                    segment_first,
                }
            };
            let reach = 0.5;
            let gjk = if segment_first {
                contact_points(&pos12, &segment, &triangle, reach, Vec3::X)
            } else {
                contact_points(&pos12, &triangle, &segment, reach, Vec3::X)
            };
            let (
                Some(GJKResult::ClosestPoints(p1, p2, dir)),
                GJKResult::ClosestPoints(q1, q2, gjk_dir),
            ) = (cores.closest(reach), gjk)
            else {
                continue;
            };
            let (distance, gjk_distance) = (p1.distance(p2), q1.distance(q2));
            if gjk_distance < 1e-3 {
                continue; // Touching: EPA's depth, not a distance.
            }
            assert!(
                (distance - gjk_distance).abs() <= 1.2e-3 * gjk_distance + 1e-5,
                "{distance} against GJK's {gjk_distance}"
            );
            assert!(
                (p2 - p1).dot(dir) > 0.0 && dir.dot(gjk_dir) > 0.047f32.cos(),
                "{dir} {gjk_dir}"
            );
            compared += 1;
        }
        assert!(compared > 500, "{compared} compared");
    }

    #[test]
    fn a_pierced_triangle_and_a_flat_one_are_left_to_gjk() {
        let triangle = [Vec3::ZERO, Vec3::X, Vec3::Z];
        let through = SegmentTriangle {
            segment: [Vec3::new(0.2, -1.0, 0.2), Vec3::new(0.2, 1.0, 0.2)],
            triangle,
            segment_first: true,
        };
        assert!(through.closest(0.1).is_none());
        let flat = SegmentTriangle {
            triangle: [Vec3::ZERO, Vec3::X, Vec3::X * 2.0],
            ..through
        };
        assert!(flat.closest(0.1).is_none());
    }

    #[test]
    fn the_answer_is_gjks_from_either_side() {
        // A segment 0.3 above a triangle's face, the triangle wound either way: the direction
        // points from the first shape to the second, and the distance decides between points
        // and apart.
        let (a, b, c) = (
            Vec3::ZERO,
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(0.0, 0.0, 2.0),
        );
        let segment = [Vec3::new(0.2, 0.3, 0.2), Vec3::new(0.6, 0.3, 0.5)];
        for triangle in [[a, b, c], [a, c, b]] {
            let pair = |segment_first| SegmentTriangle {
                segment,
                triangle,
                segment_first,
            };
            let Some(GJKResult::ClosestPoints(p1, p2, dir)) = pair(false).closest(0.5) else {
                panic!("expected closest points");
            };
            assert!((dir - Vec3::Y).length() < 1e-6);
            assert!((p2 - p1 - 0.3 * Vec3::Y).length() < 1e-6);
            let Some(GJKResult::ClosestPoints(p1, p2, dir)) = pair(true).closest(0.5) else {
                panic!("expected closest points");
            };
            assert!((dir + Vec3::Y).length() < 1e-6);
            assert!((p1 - p2 - 0.3 * Vec3::Y).length() < 1e-6);
            for (segment_first, toward_second) in [(true, -Vec3::Y), (false, Vec3::Y)] {
                let Some(GJKResult::NoIntersection(dir)) = pair(segment_first).closest(0.2) else {
                    panic!("expected apart");
                };
                assert!((dir - toward_second).length() < 1e-6, "{dir}");
            }
        }
    }
}
