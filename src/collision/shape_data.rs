//! The file form of a [`Collider`] (feature `serialize`): the data that describes its shape,
//! never parry's internal structures.
//!
//! In a RON scene a collider reads like its constructor's arguments:
//!
//! ```ron
//! "impetus3d::collision::collider::Collider": Cuboid(half_extents: (0.5, 0.25, 1.0)),
//! "impetus3d::collision::collider::Collider": Trimesh(
//!     vertices: [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)],
//!     indices: [(0, 1, 2)],
//!     flags: 0,
//! ),
//! ```
//!
//! The shapes: `Sphere(radius)`, `Cuboid(half_extents)`, `Capsule(a, b, radius)` (the
//! segment's ends), `Cylinder(half_height, radius)` and `Cone(half_height, radius)` along local
//! Y, `Segment(a, b)`, `Triangle(a, b, c)`, `ConvexHull(points)`, `RoundCuboid`,
//! `RoundCylinder`, `RoundCone` and `RoundConvexHull` (the same with a `border_radius`),
//! `Trimesh(vertices, indices, flags)` (`flags`: the bits of parry's `TriMeshFlags`, 0 if
//! left out), `Heightfield(heights, scale)` (rows of samples, as [`Collider::heightfield`]
//! takes them) and `Compound(parts)`, each part a `(translation, rotation, shape)`. A collider
//! of any other parry shape cannot be written: serializing it is an error.
//!
//! Reading a collider builds its shape again from this data through the same checked
//! constructors a program calls, so bounding boxes, trees, topology and the collider's own
//! error are computed, never taken from the file, and no file can make a shape whose parts
//! contradict each other (an index past the vertex list, a grid whose size and samples
//! disagree). Data the constructors reject (such an index, rows of different lengths, NaN, a
//! flat hull, more elements than the caps of the [validation table](crate::validation)) gives a
//! collider that is reported with its entity and ignored, and the rest of the level loads and
//! simulates. Text that does not have this form at all (an unknown shape, a string where a
//! number belongs) is an error of the deserializer, as for any malformed file.
//!
//! A compound's parts cannot be compounds (parry does not allow them), and the form itself says
//! so: a part's shape has no `Compound`, so nesting in a file is one level deep whatever the
//! format's own recursion limit.

use parry3d::shape::{RoundShape, Shape, SharedShape, TriMeshFlags, TypedShape};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::collider::Collider;
use super::shape_checks::cylinder;
use crate::math::{Quaternion, Scalar, Vector};

/// A shape as data; `Part` is the shape of a compound's parts.
#[derive(Serialize, Deserialize)]
enum ShapeData<Part> {
    Sphere {
        radius: Scalar,
    },
    Cuboid {
        half_extents: Vector,
    },
    Capsule {
        a: Vector,
        b: Vector,
        radius: Scalar,
    },
    Cylinder {
        half_height: Scalar,
        radius: Scalar,
    },
    Cone {
        half_height: Scalar,
        radius: Scalar,
    },
    Segment {
        a: Vector,
        b: Vector,
    },
    Triangle {
        a: Vector,
        b: Vector,
        c: Vector,
    },
    ConvexHull {
        points: Vec<Vector>,
    },
    RoundCuboid {
        half_extents: Vector,
        border_radius: Scalar,
    },
    RoundCylinder {
        half_height: Scalar,
        radius: Scalar,
        border_radius: Scalar,
    },
    RoundCone {
        half_height: Scalar,
        radius: Scalar,
        border_radius: Scalar,
    },
    RoundConvexHull {
        points: Vec<Vector>,
        border_radius: Scalar,
    },
    Trimesh {
        vertices: Vec<Vector>,
        indices: Vec<[u32; 3]>,
        #[serde(default)]
        flags: u16,
    },
    Heightfield {
        heights: Vec<Vec<Scalar>>,
        scale: Vector,
    },
    Compound {
        parts: Vec<(Vector, Quaternion, Part)>,
    },
}

/// The shape of a part of a part: there is none, so a compound in a compound cannot be read.
#[derive(Serialize, Deserialize)]
enum NoPart {}

/// A collider's file form: a shape whose compound parts are shapes without compounds.
type ColliderData = ShapeData<ShapeData<NoPart>>;

/// What a compound's part is written as.
trait PartData: Sized {
    /// The data of `shape`, or why it has no file form.
    fn describe(shape: &dyn Shape) -> Result<Self, String>;
    /// The collider the data describes, checked like any other.
    fn build(self) -> Collider;
}

impl PartData for NoPart {
    fn describe(_: &dyn Shape) -> Result<Self, String> {
        Err("a compound cannot be a part of a compound".to_string())
    }

    fn build(self) -> Collider {
        match self {}
    }
}

impl<Part: PartData> PartData for ShapeData<Part> {
    fn describe(shape: &dyn Shape) -> Result<Self, String> {
        Ok(match shape.as_typed_shape() {
            TypedShape::Ball(ball) => Self::Sphere {
                radius: ball.radius,
            },
            TypedShape::Cuboid(cuboid) => Self::Cuboid {
                half_extents: cuboid.half_extents,
            },
            TypedShape::Capsule(capsule) => Self::Capsule {
                a: capsule.segment.a,
                b: capsule.segment.b,
                radius: capsule.radius,
            },
            TypedShape::Cylinder(c) => Self::Cylinder {
                half_height: c.half_height,
                radius: c.radius,
            },
            TypedShape::Cone(c) => Self::Cone {
                half_height: c.half_height,
                radius: c.radius,
            },
            TypedShape::Segment(s) => Self::Segment { a: s.a, b: s.b },
            TypedShape::Triangle(t) => Self::Triangle {
                a: t.a,
                b: t.b,
                c: t.c,
            },
            TypedShape::ConvexPolyhedron(hull) => Self::ConvexHull {
                points: hull.points().to_vec(),
            },
            TypedShape::RoundCuboid(round) => Self::RoundCuboid {
                half_extents: round.inner_shape.half_extents,
                border_radius: round.border_radius,
            },
            TypedShape::RoundCylinder(round) => Self::RoundCylinder {
                half_height: round.inner_shape.half_height,
                radius: round.inner_shape.radius,
                border_radius: round.border_radius,
            },
            TypedShape::RoundCone(round) => Self::RoundCone {
                half_height: round.inner_shape.half_height,
                radius: round.inner_shape.radius,
                border_radius: round.border_radius,
            },
            TypedShape::RoundConvexPolyhedron(round) => Self::RoundConvexHull {
                points: round.inner_shape.points().to_vec(),
                border_radius: round.border_radius,
            },
            TypedShape::TriMesh(mesh) => Self::Trimesh {
                vertices: mesh.vertices().to_vec(),
                indices: mesh.indices().to_vec(),
                flags: mesh.flags().bits(),
            },
            TypedShape::HeightField(field) => {
                let samples = field.heights();
                let row = |i| {
                    (0..samples.ncols())
                        .map(|j| samples.data()[samples.flat_index(i, j)])
                        .collect()
                };
                Self::Heightfield {
                    heights: (0..samples.nrows()).map(row).collect(),
                    scale: field.scale(),
                }
            }
            TypedShape::Compound(compound) => Self::Compound {
                parts: compound
                    .shapes()
                    .iter()
                    .map(|(pose, part)| {
                        Ok((pose.translation, pose.rotation, Part::describe(&**part)?))
                    })
                    .collect::<Result<_, String>>()?,
            },
            _ => {
                return Err(format!(
                    "a {:?} collider has no file form",
                    shape.shape_type()
                ));
            }
        })
    }

    fn build(self) -> Collider {
        match self {
            Self::Sphere { radius } => SharedShape::ball(radius).into(),
            Self::Cuboid { half_extents: h } => SharedShape::cuboid(h.x, h.y, h.z).into(),
            Self::Capsule { a, b, radius } => SharedShape::capsule(a, b, radius).into(),
            Self::Cylinder {
                half_height,
                radius,
            } => SharedShape::new(cylinder(half_height, radius)).into(),
            Self::Cone {
                half_height,
                radius,
            } => SharedShape::cone(half_height, radius).into(),
            Self::Segment { a, b } => SharedShape::segment(a, b).into(),
            Self::Triangle { a, b, c } => SharedShape::triangle(a, b, c).into(),
            Self::ConvexHull { points } => Collider::convex_hull(points).unwrap_or_else(no_hull),
            Self::RoundCuboid {
                half_extents: h,
                border_radius,
            } => SharedShape::round_cuboid(h.x, h.y, h.z, border_radius).into(),
            Self::RoundCylinder {
                half_height,
                radius,
                border_radius,
            } => SharedShape::new(RoundShape {
                inner_shape: cylinder(half_height, radius),
                border_radius,
            })
            .into(),
            Self::RoundCone {
                half_height,
                radius,
                border_radius,
            } => SharedShape::round_cone(half_height, radius, border_radius).into(),
            Self::RoundConvexHull {
                points,
                border_radius,
            } => Collider::convex_hull(points)
                .and_then(|hull| {
                    let points = hull.shape().as_convex_polyhedron()?.points();
                    SharedShape::round_convex_hull(points, border_radius)
                })
                .map_or_else(no_hull, Collider::from),
            Self::Trimesh {
                vertices,
                indices,
                flags,
            } => Collider::try_trimesh_with_flags(
                vertices,
                indices,
                TriMeshFlags::from_bits_truncate(flags),
            )
            .unwrap_or_else(Collider::invalid_trimesh),
            Self::Heightfield { heights, scale } => Collider::heightfield(heights, scale),
            Self::Compound { parts } => Collider::compound(
                parts
                    .into_iter()
                    .map(|(translation, rotation, part)| (translation, rotation, part.build()))
                    .collect(),
            ),
        }
    }
}

/// The collider for hull points that make no usable hull.
fn no_hull() -> Collider {
    Collider::invalid(
        "its convex hull points are fewer than four, flat, not finite or too many".to_string(),
    )
}

impl Serialize for Collider {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ColliderData::describe(&**self.shape())
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Collider {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        ColliderData::deserialize(deserializer).map(PartData::build)
    }
}

#[cfg(test)]
// Tests build their scenes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    fn round_trip(collider: &Collider) -> Collider {
        ron::from_str(&ron::to_string(collider).unwrap()).unwrap()
    }

    #[test]
    fn every_shape_the_constructors_make_reads_back_as_the_same_shape() {
        let hull = Collider::convex_hull(vec![Vector::ZERO, Vector::X, Vector::Y, Vector::Z]);
        let colliders = [
            Collider::sphere(0.5),
            Collider::cuboid(1.0, 2.0, 3.0),
            Collider::capsule(0.25, 1.0),
            Collider::cylinder(0.5, 2.0),
            hull.clone().unwrap(),
            Collider::trimesh(
                vec![Vector::ZERO, Vector::X, Vector::Z, Vector::ONE],
                vec![[0, 1, 2], [1, 3, 2]],
            ),
            Collider::heightfield(
                vec![vec![0.0, 0.5, 1.0], vec![0.25, 0.75, 0.0]],
                Vector::new(4.0, 1.0, 2.0),
            ),
            Collider::compound(vec![
                (
                    Vector::X,
                    Quaternion::from_rotation_y(0.3),
                    Collider::sphere(0.5),
                ),
                (Vector::ZERO, Quaternion::IDENTITY, hull.unwrap()),
            ]),
            SharedShape::round_cuboid(0.5, 0.5, 0.5, 0.1).into(),
            SharedShape::cone(0.5, 0.25).into(),
        ];
        for collider in &colliders {
            assert!(collider.validate().is_none());
            let read = round_trip(collider);
            assert!(read.validate().is_none());
            // The same data, so the same text again, and the same mass properties.
            assert_eq!(
                ron::to_string(&read).unwrap(),
                ron::to_string(collider).unwrap()
            );
            let (a, b) = (
                collider.shape().mass_properties(1.0),
                read.shape().mass_properties(1.0),
            );
            assert_eq!(a.mass(), b.mass());
            let (a, b) = (
                collider.shape().compute_local_aabb(),
                read.shape().compute_local_aabb(),
            );
            assert_eq!((a.mins, a.maxs), (b.mins, b.maxs));
        }
    }

    #[test]
    fn data_the_constructors_reject_reads_as_an_ignored_collider_not_an_error() {
        let read = |text: &str| ron::from_str::<Collider>(text).unwrap().validate();
        let bad_index =
            "Trimesh(vertices: [(0, 0, 0), (1, 0, 0), (0, 0, 1)], indices: [(0, 1, 3)])";
        assert!(
            read(bad_index)
                .unwrap()
                .contains("triangle 0 names vertex 3")
        );
        assert!(read("ConvexHull(points: [])").is_some());
        assert!(read("Heightfield(heights: [[0, 0], [0]], scale: (1, 1, 1))").is_some());
        assert!(read("Cuboid(half_extents: (1, NaN, 1))").is_some());
        assert!(read("Sphere(radius: -1)").is_some());
        assert!(read("Cylinder(half_height: 1, radius: -0.5)").is_some());
        assert!(read("RoundCylinder(half_height: -1, radius: 0.5, border_radius: 0.1)").is_some());
        let zero_part = "Compound(parts: [((0, 0, 0), (0, 0, 0, 1), Sphere(radius: 0))])";
        assert!(read(zero_part).unwrap().contains("at least one valid part"));
    }

    #[test]
    fn a_file_cannot_set_a_collider_s_error_or_nest_compounds() {
        // Fields of parry's internal form, or the collider's own, are not read from a file.
        let claimed = "Sphere(radius: 0.5, error: Some(\"x\"), dropped: Some(\"y\"))";
        let read: Collider = ron::from_str(claimed).unwrap();
        assert_eq!((read.validate(), read.dropped_parts()), (None, None));
        let nested = "Compound(parts: [((0, 0, 0), (0, 0, 0, 1), \
                      Compound(parts: [((0, 0, 0), (0, 0, 0, 1), Sphere(radius: 1))]))])";
        assert!(ron::from_str::<Collider>(nested).is_err());
    }
}
