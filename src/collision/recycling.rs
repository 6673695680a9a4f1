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
//! - A ball, capsule or cylinder on a shape without curved surfaces keeps the normal, fixed in
//!   that shape's frame, and its own point is put back each step where its surface meets that
//!   normal (the lowest point of a ball on the ground, the line a lying cylinder touches
//!   along). A point carried round with a rolling body would leave the lowest point: a
//!   cylinder lying on the ground rocked on its carried points and rolled away at 0.4 m/s
//!   within 10 s. On a face, the normal a fresh manifold gets from parry's GJK/EPA is off the
//!   face's by a fraction of a milliradian (0.2–0.5 mrad seen for a capsule against a box) and
//!   moves with the solver's noise; it is snapped to the face's normal (when within
//!   [`FACE_TILT`]), so that a resting cylinder's line of contact stays where it is. On an
//!   edge or a corner the normal is kept as built. parry hands a box's, a hull's or a
//!   triangle's face over for every normal, so an edge or a corner is told by the points: all
//!   within [`EDGE_REACH`] of that face's boundary. A normal tilted from a face with a point
//!   inside it is a noisy GJK/EPA normal, and the pair is built afresh.
//! - Two of those curved shapes keep the normal fixed in collider 1's frame, and both points
//!   are put back where their surfaces meet it. While the pair moves less than the recycling
//!   bounds the normal is off the true one by at most the slide over the radii (1 cm over
//!   the sum of the radii: 0.02 rad for two 0.25 m balls), and the distance by the second
//!   order of that (0.1 mm for those balls), well inside the contact tolerances; fresh
//!   GJK/EPA normals, by contrast, move with the solver's noise every step.
//! - Every other pair (a cone, a compound with a curved part) is built afresh every step, and
//!   so is a curved shape touching a kinematic body: a character controller's push model,
//!   which shares a pushing body's closing speed step by step, is tuned against freshly built
//!   contacts, and with snapped normals its pushes came out up to two steps' travel longer.

use bevy::math::Vec3;
use parry3d::math::Pose;
use parry3d::query::TrackedContact;
use parry3d::shape::{PolygonalFeature, Shape, TypedShape};
use smallvec::SmallVec;

use super::broad_phase::{ColliderProxy, ProxyKind};
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
    /// A curved shape on one without curved surfaces (`true`: collider 1 is the flat one):
    /// the normal stays fixed in the flat collider's frame.
    OnFlat { flat_is_first: bool },
    /// Two curved shapes: the normal stays fixed in collider 1's frame.
    OnRound,
}

/// Shapes without curved surfaces: boxes, convex hulls, triangles and meshes, compounds of
/// those. A pass over a compound's parts: the broad phase keeps the answer with each collider
/// ([`ColliderProxy::polyhedral`]).
pub(crate) fn is_polyhedral(shape: &dyn Shape) -> bool {
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

/// Decides how freshly built manifolds of the colliders of `p1` and `p2` will be recycled,
/// snapping a curved shape's normal onto the face it rests on (see the module docs).
pub(crate) fn classify(
    manifolds: &mut [Manifold],
    pos12: &Pose,
    p1: &ColliderProxy,
    p2: &ColliderProxy,
) -> Recycling {
    if p1.polyhedral && p2.polyhedral {
        return Recycling::Anchored;
    }
    if p1.kind == ProxyKind::Kinematic || p2.kind == ProxyKind::Kinematic {
        return Recycling::Never;
    }
    let (shape1, shape2) = (&*p1.shape, &*p2.shape);
    match (is_round(shape1), is_round(shape2)) {
        (true, true) => {
            // On faces of the other (a cylinder's cap), as on a shape without curved surfaces.
            for flat_is_first in [true, false] {
                let flat = if flat_is_first { shape1 } else { shape2 };
                let features = features_met(manifolds, flat, flat_is_first);
                if all_faces(manifolds, &features) {
                    hold_on_flat(manifolds, &features, pos12, (shape1, shape2), flat_is_first);
                    return Recycling::OnFlat { flat_is_first };
                }
            }
            // The points as a recycled step would give them.
            for m in manifolds.iter_mut() {
                rest_on_round(m, pos12, shape1, shape2);
            }
            Recycling::OnRound
        }
        // A curved shape on faces, edges or corners of one without curved surfaces.
        (false, true) | (true, false) => {
            let flat_is_first = !is_round(shape1);
            let (flat, polyhedral) = if flat_is_first {
                (shape1, p1.polyhedral)
            } else {
                (shape2, p2.polyhedral)
            };
            if !polyhedral {
                return Recycling::Never;
            }
            let features = features_met(manifolds, flat, flat_is_first);
            if touching(manifolds, &features).any(|feature| feature == Feature::TiltedFace) {
                return Recycling::Never;
            }
            hold_on_flat(manifolds, &features, pos12, (shape1, shape2), flat_is_first);
            Recycling::OnFlat { flat_is_first }
        }
        (false, false) => Recycling::Never,
    }
}

/// Snaps the normals that meet faces of the flat collider to them (`features`: what each
/// manifold's normal meets) and puts the points where a recycled step would.
fn hold_on_flat(
    manifolds: &mut [Manifold],
    features: &[Feature],
    pos12: &Pose,
    (shape1, shape2): (&dyn Shape, &dyn Shape),
    flat_is_first: bool,
) {
    let round = if flat_is_first { shape2 } else { shape1 };
    for (m, feature) in manifolds.iter_mut().zip(features) {
        if let Feature::Face(face) = *feature {
            *if flat_is_first {
                &mut m.local_n1
            } else {
                &mut m.local_n2
            } = face;
        }
        rest_on_flat(m, pos12, round, flat_is_first);
    }
}

/// What the normal of each manifold meets on `flat` (collider 1 if `flat_is_first`).
fn features_met(
    manifolds: &[Manifold],
    flat: &dyn Shape,
    flat_is_first: bool,
) -> SmallVec<[Feature; 8]> {
    (manifolds.iter())
        .map(|m| feature_met(flat, m, flat_is_first))
        .collect()
}

/// True if there are manifolds with points and every one meets a face.
fn all_faces(manifolds: &[Manifold], features: &[Feature]) -> bool {
    let mut touching = touching(manifolds, features).peekable();
    touching.peek().is_some() && touching.all(|feature| matches!(feature, Feature::Face(_)))
}

/// The features of the manifolds with points.
fn touching<'a>(
    manifolds: &'a [Manifold],
    features: &'a [Feature],
) -> impl Iterator<Item = Feature> + 'a {
    (manifolds.iter().zip(features))
        .filter(|(m, _)| !m.points.is_empty())
        .map(|(_, feature)| *feature)
}

/// Balls, capsules and cylinders: the curved shapes whose surface point along a normal
/// [`surface_point`] knows.
fn is_round(shape: &dyn Shape) -> bool {
    matches!(
        shape.as_typed_shape(),
        TypedShape::Ball(_) | TypedShape::Capsule(_) | TypedShape::Cylinder(_)
    )
}

/// What a contact normal meets on a shape without curved surfaces.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Feature {
    /// A face whose normal (given) is within [`FACE_TILT`] of it.
    Face(Vec3),
    /// An edge or a corner: the normal is the pair's own.
    EdgeOrCorner,
    /// A face the normal is tilted from by more than [`FACE_TILT`], or a degenerate one: a
    /// normal from a deep or noisy GJK/EPA solve, not to be kept.
    TiltedFace,
}

/// What the normal of `m` meets on `flat` (collider 1 if `flat_is_first`), in the frame of the
/// part the manifold touches.
fn feature_met(flat: &dyn Shape, m: &Manifold, flat_is_first: bool) -> Feature {
    let (subshape, normal) = if flat_is_first {
        (m.subshape1, m.local_n1)
    } else {
        (m.subshape2, m.local_n2)
    };
    let witnesses = || {
        let side = move |c: &TrackedContact<f32>| {
            if flat_is_first {
                c.local_p1
            } else {
                c.local_p2
            }
        };
        m.points.iter().map(side)
    };
    let mut found = Feature::TiltedFace;
    let check = |part: &dyn Shape| {
        let Some((map, _)) = part.as_polygonal_feature_map() else {
            return Feature::TiltedFace;
        };
        let mut feature = PolygonalFeature::default();
        map.local_support_feature(normal, &mut feature);
        if feature.num_vertices < 3 {
            return Feature::EdgeOrCorner;
        }
        let [a, b, c, _] = feature.vertices;
        let face = (b - a).cross(c - a).normalize_or_zero();
        let face = if face.dot(normal) < 0.0 { -face } else { face };
        // A degenerate face (zero normal) passes the tilt test but not this.
        let along = face.dot(normal) > 0.0;
        if along && face.cross(normal).length_squared() < FACE_TILT * FACE_TILT {
            Feature::Face(face)
        } else if along && witnesses().all(|w| on_boundary(&feature, w)) {
            // parry hands a box's, a hull's or a triangle's face over for every normal. Off
            // the face's normal with every point on its boundary, the normal meets one of its
            // edges or corners (a ball on a box's edge, on a terrain's ridge); with a point
            // inside the face, it is a noisy normal.
            Feature::EdgeOrCorner
        } else {
            Feature::TiltedFace
        }
    };
    match (flat.as_composite_shape(), flat.as_heightfield()) {
        (Some(composite), _) => composite.map_part_at(subshape, &mut |_, part, _| {
            found = check(part);
        }),
        // A heightfield is not a composite shape to parry; its parts are its triangles.
        (None, Some(field)) => {
            if let Some(triangle) = field.triangle_at_id(subshape) {
                found = check(&triangle);
            }
        }
        (None, None) => found = check(flat),
    }
    found
}

/// How far (m) a contact point may be from the boundary of the face parry hands over for its
/// normal to count as on an edge or a corner: well above the rounding of a point put on an
/// edge, well below the size of any face.
const EDGE_REACH: f32 = 1e-3;

/// Whether `point` lies within [`EDGE_REACH`] of the boundary of `face` (up to four corners in
/// order round it; a hull's larger face is handed over as its first four).
fn on_boundary(face: &PolygonalFeature, point: Vec3) -> bool {
    let corners = &face.vertices[..face.num_vertices.min(4)];
    (0..corners.len()).any(|i| {
        let (a, b) = (corners[i], corners[(i + 1) % corners.len()]);
        let along = ((point - a).dot(b - a) / (b - a).length_squared().max(f32::MIN_POSITIVE))
            .clamp(0.0, 1.0);
        point.distance_squared(a + (b - a) * along) <= EDGE_REACH * EDGE_REACH
    })
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
    // A compound pair keeps an empty manifold for every pair of parts near each other;
    // only those with points have anything to check or update.
    for m in pair.manifolds.iter().filter(|m| !m.points.is_empty()) {
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
    let recycling = pair.recycling;
    for m in pair.manifolds.iter_mut().filter(|m| !m.points.is_empty()) {
        match recycling {
            Recycling::OnFlat { flat_is_first } => {
                let round = if flat_is_first { shape2 } else { shape1 };
                rest_on_flat(m, pos12, round, flat_is_first);
            }
            Recycling::OnRound => rest_on_round(m, pos12, shape1, shape2),
            _ => {
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

/// Puts a manifold's points back on the curved shape `round` resting on the flat collider:
/// the normal stays fixed in the flat collider's frame, each point on `round` moves to where
/// its surface meets that normal, and its partner on the flat collider is its projection.
fn rest_on_flat(m: &mut Manifold, pos12: &Pose, round: &dyn Shape, flat_is_first: bool) {
    let now = relative(m, pos12);
    if flat_is_first {
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

/// Puts a manifold's points back on two curved shapes: the normal stays fixed in collider 1's
/// frame, each point on collider 1 moves to where its surface meets it, the distance is to
/// where collider 2's surface meets it, and collider 2's point is straight across along the
/// normal, so that the pair pushes along the line through collider 1's point (a ball is not
/// set spinning by a normal that lags).
fn rest_on_round(m: &mut Manifold, pos12: &Pose, round1: &dyn Shape, round2: &dyn Shape) {
    let now = relative(m, pos12);
    let n1 = m.local_n1;
    let n2 = now.rotation.inverse() * -n1;
    m.local_n2 = n2;
    let back = now.inverse();
    for pt in &mut m.points {
        pt.local_p1 = surface_point(round1, n1, pt.local_p1);
        let p2 = now * surface_point(round2, n2, pt.local_p2);
        pt.dist = (p2 - pt.local_p1).dot(n1);
        pt.local_p2 = back * (pt.local_p1 + n1 * pt.dist);
    }
}

#[cfg(test)]
// Tests build their scenes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use parry3d::query::PersistentQueryDispatcher;
    use parry3d::shape::{HeightField, SharedShape};

    use super::*;
    use crate::collision::dispatcher::Dispatcher;
    use crate::collision::field_as_mesh;

    /// A 2 × 1-cell ridge along z at x = 0, each side sloping down by 0.2 over 1 m, as a
    /// heightfield and as a mesh of the same triangles.
    fn ridges() -> [SharedShape; 2] {
        // Column-major: a column of two samples along z for each x.
        let heights = [0.0, 0.0, 0.2, 0.2, 0.0, 0.0];
        let field = HeightField::new(
            parry3d::utils::Array2::new(2, 3, heights.to_vec()),
            Vec3::new(2.0, 1.0, 1.0),
        );
        let mesh = field_as_mesh(&field);
        [SharedShape::new(field), SharedShape::new(mesh)]
    }

    /// How the manifolds of `round` (dynamic) touching `flat` at `at` are recycled, the flat
    /// collider as collider 1 or 2.
    fn recycling(flat: &SharedShape, round: SharedShape, at: Vec3) -> [Recycling; 2] {
        recycling_tilted(flat, round, at, 0.0)
    }

    /// [`recycling`] with the normal of every built manifold turned by `tilt` (rad) about x in
    /// the flat collider's frame, as a noisy GJK/EPA solve would give it.
    fn recycling_tilted(
        flat: &SharedShape,
        round: SharedShape,
        at: Vec3,
        tilt: f32,
    ) -> [Recycling; 2] {
        let (mut fixed, mut moving) = (ColliderProxy::new(flat.clone()), ColliderProxy::new(round));
        moving.kind = ProxyKind::Dynamic;
        moving.pose = Pose::from_translation(at);
        fixed.pose = Pose::IDENTITY;
        let turn = bevy::math::Quat::from_rotation_x(tilt);
        [true, false].map(|flat_first| {
            let (p1, p2) = if flat_first {
                (&fixed, &moving)
            } else {
                (&moving, &fixed)
            };
            let pos12 = p1.pose.inv_mul(&p2.pose);
            let (mut manifolds, mut workspace) = (Vec::new(), None);
            Dispatcher { box_bias: 0.0 }
                .contact_manifolds(
                    &pos12,
                    &*p1.shape,
                    &*p2.shape,
                    0.02,
                    &mut manifolds,
                    &mut workspace,
                )
                .unwrap();
            assert!(
                manifolds.iter().any(|m| !m.points.is_empty()),
                "not touching"
            );
            for m in &mut manifolds {
                let normal = if flat_first {
                    &mut m.local_n1
                } else {
                    &mut m.local_n2
                };
                *normal = turn * *normal;
            }
            classify(&mut manifolds, &pos12, p1, p2)
        })
    }

    /// A ball or a lying capsule resting on a terrain's slope (a face) or on its ridge (the
    /// edge between two triangles), on a heightfield or a mesh: both keep the normal in the
    /// terrain's frame. Neither is a tilted face: a triangle's face is what parry hands over
    /// for every normal, and a heightfield's triangles are its parts.
    #[test]
    fn curved_shapes_on_terrain_faces_and_ridges_are_recycled() {
        let radius = 0.3;
        // The slope's unit normal, and the point of the slope 0.5 m from the ridge.
        let normal = Vec3::new(0.2, 1.0, 0.0).normalize();
        let on_slope = Vec3::new(0.5, 0.1, 0.0);
        for terrain in &ridges() {
            for round in [
                SharedShape::ball(radius),
                SharedShape::capsule_z(0.2, radius),
            ] {
                let slope = on_slope + normal * (radius - 0.001);
                let ridge = Vec3::new(0.0, 0.2 + radius - 0.001, 0.0);
                for (at, place) in [(slope, "slope"), (ridge, "ridge")] {
                    for (recycling, terrain_first) in recycling(terrain, round.clone(), at)
                        .into_iter()
                        .zip([true, false])
                    {
                        let expected = Recycling::OnFlat {
                            flat_is_first: terrain_first,
                        };
                        assert_eq!(
                            recycling,
                            expected,
                            "{:?} on the {place}",
                            round.shape_type()
                        );
                    }
                }
            }
        }
    }

    /// A ball on a box's or a hull's edge or corner keeps the normal in the flat shape's frame
    /// (parry hands a face over for every normal; the points on the face's boundary tell an
    /// edge), while a normal tilted from a face with the point inside it is noise and the pair
    /// is built afresh.
    #[test]
    fn balls_on_edges_are_recycled_and_noisy_normals_on_faces_are_not() {
        let radius = 0.3;
        let half = Vec3::new(1.0, 0.5, 0.8);
        let corners: Vec<Vec3> = (0..8)
            .map(|i| {
                half * Vec3::new(
                    [-1.0, 1.0][i & 1],
                    [-1.0, 1.0][(i >> 1) & 1],
                    [-1.0, 1.0][i >> 2],
                )
            })
            .collect();
        let shapes = [
            SharedShape::cuboid(half.x, half.y, half.z),
            SharedShape::convex_hull(&corners).unwrap(),
        ];
        let edge = Vec3::new(half.x, half.y, 0.0);
        let on_edge = edge + Vec3::new(1.0, 1.0, 0.0).normalize() * (radius - 0.001);
        let on_corner = half + Vec3::ONE.normalize() * (radius - 0.001);
        let on_face = Vec3::new(0.2, half.y + radius - 0.001, 0.1);
        for flat in &shapes {
            for (at, place) in [(on_edge, "edge"), (on_corner, "corner")] {
                let expected =
                    [true, false].map(|flat_is_first| Recycling::OnFlat { flat_is_first });
                assert_eq!(
                    recycling(flat, SharedShape::ball(radius), at),
                    expected,
                    "{:?}, {place}",
                    flat.shape_type()
                );
            }
            assert_eq!(
                recycling_tilted(flat, SharedShape::ball(radius), on_face, 0.1),
                [Recycling::Never; 2],
                "{:?}, a tilted normal inside a face",
                flat.shape_type()
            );
        }
    }
}
