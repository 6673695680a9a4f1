//! Extended position-based dynamics (XPBD) constraints, generic over how many bodies they
//! connect.
//!
//! A constraint is a component implementing [`XpbdConstraint<N>`]: it names `N` body entities
//! and moves them, at the position level, so that a constraint function `C` goes to zero. Each
//! substep, after the contact solver has moved the bodies, [`solve_constraint::<C, N>`] hands
//! every constraint of type `C` mutable views of its bodies ([`RigidBodyQueryItem`]) straight
//! from the dense solver storage, and [`SubstepSolverSet::XpbdVelocityProjection`] then turns the
//! position changes into velocities, so contacts and joints agree.
//!
//! ## Theory
//!
//! Following Macklin, Müller and Chentanez, "XPBD: Position-Based Simulation of Compliant
//! Constrained Dynamics" (2016) and Müller et al., "Detailed Rigid Body Simulation with
//! Extended Position Based Dynamics" (2020): with compliance α (inverse stiffness) and substep
//! `h`, the Lagrange multiplier update is
//!
//! `Δλ = (−C − α̃ λ) / (Σ wᵢ |∇Cᵢ|² + α̃)`, with `α̃ = α / h²`,
//!
//! and body `i` moves by `Δxᵢ = Δλ wᵢ ∇Cᵢ`. For a rigid body hit at offset `r` from its centre of
//! mass along unit direction `n`, the generalized inverse mass is
//! `w = 1/m + (r × n)ᵀ I⁻¹ (r × n)`; for a rotation about unit axis `n` it is `w = nᵀ I⁻¹ n`.
//! Rotations are applied as `q ← q + ½ (Δθ, 0) q`; the many small corrections of one substep
//! leave the rotation unnormalised (the error is second order in the angle), and the velocity
//! projection renormalises each body once per substep. The force a constraint applies during a
//! substep is `λ n / h²`.
//!
//! ## How constraints are run
//!
//! The built-in joints are prepared into dense lists once per step and solved on compact body
//! records (see [`joints`](crate::solver::joints)); they run first, in
//! [`SubstepSolverSet::SolveXpbdConstraints`], and write the bodies' poses back before the user
//! constraints run.
//!
//! A user constraint type is run by its own [`solve_constraint::<C, N>`] system in
//! [`SubstepSolverSet::SolveUserConstraints`], on [`RigidBodyQueryItem`] views of the dense
//! solver bodies. The constraints' entities are resolved to solver slots once per step, on the
//! first substep (a sleeping body a constraint wakes is caught up through the substeps
//! already run). Each substep then walks the constraints' query once per pass, zipped with the
//! resolved slots: the first pass clears each constraint's multipliers just before solving it
//! and checks, constraint by constraint, that the query still visits them in the resolved
//! order; if constraints were added or removed since (by a user system in the substep
//! schedule), they are resolved again and the pass goes on where it was. Nothing else of the
//! ECS is touched, and nothing allocates once the buffers have grown.
//!
//! [`SubstepSolverSet::SolveXpbdConstraints`]: crate::SubstepSolverSet::SolveXpbdConstraints
//! [`SubstepSolverSet::SolveUserConstraints`]: crate::SubstepSolverSet::SolveUserConstraints
//!
//! ## Conventions
//!
//! Gradients are given for the first body: a positional correction moves body 1 by
//! `+Δλ w₁ n` and body 2 by `−Δλ w₂ n` (at their anchors); an angular correction turns body 1 by
//! `+Δλ I₁⁻¹ n` and body 2 by `−Δλ I₂⁻¹ n`. So for `C = |p₁ − p₂| − d`, `n = (p₁ − p₂) / |p₁ − p₂|`.
//!
//! ## Writing a constraint
//!
//! ```
//! use bevy::ecs::entity::{EntityMapper, MapEntities};
//! use bevy::prelude::*;
//! use impetus3d::prelude::*;
//! use impetus3d::solver::xpbd::{PositionConstraint, XpbdConstraint, solve_constraint};
//!
//! /// Keeps a body's centre of mass at a fixed height.
//! #[derive(Component)]
//! #[require(CreationOrder)] // solved in spawn order on every peer
//! struct Height {
//!     body: Entity,
//!     height: f32,
//!     lagrange: f32,
//! }
//!
//! impl XpbdConstraint<1> for Height {
//!     fn entities(&self) -> [Entity; 1] {
//!         [self.body]
//!     }
//!     fn clear_lagrange_multipliers(&mut self) {
//!         self.lagrange = 0.0;
//!     }
//!     fn solve(&mut self, [body]: [&mut RigidBodyQueryItem; 1], dt: f32) {
//!         let c = body.current_center_of_mass().y - self.height;
//!         let w = body.inverse_mass();
//!         let delta = self.compute_lagrange_update(self.lagrange, c, &[w], 0.0, dt);
//!         self.lagrange += delta;
//!         body.accumulated_translation.y += delta * w;
//!     }
//! }
//!
//! impl MapEntities for Height {
//!     fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
//!         self.body = mapper.get_mapped(self.body);
//!     }
//! }
//!
//! let mut app = App::new();
//! app.add_plugins((MinimalPlugins, PhysicsPlugin::default()));
//! app.add_systems(
//!     SubstepSchedule,
//!     solve_constraint::<Height, 1>.in_set(SubstepSolverSet::SolveUserConstraints),
//! );
//! ```
//!
//! [`SubstepSolverSet::XpbdVelocityProjection`]: crate::SubstepSolverSet::XpbdVelocityProjection

mod constraint;
mod projection;

pub use constraint::{
    AngularConstraint, ConstraintDisabled, ConstraintSlots, ConstraintSolver, PositionConstraint,
    XpbdConstraint, XpbdIterations, solve_constraint,
};
pub(crate) use constraint::{ParticipantData, lagrange_update, resolve};
pub(crate) use projection::{project_velocities, record_xpbd_starts};

pub use super::RigidBodyQueryItem;
