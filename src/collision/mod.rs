//! Collision detection: colliders, the broad phase, the narrow phase and contact reporting.

mod aabb;
mod box_box;
pub mod broad_phase;
mod clip;
pub mod collider;
pub mod contacts;
mod dispatcher;
pub mod events;
mod gjk;
pub mod hooks;
pub mod mass_properties;
#[cfg(feature = "collider-from-mesh")]
pub mod mesh;
pub mod narrow_phase;
mod over_face;
mod polygonal;
pub mod primitives;
mod recycling;
pub(crate) mod saved_contacts;
mod segment_triangle;
mod shape_checks;
#[cfg(feature = "serialize")]
pub mod shape_data;
mod terrain;

pub use aabb::ColliderAabb;
pub(crate) use aabb::shape_aabb;
pub use collider::{
    CoefficientCombine, Collider, ColliderDisabled, ColliderOf, CollisionLayers, Friction,
    LayerMask, PhysicsLayer, Restitution, Sensor,
};
pub use contacts::{
    CollisionEnd, CollisionStart, Collisions, ContactGraph, ContactPair, ContactPoint,
    FrictionImpulse,
};
pub use events::{CollidingEntities, CollisionEventsEnabled, ContactForce, ContactForceThreshold};
pub use hooks::{ActiveCollisionHooks, CollisionHooks, CollisionHooksPlugin, ContactPairMut};
pub use mass_properties::MassPropertiesBundle;
#[cfg(feature = "collider-from-mesh")]
pub use mesh::{
    ColliderConstructor, ColliderConstructorHierarchy, ColliderConstructorHierarchyConfig,
    ColliderConstructorHierarchyReady, ColliderConstructorPlugin, ColliderConstructorReady,
    ColliderConstructorSystems, VhacdFillMode, VhacdParameters,
};
pub use primitives::IntoCollider;
pub use shape_checks::TrimeshError;

use bevy::prelude::*;

use crate::schedule::{PhysicsSchedule, PhysicsStepSet};
use crate::validation::ValidationApp;

/// Collider bookkeeping in [`PhysicsStepSet::Prepare`].
pub(crate) struct ColliderPlugin;

impl Plugin for ColliderPlugin {
    fn build(&self, app: &mut App) {
        mass_properties::register_mass_hooks(app.world_mut());
        app.register_type::<CollisionLayers>()
            .register_type::<ColliderAabb>();
        app.init_resource::<collider::ColliderOwnership>()
            .validate_component::<Friction>()
            .validate_component::<Restitution>()
            .validate_component::<crate::body::ColliderDensity>()
            .validate_component::<crate::body::Mass>()
            .validate_component::<crate::body::CenterOfMass>()
            .validate_component::<crate::body::AngularInertia>()
            .add_systems(
                PhysicsSchedule,
                (
                    collider::validate_colliders,
                    collider::update_collider_bodies,
                    mass_properties::update_mass_properties,
                )
                    .chain()
                    .in_set(PhysicsStepSet::Prepare)
                    .after(crate::body::sync::transform_to_position),
            )
            .add_systems(
                PhysicsSchedule,
                aabb::update_collider_aabbs.in_set(PhysicsStepSet::Finalize),
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

/// The narrow phase, in [`PhysicsStepSet::NarrowPhase`], and collision and contact-force
/// events, in [`PhysicsStepSet::Finalize`].
pub(crate) struct NarrowPhasePlugin;

impl Plugin for NarrowPhasePlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ContactGraph>()
            .init_resource::<events::ForceThresholds>()
            .add_message::<CollisionStart>()
            .add_message::<CollisionEnd>()
            .add_message::<ContactForce>()
            .validate_component::<ContactForceThreshold>()
            .add_systems(
                PhysicsSchedule,
                (
                    events::update_force_thresholds
                        .in_set(PhysicsStepSet::Prepare)
                        .after(crate::validation::ValidationSet),
                    narrow_phase::update_contacts.in_set(PhysicsStepSet::NarrowPhase),
                    // After the transforms are written, so observers see this step's poses.
                    (events::report_collisions, events::report_contact_forces)
                        .chain()
                        .in_set(PhysicsStepSet::Finalize)
                        .after(crate::body::sync::position_to_transform),
                ),
            );
    }
}

/// A xorshift stream of vectors with coordinates in ±`scale`: random poses and sizes for the
/// narrow phase's tests, the same on every machine.
#[cfg(test)]
pub(crate) fn random_vectors(mut seed: u32) -> impl FnMut(f32) -> bevy::math::Vec3 {
    let mut unit = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed >> 8) as f32 / (1 << 24) as f32
    };
    move |scale| (bevy::math::Vec3::new(unit(), unit(), unit()) - 0.5) * 2.0 * scale
}

/// The triangles of `field` as a mesh (each with its own three vertices), in the field's
/// order: the same surface through the mesh's code, for the narrow phase's tests.
#[cfg(test)]
pub(crate) fn field_as_mesh(field: &parry3d::shape::HeightField) -> parry3d::shape::TriMesh {
    let everything = parry3d::bounding_volume::Aabb::new(
        bevy::math::Vec3::splat(-1e6),
        bevy::math::Vec3::splat(1e6),
    );
    let mut triangles = Vec::new();
    field.map_elements_in_local_aabb(&everything, &mut |_, t| triangles.push(*t));
    let vertices = triangles.iter().flat_map(|t| [t.a, t.b, t.c]).collect();
    let indices = (0..triangles.len() as u32).map(|i| [3 * i, 3 * i + 1, 3 * i + 2]);
    parry3d::shape::TriMesh::new(vertices, indices.collect()).expect("a heightfield's triangles")
}
