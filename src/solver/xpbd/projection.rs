//! Velocity projection: the velocity change that matches the XPBD position change.

use bevy::prelude::*;

use crate::math::angular_velocity_between;
use crate::schedule::PhysicsStepTime;
use crate::solver::SolverBodies;

/// Records where each body the XPBD sets act on is before they run (after the positions are
/// integrated; the relax pass that follows changes only velocities).
pub(crate) fn record_xpbd_starts(mut solver: ResMut<SolverBodies>) {
    let solver = &mut *solver;
    for i in 0..solver.xpbd_slots.len() {
        solver.record_xpbd_start(solver.xpbd_slots[i] as usize);
    }
}

/// Adds `(position change made by the XPBD sets) / h` to the linear velocity of each body they
/// act on, and the angular velocity of the rotation change to its angular velocity.
pub(crate) fn project_velocities(mut solver: ResMut<SolverBodies>, time: Res<PhysicsStepTime>) {
    let inv_h = 1.0 / time.substep_delta;
    let solver = &mut *solver;
    for i in 0..solver.xpbd_slots.len() {
        let slot = solver.xpbd_slots[i] as usize;
        if !solver.bodies[slot].is_dynamic() {
            continue;
        }
        let start = solver.xpbd_start[slot];
        let center = solver.center(slot);
        let state = &mut solver.states[slot];
        if center != start.center {
            state.linear_velocity += ((center - start.center) * inv_h).extend(0.0);
        }
        if state.rotation != start.rotation {
            // Constraint corrections skip renormalising; do it once here.
            state.rotation = state.rotation.normalize();
            // The change from `start` to now is the same in the rotations since the step's
            // start as in the bodies' rotations.
            let spin = angular_velocity_between(start.rotation, state.rotation, inv_h);
            state.angular_velocity += spin.extend(0.0);
        }
    }
}
