//! # impetus3d
//!
//! A 3D rigid-body physics plugin for [Bevy](https://bevy.org): add [`PhysicsPlugin`], spawn
//! entities with [`RigidBody`] and [`Collider`], and they fall, stack, slide, bounce and sleep.
//! Joints are entities of their own, and you can write your own position-based constraints.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use impetus3d::prelude::*;
//!
//! fn main() {
//!     App::new()
//!         .add_plugins((MinimalPlugins, PhysicsPlugin::default()))
//!         .add_systems(Startup, |mut commands: Commands| {
//!             commands.spawn((RigidBody::Static, Collider::cuboid(20.0, 1.0, 20.0)));
//!             commands.spawn((
//!                 RigidBody::Dynamic,
//!                 Collider::cuboid(1.0, 1.0, 1.0),
//!                 Transform::from_xyz(0.0, 3.0, 0.0),
//!             ));
//!         })
//!         .run();
//! }
//! ```
//!
//! ## The step
//!
//! [`PhysicsPlugin`] runs [`PhysicsSchedule`] once per physics step from `FixedPostUpdate`
//! (so the step is `Time<Fixed>`'s timestep, 1/64 s by default). Each step runs the
//! [`PhysicsStepSet`] stages: prepare (transform sync, mass properties, [`character`]
//! controllers), broad phase (a BVH of collider AABBs), narrow phase (parry contact manifolds,
//! warm-start data matched by feature id; user [`CollisionHooks`] may filter pairs and modify
//! contacts), solver, sleeping, and finalize (transform sync, then collision and contact-force
//! events, see [`collision::events`], and sleep and wake events, see [`sleeping::events`]).
//! The solver runs [`SubstepSchedule`] [`SubstepCount`] times (4 by default): integrate
//! velocities, warm start, soft contact and velocity-row solve, integrate positions, relax,
//! XPBD joints, user constraints, velocity projection. Bodies with
//! [`SweptCcd`] are then swept from their step-start to their step-end pose and moved back to
//! their first impact ([`SolverSet::SweptCcd`]), before the solver writes bodies back. Last,
//! the spatial-query stage moves the query tree to the bodies' new poses and refreshes ray and
//! shape casters ([`spatial_query`]).
//!
//! ## Where things are
//!
//! The modules follow the step, and each depends only on those listed before it, so any of
//! them can be read knowing only what sits below:
//!
//! | module | what | uses |
//! | --- | --- | --- |
//! | [`math`], [`schedule`], [`validation`], [`settings`] | scalars and helpers; the schedules, their sets and the step loop; input checking; [`Gravity`] and [`SolverConfig`] | — |
//! | [`body`] | body components: kind, pose, velocities, mass overrides, forces, damping, locked axes, the sleeping marker; `Transform` sync | the above |
//! | [`collision`] | colliders, mass properties from colliders, broad phase, narrow phase, contacts, events, hooks | `body` |
//! | [`solver`] | dense solver bodies, contacts, integration, XPBD constraints and joints, velocity rows, swept CCD | `body`, `collision` |
//! | [`sleeping`] | islands, sleep and wake | `body`, `collision`, `solver` |
//! | [`spatial_query`], [`character`] | ray and shape queries on the broad phase's tree; the character controller on them | `body`, `collision` |
//! | [`vehicle`] | wheeled vehicles: cast wheels, suspension, tyres, engine, gearbox, brakes | `body`, `collision`, `solver`, `sleeping`, `spatial_query` |
//! | [`interpolation`] | the rendered `Transform` between fixed steps | `body`, `collision` |
//! | `debug_render` (feature `debug-render`) | gizmos for colliders, AABBs, contacts, joints, body axes | `body`, `collision`, `solver` |
//! | [`reflection`] | registers every type for inspectors and scenes | all |
//!
//! The plugin ([`PhysicsPlugins`]) puts the stages together.
//!
//! ## Methods and sources
//!
//! - Contacts: the soft step of Erin Catto, "Solver2D" (2024) and Box2D v3 — substepping with
//!   soft constraints, warm starting and relaxation — with the frequency / damping-ratio
//!   coefficients of Catto, "Soft Constraints: Reinventing the Spring" (GDC 2011).
//! - Joints and custom constraints: extended position-based dynamics, Macklin, Müller and
//!   Chentanez, "XPBD: Position-Based Simulation of Compliant Constrained Dynamics" (2016), and
//!   Müller et al., "Detailed Rigid Body Simulation with Extended Position Based Dynamics"
//!   (2020).
//! - Collision detection: [parry3d](https://parry.rs).
//! - Rotation: the gyroscopic term by the implicit midpoint rule, which conserves energy and
//!   the size of the angular momentum (Hairer, Lubich and Wanner, *Geometric Numerical
//!   Integration*, 2006); see [`solver::integrator`].
//! - Tunnelling: speculative contacts for every body (the broad phase enlarges each AABB by
//!   the step's motion); opt-in swept CCD with time of impact by GJK ray casting and
//!   conservative advancement, as in Catto, "Continuous Collision" (GDC 2013) and Box2D v3
//!   (see [`solver::ccd`]).
//! - Character controller: collide-and-slide (Fauerby, "Improved Collision detection and
//!   Response", 2003) on swept-shape casts, with slope and step limits as in the PhysX and
//!   Unity character controllers; see [`character`].
//! - Parallelism: contact constraints are graph-coloured (as in Box2D v3) and each colour is
//!   solved in parallel chunks; the narrow phase runs pairs in parallel. Both give
//!   bit-identical results for any thread count. Enable the `parallel` feature for threads;
//!   [`ThreadUse`] says whether a step uses them (by default: when timing shows it pays).
//!
//! ## Defaults (and why)
//!
//! Gravity `(0, -9.81, 0)`; 4 substeps; contact frequency 40 Hz (capped at a quarter of the
//! substep rate), damping ratio 10, contacts against static bodies twice as stiff; push-out
//! capped at 3 m/s; no bounce below 1 m/s; contact tolerance 5 mm with a 2 cm speculative
//! margin; friction 0.5 (geometric mean), restitution 0 (maximum); collider density 1000 kg/m³;
//! 4 XPBD passes per substep for joints and custom constraints; bodies sleep after 0.5 s below
//! 0.05 m/s and 0.05 rad/s; no body moves faster than 400 m/s (Box2D v3's limit; it bounds how
//! far the broad phase must look ahead). See [`SolverConfig`], [`SleepThreshold`], [`Friction`] and
//! [`XpbdIterations`](solver::xpbd::XpbdIterations). A [`CharacterController`] keeps a 1 cm
//! skin, walks slopes up to 45°, steps onto ledges up to 0.3 m and snaps down to ground up to
//! 0.2 m below ([`MoveAndSlideConfig`]).
//!
//! Why these: a soft contact compresses by `load / (m_eff ω²)` at rest (about 0.16 mm per
//! supported unit cube at 40 Hz), so stiffer contacts sag less, up to about a fifth of the
//! substep rate, where the results start to scatter. Measured at 4 substeps of 1/60 s
//! (damping ratio 10, Box2D v3's), 30 → 40 Hz took the base-20 pyramid's top-cube sag from 27
//! to 16 mm, the base-100 pyramid's from 736 to 441 mm and the deepest cube–cube overlap in a
//! 4,096-cube pile from 12.5 to 6.9 mm; 44–46 Hz was a little better still, and from 48 Hz on
//! the figures scatter (50 Hz: 33 mm, 671 mm; 60 Hz: 41 mm, 1,702 mm), so 40 Hz keeps a margin
//! below that edge. Four XPBD passes bring a 40×40 grid of heavy spheres hanging from two
//! corners to a worst joint error of about 6 cm, where one pass lets it tear apart.
//!
//! ## Hierarchies, meshes and scenes
//!
//! A body may be a child of another entity (a level, a vehicle, the root of a spawned glTF
//! scene): [`Position`] and [`Rotation`] stay in world space and the body's `Transform` is
//! relative to its parent, converted both ways through the parent's world transform. Moving
//! the parent carries its bodies along (a teleport at the next step, velocities kept), as in
//! avian and bevy_rapier; see [`body::sync`]. Colliders may sit any number of levels below their
//! body, each level with its own `Transform`.
//!
//! With the cargo feature `collider-from-mesh`, colliders can be built from Bevy `Mesh` assets
//! ([`Collider::trimesh_from_mesh`], [`Collider::convex_hull_from_mesh`],
//! [`Collider::convex_decomposition_from_mesh`]), from an entity's `Mesh3d` once its asset has
//! loaded (`ColliderConstructor`), and for every mesh of a spawned glTF scene
//! (`ColliderConstructorHierarchy`); see [`collision::mesh`](crate::collision) (documented
//! when the feature is on). [`Collider::heightfield`] builds terrain from a grid of heights,
//! with or without the feature.
//!
//! ## Rollback snapshots
//!
//! [`PhysicsSnapshot::capture`] copies the whole simulation state of a world (bodies,
//! velocities, sleeping, contact warm-start data, joint state, velocity rows, the
//! step count) and [`PhysicsSnapshot::restore`] puts it back, so that the steps after a
//! restore are bit-identical to those after the capture: what rollback networking needs.
//! Restore into the same world (same entities), then step with the same inputs. Your inputs
//! (colliders, masses, forces, settings) and your own components are not in a snapshot. The
//! full list of what is and is not captured is in [`snapshot`].
//!
//! Nothing in a step depends on how the ECS stores entities (a restore changes it) or on
//! `Entity` values (they differ between the peers of a networked game): wherever an order
//! matters, the engine uses the order in which bodies, colliders, joints and constraints were
//! added ([`CreationOrder`]). **The determinism contract**: peers that spawn the same physics
//! entities in the same order, with the same component values, and step with the same inputs
//! get bit-identical results, whatever their `Entity` values, archetypes or storage order. See
//! [`body::creation`].
//!
//! With a rollback library, step the physics in its rollback schedule
//! (`PhysicsPlugin::new(GgrsSchedule)` for bevy_ggrs, with your input systems
//! `.before(PhysicsSystems::StepSimulation)`), save and load a [`PhysicsSnapshot`] with its
//! frames, and send [`physics_checksum`](snapshot::physics_checksum) for desync detection. The
//! repository's `rollback` example and `docs/rollback.md` show the whole integration with
//! bevy_ggrs: a SyncTest and a two-process P2P session.
//!
//! ## In a game
//!
//! - **Smooth motion**: physics steps at a fixed 64 Hz whatever the display rate. Give a body
//!   [`TransformInterpolation`] (drawn between its last two physics poses) or
//!   [`TransformExtrapolation`] (drawn ahead by its velocity), or insert
//!   [`PhysicsInterpolation::interpolate_all()`] for every body; only `Transform` is written,
//!   the simulation is unchanged, and moves by the user snap. See [`interpolation`].
//! - **Seeing the colliders**: with the cargo feature `debug-render`, `PhysicsDebugPlugin`
//!   draws collider outlines, AABBs, contacts, joints and body axes with Bevy gizmos,
//!   configured by the `PhysicsGizmos` gizmo group and per entity by `DebugRender`.
//! - **Inspectors and scenes**: every public component and resource derives `Reflect` and is
//!   registered by the plugin; joints map their entities when a scene is loaded, and the
//!   `serialize` feature adds `serde` derives (scenes to RON). See [`reflection`] for what a
//!   scene carries and what is recomputed on load.
//!
//! Cargo features, all off by default: `parallel` (multi-threaded narrow phase and contact
//! solve), `debug-render` (Bevy's `bevy_gizmos`, not its renderer), `serialize` (`serde`
//! for components, settings resources and collider shapes).
//!
//! ## Bad input
//!
//! Every public input is checked where it enters the step: non-finite poses or velocities,
//! zero-size or invalid colliders, non-positive masses, bad friction, restitution, density,
//! damping, joint limits, motors and compliance, gravity, substep count, and constraints
//! naming missing entities are reported once with `warn!` naming the entity (or resource) and
//! the value, then replaced by a documented fallback; nothing panics and the rest of the world
//! keeps simulating. Despawning anything at any time is safe. The full table of inputs, what is
//! rejected and the fallback is in [`validation`].
//!
//! Level and save files are input too. A collider read from a file is rebuilt from its shape's
//! data through the same checked constructors (`collision::shape_data`, feature
//! `serialize`), never trusted as parry's internal structures, and every count or size a file
//! can set (substeps, XPBD passes, mesh and heightfield sizes, hull points, ...) has a cap,
//! listed with its reason in [`validation`].
//!
//! ## Panics in user code
//!
//! A panic in your code during a step (a collision hook, a custom constraint, a custom parry
//! shape queried by the parallel narrow phase) reaches the caller of `App::update` with its
//! own message, as it would without the `parallel` feature: a worker thread's panic is carried
//! to the calling thread once every worker has left the stage, no thread waits for work that
//! will never finish, and the compute pool's threads serve the next step of any world. After
//! a caught panic:
//!
//! - the physics schedules are intact (the engine puts them back, with their executors reset),
//!   but Bevy 0.19 drops every schedule of its own that a panic unwinds through (`Main`,
//!   `FixedMain`, the physics schedule's parent), so that app cannot `update()` again; its
//!   world can still step by running [`PhysicsSchedule`] directly, or be saved as a scene;
//! - bodies hold their state from before the step, or part of the step's results if the panic
//!   came while they were written back; the next step starts from what they hold;
//! - the step's contacts may be half updated: pairs found again in the next step keep their
//!   warm-start impulses or start from zero, and collision messages of the failed step may be
//!   missing.

#![warn(missing_docs)]

// Lets the derive macros' `::impetus3d::...` paths resolve inside this crate too.
extern crate self as impetus3d;

/// The README's examples, compiled as doctests so they cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub mod body;
pub mod character;
pub mod collision;
#[cfg(feature = "debug-render")]
pub mod debug_render;
pub mod diagnostics;
pub mod interpolation;
pub mod math;
mod parallel;
#[cfg(feature = "picking")]
pub mod picking;
mod prefetch;
pub mod reflection;
pub mod schedule;
pub mod settings;
pub mod sleeping;
pub mod snapshot;
pub mod solver;
pub mod spatial_query;
pub mod validation;
pub mod vehicle;

/// Compatibility path for code written against engines that keep the solver under
/// `dynamics::solver` (for example `dynamics::solver::xpbd::XpbdConstraint`).
pub mod dynamics {
    pub use crate::solver;
}

pub use body::*;
pub use character::*;
pub use collision::*;
#[cfg(feature = "debug-render")]
pub use debug_render::{DebugRender, PhysicsDebugPlugin, PhysicsDebugSystems, PhysicsGizmos};
pub use interpolation::{
    PhysicsInterpolation, PhysicsInterpolationPlugin, PhysicsInterpolationSystems,
    TransformExtrapolation, TransformInterpolation,
};
pub use schedule::*;
pub use settings::{Gravity, SolverConfig, SolverLanes};
pub use sleeping::{BodyFellAsleep, BodyWoke, SleepEventsEnabled, SleepThreshold};
pub use snapshot::PhysicsSnapshot;
pub use solver::{RigidBodyQueryItem, SolverBodies, SweepMode, SweptCcd};
pub use spatial_query::*;
pub use vehicle::{VehicleController, VehicleInput, VehicleState};

use std::marker::PhantomData;

use bevy::app::{FixedPostUpdate, PluginGroup, PluginGroupBuilder};
use bevy::ecs::schedule::{InternedScheduleLabel, ScheduleLabel};
use bevy::ecs::system::SystemParamItem;
use bevy::prelude::*;

/// Everything a user of the engine needs.
pub mod prelude {
    pub use crate::body::{
        AngularDamping, AngularInertia, AngularVelocity, CenterOfMass, ColliderDensity,
        ComputedMass, ConstantForce, ConstantTorque, CreationOrder, ExternalImpulse, Forces,
        GravityScale, KinematicTarget, LinearDamping, LinearVelocity, LockedAxes, Mass, Position,
        RigidBody, Rotation, Sleeping, SleepingDisabled,
    };
    pub use crate::character::{
        CharacterController, CharacterControllerState, GroundContact, MoveAndSlide,
        MoveAndSlideConfig, MoveAndSlideOutput, SlideHit, move_and_slide,
    };
    pub use crate::collision::{
        ActiveCollisionHooks, CoefficientCombine, Collider, ColliderAabb, ColliderDisabled,
        ColliderOf, CollidingEntities, CollisionEnd, CollisionEventsEnabled, CollisionHooks,
        CollisionHooksPlugin, CollisionLayers, CollisionStart, Collisions, ContactForce,
        ContactForceThreshold, ContactPair, ContactPairMut, ContactPoint, Friction, IntoCollider,
        LayerMask, MassPropertiesBundle, PhysicsLayer, Restitution, Sensor,
    };
    #[cfg(feature = "collider-from-mesh")]
    pub use crate::collision::{
        ColliderConstructor, ColliderConstructorHierarchy, ColliderConstructorHierarchyConfig,
        ColliderConstructorHierarchyReady, ColliderConstructorReady, VhacdFillMode,
        VhacdParameters,
    };
    #[cfg(feature = "debug-render")]
    pub use crate::debug_render::{
        DebugRender, PhysicsDebugPlugin, PhysicsDebugSystems, PhysicsGizmos,
    };
    pub use crate::diagnostics::{PhysicsDiagnostics, PhysicsDiagnosticsPlugin};
    pub use crate::interpolation::{
        PhysicsInterpolation, PhysicsInterpolationPlugin, PhysicsInterpolationSystems,
        TransformExtrapolation, TransformInterpolation,
    };
    pub use crate::math::{Scalar, Vector};
    #[cfg(feature = "picking")]
    pub use crate::picking::{
        PhysicsPickable, PhysicsPickingFilter, PhysicsPickingPlugin, PhysicsPickingSettings,
    };
    pub use crate::schedule::{
        PhysicsSchedule, PhysicsStepSet, PhysicsStepTime, PhysicsSystems, SolverSet, SubstepCount,
        SubstepSchedule, SubstepSolverSet, ThreadUse,
    };
    pub use crate::settings::{Gravity, SolverConfig, SolverLanes};
    pub use crate::sleeping::{BodyFellAsleep, BodyWoke, SleepEventsEnabled, SleepThreshold};
    pub use crate::snapshot::{PhysicsSnapshot, physics_checksum};
    pub use crate::solver::joints::{
        D6Axis, D6Drive, D6Joint, D6Limit, D6Motion, DistanceJoint, FixedJoint, Joint, JointBroken,
        JointMotor, JointSpring, MotorTarget, PrismaticJoint, RevoluteJoint, SphericalJoint,
        SpringCoefficients,
    };
    pub use crate::solver::rows::{
        ConstraintRow, RowMode, RowSink, RowSoftness, VelocityConstraint, solve_velocity_constraint,
    };
    pub use crate::solver::xpbd::{
        AngularConstraint, ConstraintDisabled, PositionConstraint, XpbdConstraint, XpbdIterations,
        solve_constraint,
    };
    pub use crate::solver::{RigidBodyQueryItem, SweepMode, SweptCcd};
    pub use crate::spatial_query::{
        PointProjectionHit, RayCaster, RayHitData, RayHits, ShapeCastConfig, ShapeCaster,
        ShapeHitData, ShapeHits, SpatialQuery, SpatialQueryFilter, update_spatial_query_pipeline,
    };
    pub use crate::vehicle::{
        AntiRollBar, Differential, Engine, Gearbox, Suspension, Tyre, VehicleController,
        VehicleInput, VehicleState, Wheel, WheelCast, WheelState,
    };
    pub use crate::{PhysicsPlugin, PhysicsPlugins};
}

/// The physics engine. Add it once; it runs one physics step per run of its parent schedule.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// App::new().add_plugins((MinimalPlugins, PhysicsPlugin::default()));
/// // Or step once per frame instead of at the fixed rate:
/// App::new().add_plugins((MinimalPlugins, PhysicsPlugin::new(Update)));
/// ```
///
/// `H` is the app's [`CollisionHooks`] type, `()` (no hooks) unless set with
/// [`with_collision_hooks`](Self::with_collision_hooks).
pub struct PhysicsPlugin<H = ()> {
    schedule: InternedScheduleLabel,
    hooks: PhantomData<fn() -> H>,
}

impl<H> std::fmt::Debug for PhysicsPlugin<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PhysicsPlugin")
            .field("schedule", &self.schedule)
            .field("hooks", &std::any::type_name::<H>())
            .finish()
    }
}

impl Default for PhysicsPlugin {
    /// Steps in `FixedPostUpdate`.
    fn default() -> Self {
        Self::new(FixedPostUpdate)
    }
}

impl PhysicsPlugin {
    /// Steps once per run of `schedule`, by that schedule's `Time` delta.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
            hooks: PhantomData,
        }
    }
}

impl<H> PhysicsPlugin<H> {
    /// Runs the [`CollisionHooks`] `H` for colliders with [`ActiveCollisionHooks`]:
    /// `PhysicsPlugin::default().with_collision_hooks::<MyHooks>()`.
    pub fn with_collision_hooks<H2>(self) -> PhysicsPlugin<H2>
    where
        H2: CollisionHooks + 'static,
        for<'w, 's> SystemParamItem<'w, 's, H2>: CollisionHooks,
    {
        PhysicsPlugin {
            schedule: self.schedule,
            hooks: PhantomData,
        }
    }
}

impl<H> Plugin for PhysicsPlugin<H>
where
    H: CollisionHooks + 'static,
    for<'w, 's> SystemParamItem<'w, 's, H>: CollisionHooks,
{
    fn build(&self, app: &mut App) {
        app.add_plugins(PhysicsPlugins::new(self.schedule).with_collision_hooks::<H>());
    }
}

/// A headless [`App`] that advances exactly one physics step of `timestep` seconds per
/// [`App::update`]: `MinimalPlugins`, [`PhysicsPlugin`], `Time<Fixed>` at `timestep` and time
/// advanced manually by `timestep` per update. The clocks are started with one update, so the
/// next update is the first step. For tests, benchmarks and servers.
///
/// ```
/// let mut app = impetus3d::headless_app(1.0 / 60.0);
/// app.update(); // one physics step
/// assert_eq!(app.world().resource::<impetus3d::PhysicsStepTime>().step_count, 1);
/// ```
pub fn headless_app(timestep: f64) -> App {
    use bevy::time::TimeUpdateStrategy;
    let step = std::time::Duration::from_secs_f64(timestep);
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, PhysicsPlugin::default()))
        .insert_resource(Time::<Fixed>::from_duration(step))
        .insert_resource(TimeUpdateStrategy::ManualDuration(step));
    app.update();
    app
}

/// The per-stage plugins [`PhysicsPlugin`] adds, for users who want to replace one. `H` is the
/// [`CollisionHooks`] type, as for [`PhysicsPlugin`].
pub struct PhysicsPlugins<H = ()> {
    schedule: InternedScheduleLabel,
    hooks: PhantomData<fn() -> H>,
}

impl<H> std::fmt::Debug for PhysicsPlugins<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PhysicsPlugins")
            .field("schedule", &self.schedule)
            .field("hooks", &std::any::type_name::<H>())
            .finish()
    }
}

impl Default for PhysicsPlugins {
    /// Steps in `FixedPostUpdate`, as [`PhysicsPlugin::default`] does: `PhysicsPlugins` is the
    /// same engine as a plugin group, whose stages can be replaced or disabled one by one.
    fn default() -> Self {
        Self::new(FixedPostUpdate)
    }
}

impl PhysicsPlugins {
    /// The stage plugins, stepping in `schedule`.
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self {
            schedule: schedule.intern(),
            hooks: PhantomData,
        }
    }
}

impl<H> PhysicsPlugins<H> {
    /// Runs the [`CollisionHooks`] `H`; see [`PhysicsPlugin::with_collision_hooks`].
    pub fn with_collision_hooks<H2>(self) -> PhysicsPlugins<H2>
    where
        H2: CollisionHooks + 'static,
        for<'w, 's> SystemParamItem<'w, 's, H2>: CollisionHooks,
    {
        PhysicsPlugins {
            schedule: self.schedule,
            hooks: PhantomData,
        }
    }
}

impl<H> PluginGroup for PhysicsPlugins<H>
where
    H: CollisionHooks + 'static,
    for<'w, 's> SystemParamItem<'w, 's, H>: CollisionHooks,
{
    fn build(self) -> PluginGroupBuilder {
        let group = PluginGroupBuilder::start::<Self>();
        #[cfg(feature = "collider-from-mesh")]
        let group = group.add(collision::ColliderConstructorPlugin);
        group
            .add(schedule::PhysicsSchedulePlugin {
                parent: self.schedule,
            })
            .add(body::sync::SyncPlugin)
            .add(collision::ColliderPlugin)
            .add(collision::BroadPhasePlugin)
            .add(collision::NarrowPhasePlugin)
            .add(collision::CollisionHooksPlugin::<H>::default())
            .add(solver::SolverPlugin)
            .add(solver::joints::JointPlugin)
            .add(solver::ccd::SweptCcdPlugin)
            .add(sleeping::SleepingPlugin)
            .add(spatial_query::SpatialQueryPlugin)
            .add(character::CharacterPlugin)
            .add(vehicle::VehiclePlugin)
            .add(interpolation::PhysicsInterpolationPlugin::default())
            .add(reflection::ReflectionPlugin)
    }
}

#[cfg(test)]
mod platform_math_tests {
    //! Tests that need the whole engine and its internals (the crate root may use every
    //! module; the modules' own tests may not reach above their stage).
    use crate::collision::ContactGraph;
    use crate::prelude::*;
    use bevy::prelude::*;
    use parry3d::shape::PackedFeatureId;

    /// Drops `body` onto the apex of a static pyramid-shaped hull for 120 steps, optionally
    /// wiping every contact point's feature ids after each step, and returns its final pose.
    fn drop_on_hull(body: Collider, wipe_feature_ids: bool) -> (Vec3, Quat) {
        let mut app = crate::headless_app(1.0 / 60.0);
        let corners = [(2.0, 2.0), (2.0, -2.0), (-2.0, 2.0), (-2.0, -2.0)];
        let mut points: Vec<Vec3> = corners.map(|(x, z)| Vec3::new(x, 0.0, z)).into();
        points.push(Vec3::new(0.0, 1.5, 0.0));
        let hull = Collider::convex_hull(points).unwrap();
        app.world_mut().spawn((RigidBody::Static, hull));
        let dropped = (app.world_mut())
            .spawn((RigidBody::Dynamic, body, Transform::from_xyz(0.2, 2.2, 0.1)))
            .id();
        for _ in 0..120 {
            app.update();
            if wipe_feature_ids {
                let mut graph = app.world_mut().resource_mut::<ContactGraph>();
                let points = (graph.pairs.iter_mut())
                    .flat_map(|pair| &mut pair.manifolds)
                    .flat_map(|manifold| &mut manifold.points);
                for point in points {
                    (point.fid1, point.fid2) = (PackedFeatureId::UNKNOWN, PackedFeatureId::UNKNOWN);
                }
            }
        }
        let world = app.world();
        let position = world.get::<Position>(dropped).unwrap().0;
        (position, world.get::<Rotation>(dropped).unwrap().0)
    }

    /// parry computes the feature id of a ball's contact on a convex hull with the platform's
    /// `sin_cos` (of the constant 1°), which may differ between C libraries in the last bit.
    /// The feature id decides nothing: a ball–hull manifold has one point, which keeps its
    /// impulse whatever its id, and the engine reads no feature ids. A ball rolling off a
    /// hull's apex over its faces and edges ends at the same bits with every id wiped each
    /// step. A box, whose manifolds match points to last step's by feature id to carry their
    /// impulses, does not: the wipe reaches results where ids are read.
    #[test]
    fn a_balls_feature_ids_on_a_hull_decide_nothing() {
        let ball = || Collider::sphere(0.3);
        let bits = |(p, q): (Vec3, Quat)| {
            (
                p.to_array().map(f32::to_bits),
                q.to_array().map(f32::to_bits),
            )
        };
        let (kept, wiped) = (drop_on_hull(ball(), false), drop_on_hull(ball(), true));
        assert!(kept.0.y < 1.0, "the ball rolled off the apex: {kept:?}");
        assert_eq!(bits(kept), bits(wiped));

        let cube = || Collider::cuboid(0.6, 0.6, 0.6);
        let (kept, wiped) = (drop_on_hull(cube(), false), drop_on_hull(cube(), true));
        assert_ne!(
            bits(kept),
            bits(wiped),
            "a box's contacts read their feature ids"
        );
    }
}
