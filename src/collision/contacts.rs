//! Contacts between colliders: the persistent contact pairs, collision messages, and the
//! [`Collisions`] system parameter for reading them.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use parry3d::math::Pose;
use parry3d::query::{ContactManifold, ContactManifoldsWorkspace};

use crate::math::{Scalar, Vector};

/// Two colliders started touching (or a sensor started overlapping something).
///
/// Sent every step as a [`Message`] for every pair that began touching: read it with a
/// [`MessageReader`]. As a message, `collider1` is the collider of the pair created later ([`CreationOrder`](crate::CreationOrder)).
///
/// It is also an [`EntityEvent`] for colliders that opt in with
/// [`CollisionEventsEnabled`](super::CollisionEventsEnabled): observers on such a collider
/// entity (`On<CollisionStart>`) run once per pair, and then `collider1` (the event target) is
/// the observed collider and `collider2` the other one, whatever their order. See
/// [`events`](super::events) for when and how often these are sent.
#[derive(Message, EntityEvent, Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollisionStart {
    /// The first collider: the one created later as a message, the observed collider as an
    /// entity event.
    #[event_target]
    pub collider1: Entity,
    /// The other collider.
    pub collider2: Entity,
    /// `collider1`'s body, if it has one.
    pub body1: Option<Entity>,
    /// `collider2`'s body, if it has one.
    pub body2: Option<Entity>,
}

/// Two colliders stopped touching, including because one of them was despawned, disabled
/// with [`ColliderDisabled`](super::ColliderDisabled), or filtered out by a change of
/// [`CollisionLayers`](super::CollisionLayers).
///
/// Like [`CollisionStart`]: a [`Message`] for every pair (`collider1` the collider created later),
/// and an [`EntityEvent`] for colliders with
/// [`CollisionEventsEnabled`](super::CollisionEventsEnabled) (`collider1` the observed
/// collider). A despawned entity's fields still name it, though it no longer exists.
#[derive(Message, EntityEvent, Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollisionEnd {
    /// The first collider: the one created later as a message, the observed collider as an
    /// entity event.
    #[event_target]
    pub collider1: Entity,
    /// The other collider.
    pub collider2: Entity,
    /// `collider1`'s body, if it had one.
    pub body1: Option<Entity>,
    /// `collider2`'s body, if it had one.
    pub body2: Option<Entity>,
}

/// Friction impulses of one contact manifold over the last step, carried over for warm
/// starting. Friction acts on the manifold as a whole, at the centre of its points.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrictionImpulse {
    /// Along the two tangent directions, N·s.
    pub tangent: [Scalar; 2],
    /// About the normal, N·m·s.
    pub twist: Scalar,
}

/// A contact manifold as parry produces it: per-manifold friction impulses and, per point,
/// the normal impulse of the last step (N·s).
pub(crate) type Manifold = ContactManifold<FrictionImpulse, Scalar>;

/// One contact point in world space, as reported by [`ContactPair::points`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPoint {
    /// World position of the point, midway between the two surfaces.
    pub point: Vector,
    /// World normal, pointing from the first collider to the second.
    pub normal: Vector,
    /// Signed distance between the surfaces: negative when penetrating.
    pub separation: Scalar,
    /// Normal impulse applied at this point during the last step, N·s (divide by the step
    /// length for the force).
    pub normal_impulse: Scalar,
}

/// The contact state between two colliders whose AABBs overlap.
#[derive(Clone)]
pub struct ContactPair {
    /// The first collider: the newer one (created later, see
    /// [`CreationOrder`](crate::CreationOrder)).
    pub collider1: Entity,
    /// The second collider.
    pub collider2: Entity,
    /// The first collider's body.
    pub body1: Option<Entity>,
    /// The second collider's body.
    pub body2: Option<Entity>,
    /// The colliders' keys ([`CreationOrder::pair_key`](crate::CreationOrder)), which sort the
    /// pairs.
    pub(crate) keys: (u64, u64),
    pub(crate) manifolds: Vec<Manifold>,
    pub(crate) workspace: Option<ContactManifoldsWorkspace>,
    pub(crate) pose1: Pose,
    pub(crate) pose2: Pose,
    /// Collider 2's pose in collider 1's frame when the manifolds were last built (see
    /// `recycling::recycle`).
    pub(crate) built_at: Pose,
    /// How its manifolds are recycled, decided when they were last built.
    pub(crate) recycling: super::recycling::Recycling,
    pub(crate) touching: bool,
    pub(crate) was_touching: bool,
    pub(crate) sensor: bool,
    pub(crate) friction: Scalar,
    pub(crate) restitution: Scalar,
    /// This step's broad-phase proxy indices.
    pub(crate) proxies: (u32, u32),
    /// parry has no contact algorithm for this pair of shapes.
    pub(crate) unsupported: bool,
    /// This step's changes by contact hooks.
    pub(crate) modifications: super::hooks::ContactModifications,
}

impl ContactPair {
    /// True if the colliders are touching (any point at or within the contact tolerance).
    pub fn is_touching(&self) -> bool {
        self.touching
    }

    /// True if either collider is a sensor.
    pub fn is_sensor(&self) -> bool {
        self.sensor
    }

    /// The contact points in world space, as of the last narrow phase.
    pub fn points(&self) -> impl Iterator<Item = ContactPoint> + '_ {
        self.manifolds.iter().flat_map(move |m| {
            let frame1 = m.subshape_pos1.map_or(self.pose1, |p| self.pose1 * p);
            let frame2 = m.subshape_pos2.map_or(self.pose2, |p| self.pose2 * p);
            let normal = frame1.rotation * m.local_n1;
            m.points.iter().map(move |c| {
                let p1 = frame1 * c.local_p1;
                let p2 = frame2 * c.local_p2;
                ContactPoint {
                    point: (p1 + p2) * 0.5,
                    normal,
                    separation: c.dist,
                    normal_impulse: c.data,
                }
            })
        })
    }

    /// Sum of the normal impulses over all points during the last step, N·s.
    pub fn total_normal_impulse(&self) -> Scalar {
        self.manifolds
            .iter()
            .flat_map(|m| m.points.iter())
            .map(|c| c.data)
            .sum()
    }

    /// The friction impulse summed over the manifolds during the last step, N·s.
    pub fn total_friction_impulse(&self) -> Scalar {
        self.manifolds
            .iter()
            .map(|m| Vec2::from(m.data.tangent).length())
            .sum()
    }

    /// The deepest penetration among the points (0 if none penetrate), m.
    pub fn max_penetration(&self) -> Scalar {
        self.manifolds
            .iter()
            .flat_map(|m| m.points.iter())
            .map(|c| -c.dist)
            .fold(0.0, Scalar::max)
    }

    pub(crate) fn key(&self) -> (u64, u64) {
        self.keys
    }
}

/// Every contact pair, sorted by `(collider1, collider2)`'s keys: newest collider first.
///
/// Reflected without its contents (every field is ignored): it is the engine's working state,
/// rebuilt every step, so inspectors list it and scenes carry it empty, leaving the loading
/// world's own state in place (see [`reflection`](crate::reflection)).
#[derive(Resource, Default, Reflect)]
#[reflect(Resource, Default)]
pub struct ContactGraph {
    #[reflect(ignore)]
    pub(crate) pairs: Vec<ContactPair>,
    /// The previous step's storage, kept to reuse its allocation.
    #[reflect(ignore)]
    pub(crate) spare: Vec<ContactPair>,
    /// Bodies of touching pairs that ended this step (woken if asleep).
    #[reflect(ignore)]
    pub(crate) lost_support: Vec<Entity>,
    /// Touching pairs that left the graph this step (their colliders moved apart, were
    /// despawned, disabled or filtered out), reported in [`PhysicsStepSet::Finalize`].
    ///
    /// [`PhysicsStepSet::Finalize`]: crate::PhysicsStepSet::Finalize
    #[reflect(ignore)]
    pub(crate) ended: Vec<CollisionEnd>,
    /// The normal impulse each contact point of the pairs with a
    /// [`ContactForceThreshold`](super::ContactForceThreshold) took over this step, summed
    /// over the substeps by the solver, sorted by pair, manifold and point (empty when no
    /// collider has a threshold).
    #[reflect(ignore)]
    pub(crate) step_impulses: Vec<super::events::StepImpulse>,
}

/// Reads the current contacts.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// fn report(collisions: Collisions) {
///     for pair in collisions.iter() {
///         println!("{} touches {}", pair.collider1, pair.collider2);
///     }
/// }
/// # bevy::ecs::system::assert_is_system(report);
/// ```
#[derive(SystemParam)]
pub struct Collisions<'w, 's> {
    graph: Res<'w, ContactGraph>,
    orders: Query<'w, 's, &'static crate::body::CreationOrder>,
}

impl Collisions<'_, '_> {
    /// Touching pairs, in a deterministic order.
    pub fn iter(&self) -> impl Iterator<Item = &ContactPair> {
        self.graph.pairs.iter().filter(|p| p.touching)
    }

    /// The pair for two colliders (in either order), touching or not.
    pub fn get(&self, a: Entity, b: Entity) -> Option<&ContactPair> {
        let key = |collider| self.orders.get(collider).ok().map(|o| o.pair_key());
        let (a, b) = (key(a)?, key(b)?);
        let key = (a.min(b), a.max(b));
        self.graph
            .pairs
            .binary_search_by_key(&key, ContactPair::key)
            .ok()
            .map(|i| &self.graph.pairs[i])
    }

    /// True if the two colliders are touching.
    pub fn contains(&self, a: Entity, b: Entity) -> bool {
        self.get(a, b).is_some_and(|p| p.touching)
    }

    /// Touching pairs that involve `entity` as a collider or as a body.
    pub fn collisions_with(&self, entity: Entity) -> impl Iterator<Item = &ContactPair> {
        self.iter().filter(move |p| {
            p.collider1 == entity
                || p.collider2 == entity
                || p.body1 == Some(entity)
                || p.body2 == Some(entity)
        })
    }

    /// Number of touching pairs.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// True if nothing is touching.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
