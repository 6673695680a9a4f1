//! Box–box contact manifolds: parry's separating-axis test and the face clipping of
//! [`clip`](super::clip), with the reference feature chosen with a bias, as Box2D does
//! (Catto, "Contact Manifolds", GDC 2007; D. Gregorius, "The Separating Axis Test between
//! Convex Polyhedra", GDC 2013).
//!
//! The axis of least penetration decides which features are clipped: a face of the first box,
//! a face of the second, or an edge of each. parry takes the strict maximum, so where two
//! axes separate the boxes by nearly the same distance, which is what boxes resting face on
//! face in a pile do, the choice flips from one rebuild to the next (a face pair of four points
//! one step, a single edge point the next), the contact points and their warm-start impulses
//! jump, and a pile of boxes never comes to rest. Here the first box's face is kept unless the
//! second's separates the boxes by more than a tolerance, and faces are kept unless the edges
//! separate them by more than it.
//!
//! A pair found apart keeps the axis that separated them in its empty manifold's normal, and
//! the next build first measures the separation along that axis alone: while it still
//! exceeds the prediction distance the boxes cannot touch and the other fourteen axes are not
//! tested. Boxes near each other in a pile or a tumbling heap, whose bounding boxes overlap
//! while they are apart, are many of the pairs, and from one step to the next the axis that
//! separated them mostly still does.

use bevy::math::Vec3;
use parry3d::math::Pose;
use parry3d::query::sat;
use parry3d::shape::Cuboid;

use super::clip::face_face_contacts;
use super::contacts::Manifold;
use super::polygonal::rebuild_points;

/// Rebuilds `manifold` between boxes `cuboid1` and `cuboid2` (`pos12`: the second box's pose
/// in the first's frame), with points up to `prediction` apart; `bias` is how much more an
/// axis must separate the boxes to replace the preferred one (m).
pub(crate) fn box_box_manifold(
    pos12: &Pose,
    cuboid1: &Cuboid,
    cuboid2: &Cuboid,
    prediction: f32,
    bias: f32,
    manifold: &mut Manifold,
) {
    if manifold.points.is_empty()
        && separation(pos12, cuboid1, cuboid2, manifold.local_n1) > prediction
    {
        return;
    }
    // The first axis found to separate the boxes by more than the prediction distance ends the
    // search, and is kept for the next build.
    let apart = |manifold: &mut Manifold, (gap, axis): (f32, Vec3)| {
        let apart = gap > prediction;
        if apart {
            manifold.clear();
            manifold.local_n1 = axis;
        }
        apart
    };
    let face1 = sat::cuboid_cuboid_find_local_separating_normal_oneway(cuboid1, cuboid2, pos12);
    if apart(manifold, face1) {
        return;
    }
    let pos21 = pos12.inverse();
    let face2 = sat::cuboid_cuboid_find_local_separating_normal_oneway(cuboid2, cuboid1, &pos21);
    let face2 = (face2.0, pos12.rotation * -face2.1);
    if apart(manifold, face2) {
        return;
    }
    let edge = sat::cuboid_cuboid_find_local_separating_edge_twoway(cuboid1, cuboid2, pos12);
    if apart(manifold, edge) {
        return;
    }
    let mut best = face1;
    if face2.0 > face1.0 + bias {
        best = face2;
    }
    if edge.0 > best.0 + bias {
        best = edge;
    }
    let local_n2 = pos21.rotation * -best.1;
    rebuild_points(manifold, |manifold| {
        let feature1 = cuboid1.support_feature(best.1);
        let feature2 = cuboid2.support_feature(local_n2);
        face_face_contacts(pos12, best.1, &feature1, &feature2, prediction, manifold);
    });
    manifold.local_n1 = best.1;
    manifold.local_n2 = local_n2;
}

/// How far apart the boxes are along `axis` (in box 1's frame, from box 1 towards box 2; any
/// length, zero for none): a lower bound of their distance when positive, never more than it.
fn separation(pos12: &Pose, cuboid1: &Cuboid, cuboid2: &Cuboid, axis: Vec3) -> f32 {
    let Some(axis) = axis.try_normalize() else {
        return f32::NEG_INFINITY;
    };
    let reach1 = cuboid1.half_extents.dot(axis.abs());
    let reach2 = cuboid2
        .half_extents
        .dot((pos12.rotation.inverse() * axis).abs());
    axis.dot(pos12.translation) - reach1 - reach2
}

#[cfg(test)]
// Tests build their scenes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use bevy::math::Quat;

    /// A unit box resting on another, 1 mm into it, tilted by `tilt` about the horizontal
    /// `axis`: the manifold is the lower box's top face against the upper box's bottom face,
    /// four points, whichever way the tilt leans.
    fn resting(tilt: f32, axis: Vec3, bias: f32) -> (Vec3, usize) {
        let cube = Cuboid::new(Vec3::splat(0.5));
        let pos12 = Pose::from_parts(
            Vec3::new(0.0, 0.999, 0.0),
            Quat::from_axis_angle(axis, tilt),
        );
        let mut manifold = Manifold::with_data(0, 0, Default::default());
        box_box_manifold(&pos12, &cube, &cube, 0.01, bias, &mut manifold);
        (manifold.local_n1, manifold.points.len())
    }

    #[test]
    fn a_box_resting_on_a_box_keeps_the_lower_face_as_reference() {
        // Box2D's bias for the default 5 mm linear slop.
        let bias = 0.1 * 0.005;
        for tilt in [1e-5, -1e-5, 1e-4, -1e-4, 1e-3, -1e-3] {
            for axis in [Vec3::X, Vec3::Z, Vec3::new(1.0, 0.0, 1.0).normalize()] {
                let (normal, points) = resting(tilt, axis, bias);
                assert_eq!(normal, Vec3::Y, "tilt {tilt} about {axis}");
                assert_eq!(points, 4, "tilt {tilt} about {axis}");
            }
        }
    }

    /// A box pair's points: where they are on both boxes, how deep, and their features.
    fn points(manifold: &Manifold) -> Vec<(Vec3, Vec3, f32, u32, u32)> {
        (manifold.points.iter())
            .map(|c| (c.local_p1, c.local_p2, c.dist, c.fid1.0, c.fid2.0))
            .collect()
    }

    #[test]
    fn a_kept_separating_axis_changes_no_manifold() {
        // Boxes of 0.2–1 m placed within 1.5 m of each other and turned at random, built once
        // at a pose and again 1 cm and 0.02 rad on from it: the second build, which may end at
        // the axis kept from the first, gives the same points as a build from scratch, and the
        // kept axis ends many of them.
        let mut vector = crate::collision::random_vectors(0x2545_f491);
        let (prediction, bias) = (0.02, 0.1 * 0.005);
        let (mut ended_early, mut touching) = (0, 0);
        for _ in 0..20_000 {
            let (half1, half2) = (vector(0.5).abs() + 0.1, vector(0.5).abs() + 0.1);
            let axis = vector(1.0).normalize_or(Vec3::Y);
            let angle = vector(3.15).x + 3.15;
            let start = Pose::from_parts(vector(0.75), Quat::from_axis_angle(axis, angle));
            let nudge = Pose::from_parts(
                vector(0.01 / 3f32.sqrt()),
                Quat::from_axis_angle(axis, 0.02),
            );
            let (cuboid1, cuboid2) = (Cuboid::new(half1), Cuboid::new(half2));
            let later = start * nudge;
            let mut kept = Manifold::with_data(0, 0, Default::default());
            box_box_manifold(&start, &cuboid1, &cuboid2, prediction, bias, &mut kept);
            let axis_kept = kept.points.is_empty()
                && separation(&later, &cuboid1, &cuboid2, kept.local_n1) > prediction;
            box_box_manifold(&later, &cuboid1, &cuboid2, prediction, bias, &mut kept);
            let mut fresh = Manifold::with_data(0, 0, Default::default());
            box_box_manifold(&later, &cuboid1, &cuboid2, prediction, bias, &mut fresh);
            assert_eq!(points(&kept), points(&fresh), "{half1} {half2} {later:?}");
            ended_early += usize::from(axis_kept);
            touching += usize::from(!fresh.points.is_empty());
        }
        assert!(
            ended_early > 2_000 && touching > 2_000,
            "{ended_early} ended at the kept axis, {touching} touching"
        );
    }
}
