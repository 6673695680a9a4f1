//! Collision detection: colliders, the broad phase, the narrow phase and contact reporting.

pub mod broad_phase;
pub mod collider;
pub mod contacts;
pub mod hooks;
pub mod narrow_phase;

pub use collider::{
    CoefficientCombine, Collider, ColliderOf, CollisionLayers, Friction, Restitution, Sensor,
};
pub use contacts::{
    CollisionEnd, CollisionStart, Collisions, ContactGraph, ContactPair, ContactPoint,
    FrictionImpulse,
};
pub use hooks::{ActiveCollisionHooks, CollisionHooks, CollisionHooksPlugin, ContactPairMut};

use bevy::prelude::*;

use crate::schedule::{PhysicsSchedule, PhysicsStepSet};

/// Collider bookkeeping in [`PhysicsStepSet::Prepare`].
pub(crate) struct ColliderPlugin;

impl Plugin for ColliderPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<collider::ColliderOwnership>()
            .add_systems(
                PhysicsSchedule,
                (
                    collider::validate_colliders,
                    collider::update_collider_bodies,
                    crate::body::mass::update_mass_properties,
                )
                    .chain()
                    .in_set(PhysicsStepSet::Prepare)
                    .after(crate::sync::transform_to_position),
            );
    }
}

/// The broad phase, in [`PhysicsStepSet::BroadPhase`].
pub(crate) struct BroadPhasePlugin;

impl Plugin for BroadPhasePlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<broad_phase::BroadPhase>()
            .init_resource::<broad_phase::CollisionExclusions>()
            .add_systems(
                PhysicsSchedule,
                (broad_phase::collect_colliders, broad_phase::find_pairs)
                    .chain()
                    .in_set(PhysicsStepSet::BroadPhase),
            );
    }
}

/// The narrow phase and collision messages, in [`PhysicsStepSet::NarrowPhase`].
pub(crate) struct NarrowPhasePlugin;

impl Plugin for NarrowPhasePlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ContactGraph>()
            .add_message::<CollisionStart>()
            .add_message::<CollisionEnd>()
            .add_systems(
                PhysicsSchedule,
                (
                    narrow_phase::update_contacts,
                    narrow_phase::send_collision_started,
                    narrow_phase::send_collision_ended,
                )
                    .chain()
                    .in_set(PhysicsStepSet::NarrowPhase),
            );
    }
}
