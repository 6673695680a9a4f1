//! The contact graph as a [`PhysicsSnapshot`](crate::PhysicsSnapshot) keeps it: what the next
//! steps read of every pair, packed into three flat lists.
//!
//! A [`ContactPair`] as the narrow phase works on it is 288 bytes, with two heap allocations
//! (its manifolds and each manifold's points) and room for this step's scratch. The saved form
//! keeps per pair its colliders, bodies, keys, the three poses the next narrow phase compares
//! against (the colliders' poses at the last update, which decide whether a resting pair is
//! skipped, and collider 2's relative pose when the manifolds were built, which decides
//! recycling), the combined materials, the recycling rule and whether it touches; per manifold
//! its normals, sub-shapes and friction impulses; and every point whole (both anchors, the
//! distance, the feature ids that match it to the next step's points, its impulse). The rare
//! parts live in side lists: parry's workspaces (mesh and compound pairs), the sub-shape poses
//! of composite shapes, and contact-hook changes still in force.
//!
//! Left out, because the next step sets them before anything reads them: the pair's
//! broad-phase proxy indices (set by the pair merge), whether it touched in the step before
//! and whether parry lacks an algorithm for the pair (both set by the pair update).
//!
//! A restore writes the pairs back in place, reusing the graph's manifold and point storage,
//! so that rolling back every frame does not allocate once the graph has grown to its size.

use bevy::prelude::*;
use parry3d::math::Pose;
use parry3d::query::{ContactManifoldsWorkspace, TrackedContact};

use super::contacts::{ContactPair, FrictionImpulse, Manifold};
use super::hooks::ContactModifications;
use super::recycling::Recycling;
use crate::math::{Scalar, Vector, vec_bytes};

/// The contact graph's pairs, compactly (see the [module docs](self)).
#[derive(Clone, Default)]
pub(crate) struct SavedContacts {
    pairs: Vec<SavedPair>,
    manifolds: Vec<SavedManifold>,
    points: Vec<TrackedContact<Scalar>>,
    /// The poses of composite shapes' parts, in manifold order (see [`SavedManifold::framed`]).
    subshape_poses: Vec<Pose>,
    /// parry's per-pair workspaces, by pair index.
    workspaces: Vec<(u32, ContactManifoldsWorkspace)>,
    /// Contact-hook changes of the last step, by pair index.
    modifications: Vec<(u32, ContactModifications)>,
}

/// One pair without its manifolds, which follow in [`SavedContacts::manifolds`].
#[derive(Clone)]
struct SavedPair {
    colliders: [Entity; 2],
    bodies: [Option<Entity>; 2],
    keys: (u64, u64),
    /// `pose1`, `pose2` and `built_at`.
    poses: [Pose; 3],
    friction: Scalar,
    restitution: Scalar,
    manifolds: u32,
    recycling: Recycling,
    touching: bool,
    sensor: bool,
}

/// One manifold without its points, which follow in [`SavedContacts::points`].
#[derive(Clone)]
struct SavedManifold {
    normals: [Vector; 2],
    subshapes: [u32; 2],
    friction: FrictionImpulse,
    points: u32,
    /// Which of the two sub-shape poses the manifold has (bit 0: the first, bit 1: the
    /// second); they follow in [`SavedContacts::subshape_poses`].
    framed: u8,
}

impl SavedContacts {
    /// Packs `pairs`. Every list is allocated to its exact length.
    pub(crate) fn capture(pairs: &[ContactPair]) -> Self {
        let manifolds = pairs.iter().map(|p| p.manifolds.len()).sum();
        let points = (pairs.iter().flat_map(|p| &p.manifolds)).map(|m| m.points.len());
        let mut saved = Self {
            pairs: Vec::with_capacity(pairs.len()),
            manifolds: Vec::with_capacity(manifolds),
            points: Vec::with_capacity(points.sum()),
            ..Self::default()
        };
        for (index, pair) in pairs.iter().enumerate() {
            saved.push_pair(index as u32, pair);
        }
        saved.subshape_poses.shrink_to_fit();
        saved.workspaces.shrink_to_fit();
        saved.modifications.shrink_to_fit();
        saved
    }

    fn push_pair(&mut self, index: u32, pair: &ContactPair) {
        // Named field by field, so that a field added to `ContactPair` must be decided on here.
        let ContactPair {
            collider1,
            collider2,
            body1,
            body2,
            keys,
            manifolds,
            workspace,
            pose1,
            pose2,
            built_at,
            recycling,
            touching,
            was_touching: _,
            sensor,
            friction,
            restitution,
            proxies: _,
            unsupported: _,
            modifications,
        } = pair;
        self.pairs.push(SavedPair {
            colliders: [*collider1, *collider2],
            bodies: [*body1, *body2],
            keys: *keys,
            poses: [*pose1, *pose2, *built_at],
            friction: *friction,
            restitution: *restitution,
            manifolds: manifolds.len() as u32,
            recycling: *recycling,
            touching: *touching,
            sensor: *sensor,
        });
        for manifold in manifolds {
            self.push_manifold(manifold);
        }
        if let Some(workspace) = workspace {
            self.workspaces.push((index, workspace.clone()));
        }
        if modifications.is_active() {
            self.modifications.push((index, modifications.clone()));
        }
    }

    fn push_manifold(&mut self, manifold: &Manifold) {
        let framed = [manifold.subshape_pos1, manifold.subshape_pos2];
        self.manifolds.push(SavedManifold {
            normals: [manifold.local_n1, manifold.local_n2],
            subshapes: [manifold.subshape1, manifold.subshape2],
            friction: manifold.data,
            points: manifold.points.len() as u32,
            framed: u8::from(framed[0].is_some()) | u8::from(framed[1].is_some()) << 1,
        });
        self.points.extend_from_slice(&manifold.points);
        self.subshape_poses.extend(framed.into_iter().flatten());
    }

    /// Writes the saved pairs into `pairs`, reusing its pairs' manifold and point storage.
    pub(crate) fn restore(&self, pairs: &mut Vec<ContactPair>) {
        pairs.truncate(self.pairs.len());
        let reused = pairs.len();
        let mut cursor = Cursor::default();
        for (index, saved) in self.pairs.iter().enumerate() {
            let mut manifolds = match pairs.get_mut(index) {
                Some(old) => std::mem::take(&mut old.manifolds),
                None => Vec::new(),
            };
            manifolds.truncate(saved.manifolds as usize);
            manifolds.resize_with(saved.manifolds as usize, Manifold::default);
            for manifold in &mut manifolds {
                self.fill_manifold(manifold, &mut cursor);
            }
            let index = index as u32;
            let [pose1, pose2, built_at] = saved.poses;
            let pair = ContactPair {
                collider1: saved.colliders[0],
                collider2: saved.colliders[1],
                body1: saved.bodies[0],
                body2: saved.bodies[1],
                keys: saved.keys,
                manifolds,
                workspace: extra(&self.workspaces, &mut cursor.workspaces, index).cloned(),
                pose1,
                pose2,
                built_at,
                recycling: saved.recycling,
                touching: saved.touching,
                was_touching: false,
                sensor: saved.sensor,
                friction: saved.friction,
                restitution: saved.restitution,
                proxies: (0, 0),
                unsupported: false,
                modifications: extra(&self.modifications, &mut cursor.modifications, index)
                    .cloned()
                    .unwrap_or_default(),
            };
            if (index as usize) < reused {
                pairs[index as usize] = pair;
            } else {
                pairs.push(pair);
            }
        }
    }

    /// Writes the manifold at `cursor` into `manifold`, reusing its point storage.
    fn fill_manifold(&self, manifold: &mut Manifold, cursor: &mut Cursor) {
        let saved = &self.manifolds[cursor.manifolds];
        cursor.manifolds += 1;
        let points = &self.points[cursor.points..][..saved.points as usize];
        cursor.points += points.len();
        let mut frame = |bit: u8| {
            (saved.framed & bit != 0).then(|| {
                cursor.subshape_poses += 1;
                self.subshape_poses[cursor.subshape_poses - 1]
            })
        };
        manifold.subshape_pos1 = frame(1);
        manifold.subshape_pos2 = frame(2);
        [manifold.local_n1, manifold.local_n2] = saved.normals;
        [manifold.subshape1, manifold.subshape2] = saved.subshapes;
        manifold.data = saved.friction;
        manifold.points.clear();
        manifold.points.extend_from_slice(points);
    }

    /// How many pairs are saved.
    pub(crate) fn len(&self) -> usize {
        self.pairs.len()
    }

    /// The bytes the saved pairs hold on the heap (a workspace counts as its pointer).
    pub(crate) fn heap_bytes(&self) -> usize {
        let disabled = (self.modifications.iter()).map(|(_, m)| m.heap_bytes());
        vec_bytes(&self.pairs)
            + vec_bytes(&self.manifolds)
            + vec_bytes(&self.points)
            + vec_bytes(&self.subshape_poses)
            + vec_bytes(&self.workspaces)
            + vec_bytes(&self.modifications)
            + disabled.sum::<usize>()
    }
}

/// The side-list entry at `at` if it belongs to pair `index` (moving `at` past it).
fn extra<'a, T>(list: &'a [(u32, T)], at: &mut usize, index: u32) -> Option<&'a T> {
    let found = list.get(*at).filter(|(owner, _)| *owner == index)?;
    *at += 1;
    Some(&found.1)
}

/// Where a restore is in each flat list.
#[derive(Default)]
struct Cursor {
    manifolds: usize,
    points: usize,
    subshape_poses: usize,
    workspaces: usize,
    modifications: usize,
}
