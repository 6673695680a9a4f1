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
//! parts live in side lists: parry's workspaces (compound pairs), the sub-shape poses
//! of composite shapes, and contact-hook changes still in force.
//!
//! Left out, because the next step sets them before anything reads them: the pair's
//! broad-phase proxy indices (set by the pair merge), whether it touched in the step before
//! and whether parry lacks an algorithm for the pair (both set by the pair update).
//!
//! A restore writes the pairs back in place, reusing the graph's manifold and point storage,
//! so that rolling back every frame does not allocate once the graph has grown to its size.
//!
//! Pairs between bodies at rest (static, or asleep and undisturbed) are packed apart from the
//! others, and shared with the last capture's when they are the same to the bit: such pairs
//! do not change while their bodies rest, so a ring of snapshots holds a sleeping level's
//! contacts once. (Pairs with a parry workspace or contact-hook changes in force, which cannot
//! be compared, are never shared.)

use std::sync::{Arc, Weak};

use bevy::prelude::*;
use parry3d::math::Pose;
use parry3d::query::{ContactManifoldsWorkspace, TrackedContact};

use super::contacts::{ContactPair, FrictionImpulse, Manifold};
use super::hooks::ContactModifications;
use super::recycling::Recycling;
use crate::math::{Scalar, Vector, vec_bytes};

/// The contact graph's pairs, compactly (see the [module docs](self)).
#[derive(Clone)]
pub(crate) struct SavedContacts {
    /// Pairs with a body in motion.
    moving: Packed,
    /// Pairs between bodies at rest, shared with other snapshots.
    resting: Arc<Packed>,
}

/// The last capture's pairs at rest, for the next capture to share while a snapshot still
/// holds them.
#[derive(Default)]
pub(crate) struct RestingContacts(Option<Weak<Packed>>);

/// Pairs in three flat lists and three side lists, in the graph's order.
#[derive(Clone, Default)]
struct Packed {
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

/// One pair without its manifolds, which follow in [`Packed::manifolds`].
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

/// One manifold without its points, which follow in [`Packed::points`].
#[derive(Clone)]
struct SavedManifold {
    normals: [Vector; 2],
    subshapes: [u32; 2],
    friction: FrictionImpulse,
    points: u32,
    /// Which of the two sub-shape poses the manifold has (bit 0: the first, bit 1: the
    /// second); they follow in [`Packed::subshape_poses`].
    framed: u8,
}

impl SavedContacts {
    /// Packs `pairs`; `at_rest` tells whether a pair's body (`None`: a collider without one)
    /// is at rest. Pairs between bodies at rest are shared with the last capture (`last`)
    /// when they are the same to the bit.
    pub(crate) fn capture(
        pairs: &[ContactPair],
        at_rest: impl Fn(Option<Entity>) -> bool,
        last: &mut RestingContacts,
    ) -> Self {
        let resting: Vec<bool> = (pairs.iter())
            .map(|pair| {
                at_rest(pair.body1)
                    && at_rest(pair.body2)
                    && pair.workspace.is_none()
                    && !pair.modifications.is_active()
            })
            .collect();
        let with = |rest: bool| {
            (pairs.iter().zip(&resting)).filter_map(move |(pair, &r)| (r == rest).then_some(pair))
        };
        let moving = Packed::pack(with(false));
        let resting = Packed::pack(with(true));
        Self {
            moving,
            resting: last.share(resting),
        }
    }

    /// Writes the saved pairs into `pairs`, reusing its pairs' manifold and point storage.
    pub(crate) fn restore(&self, pairs: &mut Vec<ContactPair>) {
        let total = self.len();
        pairs.truncate(total);
        let reused = pairs.len();
        let (mut moving, mut resting) = (Cursor::default(), Cursor::default());
        for index in 0..total {
            let next =
                |packed: &Packed, cursor: &Cursor| packed.pairs.get(cursor.pairs).map(|p| p.keys);
            let from_moving = match (next(&self.moving, &moving), next(&self.resting, &resting)) {
                (Some(a), Some(b)) => a < b,
                (a, _) => a.is_some(),
            };
            let manifolds = match pairs.get_mut(index) {
                Some(old) => std::mem::take(&mut old.manifolds),
                None => Vec::new(),
            };
            let pair = if from_moving {
                self.moving.unpack(&mut moving, manifolds)
            } else {
                self.resting.unpack(&mut resting, manifolds)
            };
            if index < reused {
                pairs[index] = pair;
            } else {
                pairs.push(pair);
            }
        }
    }

    /// How many pairs are saved.
    pub(crate) fn len(&self) -> usize {
        self.moving.pairs.len() + self.resting.pairs.len()
    }

    /// The bytes the saved pairs hold on the heap (a workspace counts as its pointer), those
    /// shared with other snapshots included.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.moving.heap_bytes() + size_of::<Packed>() + self.resting.heap_bytes()
    }

    /// The bytes of the pairs at rest if other snapshots hold them too, else 0.
    pub(crate) fn shared_bytes(&self) -> usize {
        if Arc::strong_count(&self.resting) > 1 {
            size_of::<Packed>() + self.resting.heap_bytes()
        } else {
            0
        }
    }
}

impl RestingContacts {
    /// The last capture's pairs at rest if a snapshot still holds them and they are the same
    /// to the bit as `resting`, else `resting`, remembered for the next capture.
    fn share(&mut self, resting: Packed) -> Arc<Packed> {
        if let Some(last) = self.0.as_ref().and_then(Weak::upgrade)
            && last.same_bits(&resting)
        {
            return last;
        }
        let resting = Arc::new(resting);
        self.0 = Some(Arc::downgrade(&resting));
        resting
    }
}

impl Packed {
    /// Packs `pairs`, every list allocated to its exact length.
    fn pack<'a>(pairs: impl Iterator<Item = &'a ContactPair> + Clone) -> Self {
        let manifolds = pairs.clone().map(|p| p.manifolds.len()).sum();
        let points = (pairs.clone().flat_map(|p| &p.manifolds)).map(|m| m.points.len());
        let mut packed = Self {
            pairs: Vec::with_capacity(pairs.clone().count()),
            manifolds: Vec::with_capacity(manifolds),
            points: Vec::with_capacity(points.sum()),
            ..Self::default()
        };
        for (index, pair) in pairs.enumerate() {
            packed.push_pair(index as u32, pair);
        }
        packed.subshape_poses.shrink_to_fit();
        packed.workspaces.shrink_to_fit();
        packed.modifications.shrink_to_fit();
        packed
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

    /// The pair at `cursor`, its manifolds written into `manifolds` (reusing their storage).
    fn unpack(&self, cursor: &mut Cursor, mut manifolds: Vec<Manifold>) -> ContactPair {
        let index = cursor.pairs as u32;
        let saved = &self.pairs[cursor.pairs];
        cursor.pairs += 1;
        manifolds.truncate(saved.manifolds as usize);
        manifolds.resize_with(saved.manifolds as usize, Manifold::default);
        for manifold in &mut manifolds {
            self.fill_manifold(manifold, cursor);
        }
        let [pose1, pose2, built_at] = saved.poses;
        ContactPair {
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

    /// The bytes the lists hold on the heap (a workspace counts as its pointer).
    fn heap_bytes(&self) -> usize {
        let disabled = (self.modifications.iter()).map(|(_, m)| m.heap_bytes());
        vec_bytes(&self.pairs)
            + vec_bytes(&self.manifolds)
            + vec_bytes(&self.points)
            + vec_bytes(&self.subshape_poses)
            + vec_bytes(&self.workspaces)
            + vec_bytes(&self.modifications)
            + disabled.sum::<usize>()
    }

    /// True if both hold the same pairs to the bit. Never for pairs with workspaces or
    /// contact-hook changes, which cannot be compared.
    fn same_bits(&self, other: &Self) -> bool {
        self.workspaces.is_empty()
            && self.modifications.is_empty()
            && other.workspaces.is_empty()
            && other.modifications.is_empty()
            && all_same(&self.pairs, &other.pairs, SavedPair::same_bits)
            && all_same(&self.manifolds, &other.manifolds, SavedManifold::same_bits)
            && all_same(&self.points, &other.points, point_bits_equal)
            && all_same(&self.subshape_poses, &other.subshape_poses, |a, b| {
                pose_bits(a) == pose_bits(b)
            })
    }
}

impl SavedPair {
    fn same_bits(&self, other: &Self) -> bool {
        self.colliders == other.colliders
            && self.bodies == other.bodies
            && self.keys == other.keys
            && (self.poses.iter().zip(&other.poses)).all(|(a, b)| pose_bits(a) == pose_bits(b))
            && self.friction.to_bits() == other.friction.to_bits()
            && self.restitution.to_bits() == other.restitution.to_bits()
            && self.manifolds == other.manifolds
            && self.recycling == other.recycling
            && self.touching == other.touching
            && self.sensor == other.sensor
    }
}

impl SavedManifold {
    fn same_bits(&self, other: &Self) -> bool {
        let impulse = |f: &FrictionImpulse| [f.tangent[0], f.tangent[1], f.twist].map(f32::to_bits);
        self.normals.map(vector_bits) == other.normals.map(vector_bits)
            && self.subshapes == other.subshapes
            && impulse(&self.friction) == impulse(&other.friction)
            && self.points == other.points
            && self.framed == other.framed
    }
}

/// True if the lists are as long and `same` holds for each pair of elements.
fn all_same<T>(a: &[T], b: &[T], same: impl Fn(&T, &T) -> bool) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
}

fn point_bits_equal(a: &TrackedContact<Scalar>, b: &TrackedContact<Scalar>) -> bool {
    let floats = |c: &TrackedContact<Scalar>| {
        (
            vector_bits(c.local_p1),
            vector_bits(c.local_p2),
            c.dist.to_bits(),
            c.data.to_bits(),
        )
    };
    floats(a) == floats(b) && a.fid1 == b.fid1 && a.fid2 == b.fid2
}

fn vector_bits(v: Vector) -> [u32; 3] {
    v.to_array().map(f32::to_bits)
}

fn pose_bits(pose: &Pose) -> ([u32; 4], [u32; 3]) {
    (
        pose.rotation.to_array().map(f32::to_bits),
        vector_bits(pose.translation),
    )
}

/// The side-list entry at `at` if it belongs to pair `index` (moving `at` past it).
fn extra<'a, T>(list: &'a [(u32, T)], at: &mut usize, index: u32) -> Option<&'a T> {
    let found = list.get(*at).filter(|(owner, _)| *owner == index)?;
    *at += 1;
    Some(&found.1)
}

/// Where a restore is in each list of a [`Packed`].
#[derive(Default)]
struct Cursor {
    pairs: usize,
    manifolds: usize,
    points: usize,
    subshape_poses: usize,
    workspaces: usize,
    modifications: usize,
}
