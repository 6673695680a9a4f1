//! What the game writes ([`VehicleInput`]) and reads back ([`VehicleState`]).

use bevy::prelude::*;

use crate::math::{Quaternion, Scalar, Vector};
use crate::validation::{Validate, check, join};

/// The driver's controls, written by the game; read once per physics step.
///
/// Out-of-range values are clamped and non-finite ones replaced by 0, with a warning.
#[derive(Component, Reflect, Clone, Copy, Debug, Default, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct VehicleInput {
    /// Accelerator, −1 to 1. Negative drives backwards: it brakes while the vehicle rolls
    /// forward faster than 1 m/s, then selects reverse.
    pub throttle: Scalar,
    /// Brake pedal, 0 to 1, a share of each wheel's
    /// [`max_brake_torque`](super::Wheel::max_brake_torque).
    pub brake: Scalar,
    /// Steering, −1 (full left) to 1 (full right), a share of each wheel's
    /// [`max_steer_angle`](super::Wheel::max_steer_angle).
    pub steering: Scalar,
    /// Handbrake, 0 to 1, a share of each wheel's
    /// [`max_handbrake_torque`](super::Wheel::max_handbrake_torque).
    pub handbrake: Scalar,
}

impl VehicleInput {
    /// True when no control is touched: a sleeping vehicle with idle controls is left asleep.
    pub fn is_idle(&self) -> bool {
        self.throttle == 0.0 && self.brake == 0.0 && self.steering == 0.0
    }
}

impl Validate for VehicleInput {
    fn validate(&mut self) -> Option<String> {
        let clamp = |value: &mut Scalar, low: Scalar, what: &str| {
            let problem = check(value, |v| v.is_finite(), what, "is not finite", 0.0);
            let clamped = value.clamp(low, 1.0);
            if problem.is_none() && clamped != *value {
                let message = format!("{what} {} is not in [{low}, 1]; using {clamped}", *value);
                *value = clamped;
                return Some(message);
            }
            problem
        };
        join([
            clamp(&mut self.throttle, -1.0, "throttle"),
            clamp(&mut self.brake, 0.0, "brake"),
            clamp(&mut self.steering, -1.0, "steering"),
            clamp(&mut self.handbrake, 0.0, "handbrake"),
        ])
        .map(|p| format!("VehicleInput {p}"))
    }
}

/// The vehicle's state after the last physics step, one [`WheelState`] per wheel in the
/// order of [`VehicleController::wheels`](super::VehicleController::wheels). Written by the
/// engine; the wheels' spin is kept here between steps.
#[derive(Component, Reflect, Clone, Debug, Default, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct VehicleState {
    /// Per wheel.
    pub wheels: Vec<WheelState>,
    /// Gear engaged: 1 and up forward, −1 reverse. Starts in first.
    pub gear: i32,
    /// Engine speed, rpm.
    pub engine_rpm: Scalar,
    /// The chassis's velocity along its forward axis, m/s (negative backwards).
    pub forward_speed: Scalar,
}

/// One wheel after the last physics step.
#[derive(Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct WheelState {
    /// Whether the wheel touches the ground.
    pub in_contact: bool,
    /// Where it touches, in world space (meaningless without contact).
    pub contact_point: Vector,
    /// The ground's normal there, in world space (meaningless without contact).
    pub contact_normal: Vector,
    /// Suspension length, m: the wheel centre's distance below the hard point, between the
    /// suspension's limits (its maximum off the ground).
    pub suspension_length: Scalar,
    /// Spring, damper and anti-roll bar force, N (0 off the ground).
    pub suspension_force: Scalar,
    /// Spin about the axle, rad/s, positive rolling forward.
    pub angular_velocity: Scalar,
    /// Spin angle about the axle, rad, in `[−π, π]`.
    pub rotation_angle: Scalar,
    /// Steering angle, rad, positive to the right.
    pub steer_angle: Scalar,
    /// Longitudinal slip ratio at the start of the step: `(ω r − v_x) / max(|v_x|, ω r, 1 m/s)`;
    /// positive when the wheel spins faster than the ground passes, −1 for a locked wheel.
    pub longitudinal_slip: Scalar,
    /// Lateral slip at the start of the step: `v_y / max(|v_x|, ω r, 1 m/s)`, the tangent of the
    /// slip angle at speed; positive when the contact slides to the wheel's right.
    pub lateral_slip: Scalar,
    /// Tyre force along the wheel's forward direction over the last step, N.
    pub longitudinal_force: Scalar,
    /// Tyre force along the wheel's right direction over the last step, N.
    pub lateral_force: Scalar,
    /// The wheel's centre in the chassis's local space: for a wheel mesh that is a child of
    /// the chassis.
    pub local_translation: Vector,
    /// The wheel's rotation in the chassis's local space (steering, then spin about the axle,
    /// local X).
    pub local_rotation: Quaternion,
}

impl Default for WheelState {
    fn default() -> Self {
        Self {
            in_contact: false,
            contact_point: Vector::ZERO,
            contact_normal: Vector::Y,
            suspension_length: 0.0,
            suspension_force: 0.0,
            angular_velocity: 0.0,
            rotation_angle: 0.0,
            steer_angle: 0.0,
            longitudinal_slip: 0.0,
            lateral_slip: 0.0,
            longitudinal_force: 0.0,
            lateral_force: 0.0,
            local_translation: Vector::ZERO,
            local_rotation: Quaternion::IDENTITY,
        }
    }
}

impl WheelState {
    /// The wheel's pose relative to the chassis, as a `Transform` for a child wheel mesh.
    pub fn local_transform(&self) -> Transform {
        Transform::from_translation(self.local_translation).with_rotation(self.local_rotation)
    }
}
