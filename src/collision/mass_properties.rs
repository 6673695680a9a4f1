//! Mass properties from colliders: each body's [`ComputedMass`] is the sum of its usable
//! colliders' mass properties (parry's, at each collider's pose relative to the body origin),
//! with the body's [`Mass`], [`CenterOfMass`] and [`AngularInertia`] overrides applied (see
//! [`body::mass`](crate::body::mass) for the rules).
//!
//! It is computed as soon as a body, a collider, a [`ColliderDensity`], a [`Mass`], a
//! [`CenterOfMass`] or an [`AngularInertia`] is inserted or removed (component hooks registered by the collider plugin),
//! so a system that runs right after spawning reads the real mass; the prepare stage of each
//! step then recomputes it for whatever changed since, and stays the authority.

use bevy::ecs::component::Mutable;
use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;
use parry3d::mass_properties::MassProperties;

use super::IntoCollider;
use super::collider::{Collider, ColliderOf};
use crate::body::mass::{MassOverrides, inverse_or_zero};
use crate::body::{AngularInertia, CenterOfMass, ColliderDensity, ComputedMass, Mass, RigidBody};
use crate::math::Scalar;
use crate::validation::non_negative;

/// Registers the hooks that recompute a body's mass when its overrides, its density or the
/// body itself are inserted or removed. (The hooks of [`Collider`] are on its type.)
pub(crate) fn register_mass_hooks(world: &mut World) {
    fn on_insert_and_remove<T: Component<Mutability = Mutable>>(
        world: &mut World,
        hook: fn(DeferredWorld, HookContext),
    ) {
        world
            .register_component_hooks::<T>()
            .on_insert(hook)
            .on_remove(hook);
    }
    on_insert_and_remove::<Mass>(world, refresh_on_hook);
    on_insert_and_remove::<CenterOfMass>(world, refresh_on_hook);
    on_insert_and_remove::<AngularInertia>(world, refresh_on_hook);
    world
        .register_component_hooks::<RigidBody>()
        .on_insert(refresh_on_hook);
    world
        .register_component_hooks::<ColliderDensity>()
        .on_insert(super::collider::refresh_body_on_hook);
}

/// Recomputes [`ComputedMass`] for new bodies, bodies whose overrides changed or were removed,
/// and bodies whose colliders changed.
#[allow(clippy::type_complexity)]
pub(crate) fn update_mass_properties(
    mut ownership: ResMut<super::collider::ColliderOwnership>,
    mut removed: (
        RemovedComponents<Mass>,
        RemovedComponents<CenterOfMass>,
        RemovedComponents<AngularInertia>,
    ),
    changed: Query<
        Entity,
        (
            With<RigidBody>,
            Or<(
                Added<RigidBody>,
                Changed<Mass>,
                Changed<CenterOfMass>,
                Changed<AngularInertia>,
            )>,
        ),
    >,
    colliders: Query<
        (
            &crate::body::CreationOrder,
            &Collider,
            &ColliderDensity,
            &super::collider::ColliderPose,
            &ColliderOf,
        ),
        Without<super::collider::DisabledCollider>,
    >,
    mut bodies: Query<(&mut ComputedMass, OverrideComponents)>,
    mut parts: Local<Vec<(u64, Entity, MassProperties)>>,
) {
    let mut dirty = std::mem::take(&mut ownership.dirty_bodies);
    dirty.extend(changed.iter());
    // Despawned bodies are filtered out below, where their `ComputedMass` is not found.
    dirty.extend(removed.0.read());
    dirty.extend(removed.1.read());
    dirty.extend(removed.2.read());
    if dirty.is_empty() {
        ownership.dirty_bodies = dirty;
        return;
    }
    dirty.sort_unstable();
    dirty.dedup();
    let mut sums: bevy::ecs::entity::EntityHashMap<Option<MassProperties>> =
        dirty.iter().map(|&e| (e, None)).collect();
    // Summed in the colliders' creation order, not the ECS storage order: floating-point sums
    // depend on the order, and peers must get the same bits.
    parts.clear();
    for (order, collider, density, pose, collider_of) in &colliders {
        if sums.contains_key(&collider_of.body) {
            let props = collider_mass(collider, density.0, pose);
            parts.push((order.get(), collider_of.body, props));
        }
    }
    parts.sort_unstable_by_key(|&(order, _, _)| order);
    for &(_, body, props) in parts.iter() {
        if let Some(sum) = sums.get_mut(&body) {
            *sum = Some(sum.map_or(props, |s| s + props));
        }
    }
    for &entity in &dirty {
        if let Ok((mut computed, (mass, com, inertia))) = bodies.get_mut(entity) {
            let props = sums.get(&entity).copied().flatten();
            let overrides = MassOverrides {
                mass: mass.map(|m| m.0),
                center_of_mass: com.map(|c| c.0),
                angular_inertia: inertia.copied(),
            };
            *computed = ComputedMass::from_parts(entity, props, overrides, true);
        }
    }
    dirty.clear();
    ownership.dirty_bodies = dirty;
}

/// The mass, inertia and centre of mass of a shape of a given density, to give a body without
/// colliders (or with colliders that should not decide its mass) the mass properties of a
/// shape.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # let mut world = World::new();
/// // A body with no collider that moves like a 1 m cube of density 1 kg/m³.
/// world.spawn((
///     RigidBody::Dynamic,
///     MassPropertiesBundle::from_shape(&Cuboid::from_length(1.0), 1.0),
/// ));
/// ```
#[derive(Bundle, Clone, Copy, Debug, PartialEq)]
pub struct MassPropertiesBundle {
    /// The shape's mass.
    pub mass: Mass,
    /// The shape's inertia about its centre of mass.
    pub angular_inertia: AngularInertia,
    /// The shape's centre of mass in its own frame.
    pub center_of_mass: CenterOfMass,
}

impl MassPropertiesBundle {
    /// The mass properties of `shape` (a [`Collider`] or a Bevy
    /// primitive) filled with `density` kg/m³. A shape with no volume (a segment, a triangle,
    /// an invalid collider) or a density ≤ 0 gives a zero [`Mass`], which the engine rejects
    /// with a warning, using the body's colliders (or its 1 kg fallback) instead.
    pub fn from_shape(shape: &impl IntoCollider, density: Scalar) -> Self {
        let collider = shape.collider();
        let props = if collider.validate().is_none() && density > 0.0 && density.is_finite() {
            collider.shape().mass_properties(density)
        } else {
            MassProperties::default()
        };
        Self {
            mass: Mass(props.mass()),
            angular_inertia: AngularInertia::new_with_local_frame(
                props.inv_principal_inertia.map(inverse_or_zero),
                props.principal_inertia_local_frame,
            ),
            center_of_mass: CenterOfMass(props.local_com),
        }
    }
}

/// A body's mass overrides, as the prepare stage reads them.
type OverrideComponents = (
    Option<&'static Mass>,
    Option<&'static CenterOfMass>,
    Option<&'static AngularInertia>,
);

/// One collider's mass properties about its body's origin. A density the validation stage has
/// not seen yet is used only if it is usable (else the default), so nothing non-finite enters
/// the sum; a zero-density collider adds nothing.
fn collider_mass(
    collider: &Collider,
    density: Scalar,
    pose: &super::collider::ColliderPose,
) -> MassProperties {
    let density = if non_negative(density) {
        density
    } else {
        1000.0
    };
    collider
        .shape()
        .mass_properties(density)
        .transform_by(&pose.pose())
}

/// Hook of [`RigidBody`] and the mass overrides: recompute the body's mass once the
/// change is done.
fn refresh_on_hook(mut world: DeferredWorld, context: HookContext) {
    queue_mass_refresh(&mut world, context.entity, None);
}

/// Recomputes `body`'s [`ComputedMass`] from what the world holds once the current spawn or
/// insert has finished. `collider`, if given, is the collider entity whose change asked for it:
/// a new child is listed in its parent's `Children` only by a command its `ChildOf` hook
/// queues, which may run after this one, so that collider is found from its own `ChildOf`.
pub(crate) fn queue_mass_refresh(
    world: &mut DeferredWorld,
    body: Entity,
    collider: Option<Entity>,
) {
    world
        .commands()
        .queue(move |world: &mut World| refresh_mass(world, body, collider));
}

/// Fills `body`'s [`ComputedMass`] now, from its colliders and overrides. Warnings are left to
/// the prepare stage, which recomputes the mass of new bodies anyway.
fn refresh_mass(world: &mut World, body: Entity, collider: Option<Entity>) {
    if world.get::<RigidBody>(body).is_none() {
        return;
    }
    let props = colliders_mass(world, body, collider);
    let overrides = MassOverrides {
        mass: world.get::<Mass>(body).map(|m| m.0),
        center_of_mass: world.get::<CenterOfMass>(body).map(|c| c.0),
        angular_inertia: world.get::<AngularInertia>(body).copied(),
    };
    if let Some(mut computed) = world.get_mut::<ComputedMass>(body) {
        *computed = ComputedMass::from_parts(body, props, overrides, false);
    }
}

/// The summed mass properties of the usable colliders on `body` and its descendants (down to,
/// not into, other bodies), plus `extra` (a collider under `body` not yet in its parent's
/// `Children`), about the body origin: what the prepare stage sums, found by walking the
/// hierarchy instead of the collider links the stage maintains.
fn colliders_mass(world: &World, body: Entity, extra: Option<Entity>) -> Option<MassProperties> {
    let mut sum: Option<MassProperties> = None;
    let mut add = |entity: Entity, local: Transform| {
        if let Some(props) = usable_collider_mass(world, entity, local) {
            sum = Some(sum.map_or(props, |s| s + props));
        }
    };
    let mut seen_extra = false;
    let mut stack = vec![(body, Transform::IDENTITY)];
    while let Some((entity, local)) = stack.pop() {
        seen_extra |= Some(entity) == extra;
        add(entity, local);
        for &child in world.get::<Children>(entity).into_iter().flatten() {
            if world.get::<RigidBody>(child).is_none() {
                let transform = world.get::<Transform>(child).copied().unwrap_or_default();
                stack.push((child, local * transform));
            }
        }
    }
    if let Some(extra) = extra.filter(|_| !seen_extra) {
        let (found, local) = super::collider::find_body_in(world, extra);
        if found == Some(body) {
            add(
                extra,
                Transform::from_translation(local.translation).with_rotation(local.rotation),
            );
        }
    }
    sum
}

/// The mass properties of `entity`'s collider at `local` (relative to its body's origin), if
/// it has a usable one at a finite offset (the prepare stage then places one at a bad offset
/// at its last valid one).
fn usable_collider_mass(world: &World, entity: Entity, local: Transform) -> Option<MassProperties> {
    let collider = world.get::<Collider>(entity)?;
    if collider.validate().is_some() || !local.is_finite() {
        return None;
    }
    let density = world.get::<ColliderDensity>(entity).map_or(1000.0, |d| d.0);
    let pose = super::collider::ColliderPose {
        translation: local.translation,
        rotation: local.rotation,
    };
    Some(collider_mass(collider, density, &pose))
}
