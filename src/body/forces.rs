//! [`Forces`]: query data for pushing bodies from a system by impulses.

use bevy::ecs::query::QueryData;

use super::{
    AngularVelocity, ComputedMass, LinearVelocity, LockedAxes, Position, RigidBody, Rotation,
};
use crate::math::{Matrix3, Vector, rotate_inertia};

/// Query data for changing a body's motion by impulses from a system: each `apply_*` changes
/// the velocities at once, by `Δv = J / m` and `Δω = I⁻¹ L` (the world inverse inertia at the
/// body's current rotation), so the next read sees the result and the next step moves by it.
///
/// Static and kinematic bodies have infinite mass and are not changed, nor are a body's
/// [`LockedAxes`]. A sleeping body is woken by the change. For a force that acts over time, use
/// [`ConstantForce`](super::ConstantForce) and [`ConstantTorque`](super::ConstantTorque).
///
/// ```
/// # use bevy::prelude::*;
/// # use impetus3d::prelude::*;
/// fn kick_up(mut bodies: Query<Forces>) {
///     for mut body in &mut bodies {
///         // 2 N·s upwards at a point 0.5 m to the side of the centre of mass: it rises and spins.
///         let point = body.center_of_mass() + Vec3::X * 0.5;
///         body.apply_linear_impulse_at_point(Vec3::Y * 2.0, point);
///     }
/// }
/// # bevy::ecs::system::assert_is_system(kick_up);
/// ```
#[derive(QueryData)]
#[query_data(mutable)]
pub struct Forces {
    body: &'static RigidBody,
    position: &'static Position,
    rotation: &'static Rotation,
    mass: &'static ComputedMass,
    locked: Option<&'static LockedAxes>,
    linear_velocity: &'static mut LinearVelocity,
    angular_velocity: &'static mut AngularVelocity,
}

impl ForcesItem<'_, '_> {
    /// The body's linear velocity, m/s.
    pub fn linear_velocity(&self) -> Vector {
        self.linear_velocity.0
    }

    /// The body's angular velocity, rad/s.
    pub fn angular_velocity(&self) -> Vector {
        self.angular_velocity.0
    }

    /// The body's centre of mass in world space.
    pub fn center_of_mass(&self) -> Vector {
        self.mass
            .world_center_of_mass(self.position.0, self.rotation.0)
    }

    /// The velocity of the body's material at the world point `point`, m/s.
    pub fn velocity_at_point(&self, point: Vector) -> Vector {
        let arm = point - self.center_of_mass();
        self.linear_velocity.0 + self.angular_velocity.0.cross(arm)
    }

    /// Applies a linear impulse `impulse` (N·s) through the centre of mass.
    pub fn apply_linear_impulse(&mut self, impulse: Vector) {
        if self.body.is_dynamic() {
            let mask = self.locked.map_or(Vector::ONE, |l| l.translation_mask());
            self.linear_velocity.0 += impulse * self.mass.inverse_mass() * mask;
        }
    }

    /// Applies an angular impulse `impulse` (N·m·s).
    pub fn apply_angular_impulse(&mut self, impulse: Vector) {
        if self.body.is_dynamic() {
            let world = rotate_inertia(self.mass.local_inverse_inertia(), self.rotation.0);
            // Locked axes take no part: the inverse inertia restricted to the free ones.
            let mask =
                Matrix3::from_diagonal(self.locked.map_or(Vector::ONE, |l| l.rotation_mask()));
            self.angular_velocity.0 += mask * world * mask * impulse;
        }
    }

    /// Applies a linear impulse `impulse` (N·s) at the world point `point`: it also turns the
    /// body by the angular impulse `(point − centre of mass) × impulse`.
    pub fn apply_linear_impulse_at_point(&mut self, impulse: Vector, point: Vector) {
        let arm = point - self.center_of_mass();
        self.apply_linear_impulse(impulse);
        self.apply_angular_impulse(arm.cross(impulse));
    }
}
