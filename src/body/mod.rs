//! Rigid bodies: their kind, pose, velocities, kinematic targets, mass properties, forces,
//! damping, locked axes and the sleeping marker.
//!
//! A body is an entity with [`RigidBody`]. Its pose is [`Position`] (the world position of the
//! body's origin, which is also where its [`Transform`] puts it) and [`Rotation`], both in world
//! space even when the body is a child of another entity (see [`sync`] for how `Transform`, which
//! is then relative to the parent, follows). Colliders on the
//! entity or on its children give it mass, centre of mass and inertia ([`mass`]).

pub mod creation;
mod forces;
pub mod mass;
pub mod sync;

pub use creation::{CreationCounter, CreationOrder};
pub use forces::{Forces, ForcesItem, ForcesReadOnly, ForcesReadOnlyItem};
pub use mass::{AngularInertia, CenterOfMass, ColliderDensity, ComputedMass, Mass};

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use crate::math::{Quaternion, Scalar, Vector};
use crate::validation::{Validate, check, check_vector, non_negative};

/// The kind of a rigid body. Required on every body entity.
///
/// When it is added, the body's pose and mass are filled at once: a non-identity
/// [`Transform`] sets [`Position`] and [`Rotation`] (otherwise they set the `Transform`), and
/// [`ComputedMass`] is computed from the colliders, so systems that run right after the spawn
/// read real values instead of defaults.
///
/// - `Dynamic` bodies are moved by forces, contacts and joints.
/// - `Static` bodies never move and have infinite mass.
/// - `Kinematic` bodies move only by their velocity (set it yourself, or give the body a
///   [`KinematicTarget`] pose to reach in one step), push dynamic bodies, and are never pushed.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
#[component(on_add = on_add_body)]
#[require(
    Position,
    Rotation,
    LinearVelocity,
    AngularVelocity,
    ComputedMass,
    SleepTimer,
    PoseSync,
    Transform,
    CreationOrder
)]
pub enum RigidBody {
    /// Moved by forces, contacts and joints.
    #[default]
    Dynamic,
    /// Never moves; infinite mass.
    Static,
    /// Moves only by its velocity; infinite mass.
    Kinematic,
}

// The methods take `&self` so that on a `&RigidBody` they win over the reflection trait's
// `PartialReflect::is_dynamic(&self)` (which answers whether the value is a dynamic
// reflection proxy, always false here): a by-value `self` method would only be found after
// auto-deref, behind the trait method.
impl RigidBody {
    /// True for [`RigidBody::Dynamic`].
    pub fn is_dynamic(&self) -> bool {
        *self == Self::Dynamic
    }
    /// True for [`RigidBody::Static`].
    pub fn is_static(&self) -> bool {
        *self == Self::Static
    }
    /// True for [`RigidBody::Kinematic`].
    pub fn is_kinematic(&self) -> bool {
        *self == Self::Kinematic
    }
}

/// World-space position of the body's origin (the point its [`Transform`] describes).
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct Position(pub Vector);

impl Position {
    /// A position at `(x, y, z)`.
    pub fn xyz(x: Scalar, y: Scalar, z: Scalar) -> Self {
        Self(Vector::new(x, y, z))
    }
}

/// World-space orientation of the body.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct Rotation(pub Quaternion);

/// Rotates a vector: `rotation * v` is `rotation.0 * v`.
impl std::ops::Mul<Vector> for Rotation {
    type Output = Vector;
    fn mul(self, v: Vector) -> Vector {
        self.0 * v
    }
}

/// Rotates a vector: `&rotation * v`, for a rotation borrowed from a query.
impl std::ops::Mul<Vector> for &Rotation {
    type Output = Vector;
    fn mul(self, v: Vector) -> Vector {
        self.0 * v
    }
}

/// World-space linear velocity of the body's centre of mass, in m/s.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct LinearVelocity(pub Vector);

/// World-space angular velocity, in rad/s.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct AngularVelocity(pub Vector);

/// Moves a [`RigidBody::Kinematic`] body to this world pose over exactly one physics step,
/// with velocities that make the move a motion: dynamic bodies it touches on the way are
/// pushed and carried (by contact and friction) as by any moving kinematic body.
///
/// Every step, a kinematic body with a target gets the [`LinearVelocity`] (of its centre of
/// mass) and [`AngularVelocity`] that carry it from its pose at the start of the step to the
/// target by the end of it, and ends the step at the target: `position` for its origin (the
/// point its [`Position`] and `Transform` describe) and `rotation`. The target stays until
/// it is changed or removed, and a body already there gets zero velocities, so it holds
/// still, and dynamic bodies resting on it can fall asleep. To animate a platform, write a
/// new target every physics step (in `FixedUpdate` with the default
/// [`PhysicsPlugin`](crate::PhysicsPlugin): a target written once per rendered frame
/// reaches the first of several steps run in one frame, and the others hold); to drive it by
/// velocity again, remove the component: the body keeps the velocities of its last step, set
/// them to zero to stop it.
///
/// While the target is there, the engine writes the velocities every step, over any the user
/// wrote. A move of the body by the user (`Transform` or [`Position`]) is undone by a motion
/// back to the target in the next step.
///
/// # Landing exactly
///
/// The integrator moves the centre of mass by the velocity once per substep and turns the
/// body by the first-order quaternion update `q ← normalise(q + ½ (ω h) q)`, which turns it
/// by `2 atan(|ω| h / 2)` per substep of length `h` rather than `|ω| h`. The angular velocity
/// is chosen for that rule, `|ω| = (2 / h) tan(θ / (2 n))` for a turn `θ` over `n`
/// substeps (shortest arc), so the integrated motion is the one that reaches the target and
/// what the contacts see is the body's actual motion. That leaves only float rounding, a few
/// units in the last place of the pose, which the step removes by setting the pose to the
/// target at its end; the velocities are kept. (A turn of nearly half a revolution in a
/// single substep needs an angular velocity without bound: use more substeps or smaller
/// turns.)
///
/// # Bad targets
///
/// A target with a non-finite component or a zero-length rotation, or on a body that is not
/// kinematic, is ignored (the body moves by its velocities, as without one), with a warning
/// naming the entity when the target or the body kind changes.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// #[derive(Component)]
/// struct Elevator;
///
/// /// Raises elevators at 0.5 m/s, one target per physics step (run in `FixedUpdate`).
/// fn raise(mut elevators: Query<&mut KinematicTarget, With<Elevator>>, time: Res<Time>) {
///     for mut target in &mut elevators {
///         target.position.y += 0.5 * time.delta_secs();
///     }
/// }
/// # bevy::ecs::system::assert_is_system(raise);
///
/// let mut app = impetus3d::headless_app(1.0 / 64.0);
/// let turned = impetus3d::math::rotation_about(Vec3::Y, 0.5);
/// let target = KinematicTarget::new(Vec3::new(1.0, 2.0, 0.0), turned);
/// let platform = app
///     .world_mut()
///     .spawn((RigidBody::Kinematic, Collider::cuboid(4.0, 0.5, 4.0), target, Elevator))
///     .id();
/// app.update();
/// let position = app.world().get::<Position>(platform).unwrap();
/// assert_eq!(position.0, Vec3::new(1.0, 2.0, 0.0));
/// ```
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct KinematicTarget {
    /// World position of the body's origin at the end of the next step.
    pub position: Vector,
    /// World rotation at the end of the next step (normalised by the engine).
    pub rotation: Quaternion,
}

impl Default for KinematicTarget {
    /// The world origin, unrotated.
    fn default() -> Self {
        Self::new(Vector::ZERO, Quaternion::IDENTITY)
    }
}

impl KinematicTarget {
    /// The pose `position`, `rotation`.
    pub fn new(position: Vector, rotation: Quaternion) -> Self {
        Self { position, rotation }
    }

    /// The target with a normalised rotation, or `None` if it cannot be reached: a
    /// non-finite component or a zero-length rotation.
    pub(crate) fn usable(&self) -> Option<(Vector, Quaternion)> {
        let finite = self.position.is_finite() && crate::math::is_finite_quat(self.rotation);
        finite.then(|| (self.position, self.rotation.normalize()))
    }
}

/// Multiplies the world [`Gravity`](crate::Gravity) for this body. Default 1; negative values
/// are allowed (a balloon). A non-finite scale is replaced by 1 with a warning.
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct GravityScale(pub Scalar);

impl Default for GravityScale {
    fn default() -> Self {
        Self(1.0)
    }
}

/// Linear velocity damping coefficient, in 1/s: `v *= 1 / (1 + h c)` each substep. A negative
/// or non-finite coefficient is replaced by 0 with a warning.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct LinearDamping(pub Scalar);

/// Angular velocity damping coefficient, in 1/s: `ω *= 1 / (1 + h c)` each substep. A negative
/// or non-finite coefficient is replaced by 0 with a warning.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct AngularDamping(pub Scalar);

/// A world-space force applied at the centre of mass every step, in newtons.
///
/// Stays until removed or set to zero. Changing it wakes a sleeping body. A non-finite force is
/// replaced by zero with a warning.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct ConstantForce(pub Vector);

/// A world-space torque applied every step, in newton-metres. A non-finite torque is replaced
/// by zero with a warning.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Deref, DerefMut)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct ConstantTorque(pub Vector);

/// One-off impulses applied at the start of the next step, then cleared. An impulse with a
/// non-finite component is ignored (cleared) with a warning.
///
/// ```
/// # use impetus3d::prelude::*;
/// # use bevy::prelude::*;
/// let kick = ExternalImpulse::new(Vec3::new(0.0, 5.0, 0.0))
///     .with_angular(Vec3::new(0.0, 0.0, 1.0));
/// assert_eq!(kick.linear, Vec3::new(0.0, 5.0, 0.0));
/// ```
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct ExternalImpulse {
    /// Linear impulse at the centre of mass, in N·s.
    pub linear: Vector,
    /// Angular impulse, in N·m·s.
    pub angular: Vector,
}

impl ExternalImpulse {
    /// A linear impulse through the centre of mass.
    pub fn new(linear: Vector) -> Self {
        Self {
            linear,
            angular: Vector::ZERO,
        }
    }

    /// Adds an angular impulse.
    pub fn with_angular(mut self, angular: Vector) -> Self {
        self.angular += angular;
        self
    }

    /// Adds `impulse` applied at the world point `point` of a body whose centre of mass is at
    /// `world_center_of_mass` (see [`ComputedMass::world_center_of_mass`]).
    pub fn apply_at_point(&mut self, impulse: Vector, point: Vector, world_center_of_mass: Vector) {
        self.linear += impulse;
        self.angular += (point - world_center_of_mass).cross(impulse);
    }

    /// True when the impulse is zero.
    pub fn is_zero(&self) -> bool {
        self.linear == Vector::ZERO && self.angular == Vector::ZERO
    }
}

/// Locks translation or rotation along world axes.
///
/// ```
/// # use impetus3d::prelude::*;
/// let upright = LockedAxes::ROTATION_LOCKED;
/// let planar = LockedAxes::new().lock_translation_z().lock_rotation_x().lock_rotation_y();
/// assert!(upright.is_rotation_locked(0) && !planar.is_translation_locked(0));
/// ```
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct LockedAxes(u8);

impl LockedAxes {
    /// Every rotation axis locked.
    pub const ROTATION_LOCKED: Self = Self(0b111_000);
    /// Every translation axis locked.
    pub const TRANSLATION_LOCKED: Self = Self(0b000_111);
    /// Everything locked.
    pub const ALL_LOCKED: Self = Self(0b111_111);

    /// Nothing locked.
    pub const fn new() -> Self {
        Self(0)
    }
    /// Locks translation along world X.
    pub const fn lock_translation_x(self) -> Self {
        Self(self.0 | 1)
    }
    /// Locks translation along world Y.
    pub const fn lock_translation_y(self) -> Self {
        Self(self.0 | 2)
    }
    /// Locks translation along world Z.
    pub const fn lock_translation_z(self) -> Self {
        Self(self.0 | 4)
    }
    /// Locks rotation about world X.
    pub const fn lock_rotation_x(self) -> Self {
        Self(self.0 | 8)
    }
    /// Locks rotation about world Y.
    pub const fn lock_rotation_y(self) -> Self {
        Self(self.0 | 16)
    }
    /// Locks rotation about world Z.
    pub const fn lock_rotation_z(self) -> Self {
        Self(self.0 | 32)
    }
    /// True if translation along world axis `axis` (0 = X, 1 = Y, 2 = Z) is locked.
    pub const fn is_translation_locked(self, axis: usize) -> bool {
        self.0 & (1 << axis) != 0
    }
    /// True if rotation about world axis `axis` (0 = X, 1 = Y, 2 = Z) is locked.
    pub const fn is_rotation_locked(self, axis: usize) -> bool {
        self.0 & (8 << axis) != 0
    }
    /// 0 for locked translation axes, 1 for free ones.
    pub(crate) fn translation_mask(self) -> Vector {
        Vector::from_array(std::array::from_fn(|i| {
            if self.is_translation_locked(i) {
                0.0
            } else {
                1.0
            }
        }))
    }
    /// 0 for locked rotation axes, 1 for free ones.
    pub(crate) fn rotation_mask(self) -> Vector {
        Vector::from_array(std::array::from_fn(|i| {
            if self.is_rotation_locked(i) { 0.0 } else { 1.0 }
        }))
    }
}

impl Validate for GravityScale {
    fn validate(&mut self) -> Option<String> {
        check(
            &mut self.0,
            Scalar::is_finite,
            "GravityScale",
            "is not finite",
            1.0,
        )
    }
}

impl Validate for LinearDamping {
    fn validate(&mut self) -> Option<String> {
        let why = "is not a finite number ≥ 0";
        check(&mut self.0, non_negative, "LinearDamping", why, 0.0)
    }
}

impl Validate for AngularDamping {
    fn validate(&mut self) -> Option<String> {
        let why = "is not a finite number ≥ 0";
        check(&mut self.0, non_negative, "AngularDamping", why, 0.0)
    }
}

impl Validate for ConstantForce {
    fn validate(&mut self) -> Option<String> {
        check_vector(&mut self.0, "ConstantForce")
    }
}

impl Validate for ExternalImpulse {
    fn validate(&mut self) -> Option<String> {
        if self.linear.is_finite() && self.angular.is_finite() {
            return None;
        }
        let message = format!(
            "ExternalImpulse (linear {}, angular {}) is not finite; ignored",
            self.linear, self.angular
        );
        *self = Self::default();
        Some(message)
    }
}

impl Validate for ConstantTorque {
    fn validate(&mut self) -> Option<String> {
        check_vector(&mut self.0, "ConstantTorque")
    }
}

/// The pose last exchanged between [`Transform`] and [`Position`]/[`Rotation`], used to tell
/// which of the two the user changed since: the world pose, the local `Transform` values that
/// stood for it and the parent's world transform they were relative to (identity for a root
/// body).
#[derive(Component, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct PoseSync {
    /// World position last exchanged.
    pub(crate) translation: Vector,
    /// World rotation last exchanged.
    pub(crate) rotation: Quaternion,
    /// `Transform::translation` last exchanged (relative to the parent).
    pub(crate) local_translation: Vector,
    /// `Transform::rotation` last exchanged (relative to the parent).
    pub(crate) local_rotation: Quaternion,
    /// World transform of the parent at the last exchange.
    pub(crate) parent: bevy::math::Affine3A,
    pub(crate) initialized: bool,
}

impl Default for PoseSync {
    fn default() -> Self {
        Self {
            translation: Vector::ZERO,
            rotation: Quaternion::IDENTITY,
            local_translation: Vector::ZERO,
            local_rotation: Quaternion::IDENTITY,
            parent: bevy::math::Affine3A::IDENTITY,
            initialized: false,
        }
    }
}

/// Hook of [`RigidBody`]: agree the pose between `Transform` and `Position`/`Rotation` now
/// (by the rule of the first step, see [`sync`]). (The collider plugin computes the mass.)
fn on_add_body(mut world: DeferredWorld, context: HookContext) {
    let entity = context.entity;
    sync::sync_pose_on_spawn(&mut world, entity);
}

/// Bodies whose velocity changed since the last step.
type ChangedVelocity = Or<(Changed<LinearVelocity>, Changed<AngularVelocity>)>;

/// Resets non-finite velocities (with a warning naming the body) before anything uses them.
pub(crate) fn reject_non_finite_velocities(
    mut bodies: Query<(Entity, &mut LinearVelocity, &mut AngularVelocity), ChangedVelocity>,
) {
    for (entity, mut v, mut w) in &mut bodies {
        if !v.0.is_finite() || !w.0.is_finite() {
            warn!(
                "{entity}: non-finite velocity (linear {}, angular {}); reset to zero",
                v.0, w.0
            );
            v.0 = Vector::ZERO;
            w.0 = Vector::ZERO;
        }
    }
}

/// Marks a sleeping body. Remove it to wake the body; insert it to put the body to sleep.
#[derive(Component, Reflect, Clone, Copy, Debug, Default)]
#[reflect(Component, Default, Debug)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct Sleeping;

/// Keeps a body (and its island) from ever sleeping.
#[derive(Component, Reflect, Clone, Copy, Debug, Default)]
#[reflect(Component, Default, Debug)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct SleepingDisabled;

/// How long a body has been slow enough to sleep, in seconds.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct SleepTimer(pub Scalar);
