//! Reflection: every public component and resource is registered with the app's
//! [`AppTypeRegistry`], so it shows in inspectors and travels through Bevy scenes
//! (`bevy_world_serialization`'s `DynamicWorld`).
//!
//! Each type derives [`Reflect`] with the type data it can have: `Component` or `Resource`,
//! and `Default`, `Debug` and `PartialEq` where the type implements them. Joints also register
//! `MapEntities` and map their two bodies when a scene is written into a world, as do the
//! other components that name entities ([`ColliderOf`], [`CollidingEntities`], the casters'
//! filters and hits, the character controller's filter and ground). [`Collider`] wraps a parry
//! shape, which cannot be reflected field by field: it is reflected as an opaque value (a
//! clone of the whole collider).
//!
//! With the `serialize` cargo feature every component and settings resource also derives
//! `serde`'s `Serialize` and `Deserialize` (registered as `ReflectSerialize` /
//! `ReflectDeserialize`), so a scene can be saved to RON and loaded back. A collider is written
//! as the data that describes its shape and rebuilt from it through the checked constructors
//! when read, never as parry's internal structures (see `collision::shape_data`): a level
//! file is untrusted input, and a tampered shape loads as an ignored collider with a warning.
//!
//! ## Scenes
//!
//! A scene of a physics world (all entities, or just the bodies, colliders and joints you
//! choose) can be written into another world, where entities get new ids:
//!
//! ```
//! use bevy::ecs::entity::EntityHashMap;
//! use bevy::prelude::*;
//! use bevy::world_serialization::DynamicWorld; // Bevy feature `bevy_world_serialization`
//! use impetus3d::prelude::*;
//!
//! let mut app = impetus3d::headless_app(1.0 / 64.0);
//! let a = app.world_mut().spawn((RigidBody::Dynamic, Collider::sphere(0.5))).id();
//! let b = app.world_mut().spawn((RigidBody::Dynamic, Collider::sphere(0.5))).id();
//! app.world_mut().spawn(DistanceJoint::new(a, b).with_rest_length(2.0));
//! app.update();
//!
//! let scene = DynamicWorld::from_world(app.world());
//! let mut other = impetus3d::headless_app(1.0 / 64.0);
//! let mut map = EntityHashMap::default();
//! scene.write_to_world(other.world_mut(), &mut map).unwrap();
//! let joint = other.world_mut().query::<&DistanceJoint>().single(other.world()).unwrap();
//! assert_eq!(XpbdConstraint::<2>::entities(joint), [map[&a], map[&b]]);
//! ```
//!
//! (Bevy's own `Time<Real>` has no serde form: leave Bevy's clocks out of a scene you write to
//! RON, with `DynamicWorldBuilder::deny_resource`.)
//!
//! What a scene carries and what the loading world recomputes:
//!
//! | carried (reflected with their values) | recomputed on load |
//! | --- | --- |
//! | everything a user sets: body kind, pose, velocities, mass overrides, forces, damping, locked axes, sleeping, colliders and their materials and layers, sensors, joints (with their anchors, limits, motors and the relative rotation a fixed joint locked in), casters, character controllers, swept CCD, the settings resources ([`Gravity`], [`SubstepCount`], [`SolverConfig`], [`ThreadUse`], [`SleepThreshold`], [`XpbdIterations`]) | the engine's per-step working state: [`ContactGraph`], [`SolverBodies`], [`VelocityRows`] and [`VelocityConstraintCaches`] are registered but reflect no fields, so a scene carries them empty and the loading world keeps its own. Contacts are found again by the first step after loading, so warm starting begins from zero impulses. |
//! | the engine's bookkeeping components, so that a whole-world round trip restores the bodies as they were: [`PoseSync`] (the pose last exchanged with `Transform`; without it a loaded body counts as moved by the user and wakes up), [`ComputedMass`], [`SleepTimer`], [`ColliderPose`], [`ColliderOf`], [`DisabledCollider`], [`CollidingEntities`], hits of casters, [`CharacterControllerState`], [`PhysicsStepTime`] | the interpolation plugin's per-body state (inserted again with `TransformInterpolation` / `TransformExtrapolation`, and filled by the first step) |
//!
//! The marker components of [`interpolation`](crate::interpolation) and the
//! [`PhysicsInterpolation`](crate::interpolation::PhysicsInterpolation) resource are carried
//! too.
//!
//! A loaded world steps exactly as the original did until bodies touch; contact pairs are
//! ordered by entity, and with the new ids the contact solve rounds differently (in the scene
//! tests, by less than a millimetre over 200 steps of tumbling and sliding).
//!
//! `Transform`, `GlobalTransform`, `ChildOf` and `Children` are registered too (Bevy does so
//! only with its `reflect_auto_register` feature): a body's pose is checked against its
//! `Transform`, and child colliders need their hierarchy.
//!
//! [`ColliderOf`]: crate::collision::ColliderOf
//! [`CollidingEntities`]: crate::collision::CollidingEntities
//! [`Collider`]: crate::collision::Collider
//! [`Gravity`]: crate::settings::Gravity
//! [`SubstepCount`]: crate::schedule::SubstepCount
//! [`SolverConfig`]: crate::settings::SolverConfig
//! [`ThreadUse`]: crate::schedule::ThreadUse
//! [`SleepThreshold`]: crate::sleeping::SleepThreshold
//! [`XpbdIterations`]: crate::solver::xpbd::XpbdIterations
//! [`ContactGraph`]: crate::collision::ContactGraph
//! [`SolverBodies`]: crate::solver::SolverBodies
//! [`VelocityRows`]: crate::solver::rows::VelocityRows
//! [`VelocityConstraintCaches`]: crate::solver::rows::VelocityConstraintCaches
//! [`PoseSync`]: crate::body::PoseSync
//! [`ComputedMass`]: crate::body::ComputedMass
//! [`SleepTimer`]: crate::body::SleepTimer
//! [`ColliderPose`]: crate::collision::collider::ColliderPose
//! [`DisabledCollider`]: crate::collision::collider::DisabledCollider
//! [`CharacterControllerState`]: crate::character::CharacterControllerState
//! [`PhysicsStepTime`]: crate::schedule::PhysicsStepTime

use bevy::prelude::*;

use crate::body::{
    AngularDamping, AngularVelocity, CenterOfMass, ColliderDensity, ComputedMass, ConstantForce,
    ConstantTorque, ExternalImpulse, GravityScale, KinematicTarget, LinearDamping, LinearVelocity,
    LockedAxes, Mass, PoseSync, Position, RigidBody, Rotation, SleepTimer, Sleeping,
    SleepingDisabled,
};
use crate::character::{
    CharacterController, CharacterControllerState, MoveAndSlideConfig, SlideHit,
};
use crate::collision::collider::{ColliderPose, DisabledCollider};
use crate::collision::{
    ActiveCollisionHooks, CoefficientCombine, Collider, ColliderDisabled, ColliderOf,
    CollidingEntities, CollisionEventsEnabled, CollisionLayers, ContactForceThreshold,
    ContactGraph, Friction, Restitution, Sensor,
};
use crate::schedule::{PhysicsStepTime, SubstepCount, ThreadUse};
use crate::settings::{Gravity, SolverConfig};
use crate::sleeping::{SleepEventsEnabled, SleepThreshold};
use crate::solver::joints::{
    D6Axis, D6Drive, D6Joint, D6Limit, D6Motion, DistanceJoint, FixedJoint, JointBase, JointMotor,
    JointSpring, MotorTarget, PrismaticJoint, RevoluteJoint, SphericalJoint, SpringCoefficients,
};
use crate::solver::rows::{VelocityConstraintCaches, VelocityRows};
use crate::solver::xpbd::{ConstraintDisabled, XpbdIterations};
use crate::solver::{SolverBodies, SweepMode, SweptCcd};
use crate::spatial_query::{
    PointProjectionHit, RayCaster, RayHitData, RayHits, ShapeCastConfig, ShapeCaster, ShapeHitData,
    ShapeHits, SpatialQueryFilter,
};

/// Registers every reflected type of the engine with the app (part of
/// [`PhysicsPlugins`](crate::PhysicsPlugins)).
pub(crate) struct ReflectionPlugin;

impl Plugin for ReflectionPlugin {
    fn build(&self, app: &mut App) {
        // Bodies.
        app.register_type::<RigidBody>()
            .register_type::<crate::body::CreationOrder>()
            .register_type::<crate::body::CreationCounter>()
            .register_type::<Position>()
            .register_type::<Rotation>()
            .register_type::<LinearVelocity>()
            .register_type::<AngularVelocity>()
            .register_type::<Mass>()
            .register_type::<CenterOfMass>()
            .register_type::<crate::body::AngularInertia>()
            .register_type::<ColliderDensity>()
            .register_type::<ComputedMass>()
            .register_type::<GravityScale>()
            .register_type::<LinearDamping>()
            .register_type::<AngularDamping>()
            .register_type::<ConstantForce>()
            .register_type::<ConstantTorque>()
            .register_type::<ExternalImpulse>()
            .register_type::<LockedAxes>()
            .register_type::<KinematicTarget>()
            .register_type::<PoseSync>()
            .register_type::<Sleeping>()
            .register_type::<SleepingDisabled>()
            .register_type::<SleepEventsEnabled>()
            .register_type::<SleepTimer>();
        // Colliders and collision.
        app.register_type::<Collider>()
            .register_type::<CoefficientCombine>()
            .register_type::<Friction>()
            .register_type::<Restitution>()
            .register_type::<Sensor>()
            .register_type::<ColliderDisabled>()
            .register_type::<CollisionLayers>()
            .register_type::<ColliderOf>()
            .register_type::<ColliderPose>()
            .register_type::<DisabledCollider>()
            .register_type::<CollisionEventsEnabled>()
            .register_type::<CollidingEntities>()
            .register_type::<ContactForceThreshold>()
            .register_type::<ActiveCollisionHooks>()
            .register_type::<ContactGraph>();
        // Solver, joints and constraints.
        app.register_type::<SolverBodies>()
            .register_type::<VelocityRows>()
            .register_type::<VelocityConstraintCaches>()
            .register_type::<SweptCcd>()
            .register_type::<SweepMode>()
            .register_type::<ConstraintDisabled>()
            .register_type::<XpbdIterations>()
            .register_type::<JointBase>()
            .register_type::<JointMotor>()
            .register_type::<MotorTarget>()
            .register_type::<JointSpring>()
            .register_type::<SpringCoefficients>()
            .register_type::<FixedJoint>()
            .register_type::<DistanceJoint>()
            .register_type::<SphericalJoint>()
            .register_type::<RevoluteJoint>()
            .register_type::<PrismaticJoint>()
            .register_type::<D6Joint>()
            .register_type::<D6Axis>()
            .register_type::<D6Motion>()
            .register_type::<D6Limit>()
            .register_type::<D6Drive>();
        // Spatial queries and the character controller.
        app.register_type::<SpatialQueryFilter>()
            .register_type::<RayCaster>()
            .register_type::<RayHits>()
            .register_type::<RayHitData>()
            .register_type::<ShapeCaster>()
            .register_type::<ShapeHits>()
            .register_type::<ShapeHitData>()
            .register_type::<ShapeCastConfig>()
            .register_type::<PointProjectionHit>()
            .register_type::<CharacterController>()
            .register_type::<CharacterControllerState>()
            .register_type::<MoveAndSlideConfig>()
            .register_type::<SlideHit>();
        // Settings and step timing.
        app.register_type::<Gravity>()
            .register_type::<SubstepCount>()
            .register_type::<SolverConfig>()
            .register_type::<crate::settings::SolverLanes>()
            .register_type::<ThreadUse>()
            .register_type::<SleepThreshold>()
            .register_type::<PhysicsStepTime>();
        // Bevy's own types the engine reads, which Bevy registers only with its
        // `reflect_auto_register` feature.
        app.register_type::<Transform>()
            .register_type::<GlobalTransform>()
            .register_type::<ChildOf>()
            .register_type::<Children>();
    }
}
