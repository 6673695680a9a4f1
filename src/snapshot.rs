//! Rollback snapshots: capture the whole simulation state and restore it into the same world.
//!
//! [`PhysicsSnapshot::capture`] copies everything the engine carries from one step to the next
//! into a value; [`PhysicsSnapshot::restore`] writes it back. After a restore, the next steps
//! are bit-identical to the steps that followed the capture, given the same inputs: this is
//! what rollback networking (GGRS-style: save every frame, and on a late input load an old
//! frame and re-simulate) needs.
//!
//! ```
//! use bevy::prelude::*;
//! use impetus3d::prelude::*;
//!
//! let mut app = impetus3d::headless_app(1.0 / 64.0);
//! let ball = app
//!     .world_mut()
//!     .spawn((RigidBody::Dynamic, Collider::sphere(0.5), Transform::from_xyz(0.0, 3.0, 0.0)))
//!     .id();
//! app.update();
//!
//! let snapshot = PhysicsSnapshot::capture(app.world_mut());
//! for _ in 0..30 {
//!     app.update();
//! }
//! let first_run = *app.world().get::<Position>(ball).unwrap();
//!
//! // Roll back (as often as needed: the snapshot stays usable) and simulate again.
//! snapshot.restore(app.world_mut());
//! for _ in 0..30 {
//!     app.update();
//! }
//! assert_eq!(*app.world().get::<Position>(ball).unwrap(), first_run);
//! ```
//!
//! In an app, capture and restore from exclusive systems:
//!
//! ```
//! # use bevy::prelude::*;
//! # use impetus3d::prelude::*;
//! #[derive(Resource)]
//! struct Saved(PhysicsSnapshot);
//!
//! fn save(world: &mut World) {
//!     let snapshot = PhysicsSnapshot::capture(world);
//!     world.insert_resource(Saved(snapshot));
//! }
//!
//! fn load(world: &mut World) {
//!     world.resource_scope(|world, saved: Mut<Saved>| saved.0.restore(world));
//! }
//! # bevy::ecs::system::assert_is_system(save);
//! # bevy::ecs::system::assert_is_system(load);
//! ```
//!
//! # The rule
//!
//! Restore into the world the snapshot was captured from, with the same entities, then step.
//! The snapshot holds the engine's state, not your inputs: for the re-simulated steps to
//! repeat the originals, give them the same inputs (forces, motor targets, desired velocities,
//! spawns and despawns) at the same steps, as a rollback library does.
//!
//! - An entity captured but despawned since (or that lost its body, joint, character or
//!   vehicle component) is reported with a `warn!` naming it and left out; everything else is
//!   restored and simulates. Its contact pairs end at the next step, as for any despawn.
//! - A physics entity spawned after the capture is not in the snapshot and keeps its current
//!   state. Its contact pairs were not in the captured contact graph, so they start afresh
//!   (new [`CollisionStart`](crate::CollisionStart)s, no warm start). A rollback library
//!   despawns such entities (or respawns the ones it rolls back) itself. The spatial-query
//!   tree is rebuilt at the restore whenever colliders were spawned or despawned since the
//!   capture, so that queries see the world as it is.
//! - Captures and restores cost time proportional to the number of bodies, colliders, joints
//!   and contact pairs; nothing is paid per step when no snapshot is taken.
//!
//! # What a snapshot holds
//!
//! Per body ([`RigidBody`] entity):
//! - [`Position`], [`Rotation`], [`LinearVelocity`] and [`AngularVelocity`];
//! - [`Transform`] and the pose-sync bookkeeping ([`PoseSync`]), so that a restore is not
//!   taken for a teleport by the user (which would wake the body). For a root body whose
//!   `Transform` is its world pose with unit scale (what a step leaves), neither is stored:
//!   both are rebuilt from the pose, to the same bits;
//! - [`Sleeping`] and the sleep timer, and whether a change since the body fell asleep (to its
//!   velocity, force or torque) will wake it at the next step. A restore sends no
//!   [`BodyFellAsleep`](crate::BodyFellAsleep) or [`BodyWoke`](crate::BodyWoke) for the
//!   `Sleeping` it puts back or takes away, and drops those pending from changes made since
//!   the last step;
//! - a pending [`ExternalImpulse`] (none pending is restored as a zero impulse).
//!
//! Per joint ([`FixedJoint`], [`DistanceJoint`], [`SphericalJoint`], [`RevoluteJoint`],
//! [`PrismaticJoint`], [`D6Joint`]): the whole component, which holds the joint's solver state
//! (broken flag, the force and torque read back, the rest length a distance joint adopts at
//! its first step, a revolute joint's angle counting whole turns, a D6 joint's row impulses), and whether it has [`ConstraintDisabled`]. The
//! joint's parameters (anchors, limits, motors) are restored with it, since they share the
//! component. (XPBD Lagrange multipliers are reset every substep, so none carry over.)
//!
//! Per character ([`CharacterController`](crate::character::CharacterController)): its [`CharacterControllerState`] (ground, vertical
//! and push velocities). Per ray or shape caster: its [`RayHits`] or [`ShapeHits`], so that
//! what the game reads between a restore and the next step is what it read after the capture.
//! Per vehicle ([`VehicleController`](crate::vehicle::VehicleController)): its
//! [`VehicleState`] (gear, engine speed, each wheel's spin, suspension and slip), which the
//! next step starts from.
//! Per collider with [`CollidingEntities`]: the set, rebuilt from the restored contact graph
//! (the engine keeps the two equal).
//!
//! The records of bodies at rest (static bodies, and sleeping bodies not disturbed since they
//! fell asleep) and the contact pairs between them are shared between snapshots: a capture
//! whose records of resting bodies (or pairs) are the same to the bit as those of the
//! snapshot captured before it (while that one is still held) refers to the same copy
//! ([`PhysicsSnapshot::shared_bytes`]). They cannot be left out: the steps after a capture may
//! wake and move them, and a restore must put them back.
//!
//! World-wide:
//! - the contact graph, packed into flat lists: per pair its colliders and bodies, the poses
//!   that decide whether the next step skips or recycles it, its materials, whether it
//!   touches (which starts and ends collision events) and the contact-hook changes in force;
//!   per manifold its normals, the parts of composite shapes it joins and its friction
//!   impulses; per point both anchors, its distance, the feature ids that match it to the
//!   next step's points and its normal impulse (for warm starting); and parry's per-pair
//!   workspace of mesh and compound pairs. The restore writes the pairs back in place,
//!   reusing the graph's storage;
//! - the broad phase: the collider proxies the spatial queries and character controllers read
//!   between steps, and the bounding-volume tree with its enlarged leaf boxes (a leaf moves
//!   only when its collider's box leaves it), its standing candidate pairs and its
//!   incremental-optimisation state, which all depend on history, not only on the poses. A
//!   restore that rebuilt the tree from the restored poses instead passed every SyncTest and
//!   still desynchronised two peers from their 770th frame: a peer that rolled back then
//!   stepped differently from one that did not, so the next steps read some of that history.
//!   And whether the tree is due for a rebuild (colliders spawned before the capture and not
//!   yet in it);
//! - the impulses of the last step's velocity rows (of D6 joints and of your
//!   [`VelocityConstraint`](crate::solver::rows::VelocityConstraint)s) and where each
//!   constraint's rows went, for warm starting and impulse read-back (not the prepared rows
//!   themselves, which the next step rebuilds);
//! - [`PhysicsStepTime`], including `step_count`;
//! - the [`CreationCounter`], so that physics entities spawned again after a restore get the
//!   [`CreationOrder`](crate::CreationOrder) they got the first time (despawn the ones spawned
//!   since the capture, as a rollback does, or two entities share a number).
//!
//! # Size
//!
//! [`PhysicsSnapshot::size_in_bytes`] reports a snapshot's memory. Per body it is a 96-byte
//! record (plus a `Transform` and its bookkeeping for a child body or a scaled one, and a
//! pending impulse if any), and per contact pair a 160-byte record, 52 bytes per manifold and
//! 40 per point: a box resting on a face of another collider adds 372 bytes; and per collider
//! its broad-phase proxy and tree leaf (about 300 bytes). Contacts and the broad phase are
//! most of it in a pile: the measured figures per body for the comparison scenes are in the
//! README (`compare -- --snapshot`).
//!
//! # What it does not hold, and why
//!
//! - Your inputs: colliders, masses, materials, [`CollisionLayers`](crate::CollisionLayers),
//!   forces, damping, locked axes, [`CharacterController`](crate::character::CharacterController) settings, resources such as
//!   [`Gravity`](crate::Gravity), [`SolverConfig`](crate::SolverConfig),
//!   [`SubstepCount`](crate::SubstepCount) and [`SleepThreshold`](crate::SleepThreshold).
//!   Everything derived from them (computed mass, collider poses relative to their body,
//!   which body a collider belongs to, joint collision exclusions) is recomputed from them.
//! - Your own constraint components ([`XpbdConstraint`](crate::solver::xpbd::XpbdConstraint)
//!   and [`VelocityConstraint`](crate::solver::rows::VelocityConstraint) types): they are
//!   ordinary components of yours; roll them back with the rest of your game state. (The
//!   engine's warm-start data for velocity constraints is in the snapshot.)
//! - Per-step scratch: solver bodies, contact constraints, islands, graph colouring, the
//!   pairs that ended and bodies that lost support in the last step (cleared before each step
//!   uses them), a contact pair's broad-phase indices and whether it touched the step before
//!   (set before they are read), cached swept shapes of characters, constraint slot caches
//!   (keyed to a gather counter that a restore never sets back).
//! - Messages already sent ([`CollisionStart`](crate::CollisionStart),
//!   [`CollisionEnd`](crate::CollisionEnd), [`JointBroken`](crate::solver::joints::JointBroken)):
//!   re-simulated steps send theirs again.
//! - The "warned once" sets of input validation: a restore neither repeats nor silences a
//!   warning, and warnings change no result.
//! - The app's clocks (`Time`, `Time<Fixed>` and its accumulated time): a restore does not
//!   change how many steps the next frame runs.
//! - Entity layout in ECS storage. No result depends on it: joints, velocity constraints,
//!   swept bodies and contact pairs are solved in creation order (see
//!   [`body::creation`](crate::body::creation)), and bodies independently of each other, never
//!   in storage order (which changes whenever an entity gains or loses a component, as a
//!   restore does).

use std::sync::Arc;

use bevy::prelude::*;

use crate::body::{
    AngularVelocity, ConstantForce, ConstantTorque, CreationCounter, ExternalImpulse,
    LinearVelocity, PoseSync, Position, RigidBody, Rotation, SleepTimer, Sleeping,
};
use crate::character::CharacterControllerState;
use crate::collision::broad_phase::BroadPhase;
use crate::collision::saved_contacts::{RestingContacts, SavedContacts};
use crate::collision::{Collider, CollidingEntities, ContactGraph};
use crate::schedule::PhysicsStepTime;
use crate::solver::joints::{
    D6Joint, DistanceJoint, FixedJoint, PrismaticJoint, RevoluteJoint, SphericalJoint,
};
use crate::solver::rows::{RowMap, VelocityConstraintCaches, VelocityRows};
use crate::solver::xpbd::ConstraintDisabled;
use crate::spatial_query::{QueryTreeStale, RayHits, ShapeHits, update_spatial_query_pipeline};
use crate::vehicle::VehicleState;

/// The whole simulation state of a world, to restore into the same world later (rollback).
///
/// See the [module docs](self) for what it holds and the rule for using it.
#[derive(Clone)]
pub struct PhysicsSnapshot {
    step_time: Option<PhysicsStepTime>,
    creation: Option<CreationCounter>,
    /// Bodies in motion (see [`BodyState::at_rest`]).
    bodies: Vec<BodyState>,
    /// Bodies at rest, shared with the snapshot captured before when the same to the bit.
    resting: Arc<[BodyState]>,
    joints: Vec<JointState>,
    characters: Vec<(Entity, CharacterControllerState)>,
    vehicles: Vec<(Entity, VehicleState)>,
    ray_hits: Vec<(Entity, RayHits)>,
    shape_hits: Vec<(Entity, ShapeHits)>,
    contacts: Option<SavedContacts>,
    broad_phase: Option<BroadPhaseState>,
    query_tree_stale: Option<bool>,
    rows: Option<VelocityRows>,
    row_maps: Vec<RowMap>,
    /// How many collider entities there were, to tell whether any were spawned since.
    colliders: usize,
}

/// The broad phase without its scratch workspace.
struct BroadPhaseState(BroadPhase);

impl Clone for BroadPhaseState {
    fn clone(&self) -> Self {
        Self(self.0.clone_state())
    }
}

/// One body's state. What most bodies have in common is left out: the `Transform` and
/// pose-sync bookkeeping of a root body whose `Transform` is its world pose (rebuilt from the
/// pose at the restore), and a zero pending impulse.
#[derive(Clone)]
struct BodyState {
    entity: Entity,
    position: Position,
    rotation: Rotation,
    linear: LinearVelocity,
    angular: AngularVelocity,
    timer: SleepTimer,
    sleep: SleepState,
    /// `Transform` and [`PoseSync`] when they are not [`world_pose_sync`] of the pose.
    pose_sync: Option<Box<(Transform, PoseSync)>>,
    /// The pending impulse, if not zero.
    impulse: Option<Box<ExternalImpulse>>,
}

impl BodyState {
    /// True for the record of a body at rest: no velocity, no pending impulse, not disturbed
    /// in its sleep, the `Transform` a step leaves. A static body's and a sleeping body's
    /// record stays the same from capture to capture, so snapshots share it.
    fn at_rest(&self) -> bool {
        self.linear.0 == Vec3::ZERO
            && self.angular.0 == Vec3::ZERO
            && self.sleep != SleepState::AsleepDisturbed
            && self.pose_sync.is_none()
            && self.impulse.is_none()
    }

    /// True if two records are the same to the bit (`-0.0` and `0.0` differ).
    fn same_bits(&self, other: &Self) -> bool {
        let bits = |body: &Self| {
            let floats = (body.position.0.to_array().into_iter())
                .chain(body.rotation.0.to_array())
                .chain(body.linear.0.to_array())
                .chain(body.angular.0.to_array())
                .chain([body.timer.0]);
            floats.map(f32::to_bits)
        };
        self.entity == other.entity
            && self.sleep == other.sleep
            && self.pose_sync.is_none()
            && other.pose_sync.is_none()
            && self.impulse.is_none()
            && other.impulse.is_none()
            && bits(self).eq(bits(other))
    }
}

/// The last capture's records of bodies at rest and their contact pairs, for the next
/// capture to share while a snapshot still holds them.
#[derive(Resource, Default)]
struct LastResting {
    bodies: Option<std::sync::Weak<[BodyState]>>,
    contacts: RestingContacts,
}

/// The `Transform` and [`PoseSync`] of a root body at `position` and `rotation` after a step
/// that wrote them: the world pose, unit scale.
fn world_pose_sync(position: Position, rotation: Rotation) -> (Transform, PoseSync) {
    let transform = Transform::from_translation(position.0).with_rotation(rotation.0);
    let sync = PoseSync {
        translation: position.0,
        rotation: rotation.0,
        local_translation: position.0,
        local_rotation: rotation.0,
        parent: bevy::math::Affine3A::IDENTITY,
        initialized: true,
    };
    (transform, sync)
}

/// Whether a body sleeps, and whether the next step wakes it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SleepState {
    Awake,
    Asleep,
    /// Asleep, but changed since it fell asleep: the next step wakes it.
    AsleepDisturbed,
}

/// One joint component and whether it is disabled.
#[derive(Clone)]
struct JointState {
    entity: Entity,
    joint: JointComponent,
    disabled: bool,
}

#[derive(Clone)]
enum JointComponent {
    Fixed(FixedJoint),
    Distance(DistanceJoint),
    Spherical(SphericalJoint),
    Revolute(RevoluteJoint),
    Prismatic(PrismaticJoint),
    /// Boxed: a D6 joint is several times larger than the others.
    D6(Box<D6Joint>),
}

impl std::fmt::Debug for PhysicsSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PhysicsSnapshot")
            .field("step_count", &self.step_count())
            .field("bodies", &self.body_count())
            .field("joints", &self.joints.len())
            .field(
                "contact_pairs",
                &self.contacts.as_ref().map_or(0, SavedContacts::len),
            )
            .finish_non_exhaustive()
    }
}

impl PhysicsSnapshot {
    /// Captures the simulation state of `world` (see the [module docs](self) for what that
    /// is). Call it between physics steps. A world without the physics plugin gives an empty
    /// snapshot.
    ///
    /// ```
    /// # use impetus3d::prelude::*;
    /// let mut app = impetus3d::headless_app(1.0 / 64.0);
    /// app.update();
    /// let snapshot = PhysicsSnapshot::capture(app.world_mut());
    /// assert_eq!(snapshot.step_count(), 1);
    /// ```
    pub fn capture(world: &mut World) -> Self {
        let (resting, bodies) = split_at_rest(capture_bodies(world));
        let contacts = capture_contacts(world, &resting);
        Self {
            step_time: world.get_resource::<PhysicsStepTime>().copied(),
            creation: world.get_resource::<CreationCounter>().copied(),
            bodies,
            resting: share_resting(world, resting),
            joints: capture_joints(world),
            characters: capture_cloned::<CharacterControllerState>(world),
            vehicles: capture_cloned::<VehicleState>(world),
            ray_hits: capture_cloned::<RayHits>(world),
            shape_hits: capture_cloned::<ShapeHits>(world),
            contacts,
            broad_phase: world
                .get_resource::<BroadPhase>()
                .map(|broad| BroadPhaseState(broad.clone_state())),
            query_tree_stale: world.get_resource::<QueryTreeStale>().map(|s| s.0),
            rows: world
                .get_resource::<VelocityRows>()
                .map(VelocityRows::carried),
            row_maps: world
                .get_resource::<VelocityConstraintCaches>()
                .map_or_else(Vec::new, VelocityConstraintCaches::row_maps),
            colliders: count_colliders(world),
        }
    }

    /// Restores the captured state into `world`, the world it was captured from. The snapshot
    /// is left as it was, so it can be restored again. Call it between physics steps.
    ///
    /// Entities captured but despawned since are reported with a warning and skipped;
    /// entities spawned since keep their state (see the [module docs](self)).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use impetus3d::prelude::*;
    /// let mut app = impetus3d::headless_app(1.0 / 64.0);
    /// let snapshot = PhysicsSnapshot::capture(app.world_mut());
    /// app.update();
    /// snapshot.restore(app.world_mut());
    /// assert_eq!(app.world().resource::<PhysicsStepTime>().step_count, 0);
    /// ```
    pub fn restore(&self, world: &mut World) {
        let mut missing = Vec::new();
        self.restore_resources(world);
        let bodies = self.bodies.iter().chain(self.resting.iter());
        restore_bodies(world, bodies, &mut missing);
        // Putting `Sleeping` back is not a body falling asleep or waking: no activation
        // events for it (nor for changes made since the last step, which it undoes).
        if let Some(mut changes) = world.get_resource_mut::<crate::sleeping::events::SleepChanges>()
        {
            changes.clear();
        }
        restore_joints(world, &self.joints, &mut missing);
        restore_cloned(world, &self.characters, &mut missing);
        restore_cloned(world, &self.vehicles, &mut missing);
        restore_cloned(world, &self.ray_hits, &mut missing);
        restore_cloned(world, &self.shape_hits, &mut missing);
        restore_colliding_entities(world);
        self.refresh_query_tree(world);
        missing.sort_unstable();
        missing.dedup();
        for entity in missing {
            warn!(
                "PhysicsSnapshot::restore: {entity} was captured but has been despawned (or \
                 lost its physics component) since; it is left out"
            );
        }
    }

    /// The [`PhysicsStepTime::step_count`] at the capture (0 without the physics plugin).
    pub fn step_count(&self) -> u64 {
        self.step_time.map_or(0, |time| time.step_count)
    }

    /// How many bodies the snapshot holds.
    pub fn body_count(&self) -> usize {
        self.bodies.len() + self.resting.len()
    }

    /// The memory the snapshot holds, in bytes: its own fields and everything they own on the
    /// heap (collider shapes are shared with the world and not counted; parry's per-pair
    /// contact workspaces, which only composite shapes have, count as a pointer each). The
    /// records it shares with other snapshots ([`shared_bytes`](Self::shared_bytes)) are
    /// counted too.
    pub fn size_in_bytes(&self) -> usize {
        use crate::math::vec_bytes;
        let hits =
            |hits: &[(Entity, RayHits)]| (hits.iter()).map(|(_, h)| vec_bytes(&h.0)).sum::<usize>();
        let shape_hits = (self.shape_hits.iter()).map(|(_, h)| vec_bytes(&h.0));
        let d6 = (self.joints.iter()).filter(|j| matches!(j.joint, JointComponent::D6(_)));
        let body_extras = self.bodies.iter().map(|body| {
            body.pose_sync
                .as_ref()
                .map_or(0, |b| std::mem::size_of_val(&**b))
                + body
                    .impulse
                    .as_ref()
                    .map_or(0, |b| std::mem::size_of_val(&**b))
        });
        std::mem::size_of::<Self>()
            + vec_bytes(&self.bodies)
            + self.resting_bytes()
            + body_extras.sum::<usize>()
            + vec_bytes(&self.joints)
            + d6.count() * std::mem::size_of::<D6Joint>()
            + vec_bytes(&self.characters)
            + vec_bytes(&self.vehicles)
            + (self.vehicles.iter())
                .map(|(_, v)| vec_bytes(&v.wheels))
                .sum::<usize>()
            + vec_bytes(&self.ray_hits)
            + hits(&self.ray_hits)
            + vec_bytes(&self.shape_hits)
            + shape_hits.sum::<usize>()
            + self.contacts.as_ref().map_or(0, SavedContacts::heap_bytes)
            + (self.broad_phase.as_ref()).map_or(0, |state| state.0.state_heap_bytes())
            + (self.rows.as_ref()).map_or(0, VelocityRows::heap_bytes)
            + vec_bytes(&self.row_maps)
            + self.row_maps.iter().map(RowMap::heap_bytes).sum::<usize>()
    }

    /// The bytes of this snapshot that other snapshots hold too (counted in each one's
    /// [`size_in_bytes`](Self::size_in_bytes)): the records of bodies at rest (static bodies,
    /// and sleeping ones not disturbed since they fell asleep) and their contact pairs, which
    /// a capture shares with the snapshot captured before it when they are the same to the
    /// bit. A rollback library's ring of snapshots thus holds one copy of a resting world's
    /// bodies and contacts (each snapshot has its own copy of the broad phase).
    ///
    /// ```
    /// # use bevy::prelude::*;
    /// # use impetus3d::prelude::*;
    /// let mut app = impetus3d::headless_app(1.0 / 64.0);
    /// app.world_mut().spawn((RigidBody::Static, Collider::cuboid(10.0, 1.0, 10.0)));
    /// app.update();
    /// let first = PhysicsSnapshot::capture(app.world_mut());
    /// app.update();
    /// let second = PhysicsSnapshot::capture(app.world_mut());
    /// assert!(second.shared_bytes() > 0, "the ground's record is held once");
    /// # drop(first);
    /// ```
    pub fn shared_bytes(&self) -> usize {
        let bodies = if Arc::strong_count(&self.resting) > 1 {
            self.resting_bytes()
        } else {
            0
        };
        bodies
            + self
                .contacts
                .as_ref()
                .map_or(0, SavedContacts::shared_bytes)
    }

    fn resting_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.resting)
    }

    /// Puts back the world-wide state: step time, creation counter, contact graph, broad
    /// phase, velocity rows.
    fn restore_resources(&self, world: &mut World) {
        if let (Some(time), Some(mut current)) =
            (self.step_time, world.get_resource_mut::<PhysicsStepTime>())
        {
            *current = time;
        }
        if let (Some(counter), Some(mut current)) =
            (self.creation, world.get_resource_mut::<CreationCounter>())
        {
            *current = counter;
        }
        if let (Some(contacts), Some(mut graph)) =
            (&self.contacts, world.get_resource_mut::<ContactGraph>())
        {
            contacts.restore(&mut graph.pairs);
        }
        if let (Some(state), Some(mut broad)) =
            (&self.broad_phase, world.get_resource_mut::<BroadPhase>())
        {
            broad.restore_state(&state.0);
        }
        if let (Some(stale), Some(mut current)) = (
            self.query_tree_stale,
            world.get_resource_mut::<QueryTreeStale>(),
        ) {
            current.0 = stale;
        }
        if let (Some(rows), Some(mut current)) =
            (&self.rows, world.get_resource_mut::<VelocityRows>())
        {
            current.clone_from(rows);
        }
        if let Some(mut caches) = world.get_resource_mut::<VelocityConstraintCaches>() {
            caches.restore_row_maps(&self.row_maps);
        }
    }

    /// The restored query tree names the colliders of the capture: if some were despawned or
    /// spawned since, queries before the next step would miss or report them, so the tree is
    /// rebuilt from the world as it is.
    fn refresh_query_tree(&self, world: &mut World) {
        let Some(state) = &self.broad_phase else {
            return;
        };
        let despawned = state.0.proxies.iter().any(|proxy| {
            world
                .get_entity(proxy.entity)
                .map_or(true, |e| !e.contains::<Collider>())
        });
        if despawned || count_colliders(world) != self.colliders {
            update_spatial_query_pipeline(world);
        }
    }
}

/// A 64-bit checksum of the simulation state: FNV-1a over the bits of every body's
/// [`Position`], [`Rotation`], [`LinearVelocity`] and [`AngularVelocity`] (x, y, z(, w) each,
/// little-endian), bodies in [`CreationOrder`](crate::body::CreationOrder).
///
/// Two peers that follow the determinism contract (see the [crate docs](crate)) have equal
/// checksums after every step, so a rollback library can send it for desync detection (GGRS
/// compares a checksum of each confirmed frame). It depends on nothing but the bodies'
/// states and their creation order: not on `Entity` values or storage order. The state it
/// leaves out (contacts, joints, sleep timers) acts on the bodies within a step or two, so a
/// desync there shows up in the checksum soon after. It is also the hash of the
/// cross-platform golden test (`tests/thread_determinism.rs`).
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// let mut app = impetus3d::headless_app(1.0 / 60.0);
/// app.world_mut().spawn((RigidBody::Dynamic, Collider::sphere(0.5)));
/// app.update();
/// let before = physics_checksum(app.world_mut());
/// app.update();
/// assert_ne!(physics_checksum(app.world_mut()), before, "the ball falls");
/// ```
pub fn physics_checksum(world: &mut World) -> u64 {
    let mut query = world.query_filtered::<(
        &crate::body::CreationOrder,
        (&Position, &Rotation),
        (&LinearVelocity, &AngularVelocity),
    ), With<RigidBody>>();
    let mut bodies: Vec<_> = query.iter(world).collect();
    bodies.sort_unstable_by_key(|(order, ..)| order.get());
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (_, (p, r), (v, w)) in bodies {
        let values = (p.0.to_array().into_iter()).chain(r.0.to_array());
        for x in values.chain(v.0.to_array()).chain(w.0.to_array()) {
            for byte in x.to_bits().to_le_bytes() {
                hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    hash
}

fn count_colliders(world: &mut World) -> usize {
    world
        .query_filtered::<(), With<Collider>>()
        .iter(world)
        .count()
}

/// What a body's capture reads.
type BodyData = (
    Entity,
    (&'static Position, &'static Rotation),
    (&'static LinearVelocity, &'static AngularVelocity),
    (&'static Transform, &'static PoseSync, &'static SleepTimer),
    Option<&'static ExternalImpulse>,
    Has<Sleeping>,
);

fn capture_bodies(world: &mut World) -> Vec<BodyState> {
    let mut bodies: Vec<BodyState> = world
        .query_filtered::<BodyData, With<RigidBody>>()
        .iter(world)
        .map(
            |(entity, pose, velocity, sync, impulse, sleeping)| BodyState {
                entity,
                position: *pose.0,
                rotation: *pose.1,
                linear: *velocity.0,
                angular: *velocity.1,
                timer: *sync.2,
                sleep: if sleeping {
                    SleepState::Asleep
                } else {
                    SleepState::Awake
                },
                pose_sync: (world_pose_sync(*pose.0, *pose.1) != (*sync.0, *sync.1))
                    .then(|| Box::new((*sync.0, *sync.1))),
                impulse: (impulse.copied()).filter(|i| !i.is_zero()).map(Box::new),
            },
        )
        .collect();
    // Entity order, so that the disturbed bodies below are found by binary search.
    bodies.sort_unstable_by_key(|body| body.entity);
    for entity in disturbed_sleepers(world) {
        if let Ok(i) = bodies.binary_search_by_key(&entity, |body| body.entity) {
            bodies[i].sleep = SleepState::AsleepDisturbed;
        }
    }
    bodies
}

/// Sleeping bodies whose velocity, force or torque changed since they fell asleep: the wake
/// test of the next step's prepare stage, which a restore must reproduce.
fn disturbed_sleepers(world: &mut World) -> Vec<Entity> {
    let now = world.read_change_tick();
    world
        .query::<(
            Entity,
            Ref<Sleeping>,
            Ref<LinearVelocity>,
            Ref<AngularVelocity>,
            Option<Ref<ConstantForce>>,
            Option<Ref<ConstantTorque>>,
        )>()
        .iter(world)
        .filter(|(_, sleeping, v, w, force, torque)| {
            let since =
                |tick: bevy::ecs::change_detection::Tick| tick.is_newer_than(sleeping.added(), now);
            since(v.last_changed())
                || since(w.last_changed())
                || force
                    .as_ref()
                    .is_some_and(|f| since(f.last_changed()) && f.0 != Vec3::ZERO)
                || torque
                    .as_ref()
                    .is_some_and(|t| since(t.last_changed()) && t.0 != Vec3::ZERO)
        })
        .map(|(entity, ..)| entity)
        .collect()
}

/// Writes `value` into `entity`'s `T` if it has one; `false` if it does not.
fn write<T: Component<Mutability = bevy::ecs::component::Mutable>>(
    entity: &mut EntityWorldMut,
    value: T,
) -> bool {
    match entity.get_mut::<T>() {
        Some(mut current) => {
            *current = value;
            true
        }
        None => false,
    }
}

/// Splits body records into those at rest and the others, each list allocated to its length.
fn split_at_rest(bodies: Vec<BodyState>) -> (Vec<BodyState>, Vec<BodyState>) {
    let resting = bodies.iter().filter(|body| body.at_rest()).count();
    let mut split = (
        Vec::with_capacity(resting),
        Vec::with_capacity(bodies.len() - resting),
    );
    for body in bodies {
        if body.at_rest() {
            split.0.push(body);
        } else {
            split.1.push(body);
        }
    }
    split
}

/// The records of bodies at rest: the last capture's if a snapshot still holds them and they
/// are the same to the bit (so that the snapshots share them), and remembered for the next
/// capture.
fn share_resting(world: &mut World, resting: Vec<BodyState>) -> Arc<[BodyState]> {
    let mut last = world.get_resource_or_init::<LastResting>();
    let same = |old: &Arc<[BodyState]>| {
        old.len() == resting.len()
            && (old.iter().zip(&resting)).all(|(old, new)| old.same_bits(new))
    };
    if let Some(old) = last.bodies.as_ref().and_then(std::sync::Weak::upgrade)
        && same(&old)
    {
        return old;
    }
    let resting: Arc<[BodyState]> = resting.into();
    last.bodies = Some(Arc::downgrade(&resting));
    resting
}

/// The contact graph, its pairs between bodies at rest (`resting`, in entity order) shared
/// with the last capture's when the same.
fn capture_contacts(world: &mut World, resting: &[BodyState]) -> Option<SavedContacts> {
    let at_rest = |body: Option<Entity>| {
        body.is_none_or(|body| resting.binary_search_by_key(&body, |b| b.entity).is_ok())
    };
    world.init_resource::<LastResting>();
    world.resource_scope(|world, mut last: Mut<LastResting>| {
        let graph = world.get_resource::<ContactGraph>()?;
        Some(SavedContacts::capture(
            &graph.pairs,
            at_rest,
            &mut last.contacts,
        ))
    })
}

fn restore_bodies<'a>(
    world: &mut World,
    bodies: impl Iterator<Item = &'a BodyState>,
    missing: &mut Vec<Entity>,
) {
    let mut present = Vec::with_capacity(bodies.size_hint().0);
    for body in bodies {
        let restored = world.get_entity_mut(body.entity).is_ok_and(|mut entity| {
            entity.contains::<RigidBody>() && restore_body(&mut entity, body)
        });
        if restored {
            present.push(body);
        } else {
            missing.push(body.entity);
        }
    }
    restore_sleep(world, &present);
}

/// Writes one body's components (all required by [`RigidBody`], so present on a body).
fn restore_body(entity: &mut EntityWorldMut, body: &BodyState) -> bool {
    let (transform, sync) = (body.pose_sync.as_deref().copied())
        .unwrap_or_else(|| world_pose_sync(body.position, body.rotation));
    let written = [
        write(entity, body.position),
        write(entity, body.rotation),
        write(entity, body.linear),
        write(entity, body.angular),
        write(entity, transform),
        write(entity, sync),
        write(entity, body.timer),
    ];
    restore_impulse(entity, body.impulse.as_deref().copied().unwrap_or_default());
    written.iter().all(|&ok| ok)
}

/// Puts back the impulse pending at the capture (zero if none was).
fn restore_impulse(entity: &mut EntityWorldMut, impulse: ExternalImpulse) {
    match entity.get_mut::<ExternalImpulse>() {
        Some(mut current) => {
            current.set_if_neq(impulse);
        }
        None if !impulse.is_zero() => {
            entity.insert(impulse);
        }
        None => {}
    }
}

/// Puts [`Sleeping`] back as captured. The next step wakes a sleeping body whose velocity
/// changed after it fell asleep, so the restored bodies' `Sleeping` is marked as added after
/// their velocities were written (a later change tick), and the velocity of a body that was
/// already disturbed at the capture is marked changed after that.
fn restore_sleep(world: &mut World, bodies: &[&BodyState]) {
    world.increment_change_tick();
    for body in bodies {
        let Ok(mut entity) = world.get_entity_mut(body.entity) else {
            continue;
        };
        let asleep = entity.get_mut::<Sleeping>().map(|mut s| s.set_added());
        match (body.sleep, asleep) {
            (SleepState::Awake, Some(())) => {
                entity.remove::<Sleeping>();
            }
            (SleepState::Asleep | SleepState::AsleepDisturbed, None) => {
                entity.insert(Sleeping);
            }
            _ => {}
        }
    }
    world.increment_change_tick();
    for body in bodies
        .iter()
        .filter(|b| b.sleep == SleepState::AsleepDisturbed)
    {
        if let Some(mut v) = world.get_mut::<LinearVelocity>(body.entity) {
            v.set_changed();
        }
    }
}

fn capture_joints(world: &mut World) -> Vec<JointState> {
    let mut joints = Vec::new();
    capture_joint(world, &mut joints, JointComponent::Fixed);
    capture_joint(world, &mut joints, JointComponent::Distance);
    capture_joint(world, &mut joints, JointComponent::Spherical);
    capture_joint(world, &mut joints, JointComponent::Revolute);
    capture_joint(world, &mut joints, JointComponent::Prismatic);
    capture_joint(world, &mut joints, |j| JointComponent::D6(Box::new(j)));
    joints
}

fn capture_joint<J: Component + Clone>(
    world: &mut World,
    joints: &mut Vec<JointState>,
    wrap: fn(J) -> JointComponent,
) {
    let mut query = world.query::<(Entity, &J, Has<ConstraintDisabled>)>();
    joints.extend(
        query
            .iter(world)
            .map(|(entity, joint, disabled)| JointState {
                entity,
                joint: wrap(joint.clone()),
                disabled,
            }),
    );
}

fn restore_joints(world: &mut World, joints: &[JointState], missing: &mut Vec<Entity>) {
    for state in joints {
        let Ok(mut entity) = world.get_entity_mut(state.entity) else {
            missing.push(state.entity);
            continue;
        };
        let restored = match &state.joint {
            JointComponent::Fixed(j) => write(&mut entity, *j),
            JointComponent::Distance(j) => write(&mut entity, *j),
            JointComponent::Spherical(j) => write(&mut entity, *j),
            JointComponent::Revolute(j) => write(&mut entity, *j),
            JointComponent::Prismatic(j) => write(&mut entity, *j),
            JointComponent::D6(j) => write(&mut entity, (**j).clone()),
        };
        if !restored {
            missing.push(state.entity);
            continue;
        }
        match (state.disabled, entity.contains::<ConstraintDisabled>()) {
            (true, false) => {
                entity.insert(ConstraintDisabled);
            }
            (false, true) => {
                entity.remove::<ConstraintDisabled>();
            }
            _ => {}
        }
    }
}

fn capture_cloned<T: Component + Clone>(world: &mut World) -> Vec<(Entity, T)> {
    world
        .query::<(Entity, &T)>()
        .iter(world)
        .map(|(entity, value)| (entity, value.clone()))
        .collect()
}

fn restore_cloned<T: Component<Mutability = bevy::ecs::component::Mutable> + Clone>(
    world: &mut World,
    values: &[(Entity, T)],
    missing: &mut Vec<Entity>,
) {
    for (entity, value) in values {
        let restored = world
            .get_entity_mut(*entity)
            .is_ok_and(|mut e| write(&mut e, value.clone()));
        if !restored {
            missing.push(*entity);
        }
    }
}

/// Sets every [`CollidingEntities`] to the colliders touching it in the (restored) contact
/// graph, as the engine keeps it after each step.
fn restore_colliding_entities(world: &mut World) {
    let Some(graph) = world.get_resource::<ContactGraph>() else {
        return;
    };
    let mut touching: Vec<(Entity, Entity)> = graph
        .pairs
        .iter()
        .filter(|pair| pair.touching)
        .flat_map(|pair| {
            [
                (pair.collider1, pair.collider2),
                (pair.collider2, pair.collider1),
            ]
        })
        .collect();
    touching.sort_unstable();
    touching.dedup();
    let mut sets = world.query::<(Entity, &mut CollidingEntities)>();
    for (entity, mut set) in sets.iter_mut(world) {
        let start = touching.partition_point(|&(me, _)| me < entity);
        let end = touching.partition_point(|&(me, _)| me <= entity);
        let others = touching[start..end].iter().map(|&(_, other)| other);
        if !set.0.iter().copied().eq(others.clone()) {
            set.0.clear();
            set.0.extend(others);
        }
    }
}
