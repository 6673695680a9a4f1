//! Velocity projection: the velocity change that matches the XPBD position change.

use bevy::prelude::*;

use crate::math::angular_velocity_between;
use crate::schedule::PhysicsStepTime;
use crate::solver::SolverBodies;

/// Adds `(position change made by the XPBD sets) / h` to each body's linear velocity, and the
/// angular velocity of the rotation change to its angular velocity. Nothing to do in a step
/// without constraints: only the XPBD sets move bodies after the position integration.
pub(crate) fn project_velocities(mut solver: ResMut<SolverBodies>, time: Res<PhysicsStepTime>) {
    if !solver.xpbd_active {
        return;
    }
    let inv_h = 1.0 / time.substep_delta;
    for body in solver.bodies.iter_mut().skip(1) {
        if !body.is_dynamic() {
            continue;
        }
        let center = body.current_center_of_mass();
        if center != body.pre_xpbd_center {
            body.linear_velocity += (center - body.pre_xpbd_center) * inv_h;
        }
        if body.rotation != body.pre_xpbd_rotation {
            // Constraint corrections skip renormalising; do it once here.
            body.rotation = body.rotation.normalize();
            body.angular_velocity +=
                angular_velocity_between(body.pre_xpbd_rotation, body.rotation, inv_h);
            body.turned = body.turned_since_start();
        }
    }
}
