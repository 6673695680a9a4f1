//! A convex shape against the triangles of a mesh or a heightfield: one manifold per
//! triangle the shape touches, kept in the pair's manifold list in the order of the
//! triangles' indices.
//!
//! Each step the triangles near the shape (those whose boxes meet the shape's box, grown by
//! the prediction distance) get their manifolds from the dispatcher's triangle pairs; a
//! triangle that had points last step keeps its manifold, so its new points are matched to
//! the old ones by feature id and warm-started. A triangle without points keeps no manifold:
//! it has nothing to warm-start, and the solver, the recycling test and the snapshots then
//! see only the triangles that touch.
//!
//! This replaces parry's routing of these pairs, which keeps a hash map of triangles in a
//! boxed workspace per pair, rebuilds the pair's manifold list each step and keeps an empty
//! manifold for every triangle near the shape.

use std::cell::RefCell;

use parry3d::bounding_volume::{Aabb, BoundingVolume};
use parry3d::math::{Pose, Real};
use parry3d::query::details::NormalConstraints;
use parry3d::query::{PersistentQueryDispatcher, Unsupported};
use parry3d::shape::{HeightField, Shape, TriMesh, Triangle, TrianglePseudoNormals};

use super::aabb::shape_aabb;
use super::contacts::Manifold;
use super::dispatcher::Dispatcher;

/// The triangles of a mesh or a heightfield, in its own frame.
#[derive(Clone, Copy)]
pub(crate) enum Terrain<'a> {
    /// A triangle mesh: the triangles come from its bounding-volume tree.
    Mesh(&'a TriMesh),
    /// A heightfield: the triangles of the cells under the box.
    Field(&'a HeightField),
}

impl<'a> Terrain<'a> {
    /// `shape` as a terrain, if it is a mesh or a heightfield.
    pub(crate) fn of(shape: &'a dyn Shape) -> Option<Self> {
        shape
            .as_trimesh()
            .map(Self::Mesh)
            .or_else(|| shape.as_heightfield().map(Self::Field))
    }

    /// Puts the triangles whose boxes meet `aabb` into `found`, sorted by index.
    fn triangles_near(self, aabb: &Aabb, found: &mut Vec<(u32, Triangle)>) {
        found.clear();
        match self {
            Self::Mesh(mesh) => found.extend(
                (mesh.bvh().intersect_aabb(aabb))
                    .filter(|&id| id < mesh.num_triangles() as u32)
                    .map(|id| (id, mesh.triangle(id))),
            ),
            // The heightfield hands over every triangle of the cells under the box.
            Self::Field(field) => field.map_elements_in_local_aabb(aabb, &mut |id, triangle| {
                if aabb.intersects(&triangle.local_aabb()) {
                    found.push((id, *triangle));
                }
            }),
        }
        found.sort_unstable_by_key(|&(id, _)| id);
    }

    /// The pseudo-normals that keep contacts on triangle `id` off its inner edges, if the
    /// terrain was built to fix them.
    fn normal_constraints(self, id: u32) -> Option<TrianglePseudoNormals> {
        match self {
            Self::Mesh(mesh) => mesh.triangle_normal_constraints(id),
            Self::Field(field) => field.triangle_normal_constraints(id),
        }
    }
}

thread_local! {
    /// The triangles near the shape of the pair being updated, kept between calls so that
    /// it allocates only while it grows.
    static NEAR: RefCell<Vec<(u32, Triangle)>> = const { RefCell::new(Vec::new()) };
}

/// The manifolds of `terrain` (collider 1 if `terrain_first`, else collider 2) and the convex
/// `shape`, `pos12` being collider 2's pose in collider 1's frame. Manifolds are kept only for
/// triangles with points, sorted by triangle index.
pub(crate) fn terrain_manifolds(
    dispatcher: &Dispatcher,
    pos12: &Pose,
    (terrain, shape): (Terrain, &dyn Shape),
    terrain_first: bool,
    prediction: Real,
    manifolds: &mut Vec<Manifold>,
) -> Result<(), Unsupported> {
    let shape_in_terrain = if terrain_first {
        *pos12
    } else {
        pos12.inverse()
    };
    let aabb = shape_aabb(shape, &shape_in_terrain).loosened(prediction);
    NEAR.with_borrow_mut(|near| {
        terrain.triangles_near(&aabb, near);
        keep_only(manifolds, near, terrain_first);
        for (manifold, (id, triangle)) in manifolds.iter_mut().zip(near.iter()) {
            let normals = terrain.normal_constraints(*id);
            let normals = normals.as_ref().map(|n| n as &dyn NormalConstraints);
            if terrain_first {
                dispatcher.contact_manifold_convex_convex(
                    pos12, triangle, shape, normals, None, prediction, manifold,
                )?;
            } else {
                dispatcher.contact_manifold_convex_convex(
                    pos12, shape, triangle, None, normals, prediction, manifold,
                )?;
            }
        }
        Ok::<(), Unsupported>(())
    })?;
    manifolds.retain(|m| !m.points.is_empty());
    Ok(())
}

/// Makes `manifolds` (sorted by triangle) one per triangle of `near` (sorted by index), in
/// the same order: those of triangles still near stay, the others go, and the new triangles
/// get empty manifolds. The triangle's index is the manifold's sub-shape on the terrain's
/// side.
fn keep_only(manifolds: &mut Vec<Manifold>, near: &[(u32, Triangle)], terrain_first: bool) {
    let id = |m: &Manifold| {
        if terrain_first {
            m.subshape1
        } else {
            m.subshape2
        }
    };
    let mut next = 0;
    manifolds.retain(|m| {
        let found = near[next..].binary_search_by_key(&id(m), |&(i, _)| i);
        next += found.map_or_else(|at| at, |at| at + 1);
        found.is_ok()
    });
    let kept = manifolds.len();
    let mut old = 0;
    for &(triangle, _) in near {
        if old < kept && id(&manifolds[old]) == triangle {
            old += 1;
        } else {
            let (id1, id2) = if terrain_first {
                (triangle, 0)
            } else {
                (0, triangle)
            };
            manifolds.push(Manifold::with_data(id1, id2, Default::default()));
        }
    }
    manifolds.sort_unstable_by_key(id);
}

#[cfg(test)]
// Tests build their scenes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use bevy::math::{Quat, Vec3};
    use parry3d::shape::{Ball, Capsule, Cuboid, Cylinder};

    use super::*;
    use crate::collision::{field_as_mesh, random_vectors};

    /// A bumpy 6 × 6-cell terrain of 1 m cells, as a heightfield and as the same triangles in
    /// a mesh.
    fn terrains() -> [Box<dyn Shape>; 2] {
        let mut bump = random_vectors(0x9e37_79b9);
        let heights = parry3d::utils::Array2::new(7, 7, (0..49).map(|_| bump(0.15).y).collect());
        let field = HeightField::new(heights, Vec3::new(6.0, 1.0, 6.0));
        let mesh = field_as_mesh(&field);
        [Box::new(field), Box::new(mesh)]
    }

    /// Every triangle of `terrain`, by index.
    fn all_triangles(terrain: Terrain) -> Vec<(u32, Triangle)> {
        let mut all = Vec::new();
        terrain.triangles_near(
            &Aabb::new(Vec3::splat(-100.0), Vec3::splat(100.0)),
            &mut all,
        );
        all
    }

    /// The pair's manifolds with `shape` at `pose` over `terrain`, the terrain as collider 1
    /// or 2, built over `manifolds` (last step's).
    fn build(
        (terrain, shape): (&dyn Shape, &dyn Shape),
        pose: &Pose,
        terrain_first: bool,
        manifolds: &mut Vec<Manifold>,
    ) {
        let dispatcher = Dispatcher { box_bias: 0.0 };
        let (pos12, g1, g2) = if terrain_first {
            (*pose, terrain, shape)
        } else {
            (pose.inverse(), shape, terrain)
        };
        // As the narrow phase leaves them: the old normal seeds the search.
        for manifold in manifolds.iter_mut() {
            manifold.local_n2 = Vec3::ZERO;
        }
        let mut workspace = None;
        dispatcher
            .contact_manifolds(&pos12, g1, g2, 0.02, manifolds, &mut workspace)
            .unwrap();
        assert!(workspace.is_none(), "terrain pairs keep no parry workspace");
    }

    /// A box, a ball, a capsule and a cylinder sliding and turning across both terrains, the
    /// terrain as either collider: after every move the pair holds one manifold for each
    /// triangle that has points, in the order of the triangles, with the points that triangle
    /// gets on its own (every triangle of the terrain tested, over its manifold of last step
    /// where it had one); and each point found again on the
    /// same triangle from the same features (a ball: on the same triangle) keeps the impulse
    /// it had.
    #[test]
    fn one_manifold_per_touching_triangle_warm_started() {
        let dispatcher = Dispatcher { box_bias: 0.0 };
        let shapes: [Box<dyn Shape>; 4] = [
            Box::new(Cuboid::new(Vec3::new(0.7, 0.3, 0.5))),
            Box::new(Ball::new(0.6)),
            Box::new(Capsule::new_x(0.8, 0.25)),
            Box::new(Cylinder::new(0.2, 0.7)),
        ];
        let (mut checked, mut carried) = (0, 0);
        for terrain_shape in terrains() {
            let terrain = Terrain::of(&*terrain_shape).unwrap();
            let all = all_triangles(terrain);
            for shape in &shapes {
                for terrain_first in [true, false] {
                    let mut manifolds = Vec::new();
                    let mut impulses: Vec<((u32, _, _), f32)> = Vec::new();
                    for step in 0..60 {
                        let t = step as f32 * 0.05;
                        let pose = Pose::from_parts(
                            Vec3::new(-2.0 + t, 0.2, -1.5 + 0.7 * t),
                            Quat::from_rotation_y(t) * Quat::from_rotation_z(0.3 * t.sin()),
                        );
                        let last = manifolds.clone();
                        build(
                            (&*terrain_shape, &**shape),
                            &pose,
                            terrain_first,
                            &mut manifolds,
                        );
                        let id = |m: &Manifold| {
                            if terrain_first {
                                m.subshape1
                            } else {
                                m.subshape2
                            }
                        };
                        // Each triangle on its own, over its manifold of last step if it had one.
                        let mut alone = Vec::new();
                        for (index, triangle) in &all {
                            let mut manifold = (last.iter().find(|m| id(m) == *index).cloned())
                                .unwrap_or_else(Manifold::new);
                            manifold.local_n2 = Vec3::ZERO;
                            let result = if terrain_first {
                                dispatcher.contact_manifold_convex_convex(
                                    &pose,
                                    triangle,
                                    &**shape,
                                    None,
                                    None,
                                    0.02,
                                    &mut manifold,
                                )
                            } else {
                                dispatcher.contact_manifold_convex_convex(
                                    &pose.inverse(),
                                    &**shape,
                                    triangle,
                                    None,
                                    None,
                                    0.02,
                                    &mut manifold,
                                )
                            };
                            result.unwrap();
                            if !manifold.points.is_empty() {
                                alone.push((*index, manifold));
                            }
                        }
                        assert_eq!(
                            manifolds.iter().map(id).collect::<Vec<_>>(),
                            alone.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
                            "step {step}: touching triangles"
                        );
                        let points = |m: &Manifold| {
                            let points = m.points.iter();
                            points
                                .map(|c| (c.fid1, c.fid2, c.local_p1, c.local_p2, c.dist, c.data))
                                .collect::<Vec<_>>()
                        };
                        for (ours, (_, alone)) in manifolds.iter().zip(&alone) {
                            assert_eq!(points(ours), points(alone), "step {step}");
                            assert_eq!(ours.local_n1, alone.local_n1, "step {step}");
                        }
                        // Impulses carried from the last step, on the same triangle and features.
                        for m in &manifolds {
                            for c in &m.points {
                                let key = (id(m), c.fid1, c.fid2);
                                // Of several old points from the same features, the last
                                // (`rebuild_points`); parry moves a ball's one point on a
                                // triangle in place.
                                let ball = shape.as_ball().is_some();
                                let last = (impulses.iter().rev())
                                    .find(|(k, _)| *k == key || (ball && k.0 == key.0));
                                assert_eq!(
                                    c.data,
                                    last.map_or(0.0, |(_, data)| *data),
                                    "step {step}"
                                );
                                carried += usize::from(last.is_some());
                                checked += 1;
                            }
                        }
                        impulses.clear();
                        for m in &mut manifolds {
                            let triangle = id(m);
                            for c in &mut m.points {
                                c.data = 1.0 + (checked + impulses.len()) as f32;
                                impulses.push(((triangle, c.fid1, c.fid2), c.data));
                            }
                        }
                    }
                }
            }
        }
        assert!(
            checked > 2_000 && carried * 2 > checked,
            "{carried} of {checked} points carried"
        );
    }
}
