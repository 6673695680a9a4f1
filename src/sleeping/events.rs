//! Activation events: when a body falls asleep and when it wakes up.
//!
//! # Messages (always on)
//!
//! Every step, in [`PhysicsStepSet::Finalize`](crate::PhysicsStepSet::Finalize), the engine
//! writes one [`BodyFellAsleep`] message for each body that got [`Sleeping`] since the last
//! report and one [`BodyWoke`] for each body that lost it, in [`CreationOrder`]: the order
//! does not depend on `Entity` values or on how the ECS stores the bodies. A body's state is
//! compared with the one it had at the last report, so a body sends at most one message per
//! step, and one that falls asleep and is woken again before the report (or the reverse)
//! sends none.
//!
//! Every way `Sleeping` comes and goes counts, since the messages follow the component:
//!
//! | change | sends |
//! | --- | --- |
//! | an island at rest for [`SleepThreshold::time_to_sleep`](super::SleepThreshold) | [`BodyFellAsleep`] for each of its bodies, in the step it sleeps |
//! | a moving body about to hit a sleeper, or touching one (the island wakes) | [`BodyWoke`], in the step of the impact |
//! | a moving kinematic body touching a sleeper's island | [`BodyWoke`] |
//! | the user sets a sleeper's velocity, pose (`Transform`, [`Position`](crate::Position), [`Rotation`](crate::Rotation)), a non-zero [`ConstantForce`](crate::ConstantForce) or [`ConstantTorque`](crate::ConstantTorque), an [`ExternalImpulse`](crate::ExternalImpulse), or inserts [`SleepingDisabled`](crate::SleepingDisabled) | [`BodyWoke`], in the next step |
//! | a joint added between a sleeper and anything, or a constraint pulling a sleeper into the step | [`BodyWoke`] |
//! | the support of a sleeper removed (the touching body despawned or moved away) | [`BodyWoke`] |
//! | a [`CharacterController`](crate::CharacterController) pushing a sleeper | [`BodyWoke`] |
//! | the user removes `Sleeping` | [`BodyWoke`], in the next step (but see below) |
//! | the user inserts `Sleeping` on an awake body | [`BodyFellAsleep`], in the next step |
//!
//! Some of these wake a body without restarting its sleep timer ([`SleepTimer`](crate::body::SleepTimer)): the user
//! removing `Sleeping`, a joint or constraint, a character's push, a change of pose. A body
//! woken that way that is still at rest at the end of the step, with its timer run out, falls
//! asleep again in the same step, so its state at the report is unchanged and it sends
//! nothing. (It was simulated for that step.) To wake a body for good, set its
//! [`SleepTimer`](crate::body::SleepTimer) to zero when removing `Sleeping`, or change its velocity.
//!
//! And what sends nothing: a body spawned with `Sleeping` (given it in the same command batch
//! as its [`RigidBody`]: it was never awake), a sleeping body that is despawned or loses its
//! `RigidBody`, and [`PhysicsSnapshot::restore`](crate::PhysicsSnapshot::restore), which
//! puts a state back rather than changing it.
//!
//! # Observers (opt in per body)
//!
//! Insert [`SleepEventsEnabled`] on a body and the same two types are also triggered on it as
//! [`EntityEvent`]s, after the messages are written: `On<BodyFellAsleep>` / `On<BodyWoke>`
//! observers watching the body run once per change, and global observers of the types run
//! for these triggers too. An island falling asleep changes all its bodies at once; the
//! opt-in keeps a large pile from triggering thousands of events nobody watches.
//!
//! # Cost
//!
//! Hooks on [`Sleeping`] note the bodies whose component came or went, so a step in which no
//! body falls asleep or wakes costs one check of an empty list.

use bevy::ecs::lifecycle::HookContext;
use bevy::ecs::world::DeferredWorld;
use bevy::prelude::*;

use crate::body::{CreationOrder, RigidBody, Sleeping};

/// A body fell asleep: it got [`Sleeping`] and is no longer simulated until woken.
///
/// Sent as a [`Message`] for every body (read it with a [`MessageReader`]), in
/// [`CreationOrder`] among the bodies of a step, and triggered as an [`EntityEvent`] on
/// bodies with [`SleepEventsEnabled`]. See [`events`](self) for every way a body falls asleep
/// and which of them send this.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// fn log_sleepers(mut asleep: MessageReader<BodyFellAsleep>) {
///     for message in asleep.read() {
///         info!("{} fell asleep", message.body);
///     }
/// }
/// # bevy::ecs::system::assert_is_system(log_sleepers);
/// ```
#[derive(Message, EntityEvent, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BodyFellAsleep {
    /// The body entity.
    #[event_target]
    pub body: Entity,
}

/// A sleeping body woke up: it lost [`Sleeping`] and is simulated again.
///
/// Sent like [`BodyFellAsleep`]: a [`Message`] for every body, in [`CreationOrder`], and an
/// [`EntityEvent`] on bodies with [`SleepEventsEnabled`]. See [`events`](self) for every way a
/// body wakes.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// fn spawn_crate(mut commands: Commands) {
///     commands
///         .spawn((RigidBody::Dynamic, Collider::cuboid(1.0, 1.0, 1.0), SleepEventsEnabled))
///         .observe(|woke: On<BodyWoke>| info!("crate {} was disturbed", woke.body));
/// }
/// # bevy::ecs::system::assert_is_system(spawn_crate);
/// ```
#[derive(Message, EntityEvent, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BodyWoke {
    /// The body entity.
    #[event_target]
    pub body: Entity,
}

/// Opts a body in to observer events: [`BodyFellAsleep`] and [`BodyWoke`] are triggered on it
/// as [`EntityEvent`]s (the messages are sent for every body regardless).
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct SleepEventsEnabled;

/// Bodies whose [`Sleeping`] came or went since the last report, each with whether it was
/// asleep before that change, in the order the hooks saw them.
#[derive(Resource, Default)]
pub(crate) struct SleepChanges(Vec<(Entity, bool)>);

impl SleepChanges {
    /// Forgets the changes so far (a snapshot restore sets a state; it does not change one).
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }
}

/// Registers the hooks that note [`Sleeping`] coming and going.
pub(crate) fn register_sleep_hooks(world: &mut World) {
    world
        .register_component_hooks::<Sleeping>()
        .on_add(note_fell_asleep)
        .on_remove(note_woke);
}

/// Hook: `Sleeping` was added. A body given it with its `RigidBody` (spawned asleep, or a scene
/// loaded) was never awake, so nothing is noted.
fn note_fell_asleep(mut world: DeferredWorld, context: HookContext) {
    let entity = world.entity(context.entity);
    let ticks = (entity.get_ref::<RigidBody>()).zip(entity.get_ref::<Sleeping>());
    let spawned_asleep = ticks.is_none_or(|(body, sleeping)| body.added() == sleeping.added());
    if !spawned_asleep && let Some(mut changes) = world.get_resource_mut::<SleepChanges>() {
        changes.0.push((context.entity, false));
    }
}

/// Hook: `Sleeping` was removed (a despawn too, which the report drops).
fn note_woke(mut world: DeferredWorld, context: HookContext) {
    if let Some(mut changes) = world.get_resource_mut::<SleepChanges>() {
        changes.0.push((context.entity, true));
    }
}

/// What the report reads of a noted body.
type ReportData = (
    Option<&'static CreationOrder>,
    Has<Sleeping>,
    Has<SleepEventsEnabled>,
);

/// Sends this step's [`BodyFellAsleep`] and [`BodyWoke`] messages, in creation order, and
/// triggers them on opted-in bodies.
pub(crate) fn report_sleep_changes(
    mut commands: Commands,
    mut changes: ResMut<SleepChanges>,
    bodies: Query<ReportData, With<RigidBody>>,
    mut fell_asleep: MessageWriter<BodyFellAsleep>,
    mut woke: MessageWriter<BodyWoke>,
    mut sorted: Local<Vec<(u64, u32, Entity, bool)>>,
) {
    if changes.0.is_empty() {
        return;
    }
    sorted.clear();
    sorted.extend(changes.0.drain(..).filter_map(|(entity, was_asleep)| {
        let (order, ..) = bodies.get(entity).ok()?;
        // Unnumbered bodies (no physics plugin when spawned) last, by index.
        let order = order.map_or(0, |o| o.get()).wrapping_sub(1);
        Some((order, entity.index_u32(), entity, was_asleep))
    }));
    // Stable: a body's first note, the state it had at the last report, stays first.
    sorted.sort_by_key(|&(order, index, ..)| (order, index));
    sorted.dedup_by_key(|&mut (_, _, entity, _)| entity);
    for &(_, _, body, was_asleep) in sorted.iter() {
        let Ok((_, asleep, observed)) = bodies.get(body) else {
            continue;
        };
        match (was_asleep, asleep) {
            (false, true) => {
                fell_asleep.write(BodyFellAsleep { body });
                if observed {
                    commands.trigger(BodyFellAsleep { body });
                }
            }
            (true, false) => {
                woke.write(BodyWoke { body });
                if observed {
                    commands.trigger(BodyWoke { body });
                }
            }
            _ => {}
        }
    }
}
