//! The creation order: the one order the engine uses wherever it must put bodies, colliders,
//! joints or constraints in sequence (contact pairs, which collider of a pair comes first,
//! joints and constraints in the Gauss–Seidel passes, swept bodies, the colliders summed into a
//! body's mass).
//!
//! Gauss–Seidel results depend on that order, and so does the sign of a pair's normal, so it
//! must be the same on every machine that runs the same level: for rollback networking, two
//! peers must get the same bits. `Entity` values are not shared between peers (a peer that
//! spawned and freed its own effect or UI entities first hands out other indices), neither are
//! archetypes or table rows (one peer's bodies may carry extra components). What peers share is
//! the order in which the level adds its physics entities. Each body, collider, joint and
//! constraint gets [`CreationOrder`] the moment its first physics component is inserted (a
//! component hook, which runs in the order the spawn and insert commands are applied), from the
//! world's [`CreationCounter`].
//!
//! **The contract**: peers that spawn the same physics entities in the same order, with the
//! same component values, and step with the same inputs get bit-identical results, whatever
//! their `Entity` values, archetypes and storage order.

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

/// When the engine first saw this entity as a body, collider, joint or constraint: 1 for the
/// first, counting up (see the [module docs](self)).
///
/// Required by [`RigidBody`](crate::RigidBody), [`Collider`](crate::Collider) and every joint,
/// so it is there without being asked for. A custom constraint component should require it too
/// (`#[require(CreationOrder)]`, or `app.register_required_components::<MyConstraint,
/// CreationOrder>()`): constraints without it are solved after those with it, in `Entity`
/// index order, which is not the same on every peer.
///
/// The number is assigned when the component is added with its default value; a value
/// inserted explicitly (a rollback library restoring a despawned entity) is kept. It is
/// reflected without its number, so a scene carries it empty and a loaded scene's entities
/// are numbered as they are spawned.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[reflect(Component, Default, Debug, PartialEq)]
#[component(on_add = number_on_add)]
pub struct CreationOrder(#[reflect(ignore)] u64);

impl CreationOrder {
    /// The number: 1 for the first physics entity the world saw, 0 while unassigned.
    pub fn get(self) -> u64 {
        self.0
    }

    /// The key contact pairs are sorted by: newest collider first. Pairs are solved in that
    /// order and a pair's first collider is its newer one, which is how `Entity`'s order
    /// (newest index first) ordered them before, so that stacks tuned in that order keep it:
    /// Gauss–Seidel on a heavy box resting on a light one settles differently if the pair
    /// below is solved first.
    pub(crate) fn pair_key(self) -> u64 {
        u64::MAX - self.0
    }
}

/// The next [`CreationOrder`] to hand out. Part of a [`PhysicsSnapshot`](crate::PhysicsSnapshot),
/// so that entities spawned again after a restore get the numbers they got the first time;
/// register it with your rollback library if you roll back without snapshots.
///
/// Like [`CreationOrder`] it is reflected without its number, so a scene loaded into a world
/// leaves the world's count as it is.
#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq, Eq)]
#[reflect(Resource, Default, Debug, PartialEq)]
pub struct CreationCounter(#[reflect(ignore)] pub u64);

impl Default for CreationCounter {
    fn default() -> Self {
        Self(1)
    }
}

impl CreationCounter {
    /// Hands out the next number.
    fn take(&mut self) -> CreationOrder {
        let order = CreationOrder(self.0);
        self.0 += 1;
        order
    }
}

/// Hook of [`CreationOrder`]: numbers the entity unless it came with a number.
fn number_on_add(mut world: DeferredWorld, context: HookContext) {
    let unassigned = world
        .get::<CreationOrder>(context.entity)
        .is_some_and(|order| order.0 == 0);
    if !unassigned {
        return;
    }
    // Without the counter (the physics plugin not added yet, which Bevy only allows for joints:
    // bodies and colliders need the plugin's hooks) the entity stays unnumbered, and sorts
    // after the numbered ones.
    let Some(order) = world
        .get_resource_mut::<CreationCounter>()
        .map(|mut counter| counter.take())
    else {
        return;
    };
    if let Some(mut slot) = world.get_mut::<CreationOrder>(context.entity) {
        *slot = order;
    }
}

/// The key the engine sorts joints and constraints by: their creation order, with entities
/// that have none (custom constraints that do not require it) last, in `Entity` index order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct OrderKey {
    order: u64,
    index: u32,
    /// The entity (its index decides first, so this never does).
    pub entity: Entity,
}

/// The [`OrderKey`] of `entity`, with its creation order if it has one.
pub(crate) fn order_key(entity: Entity, order: Option<&CreationOrder>) -> OrderKey {
    OrderKey {
        order: order.map_or(0, |order| order.0).wrapping_sub(1), // 0 (unnumbered) last
        index: entity.index_u32(),
        entity,
    }
}
