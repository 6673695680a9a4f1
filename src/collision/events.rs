//! Collision events: when two colliders begin and stop touching.
//!
//! # Messages (always on)
//!
//! Every step, in [`PhysicsStepSet::Finalize`](crate::PhysicsStepSet::Finalize), the engine writes one [`CollisionStart`]
//! message for each pair of colliders that began touching during the step and one
//! [`CollisionEnd`] for each pair that stopped. Exactly one of each per begin and end: a
//! resting contact sends nothing further, however long it lasts. A pair ends when its shapes
//! move apart, and also when either collider is despawned, gets
//! [`ColliderDisabled`](super::ColliderDisabled), loses its
//! [`Collider`](super::Collider), or stops interacting through a change of
//! [`CollisionLayers`](super::CollisionLayers) or a new joint between the bodies. Removing
//! [`ColliderDisabled`](super::ColliderDisabled) again starts the pairs it touches anew.
//!
//! "Touching" means what [`ContactPair::is_touching`](super::ContactPair::is_touching) says:
//! for solid colliders, some contact point within the contact tolerance
//! ([`SolverConfig::linear_slop`](crate::SolverConfig::linear_slop), 5 mm by default), so a
//! start can come up to that distance before the surfaces meet; for [`Sensor`](super::Sensor)
//! pairs, the shapes overlap. Pairs that never get contacts send nothing: two static or two
//! kinematic solid colliders, colliders of one body, bodies joined by a joint without
//! collision, and pairs that [`CollisionLayers`](super::CollisionLayers) filter out.
//!
//! # Observers (opt in per collider)
//!
//! Insert [`CollisionEventsEnabled`] on a collider entity and the same two types are also
//! triggered as [`EntityEvent`]s on it: `On<CollisionStart>` / `On<CollisionEnd>` observers
//! watching that entity run once per begin and end, with `collider1` the observed collider and
//! `collider2` the other. Global observers of the two types run for these triggers too (once
//! per opted-in collider of the pair). Only collider entities are targeted: a collider on the
//! body entity (the usual case) is observed on the body; for a body with child colliders,
//! opt in and observe each child (the body is in `body1`). Triggering a body for all its child
//! colliders would report one begin per child, and the event's meaning would have to change;
//! the messages carry both bodies for that use. Colliders without the component cost nothing
//! beyond the check of whether any entity has it.
//!
//! # `CollidingEntities` (opt in per collider)
//!
//! Insert [`CollidingEntities`] on a collider entity and the engine keeps it equal to the set
//! of colliders touching it, updated at the same time as the messages.
//!
//! # Contact forces (opt in per collider)
//!
//! Insert [`ContactForceThreshold`] on a collider entity and the engine writes a
//! [`ContactForce`] message, in the same stage, for each of its solid touching pairs in every
//! step in which the pair's total normal force exceeds the threshold (the lower of the two
//! colliders' thresholds when both have one): "still touching, and pressing with more than
//! this". The force is the normal impulse the contact solver applied over the step, summed
//! over the substeps, divided by the step's length: for a body at rest, its weight; in the
//! step of an impact, the momentum it lost over the step's length. A fast body's impact is
//! solved by speculative contact before its surfaces meet, so the impact's force can come a
//! step before the pair counts as touching (and before its [`CollisionStart`]): a pair the
//! solver pushed apart this step counts, touching or not. Messages follow the order
//! of the contact pairs ([`CreationOrder`](crate::CreationOrder), like the other messages). A
//! collider whose own threshold is exceeded also gets the force as an [`EntityEvent`], with
//! `collider1` the observed collider.
//!
//! A pair that the solver did not solve this step, because neither of its bodies is an awake
//! dynamic body (a body asleep on the ground, two sleepers), reports the force of the last
//! step it was solved in, which for a body that fell asleep is its weight at rest: a crate
//! that falls asleep on a pressure plate keeps pressing it. Sensors, and pairs dropped by a
//! [collision hook](super::CollisionHooks), apply no force and send nothing.
//!
//! Only pairs with a threshold are measured: without any [`ContactForceThreshold`] the cost is
//! the check of whether any collider has one.

use bevy::prelude::*;

use super::contacts::{CollisionEnd, CollisionStart, ContactGraph, ContactPair};
use crate::math::{Scalar, Vector};
use crate::schedule::PhysicsStepTime;
use crate::validation::{Validate, check};

/// Opts a collider entity in to observer events: [`CollisionStart`] and [`CollisionEnd`] are
/// triggered on it as [`EntityEvent`]s, with `collider1` set to this entity.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// fn spawn_coin(mut commands: Commands) {
///     commands
///         .spawn((Collider::sphere(0.3), Sensor, CollisionEventsEnabled))
///         .observe(|start: On<CollisionStart>, mut commands: Commands| {
///             // `collider1` is the coin, `collider2` whoever touched it.
///             info!("{} picked up {}", start.collider2, start.collider1);
///             commands.entity(start.collider1).despawn();
///         });
/// }
/// # bevy::ecs::system::assert_is_system(spawn_coin);
/// ```
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct CollisionEventsEnabled;

/// The colliders touching this collider entity, kept up to date by the engine once inserted
/// (insert `CollidingEntities::default()`; the engine fills it at the next step).
///
/// The entities are the other colliders (not their bodies), sorted by [`Entity`] order with
/// no repeats, so iteration order is deterministic. Sensor overlaps count. It changes (and
/// triggers change detection) only when a pair begins or ends touching.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// fn count_contacts(query: Query<(Entity, &CollidingEntities)>) {
///     for (entity, touching) in &query {
///         println!("{entity} touches {} colliders: {:?}", touching.len(), touching.as_slice());
///     }
/// }
/// # bevy::ecs::system::assert_is_system(count_contacts);
/// ```
#[derive(Component, Reflect, Clone, Debug, Default, PartialEq, Eq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct CollidingEntities(#[entities] pub(crate) Vec<Entity>);

impl CollidingEntities {
    /// The touching colliders, sorted.
    pub fn as_slice(&self) -> &[Entity] {
        &self.0
    }

    /// Iterates over the touching colliders in sorted order.
    pub fn iter(&self) -> impl Iterator<Item = Entity> + '_ {
        self.0.iter().copied()
    }

    /// True if `collider` touches this one.
    pub fn contains(&self, collider: Entity) -> bool {
        self.0.binary_search(&collider).is_ok()
    }

    /// Number of touching colliders.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True if nothing touches this collider.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn insert(&mut self, collider: Entity) {
        if let Err(index) = self.0.binary_search(&collider) {
            self.0.insert(index, collider);
        }
    }

    fn remove(&mut self, collider: Entity) {
        if let Ok(index) = self.0.binary_search(&collider) {
            self.0.remove(index);
        }
    }
}

/// One begin or end of touching, before it is sent.
#[derive(Clone, Copy)]
pub(crate) struct Change {
    start: bool,
    colliders: [Entity; 2],
    bodies: [Option<Entity>; 2],
}

impl Change {
    fn of_pair(pair: &ContactPair, start: bool) -> Self {
        Self {
            start,
            colliders: [pair.collider1, pair.collider2],
            bodies: [pair.body1, pair.body2],
        }
    }

    /// The change seen from `colliders[i]`: its start or end event, targeting it.
    fn event_for(&self, i: usize) -> (CollisionStart, CollisionEnd) {
        let j = 1 - i;
        let start = CollisionStart {
            collider1: self.colliders[i],
            collider2: self.colliders[j],
            body1: self.bodies[i],
            body2: self.bodies[j],
        };
        let end = CollisionEnd {
            collider1: start.collider1,
            collider2: start.collider2,
            body1: start.body1,
            body2: start.body2,
        };
        (start, end)
    }
}

/// Sends this step's collision messages, updates [`CollidingEntities`] and triggers observer
/// events on opted-in colliders.
pub(crate) fn report_collisions(
    mut commands: Commands,
    graph: Res<ContactGraph>,
    mut started: MessageWriter<CollisionStart>,
    mut ended: MessageWriter<CollisionEnd>,
    mut colliding: Query<&mut CollidingEntities>,
    observed: Query<(), With<CollisionEventsEnabled>>,
    mut changes: Local<Vec<Change>>,
) {
    changes.clear();
    // Ends first: pairs that left the graph, then pairs still in it that stopped touching.
    changes.extend(graph.ended.iter().map(|e| Change {
        start: false,
        colliders: [e.collider1, e.collider2],
        bodies: [e.body1, e.body2],
    }));
    for pair in &graph.pairs {
        if pair.touching != pair.was_touching {
            changes.push(Change::of_pair(pair, pair.touching));
        }
    }
    for change in changes.iter() {
        let (start, end) = change.event_for(0);
        if change.start {
            started.write(start);
        } else {
            ended.write(end);
        }
    }
    if !colliding.is_empty() {
        update_colliding_entities(&graph, &changes, &mut colliding);
    }
    if !observed.is_empty() {
        for change in changes.iter() {
            for i in 0..2 {
                if observed.contains(change.colliders[i]) {
                    let (start, end) = change.event_for(i);
                    if change.start {
                        commands.trigger(start);
                    } else {
                        commands.trigger(end);
                    }
                }
            }
        }
    }
}

/// Fills newly inserted [`CollidingEntities`] from the graph, then applies this step's
/// changes to the existing ones.
fn update_colliding_entities(
    graph: &ContactGraph,
    changes: &[Change],
    colliding: &mut Query<&mut CollidingEntities>,
) {
    // A component inserted since the last step starts from the pairs touching now, which
    // already include this step's changes; applying them again below is harmless.
    let mut any_added = false;
    for mut set in colliding.iter_mut().filter(|set| set.is_added()) {
        set.0.clear();
        any_added = true;
    }
    if any_added {
        for pair in graph.pairs.iter().filter(|p| p.touching) {
            for (me, other) in [
                (pair.collider1, pair.collider2),
                (pair.collider2, pair.collider1),
            ] {
                if let Ok(mut set) = colliding.get_mut(me)
                    && set.is_added()
                {
                    set.insert(other);
                }
            }
        }
    }
    for change in changes {
        for (me, other) in [
            (change.colliders[0], change.colliders[1]),
            (change.colliders[1], change.colliders[0]),
        ] {
            if let Ok(mut set) = colliding.get_mut(me) {
                if change.start {
                    set.insert(other);
                } else {
                    set.remove(other);
                }
            }
        }
    }
}

/// Sends [`ContactForce`] messages for this collider's solid touching pairs in every step in
/// which a pair's total normal force exceeds this many newtons (see [the module
/// docs](self#contact-forces-opt-in-per-collider)).
///
/// Put it on the collider entity (for a collider on its body's entity, the body). With both
/// colliders of a pair holding one, the lower threshold decides whether the message is sent;
/// observers of [`ContactForce`] on a collider run when the force exceeds that collider's own
/// threshold. `0` reports every step with any force, `Scalar::INFINITY` none. A NaN or
/// negative threshold is replaced by `Scalar::INFINITY` (no events), with a warning.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// // A plate that reports anything pressing on it with more than 200 N (about 20 kg).
/// fn spawn_plate(mut commands: Commands) {
///     commands
///         .spawn((
///             RigidBody::Static,
///             Collider::cuboid(1.0, 0.1, 1.0),
///             ContactForceThreshold(200.0),
///         ))
///         .observe(|pressed: On<ContactForce>| {
///             info!("plate pressed with {} N", pressed.total_force_magnitude);
///         });
/// }
/// # bevy::ecs::system::assert_is_system(spawn_plate);
/// ```
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct ContactForceThreshold(pub Scalar);

impl Validate for ContactForceThreshold {
    fn validate(&mut self) -> Option<String> {
        let why = "is NaN or negative; no contact force events";
        let valid = |x: Scalar| x >= 0.0;
        check(
            &mut self.0,
            valid,
            "ContactForceThreshold",
            why,
            Scalar::INFINITY,
        )
    }
}

/// A touching pair pressed with more than a collider's [`ContactForceThreshold`] during the
/// last step.
///
/// Sent as a [`Message`] for every such pair (`collider1` the collider created later, as for
/// [`CollisionStart`]) and triggered as an [`EntityEvent`] on each collider of the pair whose
/// own threshold the force exceeds (then `collider1` is the observed collider, and the forces
/// are the ones it receives). Forces are the contact solver's normal impulses over the step
/// divided by its length; friction is not included.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// fn crush(mut forces: MessageReader<ContactForce>) {
///     for force in forces.read() {
///         if force.max_force_magnitude > 5_000.0 {
///             info!("{} hit {} hard: {} N", force.collider2, force.collider1, force.max_force_magnitude);
///         }
///     }
/// }
/// # bevy::ecs::system::assert_is_system(crush);
/// ```
#[derive(Message, EntityEvent, Clone, Copy, Debug, PartialEq)]
pub struct ContactForce {
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
    /// The net normal force `collider1` received from `collider2` over the step (world
    /// space), N: the sum over the contact points of each point's force along its normal.
    pub total_force: Vector,
    /// The sum of the points' normal force magnitudes, N, which the threshold is compared
    /// with. At least `total_force.length()` (equal when all points share one normal).
    pub total_force_magnitude: Scalar,
    /// The direction of the force `collider1` received at the point that pressed hardest (a
    /// unit vector; zero if no point pressed).
    pub max_force_direction: Vector,
    /// The normal force at the point that pressed hardest, N.
    pub max_force_magnitude: Scalar,
}

impl ContactForce {
    /// The same force seen from `collider2`: colliders and bodies swapped, forces reversed.
    fn swapped(&self) -> Self {
        Self {
            collider1: self.collider2,
            collider2: self.collider1,
            body1: self.body2,
            body2: self.body1,
            total_force: -self.total_force,
            total_force_magnitude: self.total_force_magnitude,
            max_force_direction: -self.max_force_direction,
            max_force_magnitude: self.max_force_magnitude,
        }
    }

    /// No force yet between `pair`'s colliders.
    fn zero(pair: &ContactPair) -> Self {
        Self {
            collider1: pair.collider1,
            collider2: pair.collider2,
            body1: pair.body1,
            body2: pair.body2,
            total_force: Vector::ZERO,
            total_force_magnitude: 0.0,
            max_force_direction: Vector::ZERO,
            max_force_magnitude: 0.0,
        }
    }

    /// Adds a point's normal force `force` (N) along `direction`, the direction collider 1
    /// is pushed.
    fn add(&mut self, direction: Vector, force: Scalar) {
        self.total_force += direction * force;
        self.total_force_magnitude += force;
        if force > self.max_force_magnitude {
            self.max_force_magnitude = force;
            self.max_force_direction = direction;
        }
    }
}

/// The step impulse of one contact point of a pair with a threshold, as the solver summed it
/// (see [`ContactGraph::step_impulses`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct StepImpulse {
    /// Index of the pair in [`ContactGraph::pairs`].
    pub pair: u32,
    /// Index of the manifold in the pair.
    pub manifold: u32,
    /// Normal impulse over the whole step, N·s.
    pub impulse: Scalar,
}

/// Each collider's [`ContactForceThreshold`] this step, by entity index, for lookups per pair.
#[derive(Resource, Default)]
pub(crate) struct ForceThresholds {
    /// Entity index → threshold (infinite for colliders without one).
    by_index: Vec<Scalar>,
    /// The indices set this step, to reset them at the next.
    set: Vec<u32>,
}

impl ForceThresholds {
    /// True if some collider has a finite threshold.
    pub(crate) fn any(&self) -> bool {
        !self.set.is_empty()
    }

    /// The threshold of `collider` (infinite if it has none).
    pub(crate) fn of(&self, collider: Entity) -> Scalar {
        let index = collider.index_u32() as usize;
        self.by_index
            .get(index)
            .copied()
            .unwrap_or(Scalar::INFINITY)
    }

    /// The threshold of a pair: the lower of its colliders'.
    pub(crate) fn of_pair(&self, pair: &ContactPair) -> Scalar {
        self.of(pair.collider1).min(self.of(pair.collider2))
    }
}

/// Refreshes [`ForceThresholds`] from the colliders' [`ContactForceThreshold`]s.
pub(crate) fn update_force_thresholds(
    mut table: ResMut<ForceThresholds>,
    colliders: Query<(Entity, &ContactForceThreshold), With<super::Collider>>,
) {
    if colliders.is_empty() && !table.any() {
        return;
    }
    let table = &mut *table;
    for index in table.set.drain(..) {
        table.by_index[index as usize] = Scalar::INFINITY;
    }
    for (entity, threshold) in &colliders {
        if !threshold.0.is_finite() {
            continue;
        }
        let index = entity.index_u32();
        if table.by_index.len() <= index as usize {
            table.by_index.resize(index as usize + 1, Scalar::INFINITY);
        }
        table.by_index[index as usize] = threshold.0;
        table.set.push(index);
    }
}

/// Sends this step's [`ContactForce`] messages and triggers them on the colliders whose own
/// threshold was exceeded.
pub(crate) fn report_contact_forces(
    mut commands: Commands,
    graph: Res<ContactGraph>,
    thresholds: Res<ForceThresholds>,
    time: Res<PhysicsStepTime>,
    mut forces: MessageWriter<ContactForce>,
) {
    if !thresholds.any() || time.delta <= 0.0 {
        return;
    }
    let inverse_dt = 1.0 / time.delta;
    let mut solved = graph.step_impulses.as_slice();
    for (index, pair) in graph.pairs.iter().enumerate() {
        // The solver's entries are sorted by pair: this pair's are at the front.
        let count = solved.iter().take_while(|s| s.pair == index as u32).count();
        let (this_pair, rest) = solved.split_at(count);
        solved = rest;
        let threshold = thresholds.of_pair(pair);
        if pair.sensor || pair.modifications.dropped || threshold.is_infinite() {
            continue;
        }
        let force = match (this_pair.is_empty(), pair.touching) {
            (false, _) => step_force(pair, this_pair, inverse_dt),
            (true, true) => last_solved_force(pair, inverse_dt),
            (true, false) => continue,
        };
        if force.total_force_magnitude <= threshold {
            continue;
        }
        forces.write(force);
        if thresholds.of(pair.collider1) < force.total_force_magnitude {
            commands.trigger(force);
        }
        if thresholds.of(pair.collider2) < force.total_force_magnitude {
            commands.trigger(force.swapped());
        }
    }
}

/// The direction collider 1 of `pair` is pushed at the points of manifold `index`: against
/// the manifold's normal, which points from collider 1 to collider 2.
fn push_direction(pair: &ContactPair, index: usize) -> Vector {
    let manifold = &pair.manifolds[index];
    let frame1 = manifold
        .subshape_pos1
        .map_or(pair.pose1, |p| pair.pose1 * p);
    -(frame1.rotation * manifold.local_n1)
}

/// The force of a pair solved this step, from the solver's step impulses.
fn step_force(pair: &ContactPair, solved: &[StepImpulse], inverse_dt: Scalar) -> ContactForce {
    let mut force = ContactForce::zero(pair);
    for s in solved {
        force.add(
            push_direction(pair, s.manifold as usize),
            s.impulse * inverse_dt,
        );
    }
    force
}

/// The force of a pair not solved this step, from the impulses stored when it last was.
fn last_solved_force(pair: &ContactPair, inverse_dt: Scalar) -> ContactForce {
    let mut force = ContactForce::zero(pair);
    for (index, manifold) in pair.manifolds.iter().enumerate() {
        let direction = push_direction(pair, index);
        for point in &manifold.points {
            force.add(direction, point.data * inverse_dt);
        }
    }
    force
}
