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

use bevy::prelude::*;

use super::contacts::{CollisionEnd, CollisionStart, ContactGraph, ContactPair};

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
