//! Wheeled vehicles: a [`VehicleController`] on a dynamic chassis body, with wheels that find
//! the ground by casting, suspensions, tyres, an engine, a gearbox, differentials, brakes,
//! steering and anti-roll bars.
//!
//! ```
//! use bevy::prelude::*;
//! use impetus3d::prelude::*;
//!
//! let mut app = impetus3d::headless_app(1.0 / 64.0);
//! app.world_mut().spawn((
//!     RigidBody::Static,
//!     Collider::cuboid(200.0, 1.0, 200.0),
//!     Transform::from_xyz(0.0, -0.5, 0.0),
//! ));
//! let car = app
//!     .world_mut()
//!     .spawn((
//!         RigidBody::Dynamic,
//!         Collider::cuboid(1.8, 0.5, 4.2),
//!         Mass(1_500.0),
//!         VehicleController::default(),
//!         Transform::from_xyz(0.0, 0.7, 0.0),
//!     ))
//!     .id();
//! app.world_mut().get_mut::<VehicleInput>(car).unwrap().throttle = 1.0;
//! for _ in 0..128 {
//!     app.update();
//! }
//! let state = app.world().get::<VehicleState>(car).unwrap();
//! assert!(state.forward_speed > 5.0 && state.wheels.iter().all(|w| w.in_contact));
//! // A wheel mesh that is a child of the chassis takes `state.wheels[i].local_transform()`.
//! ```
//!
//! The game writes [`VehicleInput`] (throttle, brake, steering, handbrake) and reads
//! [`VehicleState`] (gear, engine speed, and per wheel: contact, suspension length and force,
//! slip, tyre forces, spin, and the wheel's pose for rendering). The chassis's local −Z is
//! forward, +Y up.
//!
//! ## The step
//!
//! Once per physics step, in [`PhysicsStepSet::Prepare`]
//! after the mass update and before the broad phase and solver, each vehicle on its own:
//!
//! 1. **Gearbox and engine.** The driven wheels' mean spin times the gear's overall ratio gives
//!    the engine speed (at least idle: the clutch slips at launch); the automatic box shifts
//!    one gear at its shift speeds; the throttle times the torque curve at that speed, times
//!    the overall ratio and the efficiency, is split by each open differential equally
//!    between its two wheels.
//! 2. **Ground.** Each wheel casts a ray (or its cylinder) from its hard point down the
//!    chassis's −Y, as far as full extension; the hit gives the suspension length, the contact
//!    point and the ground's normal, as in Bullet's `btRaycastVehicle` and its ports (rapier's
//!    `DynamicRayCastVehicleController`) and Jolt's `VehicleCollisionTester`s.
//! 3. **Suspension.** A linear spring from full extension plus a damper on the rate of
//!    compression, never pulling, pushes the chassis along the ground's normal at the contact
//!    point (an explicit force over the step). Anti-roll bars move force between the two
//!    sides of an axle by their difference in compression (as Jolt's `VehicleAntiRollBar`).
//!    Below the shortest length the wheel is on its bump stop, a one-sided velocity row with
//!    a Baumgarte correction.
//! 4. **Wheels and tyres.** Each wheel spins with its own inertia under the drive torque; the
//!    brake, handbrake and rolling resistance form one row that holds the spin towards zero
//!    up to their summed torque; and the tyre's longitudinal and lateral rows act between the
//!    contact patch and the ground, on the chassis at the contact point and on the wheel's
//!    spin. These rows are solved together by a few Gauss–Seidel passes with accumulated,
//!    clamped impulses (sequential impulses, Catto, "Iterative Dynamics with Temporal
//!    Coherence", GDC 2005), against the chassis's velocity after gravity, so that a resting
//!    vehicle is held, not nudged.
//! 5. The sum of the impulses on the chassis, divided by the step, is the vehicle's force and
//!    torque for the step; the solver adds them in every substep beside gravity (so that they
//!    balance it through the step, and a parked vehicle does not creep by the difference
//!    between an impulse at the step's start and gravity's pull through it), together with
//!    the chassis's own contacts and joints.
//!
//! The vehicles only read the spatial-query tree (as the previous step left it) and change
//! their own chassis, so the order of the vehicles does not matter and the step stays
//! deterministic.
//!
//! ## The tyre model
//!
//! Slip follows Pacejka, *Tire and Vehicle Dynamics* (3rd ed., 2012), ch. 1: the longitudinal
//! slip ratio `κ = (ω r − v_x) / |v_x|` and the lateral slip `tan α = v_y / |v_x|` of the
//! contact patch, here with the reference speed `max(|v_x|, |ω r|, 1 m/s)` so that a locked
//! wheel slips by −1 and standstill is not singular. Below saturation the tyre's force is
//! linear in slip, `F = −N · C · slip` with stiffness coefficients per unit load (the brush
//! model's small-slip limit, Pacejka ch. 3, with `C_κ / N ≈ 15` and `C_α / N ≈ 12` per
//! radian typical of car tyres); its size is capped by the friction circle `μ N`, with `μ`
//! falling from its peak to the sliding value as the combined slip grows from `peak_slip` to
//! 1, the shape of the Magic Formula's curves past their peak (and of Jolt's
//! `WheelSettingsWV` friction curves, from which the idea of slip-dependent limits on
//! friction rows comes). The linear force is applied implicitly: a soft row of softness
//! `γ = v_ref / (C dt)` (the mass–spring–damper form of Catto, "Soft Constraints", GDC 2011),
//! stable at any speed; at low speed the reference speed floors at 1 cm/s, which makes the
//! grip nearly rigid, so a parked car does not creep. With the drive on the spin and the
//! rolling resistance `C_rr N r` on it (Gillespie, *Fundamentals of Vehicle Dynamics*, 1992,
//! ch. 4), a car reaches the top speed where its wheels' drive force
//! `T(rpm) · ratio · final drive · efficiency / r` equals the quadratic drag `½ ρ C_d A v²`
//! plus `C_rr m g`, and a car with locked wheels stops in `v² / (2 μ_sliding g)`.
//!
//! ## Bad input and limits
//!
//! [`VehicleController`] and [`VehicleInput`] are checked whenever they change: a non-finite
//! or out-of-range value is replaced by its default (or clamped), a differential or anti-roll
//! bar naming a wheel that does not exist is dropped, and each is reported once with `warn!`
//! naming the entity. A controller without wheels does nothing; one on an entity without a
//! dynamic [`RigidBody`](crate::RigidBody) does nothing and is reported once.
//!
//! [`VehicleState`] carries the wheels' spin and the gear from one step to the next, and
//! [`PhysicsSnapshot`](crate::PhysicsSnapshot) does not capture it: a rollback game saves and
//! restores it with its own components (as it does [`VehicleInput`]).
//!
//! Not modelled: the ground's own motion and the tyre's reaction on a dynamic body it stands on
//! (the ground is taken at rest, as Bullet's vehicle does for the suspension), the ground
//! collider's [`Friction`](crate::Friction) (the tyre's coefficients alone count), engine
//! braking and inertia, clutch, limited-slip differentials, Ackermann steering geometry and
//! camber.

mod powertrain;
mod settings;
mod state;
mod step;
mod tyre;

pub use settings::{
    AntiRollBar, Differential, Engine, Gearbox, MAX_SOLVER_ITERATIONS, Suspension, Tyre,
    VehicleController, Wheel, WheelCast,
};
pub use state::{VehicleInput, VehicleState, WheelState};

use bevy::prelude::*;

use crate::schedule::{PhysicsSchedule, PhysicsStepSet, SubstepSchedule, SubstepSolverSet};
use crate::validation::ValidationApp;

/// Steps [`VehicleController`]s in [`PhysicsStepSet::Prepare`], after the mass update and
/// before sleeping bodies are woken by changed velocities.
pub(crate) struct VehiclePlugin;

impl Plugin for VehiclePlugin {
    fn build(&self, app: &mut App) {
        app.register_type::<VehicleController>()
            .register_type::<VehicleInput>()
            .register_type::<VehicleState>()
            .validate_component::<VehicleController>()
            .validate_component::<VehicleInput>()
            .init_resource::<step::VehicleForces>()
            .add_systems(
                SubstepSchedule,
                step::apply_vehicle_forces
                    .in_set(SubstepSolverSet::IntegrateVelocities)
                    .after(crate::solver::integrator::integrate_velocities),
            )
            .add_systems(
                PhysicsSchedule,
                step::step_vehicles
                    .in_set(PhysicsStepSet::Prepare)
                    .after(crate::validation::ValidationSet)
                    .after(crate::body::reject_non_finite_velocities)
                    .after(crate::collision::mass_properties::update_mass_properties)
                    .before(crate::sleeping::wake_on_user_changes),
            );
    }
}
