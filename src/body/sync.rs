//! Keeps [`Transform`] and [`Position`]/[`Rotation`] in step.
//!
//! At the start of a step, a body whose `Transform` differs from what the engine last wrote was
//! moved by the user: its `Position`/`Rotation` jump there (a teleport) and it wakes. A body
//! whose `Position`/`Rotation` differ from the last exchange was moved through those instead.
//! At the end of a step, moved bodies' poses are copied to their `Transform`.
//!
//! When a body is spawned (its [`RigidBody`] added), a non-identity `Transform` wins over
//! `Position`/`Rotation`; otherwise the `Position`/`Rotation` the body was spawned with is
//! used. Both are set to the winner at once, so systems that run before the first step see
//! the body where it is.
//!
//! Bodies are expected to be root entities (their `Transform` is their world pose).

use bevy::ecs::entity::EntityHashSet;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use crate::body::{PoseSync, Position, RigidBody, Rotation, Sleeping};
use crate::math::is_finite_quat;

/// Where the user has put a body since the engine last synchronised it: its `Transform` if
/// that was written, otherwise its `Position`/`Rotation`. On a body never synchronised, a
/// non-identity `Transform` wins over `Position`/`Rotation`.
pub(crate) fn user_pose(
    transform: &Transform,
    position: &Position,
    rotation: &Rotation,
    sync: &PoseSync,
) -> (Vec3, Quat) {
    let transform_moved =
        transform.translation != sync.translation || transform.rotation != sync.rotation;
    let identity = transform.translation == Vec3::ZERO && transform.rotation == Quat::IDENTITY;
    if (sync.initialized || !identity) && transform_moved {
        (transform.translation, transform.rotation)
    } else {
        (position.0, rotation.0)
    }
}

/// Agrees a new body's `Transform` and `Position`/`Rotation` at once, by the first-step rule
/// of [`user_pose`], and marks them synchronised. A non-finite pose is left for the prepare
/// stage to report.
pub(crate) fn sync_pose_on_spawn(world: &mut DeferredWorld, entity: Entity) {
    let parts = (
        world.get::<Transform>(entity).copied(),
        world.get::<Position>(entity).copied(),
        world.get::<Rotation>(entity).copied(),
        world.get::<PoseSync>(entity).copied(),
    );
    let (Some(transform), Some(position), Some(rotation), Some(sync)) = parts else {
        return;
    };
    let (translation, rotation) = user_pose(&transform, &position, &rotation, &sync);
    if !translation.is_finite() || !is_finite_quat(rotation) {
        return;
    }
    let rotation = rotation.normalize();
    let mut entity = world.entity_mut(entity);
    if let Some(mut position) = entity.get_mut::<Position>() {
        position.0 = translation;
    }
    if let Some(mut r) = entity.get_mut::<Rotation>() {
        r.0 = rotation;
    }
    if let Some(mut t) = entity.get_mut::<Transform>() {
        t.translation = translation;
        t.rotation = rotation;
    }
    if let Some(mut s) = entity.get_mut::<PoseSync>() {
        *s = PoseSync {
            translation,
            rotation,
            initialized: true,
        };
    }
}

/// Copies user-moved `Transform`s into `Position`/`Rotation`, rejecting non-finite poses.
#[allow(clippy::type_complexity)]
pub(crate) fn transform_to_position(
    mut commands: Commands,
    mut bodies: Query<
        (
            Entity,
            &Transform,
            &mut Position,
            &mut Rotation,
            &mut PoseSync,
            Has<Sleeping>,
        ),
        With<RigidBody>,
    >,
    mut warned: Local<EntityHashSet>,
) {
    for (entity, transform, mut position, mut rotation, mut sync, sleeping) in &mut bodies {
        let transform_moved =
            transform.translation != sync.translation || transform.rotation != sync.rotation;
        let position_moved = position.0 != sync.translation || rotation.0 != sync.rotation;
        if !transform_moved && !position_moved && sync.initialized {
            continue;
        }
        let (mut new_position, mut new_rotation) =
            user_pose(transform, &position, &rotation, &sync);
        if !new_position.is_finite() || !is_finite_quat(new_rotation) {
            if warned.insert(entity) {
                warn!(
                    "{entity}: non-finite pose (position {new_position}, rotation {new_rotation}); \
                     keeping its last valid pose"
                );
            }
            (new_position, new_rotation) = if sync.initialized {
                (sync.translation, sync.rotation)
            } else {
                (Vec3::ZERO, Quat::IDENTITY)
            };
        } else {
            new_rotation = new_rotation.normalize();
        }
        position.set_if_neq(Position(new_position));
        rotation.set_if_neq(Rotation(new_rotation));
        *sync = PoseSync {
            translation: new_position,
            rotation: new_rotation,
            initialized: sync.initialized,
        };
        if sync.initialized && sleeping {
            commands.entity(entity).remove::<Sleeping>();
        }
        sync.initialized = true;
    }
}

/// Copies the poses the step produced into `Transform`.
#[allow(clippy::type_complexity)]
pub(crate) fn position_to_transform(
    mut bodies: Query<
        (&Position, &Rotation, &mut Transform, &mut PoseSync),
        (With<RigidBody>, Or<(Changed<Position>, Changed<Rotation>)>),
    >,
) {
    for (position, rotation, mut transform, mut sync) in &mut bodies {
        if transform.translation != position.0 || transform.rotation != rotation.0 {
            transform.translation = position.0;
            transform.rotation = rotation.0;
        }
        sync.translation = position.0;
        sync.rotation = rotation.0;
        sync.initialized = true;
    }
}

/// Transform sync at the start ([`PhysicsStepSet::Prepare`]) and end
/// ([`PhysicsStepSet::Finalize`]) of each step.
pub(crate) struct SyncPlugin;

impl Plugin for SyncPlugin {
    fn build(&self, app: &mut App) {
        use crate::schedule::{PhysicsSchedule, PhysicsStepSet};
        app.add_systems(
            PhysicsSchedule,
            (
                (
                    transform_to_position,
                    crate::body::reject_non_finite_velocities,
                )
                    .chain()
                    .in_set(PhysicsStepSet::Prepare)
                    .after(crate::validation::ValidationSet),
                position_to_transform.in_set(PhysicsStepSet::Finalize),
            ),
        );
    }
}
