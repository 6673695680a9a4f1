//! The [`SpatialQuery`] system parameter, its filter and its results.

use bevy::ecs::entity::{EntityHashSet, MapEntities};
use bevy::ecs::system::SystemParam;
use bevy::math::bounding::Aabb3d;
use bevy::prelude::*;
use parry3d::bounding_volume::{Aabb, BoundingVolume};
use parry3d::math::Pose;
use parry3d::partitioning::TraversalAction;
use parry3d::query::{Ray, RayIntersection, ShapeCastHit, ShapeCastOptions, ShapeCastStatus};
use parry3d::shape::{ConvexPolyhedron, Shape};

use crate::collision::Collider;
use crate::collision::broad_phase::{BroadPhase, ColliderProxy};
use crate::collision::collider::DisabledCollider;
use crate::math::{Quaternion, Scalar, Vector, is_finite_quat, pose};

/// Which colliders a query may report.
///
/// A collider passes when its [`CollisionLayers`](crate::CollisionLayers) memberships share a bit with `mask`, neither
/// it nor its body is in `excluded_entities`, and it is not a [`Sensor`](crate::Sensor) (unless
/// `include_sensors` is set: trigger volumes are usually not meant to stop rays).
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # let player = Entity::PLACEHOLDER;
/// let filter = SpatialQueryFilter::from_mask(0b0010).with_excluded_entities([player]);
/// ```
#[derive(Clone, Reflect, Debug, PartialEq, MapEntities)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct SpatialQueryFilter {
    /// Bit mask tested against each collider's [`CollisionLayers::memberships`](crate::CollisionLayers::memberships). Default: all.
    pub mask: u32,
    /// Colliders, or bodies whose colliders, the query skips.
    #[entities]
    pub excluded_entities: EntityHashSet,
    /// Whether sensors are reported. Default `false`.
    pub include_sensors: bool,
}

impl Default for SpatialQueryFilter {
    fn default() -> Self {
        Self {
            mask: u32::MAX,
            excluded_entities: EntityHashSet::default(),
            include_sensors: false,
        }
    }
}

impl SpatialQueryFilter {
    /// A filter that accepts colliders in any of the groups of `mask` (a `u32` bit mask, a
    /// [`LayerMask`](crate::collision::LayerMask), a named layer or an array of them).
    pub fn from_mask(mask: impl Into<crate::collision::LayerMask>) -> Self {
        Self::default().with_mask(mask)
    }

    /// A filter that skips these colliders, and every collider of these bodies (a character's
    /// own body in its ground check, say).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use impetus3d::prelude::*;
    /// # let player = Entity::PLACEHOLDER;
    /// let filter = SpatialQueryFilter::from_excluded_entities([player]);
    /// assert!(filter.excluded_entities.contains(&player));
    /// ```
    pub fn from_excluded_entities(entities: impl IntoIterator<Item = Entity>) -> Self {
        Self::default().with_excluded_entities(entities)
    }

    /// Sets the layer mask (as [`from_mask`](Self::from_mask) takes it).
    pub fn with_mask(mut self, mask: impl Into<crate::collision::LayerMask>) -> Self {
        self.mask = mask.into().0;
        self
    }

    /// Skips these colliders, and every collider of these bodies.
    pub fn with_excluded_entities(mut self, entities: impl IntoIterator<Item = Entity>) -> Self {
        self.excluded_entities.extend(entities);
        self
    }

    /// Whether sensors are reported.
    pub fn with_sensors(mut self, include: bool) -> Self {
        self.include_sensors = include;
        self
    }

    fn accepts(&self, proxy: &ColliderProxy) -> bool {
        let excluded = |e: Entity| self.excluded_entities.contains(&e);
        proxy.layers.memberships & self.mask != 0
            && (self.include_sensors || !proxy.sensor)
            && (self.excluded_entities.is_empty()
                || !(excluded(proxy.entity) || proxy.body.is_some_and(excluded)))
    }
}

/// A ray hit.
#[derive(Clone, Reflect, Copy, Debug, PartialEq, MapEntities)]
#[reflect(Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct RayHitData {
    /// The collider hit.
    #[entities]
    pub entity: Entity,
    /// Distance from the ray origin to the hit, m.
    pub distance: Scalar,
    /// World-space surface normal at the hit, pointing out of the shape (into it when a
    /// non-solid cast from inside hits the far side).
    pub normal: Vector,
}

/// How a shape is cast.
#[derive(Clone, Reflect, Copy, Debug, PartialEq)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct ShapeCastConfig {
    /// How far the shape travels, m. Default: unlimited.
    pub max_distance: Scalar,
    /// The shapes count as hitting once they are this close, m. Default 0.
    pub target_distance: Scalar,
    /// Whether points and normals are computed when the shape already overlaps a collider at
    /// its origin (distance 0). Default `true`.
    pub compute_contact_on_penetration: bool,
    /// Whether colliders the shape overlaps at its origin are skipped. Default `false`.
    pub ignore_origin_penetration: bool,
}

impl Default for ShapeCastConfig {
    fn default() -> Self {
        Self {
            max_distance: Scalar::MAX,
            target_distance: 0.0,
            compute_contact_on_penetration: true,
            ignore_origin_penetration: false,
        }
    }
}

impl ShapeCastConfig {
    /// The default configuration with a maximum distance.
    pub fn from_max_distance(max_distance: Scalar) -> Self {
        Self {
            max_distance,
            ..default()
        }
    }
}

/// A shape-cast hit.
#[derive(Clone, Reflect, Copy, Debug, PartialEq, MapEntities)]
#[reflect(Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct ShapeHitData {
    /// The collider hit.
    #[entities]
    pub entity: Entity,
    /// How far the cast shape travelled before touching it, m.
    pub distance: Scalar,
    /// The touching point on the cast shape, in world space, with the shape at the hit.
    pub point1: Vector,
    /// The touching point on the collider hit, in world space.
    pub point2: Vector,
    /// World-space outward normal of the cast shape at `point1`.
    pub normal1: Vector,
    /// World-space outward normal of the collider hit at `point2`.
    pub normal2: Vector,
}

/// The closest point on a collider to a query point.
#[derive(Clone, Reflect, Copy, Debug, PartialEq, MapEntities)]
#[reflect(Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct PointProjectionHit {
    /// The collider.
    #[entities]
    pub entity: Entity,
    /// The closest point on its surface (the query point itself if inside and `solid`).
    pub point: Vector,
    /// Whether the query point is inside the collider.
    pub is_inside: bool,
}

/// Casts rays and shapes, projects points and finds overlaps, through the broad phase's
/// bounding volume hierarchy. See the [module docs](crate::spatial_query) for when moved bodies
/// are seen.
///
/// Invalid input (a non-finite or non-unit direction, a non-finite origin or rotation, a
/// negative or NaN distance, an invalid collider) gives no hit; queries never panic.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// fn ground_check(query: SpatialQuery) {
///     let filter = SpatialQueryFilter::default();
///     if let Some(hit) = query.cast_ray(Vec3::new(0.0, 2.0, 0.0), Dir3::NEG_Y, 10.0, true, &filter) {
///         println!("ground {} m below: {}", hit.distance, hit.entity);
///     }
/// }
/// # bevy::ecs::system::assert_is_system(ground_check);
/// ```
#[derive(SystemParam)]
pub struct SpatialQuery<'w, 's> {
    broad: Res<'w, BroadPhase>,
    /// Colliders that still exist and are enabled: a despawned collider stays in the tree until
    /// the next update and must not be reported.
    live: Query<'w, 's, (), (With<Collider>, Without<DisabledCollider>)>,
}

/// Accepts a collider entity and its body.
type Predicate<'a> = &'a dyn Fn(Entity, Option<Entity>) -> bool;

impl SpatialQuery<'_, '_> {
    /// The nearest collider hit by a ray from `origin` along `direction` within
    /// `max_distance`. With `solid = false`, a ray starting inside a shape hits its far side
    /// instead of at distance 0.
    pub fn cast_ray(
        &self,
        origin: Vector,
        direction: Dir3,
        max_distance: Scalar,
        solid: bool,
        filter: &SpatialQueryFilter,
    ) -> Option<RayHitData> {
        self.cast_ray_with(origin, direction, max_distance, solid, filter, &|_, _| true)
    }

    /// [`Self::cast_ray`], also skipping the colliders for which `predicate` returns false.
    pub fn cast_ray_predicate(
        &self,
        origin: Vector,
        direction: Dir3,
        max_distance: Scalar,
        solid: bool,
        filter: &SpatialQueryFilter,
        predicate: &dyn Fn(Entity) -> bool,
    ) -> Option<RayHitData> {
        self.cast_ray_with(origin, direction, max_distance, solid, filter, &|e, _| {
            predicate(e)
        })
    }

    pub(crate) fn cast_ray_with(
        &self,
        origin: Vector,
        direction: Dir3,
        max_distance: Scalar,
        solid: bool,
        filter: &SpatialQueryFilter,
        predicate: Predicate,
    ) -> Option<RayHitData> {
        let (ray, max) = valid_ray(origin, direction, max_distance)?;
        let slab = Slab::new(&ray);
        let toi = |leaf, limit| {
            let proxy = self.candidate(leaf, filter, predicate)?;
            cast_ray_on(proxy, &ray, limit, solid).map(|hit| hit.time_of_impact)
        };
        let (mut leaf, nearest) = self.broad.bvh().find_best(
            max,
            |node, best| slab.entry(node.mins(), node.maxs(), best),
            toi,
        )?;
        // Of colliders hit at exactly that distance (tiles of a floor, at their seams) the
        // newest, as every query reports ties, rather than the one the tree's shape (which
        // differs between peers and after a rollback) happens to give first.
        let mut newest = self.key_of_leaf(leaf);
        self.broad.bvh().traverse(|node| {
            if slab.entry(node.mins(), node.maxs(), nearest) > nearest {
                return TraversalAction::Prune;
            }
            if let Some(other) = node.leaf_data() {
                let key = self.key_of_leaf(other);
                if key < newest && toi(other, nearest).is_some_and(|t| t == nearest) {
                    (leaf, newest) = (other, key);
                }
            }
            TraversalAction::Continue
        });
        let proxy = self.broad.leaf_proxy(leaf)?;
        let hit = cast_ray_on(proxy, &ray, max, solid)?;
        Some(RayHitData {
            entity: proxy.entity,
            distance: hit.time_of_impact,
            normal: ray_normal(proxy, hit, &ray),
        })
    }

    /// Every collider hit by the ray, nearest first, at most `max_hits` of them.
    pub fn ray_hits(
        &self,
        origin: Vector,
        direction: Dir3,
        max_distance: Scalar,
        max_hits: u32,
        solid: bool,
        filter: &SpatialQueryFilter,
    ) -> Vec<RayHitData> {
        self.ray_hits_with(
            origin,
            direction,
            max_distance,
            max_hits,
            solid,
            filter,
            &|_, _| true,
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn ray_hits_with(
        &self,
        origin: Vector,
        direction: Dir3,
        max_distance: Scalar,
        max_hits: u32,
        solid: bool,
        filter: &SpatialQueryFilter,
        predicate: Predicate,
    ) -> Vec<RayHitData> {
        let mut hits = Vec::new();
        self.ray_hits_into(
            origin,
            direction,
            max_distance,
            max_hits,
            solid,
            filter,
            predicate,
            &mut hits,
        );
        hits
    }

    /// [`Self::ray_hits_with`] into `hits` (cleared first), reusing its buffer.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn ray_hits_into(
        &self,
        origin: Vector,
        direction: Dir3,
        max_distance: Scalar,
        max_hits: u32,
        solid: bool,
        filter: &SpatialQueryFilter,
        predicate: Predicate,
        hits: &mut Vec<RayHitData>,
    ) {
        hits.clear();
        let Some((ray, max)) = valid_ray(origin, direction, max_distance) else {
            return;
        };
        let slab = Slab::new(&ray);
        self.broad.bvh().traverse(|node| {
            if slab.entry(node.mins(), node.maxs(), max) > max {
                return TraversalAction::Prune;
            }
            if let Some(proxy) = node
                .leaf_data()
                .and_then(|leaf| self.candidate(leaf, filter, predicate))
                && let Some(hit) = cast_ray_on(proxy, &ray, max, solid)
            {
                hits.push(RayHitData {
                    entity: proxy.entity,
                    distance: hit.time_of_impact,
                    normal: ray_normal(proxy, hit, &ray),
                });
            }
            TraversalAction::Continue
        });
        nearest_first(hits, max_hits, |hit| {
            (hit.distance, self.key_of(hit.entity))
        });
    }

    /// The first collider that `shape`, at `origin` with `rotation`, touches when moved along
    /// `direction` (at most `config.max_distance`).
    pub fn cast_shape(
        &self,
        shape: &Collider,
        origin: Vector,
        rotation: Quaternion,
        direction: Dir3,
        config: &ShapeCastConfig,
        filter: &SpatialQueryFilter,
    ) -> Option<ShapeHitData> {
        self.cast_shape_with(
            shape,
            origin,
            rotation,
            direction,
            config,
            filter,
            &|_, _| true,
        )
    }

    /// [`Self::cast_shape`], also skipping the colliders for which `predicate` returns false.
    #[allow(clippy::too_many_arguments)]
    pub fn cast_shape_predicate(
        &self,
        shape: &Collider,
        origin: Vector,
        rotation: Quaternion,
        direction: Dir3,
        config: &ShapeCastConfig,
        filter: &SpatialQueryFilter,
        predicate: &dyn Fn(Entity) -> bool,
    ) -> Option<ShapeHitData> {
        self.cast_shape_with(
            shape,
            origin,
            rotation,
            direction,
            config,
            filter,
            &|e, _| predicate(e),
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn cast_shape_with(
        &self,
        shape: &Collider,
        origin: Vector,
        rotation: Quaternion,
        direction: Dir3,
        config: &ShapeCastConfig,
        filter: &SpatialQueryFilter,
        predicate: Predicate,
    ) -> Option<ShapeHitData> {
        let mut best: Option<ShapeHitData> = None;
        self.sweep(
            shape,
            origin,
            rotation,
            direction,
            config,
            filter,
            predicate,
            |hit| {
                let key = |h: &ShapeHitData| (h.distance, self.key_of(h.entity));
                if best.is_none_or(|b| key(&hit) < key(&b)) {
                    best = Some(hit);
                }
                best.map_or(Scalar::MAX, |b| b.distance)
            },
        );
        best
    }

    /// Every collider the cast shape touches on its way, nearest first, at most `max_hits`.
    #[allow(clippy::too_many_arguments)]
    pub fn shape_hits(
        &self,
        shape: &Collider,
        origin: Vector,
        rotation: Quaternion,
        direction: Dir3,
        max_hits: u32,
        config: &ShapeCastConfig,
        filter: &SpatialQueryFilter,
    ) -> Vec<ShapeHitData> {
        self.shape_hits_with(
            shape,
            origin,
            rotation,
            direction,
            max_hits,
            config,
            filter,
            &|_, _| true,
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn shape_hits_with(
        &self,
        shape: &Collider,
        origin: Vector,
        rotation: Quaternion,
        direction: Dir3,
        max_hits: u32,
        config: &ShapeCastConfig,
        filter: &SpatialQueryFilter,
        predicate: Predicate,
    ) -> Vec<ShapeHitData> {
        let mut hits = Vec::new();
        self.shape_hits_into(
            shape, origin, rotation, direction, max_hits, config, filter, predicate, &mut hits,
        );
        hits
    }

    /// [`Self::shape_hits_with`] into `hits` (cleared first), reusing its buffer.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn shape_hits_into(
        &self,
        shape: &Collider,
        origin: Vector,
        rotation: Quaternion,
        direction: Dir3,
        max_hits: u32,
        config: &ShapeCastConfig,
        filter: &SpatialQueryFilter,
        predicate: Predicate,
        hits: &mut Vec<ShapeHitData>,
    ) {
        hits.clear();
        self.sweep(
            shape,
            origin,
            rotation,
            direction,
            config,
            filter,
            predicate,
            |hit| {
                hits.push(hit);
                Scalar::MAX
            },
        );
        nearest_first(hits, max_hits, |hit| {
            (hit.distance, self.key_of(hit.entity))
        });
    }

    /// Sweeps `shape` through the tree: a node is visited when its box, grown by the shape's
    /// half extents, is hit by the ray the shape's centre follows before the distance `found`
    /// returns (the nearest hit so far, or the maximum distance to find every hit).
    #[allow(clippy::too_many_arguments)]
    fn sweep(
        &self,
        shape: &Collider,
        origin: Vector,
        rotation: Quaternion,
        direction: Dir3,
        config: &ShapeCastConfig,
        filter: &SpatialQueryFilter,
        predicate: Predicate,
        mut found: impl FnMut(ShapeHitData) -> Scalar,
    ) {
        let valid = shape.validate().is_none()
            && is_finite_quat(rotation)
            && config.target_distance >= 0.0
            && config.target_distance.is_finite();
        let Some((_, max)) = valid_ray(origin, direction, config.max_distance) else {
            return;
        };
        if !valid {
            return;
        }
        let pose1 = pose(origin, rotation.normalize());
        let bounds = shape.shape().compute_aabb(&pose1);
        let grow = bounds.half_extents() + Vector::splat(config.target_distance);
        let centre = Slab::new(&Ray::new(bounds.center(), *direction));
        let options = ShapeCastOptions {
            max_time_of_impact: max,
            target_distance: config.target_distance,
            stop_at_penetration: true,
            compute_impact_geometry_on_penetration: config.compute_contact_on_penetration,
        };
        let mut limit = max;
        self.broad.bvh().traverse(|node| {
            let Some((_, exit)) = centre.span(node.mins() - grow, node.maxs() + grow, limit) else {
                return TraversalAction::Prune;
            };
            let Some(proxy) = node
                .leaf_data()
                .and_then(|leaf| self.candidate(leaf, filter, predicate))
            else {
                return TraversalAction::Continue;
            };
            // Past where the cast shape's box leaves the collider's, the two cannot touch.
            // Telling parry so also bounds its walk over a heightfield's cells, which never
            // ends for a cast that leaves the field sideways while the limit is far (a level
            // fuzzer's upturned heightfield hung the app).
            let options = ShapeCastOptions {
                max_time_of_impact: exit,
                ..options
            };
            let Ok(Some(hit)) = parry3d::query::cast_shapes(
                &pose1,
                *direction,
                &**shape.shape(),
                &proxy.pose,
                Vector::ZERO,
                &*proxy.shape,
                options,
            ) else {
                return TraversalAction::Continue;
            };
            let at_origin = hit.status == ShapeCastStatus::PenetratingOrWithinTargetDist;
            if config.ignore_origin_penetration && at_origin {
                return TraversalAction::Continue;
            }
            let target = Target {
                shape: &**shape.shape(),
                pose: pose1,
                direction: *direction,
                distance: config.target_distance,
            };
            limit = limit.min(found(target.refine(hit, proxy, at_origin, max)));
            TraversalAction::Continue
        });
    }

    /// The collider nearest to `point`, with the closest point on it. With `solid`, a point
    /// inside a collider projects onto itself.
    pub fn project_point(
        &self,
        point: Vector,
        solid: bool,
        filter: &SpatialQueryFilter,
    ) -> Option<PointProjectionHit> {
        if !point.is_finite() {
            return None;
        }
        let (leaf, (_, projection)) =
            self.broad
                .bvh()
                .project_point(point, Scalar::MAX, |leaf, _| {
                    let proxy = self.candidate(leaf, filter, &|_, _| true)?;
                    Some(proxy.shape.project_point(&proxy.pose, point, solid))
                })?;
        Some(PointProjectionHit {
            entity: self.broad.leaf_proxy(leaf)?.entity,
            point: projection.point,
            is_inside: projection.is_inside,
        })
    }

    /// Every collider that contains `point`, in creation order (oldest first).
    pub fn point_intersections(&self, point: Vector, filter: &SpatialQueryFilter) -> Vec<Entity> {
        if !point.is_finite() {
            return Vec::new();
        }
        let aabb = Aabb::new(point, point);
        self.overlapping(&aabb, filter, |proxy| {
            proxy.shape.contains_point(&proxy.pose, point)
        })
    }

    /// Every collider whose bounding box overlaps `aabb` (sensors included), in creation order
    /// (oldest first).
    pub fn aabb_intersections_with_aabb(&self, aabb: Aabb3d) -> Vec<Entity> {
        let aabb = Aabb::new(aabb.min.into(), aabb.max.into());
        if !aabb.mins.is_finite() || !aabb.maxs.is_finite() {
            return Vec::new();
        }
        let filter = SpatialQueryFilter::default().with_sensors(true);
        self.overlapping(&aabb, &filter, |proxy| {
            proxy.shape.compute_aabb(&proxy.pose).intersects(&aabb)
        })
    }

    /// Every collider that `shape`, placed at `position` with `rotation`, overlaps, in creation
    /// order (oldest first).
    pub fn shape_intersections(
        &self,
        shape: &Collider,
        position: Vector,
        rotation: Quaternion,
        filter: &SpatialQueryFilter,
    ) -> Vec<Entity> {
        if shape.validate().is_some() || !position.is_finite() || !is_finite_quat(rotation) {
            return Vec::new();
        }
        let pose1 = pose(position, rotation.normalize());
        let aabb = shape.shape().compute_aabb(&pose1);
        self.overlapping(&aabb, filter, |proxy| {
            parry3d::query::intersection_test(&pose1, &**shape.shape(), &proxy.pose, &*proxy.shape)
                .unwrap_or(false)
        })
    }

    /// The accepted colliders whose tree box overlaps `aabb` and that pass `test`, in
    /// creation order (oldest first: the same on every peer, unlike `Entity` order).
    fn overlapping(
        &self,
        aabb: &Aabb,
        filter: &SpatialQueryFilter,
        test: impl Fn(&ColliderProxy) -> bool,
    ) -> Vec<Entity> {
        let mut found: Vec<(u64, Entity)> = self
            .broad
            .bvh()
            .intersect_aabb(aabb)
            .filter_map(|leaf| self.candidate(leaf, filter, &|_, _| true))
            .filter(|proxy| test(proxy))
            .map(|proxy| (proxy.key, proxy.entity))
            .collect();
        // Keys count down from the oldest collider.
        found.sort_unstable_by(|a, b| b.cmp(a));
        found.into_iter().map(|(_, entity)| entity).collect()
    }

    /// The key of a collider a query just found, which breaks ties between hits (the newest
    /// collider first, see [`CreationOrder::pair_key`](crate::CreationOrder)).
    fn key_of(&self, collider: Entity) -> u64 {
        self.key_of_leaf(collider.index_u32())
    }

    /// [`Self::key_of`] the collider of a tree leaf.
    fn key_of_leaf(&self, leaf: u32) -> u64 {
        (self.broad.leaf_proxy(leaf)).map_or(u64::MAX, |proxy| proxy.key)
    }

    /// The proxy of a tree leaf, if the query may report it.
    fn candidate(
        &self,
        leaf: u32,
        filter: &SpatialQueryFilter,
        predicate: Predicate,
    ) -> Option<&ColliderProxy> {
        let proxy = self.broad.leaf_proxy(leaf)?;
        (filter.accepts(proxy)
            && predicate(proxy.entity, proxy.body)
            && self.live.contains(proxy.entity))
        .then_some(proxy)
    }
}

/// A ray prepared for many box tests (the slab method, with the direction's reciprocal
/// computed once).
struct Slab {
    origin: Vector,
    inverse_direction: Vector,
}

impl Slab {
    fn new(ray: &Ray) -> Self {
        Self {
            origin: ray.origin,
            inverse_direction: ray.dir.recip(),
        }
    }

    /// Where the ray enters the box `[mins, maxs]` (0 if it starts inside), or `Scalar::MAX`
    /// if it misses it or enters beyond `max`.
    #[inline]
    fn entry(&self, mins: Vector, maxs: Vector, max: Scalar) -> Scalar {
        self.span(mins, maxs, max)
            .map_or(Scalar::MAX, |(enter, _)| enter)
    }

    /// Where the ray enters and leaves the box `[mins, maxs]` (entering at 0 if it starts
    /// inside, leaving at `max` at the latest), or `None` if it misses it before `max`.
    #[inline]
    fn span(&self, mins: Vector, maxs: Vector, max: Scalar) -> Option<(Scalar, Scalar)> {
        let t1 = (mins - self.origin) * self.inverse_direction;
        let t2 = (maxs - self.origin) * self.inverse_direction;
        let enter = t1.min(t2).max_element().max(0.0);
        let exit = t1.max(t2).min_element().min(max);
        (enter <= exit).then_some((enter, exit))
    }
}

/// A shape cast in progress: the shape, its start pose, its direction of travel and the
/// distance at which it counts as touching.
struct Target<'a> {
    shape: &'a dyn Shape,
    pose: Pose,
    direction: Vector,
    distance: Scalar,
}

impl Target<'_> {
    /// The cast shape's pose after travelling `distance`.
    fn at(&self, distance: Scalar) -> Pose {
        Pose::from_parts(
            self.pose.translation + self.direction * distance,
            self.pose.rotation,
        )
    }

    /// Polishes parry's time of impact (which its GJK iteration leaves about 1e-4 m short on
    /// flat faces) by conservative advancement: move on by the remaining gap over the closing
    /// speed along the contact normal until the gap is under 1e-6 m, then take the contact
    /// points and normals at that pose.
    fn refine(
        &self,
        hit: ShapeCastHit,
        proxy: &ColliderProxy,
        at_origin: bool,
        max: Scalar,
    ) -> ShapeHitData {
        let mut toi = hit.time_of_impact;
        let mut normal1 = self.pose.rotation * hit.normal1;
        if !at_origin {
            for _ in 0..4 {
                let Ok(gap) =
                    parry3d::query::distance(&self.at(toi), self.shape, &proxy.pose, &*proxy.shape)
                else {
                    break;
                };
                let closing = self.direction.dot(normal1);
                let gap = gap - self.distance;
                if gap.abs() < 1e-6 || closing < 1e-3 {
                    break;
                }
                toi = (toi + gap / closing).clamp(0.0, max);
            }
        }
        let moved = self.at(toi);
        let contact = parry3d::query::contact(
            &moved,
            self.shape,
            &proxy.pose,
            &*proxy.shape,
            self.distance + 1e-4,
        );
        match contact {
            Ok(Some(c)) if !at_origin => {
                normal1 = c.normal1;
                ShapeHitData {
                    entity: proxy.entity,
                    distance: toi,
                    point1: c.point1,
                    point2: c.point2,
                    normal1,
                    normal2: c.normal2,
                }
            }
            _ => ShapeHitData {
                entity: proxy.entity,
                distance: toi,
                point1: moved * hit.witness1,
                point2: proxy.pose * hit.witness2,
                normal1,
                normal2: proxy.pose.rotation * hit.normal2,
            },
        }
    }
}

/// The surface normal of a ray hit. parry casts rays on capsules, cylinders and convex hulls
/// with GJK, whose normals are only good to about 1e-2 on curved surfaces and 1e-4 on a hull's
/// faces; there the normal is recomputed exactly from the hit point, keeping the side parry
/// chose.
/// The ray's first hit on the proxy's collider within `max`: parry's, but for a capsule, whose
/// hit parry finds by iterating on its support function (stopping up to about 0.1 mm short of
/// the surface), the exact intersection of the ray with its cylinder and its two balls.
fn cast_ray_on(
    proxy: &ColliderProxy,
    ray: &Ray,
    max: Scalar,
    solid: bool,
) -> Option<RayIntersection> {
    let Some(capsule) = proxy.shape.as_capsule() else {
        return (proxy.shape).cast_ray_and_get_normal(&proxy.pose, ray, max, solid);
    };
    let local = ray.inverse_transform_by(&proxy.pose);
    let (a, b, radius) = (capsule.segment.a, capsule.segment.b, capsule.radius);
    let (entry, exit) = ray_capsule(&local, a, b, radius)?;
    let (time, inside) = match (entry > 0.0, solid) {
        (true, _) => (entry, false),
        (false, true) => (0.0, true),
        (false, false) => (exit, true),
    };
    if time > max || exit < 0.0 {
        return None;
    }
    let point = local.point_at(time);
    let along = (point - a).dot(b - a) / (b - a).length_squared().max(Scalar::EPSILON);
    let outward = (point - (a + along.clamp(0.0, 1.0) * (b - a))).normalize_or_zero();
    let normal = proxy.pose.rotation * if inside { -outward } else { outward };
    Some(RayIntersection::new(
        time,
        normal,
        parry3d::shape::FeatureId::Face(0),
    ))
}

/// Where the line `ray` (origin + t dir) enters and leaves the capsule of segment `a`–`b` and
/// `radius`, in units of `dir`: the earliest entry into and the latest exit from its lateral
/// cylinder (where the hit lies between the segment's ends) and its two end balls, the capsule
/// being their union and convex. `None` if the line misses it.
fn ray_capsule(ray: &Ray, a: Vector, b: Vector, radius: Scalar) -> Option<(Scalar, Scalar)> {
    let (o, d) = (ray.origin, ray.dir);
    let mut span: Option<(Scalar, Scalar)> = None;
    let mut include = |t0: Scalar, t1: Scalar| {
        span = Some(span.map_or((t0, t1), |(s0, s1)| (s0.min(t0), s1.max(t1))));
    };
    // The quadratic q2 t² + 2 q1 t + q0 = 0 for the roots, if real.
    let roots = |q2: Scalar, q1: Scalar, q0: Scalar| {
        let disc = q1 * q1 - q2 * q0;
        (q2 > 0.0 && disc >= 0.0).then(|| {
            let root = disc.sqrt();
            ((-q1 - root) / q2, (-q1 + root) / q2)
        })
    };
    for centre in [a, b] {
        let w = o - centre;
        if let Some((t0, t1)) = roots(d.dot(d), d.dot(w), w.dot(w) - radius * radius) {
            include(t0, t1);
        }
    }
    let axis = b - a;
    let length = axis.length();
    if length > 0.0 {
        let u = axis / length;
        let (w, d_across) = (o - a, d - d.dot(u) * u);
        let w_across = w - w.dot(u) * u;
        let q0 = w_across.dot(w_across) - radius * radius;
        if let Some((t0, t1)) = roots(d_across.dot(d_across), d_across.dot(w_across), q0) {
            let within = |t: Scalar| (0.0..=length).contains(&(w + t * d).dot(u));
            // A lateral crossing counts where it lies between the ends; beyond them the balls
            // bound the capsule.
            if within(t0) {
                include(t0, t0);
            }
            if within(t1) {
                include(t1, t1);
            }
        }
    }
    span
}

fn ray_normal(proxy: &ColliderProxy, hit: RayIntersection, ray: &Ray) -> Vector {
    let point =
        proxy.pose.rotation.inverse() * (ray.point_at(hit.time_of_impact) - proxy.pose.translation);
    let exact = if let Some(capsule) = proxy.shape.as_capsule() {
        let (a, b) = (capsule.segment.a, capsule.segment.b);
        let t = ((point - a).dot(b - a) / (b - a).length_squared().max(Scalar::EPSILON))
            .clamp(0.0, 1.0);
        Some(point - (a + t * (b - a)))
    } else if let Some(cylinder) = proxy.shape.as_cylinder() {
        let radial = Vector::new(point.x, 0.0, point.z);
        let on_cap = point.y.abs() >= cylinder.half_height - 1e-5
            && radial.length() <= cylinder.radius - 1e-5;
        Some(if on_cap {
            Vector::Y * point.y.signum()
        } else {
            radial
        })
    } else {
        proxy
            .shape
            .as_convex_polyhedron()
            .and_then(|hull| hull_face_normal(hull, point))
    };
    match exact.and_then(|n| (proxy.pose.rotation * n).try_normalize()) {
        Some(n) if n.dot(hit.normal) < 0.0 => -n,
        Some(n) => n,
        None => hit.normal,
    }
}

/// The outward normal of the face of `hull` that `point` (local, on the surface) lies on: the
/// face whose plane it is least behind (on an edge, either of its faces).
fn hull_face_normal(hull: &ConvexPolyhedron, point: Vector) -> Option<Vector> {
    let corners = hull.vertices_adj_to_face();
    hull.faces()
        .iter()
        .map(|face| {
            let corner = hull.points()[corners[face.first_vertex_or_edge as usize] as usize];
            (face.normal, face.normal.dot(point - corner))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(normal, _)| normal)
}

/// Sorts hits by distance (ties by the colliders' creation order, newest first, so the order
/// never depends on the tree or on `Entity` values) and keeps the nearest `max_hits`.
fn nearest_first<T>(hits: &mut Vec<T>, max_hits: u32, key: impl Fn(&T) -> (Scalar, u64)) {
    // Unstable: the key is unique per collider, and the stable sort allocates for long lists.
    hits.sort_unstable_by(|a, b| {
        let ((da, ea), (db, eb)) = (key(a), key(b));
        da.total_cmp(&db).then(ea.cmp(&eb))
    });
    hits.truncate(max_hits as usize);
}

/// The ray and the distance limit of a query, or `None` for invalid input.
fn valid_ray(origin: Vector, direction: Dir3, max_distance: Scalar) -> Option<(Ray, Scalar)> {
    let direction = *direction;
    let unit = direction.is_finite() && (direction.length_squared() - 1.0).abs() < 1e-3;
    if !origin.is_finite() || !unit || max_distance.is_nan() || max_distance < 0.0 {
        return None;
    }
    Some((Ray::new(origin, direction), max_distance.min(Scalar::MAX)))
}
