//! A convex shape over a triangle's face: its closest points, or its depth, without GJK and
//! EPA, where two support points prove them.
//!
//! A body resting on a terrain triangle sinks into it by up to a few millimetres, and GJK then
//! hands the pair to EPA, the costliest step of the narrow phase. But where the shape's
//! deepest point along the triangle's normal lies over the face, far enough from its edges,
//! the normal is the triangle's and the depth that point's, which two support points show:
//!
//! Let `p` be the shape's point deepest along the face's normal `n`, at height `-d` over the
//! plane, `f` its foot on the plane, ρ the distance from `f` to the nearest edge line (the face
//! holds the disc of radius ρ about `f`), and `q` the shape's highest point, at height `H`,
//! `L` from `f` along the plane. The shapes' difference `A − T` holds `p − disc` and, for each
//! point `x` of the segment `pq`, `x − disc`; its support along a unit `u` (of components
//! `u_n` along `n` and `u_t` in the plane) is therefore at least
//!
//! - `d·|u_n| + ρ·|u_t|` for `u_n ≤ 0` (from `p`), which is at least `d` if ρ ≥ d;
//! - `h·u_n + (ρ − l)·|u_t|` for `u_n ≥ 0` (from a point of `pq` at height `h`, `l` from
//!   `f`), at least `d` if `h ≥ d` and `ρ − l ≥ d`. The point of `pq` at height `d` is
//!   `l = 2dL / (H + d)` from `f`, so `H ≥ d` and `ρ ≥ d·(1 + 2L / (H + d))` suffice.
//!
//! Then the ball of radius `d` about the origin lies in the difference, so the depth is at
//! least `d`, and along `−n` it is exactly `d`: the shapes' minimum translation is `d` along
//! `n`, what EPA would find. Where the shape is above the plane (`d ≤ 0`) and `f` is inside
//! the face, `p` and `f` are the closest points outright (the plane separates the shapes by
//! `−d`, and they are that far apart). Anything else goes to GJK.

use bevy::math::Vec3;
use parry3d::math::Pose;
use parry3d::query::PointQuery;
use parry3d::query::gjk::GJKResult;
use parry3d::shape::{SupportMap, Triangle};

/// A triangle's doubled area (m²) below which it counts as degenerate.
const DEGENERATE_AREA: f32 = 1e-6;

/// A convex shape's core and a triangle, the triangle in the frame of the pair's first shape.
pub(crate) struct OverFace<'a> {
    /// The convex shape, in its own frame.
    pub(crate) core: &'a dyn SupportMap,
    /// The convex shape's frame in the first shape's (`None`: it is the first shape).
    pub(crate) core_pose: Option<&'a Pose>,
    /// The triangle's corners.
    pub(crate) triangle: [Vec3; 3],
}

impl OverFace<'_> {
    /// The core's support point along `dir`, both in the first shape's frame.
    fn support(&self, dir: Vec3) -> Vec3 {
        match self.core_pose {
            None => self.core.local_support_point(dir),
            Some(pose) => {
                let local = pose.rotation.inverse() * dir;
                pose * self.core.local_support_point(local)
            }
        }
    }

    /// A unit direction from the pair's first shape toward its second for GJK to start from
    /// where [`closest`](Self::closest) proves nothing: from the triangle's point nearest the
    /// core's origin toward that origin (the other way if the core is the first shape).
    /// `None` if the origin lies on the triangle.
    ///
    /// Most of those pairs are a shape beside the triangle, apart from it beyond an edge while
    /// reaching below the face's plane (a body on the next triangle of a terrain). Along this
    /// direction the shapes' first support points usually show the gap, and GJK answers from
    /// them alone; for a ball it is the exact direction of their distance.
    pub(crate) fn start(&self) -> Option<Vec3> {
        let centre = self.core_pose.map_or(Vec3::ZERO, |pose| pose.translation);
        let [a, b, c] = self.triangle;
        let nearest = Triangle::new(a, b, c)
            .project_local_point(centre, true)
            .point;
        let toward_core = (centre - nearest).try_normalize()?;
        Some(if self.core_pose.is_none() {
            -toward_core
        } else {
            toward_core
        })
    }

    /// What GJK (and EPA) would answer, where the two support points prove it (see the
    /// [module docs](self)): [`GJKResult::ClosestPoints`] (first shape's point, second's, the
    /// unit direction from the first to the second; the points' gap along it is negative
    /// where they overlap) if the shapes are at most `max_dist` apart, or
    /// [`GJKResult::NoIntersection`] along the face's normal if the plane separates them by
    /// more. `None` where the proof fails.
    pub(crate) fn closest(&self, max_dist: f32) -> Option<GJKResult> {
        let [a, b, c] = self.triangle;
        let winding = (b - a).cross(c - a);
        let area = winding.length();
        if area <= DEGENERATE_AREA {
            return None;
        }
        let mut n = winding / area;
        let (down, up) = (self.support(-n), self.support(n));
        let (mut deepest, mut highest) = (down, up);
        let (mut low, mut high) = (n.dot(down - a), n.dot(up - a));
        if low + high < 0.0 {
            // The shape is on the back of the two-sided triangle: look from there.
            (n, deepest, highest, low, high) = (-n, up, down, -high, -low);
        }
        // From the first shape to the second: toward the face if the core is the first.
        let toward = if self.core_pose.is_none() { -n } else { n };
        if low > max_dist {
            return Some(GJKResult::NoIntersection(toward));
        }
        let foot = deepest - n * low;
        // The winding's unit normal turns each edge inward, whichever side the shape is on.
        let unit = winding / area;
        let margin = [(a, b), (b, c), (c, a)]
            .map(|(from, to)| {
                let edge = to - from;
                unit.cross(edge).dot(foot - from) / edge.length()
            })
            .into_iter()
            .fold(f32::INFINITY, f32::min);
        let depth = -low;
        let proven = if depth <= 0.0 {
            margin >= 0.0
        } else {
            let across = highest - foot;
            let lateral = (across - n * n.dot(across)).length();
            high >= depth && margin >= depth * (1.0 + 2.0 * lateral / (high + depth))
        };
        if !proven {
            return None;
        }
        Some(if self.core_pose.is_none() {
            GJKResult::ClosestPoints(deepest, foot, toward)
        } else {
            GJKResult::ClosestPoints(foot, deepest, toward)
        })
    }
}

#[cfg(test)]
// Tests pose their shapes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use crate::collision::gjk::contact_points;
    use crate::collision::random_vectors;
    use bevy::math::Quat;
    use parry3d::shape::{Ball, Cone, ConvexPolyhedron, Cuboid, Cylinder};

    /// Random convex shapes over a large triangle, near its plane and mostly over its face,
    /// turned at random, as either shape of the pair: `check` gets each case the shortcut
    /// answers, with the pair, its answer and GJK's (and EPA's).
    fn over_a_triangle(mut check: impl FnMut(&OverFace, GJKResult, GJKResult)) -> (usize, usize) {
        let mut vector = random_vectors(0x27d4_eb2f);
        let (mut answered, mut cases) = (0, 0);
        for case in 0..4_000 {
            let corners: Vec<Vec3> = (0..12).map(|_| vector(0.4)).collect();
            let shapes: [Box<dyn SupportMap>; 4] = [
                Box::new(Cuboid::new(vector(0.3).abs() + Vec3::splat(0.05))),
                Box::new(Cylinder::new(0.3, 0.35)),
                Box::new(Cone::new(0.3, 0.35)),
                Box::new(ConvexPolyhedron::from_convex_hull(&corners).unwrap()),
            ];
            let core = &*shapes[case % 4];
            let (a, b, c) = (
                Vec3::new(-1.5, 0.0, -1.0),
                Vec3::new(1.5, 0.1, -1.2),
                Vec3::new(0.2, -0.1, 1.6),
            );
            // Wound either way: the triangle is two-sided.
            let triangle = if case % 8 < 4 { [a, b, c] } else { [a, c, b] };
            let rotation = Quat::from_axis_angle(vector(1.0).normalize_or(Vec3::Y), vector(3.1).x);
            // Its lowest point anywhere over the triangle's square, or (every other case)
            // within 4 cm of an edge, where the proof must fail when the shape can leave the
            // triangle sideways; at the plane's height within ±3 cm.
            let mut pose = Pose::from_parts(Vec3::ZERO, rotation);
            let lowest = pose * core.local_support_point(rotation.inverse() * -Vec3::Y);
            let spot = if (case / 8) % 2 == 0 {
                vector(1.2)
            } else {
                let edge = (case / 4) % 3;
                let (from, to) = (triangle[edge], triangle[(edge + 1) % 3]);
                from.lerp(to, 0.5 + vector(0.5).x) + vector(0.04)
            };
            let n = (b - a).cross(c - a);
            let plane = a.y - (n.x * (spot.x - a.x) + n.z * (spot.z - a.z)) / n.y;
            pose.translation = Vec3::new(spot.x, plane + vector(0.03).y, spot.z) - lowest;
            let reach = 0.02;
            let shape = Triangle::new(a, b, c);
            let shape = if case % 8 < 4 {
                shape
            } else {
                Triangle::new(a, c, b)
            };
            // The pair's first shape at the origin: the core or the triangle.
            let pos12 = pose.inverse();
            let (cores, gjk) = if case % 2 == 0 {
                let cores = OverFace {
                    core,
                    core_pose: None,
                    triangle: triangle.map(|v| pos12 * v),
                };
                (cores, contact_points(&pos12, core, &shape, reach, Vec3::X))
            } else {
                let cores = OverFace {
                    core,
                    core_pose: Some(&pose),
                    triangle,
                };
                (cores, contact_points(&pose, &shape, core, reach, Vec3::X))
            };
            cases += 1;
            if let Some(found) = cores.closest(reach) {
                answered += 1;
                check(&cores, found, gjk);
            }
        }
        (answered, cases)
    }

    /// How far the core lies beyond the triangle along unit `u` (negative: how far it would
    /// have to move along `u` to clear it), in f64.
    fn separation(cores: &OverFace, u: Vec3) -> f64 {
        let dot = |a: Vec3, b: Vec3| {
            f64::from(a.x) * f64::from(b.x)
                + f64::from(a.y) * f64::from(b.y)
                + f64::from(a.z) * f64::from(b.z)
        };
        let core = dot(u, cores.support(-u));
        let triangle = cores.triangle.map(|v| dot(u, v));
        core - triangle.into_iter().fold(f64::MIN, f64::max)
    }

    #[test]
    fn proven_answers_are_the_shapes_least_separation() {
        // The signed distance of two convex shapes is their greatest separation over all
        // directions, and an overlap's depth the least move that clears it. Where the shortcut
        // answers, its gap along its normal is that separation exactly (to f32 rounding of
        // metre-sized coordinates), and no other direction, sampled near the normal and over
        // the sphere, separates the shapes by more. GJK agrees on apart or not, and its
        // direction lies within √(2 · 1.1e-3) rad of the normal (its stopping gap).
        let mut vector = random_vectors(0x1656_67b1);
        let (mut apart, mut separated, mut overlapping) = (0, 0, 0);
        let (answered, cases) = over_a_triangle(|cores, found, gjk| {
            let (normal, gap) = match (found, gjk) {
                (GJKResult::NoIntersection(_), GJKResult::NoIntersection(_)) => {
                    apart += 1;
                    return;
                }
                (
                    GJKResult::ClosestPoints(p1, p2, dir),
                    GJKResult::ClosestPoints(_, _, gjk_dir),
                ) => {
                    assert!(
                        dir.dot(gjk_dir) > 0.047f32.cos(),
                        "{dir} against GJK's {gjk_dir}"
                    );
                    (dir, f64::from((p2 - p1).dot(dir)))
                }
                other => panic!("the shortcut and GJK disagree: {other:?}"),
            };
            // From the triangle toward the core.
            let toward_core = if cores.core_pose.is_none() {
                -normal
            } else {
                normal
            };
            let along = separation(cores, toward_core);
            assert!(
                (along - gap).abs() < 1e-5,
                "gap {gap}, separation along it {along}"
            );
            for k in 0..400 {
                let spread = [1e-3, 1e-2, 0.1, 1.0, 10.0][k % 5];
                let u = (toward_core + vector(spread)).normalize();
                let other = separation(cores, u);
                assert!(
                    other <= gap + 1e-5,
                    "{u} separates by {other}, more than {gap}"
                );
            }
            if gap < 0.0 {
                overlapping += 1;
            } else {
                separated += 1;
            }
        });
        assert!(
            apart > 200 && separated > 200 && overlapping > 200,
            "{answered} of {cases} answered: {apart} apart, {separated} separated, \
             {overlapping} overlapping"
        );
    }

    #[test]
    fn a_shape_over_an_edge_is_left_to_gjk() {
        // A box sunk 1 cm into the triangle, all of it but 5 mm beyond an edge: it leaves the
        // triangle sideways for less, and the proof fails.
        let core = Cuboid::new(Vec3::splat(0.2));
        let triangle = [
            Vec3::ZERO,
            Vec3::new(0.0, 0.0, 2.0),
            Vec3::new(2.0, 0.0, 0.0),
        ];
        let pose = Pose::from_translation(Vec3::new(-0.195, 0.19, 1.0));
        let cores = OverFace {
            core: &core,
            core_pose: Some(&pose),
            triangle,
        };
        assert!(cores.closest(0.02).is_none());
        // Half a metre inside, the same box is proven: 1 cm deep along the normal.
        let pose = Pose::from_translation(Vec3::new(0.7, 0.19, 0.7));
        let cores = OverFace {
            core: &core,
            core_pose: Some(&pose),
            triangle,
        };
        let Some(GJKResult::ClosestPoints(p1, p2, dir)) = cores.closest(0.02) else {
            panic!("expected the proof to hold");
        };
        assert!((dir - Vec3::Y).length() < 1e-6 && ((p2 - p1).dot(dir) + 0.01).abs() < 1e-6);
    }

    #[test]
    fn the_start_direction_shows_a_ball_beside_the_triangle_apart() {
        // A ball lies apart from a convex set by its centre's distance to the set less its
        // radius, along the line from the set's nearest point to the centre (its support along
        // unit u is the centre plus r·u). So along the start direction the ball's gap must be
        // exactly that, also beside an edge or a corner with the centre within a radius of the
        // face's plane, where the plane does not separate them; and GJK, started there, must
        // answer from its first support point that they are apart.
        let mut vector = random_vectors(0x7f4a_7c15);
        let corners = [
            Vec3::new(-1.0, 0.0, -1.0),
            Vec3::new(1.2, 0.2, -0.8),
            Vec3::new(0.1, -0.1, 1.1),
        ];
        let triangle = Triangle::new(corners[0], corners[1], corners[2]);
        let normal = triangle.normal().unwrap();
        let (reach, mut beside) = (0.02, 0);
        for case in 0..4_000 {
            let radius = 0.1 + vector(0.3).x.abs();
            let centre = Vec3::new(vector(2.0).x, vector(0.4).y, vector(2.0).z);
            let nearest = triangle.project_local_point(centre, true).point;
            let gap = f64::from(centre.distance(nearest)) - f64::from(radius);
            let ball = Ball::new(radius);
            let pose = Pose::from_translation(centre);
            let cores = if case % 2 == 0 {
                OverFace {
                    core: &ball,
                    core_pose: None,
                    triangle: corners.map(|v| v - centre),
                }
            } else {
                OverFace {
                    core: &ball,
                    core_pose: Some(&pose),
                    triangle: corners,
                }
            };
            let Some(start) = cores.start() else {
                continue;
            };
            let toward_core = if cores.core_pose.is_none() {
                -start
            } else {
                start
            };
            if gap <= f64::from(reach) {
                continue;
            }
            // The nearest point is rounded to f32 (about 1e-7 m at these metre-sized
            // coordinates), which turns the direction by up to about 1e-6 rad at the least
            // distance here (0.12 m) and moves the triangle's support along it by that times
            // its 2 m extent: well under 1e-5 m.
            let along = separation(&cores, toward_core);
            assert!(
                (along - gap).abs() < 1e-5,
                "gap {gap}, along the start {along}"
            );
            if normal.dot(centre - corners[0]).abs() < radius {
                beside += 1;
                let answer = if cores.core_pose.is_none() {
                    contact_points(&Pose::IDENTITY, &ball, &triangle_at(&cores), reach, start)
                } else {
                    contact_points(&pose, &triangle, &ball, reach, start)
                };
                assert_eq!(answer, GJKResult::NoIntersection(start), "case {case}");
            }
        }
        assert!(beside > 300, "{beside} balls apart beside the triangle");
    }

    /// The triangle of `cores`, in the first shape's frame.
    fn triangle_at(cores: &OverFace) -> Triangle {
        let [a, b, c] = cores.triangle;
        Triangle::new(a, b, c)
    }
}
