//! Colliders: parry shapes attached to a body entity or to a child of it, with material and
//! filtering components.
//!
//! A collider's body is found by walking up [`ChildOf`] from the collider entity to the first
//! entity with [`RigidBody`]; the [`Transform`]s passed on the way give the collider's pose
//! relative to the body origin. A collider with no body above it is static, placed by its own
//! transforms.

use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;
use parry3d::math::Pose;
use parry3d::shape::{SharedShape, TriMeshFlags};

use super::shape_checks::{
    TrimeshError, hull_points_problem, part_pose_problem, shape_problem, trimesh_problem,
};
use crate::body::{ColliderDensity, RigidBody};
use crate::math::{Quaternion, Scalar, Vector};
use crate::validation::{
    MAX_COMPOUND_PARTS, MAX_HEIGHTFIELD_SAMPLES, Validate, check, non_negative,
};

/// A collision shape. Spawn it on a body entity, or on a child entity (with its own
/// [`Transform`] offset) of one.
///
/// ```
/// # use impetus3d::prelude::*;
/// # use bevy::prelude::*;
/// let crate_box = Collider::cuboid(1.0, 0.5, 2.0); // full lengths, like `Cuboid::new`
/// let ball = Collider::sphere(0.25);
/// let pill = Collider::capsule(0.3, 1.0);
/// let hull = Collider::convex_hull(vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z]).unwrap();
/// let both = Collider::compound(vec![
///     (Vec3::ZERO, Quat::IDENTITY, crate_box),
///     (Vec3::Y, Quat::IDENTITY, ball),
/// ]);
/// ```
///
/// Every collider is checked when it is made, however it is made: by the constructors here,
/// from a parry shape (`Collider::from(shared_shape)`), from a mesh, or read from a file. A
/// shape the engine cannot use (a zero or negative size, a non-finite value, a mesh whose
/// indices pass its vertex list, more elements than the caps of the
/// [validation table](crate::validation)) gives a collider that [`Collider::validate`] reports
/// and that the engine ignores, with a warning naming its entity.
///
/// A collider is reflected as an opaque value (the parry shape is not reflectable field by
/// field): inspectors show its `Debug` form, and scenes carry it whole. With the `serialize`
/// feature it is written as the data that describes its shape, not as parry's internal
/// structures, and rebuilt from that data through the same checked constructors when read
/// (see `collision::shape_data`), so a level file cannot hand the engine a shape whose
/// internals contradict each other.
#[derive(Component, Clone, Reflect)]
#[reflect(opaque)]
#[reflect(Component, Debug, Clone)]
#[cfg_attr(feature = "serialize", reflect(Serialize, Deserialize))]
#[require(ColliderDensity, ColliderPose, crate::body::CreationOrder)]
#[component(on_insert = refresh_body_on_hook, on_remove = refresh_body_on_hook)]
pub struct Collider {
    shape: SharedShape,
    /// Why the shape could not be built, reported against the entity when spawned.
    error: Option<String>,
    /// Compound parts that were left out, reported against the entity when spawned (the
    /// collider is still used).
    dropped: Option<String>,
}

impl std::fmt::Debug for Collider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collider")
            .field("shape", &self.shape.shape_type())
            .field("error", &self.error)
            .field("dropped", &self.dropped)
            .finish()
    }
}

impl From<SharedShape> for Collider {
    /// A collider of a parry shape, checked like every collider (see [`Collider`]): a shape the
    /// engine cannot use gives an ignored collider that [`Collider::validate`] reports.
    fn from(shape: SharedShape) -> Self {
        match shape_problem(&*shape) {
            Some(reason) => Self::invalid(reason),
            None => Self {
                shape,
                error: None,
                dropped: None,
            },
        }
    }
}

impl Collider {
    /// A sphere of the given radius.
    pub fn sphere(radius: Scalar) -> Self {
        SharedShape::ball(radius).into()
    }

    /// A box with full side lengths `x`, `y`, `z` (like Bevy's `Cuboid::new`).
    pub fn cuboid(x: Scalar, y: Scalar, z: Scalar) -> Self {
        SharedShape::cuboid(x * 0.5, y * 0.5, z * 0.5).into()
    }

    /// A capsule along local Y: a cylinder of `length` capped by hemispheres of `radius`
    /// (like Bevy's `Capsule3d::new`).
    pub fn capsule(radius: Scalar, length: Scalar) -> Self {
        SharedShape::capsule_y(length * 0.5, radius).into()
    }

    /// A cylinder along local Y of the given radius and full height.
    pub fn cylinder(radius: Scalar, height: Scalar) -> Self {
        SharedShape::new(super::shape_checks::cylinder(height * 0.5, radius)).into()
    }

    /// A cone along local Y of the given base radius and full height, centred halfway up (like
    /// Bevy's `Cone::new`).
    pub fn cone(radius: Scalar, height: Scalar) -> Self {
        SharedShape::cone(height * 0.5, radius).into()
    }

    /// A line segment from `a` to `b`, in the collider's frame: it has no volume, so it gives
    /// its body no mass.
    pub fn segment(a: Vector, b: Vector) -> Self {
        SharedShape::segment(a, b).into()
    }

    /// A triangle with corners `a`, `b`, `c`, in the collider's frame: it has no volume, so it
    /// gives its body no mass.
    pub fn triangle(a: Vector, b: Vector, c: Vector) -> Self {
        SharedShape::triangle(a, b, c).into()
    }

    /// This shape stretched by `scale` along its local axes (a negative factor mirrors it).
    /// Shapes that stay themselves under the scale (boxes, hulls, meshes, a ball scaled
    /// evenly, a capsule or cylinder scaled evenly across its axis) are scaled exactly; a ball
    /// or rounded shape scaled unevenly becomes a convex hull of its outline sampled with
    /// `subdivisions` segments per half-turn (10 is a good start). A scale with a zero or
    /// non-finite factor, or a shape parry cannot scale, gives a collider the engine reports
    /// and ignores.
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use impetus3d::prelude::*;
    /// let wide = Collider::cuboid(1.0, 1.0, 1.0).scaled(Vec3::new(3.0, 1.0, 1.0), 10);
    /// assert_eq!(wide.shape().as_cuboid().unwrap().half_extents, Vec3::new(1.5, 0.5, 0.5));
    /// ```
    pub fn scaled(&self, scale: Vector, subdivisions: u32) -> Self {
        if !scale.is_finite() || scale.abs().min_element() == 0.0 {
            return Self::invalid(format!("its scale {scale} has a zero or non-finite factor"));
        }
        match self.shape.scale_dyn(scale, subdivisions) {
            Some(shape) => SharedShape(shape.into()).into(),
            None => Self::invalid(format!(
                "its {:?} could not be scaled by {scale}",
                self.shape.shape_type()
            )),
        }
    }

    /// Stretches this shape in place: [`scaled`](Self::scaled) under avian's name.
    pub fn set_scale(&mut self, scale: Vector, subdivisions: u32) {
        *self = self.scaled(scale, subdivisions);
    }

    /// The convex hull of `points`, or `None` if the points are degenerate (fewer than four,
    /// coplanar or collinear, or not finite) or more than
    /// [`MAX_HULL_POINTS`](crate::validation::MAX_HULL_POINTS).
    pub fn convex_hull(points: Vec<Vector>) -> Option<Self> {
        if hull_points_problem(&points).is_some() {
            return None;
        }
        let shape = SharedShape::convex_hull(&points)?;
        // A flat hull has no volume: it cannot carry mass and parry treats it poorly.
        let extent =
            (shape.compute_local_aabb().maxs - shape.compute_local_aabb().mins).max_element();
        let volume = shape.mass_properties(1.0).mass();
        (volume > 1e-6 * extent * extent * extent).then(|| shape.into())
    }

    /// A triangle mesh. An invalid mesh (see [`TrimeshError`]) gives a collider that is
    /// reported with the entity's name and ignored; see [`Collider::try_trimesh`] to handle the
    /// error yourself.
    pub fn trimesh(vertices: Vec<Vector>, indices: Vec<[u32; 3]>) -> Self {
        Self::try_trimesh(vertices, indices).unwrap_or_else(Self::invalid_trimesh)
    }

    /// The collider for a triangle mesh that could not be built: reported and ignored.
    pub(crate) fn invalid_trimesh(err: TrimeshError) -> Self {
        Self::invalid(format!("invalid triangle mesh: {err}"))
    }

    /// A triangle mesh, or the reason it could not be built.
    ///
    /// ```
    /// # use impetus3d::prelude::*;
    /// # use impetus3d::collision::TrimeshError;
    /// # use bevy::prelude::*;
    /// let vertices = vec![Vec3::ZERO, Vec3::X, Vec3::Z];
    /// assert!(Collider::try_trimesh(vertices.clone(), vec![[0, 1, 2]]).is_ok());
    /// let err = Collider::try_trimesh(vertices, vec![[0, 1, 3]]).unwrap_err();
    /// assert!(matches!(err, TrimeshError::IndexOutOfRange { index: 3, .. }));
    /// ```
    pub fn try_trimesh(
        vertices: Vec<Vector>,
        indices: Vec<[u32; 3]>,
    ) -> Result<Self, TrimeshError> {
        Self::try_trimesh_with_flags(vertices, indices, TriMeshFlags::empty())
    }

    /// [`Collider::try_trimesh`] with parry's optional mesh data and clean-ups (`flags`), such
    /// as `TriMeshFlags::FIX_INTERNAL_EDGES`, which keeps bodies sliding across the mesh
    /// from catching on the edges between its triangles.
    pub fn try_trimesh_with_flags(
        vertices: Vec<Vector>,
        indices: Vec<[u32; 3]>,
        flags: TriMeshFlags,
    ) -> Result<Self, TrimeshError> {
        trimesh_problem(&vertices, &indices)?;
        let shape = SharedShape::trimesh_with_flags(vertices, indices, flags)
            .map_err(|err| TrimeshError::Rejected(format!("{err:?}")))?;
        Ok(shape.into())
    }

    /// A heightfield: terrain over the collider's local XZ plane, centred on its origin.
    ///
    /// `heights` is a grid of samples, row by row: `heights[i][j]` is the height (times
    /// `scale.y`) at `z = (i / (rows − 1) − ½) scale.z` and `x = (j / (columns − 1) − ½)
    /// scale.x`. So each row is a line of samples along X, and the rows go along +Z; the field
    /// spans `scale.x` by `scale.z` metres. Between samples the surface is two triangles per
    /// cell.
    ///
    /// ```
    /// # use impetus3d::prelude::*;
    /// # use bevy::prelude::*;
    /// // A 10 m × 10 m field, 3 × 3 samples, rising to 1 m along +X.
    /// let ramp = Collider::heightfield(
    ///     vec![vec![0.0, 0.5, 1.0], vec![0.0, 0.5, 1.0], vec![0.0, 0.5, 1.0]],
    ///     Vec3::new(10.0, 1.0, 10.0),
    /// );
    /// assert!(ramp.validate().is_none());
    /// ```
    ///
    /// A heightfield has no volume and no mass: put it on a static body (or none). Bad input (fewer
    /// than 2 rows or columns, rows of different lengths, more than [`MAX_HEIGHTFIELD_SAMPLES`]
    /// samples, a non-finite height, a non-finite scale or one ≤ 0 along X or Z) gives a
    /// collider that is reported with the entity and ignored.
    pub fn heightfield(heights: Vec<Vec<Scalar>>, scale: Vector) -> Self {
        let rows = heights.len();
        let columns = heights.first().map_or(0, Vec::len);
        if rows < 2 || columns < 2 {
            return Self::invalid(format!(
                "a heightfield needs at least 2 × 2 samples, got {rows} rows of {columns}"
            ));
        }
        if rows.saturating_mul(columns) > MAX_HEIGHTFIELD_SAMPLES {
            return Self::invalid(format!(
                "a heightfield of {rows} × {columns} samples is more than the \
                 {MAX_HEIGHTFIELD_SAMPLES} allowed"
            ));
        }
        if let Some(row) = heights.iter().position(|r| r.len() != columns) {
            return Self::invalid(format!(
                "heightfield row {row} has {} samples where row 0 has {columns}",
                heights[row].len()
            ));
        }
        if heights.iter().flatten().any(|h| !h.is_finite()) {
            return Self::invalid("a heightfield sample is not finite".to_string());
        }
        if !scale.is_finite() || scale.x <= 0.0 || scale.z <= 0.0 {
            return Self::invalid(format!(
                "heightfield scale {scale} is not finite or not > 0 along X and Z"
            ));
        }
        // parry's grid is column-major, its rows along Z and its columns along X.
        let mut data = vec![0.0; rows * columns];
        for (i, row) in heights.iter().enumerate() {
            for (j, &h) in row.iter().enumerate() {
                data[i + j * rows] = h;
            }
        }
        let grid = parry3d::utils::Array2::new(rows, columns, data);
        SharedShape::heightfield(grid, scale).into()
    }

    /// Several colliders rigidly joined, each at a translation and rotation in the compound's
    /// frame.
    ///
    /// A part that cannot be used is dropped: a nested compound or mesh (parry does not allow
    /// them inside a compound), an invalid or zero-size collider, or a non-finite pose. The
    /// other parts collide and give the body its mass as if the bad ones had not been given,
    /// and the collider's entity is reported once with the dropped parts' indices. (Dropping
    /// only the bad part is what a user expects: one bad piece of a many-part shape should not
    /// make the whole object fall through the world.) A compound with no usable part is
    /// ignored, like any invalid collider, and so is one of more than [`MAX_COMPOUND_PARTS`]
    /// parts.
    pub fn compound(parts: Vec<(Vector, Quaternion, Collider)>) -> Self {
        if parts.len() > MAX_COMPOUND_PARTS {
            return Self::invalid(format!(
                "a compound of {} parts is more than the {MAX_COMPOUND_PARTS} allowed",
                parts.len()
            ));
        }
        let mut dropped = Vec::new();
        let mut shapes: Vec<(Pose, SharedShape)> = Vec::new();
        for (index, (t, r, c)) in parts.into_iter().enumerate() {
            match part_problem(&c, t, r) {
                Some(reason) => dropped.push(format!("part {index} ({reason})")),
                None => shapes.push((crate::math::pose(t, r.normalize()), c.shape)),
            }
        }
        let dropped = (!dropped.is_empty()).then(|| format!("dropped {}", dropped.join(", ")));
        if shapes.is_empty() {
            let reason = dropped.map_or(String::new(), |d| format!(": {d}"));
            return Self::invalid(format!("a compound needs at least one valid part{reason}"));
        }
        Self {
            shape: SharedShape::compound(shapes),
            error: None,
            dropped,
        }
    }

    /// A collider that is reported with `reason` and ignored.
    pub(crate) fn invalid(reason: String) -> Self {
        Self {
            shape: SharedShape::ball(0.0),
            error: Some(reason),
            dropped: None,
        }
    }

    /// The parts [`Collider::compound`] left out and why, or `None` if it kept them all (or
    /// this is not a compound).
    pub fn dropped_parts(&self) -> Option<&str> {
        self.dropped.as_deref()
    }

    /// The parry shape.
    pub fn shape(&self) -> &SharedShape {
        &self.shape
    }

    /// Why this collider cannot be used, or `None` if it is valid: a build error, a non-finite
    /// or negative size, or a shape with no extent (see [`Collider`]). Found when the collider
    /// was made, so asking costs nothing.
    pub fn validate(&self) -> Option<String> {
        self.error.clone()
    }
}

/// Why a compound part cannot be used, if it cannot.
fn part_problem(part: &Collider, translation: Vector, rotation: Quaternion) -> Option<String> {
    part_pose_problem(&*part.shape, translation, rotation).or_else(|| part.validate())
}

/// How two colliders' coefficients are combined. When the two differ, the one later in this
/// list wins: `Average < GeometricMean < Min < Multiply < Max`.
#[derive(Clone, Reflect, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub enum CoefficientCombine {
    /// `(a + b) / 2`.
    #[default]
    Average,
    /// `sqrt(a b)`.
    GeometricMean,
    /// `min(a, b)`.
    Min,
    /// `a b`.
    Multiply,
    /// `max(a, b)`.
    Max,
}

impl CoefficientCombine {
    fn apply(self, a: Scalar, b: Scalar) -> Scalar {
        match self {
            Self::Average => 0.5 * (a + b),
            Self::GeometricMean => (a * b).sqrt(),
            Self::Min => a.min(b),
            Self::Multiply => a * b,
            Self::Max => a.max(b),
        }
    }
}

/// Coulomb friction coefficient of a collider (or of all a body's colliders, when placed on the
/// body). Default 0.5, combined by geometric mean, as Box2D does.
///
/// The coefficient must be finite and ≥ 0: a negative one is replaced by 0 and a non-finite
/// one by 0.5, with a warning naming the entity (see [`validation`](crate::validation)).
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct Friction {
    /// The coefficient μ, ≥ 0.
    pub coefficient: Scalar,
    /// How it combines with the other collider's.
    pub combine: CoefficientCombine,
}

impl Default for Friction {
    fn default() -> Self {
        Self::new(0.5)
    }
}

impl Friction {
    /// No friction: with the geometric-mean rule, none against any other collider.
    pub const ZERO: Self = Self {
        coefficient: 0.0,
        combine: CoefficientCombine::GeometricMean,
    };

    /// Friction `coefficient` with the default geometric-mean rule. The coefficient is
    /// checked when the component enters the world.
    pub fn new(coefficient: Scalar) -> Self {
        Self {
            coefficient,
            combine: CoefficientCombine::GeometricMean,
        }
    }

    /// Sets the combine rule.
    pub fn with_combine_rule(mut self, combine: CoefficientCombine) -> Self {
        self.combine = combine;
        self
    }

    pub(crate) fn combine(self, other: Self) -> Scalar {
        self.combine
            .max(other.combine)
            .apply(self.coefficient, other.coefficient)
    }
}

/// Restitution (bounciness) of a collider: 0 stops, 1 bounces back at the same speed. Default
/// 0, combined by maximum so a bouncy ball bounces on any floor.
///
/// The coefficient must be finite and ≥ 0; anything else is replaced by 0 with a warning
/// naming the entity (see [`validation`](crate::validation)).
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct Restitution {
    /// The coefficient e, ≥ 0.
    pub coefficient: Scalar,
    /// How it combines with the other collider's.
    pub combine: CoefficientCombine,
}

impl Default for Restitution {
    fn default() -> Self {
        Self::new(0.0)
    }
}

impl Restitution {
    /// No bounce of its own (the default): by the maximum rule, it still bounces off a bouncy
    /// collider.
    pub const ZERO: Self = Self {
        coefficient: 0.0,
        combine: CoefficientCombine::Max,
    };

    /// Restitution `coefficient` with the default maximum rule. The coefficient is checked
    /// when the component enters the world.
    pub fn new(coefficient: Scalar) -> Self {
        Self {
            coefficient,
            combine: CoefficientCombine::Max,
        }
    }

    /// Sets the combine rule.
    pub fn with_combine_rule(mut self, combine: CoefficientCombine) -> Self {
        self.combine = combine;
        self
    }

    pub(crate) fn combine(self, other: Self) -> Scalar {
        self.combine
            .max(other.combine)
            .apply(self.coefficient, other.coefficient)
    }
}

impl Validate for Friction {
    fn validate(&mut self) -> Option<String> {
        let fallback = if self.coefficient < 0.0 { 0.0 } else { 0.5 };
        let why = "is not a finite number ≥ 0";
        check(
            &mut self.coefficient,
            non_negative,
            "Friction",
            why,
            fallback,
        )
    }
}

impl Validate for Restitution {
    fn validate(&mut self) -> Option<String> {
        let why = "is not a finite number ≥ 0";
        check(&mut self.coefficient, non_negative, "Restitution", why, 0.0)
    }
}

/// Marks a collider as a sensor: it detects and reports overlaps but never pushes.
///
/// A sensor pair sends [`CollisionStart`](crate::CollisionStart) when the shapes begin to
/// overlap and [`CollisionEnd`](crate::CollisionEnd) when they stop, is listed by
/// [`Collisions`](crate::Collisions) and [`CollidingEntities`](crate::CollidingEntities), and
/// obeys [`CollisionLayers`] like any pair; but it gets no contact points and no contact
/// constraint, so neither body is pushed, and it does not join the bodies' sleeping island. A
/// sensor on a dynamic body still gives the body its mass, falls under gravity and passes
/// through everything. A sensor without a body (or on a static one) reports dynamic,
/// kinematic and sleeping bodies passing through it.
#[derive(Component, Reflect, Clone, Copy, Debug, Default)]
#[reflect(Component, Default, Debug)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct Sensor;

/// Turns a collider off without removing it: while present, the collider takes no part in
/// collision detection, so it touches nothing, reports nothing new and pushes nothing. Pairs it
/// was touching end with one [`CollisionEnd`](crate::CollisionEnd) each (and bodies asleep on
/// it wake). Remove the component to turn the collider back on; touching pairs then start
/// again with a new [`CollisionStart`](crate::CollisionStart).
///
/// The collider still counts towards its body's mass, so disabling it does not change how the
/// body moves. (The engine's own [`DisabledCollider`] marks colliders that failed validation
/// and is managed automatically; this one is yours.)
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// fn ghost_mode(mut commands: Commands, player: Single<Entity, With<Collider>>) {
///     commands.entity(*player).insert(ColliderDisabled);
/// }
/// # bevy::ecs::system::assert_is_system(ghost_mode);
/// ```
#[derive(Component, Reflect, Clone, Copy, Debug, Default)]
#[reflect(Component, Default, Debug)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct ColliderDisabled;

/// A named collision layer, usually a user enum, for building [`CollisionLayers`] with
/// [`CollisionLayers::from_layers`].
///
/// `to_bits` gives the layer's bit mask (normally one bit, `1 << index`; up to 32 layers).
/// There is no derive macro on purpose: it would need a proc-macro crate, and the impl is one
/// line. Plain `u32` masks are layers too.
///
/// ```
/// # use impetus3d::prelude::*;
/// #[derive(Clone, Copy)]
/// enum Layer {
///     Ground,
///     Player,
///     Enemy,
/// }
///
/// impl PhysicsLayer for Layer {
///     fn to_bits(&self) -> u32 {
///         1 << *self as u32
///     }
/// }
///
/// // Players are on the player layer and collide with the ground and enemies.
/// let player = CollisionLayers::from_layers([Layer::Player], [Layer::Ground, Layer::Enemy]);
/// let enemy = CollisionLayers::from_layers([Layer::Enemy], [Layer::Ground, Layer::Player]);
/// let ground = CollisionLayers::from_layers([Layer::Ground], [Layer::Player, Layer::Enemy]);
/// assert!(player.interacts_with(enemy) && player.interacts_with(ground));
/// // Enemies pass through each other.
/// assert!(!enemy.interacts_with(enemy));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a physics layer",
    note = "derive `PhysicsLayer` for a layer enum, or give bit masks as `u32` \
            (`0b10_u32`) or `LayerMask(0b10)`"
)]
pub trait PhysicsLayer {
    /// The bit mask of this layer.
    fn to_bits(&self) -> u32;
}

/// A set of collision groups as a bit mask: what [`CollisionLayers::new`] takes for its
/// memberships and filters. Made from a `u32` mask, a [`PhysicsLayer`] value, or an array of
/// either (their union).
///
/// ```
/// # use impetus3d::prelude::*;
/// #[derive(PhysicsLayer, Clone, Copy)]
/// enum Layer {
///     Ground,
///     Player,
/// }
/// assert_eq!(LayerMask::from([Layer::Ground, Layer::Player]), LayerMask(0b11));
/// assert_eq!(LayerMask::from(Layer::Player) | LayerMask::DEFAULT, LayerMask(0b11));
/// ```
#[derive(Reflect, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deref, DerefMut)]
#[reflect(Debug, Default, PartialEq)]
pub struct LayerMask(pub u32);

impl LayerMask {
    /// Every group.
    pub const ALL: Self = Self(u32::MAX);
    /// No group.
    pub const NONE: Self = Self(0);
    /// The first group, bit 0 (what a derived [`PhysicsLayer`]'s first variant is).
    pub const DEFAULT: Self = Self(1);
}

impl<L: PhysicsLayer> From<L> for LayerMask {
    fn from(layer: L) -> Self {
        Self(layer.to_bits())
    }
}

impl<L: PhysicsLayer, const N: usize> From<[L; N]> for LayerMask {
    fn from(layers: [L; N]) -> Self {
        Self(layer_mask(layers))
    }
}

impl std::ops::BitOr for LayerMask {
    type Output = Self;
    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl std::ops::BitAnd for LayerMask {
    type Output = Self;
    fn bitand(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }
}

impl std::ops::Not for LayerMask {
    type Output = Self;
    fn not(self) -> Self {
        Self(!self.0)
    }
}

/// Derives [`PhysicsLayer`](trait@PhysicsLayer) for an enum of unit variants: the first
/// variant is bit 0, the next bit 1, and so on in declaration order (at most 32; a variant
/// with fields, or a 33rd, is a compile error).
///
/// ```
/// # use impetus3d::prelude::*;
/// #[derive(PhysicsLayer, Clone, Copy)]
/// enum Layer {
///     Ground,
///     Player,
///     Enemy,
/// }
///
/// let player = CollisionLayers::from_layers([Layer::Player], [Layer::Ground, Layer::Enemy]);
/// assert_eq!(player.memberships, 0b010);
/// assert_eq!(player.filters, 0b101);
/// ```
pub use impetus3d_derive::PhysicsLayer;

impl PhysicsLayer for u32 {
    fn to_bits(&self) -> u32 {
        *self
    }
}

impl<L: PhysicsLayer + ?Sized> PhysicsLayer for &L {
    fn to_bits(&self) -> u32 {
        (**self).to_bits()
    }
}

/// Which collision groups a collider belongs to and which it collides with. Default: all.
///
/// Two colliders interact (touch, push, and report events, sensors included) only when each
/// one's `memberships` overlaps the other's `filters`: `a.memberships & b.filters != 0` and
/// `b.memberships & a.filters != 0`. So the rule is symmetric: if A lists B's group but B does
/// not list A's, they pass through each other. Build masks directly with
/// [`CollisionLayers::new`], or from named layers with [`CollisionLayers::from_layers`]. On a
/// body entity they apply to the colliders on that entity only.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct CollisionLayers {
    /// Bit mask of the groups this collider is in.
    pub memberships: u32,
    /// Bit mask of the groups this collider collides with.
    pub filters: u32,
}

impl Default for CollisionLayers {
    fn default() -> Self {
        Self::ALL
    }
}

impl CollisionLayers {
    /// In every group, colliding with every group.
    pub const ALL: Self = Self::from_bits(u32::MAX, u32::MAX);
    /// In no group and colliding with nothing. Such a collider (any layers with no
    /// memberships) costs nothing in the collision pipeline: the broad phase leaves it out, and
    /// no spatial query finds it.
    pub const NONE: Self = Self::from_bits(0, 0);

    /// Layers from what each group set is made of: a [`PhysicsLayer`] value, an array of them
    /// (their union), a `u32` bit mask or a [`LayerMask`].
    ///
    /// ```
    /// # use impetus3d::prelude::*;
    /// #[derive(PhysicsLayer, Clone, Copy)]
    /// enum Layer {
    ///     Ground,
    ///     Player,
    ///     Enemy,
    /// }
    /// let player = CollisionLayers::new(Layer::Player, [Layer::Ground, Layer::Enemy]);
    /// assert_eq!(player, CollisionLayers::from_bits(0b010, 0b101));
    /// assert_eq!(CollisionLayers::new(LayerMask::DEFAULT, LayerMask::ALL).memberships, 1);
    /// ```
    pub fn new(memberships: impl Into<LayerMask>, filters: impl Into<LayerMask>) -> Self {
        Self::from_bits(memberships.into().0, filters.into().0)
    }

    /// Layers from bit masks.
    pub const fn from_bits(memberships: u32, filters: u32) -> Self {
        Self {
            memberships,
            filters,
        }
    }

    /// Layers from lists of named layers (see [`PhysicsLayer`]): the union of `memberships`'
    /// bits and the union of `filters`' bits. An empty list gives an empty mask.
    pub fn from_layers<L: PhysicsLayer>(
        memberships: impl IntoIterator<Item = L>,
        filters: impl IntoIterator<Item = L>,
    ) -> Self {
        Self::new(layer_mask(memberships), layer_mask(filters))
    }

    /// True if colliders with these layers interact.
    pub const fn interacts_with(self, other: Self) -> bool {
        self.memberships & other.filters != 0 && other.memberships & self.filters != 0
    }

    /// True if a collider with these layers is in no group: it interacts with nothing and no
    /// spatial query finds it, so the broad phase leaves it out.
    pub(crate) const fn is_inert(self) -> bool {
        self.memberships == 0
    }
}

/// The union of the layers' bits.
fn layer_mask<L: PhysicsLayer>(layers: impl IntoIterator<Item = L>) -> u32 {
    layers
        .into_iter()
        .fold(0, |mask, layer| mask | layer.to_bits())
}

/// The body a collider belongs to. Maintained by the engine.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq, Eq)]
#[reflect(Component, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct ColliderOf {
    /// The body entity.
    #[entities]
    pub body: Entity,
}

/// The collider's pose relative to its body's origin (world pose if it has no body).
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct ColliderPose {
    pub(crate) translation: Vector,
    pub(crate) rotation: Quaternion,
}

impl Default for ColliderPose {
    fn default() -> Self {
        Self {
            translation: Vector::ZERO,
            rotation: Quaternion::IDENTITY,
        }
    }
}

impl ColliderPose {
    pub(crate) fn pose(&self) -> Pose {
        crate::math::pose(self.translation, self.rotation)
    }

    /// Whether the translation is finite and the rotation can be normalised.
    pub(crate) fn is_finite(&self) -> bool {
        self.translation.is_finite() && crate::math::is_finite_quat(self.rotation)
    }
}

/// Marks a collider that failed validation; it takes no part in the simulation until its
/// [`Collider`] is replaced. Managed by the engine: to turn a collider off yourself, insert
/// [`ColliderDisabled`].
#[derive(Component, Reflect, Clone, Copy, Debug, Default)]
#[reflect(Component, Default, Debug)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct DisabledCollider;

/// Bodies whose mass properties must be recomputed, and which body each collider had last.
#[derive(Resource, Default)]
pub(crate) struct ColliderOwnership {
    pub(crate) dirty_bodies: Vec<Entity>,
    pub(crate) owner: EntityHashMap<Entity>,
}

/// Validates new or changed colliders, warning with the entity when one is unusable.
pub(crate) fn validate_colliders(
    mut commands: Commands,
    colliders: Query<(Entity, &Collider, Has<DisabledCollider>), Changed<Collider>>,
) {
    for (entity, collider, disabled) in &colliders {
        if let Some(reason) = collider.validate() {
            warn!("{entity}: collider ignored because {reason}");
            commands.entity(entity).insert(DisabledCollider);
            continue;
        }
        if let Some(dropped) = collider.dropped_parts() {
            warn!("{entity}: compound collider {dropped}; its other parts are used");
        }
        if disabled {
            commands.entity(entity).remove::<DisabledCollider>();
        }
    }
}

/// Hook of [`Collider`] and [`ColliderDensity`]: recompute the mass of the collider's body
/// (found up the hierarchy) once the change is done.
pub(crate) fn refresh_body_on_hook(mut world: DeferredWorld, context: HookContext) {
    let collider = context.entity;
    if let (Some(body), _) = find_body_in(&world, collider) {
        super::mass_properties::queue_mass_refresh(&mut world, body, Some(collider));
    }
}

/// Finds each collider's body and its pose relative to it; marks bodies whose colliders
/// changed so their mass is recomputed.
#[allow(clippy::type_complexity)]
pub(crate) fn update_collider_bodies(
    mut commands: Commands,
    mut colliders: Query<(
        Entity,
        Ref<Collider>,
        Ref<ColliderDensity>,
        &mut ColliderPose,
        Option<&ColliderOf>,
        Has<RigidBody>,
    )>,
    links: Query<(Option<&ChildOf>, Option<&Transform>, Has<RigidBody>)>,
    mut ownership: ResMut<ColliderOwnership>,
    mut removed: RemovedComponents<Collider>,
    mut warned: Local<EntityHashSet>,
) {
    for entity in removed.read() {
        if let Some(body) = ownership.owner.remove(&entity) {
            ownership.dirty_bodies.push(body);
        }
        warned.remove(&entity);
    }
    for (entity, collider, density, mut pose, collider_of, on_body) in &mut colliders {
        // A collider on its body's own entity (the usual case) needs no walk up the
        // hierarchy: each walk's lookups cost 3 % of a step of 10,000 free spheres.
        let (body, mut local) = if on_body {
            (Some(entity), ColliderPose::default())
        } else {
            find_body(entity, &links)
        };
        if !local.is_finite() {
            if warned.insert(entity) {
                warn!(
                    "{entity}: the collider's offset from its body is not finite (a Transform \
                     on the way is not); keeping its last valid offset"
                );
            }
            local = *pose;
        }
        let pose_changed = pose.translation != local.translation || pose.rotation != local.rotation;
        if pose_changed {
            *pose = local;
        }
        let old_body = collider_of.map(|c| c.body);
        if old_body != body {
            let mut e = commands.entity(entity);
            match body {
                Some(body) => e.insert(ColliderOf { body }),
                None => e.remove::<ColliderOf>(),
            };
            ownership.dirty_bodies.extend(old_body);
            match body {
                Some(body) => ownership.owner.insert(entity, body),
                None => ownership.owner.remove(&entity),
            };
        }
        if let Some(body) = body
            && (pose_changed
                || old_body != Some(body)
                || collider.is_changed()
                || density.is_changed())
        {
            ownership.dirty_bodies.push(body);
        }
    }
}

/// [`find_body`] with direct world access, for hooks and commands.
pub(crate) fn find_body_in(world: &World, entity: Entity) -> (Option<Entity>, ColliderPose) {
    walk_to_body(entity, |e| {
        let parent = world.get::<ChildOf>(e).map(ChildOf::parent);
        let is_body = world.get::<RigidBody>(e).is_some();
        Some((parent, world.get::<Transform>(e).copied(), is_body))
    })
}

/// Walks up the hierarchy from `entity` to its body, composing transforms on the way.
pub(crate) fn find_body(
    entity: Entity,
    links: &Query<(Option<&ChildOf>, Option<&Transform>, Has<RigidBody>)>,
) -> (Option<Entity>, ColliderPose) {
    walk_to_body(entity, |e| {
        let (parent, transform, is_body) = links.get(e).ok()?;
        Some((parent.map(ChildOf::parent), transform.copied(), is_body))
    })
}

/// Walks up from `entity` to the first body, composing the transforms passed on the way;
/// `link` gives an entity's parent, transform and whether it is a body (`None` if the entity
/// does not exist).
fn walk_to_body(
    entity: Entity,
    link: impl Fn(Entity) -> Option<(Option<Entity>, Option<Transform>, bool)>,
) -> (Option<Entity>, ColliderPose) {
    let mut local = Transform::IDENTITY;
    let mut current = entity;
    // Depth bound guards against malformed hierarchies.
    for _ in 0..64 {
        let Some((parent, transform, is_body)) = link(current) else {
            break;
        };
        if is_body {
            return (Some(current), to_pose(local));
        }
        local = transform.unwrap_or_default() * local;
        match parent {
            Some(parent) => current = parent,
            None => break,
        }
    }
    (None, to_pose(local))
}

fn to_pose(t: Transform) -> ColliderPose {
    ColliderPose {
        translation: t.translation,
        rotation: t.rotation,
    }
}
