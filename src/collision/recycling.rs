//! Contact recycling: a pair whose colliders moved little relative to each other since its
//! manifolds were built keeps them, and only the points' distances along the normal are
//! recomputed, the same linearisation the substeps use. This is Box2D v3's and Box3D's contact
//! recycling (Catto, "Solver2D", 2024; Box3D's `b3Collide`), bounded here by each point's own
//! slide and by the relative rotation since the manifolds were built, so that a slow slide or
//! turn gets fresh points once it adds up.
//!
//! How a point follows the motion depends on the shapes:
//!
//! - Between shapes without curved surfaces (boxes, hulls, triangles, meshes, heightfields,
//!   compounds of those) each point keeps its anchors on both colliders: they sit on corners
//!   and edges that turn with the bodies.
//! - A ball, capsule or cylinder resting on a flat face keeps the face's normal, fixed in the
//!   face's frame, and its own point is put back each step where its surface meets that normal
//!   (the lowest point of a ball on the ground, the line a lying cylinder touches along). A
//!   point carried round with a rolling body would leave the lowest point: a cylinder lying on
//!   the ground rocked on its carried points and rolled away at 0.4 m/s within 10 s. The
//!   normal a fresh manifold gets from parry's GJK/EPA is off the face's by a fraction of a
//!   milliradian (0.2–0.5 mrad seen for a capsule against a box) and moves with the solver's
//!   noise; it is snapped to the face's normal (when within [`FACE_TILT`]), so that a resting
//!   cylinder's line of contact stays where it is.
//! - Every other pair (two curved surfaces, a curved surface on an edge or a corner) is built
//!   afresh every step, and so is a curved shape touching a kinematic body: a character
//!   controller's push model, which shares a pushing body's closing speed step by step, is
//!   tuned against freshly built contacts, and with snapped normals its pushes came out up to
//!   two steps' travel longer.

use bevy::math::Vec3;
use parry3d::math::Pose;
use parry3d::shape::{PolygonalFeature, Shape, TypedShape};

use super::contacts::{ContactPair, Manifold};

/// The largest distance (m) a contact point may have moved against the other collider since
/// its manifold was built, for the manifold to be recycled.
const RECYCLE_DISTANCE: f32 = 0.01;

/// sin(θ / 2) of the largest relative rotation θ since the manifolds were built for which they
/// are recycled (0.05 rad).
const RECYCLE_TURN: f32 = 0.025;

/// Sine of the largest angle between a fresh manifold's normal and a face's normal for the
/// normal to be taken as the face's.
const FACE_TILT: f32 = 0.02;

/// How a pair's manifolds are recycled (see the module docs); set when they are built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Recycling {
    /// Built afresh every step.
    #[default]
    Never,
    /// Both shapes without curved surfaces: the points keep their anchors on both colliders.
    Anchored,
    /// A curved shape on a face of the other collider (`true`: collider 1's face).
    OnFace { face_is_first: bool },
}

/// Shapes without curved surfaces: boxes, convex hulls, triangles and meshes, compounds of
/// those.
fn is_polyhedral(shape: &dyn Shape) -> bool {
    match shape.as_typed_shape() {
        TypedShape::Cuboid(_)
        | TypedShape::ConvexPolyhedron(_)
        | TypedShape::Triangle(_)
        | TypedShape::TriMesh(_)
        | TypedShape::HeightField(_) => true,
        TypedShape::Compound(compound) => compound
            .shapes()
            .iter()
            .all(|(_, part)| is_polyhedral(&**part)),
        _ => false,
    }
}

/// Decides how freshly built manifolds of `shape1` and `shape2` (`kinematic`: one is on a
/// kinematic body) will be recycled, snapping a curved shape's normal onto the face it rests
/// on (see the module docs).
pub(crate) fn classify(
    manifolds: &mut [Manifold],
    pos12: &Pose,
    shape1: &dyn Shape,
    shape2: &dyn Shape,
    kinematic: bool,
) -> Recycling {
    if is_polyhedral(shape1) && is_polyhedral(shape2) {
        return Recycling::Anchored;
    }
    if kinematic {
        return Recycling::Never;
    }
    for face_is_first in [true, false] {
        let (flat, round) = if face_is_first {
            (shape1, shape2)
        } else {
            (shape2, shape1)
        };
        if is_round(round) && snap_to_faces(manifolds, flat, face_is_first) {
            // The snapped normal and the points on it, as a recycled step would give them.
            for m in manifolds.iter_mut() {
                rest_on_face(m, pos12, round, face_is_first);
            }
            return Recycling::OnFace { face_is_first };
        }
    }
    Recycling::Never
}

/// True if every manifold with points has its normal within [`FACE_TILT`] of a face of
/// `flat` (collider 1 if `face_is_first`), which it is then snapped to; false (and nothing
/// changed) if any meets an edge, a corner or a curved surface, and for more than eight
/// touching manifolds (a shape across that many triangles of a mesh is rebuilt every step).
fn snap_to_faces(manifolds: &mut [Manifold], flat: &dyn Shape, face_is_first: bool) -> bool {
    let mut faces = [Vec3::ZERO; 8];
    let touching = || manifolds.iter().filter(|m| !m.points.is_empty());
    if touching().count() == 0 || touching().count() > faces.len() {
        return false;
    }
    for (face, m) in faces.iter_mut().zip(touching()) {
        let (subshape, normal) = if face_is_first {
            (m.subshape1, m.local_n1)
        } else {
            (m.subshape2, m.local_n2)
        };
        match face_normal(flat, subshape, normal) {
            Some(found) => *face = found,
            None => return false,
        }
    }
    let touching = manifolds.iter_mut().filter(|m| !m.points.is_empty());
    for (face, m) in faces.iter().zip(touching) {
        if face_is_first {
            m.local_n1 = *face;
        } else {
            m.local_n2 = *face;
        }
    }
    true
}

/// Balls, capsules and cylinders: the curved shapes whose surface point along a normal
/// [`surface_point`] knows.
fn is_round(shape: &dyn Shape) -> bool {
    matches!(
        shape.as_typed_shape(),
        TypedShape::Ball(_) | TypedShape::Capsule(_) | TypedShape::Cylinder(_)
    )
}

/// The normal of the face of `flat`'s part `subshape` that `normal` (in that part's frame)
/// is within [`FACE_TILT`] of, pointing the same way; `None` if it meets an edge or a corner.
fn face_normal(flat: &dyn Shape, subshape: u32, normal: Vec3) -> Option<Vec3> {
    let mut found = None;
    let check = |part: &dyn Shape| {
        let (map, _) = part.as_polygonal_feature_map()?;
        let mut feature = PolygonalFeature::default();
        map.local_support_feature(normal, &mut feature);
        if feature.num_vertices < 3 {
            return None;
        }
        let [a, b, c, _] = feature.vertices;
        let face = (b - a).cross(c - a).normalize_or_zero();
        let face = if face.dot(normal) < 0.0 { -face } else { face };
        // A degenerate face (zero normal) passes the tilt test but not this.
        let along = face.dot(normal) > 0.0;
        (along && face.cross(normal).length_squared() < FACE_TILT * FACE_TILT).then_some(face)
    };
    match flat.as_composite_shape() {
        Some(composite) => composite.map_part_at(subshape, &mut |_, part, _| {
            found = check(part);
        }),
        None => found = check(flat),
    }
    found
}

/// The point of `round`'s surface (in its frame) whose outward normal is `normal`, on the
/// line or circle of such points nearest to `near`.
fn surface_point(round: &dyn Shape, normal: Vec3, near: Vec3) -> Vec3 {
    match round.as_typed_shape() {
        TypedShape::Ball(ball) => normal * ball.radius,
        TypedShape::Capsule(capsule) => {
            let (a, b) = (capsule.segment.a, capsule.segment.b);
            let axis = b - a;
            let along = ((near - a).dot(axis) / axis.length_squared().max(f32::MIN_POSITIVE))
                .clamp(0.0, 1.0);
            a + axis * along + normal * capsule.radius
        }
        TypedShape::Cylinder(cylinder) => {
            let across = Vec3::new(normal.x, 0.0, normal.z);
            // On a cap (its flat face) the point stays where it was built, like a box's.
            if across.length_squared() < FACE_TILT * FACE_TILT {
                return near;
            }
            let height = cylinder.half_height;
            across.normalize() * cylinder.radius + Vec3::Y * near.y.clamp(-height, height)
        }
        _ => near,
    }
}

/// Recycles a pair's manifolds if its colliders moved little relative to each other since
/// they were built (see the module docs and [`Recycling`]): every point, carried along with
/// collider 2, moved less than [`RECYCLE_DISTANCE`] in collider 1's frame and is still within
/// the prediction distance, and the relative rotation is below [`RECYCLE_TURN`]. Returns false
/// (the manifolds must be rebuilt) otherwise, and for a pair without points.
pub(crate) fn recycle(
    pair: &mut ContactPair,
    pos12: &Pose,
    prediction: f32,
    shape1: &dyn Shape,
    shape2: &dyn Shape,
) -> bool {
    if pair.recycling == Recycling::Never {
        return false;
    }
    let turn = pair.built_at.rotation.inverse() * pos12.rotation;
    // False for a new pair too: its `built_at` is NaN.
    let turned_little = turn.xyz().length_squared() < RECYCLE_TURN * RECYCLE_TURN;
    if !turned_little || pair.manifolds.iter().all(|m| m.points.is_empty()) {
        return false;
    }
    let limit = RECYCLE_DISTANCE * RECYCLE_DISTANCE;
    for m in &pair.manifolds {
        let (now, then) = (relative(m, pos12), relative(m, &pair.built_at));
        for pt in &m.points {
            let p2 = now * pt.local_p2;
            if p2.distance_squared(then * pt.local_p2) > limit
                || (p2 - pt.local_p1).dot(m.local_n1) > prediction
            {
                return false;
            }
        }
    }
    match pair.recycling {
        Recycling::OnFace { face_is_first } => {
            let round = if face_is_first { shape2 } else { shape1 };
            for m in &mut pair.manifolds {
                rest_on_face(m, pos12, round, face_is_first);
            }
        }
        _ => {
            for m in &mut pair.manifolds {
                let now = relative(m, pos12);
                for pt in &mut m.points {
                    pt.dist = (now * pt.local_p2 - pt.local_p1).dot(m.local_n1);
                }
            }
        }
    }
    true
}

/// Collider 2's subshape in collider 1's subshape's frame.
fn relative(m: &Manifold, pos12: &Pose) -> Pose {
    let inner = m.subshape_pos2.map_or(*pos12, |p2| *pos12 * p2);
    m.subshape_pos1.map_or(inner, |p1| p1.inv_mul(&inner))
}

/// Puts a manifold's points back on the curved shape `round` resting on the other collider's
/// face: the face's normal stays fixed in the face's frame, each point on `round` moves to
/// where its surface meets that normal, and its partner on the face is its projection.
fn rest_on_face(m: &mut Manifold, pos12: &Pose, round: &dyn Shape, face_is_first: bool) {
    let now = relative(m, pos12);
    if face_is_first {
        let n1 = m.local_n1;
        let n2 = now.rotation.inverse() * -n1;
        m.local_n2 = n2;
        for pt in &mut m.points {
            pt.local_p2 = surface_point(round, n2, pt.local_p2);
            let p2 = now * pt.local_p2;
            pt.dist = (p2 - pt.local_p1).dot(n1);
            pt.local_p1 = p2 - n1 * pt.dist;
        }
    } else {
        let n2 = m.local_n2;
        let n1 = now.rotation * -n2;
        m.local_n1 = n1;
        let back = now.inverse();
        for pt in &mut m.points {
            pt.local_p1 = surface_point(round, n1, pt.local_p1);
            let p1 = back * pt.local_p1;
            pt.dist = (p1 - pt.local_p2).dot(n2);
            pt.local_p2 = p1 - n2 * pt.dist;
        }
    }
}
