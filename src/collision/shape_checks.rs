//! The checks every collider passes when it is made (see [`Collider`](super::Collider)): the
//! invariants parry relies on (mesh indices within the vertex list, heightfield grids whose
//! size matches their samples, hulls with points), finite and non-negative sizes, a usable
//! extent, and the caps of the [validation table](crate::validation).

use parry3d::shape::{Cylinder, Shape, TypedShape};

use crate::math::{Quaternion, Scalar, Vector};
use crate::validation::{
    MAX_COLLIDER_EXTENT, MAX_COMPOUND_PARTS, MAX_HEIGHTFIELD_SAMPLES, MAX_HULL_POINTS,
    MAX_TRIMESH_ELEMENTS, non_negative,
};

/// Why [`Collider::try_trimesh`](super::Collider::try_trimesh) could not build a triangle mesh.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrimeshError {
    /// There are no triangles.
    NoTriangles,
    /// A triangle names a vertex past the end of the vertex list.
    IndexOutOfRange {
        /// The triangle's position in the index list.
        triangle: usize,
        /// The index it holds.
        index: u32,
        /// How many vertices there are.
        vertices: usize,
    },
    /// A vertex has a NaN or infinite coordinate.
    NonFiniteVertex {
        /// Its position in the vertex list.
        vertex: usize,
    },
    /// More vertices or triangles than [`MAX_TRIMESH_ELEMENTS`].
    TooLarge {
        /// How many vertices there are.
        vertices: usize,
        /// How many triangles there are.
        triangles: usize,
    },
    /// parry refused the mesh, for this reason.
    Rejected(String),
}

impl std::fmt::Display for TrimeshError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoTriangles => write!(f, "it has no triangles"),
            Self::IndexOutOfRange {
                triangle,
                index,
                vertices,
            } => write!(
                f,
                "triangle {triangle} names vertex {index}, but there are {vertices} vertices"
            ),
            Self::NonFiniteVertex { vertex } => write!(f, "vertex {vertex} is not finite"),
            Self::TooLarge {
                vertices,
                triangles,
            } => write!(
                f,
                "{vertices} vertices and {triangles} triangles are more than the \
                 {MAX_TRIMESH_ELEMENTS} of each allowed"
            ),
            Self::Rejected(reason) => write!(f, "parry rejected it: {reason}"),
        }
    }
}

impl std::error::Error for TrimeshError {}

/// Why a triangle mesh of these vertices and triangles cannot be built or used.
pub(crate) fn trimesh_problem(
    vertices: &[Vector],
    indices: &[[u32; 3]],
) -> Result<(), TrimeshError> {
    if indices.is_empty() {
        return Err(TrimeshError::NoTriangles);
    }
    if vertices.len() > MAX_TRIMESH_ELEMENTS || indices.len() > MAX_TRIMESH_ELEMENTS {
        return Err(TrimeshError::TooLarge {
            vertices: vertices.len(),
            triangles: indices.len(),
        });
    }
    if let Some(vertex) = vertices.iter().position(|v| !v.is_finite()) {
        return Err(TrimeshError::NonFiniteVertex { vertex });
    }
    let out_of_range = |t: &[u32; 3]| t.iter().copied().find(|&i| i as usize >= vertices.len());
    match indices
        .iter()
        .enumerate()
        .find_map(|(k, t)| Some((k, out_of_range(t)?)))
    {
        Some((triangle, index)) => Err(TrimeshError::IndexOutOfRange {
            triangle,
            index,
            vertices: vertices.len(),
        }),
        None => Ok(()),
    }
}

/// Why points cannot make a convex hull: none, too many or not finite. (Too few, or flat
/// ones, are found by building the hull.)
pub(crate) fn hull_points_problem(points: &[Vector]) -> Option<String> {
    if points.is_empty() {
        return Some("a convex hull has no points".to_string());
    }
    if points.len() > MAX_HULL_POINTS {
        return Some(format!(
            "a convex hull of {} points is more than the {MAX_HULL_POINTS} allowed",
            points.len()
        ));
    }
    points
        .iter()
        .any(|p| !p.is_finite())
        .then(|| "a convex hull point is not finite".to_string())
}

/// Why sizes cannot be used: one is negative or not finite.
fn sizes_problem(sizes: &[(&str, Scalar)]) -> Option<String> {
    let (name, size) = sizes.iter().find(|(_, size)| !non_negative(*size))?;
    Some(format!("its {name} {size} is not a finite number ≥ 0"))
}

/// Why a parry shape cannot be used: its data breaks an invariant the engine or parry relies
/// on, or it has a non-finite or zero extent.
pub(crate) fn shape_problem(shape: &dyn Shape) -> Option<String> {
    let finite =
        |what: &str, v: Vector| (!v.is_finite()).then(|| format!("its {what} is not finite"));
    let problem = match shape.as_typed_shape() {
        TypedShape::Ball(ball) => sizes_problem(&[("radius", ball.radius)]),
        TypedShape::Cuboid(cuboid) => half_extents_problem(cuboid.half_extents),
        TypedShape::RoundCuboid(round) => half_extents_problem(round.inner_shape.half_extents)
            .or_else(|| sizes_problem(&[("border radius", round.border_radius)])),
        TypedShape::Capsule(capsule) => finite("segment", capsule.segment.a)
            .or_else(|| finite("segment", capsule.segment.b))
            .or_else(|| sizes_problem(&[("radius", capsule.radius)])),
        TypedShape::Cylinder(c) => {
            sizes_problem(&[("radius", c.radius), ("height", c.half_height)])
        }
        TypedShape::RoundCylinder(round) => sizes_problem(&[
            ("radius", round.inner_shape.radius),
            ("height", round.inner_shape.half_height),
            ("border radius", round.border_radius),
        ]),
        TypedShape::Cone(c) => sizes_problem(&[("radius", c.radius), ("height", c.half_height)]),
        TypedShape::RoundCone(round) => sizes_problem(&[
            ("radius", round.inner_shape.radius),
            ("height", round.inner_shape.half_height),
            ("border radius", round.border_radius),
        ]),
        TypedShape::ConvexPolyhedron(hull) => hull_points_problem(hull.points()),
        TypedShape::RoundConvexPolyhedron(round) => hull_points_problem(round.inner_shape.points())
            .or_else(|| sizes_problem(&[("border radius", round.border_radius)])),
        TypedShape::TriMesh(mesh) => trimesh_problem(mesh.vertices(), mesh.indices())
            .err()
            .map(|err| format!("invalid triangle mesh: {err}")),
        TypedShape::HeightField(field) => heightfield_problem(field),
        TypedShape::Compound(compound) => compound_problem(compound),
        _ => None,
    };
    problem.or_else(|| extent_problem(shape))
}

fn half_extents_problem(half_extents: Vector) -> Option<String> {
    let [x, y, z] = half_extents.to_array();
    sizes_problem(&[("half extent", x), ("half extent", y), ("half extent", z)])
}

/// Why a parry heightfield cannot be used: its samples are not a rows × columns grid of at
/// least 2 × 2 finite heights within the cap, or its scale is not finite.
fn heightfield_problem(field: &parry3d::shape::HeightField) -> Option<String> {
    let heights = field.heights();
    let (rows, columns) = (heights.nrows(), heights.ncols());
    if rows < 2 || columns < 2 || rows.checked_mul(columns) != Some(heights.data().len()) {
        return Some(format!(
            "a heightfield of {rows} × {columns} samples holds {}",
            heights.data().len()
        ));
    }
    if heights.data().len() > MAX_HEIGHTFIELD_SAMPLES {
        return Some(format!(
            "a heightfield of {rows} × {columns} samples is more than the \
             {MAX_HEIGHTFIELD_SAMPLES} allowed"
        ));
    }
    if heights.data().iter().any(|h| !h.is_finite()) || !field.scale().is_finite() {
        return Some("a heightfield sample or its scale is not finite".to_string());
    }
    None
}

/// Why a parry compound cannot be used: too many parts, or a part that could not be one (see
/// [`Collider::compound`](super::Collider::compound)).
fn compound_problem(compound: &parry3d::shape::Compound) -> Option<String> {
    let parts = compound.shapes();
    if parts.len() > MAX_COMPOUND_PARTS {
        return Some(format!(
            "a compound of {} parts is more than the {MAX_COMPOUND_PARTS} allowed",
            parts.len()
        ));
    }
    parts.iter().enumerate().find_map(|(index, (pose, part))| {
        part_pose_problem(&**part, pose.translation, pose.rotation)
            .or_else(|| shape_problem(&**part))
            .map(|reason| format!("compound part {index}: {reason}"))
    })
}

/// Why a shape's extent cannot be used: not finite, larger than [`MAX_COLLIDER_EXTENT`], or
/// zero.
fn extent_problem(shape: &dyn Shape) -> Option<String> {
    let aabb = shape.compute_local_aabb();
    let extents = aabb.maxs - aabb.mins;
    if !extents.is_finite() {
        return Some("its size is not finite".to_string());
    }
    if extents.max_element() > MAX_COLLIDER_EXTENT {
        return Some(format!(
            "its size {extents} is more than the {MAX_COLLIDER_EXTENT} m allowed"
        ));
    }
    (extents.max_element() <= 1e-6).then(|| "it has zero size".to_string())
}

/// Why a shape cannot be a compound part at this pose, whatever the shape's own problems: it
/// is composite, or the pose is not finite.
pub(crate) fn part_pose_problem(
    part: &dyn Shape,
    translation: Vector,
    rotation: Quaternion,
) -> Option<String> {
    if part.as_composite_shape().is_some() {
        return Some("a compound or mesh cannot be a part".to_string());
    }
    (!translation.is_finite() || !crate::math::is_finite_quat(rotation))
        .then(|| "its pose is not finite".to_string())
}

/// A cylinder of any sizes: parry's `Cylinder::new` asserts that they are positive (a panic
/// from a level file), so it is built directly and [`shape_problem`] reports bad sizes like
/// those of any other shape.
pub(crate) fn cylinder(half_height: Scalar, radius: Scalar) -> Cylinder {
    Cylinder {
        half_height,
        radius,
    }
}
