//! Box–box contact manifolds: parry's separating-axis test and face clipping, with the
//! reference feature chosen with a bias, as Box2D does (Catto, "Contact Manifolds", GDC 2007;
//! D. Gregorius, "The Separating Axis Test between Convex Polyhedra", GDC 2013).
//!
//! The axis of least penetration decides which features are clipped: a face of the first box,
//! a face of the second, or an edge of each. parry takes the strict maximum, so where two
//! axes separate the boxes by nearly the same distance, which is what boxes resting face on
//! face in a pile do, the choice flips from one rebuild to the next (a face pair of four points
//! one step, a single edge point the next), the contact points and their warm-start impulses
//! jump, and a pile of boxes never comes to rest. Here the first box's face is kept unless the
//! second's separates the boxes by more than a tolerance, and faces are kept unless the edges
//! separate them by more than it.

use parry3d::math::Pose;
use parry3d::query::sat;
use parry3d::shape::{Cuboid, PolygonalFeature};

use super::contacts::Manifold;

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
    let pos21 = pos12.inverse();
    let face1 = sat::cuboid_cuboid_find_local_separating_normal_oneway(cuboid1, cuboid2, pos12);
    let face2 = sat::cuboid_cuboid_find_local_separating_normal_oneway(cuboid2, cuboid1, &pos21);
    let edge = sat::cuboid_cuboid_find_local_separating_edge_twoway(cuboid1, cuboid2, pos12);
    if face1.0.max(face2.0).max(edge.0) > prediction {
        manifold.clear();
        return;
    }
    let mut best = face1;
    if face2.0 > face1.0 + bias {
        best = (face2.0, pos12.rotation * -face2.1);
    }
    if edge.0 > best.0 + bias {
        best = edge;
    }
    let old = manifold.points.clone();
    manifold.clear();
    let local_n2 = pos21.rotation * -best.1;
    let feature1 = cuboid1.support_feature(best.1);
    let feature2 = cuboid2.support_feature(local_n2);
    PolygonalFeature::contacts(
        pos12, &pos21, best.1, local_n2, &feature1, &feature2, manifold, false,
    );
    manifold.local_n1 = best.1;
    manifold.local_n2 = local_n2;
    manifold.match_contacts(&old);
}

#[cfg(test)]
// Tests build their scenes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;
    use bevy::math::{Quat, Vec3};

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
}
