//! Semi-implicit Euler integration inside each substep.
//!
//! Velocities first (gravity, constant forces, damping), then positions from the new
//! velocities. Rotations use the first-order quaternion update, renormalised. Damping uses the
//! implicit form `v / (1 + h c)` on the previous velocity (as Box2D does), which is stable for
//! any coefficient and leaves the weight of a resting body unchanged.

use bevy::prelude::*;

use super::solver_body::SolverBodies;
use crate::PhysicsStepTime;
use crate::math::integrate_rotation;

/// Adds gravity, constant forces and damping to every dynamic body's velocity.
pub(crate) fn integrate_velocities(mut solver: ResMut<SolverBodies>, time: Res<PhysicsStepTime>) {
    let h = time.substep_delta;
    for body in solver.bodies.iter_mut().skip(1) {
        if body.inverse_mass == 0.0 {
            continue;
        }
        // Damping acts on the velocity the body had, not on this substep's gravity: a body
        // held at rest must still weigh m g.
        body.linear_velocity *= 1.0 / (1.0 + h * body.linear_damping);
        body.angular_velocity *= 1.0 / (1.0 + h * body.angular_damping);
        body.linear_velocity += body.linear_acceleration * h;
        body.angular_velocity += body.angular_acceleration * h;
    }
}

/// Moves every dynamic and kinematic body by its velocity, and records the pose the XPBD sets
/// start from.
pub(crate) fn integrate_positions(mut solver: ResMut<SolverBodies>, time: Res<PhysicsStepTime>) {
    let h = time.substep_delta;
    for body in solver.bodies.iter_mut().skip(1) {
        if !body.rb.is_static() {
            body.accumulated_translation += body.linear_velocity * h;
            body.rotation = integrate_rotation(body.rotation, body.angular_velocity * h);
            body.turned = body.turned_since_start();
        }
        if body.constrained {
            body.substep_inverse_inertia = body.world_inv_inertia_now();
        }
        body.pre_xpbd_center = body.current_center_of_mass();
        body.pre_xpbd_rotation = body.rotation;
    }
}
