//! Broad phase: one dense snapshot of every collider's world pose and enlarged AABB, and the
//! pairs whose AABBs overlap.
//!
//! Overlaps come from parry's bounding volume hierarchy: leaves are kept across steps (keyed by
//! entity index), refitted and incrementally re-optimised each step, and the tree is traversed
//! against itself. The cost is O(n log n + pairs), never all pairs. Each AABB is enlarged by the
//! speculative margin plus how far the collider can move this step, so fast bodies find the
//! surfaces they are about to reach.
//!
//! A collider in no group ([`CollisionLayers`] with no memberships) is left out: it can pair
//! with nothing and no spatial query finds it, so it costs no AABB, leaf or traversal (the
//! 40 × 40 joint grid of the benchmarks, whose balls collide with nothing: 1.33 → 1.23 ms per
//! step).

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
use crate::body::{AngularVelocity, LinearVelocity, Position, RigidBody, Rotation, Sleeping};
use crate::math::Scalar;
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
    pub body: Option<Entity>,
    pub shape: SharedShape,
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
            body: None,
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
}

/// Body pairs that must not collide (joined bodies), as `(min, max)` entity pairs.
#[derive(Resource, Default)]
pub(crate) struct CollisionExclusions {
    /// This step's pairs, sorted and without repeats.
    sorted: Vec<(Entity, Entity)>,
    /// This step's pairs as collected (in the joints' query order).
    collected: Vec<(Entity, Entity)>,
    /// Last step's `collected`: when a step collects the same, `sorted` stands.
    last: Vec<(Entity, Entity)>,
}

impl CollisionExclusions {
    pub(crate) fn excludes(&self, a: Option<Entity>, b: Option<Entity>) -> bool {
        match (a, b) {
            (Some(a), Some(b)) if !self.sorted.is_empty() => {
                self.sorted.binary_search(&(a.min(b), a.max(b))).is_ok()
            }
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

    /// Ends a step's collection: sorts the pairs, unless they are last step's (the joints'
    /// query order is stable, and sorting thousands of joints' pairs every step is not free).
    pub(crate) fn finish(&mut self) {
        if self.collected != self.last {
            self.sorted.clear();
            self.sorted.extend_from_slice(&self.collected);
            self.sorted.sort_unstable();
            self.sorted.dedup();
        }
        std::mem::swap(&mut self.collected, &mut self.last);
    }
}

/// The collider snapshot and the overlapping pairs found this step.
#[derive(Resource, Default)]
pub(crate) struct BroadPhase {
    pub proxies: Vec<ColliderProxy>,
    /// Overlapping pairs as proxy indices, `proxies[a].entity < proxies[b].entity`, sorted by
    /// entity so downstream order never depends on tree shape.
    pub pairs: Vec<(u32, u32)>,
    bvh: Bvh,
    workspace: BvhWorkspace,
    /// Leaf (entity index) → proxy index, and the tree update it was last seen in.
    leaf_proxy: Vec<(u32, u64)>,
    leaves: Vec<u32>,
    /// Counts tree updates, to tell leaves seen in the latest one from stale ones.
    generation: u64,
    /// This step's pairs with their entities' bits, for sorting without indirection.
    keyed_pairs: Vec<(u64, u64, u32, u32)>,
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

    /// Puts every proxy's AABB into the tree: updates the leaves of known colliders, inserts
    /// new ones, removes those of colliders no longer in `proxies`, and refits.
    pub(crate) fn update_tree(&mut self) {
        self.generation += 1;
        let generation = self.generation;
        for (i, proxy) in self.proxies.iter().enumerate() {
            let leaf = proxy.entity.index_u32();
            self.bvh.insert_or_update_partially(proxy.aabb, leaf, 0.0);
            if self.leaf_proxy.len() <= leaf as usize {
                self.leaf_proxy.resize(leaf as usize + 1, (u32::MAX, 0));
            }
            if self.leaf_proxy[leaf as usize].1 == 0 {
                self.leaves.push(leaf);
            }
            self.leaf_proxy[leaf as usize] = (i as u32, generation);
        }
        let (bvh, leaf_proxy) = (&mut self.bvh, &mut self.leaf_proxy);
        self.leaves.retain(|&leaf| {
            let seen = leaf_proxy[leaf as usize].1 == generation;
            if !seen {
                bvh.remove(leaf);
                leaf_proxy[leaf as usize] = (u32::MAX, 0);
            }
            seen
        });
        self.refit();
    }

    /// Moves the proxy at `index` to the world pose `pose`. Its leaf follows, but the boxes
    /// above it do not: call [`Self::refit_boxes`] after moving proxies.
    pub(crate) fn move_proxy(&mut self, index: usize, pose: Pose, margin: Scalar) {
        let proxy = &mut self.proxies[index];
        proxy.pose = pose;
        proxy.aabb = proxy.shape.compute_aabb(&pose).loosened(margin);
        if proxy.aabb.mins.is_finite() && proxy.aabb.maxs.is_finite() {
            self.bvh
                .insert_or_update_partially(proxy.aabb, proxy.entity.index_u32(), 0.0);
        }
    }

    /// Brings the inner boxes of the tree up to date with moved leaves, keeping its shape and
    /// layout. One pass over the tree, like the broad phase's own refit each step; where most
    /// leaves moved it is cheaper than growing each leaf's ancestors as it moves (free10k:
    /// 2.36 → 2.25 ms per step).
    pub(crate) fn refit_boxes(&mut self) {
        self.bvh.refit_without_opt();
    }

    /// A copy of everything but the scratch workspace, for a
    /// [`PhysicsSnapshot`](crate::PhysicsSnapshot): the tree's shape and its incremental
    /// optimisation state depend on history, and decide which of two equally near colliders a
    /// nearest-hit query or a swept body meets first.
    pub(crate) fn clone_state(&self) -> Self {
        Self {
            proxies: self.proxies.clone(),
            pairs: self.pairs.clone(),
            bvh: self.bvh.clone(),
            workspace: BvhWorkspace::default(),
            keyed_pairs: Vec::new(),
            leaf_proxy: self.leaf_proxy.clone(),
            leaves: self.leaves.clone(),
            generation: self.generation,
        }
    }

    /// Puts back a state taken with [`Self::clone_state`], keeping this workspace.
    pub(crate) fn restore_state(&mut self, state: &Self) {
        self.proxies.clone_from(&state.proxies);
        self.pairs.clone_from(&state.pairs);
        self.bvh.clone_from(&state.bvh);
        self.leaf_proxy.clone_from(&state.leaf_proxy);
        self.leaves.clone_from(&state.leaves);
        self.generation = state.generation;
    }

    /// The proxy at `index` (a new one at the end), holding `shape`, for the caller to fill in.
    /// Last step's proxy is reused as it is: a collider keeps its shape from step to step, and
    /// cloning and dropping the shared shape of every collider every step cost 3 % of a step
    /// of 10,000 free spheres (the reference count is atomic).
    fn proxy_slot(&mut self, index: usize, shape: &SharedShape) -> &mut ColliderProxy {
        if index == self.proxies.len() {
            self.proxies.push(ColliderProxy::new(shape.clone()));
        }
        let proxy = &mut self.proxies[index];
        if !std::sync::Arc::ptr_eq(&proxy.shape.0, &shape.0) {
            proxy.shape = shape.clone();
        }
        proxy
    }

    /// Brings the inner nodes of the tree up to date with moved leaves.
    pub(crate) fn refit(&mut self) {
        self.bvh.refit(&mut self.workspace);
        self.bvh.optimize_incremental(&mut self.workspace);
    }
}

/// Builds the collider snapshot with world poses and enlarged AABBs.
#[allow(clippy::type_complexity)]
pub(crate) fn collect_colliders(
    mut broad: ResMut<BroadPhase>,
    colliders: Query<
        (
            Entity,
            &Collider,
            &ColliderPose,
            Option<&ColliderOf>,
            Option<&CollisionLayers>,
            Has<Sensor>,
            Option<&Friction>,
            Option<&Restitution>,
            Option<&ActiveCollisionHooks>,
        ),
        (Without<DisabledCollider>, Without<ColliderDisabled>),
    >,
    bodies: Query<(
        &RigidBody,
        &Position,
        &Rotation,
        &LinearVelocity,
        &AngularVelocity,
        Has<Sleeping>,
        Option<&Friction>,
        Option<&Restitution>,
    )>,
    time: Res<PhysicsStepTime>,
    config: Res<SolverConfig>,
) {
    let dt = time.delta;
    let margin = config.speculative_distance();
    let mut count = 0;
    for (entity, collider, local, collider_of, layers, sensor, friction, restitution, hooks) in
        &colliders
    {
        let layers = layers.copied().unwrap_or_default();
        if layers.is_inert() {
            continue;
        }
        let body = collider_of.and_then(|c| bodies.get(c.body).ok().map(|b| (c.body, b)));
        let (kind, pose, motion, body_friction, body_restitution) = match body {
            Some((_, (rb, position, rotation, v, w, sleeping, bf, br))) => {
                let body_pose = crate::math::pose(position.0, rotation.0);
                let pose = body_pose * local.pose();
                let kind = ProxyKind::of(*rb, sleeping);
                let reach = local.translation.length()
                    + collider.shape().compute_local_bounding_sphere().radius;
                let motion = if matches!(kind, ProxyKind::Static | ProxyKind::Sleeping) {
                    0.0
                } else {
                    (v.length() + w.length() * reach) * dt
                };
                (kind, pose, motion, bf, br)
            }
            None => (ProxyKind::Static, local.pose(), 0.0, None, None),
        };
        let local = local.pose();
        let aabb = collider
            .shape()
            .compute_aabb(&pose)
            .loosened(margin + motion);
        if !aabb.mins.is_finite() || !aabb.maxs.is_finite() {
            continue;
        }
        let proxy = broad.proxy_slot(count, collider.shape());
        proxy.entity = entity;
        proxy.body = body.map(|(e, _)| e);
        proxy.pose = pose;
        proxy.local = local;
        proxy.aabb = aabb;
        proxy.kind = kind;
        proxy.sensor = sensor;
        proxy.layers = layers;
        proxy.friction = friction.or(body_friction).copied().unwrap_or_default();
        proxy.restitution = restitution
            .or(body_restitution)
            .copied()
            .unwrap_or_default();
        proxy.motion = motion;
        proxy.hooks = hooks.copied().unwrap_or_default();
        count += 1;
    }
    broad.proxies.truncate(count);
}

/// Updates the tree with this step's AABBs and collects the overlapping pairs that may
/// interact.
pub(crate) fn find_pairs(mut broad: ResMut<BroadPhase>, exclusions: Res<CollisionExclusions>) {
    let broad = &mut *broad;
    broad.update_tree();
    broad.keyed_pairs.clear();
    let (proxies, keyed, leaf_proxy) = (&broad.proxies, &mut broad.keyed_pairs, &broad.leaf_proxy);
    broad
        .bvh
        .traverse_bvtt_single_tree::<false>(&mut broad.workspace, &mut |l1, l2| {
            let a = leaf_proxy[l1 as usize].0;
            let b = leaf_proxy[l2 as usize].0;
            let (p1, p2) = (&proxies[a as usize], &proxies[b as usize]);
            if may_interact(p1, p2) && !exclusions.excludes(p1.body, p2.body) {
                let (k1, k2) = (p1.entity.to_bits(), p2.entity.to_bits());
                keyed.push(if k1 < k2 {
                    (k1, k2, a, b)
                } else {
                    (k2, k1, b, a)
                });
            }
        });
    // By entity (`Entity`'s order is its bits' order), so that downstream order never depends
    // on the tree's shape; the keys are distinct.
    keyed.sort_unstable();
    broad.pairs.clear();
    broad
        .pairs
        .extend(broad.keyed_pairs.iter().map(|&(_, _, a, b)| (a, b)));
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
