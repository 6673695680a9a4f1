//! Kinematic targets: the velocities that carry a kinematic body to its
//! [`KinematicTarget`] over one step, and the pose set to the target at the step's end.
//!
//! See [`KinematicTarget`] for the rules and why the angular velocity is chosen as it is.

use bevy::prelude::*;

use crate::body::{
    AngularVelocity, ComputedMass, KinematicTarget, LinearVelocity, Position, RigidBody, Rotation,
};
use crate::math::{Quaternion, Scalar, Vector, atan2, tan};
use crate::schedule::PhysicsStepTime;
use crate::solver::SolverBodies;

/// What [`drive_kinematic_targets`] reads and writes of a body with a target.
type TargetData = (
    Entity,
    Ref<'static, KinematicTarget>,
    Ref<'static, RigidBody>,
    &'static Position,
    &'static Rotation,
    &'static ComputedMass,
    &'static mut LinearVelocity,
    &'static mut AngularVelocity,
);

/// Sets the velocities of kinematic bodies with a [`KinematicTarget`] to reach it over this
/// step, warning about targets that cannot be used when they (or the body kind) change.
pub(crate) fn drive_kinematic_targets(mut bodies: Query<TargetData>, time: Res<PhysicsStepTime>) {
    let (h, substeps) = (time.substep_delta, time.substeps.max(1));
    for (entity, target, rb, position, rotation, mass, mut v, mut w) in &mut bodies {
        let Some(to) = usable_target(entity, &target, &rb) else {
            continue;
        };
        let from = (position.0, rotation.0);
        let com = mass.local_center_of_mass;
        let (linear, angular) = velocities_to(from, to, com, h, substeps);
        // Unchanged velocities (a body holding its target) stay unchanged for change
        // detection, so they wake nothing.
        v.set_if_neq(LinearVelocity(linear));
        w.set_if_neq(AngularVelocity(angular));
    }
}

/// The target as a pose if it can be used on this body; warns (when it or the body kind
/// changed since the last step) if not.
fn usable_target(
    entity: Entity,
    target: &Ref<KinematicTarget>,
    rb: &Ref<RigidBody>,
) -> Option<(Vector, Quaternion)> {
    let changed = target.is_changed() || rb.is_changed();
    if !rb.is_kinematic() {
        if changed {
            warn!("{entity}: KinematicTarget on a {:?} body; ignored", **rb);
        }
        return None;
    }
    let pose = target.usable();
    if pose.is_none() && changed {
        warn!(
            "{entity}: KinematicTarget (position {}, rotation {}) is not finite or has a \
             zero-length rotation; ignored",
            target.position, target.rotation
        );
    }
    pose
}

/// The linear velocity (of the centre of mass `com`, in the body frame) and the angular
/// velocity that take a body from the pose `from` to the pose `to` over `substeps` substeps
/// of length `h`, by the integrator's rules: the centre moves by `v h` per substep, and the
/// rotation turns by `2 atan(|ω| h / 2)` about `ω` per substep (see
/// [`KinematicTarget`](crate::KinematicTarget#landing-exactly)).
pub(crate) fn velocities_to(
    from: (Vector, Quaternion),
    to: (Vector, Quaternion),
    com: Vector,
    h: Scalar,
    substeps: u32,
) -> (Vector, Vector) {
    let n = substeps as Scalar;
    let start_center = from.0 + from.1 * com;
    let end_center = to.0 + to.1 * com;
    let linear = (end_center - start_center) / (n * h);
    (linear, angular_velocity_to(from.1, to.1, h, n))
}

/// The angular velocity whose `n` substeps of the first-order quaternion update turn `from`
/// into `to` along the shorter arc: the turn `θ` split into `n` equal turns, each
/// `2 atan(|ω| h / 2)`.
fn angular_velocity_to(from: Quaternion, to: Quaternion, h: Scalar, n: Scalar) -> Vector {
    if from == to {
        return Vector::ZERO;
    }
    let delta = to * from.conjugate();
    let delta = if delta.w < 0.0 { -delta } else { delta };
    let axis = Vector::new(delta.x, delta.y, delta.z);
    let sin_half = axis.length();
    if sin_half == 0.0 {
        return Vector::ZERO;
    }
    let half_turn = atan2(sin_half, delta.w);
    let speed = 2.0 / h * tan(half_turn / n);
    axis * (speed / sin_half)
}

/// Sets the pose of every kinematic body that moved to its target this step to the target
/// itself: the integration reaches it up to float rounding, and a body holding its target
/// must not drift by that rounding (nor move, and so keep bodies on it awake, at the next
/// step). Its velocities stay those of the step.
pub(crate) fn snap_to_kinematic_targets(
    mut bodies: Query<(
        Entity,
        &KinematicTarget,
        &RigidBody,
        &mut Position,
        &mut Rotation,
    )>,
    solver: Res<SolverBodies>,
) {
    for (entity, target, rb, mut position, mut rotation) in &mut bodies {
        if !rb.is_kinematic() || solver.slot(entity).is_none() {
            continue;
        }
        if let Some((p, q)) = target.usable() {
            position.set_if_neq(Position(p));
            rotation.set_if_neq(Rotation(q));
        }
    }
}
