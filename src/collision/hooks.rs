//! Collision hooks: user code that decides which pairs may collide and edits contacts before
//! they are solved.
//!
//! Implement [`CollisionHooks`] on a read-only
//! [`SystemParam`](bevy::ecs::system::SystemParam) and register it with
//! [`PhysicsPlugin::with_collision_hooks`](crate::PhysicsPlugin::with_collision_hooks) (or add
//! [`CollisionHooksPlugin`] to an app that already has the physics plugin). The hooks run only
//! for pairs in which at least one collider carries [`ActiveCollisionHooks`] with the matching
//! flag: other pairs cost one flag test per step, and an app without hooks runs no hook
//! systems at all.
//!
//! Both hooks run in [`PhysicsStepSet::NarrowPhase`], on the calling thread, in the contact
//! graph's deterministic pair order (by the colliders'
//! [`CreationOrder`](crate::CreationOrder), newest first), so the results are the same on every
//! run, for every thread count and on every peer:
//!
//! 1. [`CollisionHooks::filter_pairs`] at the start of the narrow phase, every step, for each
//!    broad-phase pair. A rejected pair is removed before any contact is computed: it gets no
//!    contacts and no collision messages (and a touching pair that becomes rejected ends, with
//!    a [`CollisionEnd`](crate::CollisionEnd)).
//! 2. [`CollisionHooks::modify_contacts`] after the (possibly parallel) manifold update, for
//!    each non-sensor pair that has contact points. It sees a [`ContactPairMut`] through which
//!    it can disable single points (one-way platforms), override the friction and restitution
//!    of the pair, and set a tangent (surface) velocity (conveyor belts). Returning `false`
//!    drops all the pair's contacts for this step. Modifications last one step: every step
//!    starts again from the colliders' materials and all points enabled.
//!
//! A pair whose contacts were dropped, or whose points within the contact tolerance were all
//! disabled, does not count as touching: it sends no [`CollisionStart`](crate::CollisionStart)
//! and does not link islands for sleeping.
//!
//! The design follows the contact hooks of Rapier (`PhysicsHooks`, `filter_contact_pair` and
//! `modify_solver_contacts` with a per-contact `tangent_velocity`) and the `CollisionHooks`
//! system parameter of Avian; the surface velocity enters the friction rows as the target of
//! the relative tangential speed, as in Box2D's `tangentSpeed`.

use std::any::TypeId;
use std::marker::PhantomData;

use bevy::ecs::entity::EntityHashSet;
use bevy::ecs::system::{
    ReadOnlySystemParam, SystemParamItem, SystemParamValidationError, SystemState,
};
use bevy::prelude::*;
use smallvec::SmallVec;

use super::broad_phase::BroadPhase;
use super::contacts::{ContactGraph, ContactPair, ContactPoint};
use crate::collision::FrictionImpulse;
use crate::math::{Scalar, Vector};
use crate::schedule::{PhysicsSchedule, PhysicsStepSet};
use crate::settings::SolverConfig;

/// Which [`CollisionHooks`] run for pairs involving this collider. Put it on the collider
/// entity; a pair runs a hook when either collider has its flag.
///
/// ```
/// # use impetus3d::prelude::*;
/// let both = ActiveCollisionHooks::FILTER_PAIRS | ActiveCollisionHooks::MODIFY_CONTACTS;
/// assert!(both.contains(ActiveCollisionHooks::MODIFY_CONTACTS));
/// assert_eq!(both, ActiveCollisionHooks::ALL);
/// ```
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct ActiveCollisionHooks(pub u8);

impl ActiveCollisionHooks {
    /// No hooks (the same as not having the component).
    pub const NONE: Self = Self(0);
    /// Run [`CollisionHooks::filter_pairs`].
    pub const FILTER_PAIRS: Self = Self(1);
    /// Run [`CollisionHooks::modify_contacts`].
    pub const MODIFY_CONTACTS: Self = Self(2);
    /// Both hooks.
    pub const ALL: Self = Self(3);

    /// True if every flag of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// True if no flag is set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The flags of both.
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl std::ops::BitOr for ActiveCollisionHooks {
    type Output = Self;

    fn bitor(self, other: Self) -> Self {
        self.union(other)
    }
}

impl std::ops::BitOrAssign for ActiveCollisionHooks {
    fn bitor_assign(&mut self, other: Self) {
        *self = self.union(other);
    }
}

/// User hooks into the narrow phase, implemented on a read-only
/// [`SystemParam`](bevy::ecs::system::SystemParam) so they can
/// read the world (queries, resources). Both methods have defaults that change nothing.
///
/// `Commands` passed to the hooks are applied at the end of the hook's system, still inside
/// the narrow phase. While a hook runs, the pairs being processed are lent to it, so reading
/// [`Collisions`](crate::Collisions) from inside a hook shows no pairs; use the
/// [`ContactPairMut`] you are given instead.
///
/// A one-way platform: contacts count only where the normal points up out of the platform and
/// the other body is at most a few centimetres into it, so a body coming from below passes
/// through and a body landing from above is held.
///
/// ```
/// use bevy::ecs::system::SystemParam;
/// use bevy::prelude::*;
/// use impetus3d::prelude::*;
///
/// #[derive(Component)]
/// struct OneWay;
///
/// #[derive(SystemParam)]
/// struct PlatformHooks<'w, 's> {
///     platforms: Query<'w, 's, (), With<OneWay>>,
/// }
///
/// impl CollisionHooks for PlatformHooks<'_, '_> {
///     fn modify_contacts(&self, contacts: &mut ContactPairMut, _: &mut Commands) -> bool {
///         // The contact normal points from collider1 to collider2.
///         let sign = if self.platforms.contains(contacts.collider1) { 1.0 } else { -1.0 };
///         contacts.retain_points(|p| sign * p.normal.y > 0.7 && p.separation > -0.05);
///         true
///     }
/// }
///
/// let mut app = App::new();
/// app.add_plugins((
///     MinimalPlugins,
///     PhysicsPlugin::default().with_collision_hooks::<PlatformHooks>(),
/// ));
/// app.world_mut().spawn((
///     RigidBody::Static,
///     Collider::cuboid(4.0, 0.2, 4.0),
///     OneWay,
///     ActiveCollisionHooks::MODIFY_CONTACTS,
/// ));
/// ```
pub trait CollisionHooks: ReadOnlySystemParam + Send + Sync {
    /// Whether two colliders may collide this step; `false` means the pair gets no contacts
    /// and no collision messages. Called every step for each broad-phase pair in which either
    /// collider has [`ActiveCollisionHooks::FILTER_PAIRS`], with `collider1` the collider created later.
    fn filter_pairs(&self, collider1: Entity, collider2: Entity, commands: &mut Commands) -> bool {
        let _ = (collider1, collider2, commands);
        true
    }

    /// Edits the contacts of a pair before they are solved; `false` drops them for this step.
    /// Called every step for each non-sensor pair with contact points in which either collider
    /// has [`ActiveCollisionHooks::MODIFY_CONTACTS`].
    fn modify_contacts(&self, contacts: &mut ContactPairMut, commands: &mut Commands) -> bool {
        let _ = (contacts, commands);
        true
    }
}

/// No hooks: the default of [`PhysicsPlugin`](crate::PhysicsPlugin). Adds no systems.
impl CollisionHooks for () {}

/// Changes the hooks made to one pair for the current step, reset before the hooks run.
#[derive(Clone, Debug, Default)]
pub(crate) struct ContactModifications {
    /// A hook ran on this pair this step, so something may need resetting next step.
    active: bool,
    /// The hook returned `false`: no contacts this step.
    pub(crate) dropped: bool,
    friction: Option<Scalar>,
    restitution: Option<Scalar>,
    pub(crate) tangent_velocity: Vector,
    /// Disabled points as a bit set over the pair's point index (the order of
    /// [`ContactPair::points`]); empty when none is disabled.
    disabled: SmallVec<[u64; 1]>,
    /// Why the hook's last request was ignored, reported once per pair.
    rejected: Option<&'static str>,
}

impl ContactModifications {
    /// True if a hook ran on the pair in the last step: its changes are in force until the
    /// next step undoes them.
    pub(crate) fn is_active(&self) -> bool {
        self.active
    }

    /// The bytes the disabled-point set holds on the heap (none up to 64 points).
    pub(crate) fn heap_bytes(&self) -> usize {
        if self.disabled.spilled() {
            self.disabled.capacity() * size_of::<u64>()
        } else {
            0
        }
    }

    fn reset(&mut self) {
        self.active = false;
        self.dropped = false;
        self.friction = None;
        self.restitution = None;
        self.tangent_velocity = Vector::ZERO;
        self.disabled.clear();
        self.rejected = None;
    }

    /// True unless the point with this pair-wide index was disabled.
    #[inline]
    pub(crate) fn point_enabled(&self, index: usize) -> bool {
        self.disabled
            .get(index / 64)
            .is_none_or(|word| word & (1 << (index % 64)) == 0)
    }

    /// True if any of the `count` points from `first` on is enabled.
    #[inline]
    pub(crate) fn any_enabled(&self, first: usize, count: usize) -> bool {
        if self.disabled.is_empty() {
            count > 0
        } else {
            (first..first + count).any(|i| self.point_enabled(i))
        }
    }

    /// True if some point is disabled.
    #[inline]
    pub(crate) fn has_disabled_points(&self) -> bool {
        !self.disabled.is_empty()
    }

    fn disable(&mut self, index: usize) {
        let word = index / 64;
        if self.disabled.len() <= word {
            self.disabled.resize(word + 1, 0);
        }
        self.disabled[word] |= 1 << (index % 64);
    }
}

/// What contact hooks can read about a pair; also readable afterwards through
/// [`Collisions`](crate::Collisions).
impl ContactPair {
    /// The friction coefficient used this step: the colliders' combined [`Friction`] unless a
    /// hook overrode it.
    ///
    /// [`Friction`]: crate::Friction
    pub fn friction(&self) -> Scalar {
        self.modifications.friction.unwrap_or(self.friction)
    }

    /// The restitution coefficient used this step: the colliders' combined
    /// [`Restitution`](crate::Restitution) unless a hook overrode it.
    pub fn restitution(&self) -> Scalar {
        self.modifications.restitution.unwrap_or(self.restitution)
    }

    /// The target velocity of collider 2's surface relative to collider 1's along the contact
    /// plane (zero unless a hook set it). See [`ContactPairMut::set_tangent_velocity`].
    pub fn tangent_velocity(&self) -> Vector {
        self.modifications.tangent_velocity
    }

    /// Number of contact points, the length of [`points`](Self::points).
    pub fn point_count(&self) -> usize {
        self.manifolds.iter().map(|m| m.points.len()).sum()
    }

    /// False if a hook disabled the point with this index (in the order of
    /// [`points`](Self::points)) or dropped the pair's contacts this step.
    pub fn is_point_enabled(&self, index: usize) -> bool {
        !self.modifications.dropped && self.modifications.point_enabled(index)
    }
}

/// A contact pair as [`CollisionHooks::modify_contacts`] sees it: everything of
/// [`ContactPair`] to read (through `Deref`), and the changes a hook may make for this step.
pub struct ContactPairMut<'a> {
    pair: &'a mut ContactPair,
}

impl std::ops::Deref for ContactPairMut<'_> {
    type Target = ContactPair;

    fn deref(&self) -> &ContactPair {
        self.pair
    }
}

impl ContactPairMut<'_> {
    /// Disables the contact point with this index (in the order of
    /// [`ContactPair::points`]) for this step: it applies no impulse and does not count as
    /// touching. Indices past the last point are ignored.
    pub fn disable_point(&mut self, index: usize) {
        if index < self.pair.point_count() {
            self.pair.modifications.disable(index);
        }
    }

    /// Keeps the points for which `keep` returns true and disables the others.
    pub fn retain_points(&mut self, mut keep: impl FnMut(&ContactPoint) -> bool) {
        let mut dropped = SmallVec::<[usize; 8]>::new();
        for (index, point) in self.pair.points().enumerate() {
            if !keep(&point) {
                dropped.push(index);
            }
        }
        for index in dropped {
            self.pair.modifications.disable(index);
        }
    }

    /// Overrides the pair's friction coefficient for this step. Must be finite and ≥ 0.
    pub fn set_friction(&mut self, coefficient: Scalar) {
        if coefficient.is_finite() && coefficient >= 0.0 {
            self.pair.modifications.friction = Some(coefficient);
        } else {
            self.pair.modifications.rejected = Some("a friction that is negative or not finite");
        }
    }

    /// Overrides the pair's restitution coefficient for this step. Must be finite and ≥ 0.
    pub fn set_restitution(&mut self, coefficient: Scalar) {
        if coefficient.is_finite() && coefficient >= 0.0 {
            self.pair.modifications.restitution = Some(coefficient);
        } else {
            self.pair.modifications.rejected = Some("a restitution that is negative or not finite");
        }
    }

    /// Sets the velocity (world space, m/s) that friction drives the velocity of collider 2's
    /// surface relative to collider 1's toward, instead of zero. Only its part along each
    /// manifold's contact plane matters. Friction is still limited by μ times the normal
    /// force, so a body accelerates to this speed at most at μ g.
    ///
    /// For "the surface of this collider moves at `v`" (a conveyor belt) use
    /// [`set_surface_velocity`](Self::set_surface_velocity), which picks the sign.
    pub fn set_tangent_velocity(&mut self, velocity: Vector) {
        if velocity.is_finite() {
            self.pair.modifications.tangent_velocity = velocity;
        } else {
            self.pair.modifications.rejected = Some("a tangent velocity that is not finite");
        }
    }

    /// Makes the surface of `collider` (one of the pair's colliders, or its body) move at
    /// `velocity` relative to its body, as a conveyor belt does: friction carries whatever
    /// rests on it along at that velocity.
    pub fn set_surface_velocity(&mut self, collider: Entity, velocity: Vector) {
        let pair = &*self.pair;
        if collider == pair.collider1 || pair.body1 == Some(collider) {
            // v₂ − (v₁ + surface) = 0: the relative target is +surface.
            self.set_tangent_velocity(velocity);
        } else if collider == pair.collider2 || pair.body2 == Some(collider) {
            self.set_tangent_velocity(-velocity);
        } else {
            self.pair.modifications.rejected =
                Some("a surface velocity for an entity that is not in the pair");
        }
    }
}

/// Registers the [`CollisionHooks`] `H`: its systems run in the narrow phase. Added by
/// [`PhysicsPlugin::with_collision_hooks`](crate::PhysicsPlugin::with_collision_hooks); add
/// it yourself to an app whose physics plugin is already in place (for example
/// [`headless_app`](crate::headless_app)). One hooks type per app: a second one is reported
/// and ignored. `CollisionHooksPlugin::<()>` adds nothing.
pub struct CollisionHooksPlugin<H = ()>(PhantomData<fn() -> H>);

impl<H> Default for CollisionHooksPlugin<H> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<H> std::fmt::Debug for CollisionHooksPlugin<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CollisionHooksPlugin<{}>", std::any::type_name::<H>())
    }
}

/// The hooks type an app registered, and whether its parameters were reported unavailable.
#[derive(Resource)]
struct RegisteredHooks {
    name: &'static str,
    warned_unavailable: bool,
}

impl<H> Plugin for CollisionHooksPlugin<H>
where
    H: CollisionHooks + 'static,
    for<'w, 's> SystemParamItem<'w, 's, H>: CollisionHooks,
{
    fn build(&self, app: &mut App) {
        if TypeId::of::<H>() == TypeId::of::<()>() {
            return;
        }
        let name = std::any::type_name::<H>();
        if let Some(existing) = app.world().get_resource::<RegisteredHooks>() {
            warn!(
                "collision hooks {name} ignored: {} are already registered, and an app has one \
                 hooks type (combine them in one SystemParam)",
                existing.name
            );
            return;
        }
        app.insert_resource(RegisteredHooks {
            name,
            warned_unavailable: false,
        })
        .add_systems(
            PhysicsSchedule,
            (
                run_filter_hooks::<H>.before(super::narrow_phase::update_contacts),
                // Collision events are sent in `Finalize`, so they see the modified contacts.
                run_modify_hooks::<H>.after(super::narrow_phase::update_contacts),
            )
                .in_set(PhysicsStepSet::NarrowPhase),
        );
    }
}

/// The hooks' parameters and the commands they may queue.
type HookState<H> = SystemState<(H, Commands<'static, 'static>)>;

/// Removes the broad-phase pairs the hooks reject, before any contact is computed.
///
/// Exclusive, with the hooks' own [`SystemState`]: the pair list is taken out of the world
/// while they run, so hooks may read any resource without an access conflict, and a hook
/// parameter that cannot be fetched is reported instead of panicking.
fn run_filter_hooks<H>(world: &mut World, state: &mut HookState<H>)
where
    H: CollisionHooks + 'static,
    for<'w, 's> SystemParamItem<'w, 's, H>: CollisionHooks,
{
    let mut pairs = std::mem::take(&mut world.resource_mut::<BroadPhase>().pairs);
    let mut unavailable = None;
    {
        let proxies = &world.resource::<BroadPhase>().proxies;
        let hooked = |&(a, b): &(u32, u32)| {
            proxies[a as usize]
                .hooks
                .union(proxies[b as usize].hooks)
                .contains(ActiveCollisionHooks::FILTER_PAIRS)
        };
        if pairs.iter().any(hooked) {
            match state.get(world) {
                Ok((hooks, mut commands)) => pairs.retain(|pair| {
                    !hooked(pair)
                        || hooks.filter_pairs(
                            proxies[pair.0 as usize].entity,
                            proxies[pair.1 as usize].entity,
                            &mut commands,
                        )
                }),
                Err(err) => unavailable = Some(err),
            }
        }
    }
    world.resource_mut::<BroadPhase>().pairs = pairs;
    warn_unavailable(world, unavailable);
    state.apply(world);
}

/// Runs the contact-modification hook on every opted-in pair, in pair order.
fn run_modify_hooks<H>(
    world: &mut World,
    state: &mut HookState<H>,
    mut warned_pairs: Local<EntityHashSet>,
) where
    H: CollisionHooks + 'static,
    for<'w, 's> SystemParamItem<'w, 's, H>: CollisionHooks,
{
    let mut pairs = std::mem::take(&mut world.resource_mut::<ContactGraph>().pairs);
    let mut unavailable = None;
    {
        let proxies = &world.resource::<BroadPhase>().proxies;
        let tolerance = world.resource::<SolverConfig>().linear_slop;
        let hooked = |pair: &ContactPair| {
            let (a, b) = pair.proxies;
            !pair.sensor
                && !pair.manifolds.iter().all(|m| m.points.is_empty())
                && proxies[a as usize]
                    .hooks
                    .union(proxies[b as usize].hooks)
                    .contains(ActiveCollisionHooks::MODIFY_CONTACTS)
        };
        let mut params = None;
        if pairs.iter().any(hooked) {
            match state.get(world) {
                Ok(p) => params = Some(p),
                Err(err) => unavailable = Some(err),
            }
        }
        for pair in &mut pairs {
            if pair.modifications.active {
                // Last step's changes are undone before the hook (if any) runs again.
                pair.modifications.reset();
                if !pair.sensor {
                    pair.touching = is_touching(pair, tolerance);
                }
            }
            let Some((hooks, commands)) = params.as_mut().filter(|_| hooked(pair)) else {
                continue;
            };
            pair.modifications.active = true;
            let keep = hooks.modify_contacts(&mut ContactPairMut { pair }, commands);
            pair.modifications.dropped = !keep;
            if let Some(reason) = pair.modifications.rejected
                && warned_pairs.insert(pair.collider1)
            {
                warn!(
                    "{} and {}: a contact hook set {reason}; the request was ignored",
                    pair.collider1, pair.collider2
                );
            }
            settle_modified_pair(pair, tolerance);
        }
    }
    world.resource_mut::<ContactGraph>().pairs = pairs;
    warn_unavailable(world, unavailable);
    state.apply(world);
}

/// Reports (once per app) that the hooks' parameters could not be fetched.
fn warn_unavailable(world: &mut World, error: Option<SystemParamValidationError>) {
    let Some(error) = error else { return };
    let mut registered = world.resource_mut::<RegisteredHooks>();
    if !std::mem::replace(&mut registered.warned_unavailable, true) {
        warn!(
            "collision hooks {} skipped: their system parameters are unavailable ({error})",
            registered.name
        );
    }
}

/// After a hook: disabled points carry no impulse (so they report none and warm-start from
/// zero when enabled again), and the pair touches only through its enabled points.
fn settle_modified_pair(pair: &mut ContactPair, tolerance: Scalar) {
    let mods = &pair.modifications;
    if mods.dropped || mods.has_disabled_points() {
        let mut first = 0;
        for manifold in &mut pair.manifolds {
            let count = manifold.points.len();
            for (i, point) in manifold.points.iter_mut().enumerate() {
                if mods.dropped || !mods.point_enabled(first + i) {
                    point.data = 0.0;
                }
            }
            if mods.dropped || !mods.any_enabled(first, count) {
                manifold.data = FrictionImpulse::default();
            }
            first += count;
        }
    }
    pair.touching = is_touching(pair, tolerance);
}

/// Any enabled point within the contact tolerance.
fn is_touching(pair: &ContactPair, tolerance: Scalar) -> bool {
    if pair.modifications.dropped {
        return false;
    }
    pair.manifolds
        .iter()
        .flat_map(|m| m.points.iter())
        .enumerate()
        .any(|(i, c)| c.dist <= tolerance && pair.modifications.point_enabled(i))
}
