//! Smooth rendering between fixed physics steps.
//!
//! Physics steps at a fixed rate (64 Hz by default) while the screen refreshes at its own (60,
//! 120, 144 Hz...). A body whose [`Transform`] only changes when a step runs is drawn in the
//! same place for several frames and then jumps, which looks like stutter. Two components fix
//! that for the bodies that carry them, by writing a *visual* pose to `Transform` every frame
//! (in `PostUpdate`, before transform propagation):
//!
//! - [`TransformInterpolation`] draws the body between its last two physics poses: the pose at
//!   the start of the last step and the pose after it, blended by how far the clock has run
//!   into the next step (`Time<Fixed>::overstep_fraction`, the fraction α ∈ [0, 1)): the
//!   translation is lerped and the rotation slerped. The body is drawn up to one step late,
//!   and always on its real path.
//! - [`TransformExtrapolation`] draws the body where its velocity takes it from the latest
//!   physics pose over the overstep time `t`: the centre of mass moves by `v·t` and the
//!   rotation turns by `ω·t` (about the centre of mass). Nothing is late, but a body that hits
//!   something is drawn a little past it until the next step.
//!
//! Add [`PhysicsInterpolation::interpolate_all()`] (or `extrapolate_all()`) as a resource, or
//! use [`PhysicsInterpolationPlugin::interpolate_all()`] in
//! [`PhysicsPlugins`](crate::PhysicsPlugins), to give every dynamic and kinematic body the
//! component as it is spawned.
//!
//! ```
//! # use bevy::prelude::*;
//! # use impetus3d::prelude::*;
//! fn spawn_ball(mut commands: Commands) {
//!     commands.spawn((
//!         RigidBody::Dynamic,
//!         Collider::sphere(0.5),
//!         Transform::from_xyz(0.0, 4.0, 0.0),
//!         TransformInterpolation,
//!     ));
//! }
//! # bevy::ecs::system::assert_is_system(spawn_ball);
//! // Or for every body:
//! App::new()
//!     .add_plugins((MinimalPlugins, PhysicsPlugin::default()))
//!     .insert_resource(PhysicsInterpolation::interpolate_all());
//! ```
//!
//! ## What is touched
//!
//! Only `Transform`. [`Position`], [`Rotation`] and the velocities are never written, so the
//! simulation is bit-for-bit the same with or without these components. Before the next
//! physics step (at the start of each frame's fixed-step loop, in `RunFixedMainLoop`, so your
//! `FixedUpdate` systems read physics poses too; and again at the start of the step), the
//! `Transform` of every such body is put back to its physics pose, so the engine's
//! `Transform` → `Position` sync does not mistake the visual pose for a move by the user.
//!
//! ## Teleports snap
//!
//! Moving a body yourself is never smeared over the frames that follow:
//!
//! - writing `Transform`: the visual pose is written only while `Transform` still holds the
//!   pose the engine put there; a `Transform` written by the user (before or after the visual
//!   write, in any schedule) is left alone, drawn as it is, and applied as a teleport by the
//!   next step. Between the visual write and the next step the engine tells the two apart by
//!   remembering the visual pose it wrote.
//! - writing [`Position`]/[`Rotation`]: the body is drawn at the new pose at once, and the
//!   next step's interpolation starts from it.
//!
//! ## Costs
//!
//! Bodies without either component cost nothing: the systems only visit bodies that have one
//! (through an internal state component they require, which is not reflected and is inserted
//! again with the marker when a scene is loaded). Per interpolated body: one copy of its pose
//! per physics step, and one blend and `Transform` comparison per frame; nothing is allocated.
//!
//! The overstep is read from `Time<Fixed>`: interpolation is meant for the default
//! fixed-step schedule ([`PhysicsPlugin::default`](crate::PhysicsPlugin::default)). With the
//! physics stepping in `Update`, the overstep is always zero and the visual pose is the
//! physics pose.

use bevy::app::{RunFixedMainLoop, RunFixedMainLoopSystems};
use bevy::prelude::*;
use bevy::transform::TransformSystems;

use crate::body::{
    AngularVelocity, ComputedMass, LinearVelocity, PoseSync, Position, RigidBody, Rotation,
};
use crate::math::{Quaternion, Scalar, Vector, is_finite_quat};
use crate::schedule::{PhysicsSchedule, PhysicsStepSet};

/// Draws the body between its last two physics poses, blended by the fixed clock's overstep
/// fraction (see the [module docs](self)).
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # let mut world = World::new();
/// world.spawn((RigidBody::Dynamic, Collider::cuboid(1.0, 1.0, 1.0), TransformInterpolation));
/// ```
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
#[require(VisualPose)]
pub struct TransformInterpolation;

/// Draws the body where its velocity takes it from its latest physics pose over the fixed
/// clock's overstep time (see the [module docs](self)). If a body has both this and
/// [`TransformInterpolation`], it is interpolated.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// # let mut world = World::new();
/// world.spawn((RigidBody::Dynamic, Collider::sphere(0.1), TransformExtrapolation));
/// ```
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
#[require(VisualPose)]
pub struct TransformExtrapolation;

/// Which bodies get a visual pose without a component of their own. Default: none (only
/// bodies with [`TransformInterpolation`] or [`TransformExtrapolation`]).
///
/// When a flag is on, every dynamic or kinematic body that has neither component is given
/// one: bodies spawned later as they are spawned, and the bodies already there when the
/// resource changes. (Turning a flag off leaves the components given so far; remove them to
/// stop.) If both flags are on, bodies are interpolated.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// let mut app = App::new();
/// app.add_plugins((MinimalPlugins, PhysicsPlugin::default()))
///     .insert_resource(PhysicsInterpolation::interpolate_all());
/// ```
#[derive(Resource, Reflect, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[reflect(Resource, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct PhysicsInterpolation {
    /// Give every dynamic and kinematic body [`TransformInterpolation`].
    pub interpolate_all: bool,
    /// Give every dynamic and kinematic body [`TransformExtrapolation`].
    pub extrapolate_all: bool,
}

impl PhysicsInterpolation {
    /// Interpolate every dynamic and kinematic body.
    pub const fn interpolate_all() -> Self {
        Self {
            interpolate_all: true,
            extrapolate_all: false,
        }
    }

    /// Extrapolate every dynamic and kinematic body.
    pub const fn extrapolate_all() -> Self {
        Self {
            interpolate_all: false,
            extrapolate_all: true,
        }
    }
}

/// The system set that writes the visual poses, in `PostUpdate` before
/// `TransformSystems::Propagate`. Order a camera that follows a body after it.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// #[derive(Component)]
/// struct Player;
///
/// fn follow(
///     player: Single<&Transform, (With<Player>, Without<Camera3dMarker>)>,
///     mut camera: Single<&mut Transform, With<Camera3dMarker>>,
/// ) {
///     camera.translation = player.translation + Vec3::new(0.0, 3.0, 8.0);
/// }
/// # #[derive(Component)]
/// # struct Camera3dMarker;
/// App::new()
///     .add_plugins((MinimalPlugins, PhysicsPlugin::default()))
///     .add_systems(PostUpdate, follow.after(PhysicsInterpolationSystems));
/// ```
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PhysicsInterpolationSystems;

/// Transform interpolation and extrapolation (see the [module docs](self)). Part of
/// [`PhysicsPlugins`], with no body interpolated unless it asks; configure it with
/// `PhysicsPlugins::new(FixedPostUpdate).set(PhysicsInterpolationPlugin::interpolate_all())`, or
/// insert the [`PhysicsInterpolation`] resource.
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// App::new().add_plugins((
///     MinimalPlugins,
///     PhysicsPlugins::new(FixedPostUpdate).set(PhysicsInterpolationPlugin::interpolate_all()),
/// ));
/// ```
///
/// [`PhysicsPlugins`]: crate::PhysicsPlugins
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhysicsInterpolationPlugin {
    /// The settings the plugin starts with. With the default (no flag on), a
    /// [`PhysicsInterpolation`] resource the app already has is kept.
    pub settings: PhysicsInterpolation,
}

impl PhysicsInterpolationPlugin {
    /// Interpolates every dynamic and kinematic body.
    pub const fn interpolate_all() -> Self {
        Self {
            settings: PhysicsInterpolation::interpolate_all(),
        }
    }

    /// Extrapolates every dynamic and kinematic body.
    pub const fn extrapolate_all() -> Self {
        Self {
            settings: PhysicsInterpolation::extrapolate_all(),
        }
    }
}

impl Plugin for PhysicsInterpolationPlugin {
    fn build(&self, app: &mut App) {
        if self.settings == PhysicsInterpolation::default() {
            app.init_resource::<PhysicsInterpolation>();
        } else {
            app.insert_resource(self.settings);
        }
        app.register_type::<TransformInterpolation>()
            .register_type::<TransformExtrapolation>()
            .register_type::<PhysicsInterpolation>()
            .add_observer(mark_new_body)
            .add_systems(
                RunFixedMainLoop,
                restore_physics_pose.in_set(RunFixedMainLoopSystems::BeforeFixedMainLoop),
            )
            .add_systems(
                PhysicsSchedule,
                (
                    // Again at the start of the step, for a physics schedule outside the
                    // fixed-step loop (a no-op when the pose was put back already).
                    restore_physics_pose
                        .in_set(PhysicsStepSet::Prepare)
                        .before(crate::body::sync::transform_to_position),
                    record_step_start
                        .in_set(PhysicsStepSet::Prepare)
                        .after(crate::body::reject_non_finite_velocities)
                        .before(crate::collision::mass_properties::update_mass_properties),
                ),
            )
            .configure_sets(
                PostUpdate,
                PhysicsInterpolationSystems.before(TransformSystems::Propagate),
            )
            .add_systems(
                PostUpdate,
                (
                    mark_existing_bodies.run_if(resource_changed::<PhysicsInterpolation>),
                    write_visual_pose,
                )
                    .chain()
                    .in_set(PhysicsInterpolationSystems),
            );
    }
}

/// A body's pose: translation and rotation.
type Pose = (Vector, Quaternion);

/// The state behind a body's visual pose. Internal: required by the two markers, so it comes
/// back with them when a scene is loaded, and filled again by the first step.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct VisualPose {
    /// The physics pose at the start of the last step, after the user's moves were applied.
    start: Option<Pose>,
    /// The pose last written to `Transform` as a visual pose, until it is put back.
    written: Option<Pose>,
}

/// Bodies that get a marker from [`PhysicsInterpolation`]: no marker yet, not static.
type Unmarked = (
    Without<TransformInterpolation>,
    Without<TransformExtrapolation>,
);

/// Gives a new body the marker [`PhysicsInterpolation`] asks for.
fn mark_new_body(
    add: On<Add, RigidBody>,
    settings: Res<PhysicsInterpolation>,
    bodies: Query<&RigidBody, Unmarked>,
    mut commands: Commands,
) {
    if let Ok(body) = bodies.get(add.entity) {
        mark(&mut commands, add.entity, *body, *settings);
    }
}

/// Gives the bodies already there the marker [`PhysicsInterpolation`] asks for, when it changes.
fn mark_existing_bodies(
    settings: Res<PhysicsInterpolation>,
    bodies: Query<(Entity, &RigidBody), Unmarked>,
    mut commands: Commands,
) {
    if *settings == PhysicsInterpolation::default() {
        return;
    }
    for (entity, body) in &bodies {
        mark(&mut commands, entity, *body, *settings);
    }
}

fn mark(commands: &mut Commands, entity: Entity, body: RigidBody, settings: PhysicsInterpolation) {
    if body.is_static() {
        return;
    }
    if settings.interpolate_all {
        commands.entity(entity).insert(TransformInterpolation);
    } else if settings.extrapolate_all {
        commands.entity(entity).insert(TransformExtrapolation);
    }
}

/// Puts the physics pose back into the `Transform` of bodies that still show the visual pose,
/// before any fixed step of the frame. A `Transform` the user wrote since is left for the
/// step's sync to apply as a teleport.
fn restore_physics_pose(mut bodies: Query<(&mut Transform, &PoseSync, &mut VisualPose)>) {
    for (mut transform, sync, mut state) in &mut bodies {
        let Some(written) = state.written.take() else {
            continue;
        };
        if (transform.translation, transform.rotation) == written && sync.initialized {
            transform.translation = sync.translation;
            transform.rotation = sync.rotation;
        }
    }
}

/// Records where each body starts the step (after user moves were applied to its pose).
fn record_step_start(mut bodies: Query<(&Position, &Rotation, &mut VisualPose)>) {
    for (position, rotation, mut state) in &mut bodies {
        state.start = Some((position.0, rotation.0));
    }
}

/// A body's parts read by [`write_visual_pose`].
type VisualBody = (
    &'static mut Transform,
    &'static Position,
    &'static Rotation,
    &'static PoseSync,
    &'static mut VisualPose,
    Has<TransformInterpolation>,
    Option<&'static LinearVelocity>,
    Option<&'static AngularVelocity>,
    Option<&'static ComputedMass>,
);

/// Writes each body's visual pose to its `Transform`.
fn write_visual_pose(time: Res<Time<Fixed>>, mut bodies: Query<VisualBody>) {
    let alpha = time.overstep_fraction();
    let overstep = time.overstep().as_secs_f32();
    for (mut transform, position, rotation, sync, mut state, interpolate, v, w, mass) in &mut bodies
    {
        state.written = None;
        let synced = (sync.translation, sync.rotation);
        // The user wrote `Transform` since the engine last did: leave it, it is a teleport.
        if !sync.initialized || (transform.translation, transform.rotation) != synced {
            continue;
        }
        let current = (position.0, rotation.0);
        let pose = if current != synced {
            // Moved through `Position`/`Rotation` since the step: drawn there at once.
            current
        } else if interpolate {
            state
                .start
                .map_or(current, |start| blend(start, current, alpha))
        } else {
            let v = v.map_or(Vector::ZERO, |v| v.0);
            let w = w.map_or(Vector::ZERO, |w| w.0);
            let com = mass.map_or(Vector::ZERO, ComputedMass::local_center_of_mass);
            predict(current, v, w, com, overstep)
        };
        let finite = |(t, r): Pose| t.is_finite() && is_finite_quat(r);
        let pose = match (finite(pose), finite(current)) {
            (true, _) => pose,
            (false, true) => current,
            // A non-finite pose the user wrote: left for the step to reject, not drawn.
            (false, false) => continue,
        };
        if (transform.translation, transform.rotation) != pose {
            transform.translation = pose.0;
            transform.rotation = pose.1;
        }
        state.written = Some(pose);
    }
}

/// The pose a fraction `alpha` of the way from `start` to `end`: translation lerped, rotation
/// slerped (both exact when the ends are equal).
// Drawn only: the step never reads it back, so platform math is allowed (see `crate::math`).
#[allow(clippy::disallowed_methods)]
pub(crate) fn blend(start: Pose, end: Pose, alpha: Scalar) -> Pose {
    let translation = start.0 + (end.0 - start.0) * alpha;
    let rotation = if start.1 == end.1 {
        end.1
    } else {
        start.1.slerp(end.1, alpha)
    };
    (translation, rotation)
}

/// The pose after `t` seconds at linear velocity `v` (of the centre of mass, at `com` in the
/// body frame) and angular velocity `w`.
// Drawn only, like `blend`.
#[allow(clippy::disallowed_methods)]
pub(crate) fn predict(pose: Pose, v: Vector, w: Vector, com: Vector, t: Scalar) -> Pose {
    if t == 0.0 || (v == Vector::ZERO && w == Vector::ZERO) {
        return pose;
    }
    let rotation = (Quaternion::from_scaled_axis(w * t) * pose.1).normalize();
    let center = pose.0 + pose.1 * com + v * t;
    (center - rotation * com, rotation)
}
