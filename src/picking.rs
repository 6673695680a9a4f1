//! A [`bevy_picking`](bevy::picking) backend on the colliders (cargo feature `picking`): what a
//! pointer is over is found by casting the pointer's ray into the physics world, so
//! `Pointer<Over>`, `Pointer<Click>`, `Pointer<Drag>` and the other pointer events reach
//! entities with a [`Collider`](crate::Collider), with or without a mesh.
//!
//! Add [`PhysicsPickingPlugin`] beside Bevy's picking plugins (part of `DefaultPlugins` when
//! Bevy's `bevy_picking` feature is on) and the physics plugin:
//!
//! ```no_run
//! use bevy::prelude::*;
//! use impetus3d::picking::PhysicsPickingPlugin;
//! use impetus3d::prelude::*;
//!
//! fn main() {
//!     App::new()
//!         .add_plugins((DefaultPlugins, PhysicsPlugin::default(), PhysicsPickingPlugin))
//!         .add_systems(Startup, setup)
//!         .run();
//! }
//!
//! fn setup(mut commands: Commands) {
//!     commands.spawn((Camera3d::default(), Transform::from_xyz(0.0, 2.0, 8.0)));
//!     commands
//!         .spawn((
//!             RigidBody::Dynamic,
//!             Collider::sphere(0.5),
//!             Transform::from_xyz(0.0, 2.0, 0.0),
//!         ))
//!         // A click lifts the ball: the event names the collider that was hit.
//!         .observe(|click: On<Pointer<Click>>, mut bodies: Query<Forces>| {
//!             if let Ok(mut body) = bodies.get_mut(click.entity) {
//!                 body.apply_linear_impulse(Vec3::Y * 3000.0);
//!             }
//!         });
//! }
//! ```
//!
//! ## What is picked
//!
//! Each frame, in [`PickingSystems::Backend`], every ray of Bevy's [`RayMap`] (one per pointer
//! and camera, built from the pointer's position and the camera's projection, viewports and
//! scale factor included) is cast with [`SpatialQuery::cast_ray`]. The nearest collider hit is
//! reported in a [`PointerHits`] message for the ray's pointer, with its depth (the distance
//! along the ray from its origin, which for a camera's ray lies on the near plane), the world
//! point hit and the surface normal there; the hits' `order` is the camera's
//! [`Camera::order`], as for Bevy's own backends.
//!
//! - The hit entity is the collider. A collider on a child entity of its body reports the
//!   child; pointer events bubble up the hierarchy, so an observer on the body hears them too.
//! - Bevy's [`Pickable`] is honoured on the collider, or when the collider has none on its
//!   body: [`Pickable::IGNORE`] makes a collider transparent to pointers, and a collider
//!   whose `should_block_lower` is `false` lets the ray go on to what lies behind it (each
//!   collider behind is reported too, up to the first that blocks, at most
//!   [`MAX_PICKS_PER_RAY`]).
//! - Which colliders a camera's rays may pick is narrowed by a [`PhysicsPickingFilter`] on the
//!   camera (collision-layer mask, excluded entities, sensors), and with
//!   [`PhysicsPickingSettings::require_markers`] to cameras and colliders (or their bodies)
//!   marked [`PhysicsPickable`].
//! - Render layers and visibility play no part: this backend sees the physics world, where a
//!   hidden collider is still there and a mesh without a collider is not. Add Bevy's
//!   `MeshPickingPlugin` as well for meshes without colliders; the hover system sorts the hits
//!   of all backends by depth.
//! - A body moved this frame by writing its `Transform` or `Position` is picked where the
//!   last physics step left it (see [`spatial_query`](crate::spatial_query)).
//!
//! [`RayMap`]: bevy::picking::backend::ray::RayMap
//! [`PointerHits`]: bevy::picking::backend::PointerHits
//! [`PickingSystems::Backend`]: bevy::picking::PickingSystems::Backend
//! [`Pickable`]: bevy::picking::Pickable
//! [`Pickable::IGNORE`]: bevy::picking::Pickable::IGNORE
//! [`Camera::order`]: bevy::camera::Camera::order

use bevy::camera::Camera;
use bevy::ecs::entity::EntityHashSet;
use bevy::picking::backend::ray::RayMap;
use bevy::picking::backend::{HitData, PointerHits};
use bevy::picking::{Pickable, PickingSystems};
use bevy::prelude::*;

use crate::collision::ColliderOf;
use crate::math::Scalar;
use crate::spatial_query::{SpatialQuery, SpatialQueryFilter, update_spatial_query_pipeline};

/// The most colliders one ray reports: the first that blocks (see [`Pickable`]) and those in
/// front of it that do not. Bounds the casts per ray when many non-blocking colliders line up.
///
/// [`Pickable`]: bevy::picking::Pickable
pub const MAX_PICKS_PER_RAY: usize = 8;

/// Adds the physics picking backend: pointers hit colliders (see the [module docs](self)).
///
/// It needs Bevy's `PickingPlugin` (in `DefaultPlugins` with the `bevy_picking` feature, or in
/// `DefaultPickingPlugins`), which builds the rays and turns the hits into pointer events.
#[derive(Clone, Copy, Debug, Default)]
pub struct PhysicsPickingPlugin;

impl Plugin for PhysicsPickingPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<PhysicsPickingSettings>()
            .register_type::<PhysicsPickingSettings>()
            .register_type::<PhysicsPickable>()
            .register_type::<PhysicsPickingFilter>()
            .add_systems(
                PreUpdate,
                update_hits
                    .in_set(PickingSystems::Backend)
                    // Colliders spawned since the last frame are in the query tree.
                    .after(update_spatial_query_pipeline),
            );
    }
}

/// How the physics picking backend chooses cameras and colliders. A resource, inserted with its
/// defaults by [`PhysicsPickingPlugin`].
#[derive(Resource, Clone, Copy, Debug, PartialEq, Reflect)]
#[reflect(Resource, Default, Debug, PartialEq, Clone)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct PhysicsPickingSettings {
    /// Only rays of cameras marked [`PhysicsPickable`] are cast, and only colliders marked
    /// [`PhysicsPickable`] (on the collider or its body) are reported. Default `false`: every
    /// camera and every collider.
    pub require_markers: bool,
    /// How far along a ray colliders are picked, m. Default: unlimited.
    pub max_distance: Scalar,
}

impl Default for PhysicsPickingSettings {
    fn default() -> Self {
        Self {
            require_markers: false,
            max_distance: Scalar::MAX,
        }
    }
}

/// Marks a camera whose rays the physics backend casts, and a collider (or a body, for all of
/// its colliders) it may report, when [`PhysicsPickingSettings::require_markers`] is on.
/// Ignored otherwise.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq, Reflect)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct PhysicsPickable;

/// On a camera: which colliders its rays may pick (collision-layer mask, excluded colliders or
/// bodies, sensors). A camera without one picks every collider but sensors.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::picking::PhysicsPickingFilter;
/// # use impetus3d::prelude::*;
/// # fn spawn_camera(mut commands: Commands) {
/// // Pointers pick only colliders in the layer of bit 1, sensors included.
/// let filter = SpatialQueryFilter::from_mask(0b10).with_sensors(true);
/// commands.spawn((Camera3d::default(), PhysicsPickingFilter(filter)));
/// # }
/// # bevy::ecs::system::assert_is_system(spawn_camera);
/// ```
#[derive(Component, Clone, Debug, Default, PartialEq, Reflect)]
#[reflect(Component, Default, Debug, PartialEq, Clone)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct PhysicsPickingFilter(pub SpatialQueryFilter);

/// The camera end of a ray: its order, marker and filter. A ray in the [`RayMap`] may name an
/// entity that is no camera (rays added by hand, for render-to-texture say): its order is 0.
///
/// [`RayMap`]: bevy::picking::backend::ray::RayMap
type RayCameras<'w, 's> = Query<
    'w,
    's,
    (
        Option<&'static Camera>,
        Has<PhysicsPickable>,
        Option<&'static PhysicsPickingFilter>,
    ),
>;

/// What a ray may hit: a collider's `Pickable` and marker, and its body (whose `Pickable` and
/// marker count for the collider when it has none of its own).
type RayTargets<'w, 's> = Query<
    'w,
    's,
    (
        Option<&'static Pickable>,
        Has<PhysicsPickable>,
        Option<&'static ColliderOf>,
    ),
>;

/// Casts every ray of the [`RayMap`] into the physics world and writes a [`PointerHits`] for
/// each ray that hits a collider (see the [module docs](self)). In
/// [`PickingSystems::Backend`], added by [`PhysicsPickingPlugin`].
///
/// [`RayMap`]: bevy::picking::backend::ray::RayMap
/// [`PointerHits`]: bevy::picking::backend::PointerHits
/// [`PickingSystems::Backend`]: bevy::picking::PickingSystems::Backend
pub fn update_hits(
    settings: Res<PhysicsPickingSettings>,
    rays: Res<RayMap>,
    cameras: RayCameras,
    query: SpatialQuery,
    targets: RayTargets,
    mut hits: MessageWriter<PointerHits>,
) {
    let default_filter = SpatialQueryFilter::default();
    let body = |collider: Entity| Some(targets.get(collider).ok()?.2?.body);
    // A collider's `Pickable`, or its body's.
    let pickable = |collider: Entity| {
        let own = targets.get(collider).ok().and_then(|t| t.0);
        own.or_else(|| targets.get(body(collider)?).ok()?.0)
    };
    let is_marked = |collider: Entity| {
        let marked = |e: Entity| targets.get(e).is_ok_and(|t| t.1);
        marked(collider) || body(collider).is_some_and(marked)
    };
    let mut reported = EntityHashSet::default();
    for (&id, ray) in rays.iter() {
        let (camera, camera_marked, filter) = cameras.get(id.camera).unwrap_or((None, false, None));
        if settings.require_markers && !camera_marked {
            continue;
        }
        let filter = filter.map_or(&default_filter, |f| &f.0);
        reported.clear();
        let mut picks = Vec::new();
        // Nearest first: a collider that lets pointers through is reported and the cast goes
        // on behind it, until a collider blocks or nothing more is hit.
        while picks.len() < MAX_PICKS_PER_RAY {
            let accept = |collider: Entity| {
                !reported.contains(&collider)
                    && (!settings.require_markers || is_marked(collider))
                    && pickable(collider) != Some(&Pickable::IGNORE)
            };
            let Some(hit) = query.cast_ray_predicate(
                ray.origin,
                ray.direction,
                settings.max_distance,
                true,
                filter,
                &accept,
            ) else {
                break;
            };
            let point = ray.origin + *ray.direction * hit.distance;
            let data = HitData::new(id.camera, hit.distance, Some(point), Some(hit.normal));
            picks.push((hit.entity, data));
            reported.insert(hit.entity);
            if pickable(hit.entity).is_none_or(|p| p.should_block_lower) {
                break;
            }
        }
        if !picks.is_empty() {
            let order = camera.map_or(0.0, |camera| camera.order as f32);
            hits.write(PointerHits::new(id.pointer, picks, order));
        }
    }
}
