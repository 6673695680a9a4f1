//! Kinematic character controller: collide-and-slide on the spatial queries.
//!
//! [`move_and_slide`] moves a shape through the world by a displacement without ever ending
//! inside a collider: use it from any system with a [`SpatialQuery`](crate::SpatialQuery).
//! [`CharacterController`] does it every physics step for a [`RigidBody::Kinematic`](crate::RigidBody::Kinematic)
//! entity with a collider, walking at the game's `desired_velocity`, falling under gravity,
//! and reporting the ground in [`CharacterControllerState`].
//!
//! ```
//! use bevy::prelude::*;
//! use impetus3d::prelude::*;
//!
//! let mut app = impetus3d::headless_app(1.0 / 64.0);
//! app.world_mut().spawn((
//!     RigidBody::Static,
//!     Collider::cuboid(20.0, 1.0, 20.0),
//!     Transform::from_xyz(0.0, -0.5, 0.0),
//! ));
//! // A capsule 1.6 m tall whose foot starts 0.5 m above the floor.
//! let player = app
//!     .world_mut()
//!     .spawn((
//!         CharacterController {
//!             desired_velocity: Vec3::new(1.5, 0.0, 0.0),
//!             ..default()
//!         },
//!         Collider::capsule(0.3, 1.0),
//!         Transform::from_xyz(0.0, 1.3, 0.0),
//!     ))
//!     .id();
//! for _ in 0..64 {
//!     app.update();
//! }
//! let state = app.world().get::<CharacterControllerState>(player).unwrap();
//! assert!(state.grounded && state.ground_normal == Vec3::Y);
//! // Jump: the next steps rise at 4 m/s less gravity.
//! app.world_mut()
//!     .get_mut::<CharacterControllerState>(player)
//!     .unwrap()
//!     .jump(4.0);
//! ```
//!
//! ## How a character moves
//!
//! Each physics step, in [`PhysicsStepSet::Prepare`] after the
//! transform sync and before the broad phase:
//!
//! 1. The character's pose is its own [`Position`](crate::Position) (so a teleport through
//!    `Transform` or `Position` is honoured at once); the rest of the world is seen through
//!    the spatial-query tree as the previous step left it (plus any
//!    [`update_spatial_query_pipeline`](crate::update_spatial_query_pipeline) run since). The
//!    character's own colliders are never hit.
//! 2. If it overlaps a collider that does not yield (see pushing below), it is moved out to
//!    a skin width of gap by writing `Position` directly: a teleport, never a velocity, so it
//!    cannot launch what it touches.
//! 3. Vertical speed: gravity (the world's [`Gravity`](crate::Gravity) times the body's
//!    [`GravityScale`](crate::GravityScale)) accelerates it while the character is off the
//!    ground; on the ground it is zero. Set it (or call [`CharacterControllerState::jump`])
//!    to jump.
//! 4. The step's displacement, `(desired_velocity + push_velocity + up · vertical_speed) · dt`,
//!    is moved by collide-and-slide (below).
//! 5. The character's [`LinearVelocity`](crate::LinearVelocity) is set to displacement / dt.
//!    The solver then moves the kinematic body there exactly, and its contacts push the
//!    dynamic bodies it walks into with a kinematic body's infinite mass.
//!
//! ### Collide-and-slide
//!
//! The shape is cast along what is left of the motion; it travels until it is a skin width
//! from the first surface it would hit, and the rest of the motion is projected onto that
//! surface; this repeats up to `max_iterations` times. When the projected motion runs into a
//! surface met before in the same move it follows the crease between the two, and stops in a
//! corner of three. This is the "collide and slide" of Fauerby, *Improved Collision detection
//! and Response* (2003), with Quake's multi-plane clipping (`PM_SlideMove`), done with
//! swept-shape casts (parry's time of impact) instead of Fauerby's ellipsoid-triangle sweeps.
//!
//! Walking uses the semantics of the Unity and PhysX character controllers (PhysX guide,
//! "Character Controllers": `slopeLimit`, `stepOffset`; Unity `CharacterController`):
//!
//! - **Slopes**: a surface whose normal is within `max_slope_angle` (45° by default) of up is
//!   ground. On ground the motion keeps its horizontal part and tilts to follow the surface,
//!   so a character walks up and down a slope at its horizontal speed. A steeper surface is a
//!   wall when the motion would climb it: only the horizontal part of its normal is used, so
//!   the character never rises on it; falling on it, the character slides down it
//!   (gravity's part along it acts, as on a frictionless incline).
//! - **Steps**: when a non-walkable surface blocks a character that stands on ground, it tries
//!   to rise by up to `step_height` (0.3 m), move on by the rest of its horizontal motion, and
//!   come down on walkable ground. If it cannot move on at that height (the ledge is higher) or
//!   lands on a steep face, the step is refused and the surface is a wall. A capsule meets a
//!   ledge edge with its rounded bottom, so it may land on the edge and finish climbing over
//!   the next steps, at walking speed.
//! - **Ground**: after a move that started on ground and did not rise, the character is
//!   snapped down onto walkable ground within `snap_distance` (0.2 m), so it stays on slopes
//!   and small steps when walking down them. The ground normal reported is the face's normal,
//!   read by a short ray under the contact point (on an edge, the face the character stands
//!   on), not the rounded shape's contact normal.
//!
//! ### Pushing and being pushed
//!
//! - **Pushing**: dynamic bodies do not stop the character's casts (unless heavier than
//!   `max_push_mass`). The character walks into them, and the contact solver pushes them out
//!   of its way at its velocity, with kinematic infinite mass. A body that could not give way
//!   because a wall, the ground or a kinematic body is right behind it (a cast of its own
//!   shape along the push) is jammed, and stops the character like a wall; jamming is
//!   checked one body deep. Sleeping bodies pushed are woken.
//! - **Being pushed**: a dynamic or kinematic body moving towards the character, close enough
//!   to reach it this step, shares its closing speed along the contact normal as a perfectly
//!   inelastic collision would: the character gains `closing · m_body / (m_body + mass)`
//!   (all of it from a kinematic body), and the solver then slows the body to the character's
//!   new speed, so momentum is conserved. The gain goes into `push_velocity`, which carries the
//!   character on (and slides it along walls) and fades at `push_deceleration` while it is on
//!   the ground, as friction under its feet would. A body pushing steadily keeps sharing, so
//!   the pair slows as one. Bodies the character walks into while they stand still do not
//!   push it back (its walk has infinite mass); an infinite `mass` turns being pushed off.
//!
//! ### Limits
//!
//! Only the collider on the controller's own entity is cast. The character does not ride
//! moving platforms (it is carried only by their push). Other characters are kinematic
//! obstacles to each other. The character's rotation is kept as it is; the controller does not
//! touch its angular velocity.

mod controller;
mod slide;

pub use controller::{CharacterController, CharacterControllerState};
pub use slide::{
    GroundContact, MoveAndSlide, MoveAndSlideConfig, MoveAndSlideOutput, SlideHit, move_and_slide,
};

use bevy::prelude::*;

use crate::schedule::{PhysicsSchedule, PhysicsStepSet};

/// Moves [`CharacterController`]s in [`PhysicsStepSet::Prepare`], after the transform sync and
/// mass properties, before the broad phase.
pub(crate) struct CharacterPlugin;

impl Plugin for CharacterPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(
            PreUpdate,
            controller::find_ground_of_new_characters
                .after(crate::spatial_query::update_spatial_query_pipeline),
        )
        .add_systems(
            PhysicsSchedule,
            controller::move_characters
                .in_set(PhysicsStepSet::Prepare)
                .after(crate::body::reject_non_finite_velocities)
                .after(crate::collision::mass_properties::update_mass_properties),
        );
    }
}
