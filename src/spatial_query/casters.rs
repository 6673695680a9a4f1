//! Components that repeat a ray or shape cast from an entity every physics step.

use bevy::ecs::entity::EntityHashSet;
use bevy::prelude::*;

use super::query::{RayHitData, ShapeCastConfig, ShapeHitData, SpatialQuery, SpatialQueryFilter};
use crate::body::{Position, Rotation};
use crate::collision::Collider;
use crate::math::{Quaternion, Scalar, Vector, is_finite_quat};

/// Casts a ray from its entity after every physics step and keeps the hits in [`RayHits`].
///
/// `origin` and `direction` are in the entity's frame: the ray follows the entity's body pose
/// (if the entity, or an ancestor, is a body) or its transform otherwise.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// fn spawn_character(mut commands: Commands) {
///     // A ground check 1.1 m down from a character's origin.
///     commands.spawn((
///         RigidBody::Kinematic,
///         Collider::capsule(0.4, 1.0),
///         RayCaster::new(Vec3::ZERO, Dir3::NEG_Y).with_max_distance(1.1),
///     ));
/// }
/// # bevy::ecs::system::assert_is_system(spawn_character);
/// ```
#[derive(Component, Reflect, Clone, Debug, PartialEq)]
#[reflect(Component, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
#[require(RayHits)]
pub struct RayCaster {
    /// Whether the ray is cast. Default `true`.
    pub enabled: bool,
    /// Start of the ray in the entity's frame.
    pub origin: Vector,
    /// Direction of the ray in the entity's frame.
    pub direction: Dir3,
    /// How far the ray reaches, m. Default: unlimited.
    pub max_distance: Scalar,
    /// How many hits are kept, nearest first. Default 1.
    pub max_hits: u32,
    /// Whether a ray starting inside a collider hits it at distance 0 (`true`, the default)
    /// or at its far side.
    pub solid: bool,
    /// Whether the colliders of the caster's own body (or the caster entity) are skipped.
    /// Default `true`.
    pub ignore_self: bool,
    /// Which colliders may be hit.
    #[entities]
    pub query_filter: SpatialQueryFilter,
}

impl RayCaster {
    /// A ray from `origin` along `direction`, in the entity's frame.
    pub fn new(origin: Vector, direction: Dir3) -> Self {
        Self {
            enabled: true,
            origin,
            direction,
            max_distance: Scalar::MAX,
            max_hits: 1,
            solid: true,
            ignore_self: true,
            query_filter: default(),
        }
    }

    /// Sets how far the ray reaches.
    pub fn with_max_distance(mut self, max_distance: Scalar) -> Self {
        self.max_distance = max_distance;
        self
    }

    /// Sets how many hits are kept.
    pub fn with_max_hits(mut self, max_hits: u32) -> Self {
        self.max_hits = max_hits;
        self
    }

    /// Sets whether shapes are solid to the ray.
    pub fn with_solidness(mut self, solid: bool) -> Self {
        self.solid = solid;
        self
    }

    /// Sets whether the caster's own body is skipped.
    pub fn with_ignore_self(mut self, ignore_self: bool) -> Self {
        self.ignore_self = ignore_self;
        self
    }

    /// Sets the filter.
    pub fn with_query_filter(mut self, filter: SpatialQueryFilter) -> Self {
        self.query_filter = filter;
        self
    }
}

/// The hits of a [`RayCaster`] after the last physics step, nearest first.
#[derive(Component, Reflect, Clone, Debug, Default, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct RayHits(#[entities] pub Vec<RayHitData>);

impl RayHits {
    /// The hits, nearest first.
    pub fn iter(&self) -> impl Iterator<Item = &RayHitData> {
        self.0.iter()
    }

    /// The nearest hit.
    pub fn first(&self) -> Option<&RayHitData> {
        self.0.first()
    }

    /// Number of hits.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True if nothing was hit.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Casts a shape from its entity after every physics step and keeps the hits in
/// [`ShapeHits`]. Placement follows the entity as for [`RayCaster`].
#[derive(Component, Reflect, Clone, Debug)]
#[reflect(Component, Debug)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
#[require(ShapeHits)]
pub struct ShapeCaster {
    /// Whether the shape is cast. Default `true`.
    pub enabled: bool,
    /// The shape cast.
    pub shape: Collider,
    /// Start of the cast in the entity's frame.
    pub origin: Vector,
    /// The shape's rotation in the entity's frame.
    pub rotation: Quaternion,
    /// Direction of travel in the entity's frame.
    pub direction: Dir3,
    /// How many hits are kept, nearest first. Default 1.
    pub max_hits: u32,
    /// Distances and what counts as a hit.
    pub config: ShapeCastConfig,
    /// Whether the colliders of the caster's own body are skipped. Default `true`.
    pub ignore_self: bool,
    /// Which colliders may be hit.
    #[entities]
    pub query_filter: SpatialQueryFilter,
}

impl ShapeCaster {
    /// Casts `shape` from `origin` (rotated by `rotation`) along `direction`, in the entity's
    /// frame.
    pub fn new(shape: Collider, origin: Vector, rotation: Quaternion, direction: Dir3) -> Self {
        Self {
            enabled: true,
            shape,
            origin,
            rotation,
            direction,
            max_hits: 1,
            config: default(),
            ignore_self: true,
            query_filter: default(),
        }
    }

    /// Sets how far the shape travels.
    pub fn with_max_distance(mut self, max_distance: Scalar) -> Self {
        self.config.max_distance = max_distance;
        self
    }

    /// Sets how many hits are kept.
    pub fn with_max_hits(mut self, max_hits: u32) -> Self {
        self.max_hits = max_hits;
        self
    }

    /// Sets whether the caster's own body is skipped.
    pub fn with_ignore_self(mut self, ignore_self: bool) -> Self {
        self.ignore_self = ignore_self;
        self
    }

    /// Sets the filter.
    pub fn with_query_filter(mut self, filter: SpatialQueryFilter) -> Self {
        self.query_filter = filter;
        self
    }
}

/// The hits of a [`ShapeCaster`] after the last physics step, nearest first.
#[derive(Component, Reflect, Clone, Debug, Default, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct ShapeHits(#[entities] pub Vec<ShapeHitData>);

impl ShapeHits {
    /// The hits, nearest first.
    pub fn iter(&self) -> impl Iterator<Item = &ShapeHitData> {
        self.0.iter()
    }

    /// The nearest hit.
    pub fn first(&self) -> Option<&ShapeHitData> {
        self.0.first()
    }

    /// Number of hits.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True if nothing was hit.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Hierarchy links for placing casters: parent, local transform, and the pose of bodies.
type Placement<'w, 's> = Query<
    'w,
    's,
    (
        Option<&'static ChildOf>,
        Option<&'static Transform>,
        Option<(&'static Position, &'static Rotation)>,
    ),
>;

/// The world pose of `entity` and the body it moves with: the first body found walking up the
/// hierarchy (its `Position`/`Rotation` composed with the transforms below it), or the
/// composed transforms up to the root.
fn placement(entity: Entity, links: &Placement) -> (Transform, Option<Entity>) {
    let mut local = Transform::IDENTITY;
    let mut current = entity;
    // Depth bound guards against malformed hierarchies.
    for _ in 0..64 {
        let Ok((parent, transform, body)) = links.get(current) else {
            break;
        };
        if let Some((position, rotation)) = body {
            let body_pose = Transform::from_translation(position.0).with_rotation(rotation.0);
            return (body_pose * local, Some(current));
        }
        local = transform.copied().unwrap_or_default() * local;
        match parent {
            Some(parent) => current = parent.parent(),
            None => break,
        }
    }
    (local, None)
}

/// The world origin and direction of a cast, or `None` (with a warning once) if its pose or
/// direction is not usable.
fn world_cast(
    entity: Entity,
    origin: Vector,
    direction: Dir3,
    links: &Placement,
    warned: &mut EntityHashSet,
) -> Option<(Vector, Dir3, Quaternion, Option<Entity>)> {
    let (pose, body) = placement(entity, links);
    let world_origin = pose.transform_point(origin);
    let world_direction = Dir3::new(pose.rotation * *direction).ok();
    let unit = direction.is_finite() && (direction.length_squared() - 1.0).abs() < 1e-3;
    match world_direction {
        Some(d) if unit && world_origin.is_finite() && is_finite_quat(pose.rotation) => {
            Some((world_origin, d, pose.rotation, body))
        }
        _ => {
            if warned.insert(entity) {
                warn!(
                    "{entity}: caster skipped: origin {origin} or direction {:?} is not finite, \
                     or the direction is not unit length, in world space",
                    *direction
                );
            }
            None
        }
    }
}

/// Refreshes every enabled [`RayCaster`]'s [`RayHits`].
pub(crate) fn update_ray_casters(
    mut casters: Query<(Entity, &RayCaster, &mut RayHits)>,
    links: Placement,
    query: SpatialQuery,
    mut warned: Local<EntityHashSet>,
) {
    for (entity, caster, mut hits) in &mut casters {
        hits.0.clear();
        if !caster.enabled {
            continue;
        }
        let Some((origin, direction, _, body)) =
            world_cast(entity, caster.origin, caster.direction, &links, &mut warned)
        else {
            continue;
        };
        let own = |collider: Entity, collider_body: Option<Entity>| {
            !caster.ignore_self || (collider != entity && (body.is_none() || collider_body != body))
        };
        query.ray_hits_into(
            origin,
            direction,
            caster.max_distance,
            caster.max_hits,
            caster.solid,
            &caster.query_filter,
            &own,
            &mut hits.0,
        );
    }
}

/// Refreshes every enabled [`ShapeCaster`]'s [`ShapeHits`].
pub(crate) fn update_shape_casters(
    mut casters: Query<(Entity, &ShapeCaster, &mut ShapeHits)>,
    links: Placement,
    query: SpatialQuery,
    mut warned: Local<EntityHashSet>,
) {
    for (entity, caster, mut hits) in &mut casters {
        hits.0.clear();
        if !caster.enabled {
            continue;
        }
        let Some((origin, direction, rotation, body)) =
            world_cast(entity, caster.origin, caster.direction, &links, &mut warned)
        else {
            continue;
        };
        let own = |collider: Entity, collider_body: Option<Entity>| {
            !caster.ignore_self || (collider != entity && (body.is_none() || collider_body != body))
        };
        query.shape_hits_into(
            &caster.shape,
            origin,
            rotation * caster.rotation,
            direction,
            caster.max_hits,
            &caster.config,
            &caster.query_filter,
            &own,
            &mut hits.0,
        );
    }
}
