//! Keeps [`Transform`] and [`Position`]/[`Rotation`] in step.
//!
//! [`Position`] and [`Rotation`] are always the body's world pose. A body's [`Transform`] is, as
//! everywhere in Bevy, relative to its parent: for a root body the two are the same pose, and
//! for a body that is a child of another entity (a level, a vehicle, the root of a glTF scene)
//! the engine converts between them with the parent's world transform, found by composing the
//! `Transform`s up the [`ChildOf`] chain. (That is what `GlobalTransform` will hold after
//! Bevy's transform propagation, but it is computed here from the `Transform`s, so it is right
//! even before propagation has run, for example on the frame the body is spawned or in the
//! frame the parent was moved.)
//!
//! At the start of a step, a body whose `Transform` differs from what the engine last wrote was
//! moved by the user: its `Position`/`Rotation` jump there (a teleport) and it wakes. A body
//! whose `Position`/`Rotation` differ from the last exchange was moved through those instead.
//! At the end of a step, moved bodies' poses are copied to their `Transform` (made relative to
//! the parent).
//!
//! ## Moving the parent of a body
//!
//! A body under a parent keeps its place *in the parent's frame* when the parent is moved by
//! anything other than the physics step: the body is teleported along with it (velocities
//! kept) at the start of the next step, and woken. That is what Bevy's hierarchy means
//! everywhere else (a child's `Transform` is local, so moving the parent moves what you see),
//! and what avian and bevy_rapier do. Between parent moves the body simulates freely in world
//! space and its `Transform` is rewritten relative to the parent. So put bodies under a parent
//! to place a group of them (a spawned scene, a prefab) or to carry them along with an object
//! you move by hand; to attach a body to another *simulated* body, use a joint: a body under a
//! moving body would be dragged along a step late.
//!
//! When a body is spawned (its [`RigidBody`] added), a non-identity `Transform` wins over
//! `Position`/`Rotation`; otherwise the `Position`/`Rotation` the body was spawned with is
//! used. Under a parent, an identity `Transform` wins as well unless `Position` or `Rotation`
//! was set: a body spawned as a child with no pose of its own starts at its parent's origin.
//! Both are set to the winner at once, so systems that run before the first step see the body
//! where it is.
//!
//! Scale is not simulated: a body's own scale and its parents' scales place and size what is
//! rendered, and the parents' scales place the body (its origin is `GlobalTransform`'s), but
//! colliders keep the size they were built with.

use bevy::ecs::entity::EntityHashSet;
use bevy::ecs::world::DeferredWorld;
use bevy::math::Affine3A;
use bevy::prelude::*;

use crate::body::{PoseSync, Position, RigidBody, Rotation, Sleeping};
use crate::math::is_finite_quat;

/// Longest `ChildOf` chain followed up from a body; guards against malformed hierarchies.
const MAX_DEPTH: usize = 64;

/// The world transform of `entity`'s parent: the composition of the `Transform`s of its
/// ancestors, root first; identity for a root entity. `link` gives an entity's parent and
/// `Transform` (`None` if the entity does not exist).
pub(crate) fn parent_affine(
    entity: Entity,
    link: impl Fn(Entity) -> Option<(Option<Entity>, Option<Transform>)>,
) -> Affine3A {
    let Some((Some(mut current), _)) = link(entity) else {
        return Affine3A::IDENTITY;
    };
    let mut affine = Affine3A::IDENTITY;
    for _ in 0..MAX_DEPTH {
        let Some((parent, transform)) = link(current) else {
            break;
        };
        affine = transform.unwrap_or_default().compute_affine() * affine;
        match parent {
            Some(parent) => current = parent,
            None => break,
        }
    }
    affine
}

/// [`parent_affine`] from a query of hierarchy links.
pub(crate) fn parent_affine_in<T: bevy::ecs::query::QueryFilter>(
    entity: Entity,
    links: &Query<(Option<&ChildOf>, Option<&Transform>), T>,
) -> Affine3A {
    parent_affine(entity, |e| {
        let (parent, transform) = links.get(e).ok()?;
        Some((parent.map(ChildOf::parent), transform.copied()))
    })
}

/// [`parent_affine`] with direct world access.
fn parent_affine_world(world: &World, entity: Entity) -> Affine3A {
    parent_affine(entity, |e| {
        let entity = world.get_entity(e).ok()?;
        Some((
            entity.get::<ChildOf>().map(ChildOf::parent),
            entity.get::<Transform>().copied(),
        ))
    })
}

/// The rotation part of a parent's world transform (scale removed); identity if the transform
/// is degenerate.
fn parent_rotation(parent: &Affine3A) -> Quat {
    let (_, rotation, _) = parent.to_scale_rotation_translation();
    if is_finite_quat(rotation) && rotation.length_squared() > 0.5 {
        rotation.normalize()
    } else {
        Quat::IDENTITY
    }
}

/// The world pose of a local (`Transform`) pose under `parent`. Exact for a root.
pub(crate) fn to_world(parent: &Affine3A, translation: Vec3, rotation: Quat) -> (Vec3, Quat) {
    if *parent == Affine3A::IDENTITY {
        return (translation, rotation);
    }
    (
        parent.transform_point3(translation),
        parent_rotation(parent) * rotation,
    )
}

/// The local (`Transform`) pose under `parent` of a world pose. Exact for a root; non-finite if
/// the parent's transform cannot be inverted (zero scale).
pub(crate) fn to_local(parent: &Affine3A, translation: Vec3, rotation: Quat) -> (Vec3, Quat) {
    if *parent == Affine3A::IDENTITY {
        return (translation, rotation);
    }
    (
        parent.inverse().transform_point3(translation),
        (parent_rotation(parent).inverse() * rotation).normalize(),
    )
}

/// Where the user has put a body since the engine last synchronised it: its `Transform` (under
/// `parent`, the parent's world transform now) if that or the parent was moved, otherwise its
/// `Position`/`Rotation`. On a body never synchronised, a non-identity `Transform` wins over
/// `Position`/`Rotation`, and so does an identity one under a parent when `Position` and
/// `Rotation` are still at their defaults. The flag is true when the `Transform` won.
pub(crate) fn user_pose(
    transform: &Transform,
    position: &Position,
    rotation: &Rotation,
    sync: &PoseSync,
    parent: &Affine3A,
) -> (Vec3, Quat, bool) {
    let transform_moved = transform.translation != sync.local_translation
        || transform.rotation != sync.local_rotation
        || *parent != sync.parent;
    let identity = transform.translation == Vec3::ZERO && transform.rotation == Quat::IDENTITY;
    let unplaced = position.0 == Vec3::ZERO && rotation.0 == Quat::IDENTITY;
    let has_parent = *parent != Affine3A::IDENTITY;
    let transform_wins = sync.initialized || !identity || (has_parent && unplaced);
    if transform_wins && transform_moved {
        let (p, r) = to_world(parent, transform.translation, transform.rotation);
        (p, r, true)
    } else {
        (position.0, rotation.0, false)
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
    let parent = parent_affine_world(world, entity);
    let (translation, rotation, from_transform) =
        user_pose(&transform, &position, &rotation, &sync, &parent);
    if !translation.is_finite() || !is_finite_quat(rotation) {
        return;
    }
    let rotation = rotation.normalize();
    // The Transform that stands for the pose: the user's own values when they won (a root's
    // rotation is normalised), else the winner made relative to the parent.
    let (local_translation, local_rotation) = if from_transform {
        let local_rotation = if parent == Affine3A::IDENTITY {
            rotation
        } else {
            transform.rotation.normalize()
        };
        (transform.translation, local_rotation)
    } else {
        to_local(&parent, translation, rotation)
    };
    if !local_translation.is_finite() || !is_finite_quat(local_rotation) {
        return;
    }
    let mut entity = world.entity_mut(entity);
    if let Some(mut position) = entity.get_mut::<Position>() {
        position.0 = translation;
    }
    if let Some(mut r) = entity.get_mut::<Rotation>() {
        r.0 = rotation;
    }
    if let Some(mut t) = entity.get_mut::<Transform>() {
        t.translation = local_translation;
        t.rotation = local_rotation;
    }
    if let Some(mut s) = entity.get_mut::<PoseSync>() {
        *s = PoseSync {
            translation,
            rotation,
            local_translation,
            local_rotation,
            parent,
            initialized: true,
        };
    }
}

/// Copies user-moved `Transform`s (or moved parents) into `Position`/`Rotation`, rejecting
/// non-finite poses.
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
            Has<ChildOf>,
        ),
        With<RigidBody>,
    >,
    links: Query<(Option<&ChildOf>, Option<&Transform>)>,
    mut warned: Local<EntityHashSet>,
) {
    for (entity, transform, mut position, mut rotation, mut sync, sleeping, has_parent) in
        &mut bodies
    {
        let parent = if has_parent {
            parent_affine_in(entity, &links)
        } else {
            Affine3A::IDENTITY
        };
        let transform_moved = transform.translation != sync.local_translation
            || transform.rotation != sync.local_rotation
            || parent != sync.parent;
        let position_moved = position.0 != sync.translation || rotation.0 != sync.rotation;
        if !transform_moved && !position_moved && sync.initialized {
            continue;
        }
        let (mut new_position, mut new_rotation, mut from_transform) =
            user_pose(transform, &position, &rotation, &sync, &parent);
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
            from_transform = false;
        } else {
            new_rotation = new_rotation.normalize();
        }
        position.set_if_neq(Position(new_position));
        rotation.set_if_neq(Rotation(new_rotation));
        // The local pose that stands for the new world pose: the Transform itself when it won,
        // else the world pose made relative to the parent (written at the end of the step).
        let (local_translation, local_rotation) = if from_transform {
            (transform.translation, transform.rotation)
        } else {
            to_local(&parent, new_position, new_rotation)
        };
        let initialized = sync.initialized;
        *sync = PoseSync {
            translation: new_position,
            rotation: new_rotation,
            local_translation,
            local_rotation,
            parent,
            initialized,
        };
        if sync.initialized && sleeping {
            commands.entity(entity).remove::<Sleeping>();
        }
        sync.initialized = true;
    }
}

/// Copies the poses the step produced into `Transform`, relative to each body's parent.
#[allow(clippy::type_complexity)]
pub(crate) fn position_to_transform(
    mut set: ParamSet<(
        Query<
            (
                Entity,
                &Position,
                &Rotation,
                &mut Transform,
                &mut PoseSync,
                Has<ChildOf>,
            ),
            (With<RigidBody>, Or<(Changed<Position>, Changed<Rotation>)>),
        >,
        Query<(Option<&ChildOf>, Option<&Transform>)>,
    )>,
    children: Query<
        Entity,
        (
            With<RigidBody>,
            With<ChildOf>,
            Or<(Changed<Position>, Changed<Rotation>)>,
        ),
    >,
    mut parents: Local<Vec<(Entity, Affine3A)>>,
) {
    // Parents' world transforms first (they are read from `Transform`s this system writes).
    parents.clear();
    parents.extend(children.iter().map(|entity| (entity, Affine3A::IDENTITY)));
    if !parents.is_empty() {
        let links = set.p1();
        for (entity, affine) in parents.iter_mut() {
            *affine = parent_affine_in(*entity, &links);
        }
        parents.sort_unstable_by_key(|(entity, _)| *entity);
    }
    let mut bodies = set.p0();
    for (entity, position, rotation, mut transform, mut sync, has_parent) in &mut bodies {
        let parent = if has_parent {
            parents
                .binary_search_by_key(&entity, |(e, _)| *e)
                .map_or(Affine3A::IDENTITY, |i| parents[i].1)
        } else {
            Affine3A::IDENTITY
        };
        let unchanged_world =
            position.0 == sync.translation && rotation.0 == sync.rotation && parent == sync.parent;
        let (translation, local_rotation) = if unchanged_world && sync.initialized {
            (sync.local_translation, sync.local_rotation)
        } else {
            to_local(&parent, position.0, rotation.0)
        };
        if !translation.is_finite() || !is_finite_quat(local_rotation) {
            // A parent with zero scale has no inverse: leave the Transform alone.
            continue;
        }
        if transform.translation != translation || transform.rotation != local_rotation {
            transform.translation = translation;
            transform.rotation = local_rotation;
        }
        *sync = PoseSync {
            translation: position.0,
            rotation: rotation.0,
            local_translation: translation,
            local_rotation,
            parent,
            initialized: true,
        };
    }
}

/// Transform sync at the start ([`PhysicsStepSet::Prepare`]) and end
/// ([`PhysicsStepSet::Finalize`]) of each step.
///
/// [`PhysicsStepSet::Prepare`]: crate::PhysicsStepSet::Prepare
/// [`PhysicsStepSet::Finalize`]: crate::PhysicsStepSet::Finalize
pub(crate) struct SyncPlugin;

impl Plugin for SyncPlugin {
    fn build(&self, app: &mut App) {
        use crate::schedule::{PhysicsSchedule, PhysicsStepSet};
        app.init_resource::<crate::body::CreationCounter>();
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
