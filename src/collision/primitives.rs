//! Colliders from Bevy's 3D primitives, so the shape a mesh was made from gives its collider
//! too:
//!
//! ```
//! # use bevy::prelude::*;
//! # use impetus3d::prelude::*;
//! let crate_shape = Cuboid::new(1.0, 0.5, 2.0);
//! // let mesh = meshes.add(crate_shape);
//! let collider = Collider::from(crate_shape);
//! let same = crate_shape.collider();
//! # assert_eq!(collider.shape().as_cuboid().unwrap().half_extents, Vec3::new(0.5, 0.25, 1.0));
//! # assert_eq!(same.shape().as_cuboid(), collider.shape().as_cuboid());
//! ```
//!
//! Every primitive keeps its own frame: a capsule, cylinder or cone stands along Y and is
//! centred at the origin, as Bevy builds its mesh. A conical frustum becomes the convex hull
//! of its two rims, each drawn as a polygon of [`FRUSTUM_RIM_POINTS`] corners. The colliders are
//! checked like every other (see [`Collider`]): a primitive with a zero or negative size gives
//! a collider the engine reports and ignores.

use bevy::math::primitives::{
    Capsule3d, Cone, ConicalFrustum, Cuboid, Cylinder, Segment3d, Sphere, Tetrahedron, Triangle3d,
};

use super::Collider;
use crate::math::{Scalar, TAU, Vector, sin_cos};

/// How many corners each rim of a [`ConicalFrustum`]'s hull has (the hull's sides are within
/// `1 − cos(π / 24)`, 0.86 %, of the true radius).
pub const FRUSTUM_RIM_POINTS: usize = 24;

/// A shape that can be turned into a [`Collider`] of the same size, in its own frame.
pub trait IntoCollider {
    /// The collider of this shape.
    fn collider(&self) -> Collider;
}

impl IntoCollider for Collider {
    fn collider(&self) -> Collider {
        self.clone()
    }
}

macro_rules! collider_from_primitive {
    ($($primitive:ty),*) => {$(
        impl From<$primitive> for Collider {
            fn from(shape: $primitive) -> Self {
                shape.collider()
            }
        }
    )*};
}
collider_from_primitive!(
    Sphere,
    Cuboid,
    Capsule3d,
    Cylinder,
    Cone,
    Segment3d,
    Triangle3d,
    Tetrahedron,
    ConicalFrustum
);

impl IntoCollider for Sphere {
    fn collider(&self) -> Collider {
        Collider::sphere(self.radius)
    }
}

impl IntoCollider for Cuboid {
    fn collider(&self) -> Collider {
        let size = 2.0 * self.half_size;
        Collider::cuboid(size.x, size.y, size.z)
    }
}

impl IntoCollider for Capsule3d {
    fn collider(&self) -> Collider {
        Collider::capsule(self.radius, 2.0 * self.half_length)
    }
}

impl IntoCollider for Cylinder {
    fn collider(&self) -> Collider {
        Collider::cylinder(self.radius, 2.0 * self.half_height)
    }
}

impl IntoCollider for Cone {
    fn collider(&self) -> Collider {
        Collider::cone(self.radius, self.height)
    }
}

impl IntoCollider for Segment3d {
    fn collider(&self) -> Collider {
        let [a, b] = self.vertices;
        Collider::segment(a, b)
    }
}

impl IntoCollider for Triangle3d {
    fn collider(&self) -> Collider {
        let [a, b, c] = self.vertices;
        Collider::triangle(a, b, c)
    }
}

impl IntoCollider for Tetrahedron {
    fn collider(&self) -> Collider {
        hull_or_invalid(self.vertices.to_vec(), "tetrahedron")
    }
}

impl IntoCollider for ConicalFrustum {
    fn collider(&self) -> Collider {
        let half = 0.5 * self.height;
        let rim = |radius: Scalar, y: Scalar| {
            (0..FRUSTUM_RIM_POINTS).map(move |i| {
                let (sin, cos) = sin_cos(TAU * i as Scalar / FRUSTUM_RIM_POINTS as Scalar);
                Vector::new(radius * cos, y, radius * sin)
            })
        };
        let points = rim(self.radius_bottom, -half)
            .chain(rim(self.radius_top, half))
            .collect();
        hull_or_invalid(points, "conical frustum")
    }
}

/// The hull of `points`, or a collider the engine reports and ignores if they span no volume.
fn hull_or_invalid(points: Vec<Vector>, what: &str) -> Collider {
    Collider::convex_hull(points).unwrap_or_else(|| {
        Collider::invalid(format!("the {what} has no volume (or a non-finite corner)"))
    })
}
