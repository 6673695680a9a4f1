//! Broad phase: one dense snapshot of every collider's world pose and enlarged AABB, and the
//! pairs whose AABBs overlap.
//!
//! Overlaps come from parry's bounding volume hierarchy: leaves are kept across steps (keyed by
//! entity index), and the tree is traversed against itself. The cost is O(n log n + pairs),
//! never all pairs. Each AABB is enlarged by the speculative margin plus how far the collider
//! can move this step, so fast bodies find the surfaces they are about to reach.
//!
//! A leaf holds its collider's AABB grown by `FAT_MARGIN` (the "fat" AABBs of Erin Catto's
//! dynamic AABB tree, in Box2D), and moves only when the AABB leaves that box. While no
//! leaf moves, the tree and its overlapping leaf pairs (the *candidates*) stand: a step only
//! filters the candidates with this step's AABBs, layers and exclusions, and builds the same
//! pairs, in the same order, that traversing again would (a resting pyramid skips the refit, the
//! traversal and the sort). When leaves move, the tree is refitted and re-optimised, and the
//! candidates follow: if few leaves moved, as in a settling pile, the candidates of the moved
//! leaves are dropped and found again by querying the tree with each moved leaf's box (the
//! "move buffer" of Box2D's broad phase), then merged into the sorted list; if many moved, the
//! tree is traversed again. Either way the candidates are every overlapping leaf pair, so the
//! pairs and their order do not depend on which was done. The margin is a few millimetres, not
//! Box2D's 0.1 m: see `FAT_MARGIN`.
//!
//! A collider in no group ([`CollisionLayers`] with no memberships) is left out: it can pair
//! with nothing and no spatial query finds it, so it costs no AABB, leaf or traversal (the
//! 40 × 40 joint grid of the benchmarks, whose balls collide with nothing: 1.33 → 1.23 ms per
//! step).

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use bevy::platform::collections::HashSet;
use bevy::prelude::*;
use parry3d::bounding_volume::{Aabb, BoundingVolume};
use parry3d::math::Pose;
use parry3d::partitioning::{Bvh, BvhWorkspace};
use parry3d::shape::SharedShape;

use super::collider::{
    Collider, ColliderDisabled, ColliderOf, ColliderPose, CollisionLayers, DisabledCollider,
    Friction, Restitution, Sensor,
};
use super::hooks::ActiveCollisionHooks;
use super::recycling::is_polyhedral;
use super::shape_aabb;
use crate::body::{
    AngularVelocity, CreationOrder, LinearVelocity, Position, RigidBody, Rotation, Sleeping,
};
use crate::math::{Scalar, Vector, vec_bytes};
use crate::parallel::{Shared, parallel_for, pool_with_helpers, run_chunks};
use crate::schedule::PhysicsStepTime;
use crate::settings::SolverConfig;

/// What the collider's body is doing this step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProxyKind {
    /// Static body, or no body at all.
    Static,
    /// Kinematic body.
    Kinematic,
    /// Dynamic and awake.
    Dynamic,
    /// Dynamic and asleep.
    Sleeping,
}

impl ProxyKind {
    /// The kind of a collider on a body of kind `rb`.
    pub(crate) fn of(rb: RigidBody, sleeping: bool) -> Self {
        match rb {
            RigidBody::Static => Self::Static,
            RigidBody::Kinematic => Self::Kinematic,
            RigidBody::Dynamic if sleeping => Self::Sleeping,
            RigidBody::Dynamic => Self::Dynamic,
        }
    }
}

/// One collider's data for this step.
#[derive(Clone)]
pub(crate) struct ColliderProxy {
    pub entity: Entity,
    /// The collider's [`CreationOrder::pair_key`], which orders pairs (newest first).
    pub key: u64,
    pub body: Option<Entity>,
    pub shape: SharedShape,
    /// The radius of the shape's local bounding sphere, kept with the shape: for a hull or a
    /// mesh it is a pass over every vertex.
    pub radius: Scalar,
    /// Whether the shape has no curved surfaces, kept with the shape (a compound's is a pass
    /// over its parts): it decides how contacts are recycled.
    pub polyhedral: bool,
    pub pose: Pose,
    /// The collider's pose relative to its body's origin (its world pose if it has no body).
    pub local: Pose,
    pub aabb: Aabb,
    pub kind: ProxyKind,
    pub sensor: bool,
    pub layers: CollisionLayers,
    pub friction: Friction,
    pub restitution: Restitution,
    /// Upper bound on how far any point of the collider moves this step.
    pub motion: Scalar,
    /// Which collision hooks run for this collider's pairs.
    pub hooks: ActiveCollisionHooks,
}

impl ColliderProxy {
    /// A proxy of `shape` to be filled in (a static collider at the origin, with default
    /// materials, layers and hooks, until then).
    pub(crate) fn new(shape: SharedShape) -> Self {
        Self {
            entity: Entity::PLACEHOLDER,
            key: 0,
            body: None,
            radius: shape.compute_local_bounding_sphere().radius,
            polyhedral: is_polyhedral(&*shape),
            shape,
            pose: Pose::IDENTITY,
            local: Pose::IDENTITY,
            aabb: Aabb::new_invalid(),
            kind: ProxyKind::Static,
            sensor: false,
            layers: default(),
            friction: default(),
            restitution: default(),
            motion: 0.0,
            hooks: default(),
        }
    }

    /// Makes this proxy one of `shape`: a new proxy unless it already holds that very shape.
    /// Last step's proxy is reused as it is: a collider keeps its shape from step to step, and
    /// cloning and dropping the shared shape of every collider every step cost 3 % of a step
    /// of 10,000 free spheres (the reference count is atomic).
    fn hold(&mut self, shape: &SharedShape) {
        if !std::sync::Arc::ptr_eq(&self.shape.0, &shape.0) {
            *self = Self::new(shape.clone());
        }
    }
}

/// Body pairs that must not collide (joined bodies), as `(min, max)` entity pairs.
#[derive(Resource, Default)]
pub(crate) struct CollisionExclusions {
    /// This step's pairs, hashed: every candidate pair of the broad phase looks itself up.
    set: HashSet<(Entity, Entity)>,
    /// This step's pairs as collected (in the joints' query order).
    collected: Vec<(Entity, Entity)>,
    /// Last step's `collected`: when a step collects the same, `set` stands.
    last: Vec<(Entity, Entity)>,
}

impl CollisionExclusions {
    pub(crate) fn excludes(&self, a: Option<Entity>, b: Option<Entity>) -> bool {
        match (a, b) {
            (Some(a), Some(b)) if !self.set.is_empty() => self.set.contains(&(a.min(b), a.max(b))),
            _ => false,
        }
    }

    /// Starts a step's collection.
    pub(crate) fn clear(&mut self) {
        self.collected.clear();
    }

    /// Excludes the bodies `a` and `b` from colliding with each other this step.
    pub(crate) fn push(&mut self, a: Entity, b: Entity) {
        self.collected.push((a.min(b), a.max(b)));
    }

    /// Ends a step's collection: rebuilds the set, unless the pairs are last step's (the
    /// joints' query order is stable, and hashing thousands of joints' pairs every step is not
    /// free).
    pub(crate) fn finish(&mut self) {
        if self.collected != self.last {
            self.set.clear();
            self.set.extend(self.collected.iter().copied());
        }
        std::mem::swap(&mut self.collected, &mut self.last);
    }
}

/// How much larger than its collider's AABB a leaf's box in the tree is, in metres: the size
/// of the default contact tolerance ([`SolverConfig::linear_slop`]). Bodies at rest in a stack
/// move micrometres per step and keep their leaves. A moving body's AABB already includes the
/// speculative margin and this step's motion, and one falling or sliding a few centimetres a
/// step leaves even a 0.1 m box within a step or two: a larger margin buys it little, and
/// costs the overlaps of its neighbours' boxes. With Box2D's 0.1 m, the 4,096-cube pile of
/// the benchmarks kept 46,660 overlapping leaf pairs for 6,556 pairs, traversing them on half
/// its steps and sorting them on the others: its broad phase took 1.22 ms per step, 0.76 ms
/// with 5 mm (18,814 overlapping leaf pairs, one traversal per step); the resting pyramid
/// still skips the traversal, and the free-falling spheres and the collapsing 5,050-cube
/// pyramid measured the same either way.
pub(crate) const FAT_MARGIN: Scalar = 0.005;

/// An overlapping pair of tree leaves: its entities' bits (smaller first) and its leaves.
type Candidate = (u64, u64, u32, u32);

/// Below this many moved leaves their queries run on the calling thread.
const PARALLEL_MOVED: usize = 256;

/// Moved leaves per parallel chunk of queries.
const QUERY_CHUNK: usize = 64;

/// Below this many candidates they are filtered into pairs on the calling thread. Chosen,
/// not measured, as for the solver's stages.
const PARALLEL_CANDIDATES: usize = 2048;

/// Candidates per parallel chunk of the filter.
const CANDIDATE_CHUNK: usize = 512;

/// Proxies from which [`BroadPhase::follow_bodies`] shares them out between threads; fewer
/// are moved inline. Chosen, not measured, as for the solver's stages.
const PARALLEL_PROXIES: usize = 512;

/// The collider snapshot and the overlapping pairs found this step.
#[derive(Resource, Default)]
pub(crate) struct BroadPhase {
    pub proxies: Vec<ColliderProxy>,
    /// Overlapping pairs as proxy indices, `proxies[a].key < proxies[b].key`, sorted by key
    /// (newest collider first) so downstream order never depends on tree shape or `Entity`
    /// values.
    pub pairs: Vec<(u32, u32)>,
    bvh: Bvh,
    workspace: BvhWorkspace,
    /// Leaf (entity index) → proxy index, and the tree update it was last seen in.
    leaf_proxy: Vec<(u32, u64)>,
    leaves: Vec<u32>,
    /// Counts tree updates, to tell leaves seen in the latest one from stale ones.
    generation: u64,
    /// The overlapping leaf pairs of the tree as it stands, with their colliders' keys (sorted
    /// by them when `candidates_sorted`).
    candidates: Vec<Candidate>,
    candidates_sorted: bool,
    /// This step's pairs with their entities' bits, for sorting without indirection.
    keyed_pairs: Vec<Candidate>,
    /// The leaves that moved, came or went since `candidates` were collected, each once (the
    /// tree changed since then if any did).
    moved: Vec<u32>,
    /// Per leaf: whether it is in `moved`.
    leaf_moved: Vec<bool>,
    /// Candidates of the moved leaves found this step, and the merge's output.
    fresh: Vec<Candidate>,
    merged: Vec<Candidate>,
    /// Candidates of the moved leaves, per parallel chunk of them.
    fresh_chunks: Vec<Vec<Candidate>>,
    /// This step's pairs, per parallel chunk of the candidates they were filtered from.
    pair_chunks: Vec<Vec<(u32, u32)>>,
    /// Per proxy, a flag the parallel passes over the proxies write: whether its new box left
    /// its leaf's (following the bodies), or whether it is usable (collecting the colliders).
    proxy_flags: Vec<bool>,
    /// The colliders of the proxies being collected in parallel, in proxy order.
    collected: Vec<Entity>,
}

impl BroadPhase {
    /// This step's proxy for a BVH leaf, if that leaf is in the tree.
    pub(crate) fn leaf_proxy(&self, leaf: u32) -> Option<&ColliderProxy> {
        let index = self.leaf_proxy.get(leaf as usize)?.0;
        self.proxies.get(index as usize)
    }

    /// The proxies whose (enlarged) AABB in the tree overlaps `aabb`, found through the BVH.
    pub(crate) fn proxies_in_aabb<'a>(
        &'a self,
        aabb: &'a Aabb,
    ) -> impl Iterator<Item = &'a ColliderProxy> + 'a {
        self.bvh
            .intersect_aabb(aabb)
            .filter_map(|leaf| self.leaf_proxy(leaf))
    }

    /// The tree of proxy AABBs; its leaves are entity indices (see [`Self::leaf_proxy`]).
    pub(crate) fn bvh(&self) -> &Bvh {
        &self.bvh
    }

    /// Puts every proxy's AABB into the tree: moves the leaves of known colliders whose AABB
    /// left their box, inserts new ones, removes those of colliders no longer in `proxies`,
    /// and refits if any of that happened.
    ///
    /// The proxies whose leaf still holds their box (after [`Self::follow_bodies`], nearly
    /// all) only get their leaf's entry renewed, in parallel chunks for large scenes; the
    /// others are put into the tree on this thread, in proxy order.
    pub(crate) fn update_tree(&mut self) {
        self.generation += 1;
        let generation = self.generation;
        let (bvh, entries) = (&self.bvh, self.leaf_proxy.len());
        let leaf_proxy = Shared::new(&mut self.leaf_proxy);
        let (proxies, flags) = (&mut self.proxies, &mut self.proxy_flags);
        each_proxy_flagged(proxies, flags, PARALLEL_PROXIES, |index, proxy, unfit| {
            let leaf = proxy.entity.index_u32();
            if (leaf as usize) < entries
                && bvh
                    .leaf_node(leaf)
                    .is_some_and(|node| node.contains_aabb(&proxy.aabb))
            {
                // SAFETY: a leaf is its collider's entity index, and no two proxies are of
                // one collider, so each entry is written by one call.
                unsafe { *leaf_proxy.get_mut(leaf as usize) = (index as u32, generation) };
            } else {
                *unfit = true;
            }
        });
        for i in 0..self.proxies.len() {
            if !self.proxy_flags[i] {
                continue;
            }
            let (leaf, aabb) = (self.proxies[i].entity.index_u32(), self.proxies[i].aabb);
            self.fit_leaf(leaf, aabb);
            if self.leaf_proxy.len() <= leaf as usize {
                self.leaf_proxy.resize(leaf as usize + 1, (u32::MAX, 0));
            }
            if self.leaf_proxy[leaf as usize].1 == 0 {
                self.leaves.push(leaf);
            }
            self.leaf_proxy[leaf as usize] = (i as u32, generation);
        }
        // Every proxy's leaf is in `leaves` now, each once: if there are no more leaves than
        // proxies, every leaf was seen.
        if self.leaves.len() > self.proxies.len() {
            self.remove_unseen_leaves();
        }
        if !self.moved.is_empty() {
            self.refit();
        }
    }

    /// Removes from the tree the leaves not seen in the latest [`Self::update_tree`]: those
    /// of colliders gone or no longer taking part.
    fn remove_unseen_leaves(&mut self) {
        let generation = self.generation;
        let (bvh, leaf_proxy) = (&mut self.bvh, &mut self.leaf_proxy);
        let (moved, leaf_moved) = (&mut self.moved, &mut self.leaf_moved);
        self.leaves.retain(|&leaf| {
            let seen = leaf_proxy[leaf as usize].1 == generation;
            if !seen {
                bvh.remove(leaf);
                leaf_proxy[leaf as usize] = (u32::MAX, 0);
                note_moved(moved, leaf_moved, leaf);
            }
            seen
        });
    }

    /// Moves leaf `leaf` to `aabb` grown by [`FAT_MARGIN`] (inserting it if new), unless its
    /// box still contains `aabb`; the boxes above it are left to a refit.
    fn fit_leaf(&mut self, leaf: u32, aabb: Aabb) {
        if self
            .bvh
            .leaf_node(leaf)
            .is_some_and(|node| node.contains_aabb(&aabb))
        {
            return;
        }
        self.bvh
            .insert_or_update_partially(aabb.loosened(FAT_MARGIN), leaf, 0.0);
        note_moved(&mut self.moved, &mut self.leaf_moved, leaf);
    }

    /// Moves every dynamic and kinematic proxy to its body's pose, as `body_pose` gives it
    /// (a proxy whose body has none stays), and the tree's boxes with them.
    ///
    /// The new boxes are computed in parallel chunks for large scenes (each proxy by one
    /// call); the leaves whose box a new one left are then moved on this thread, in proxy
    /// order, and the tree refitted once.
    pub(crate) fn follow_bodies(
        &mut self,
        margin: Scalar,
        body_pose: impl Fn(Entity) -> Option<Pose> + Sync,
    ) {
        let bvh = &self.bvh;
        let (proxies, flags) = (&mut self.proxies, &mut self.proxy_flags);
        each_proxy_flagged(proxies, flags, PARALLEL_PROXIES, |_, proxy, left| {
            if !matches!(proxy.kind, ProxyKind::Dynamic | ProxyKind::Kinematic) {
                return;
            }
            let Some(pose) = proxy.body.and_then(&body_pose) else {
                return;
            };
            proxy.pose = pose * proxy.local;
            proxy.aabb = shape_aabb(proxy.shape.as_ref(), &proxy.pose).loosened(margin);
            let leaf = proxy.entity.index_u32();
            *left = proxy.aabb.mins.is_finite()
                && proxy.aabb.maxs.is_finite()
                && !bvh
                    .leaf_node(leaf)
                    .is_some_and(|node| node.contains_aabb(&proxy.aabb));
        });
        for index in 0..self.proxies.len() {
            if self.proxy_flags[index] {
                let proxy = &self.proxies[index];
                let (leaf, aabb) = (proxy.entity.index_u32(), proxy.aabb);
                self.fit_leaf(leaf, aabb);
            }
        }
        if !self.moved.is_empty() {
            self.bvh.refit_without_opt();
        }
    }

    /// A copy of everything but the scratch workspace, for a
    /// [`PhysicsSnapshot`](crate::PhysicsSnapshot) (and a test that compares a traversal with
    /// the incremental update). The leaves' enlarged boxes depend on history (a leaf moves
    /// only when its collider's box leaves it), and so do the tree's shape and the order of
    /// its traversals; the swept bodies and character controllers of the next step read them.
    pub(crate) fn clone_state(&self) -> Self {
        Self {
            proxies: self.proxies.clone(),
            pairs: self.pairs.clone(),
            bvh: self.bvh.clone(),
            workspace: BvhWorkspace::default(),
            candidates: self.candidates.clone(),
            candidates_sorted: self.candidates_sorted,
            keyed_pairs: Vec::new(),
            moved: self.moved.clone(),
            leaf_moved: self.leaf_moved.clone(),
            fresh: Vec::new(),
            merged: Vec::new(),
            fresh_chunks: Vec::new(),
            pair_chunks: Vec::new(),
            proxy_flags: Vec::new(),
            collected: Vec::new(),
            leaf_proxy: self.leaf_proxy.clone(),
            leaves: self.leaves.clone(),
            generation: self.generation,
        }
    }

    /// The heap memory a state taken with [`Self::clone_state`] holds (the shapes are shared
    /// with the colliders, not counted).
    pub(crate) fn state_heap_bytes(&self) -> usize {
        vec_bytes(&self.proxies)
            + vec_bytes(&self.pairs)
            + self.bvh.heap_memory_size()
            + vec_bytes(&self.candidates)
            + vec_bytes(&self.moved)
            + vec_bytes(&self.leaf_moved)
            + vec_bytes(&self.leaf_proxy)
            + vec_bytes(&self.leaves)
    }

    /// Puts back a state taken with [`Self::clone_state`], keeping this workspace.
    pub(crate) fn restore_state(&mut self, state: &Self) {
        self.proxies.clone_from(&state.proxies);
        self.pairs.clone_from(&state.pairs);
        self.bvh.clone_from(&state.bvh);
        self.leaf_proxy.clone_from(&state.leaf_proxy);
        self.leaves.clone_from(&state.leaves);
        self.generation = state.generation;
        self.candidates.clone_from(&state.candidates);
        self.candidates_sorted = state.candidates_sorted;
        self.moved.clone_from(&state.moved);
        self.leaf_moved.clone_from(&state.leaf_moved);
    }

    /// The proxy at `index` (a new one at the end), holding `shape` (see
    /// [`ColliderProxy::hold`]), for the caller to fill in.
    fn proxy_slot(&mut self, index: usize, shape: &SharedShape) -> &mut ColliderProxy {
        if index == self.proxies.len() {
            self.proxies.push(ColliderProxy::new(shape.clone()));
        }
        let proxy = &mut self.proxies[index];
        proxy.hold(shape);
        proxy
    }

    /// Brings the inner nodes of the tree up to date with moved leaves.
    pub(crate) fn refit(&mut self) {
        self.bvh.refit(&mut self.workspace);
        self.bvh.optimize_incremental(&mut self.workspace);
    }
}

/// What [`collect_colliders`] reads of a collider.
type ColliderData = (
    Entity,
    &'static CreationOrder,
    &'static Collider,
    &'static ColliderPose,
    Option<&'static ColliderOf>,
    Option<&'static CollisionLayers>,
    Has<Sensor>,
    Option<&'static Friction>,
    Option<&'static Restitution>,
    Option<&'static ActiveCollisionHooks>,
);

/// The colliders [`collect_colliders`] reads.
type Colliders<'w, 's> =
    Query<'w, 's, ColliderData, (Without<DisabledCollider>, Without<ColliderDisabled>)>;

/// What [`collect_colliders`] reads of a collider's body.
type BodyData = (
    &'static RigidBody,
    &'static Position,
    &'static Rotation,
    &'static LinearVelocity,
    &'static AngularVelocity,
    Has<Sleeping>,
    Option<&'static Friction>,
    Option<&'static Restitution>,
);

/// What one step's proxies are built with, besides the ECS.
#[derive(Clone, Copy)]
struct ProxyStep {
    dt: Scalar,
    margin: Scalar,
    max_speed: Scalar,
}

/// Colliders from which [`collect_colliders`] builds the proxies in parallel chunks; fewer
/// are built inline, in the query's order. Chosen, not measured, as for the solver's stages.
const PARALLEL_COLLIDERS: usize = 512;

/// Builds the collider snapshot with world poses and enlarged AABBs.
///
/// The proxies follow the query's order. With helper threads and many colliders, each
/// proxy's slot is claimed first and the proxies are then built in parallel chunks, each by
/// one call; proxies that turn out unusable (a non-finite box) are dropped after.
pub(crate) fn collect_colliders(
    mut broad: ResMut<BroadPhase>,
    colliders: Colliders,
    bodies: Query<BodyData>,
    time: Res<PhysicsStepTime>,
    config: Res<SolverConfig>,
) {
    let step = ProxyStep {
        dt: time.delta,
        margin: config.speculative_distance(),
        max_speed: config.max_linear_speed(),
    };
    let broad = &mut *broad;
    let inert = |layers: Option<&CollisionLayers>| layers.copied().unwrap_or_default().is_inert();
    if pool_with_helpers().is_none() || colliders.iter().len() < PARALLEL_COLLIDERS {
        let mut count = 0;
        for data in &colliders {
            if inert(data.5) {
                continue;
            }
            let proxy = broad.proxy_slot(count, data.2.shape());
            count += usize::from(fill_proxy(proxy, data, &bodies, step));
        }
        broad.proxies.truncate(count);
        return;
    }
    let mut count = 0;
    broad.collected.clear();
    for data in &colliders {
        if inert(data.5) {
            continue;
        }
        // Only new slots get their shape here; every other proxy checks its shape in the
        // parallel pass, so that this pass does not read all the proxies on one thread.
        if count == broad.proxies.len() {
            broad
                .proxies
                .push(ColliderProxy::new(data.2.shape().clone()));
        }
        broad.collected.push(data.0);
        count += 1;
    }
    broad.proxies.truncate(count);
    let (proxies, flags) = (&mut broad.proxies, &mut broad.proxy_flags);
    let collected = &broad.collected;
    each_proxy_flagged(
        proxies,
        flags,
        PARALLEL_COLLIDERS,
        |index, proxy, usable| {
            *usable = colliders.get(collected[index]).is_ok_and(|data| {
                proxy.hold(data.2.shape());
                fill_proxy(proxy, data, &bodies, step)
            });
        },
    );
    if broad.proxy_flags.contains(&false) {
        let mut flags = broad.proxy_flags.iter();
        broad.proxies.retain(|_| *flags.next().unwrap_or(&false));
    }
}

/// Calls `f(index, proxy, flag)` for every proxy, with a flag of its own in `flags` (cleared
/// first): in parallel chunks from `threshold` proxies, each proxy by one call.
fn each_proxy_flagged(
    proxies: &mut [ColliderProxy],
    flags: &mut Vec<bool>,
    threshold: usize,
    f: impl Fn(usize, &mut ColliderProxy, &mut bool) + Sync,
) {
    let len = proxies.len();
    flags.clear();
    flags.resize(len, false);
    let (proxies, flags) = (Shared::new(proxies), Shared::new(flags));
    parallel_for(len, threshold, |range| {
        for index in range {
            // SAFETY: each proxy and its flag are handed to the one call whose range holds
            // them.
            f(index, unsafe { proxies.get_mut(index) }, unsafe {
                flags.get_mut(index)
            });
        }
    });
}

/// Fills in `proxy` for the collider `data` describes: its world pose and the box it sweeps
/// this step. False if the collider takes no part (its box or its reach overflows).
#[inline]
fn fill_proxy(
    proxy: &mut ColliderProxy,
    (entity, order, collider, local, collider_of, layers, sensor, friction, restitution, hooks): bevy::ecs::query::QueryItem<'_, '_, ColliderData>,
    bodies: &Query<BodyData>,
    ProxyStep {
        dt,
        margin,
        max_speed,
    }: ProxyStep,
) -> bool {
    let radius = proxy.radius;
    let body = collider_of.and_then(|c| bodies.get(c.body).ok().map(|b| (c.body, b)));
    let (kind, pose, shift, turn, body_friction, body_restitution) = match body {
        Some((_, (rb, position, rotation, v, w, sleeping, bf, br))) => {
            let body_pose = crate::math::pose(position.0, rotation.0);
            let pose = body_pose * local.pose();
            let kind = ProxyKind::of(*rb, sleeping);
            let reach = local.translation.length() + radius;
            let (shift, turn) = if matches!(kind, ProxyKind::Static | ProxyKind::Sleeping) {
                (Vector::ZERO, 0.0)
            } else {
                // A turn moves a point at distance r by at most 2r, however fast the spin.
                let shift = v.0.clamp_length_max(max_speed) * dt;
                (shift, (w.length() * dt).min(2.0) * reach)
            };
            (kind, pose, shift, turn, bf, br)
        }
        None => (
            ProxyKind::Static,
            local.pose(),
            Vector::ZERO,
            0.0,
            None,
            None,
        ),
    };
    // The box the collider sweeps in a step at its velocity, not a box as far out in every
    // direction: bodies falling side by side (a pile under a strong gravity, a blast) are then
    // not all candidates of each other.
    let motion = shift.length() + turn;
    // A body so far out that its box or its reach overflows takes no part (its pose is finite,
    // so the validation stage lets it be).
    if !motion.is_finite() {
        return false;
    }
    let aabb = shape_aabb(collider.shape().as_ref(), &pose);
    let aabb = aabb.merged(&aabb.translated(shift)).loosened(margin + turn);
    if !aabb.mins.is_finite() || !aabb.maxs.is_finite() {
        return false;
    }
    proxy.entity = entity;
    proxy.key = order.pair_key();
    proxy.body = body.map(|(e, _)| e);
    proxy.pose = pose;
    proxy.local = local.pose();
    proxy.aabb = aabb;
    proxy.kind = kind;
    proxy.sensor = sensor;
    proxy.layers = layers.copied().unwrap_or_default();
    proxy.friction = friction.or(body_friction).copied().unwrap_or_default();
    proxy.restitution = restitution
        .or(body_restitution)
        .copied()
        .unwrap_or_default();
    proxy.motion = motion;
    proxy.hooks = hooks.copied().unwrap_or_default();
    true
}

/// Updates the tree with this step's AABBs and collects the overlapping pairs that may
/// interact.
pub(crate) fn find_pairs(mut broad: ResMut<BroadPhase>, exclusions: Res<CollisionExclusions>) {
    broad.update_tree();
    find_pairs_in(&mut broad, &exclusions);
}

/// Collects this step's pairs from the updated tree: filters the standing candidates if no
/// leaf moved, brings them up to date with queries if few did, and traverses the tree if many
/// did (or if a candidate's collider changed).
fn find_pairs_in(broad: &mut BroadPhase, exclusions: &CollisionExclusions) {
    let current = if broad.moved.is_empty() {
        true
    } else if broad.queries_pay() {
        broad.update_candidates();
        true
    } else {
        false
    };
    if !current || !broad.filter_candidates(exclusions) {
        broad.traverse(exclusions);
    }
    for leaf in broad.moved.drain(..) {
        broad.leaf_moved[leaf as usize] = false;
    }
}

/// Marks `leaf` as moved since the candidates were collected.
fn note_moved(moved: &mut Vec<u32>, leaf_moved: &mut Vec<bool>, leaf: u32) {
    if leaf_moved.len() <= leaf as usize {
        leaf_moved.resize(leaf as usize + 1, false);
    }
    if !leaf_moved[leaf as usize] {
        leaf_moved[leaf as usize] = true;
        moved.push(leaf);
    }
}

/// The candidates are updated by a query per moved leaf while fewer than one leaf in this many
/// moved per thread the queries run on (they run in parallel chunks, the traversal on one
/// thread), and collected by a traversal of the whole tree otherwise. Measured per step on the
/// benchmark scenes: the 4,096-cube pile (18,700 candidates) settling with 100–700 of its
/// leaves moving, 0.25–0.5 ms with queries against 0.6–0.7 ms for the traversal, even at about
/// a third; the collapsing 5,050-cube pyramid, 0.6 against 0.9 ms at 1,000 moved, even at
/// about two in five.
const MOVED_FOR_TRAVERSAL: usize = 4;

impl BroadPhase {
    /// Traverses the tree against itself: this step's pairs, sorted by key, and every
    /// overlapping leaf pair as the candidates (sorted when first filtered).
    fn traverse(&mut self, exclusions: &CollisionExclusions) {
        self.candidates.clear();
        self.keyed_pairs.clear();
        let (proxies, leaf_proxy) = (&self.proxies, &self.leaf_proxy);
        let (candidates, keyed) = (&mut self.candidates, &mut self.keyed_pairs);
        self.bvh
            .traverse_bvtt_single_tree::<false>(&mut self.workspace, &mut |l1, l2| {
                let (a, b) = (leaf_proxy[l1 as usize].0, leaf_proxy[l2 as usize].0);
                let (p1, p2) = (&proxies[a as usize], &proxies[b as usize]);
                let (k1, k2) = (p1.key, p2.key);
                let (k1, k2, l1, l2, a, b) = if k1 < k2 {
                    (k1, k2, l1, l2, a, b)
                } else {
                    (k2, k1, l2, l1, b, a)
                };
                candidates.push((k1, k2, l1, l2));
                if may_interact(p1, p2) && !exclusions.excludes(p1.body, p2.body) {
                    keyed.push((k1, k2, a, b));
                }
            });
        // Sorted by the colliders' keys (their creation order), so that downstream order never
        // depends on the tree's shape or on `Entity` values; the keys are distinct.
        self.keyed_pairs.sort_unstable();
        self.pairs.clear();
        self.pairs
            .extend(self.keyed_pairs.iter().map(|&(_, _, a, b)| (a, b)));
        self.candidates_sorted = false;
    }

    /// Sorts the candidates by their colliders' keys, unless they are.
    fn sort_candidates(&mut self) {
        if !self.candidates_sorted {
            self.candidates.sort_unstable();
            self.candidates_sorted = true;
        }
    }

    /// Whether querying the tree with each moved leaf is cheaper than traversing it: while
    /// fewer than one leaf in [`MOVED_FOR_TRAVERSAL`] moved per thread that the queries run on.
    fn queries_pay(&self) -> bool {
        let threads = match pool_with_helpers() {
            Some(pool) if self.moved.len() >= PARALLEL_MOVED => pool.thread_num(),
            _ => 1,
        };
        self.moved.len() * MOVED_FOR_TRAVERSAL < self.leaves.len() * threads
    }

    /// Brings the candidates up to date with the moved leaves: drops the pairs of every leaf
    /// that moved, came or went, and adds those the moved leaves' boxes overlap now, found by
    /// querying the tree with each. The same pairs a traversal collects, sorted.
    fn update_candidates(&mut self) {
        self.sort_candidates();
        let leaf_moved = &self.leaf_moved;
        let moved = |leaf: u32| leaf_moved[leaf as usize];
        let (bvh, leaf_proxy, proxies) = (&self.bvh, &self.leaf_proxy, &self.proxies);
        let key = |leaf: u32| proxies[leaf_proxy[leaf as usize].0 as usize].key;
        // The candidates of the moved leaves in `range` of `moved`, into `out`.
        let query = |range: Range<usize>, out: &mut Vec<Candidate>| {
            for &leaf in &self.moved[range] {
                let Some(node) = bvh.leaf_node(leaf) else {
                    continue; // Removed.
                };
                let k = key(leaf);
                for other in bvh.leaves(|n| n.intersects(node)) {
                    // A pair of two moved leaves is found from both: keep it once.
                    if other == leaf || (moved(other) && other < leaf) {
                        continue;
                    }
                    let o = key(other);
                    out.push(if k < o {
                        (k, o, leaf, other)
                    } else {
                        (o, k, other, leaf)
                    });
                }
            }
        };
        let count = self.moved.len();
        let (fresh, lists) = (&mut self.fresh, &mut self.fresh_chunks);
        collect_in_chunks(count, PARALLEL_MOVED, QUERY_CHUNK, lists, fresh, query);
        self.fresh.sort_unstable();
        let standing =
            (self.candidates.iter().copied()).filter(|&(_, _, l1, l2)| !moved(l1) && !moved(l2));
        merge_sorted(standing, &self.fresh, &mut self.merged);
        std::mem::swap(&mut self.candidates, &mut self.merged);
    }

    /// This step's pairs from the candidates; false (pairs unusable) if a leaf's collider is
    /// no longer the one its candidates were keyed by (an entity index reused while its leaf
    /// box still held the new collider).
    fn filter_candidates(&mut self, exclusions: &CollisionExclusions) -> bool {
        self.sort_candidates();
        let (proxies, leaf_proxy) = (&self.proxies, &self.leaf_proxy);
        let candidates = &self.candidates;
        let stale = AtomicBool::new(false);
        let filter = |range: Range<usize>, out: &mut Vec<(u32, u32)>| {
            let mut current = true;
            out.extend(candidates[range].iter().filter_map(|&(k1, k2, l1, l2)| {
                let (a, b) = (leaf_proxy[l1 as usize].0, leaf_proxy[l2 as usize].0);
                let (p1, p2) = (&proxies[a as usize], &proxies[b as usize]);
                current &= p1.key == k1 && p2.key == k2;
                (may_interact(p1, p2) && !exclusions.excludes(p1.body, p2.body)).then_some((a, b))
            }));
            if !current {
                stale.store(true, Ordering::Relaxed);
            }
        };
        let (pairs, lists) = (&mut self.pairs, &mut self.pair_chunks);
        collect_in_chunks(
            candidates.len(),
            PARALLEL_CANDIDATES,
            CANDIDATE_CHUNK,
            lists,
            pairs,
            filter,
        );
        !stale.into_inner()
    }
}

/// Runs `f(range, list)` over `0..count` in chunks of `chunk`, each appending what it finds
/// to `list`, and leaves in `out` everything found, in chunk order. From `threshold` on, the
/// chunks run in parallel on the crew, each into a list of its own in `lists` (joined in
/// chunk order, so `out` is the same whichever thread ran which chunk); below it, `f` runs
/// once on this thread, straight into `out`.
fn collect_in_chunks<T: Copy + Send + Sync>(
    count: usize,
    threshold: usize,
    chunk: usize,
    lists: &mut Vec<Vec<T>>,
    out: &mut Vec<T>,
    f: impl Fn(Range<usize>, &mut Vec<T>) + Sync,
) {
    out.clear();
    let Some(pool) = pool_with_helpers().filter(|_| count >= threshold) else {
        f(0..count, out);
        return;
    };
    let chunks = count.div_ceil(chunk);
    if lists.len() < chunks {
        lists.resize_with(chunks, Vec::new);
    }
    let shared = Shared::new(&mut lists[..chunks]);
    let range = |index: usize| (0, index * chunk..((index + 1) * chunk).min(count));
    run_chunks(pool, chunks, range, &|range: Range<usize>| {
        // SAFETY: each chunk's list is written by the one call that runs it.
        let list = unsafe { shared.get_mut(range.start / chunk) };
        list.clear();
        f(range, list);
    });
    for list in &lists[..chunks] {
        out.extend_from_slice(list);
    }
}

/// Filters pairs that can never produce contacts or events.
fn may_interact(a: &ColliderProxy, b: &ColliderProxy) -> bool {
    use ProxyKind::*;
    let moving = |k| matches!(k, Dynamic | Sleeping);
    (a.body.is_none() || a.body != b.body)
        && (moving(a.kind) || moving(b.kind) || a.sensor || b.sensor)
        && !(a.kind == Static && b.kind == Static)
        && a.layers.interacts_with(b.layers)
        && aabb_overlap(&a.aabb, &b.aabb)
}

fn aabb_overlap(a: &Aabb, b: &Aabb) -> bool {
    a.mins.cmple(b.maxs).all() && b.mins.cmple(a.maxs).all()
}

/// How far apart two proxies' surfaces may be for a contact point to matter this step: the
/// speculative margin plus how far each can move.
pub(crate) fn prediction_distance(a: &ColliderProxy, b: &ColliderProxy, margin: Scalar) -> Scalar {
    margin + a.motion + b.motion
}

/// `a` and `b` (each sorted) merged into `out`, sorted (`a`'s first where equal).
fn merge_sorted<T: Ord + Copy>(a: impl Iterator<Item = T>, b: &[T], out: &mut Vec<T>) {
    out.clear();
    let mut b = b.iter().copied().peekable();
    for x in a {
        while let Some(y) = b.next_if(|&y| y < x) {
            out.push(y);
        }
        out.push(x);
    }
    out.extend(b);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entity `index`, `versions` generations after the first.
    fn entity(index: u32, versions: u32) -> Entity {
        let index = Entity::from_raw_u32(index).expect("a valid index").index();
        Entity::from_index_and_generation(
            index,
            bevy::ecs::entity::EntityGeneration::FIRST.after_versions(versions),
        )
    }

    /// Three overlapping unit balls created in turn; the first one's entity is `versions`
    /// generations on, the others' three, and its creation order `first`.
    fn broad_phase(broad: &mut BroadPhase, versions: u32, first: u64) {
        broad.proxies.clear();
        for (index, x) in [(1, 0.0), (2, 0.5), (3, 1.0)] {
            let mut proxy = ColliderProxy::new(SharedShape::ball(1.0));
            proxy.entity = entity(index, if index == 1 { versions } else { 3 });
            let order = if index == 1 { first } else { u64::from(index) };
            proxy.key = u64::MAX - order;
            proxy.kind = ProxyKind::Dynamic;
            proxy.pose = Pose::from_translation(Vec3::new(x, 0.0, 0.0));
            proxy.aabb = proxy.shape.compute_aabb(&proxy.pose);
            broad.proxies.push(proxy);
        }
    }

    /// Every pair of `entities`, given in creation order, newest first.
    fn ordered_pairs([a, b, c]: [Entity; 3]) -> Vec<(Entity, Entity)> {
        vec![(c, b), (c, a), (b, a)]
    }

    fn pair_entities(broad: &BroadPhase) -> Vec<(Entity, Entity)> {
        let of = |i: u32| broad.proxies[i as usize].entity;
        broad.pairs.iter().map(|&(a, b)| (of(a), of(b))).collect()
    }

    /// Makes the compute pool two threads (unless the process has one already) and takes this
    /// test's turn on the process-wide crew, until the returned guard drops.
    fn two_thread_pool() -> impl Sized {
        bevy::tasks::ComputeTaskPool::get_or_init(|| {
            bevy::tasks::TaskPoolBuilder::new().num_threads(2).build()
        });
        crew_turn()
    }

    #[cfg(feature = "parallel")]
    fn crew_turn() -> std::sync::MutexGuard<'static, ()> {
        (crate::parallel::tests::TURN.lock()).unwrap_or_else(|e| e.into_inner())
    }

    /// Without the `parallel` feature there is no crew to share.
    #[cfg(not(feature = "parallel"))]
    fn crew_turn() {}

    /// 1,200 colliders, balls and boxes in turn, collected on two threads; then every ball
    /// becomes a capsule (its `Collider` replaced) and one ball moves to another archetype
    /// (which moves another collider into its place in the query's order): each proxy must
    /// then hold its own collider's shape.
    #[test]
    fn proxies_hold_their_colliders_shapes_when_shapes_change() {
        use bevy::ecs::system::RunSystemOnce;
        /// A component only this test puts on a collider.
        #[derive(Component)]
        struct Moved;
        let _turn = two_thread_pool();
        let mut world = World::new();
        world.init_resource::<crate::body::CreationCounter>();
        world.init_resource::<BroadPhase>();
        world.insert_resource(PhysicsStepTime {
            delta: 1.0 / 60.0,
            ..default()
        });
        world.init_resource::<SolverConfig>();
        let colliders: Vec<Entity> = (0..1200)
            .map(|i| {
                let collider = if i % 2 == 0 {
                    Collider::sphere(0.5)
                } else {
                    Collider::cuboid(1.0, 1.0, 1.0)
                };
                world.spawn(collider).id()
            })
            .collect();
        let collect = |world: &mut World| {
            world
                .run_system_once(collect_colliders)
                .expect("the system runs");
        };
        collect(&mut world);
        for &collider in colliders.iter().step_by(2) {
            world
                .entity_mut(collider)
                .insert(Collider::capsule(0.25, 0.5));
        }
        world.entity_mut(colliders[0]).insert(Moved);
        collect(&mut world);
        let proxies = &world.resource::<BroadPhase>().proxies;
        assert_eq!(proxies.len(), colliders.len());
        for proxy in proxies {
            let collider = world
                .get::<Collider>(proxy.entity)
                .expect("a live collider");
            assert!(
                std::sync::Arc::ptr_eq(&proxy.shape.0, &collider.shape().0),
                "{}: its proxy holds another collider's shape",
                proxy.entity
            );
        }
    }

    /// Steps of 2,400 balls where some move a little (within their leaf boxes), some jump,
    /// some go and come back: the pairs the moved leaves' queries keep up are, every step,
    /// those a traversal of the same tree finds, in the same order. Enough leaves move for
    /// the queries to run in parallel chunks where the build has threads.
    #[test]
    fn moved_leaves_update_the_pairs_as_a_traversal_would() {
        let _turn = two_thread_pool();
        // A fixed pseudo-random sequence (xorshift).
        let mut state = 0x9e37_79b9_u32;
        let mut next = move |m: u32| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state % m
        };
        let exclusions = CollisionExclusions::default();
        let mut broad = BroadPhase::default();
        let mut centres: Vec<Vec3> = (0..2400)
            .map(|_| Vec3::new(next(1600) as f32, next(20) as f32, next(20) as f32) * 0.1)
            .collect();
        let mut present = vec![true; centres.len()];
        let (mut incremental, mut in_chunks, mut traversals) = (0, 0, 0);
        for step in 0..40 {
            broad.proxies.clear();
            for (index, centre) in centres.iter().enumerate().filter(|(i, _)| present[*i]) {
                let mut proxy = ColliderProxy::new(SharedShape::ball(0.25));
                proxy.entity = entity(index as u32 + 1, 0);
                proxy.key = u64::MAX - index as u64;
                proxy.kind = ProxyKind::Dynamic;
                proxy.pose = Pose::from_translation(*centre);
                proxy.aabb = proxy.shape.compute_aabb(&proxy.pose);
                broad.proxies.push(proxy);
            }
            broad.update_tree();
            let mut traversed = broad.clone_state();
            traversed.traverse(&exclusions);
            traversed.candidates.sort_unstable();
            let moved = broad.moved.len();
            let queried = step > 0 && broad.queries_pay();
            find_pairs_in(&mut broad, &exclusions);
            if queried {
                incremental += 1;
                in_chunks += usize::from(moved >= PARALLEL_MOVED);
            } else {
                traversals += 1;
            }
            assert_eq!(broad.pairs, traversed.pairs, "step {step}");
            broad.candidates.sort_unstable();
            assert_eq!(broad.candidates, traversed.candidates, "step {step}");
            for (index, centre) in centres.iter_mut().enumerate() {
                match next(40) {
                    0..5 => *centre += Vec3::new(0.0, 0.0, next(100) as f32 * 0.01),
                    5..7 => present[index] = !present[index],
                    7..11 => centre.x += 0.001,
                    _ => {}
                }
            }
        }
        assert!(
            incremental > 30 && in_chunks > 30 && traversals > 0,
            "{incremental} ({in_chunks} of at least {PARALLEL_MOVED} leaves) / {traversals}"
        );
    }

    /// 2,000 balls on bodies, a third of which move out of their leaf boxes: after the
    /// proxies follow their bodies, every ball's box lies in its leaf's, in a tree whose
    /// leaves and proxies are bit for bit those of the same update on one thread.
    #[test]
    fn proxies_follow_their_bodies_alike_on_one_thread_and_on_two() {
        let _turn = two_thread_pool();
        let mut broad = BroadPhase::default();
        for index in 0..2000u32 {
            let mut proxy = ColliderProxy::new(SharedShape::ball(0.25));
            proxy.entity = entity(index + 1, 0);
            proxy.body = Some(entity(index + 1, 0));
            proxy.key = u64::MAX - u64::from(index);
            proxy.kind = ProxyKind::Dynamic;
            proxy.pose = Pose::from_translation(Vec3::new(index as f32, 0.0, 0.0));
            proxy.aabb = proxy.shape.compute_aabb(&proxy.pose);
            broad.proxies.push(proxy);
        }
        broad.update_tree();
        find_pairs_in(&mut broad, &CollisionExclusions::default());
        // Every third body moves by 10 cm (out of its leaf's box), the others by 1 mm.
        let body_pose = |body: Entity| {
            let index = body.index_u32() - 1;
            let shift = if index.is_multiple_of(3) { 0.1 } else { 0.001 };
            Some(Pose::from_translation(Vec3::new(index as f32, shift, 0.0)))
        };
        let mut alone = broad.clone_state();
        crate::parallel::on_one_thread_if(true, || alone.follow_bodies(0.002, body_pose));
        broad.follow_bodies(0.002, body_pose);
        let leaf_box = |broad: &BroadPhase, leaf: u32| {
            let node = broad.bvh.leaf_node(leaf).expect("a leaf per proxy");
            (node.mins(), node.maxs())
        };
        for (proxy, single) in broad.proxies.iter().zip(&alone.proxies) {
            let leaf = proxy.entity.index_u32();
            assert_eq!((proxy.pose, proxy.aabb), (single.pose, single.aabb));
            assert_eq!(leaf_box(&broad, leaf), leaf_box(&alone, leaf));
            let node = broad.bvh.leaf_node(leaf).expect("a leaf per proxy");
            assert!(node.contains_aabb(&proxy.aabb), "leaf {leaf} left behind");
        }
        assert_eq!(broad.moved, alone.moved);
        assert_eq!(broad.moved.len(), 667, "the bodies that moved 10 cm");
    }

    /// A collider that takes over a despawned one's entity index (a new generation, created
    /// last) while its AABB still fits the old leaf's box gets its pairs keyed and ordered by
    /// its own creation order: the standing candidates were keyed by the old collider's.
    #[test]
    fn reused_entity_index_rekeys_the_standing_candidates() {
        let mut world = World::new();
        world.init_resource::<BroadPhase>();
        world.init_resource::<CollisionExclusions>();
        let mut schedule = Schedule::default();
        schedule.add_systems(find_pairs);
        broad_phase(&mut world.resource_mut::<BroadPhase>(), 0, 1);
        schedule.run(&mut world);
        let [e1, e2, e3] = [entity(1, 0), entity(2, 3), entity(3, 3)];
        let first = pair_entities(world.resource::<BroadPhase>());
        assert_eq!(first, ordered_pairs([e1, e2, e3]));

        broad_phase(&mut world.resource_mut::<BroadPhase>(), 5, 4);
        schedule.run(&mut world);
        // The new collider sorts before the others (the old one sorted after them).
        assert_eq!(
            pair_entities(world.resource::<BroadPhase>()),
            ordered_pairs([e2, e3, entity(1, 5)]),
            "pairs must be (newer, older) collider and sorted newest first"
        );
    }
}
