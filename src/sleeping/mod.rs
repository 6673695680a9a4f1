//! Sleeping, the stage after the solver: bodies at rest stop being simulated until something
//! disturbs them.
//!
//! Every step, dynamic bodies are grouped into islands: bodies connected through touching
//! contacts (static bodies do not connect) and through joints and constraints. A body's timer
//! grows while its speeds stay under [`SleepThreshold`]; when every body of an island has been
//! slow for `time_to_sleep`, the whole island gets [`Sleeping`] and its velocities are zeroed.
//! A sleeping body is not gathered into the solver, so it costs nothing per substep.
//!
//! A sleeping body that a moving awake body is about to hit wakes before the step's solve (so
//! the impact moves it). An island wakes as a whole when any member is woken: by touching an
//! awake body or a moving kinematic body, by sharing a joint or constraint with an awake body, or by the user changing
//! its velocity, position, forces, or applying an impulse.
//!
//! [`BodyFellAsleep`] and [`BodyWoke`] report each change (see [`events`]).

pub mod events;

pub use events::{BodyFellAsleep, BodyWoke, SleepEventsEnabled};

use bevy::ecs::system::SystemChangeTick;
use bevy::prelude::*;

use crate::body::{
    AngularVelocity, ConstantForce, ConstantTorque, ExternalImpulse, LinearVelocity, RigidBody,
    SleepTimer, Sleeping, SleepingDisabled,
};
use crate::collision::ContactGraph;
use crate::math::Scalar;
use crate::schedule::{PhysicsSchedule, PhysicsStepSet, PhysicsStepTime};
use crate::solver::SolverBodies;
use crate::validation::{Validate, ValidationApp, check, join};

/// When bodies fall asleep. A NaN or negative field is replaced by its default, with a
/// warning.
#[derive(Resource, Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Resource, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct SleepThreshold {
    /// Linear speed under which a body counts as at rest, m/s. Default 0.05.
    pub linear: Scalar,
    /// Angular speed under which a body counts as at rest, rad/s. Default 0.05.
    pub angular: Scalar,
    /// How long a whole island must be at rest before it sleeps, s. Default 0.5.
    pub time_to_sleep: Scalar,
}

impl Default for SleepThreshold {
    fn default() -> Self {
        Self {
            linear: 0.05,
            angular: 0.05,
            time_to_sleep: 0.5,
        }
    }
}

impl Validate for SleepThreshold {
    fn validate(&mut self) -> Option<String> {
        let d = Self::default();
        let valid = |x: Scalar| x >= 0.0;
        let why = "is NaN or negative";
        join([
            check(&mut self.linear, valid, "linear", why, d.linear),
            check(&mut self.angular, valid, "angular", why, d.angular),
            check(
                &mut self.time_to_sleep,
                valid,
                "time_to_sleep",
                why,
                d.time_to_sleep,
            ),
        ])
    }
}

/// What the user may change on a sleeping body to wake it.
type Disturbances = (
    Entity,
    Ref<'static, Sleeping>,
    Ref<'static, LinearVelocity>,
    Ref<'static, AngularVelocity>,
    Option<Ref<'static, ConstantForce>>,
    Option<Ref<'static, ConstantTorque>>,
    Option<Ref<'static, ExternalImpulse>>,
    Has<SleepingDisabled>,
    &'static mut SleepTimer,
);

/// Wakes sleeping bodies whose velocity, forces or impulses changed after they fell asleep.
pub(crate) fn wake_on_user_changes(
    mut commands: Commands,
    mut bodies: Query<Disturbances>,
    ticks: SystemChangeTick,
) {
    for (entity, sleeping, v, w, force, torque, impulse, disabled, mut timer) in &mut bodies {
        // Only changes made after `Sleeping` was inserted count: the step that put the body
        // to sleep wrote its velocity too.
        let since_asleep = |tick: bevy::ecs::change_detection::Tick| {
            tick.is_newer_than(sleeping.added(), ticks.this_run())
        };
        let disturbed = since_asleep(v.last_changed())
            || since_asleep(w.last_changed())
            || force.is_some_and(|f| since_asleep(f.last_changed()) && f.0 != Vec3::ZERO)
            || torque.is_some_and(|t| since_asleep(t.last_changed()) && t.0 != Vec3::ZERO)
            || impulse.is_some_and(|i| !i.is_zero())
            || disabled;
        if disturbed {
            commands.entity(entity).remove::<Sleeping>();
            timer.0 = 0.0;
        }
    }
}

/// Wakes, before the solver gathers the step's bodies, every sleeping body that an awake
/// dynamic body moving faster than the sleep threshold is about to hit: a pair with contact
/// points (speculative ones included) between the two. Otherwise the sleeper would stand as a
/// static body for the step of the impact and absorb the hitter's momentum, waking only after
/// it with none of it. Its sleeping neighbours join at the end of the step, when its island
/// wakes. (A slow neighbour does not wake it: that is left to the islands, so that two bodies
/// near each other but not touching cannot keep waking each other.)
pub(crate) fn wake_on_impact(
    mut commands: Commands,
    graph: Res<ContactGraph>,
    threshold: Res<SleepThreshold>,
    mut bodies: Query<ImpactData>,
    sleepers: Query<(), With<Sleeping>>,
) {
    if sleepers.is_empty() {
        return;
    }
    // What a body is to this test: `None` (not dynamic), a sleeper, or awake and moving.
    let kind = |bodies: &Query<ImpactData>, e: Option<Entity>| {
        let (rb, sleeping, v, w, _) = bodies.get(e?).ok()?;
        rb.is_dynamic().then(|| {
            (
                sleeping,
                v.length() >= threshold.linear || w.length() >= threshold.angular,
            )
        })
    };
    for pair in graph
        .pairs
        .iter()
        .filter(|p| !p.sensor && !p.manifolds.is_empty())
    {
        let sleeper = match (kind(&bodies, pair.body1), kind(&bodies, pair.body2)) {
            (Some((true, _)), Some((false, true))) => pair.body1,
            (Some((false, true)), Some((true, _))) => pair.body2,
            _ => continue,
        };
        if let Some(entity) = sleeper
            && let Ok((.., mut timer)) = bodies.get_mut(entity)
        {
            commands.entity(entity).remove::<Sleeping>();
            timer.0 = 0.0;
        }
    }
}

/// What [`wake_on_impact`] reads of a body.
type ImpactData = (
    &'static RigidBody,
    Has<Sleeping>,
    &'static LinearVelocity,
    &'static AngularVelocity,
    &'static mut SleepTimer,
);

/// Union-find scratch space, reused across steps.
#[derive(Default)]
pub(crate) struct Islands {
    /// Entity index → island-node index + 1 (0 = not a dynamic body).
    node_of: Vec<u32>,
    parent: Vec<u32>,
    /// Per root: any awake, any asleep, kept awake, minimum timer of awake members.
    state: Vec<IslandState>,
    /// Node index → the body and what this step's first pass read of it, so that the later
    /// passes look bodies up only to change them.
    members: Vec<Member>,
    /// Nodes touching a moving kinematic body.
    keep_awake: Vec<u32>,
}

/// One dynamic body of the island graph.
#[derive(Clone, Copy)]
struct Member {
    entity: Entity,
    timer: Scalar,
    sleeping: bool,
    disabled: bool,
}

#[derive(Clone, Copy)]
struct IslandState {
    awake: bool,
    asleep: bool,
    keep_awake: bool,
    min_timer: Scalar,
}

impl Islands {
    fn find(&mut self, mut i: u32) -> u32 {
        while self.parent[i as usize] != i {
            let grand = self.parent[self.parent[i as usize] as usize];
            self.parent[i as usize] = grand;
            i = grand;
        }
        i
    }

    fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        // The smaller index wins so the result does not depend on union order.
        if a < b {
            self.parent[b as usize] = a;
        } else if b < a {
            self.parent[a as usize] = b;
        }
    }

    fn node(&self, entity: Option<Entity>) -> Option<u32> {
        let e = entity?;
        self.node_of
            .get(e.index_u32() as usize)
            .and_then(|&n| n.checked_sub(1))
    }
}

/// What the sleeping stage reads and writes per body.
type SleepData = (
    Entity,
    &'static RigidBody,
    &'static mut LinearVelocity,
    &'static mut AngularVelocity,
    &'static mut SleepTimer,
    Has<Sleeping>,
    Has<SleepingDisabled>,
);

/// Advances sleep timers, builds islands, and puts islands to sleep or wakes them.
///
/// When no body is asleep and every dynamic body has [`SleepingDisabled`], no island can fall
/// asleep or wake, so none are built: the timers are only kept at zero (with 10,000 free
/// spheres, sleeping disabled, building the islands took 3 % of a step).
#[allow(clippy::too_many_arguments)]
pub(crate) fn update_sleeping(
    mut commands: Commands,
    mut bodies: Query<SleepData>,
    may_sleep: Query<&RigidBody, Without<SleepingDisabled>>,
    asleep: Query<(), With<Sleeping>>,
    graph: Res<ContactGraph>,
    solver: Res<SolverBodies>,
    threshold: Res<SleepThreshold>,
    time: Res<PhysicsStepTime>,
    mut islands: Local<Islands>,
) {
    if asleep.is_empty() && !may_sleep.iter().any(RigidBody::is_dynamic) {
        for (_, rb, _, _, mut timer, ..) in &mut bodies {
            if rb.is_dynamic() && timer.0 != 0.0 {
                timer.0 = 0.0;
            }
        }
        return;
    }
    let islands = &mut *islands;
    islands.parent.clear();
    islands.node_of.iter_mut().for_each(|n| *n = 0);
    islands.members.clear();
    islands.keep_awake.clear();
    for (entity, rb, v, w, mut timer, sleeping, disabled) in &mut bodies {
        if !rb.is_dynamic() {
            continue;
        }
        let index = entity.index_u32() as usize;
        if islands.node_of.len() <= index {
            islands.node_of.resize(index + 1, 0);
        }
        let node = islands.parent.len() as u32;
        islands.node_of[index] = node + 1;
        islands.parent.push(node);
        if !sleeping {
            let slow = v.length() < threshold.linear && w.length() < threshold.angular;
            timer.0 = if slow && !disabled {
                timer.0 + time.delta
            } else {
                0.0
            };
        }
        islands.members.push(Member {
            entity,
            timer: timer.0,
            sleeping,
            disabled,
        });
    }
    for pair in graph.pairs.iter().filter(|p| p.touching && !p.sensor) {
        match (islands.node(pair.body1), islands.node(pair.body2)) {
            (Some(a), Some(b)) => islands.union(a, b),
            (Some(a), None) if moving_kinematic(&bodies, pair.body2) => islands.keep_awake.push(a),
            (None, Some(b)) if moving_kinematic(&bodies, pair.body1) => islands.keep_awake.push(b),
            _ => {}
        }
    }
    for &body in &graph.lost_support {
        if let Some(node) = islands.node(Some(body)) {
            islands.keep_awake.push(node);
        }
    }
    for &(a, b) in &solver.links {
        if let (Some(a), Some(b)) = (islands.node(Some(a)), islands.node(Some(b))) {
            islands.union(a, b);
        }
    }

    let fresh = IslandState {
        awake: false,
        asleep: false,
        keep_awake: false,
        min_timer: Scalar::INFINITY,
    };
    islands.state.clear();
    islands.state.resize(islands.members.len(), fresh);
    for i in 0..islands.keep_awake.len() {
        let root = islands.find(islands.keep_awake[i]);
        islands.state[root as usize].keep_awake = true;
    }
    for node in 0..islands.members.len() {
        let member = islands.members[node];
        let root = islands.find(node as u32) as usize;
        let state = &mut islands.state[root];
        state.asleep |= member.sleeping;
        state.awake |= !member.sleeping;
        state.keep_awake |= member.disabled;
        if !member.sleeping {
            state.min_timer = state.min_timer.min(member.timer);
        }
    }
    for node in 0..islands.members.len() {
        let Member {
            entity, sleeping, ..
        } = islands.members[node];
        let root = islands.find(node as u32) as usize;
        let state = islands.state[root];
        let wake = sleeping && (state.awake || state.keep_awake);
        let sleep = !wake
            && !state.asleep
            && !state.keep_awake
            && state.min_timer >= threshold.time_to_sleep;
        if !(wake || sleep) {
            continue;
        }
        let (_, _, mut v, mut w, mut timer, ..) = bodies.get_mut(entity).expect("gathered above");
        if wake {
            commands.entity(entity).remove::<Sleeping>();
            timer.0 = 0.0;
        } else {
            commands.entity(entity).insert(Sleeping);
            v.bypass_change_detection().0 = Vec3::ZERO;
            w.bypass_change_detection().0 = Vec3::ZERO;
        }
    }
}

fn moving_kinematic(bodies: &Query<SleepData>, body: Option<Entity>) -> bool {
    body.and_then(|b| bodies.get(b).ok())
        .is_some_and(|(_, rb, v, w, ..)| {
            rb.is_kinematic() && (v.0 != Vec3::ZERO || w.0 != Vec3::ZERO)
        })
}

/// Sleeping and waking, in [`PhysicsStepSet::Sleeping`](crate::PhysicsStepSet::Sleeping), and
/// their events, in [`PhysicsStepSet::Finalize`](crate::PhysicsStepSet::Finalize).
pub(crate) struct SleepingPlugin;

impl Plugin for SleepingPlugin {
    fn build(&self, app: &mut App) {
        events::register_sleep_hooks(app.world_mut());
        app.init_resource::<SleepThreshold>()
            .init_resource::<events::SleepChanges>()
            .add_message::<BodyFellAsleep>()
            .add_message::<BodyWoke>()
            .validate_resource::<SleepThreshold>()
            .add_systems(
                PhysicsSchedule,
                (
                    wake_on_user_changes
                        .in_set(PhysicsStepSet::Prepare)
                        .after(crate::body::sync::transform_to_position)
                        .after(crate::solver::kinematic::drive_kinematic_targets),
                    wake_on_impact
                        .after(PhysicsStepSet::NarrowPhase)
                        .before(PhysicsStepSet::Solver),
                    update_sleeping.in_set(PhysicsStepSet::Sleeping),
                    // After the transforms are written, so observers see this step's poses.
                    events::report_sleep_changes
                        .in_set(PhysicsStepSet::Finalize)
                        .after(crate::body::sync::position_to_transform),
                ),
            );
    }
}
