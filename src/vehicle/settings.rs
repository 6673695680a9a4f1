//! The vehicle's description: [`VehicleController`] and its parts, with their defaults and
//! their checks.

use bevy::prelude::*;

use crate::math::{Scalar, Vector};
use crate::validation::{Validate, check, join, non_negative};

/// A wheeled vehicle on the chassis body it is inserted on: its wheels, engine, gearbox,
/// differentials, anti-roll bars and resistances.
///
/// The chassis's local axes: **−Z is forward, +Y is up, +X is right** (Bevy's
/// `Transform::forward()` convention). Each wheel hangs below its hard point
/// ([`Wheel::position`]) along the chassis's local −Y.
///
/// The default is a rear-wheel-drive car of about 1,500 kg (the chassis's mass comes from its
/// collider or [`Mass`](crate::Mass)): wheels of 0.35 m radius on a 2.6 m wheelbase and a 1.6 m
/// track, steering front wheels, a handbrake on the rear wheels, anti-roll bars on both axles.
/// Insert it with the chassis's [`RigidBody::Dynamic`](crate::RigidBody::Dynamic) and collider;
/// [`VehicleInput`](super::VehicleInput) and [`VehicleState`](super::VehicleState) are added
/// with it.
#[derive(Component, Reflect, Clone, Debug, PartialEq)]
#[reflect(Component, Default, Debug, PartialEq)]
#[require(super::VehicleInput, super::VehicleState)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct VehicleController {
    /// The wheels, in an order the game chooses; [`Differential`] and [`AntiRollBar`] name
    /// them by index, and [`VehicleState::wheels`](super::VehicleState::wheels) follows it.
    pub wheels: Vec<Wheel>,
    /// The engine's torque curve and speeds.
    pub engine: Engine,
    /// Gear ratios, final drive and automatic shifting.
    pub gearbox: Gearbox,
    /// Which wheels the engine drives and with what share of its torque.
    pub differentials: Vec<Differential>,
    /// Springs between the suspensions of a left and a right wheel.
    pub anti_roll_bars: Vec<AntiRollBar>,
    /// Aerodynamic drag `½ ρ C_d A`, kg/m: a force `−drag · |v| · v` on the chassis's centre
    /// of mass, `v` its velocity. Default 0.4 (air at 1.2 kg/m³, `C_d` 0.3, 2.2 m² frontal
    /// area).
    pub drag: Scalar,
    /// Rolling-resistance coefficient `C_rr`: each wheel on the ground is braked by a torque
    /// `C_rr · N · radius`, `N` its load. Default 0.015 (a car tyre on asphalt).
    pub rolling_resistance: Scalar,
    /// How a wheel finds the ground. Default [`WheelCast::Ray`].
    pub wheel_cast: WheelCast,
    /// Passes over the wheels' friction, brake and bump-stop rows per step, 1 to
    /// [`MAX_SOLVER_ITERATIONS`]. Default 8.
    pub solver_iterations: u32,
}

/// How a wheel finds the ground each step.
#[derive(Reflect, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub enum WheelCast {
    /// A ray from the hard point straight down the suspension: the wheel touches the ground
    /// at one point below its centre. Cheap; kerbs and steps are met as a jump in height.
    #[default]
    Ray,
    /// The wheel's cylinder (radius and width) swept down the suspension: the wheel climbs a
    /// step along its rim's circle and touches the ground where the cylinder does.
    Cylinder,
}

/// One wheel, its suspension, tyre, steering and brakes.
#[derive(Reflect, Clone, Debug, PartialEq)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct Wheel {
    /// The hard point, in the chassis's local space: the top of the suspension, where the
    /// wheel's centre is at zero suspension length.
    pub position: Vector,
    /// Radius, m. Default 0.35.
    pub radius: Scalar,
    /// Width, m (for [`WheelCast::Cylinder`]). Default 0.2.
    pub width: Scalar,
    /// Moment of inertia about the axle, kg·m² (with the brake disc and the part of the
    /// drivetrain that turns with it). Default 1.0 (a 16 kg wheel of 0.35 m).
    pub inertia: Scalar,
    /// Spring, damper and travel.
    pub suspension: Suspension,
    /// Tyre friction.
    pub tyre: Tyre,
    /// Steering angle at full lock, rad (0: the wheel does not steer). Default 0.
    pub max_steer_angle: Scalar,
    /// Brake torque at full brake, N·m. Default 3,000.
    pub max_brake_torque: Scalar,
    /// Brake torque with the handbrake on, N·m (0: no handbrake on this wheel). Default 0.
    pub max_handbrake_torque: Scalar,
}

/// A suspension: a spring and a damper along the chassis's local −Y, between travel limits.
///
/// The spring pushes `preload + stiffness · (max_length − length)`: nothing at full
/// extension. Below `min_length` the wheel sits on its bump stop, a hard limit the chassis
/// cannot move past at that wheel.
#[derive(Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct Suspension {
    /// Shortest length (full compression, the bump stop), m. Default 0.05.
    pub min_length: Scalar,
    /// Longest length (full extension, the droop limit), m. Default 0.35.
    pub max_length: Scalar,
    /// Spring rate, N/m. Default 35,000: a 375 kg corner of the default car bounces at
    /// about 1.5 Hz and sits 0.1 m below full extension.
    pub stiffness: Scalar,
    /// Damping, N·s/m, against the rate of compression and extension alike. Default 3,000:
    /// a damping ratio of about 0.4 for that corner.
    pub damping: Scalar,
    /// Spring force at full extension, N. Default 0.
    pub preload: Scalar,
}

/// A tyre's friction: a linear slip model saturated by a friction circle.
///
/// Below saturation the force is `−N · stiffness · slip` on each axis, with the longitudinal
/// slip ratio and the lateral slip (the tangent of the slip angle) from the contact patch's
/// velocity over the ground; the total is capped at `μ · N`, where `μ` falls from
/// `peak_friction` at a combined slip of `peak_slip` to `sliding_friction` at a slip of 1 (a
/// locked wheel, or one sliding sideways). See the [module docs](super) for the sources.
#[derive(Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct Tyre {
    /// Friction coefficient at the peak of the curve. Default 1.0 (dry asphalt).
    pub peak_friction: Scalar,
    /// Friction coefficient of a fully sliding tyre. Default 0.8.
    pub sliding_friction: Scalar,
    /// Combined slip where the friction starts to fall from its peak. Default 0.1.
    pub peak_slip: Scalar,
    /// Longitudinal force per newton of load per unit slip ratio. Default 15.
    pub longitudinal_stiffness: Scalar,
    /// Lateral force per newton of load per unit lateral slip (`tan` of the slip angle).
    /// Default 12.
    pub lateral_stiffness: Scalar,
}

/// The engine: a torque curve between idle and the rev limit.
///
/// The torque at full throttle is read from `torque_curve` by linear interpolation (flat
/// beyond its ends) and is zero from `max_rpm` on (the rev limiter). The clutch is taken to
/// slip at low speed, so the engine never turns slower than `idle_rpm`. There is no engine
/// braking: at zero throttle the engine gives no torque.
#[derive(Reflect, Clone, Debug, PartialEq)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct Engine {
    /// Points `(rpm, torque in N·m)` at full throttle, in increasing rpm. Default: 250 N·m at
    /// 1,000 rpm, 320 N·m at 4,000, 280 N·m at 6,000.
    pub torque_curve: Vec<Vec2>,
    /// Idle speed, rpm. Default 900.
    pub idle_rpm: Scalar,
    /// Rev limit, rpm: no torque from here on. Default 6,500.
    pub max_rpm: Scalar,
}

/// The gearbox: forward ratios, a reverse ratio and the final drive, shifted automatically.
///
/// The wheels of a [`Differential`] turn `ratio · final_drive` times slower than the engine.
/// The box shifts up when the engine passes `shift_up_rpm` and down when it falls below
/// `shift_down_rpm`, one gear a step. Throttle below zero selects reverse once the vehicle
/// rolls forward slower than 1 m/s (and brakes before that); throttle above zero in
/// reverse selects first gear the same way.
#[derive(Reflect, Clone, Debug, PartialEq)]
#[reflect(Default, Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct Gearbox {
    /// Forward ratios, first gear first. Default 3.5, 2.1, 1.4, 1.0, 0.8.
    pub ratios: Vec<Scalar>,
    /// Reverse ratio, positive (the gearbox turns it the other way). Default 3.2.
    pub reverse_ratio: Scalar,
    /// Ratio of the final drive (the differential's gears). Default 3.7.
    pub final_drive: Scalar,
    /// Share of the engine's torque that reaches the wheels. Default 0.9.
    pub efficiency: Scalar,
    /// Shift up above this engine speed, rpm. Default 5,500.
    pub shift_up_rpm: Scalar,
    /// Shift down below this engine speed, rpm. Default 2,500.
    pub shift_down_rpm: Scalar,
}

/// An open differential between two wheels: it gives each of them half of its share of the
/// engine's torque, whatever their speeds.
#[derive(Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct Differential {
    /// Index of the left wheel in [`VehicleController::wheels`].
    pub left_wheel: usize,
    /// Index of the right wheel.
    pub right_wheel: usize,
    /// Share of the engine's torque this differential gets (the shares of all differentials
    /// should add up to 1: 0.5 and 0.5 for four-wheel drive).
    pub torque_share: Scalar,
}

/// An anti-roll bar: a torsion spring between the suspensions of a left and a right wheel.
/// It adds `stiffness · (compression_left − compression_right)` to the more compressed side's
/// spring force and takes it from the other (a wheel off the ground counts as fully
/// extended), which resists the chassis's roll without stiffening its bounce.
#[derive(Reflect, Clone, Copy, Debug, PartialEq)]
#[reflect(Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct AntiRollBar {
    /// Index of the left wheel in [`VehicleController::wheels`].
    pub left_wheel: usize,
    /// Index of the right wheel.
    pub right_wheel: usize,
    /// N per metre of difference in compression.
    pub stiffness: Scalar,
}

impl Default for Suspension {
    fn default() -> Self {
        Self {
            min_length: 0.05,
            max_length: 0.35,
            stiffness: 35_000.0,
            damping: 3_000.0,
            preload: 0.0,
        }
    }
}

impl Default for Tyre {
    fn default() -> Self {
        Self {
            peak_friction: 1.0,
            sliding_friction: 0.8,
            peak_slip: 0.1,
            longitudinal_stiffness: 15.0,
            lateral_stiffness: 12.0,
        }
    }
}

impl Default for Wheel {
    fn default() -> Self {
        Self {
            position: Vector::ZERO,
            radius: 0.35,
            width: 0.2,
            inertia: 1.0,
            suspension: Suspension::default(),
            tyre: Tyre::default(),
            max_steer_angle: 0.0,
            max_brake_torque: 3_000.0,
            max_handbrake_torque: 0.0,
        }
    }
}

impl Wheel {
    /// A default wheel whose hard point is `position` in the chassis's local space.
    pub fn at(position: Vector) -> Self {
        Self {
            position,
            ..default()
        }
    }
}

impl Default for Engine {
    fn default() -> Self {
        Self {
            torque_curve: vec![
                Vec2::new(1_000.0, 250.0),
                Vec2::new(4_000.0, 320.0),
                Vec2::new(6_000.0, 280.0),
            ],
            idle_rpm: 900.0,
            max_rpm: 6_500.0,
        }
    }
}

impl Default for Gearbox {
    fn default() -> Self {
        Self {
            ratios: vec![3.5, 2.1, 1.4, 1.0, 0.8],
            reverse_ratio: 3.2,
            final_drive: 3.7,
            efficiency: 0.9,
            shift_up_rpm: 5_500.0,
            shift_down_rpm: 2_500.0,
        }
    }
}

impl Default for VehicleController {
    /// Wheels 0 and 1 front left and right (steering), 2 and 3 rear left and right (driven,
    /// with the handbrake); hard points 0.1 m below the chassis origin.
    fn default() -> Self {
        let front = |x: Scalar| Wheel {
            max_steer_angle: 0.5,
            ..Wheel::at(Vector::new(x, -0.1, -1.3))
        };
        let rear = |x: Scalar| Wheel {
            max_handbrake_torque: 4_000.0,
            ..Wheel::at(Vector::new(x, -0.1, 1.3))
        };
        Self {
            wheels: vec![front(-0.8), front(0.8), rear(-0.8), rear(0.8)],
            engine: Engine::default(),
            gearbox: Gearbox::default(),
            differentials: vec![Differential {
                left_wheel: 2,
                right_wheel: 3,
                torque_share: 1.0,
            }],
            anti_roll_bars: vec![
                AntiRollBar {
                    left_wheel: 0,
                    right_wheel: 1,
                    stiffness: 15_000.0,
                },
                AntiRollBar {
                    left_wheel: 2,
                    right_wheel: 3,
                    stiffness: 10_000.0,
                },
            ],
            drag: 0.4,
            rolling_resistance: 0.015,
            wheel_cast: WheelCast::Ray,
            solver_iterations: 8,
        }
    }
}

/// The most passes over a vehicle's rows per step: each pass costs a few dozen operations
/// per wheel, and more than this no longer changes the result.
pub const MAX_SOLVER_ITERATIONS: u32 = 64;

/// Finite and above zero.
fn positive(value: Scalar) -> bool {
    value.is_finite() && value > 0.0
}

impl Validate for Suspension {
    fn validate(&mut self) -> Option<String> {
        let d = Suspension::default();
        let mut problems = vec![
            check(
                &mut self.min_length,
                non_negative,
                "min_length",
                "is not finite and ≥ 0",
                0.0,
            ),
            check(
                &mut self.max_length,
                positive,
                "max_length",
                "is not finite and > 0",
                d.max_length,
            ),
            check(
                &mut self.stiffness,
                non_negative,
                "stiffness",
                "is not finite and ≥ 0",
                d.stiffness,
            ),
            check(
                &mut self.damping,
                non_negative,
                "damping",
                "is not finite and ≥ 0",
                d.damping,
            ),
            check(
                &mut self.preload,
                non_negative,
                "preload",
                "is not finite and ≥ 0",
                0.0,
            ),
        ];
        if self.min_length > self.max_length {
            problems.push(Some(format!(
                "min_length {} is above max_length {}; using {}",
                self.min_length, self.max_length, self.max_length
            )));
            self.min_length = self.max_length;
        }
        join(problems)
    }
}

impl Validate for Tyre {
    fn validate(&mut self) -> Option<String> {
        let d = Tyre::default();
        join([
            check(
                &mut self.peak_friction,
                non_negative,
                "peak_friction",
                "is not finite and ≥ 0",
                d.peak_friction,
            ),
            check(
                &mut self.sliding_friction,
                non_negative,
                "sliding_friction",
                "is not finite and ≥ 0",
                d.sliding_friction,
            ),
            check(
                &mut self.peak_slip,
                |s| positive(s) && s < 1.0,
                "peak_slip",
                "is not in (0, 1)",
                d.peak_slip,
            ),
            check(
                &mut self.longitudinal_stiffness,
                positive,
                "longitudinal_stiffness",
                "is not finite and > 0",
                d.longitudinal_stiffness,
            ),
            check(
                &mut self.lateral_stiffness,
                positive,
                "lateral_stiffness",
                "is not finite and > 0",
                d.lateral_stiffness,
            ),
        ])
    }
}

impl Validate for Wheel {
    fn validate(&mut self) -> Option<String> {
        let d = Wheel::default();
        let position = (!self.position.is_finite()).then(|| {
            let message = format!("position {} is not finite; using zero", self.position);
            self.position = Vector::ZERO;
            message
        });
        join([
            position,
            check(
                &mut self.radius,
                positive,
                "radius",
                "is not finite and > 0",
                d.radius,
            ),
            check(
                &mut self.width,
                positive,
                "width",
                "is not finite and > 0",
                d.width,
            ),
            check(
                &mut self.inertia,
                positive,
                "inertia",
                "is not finite and > 0",
                d.inertia,
            ),
            check(
                &mut self.max_steer_angle,
                |a| a.is_finite(),
                "max_steer_angle",
                "is not finite",
                0.0,
            ),
            check(
                &mut self.max_brake_torque,
                non_negative,
                "max_brake_torque",
                "is not finite and ≥ 0",
                d.max_brake_torque,
            ),
            check(
                &mut self.max_handbrake_torque,
                non_negative,
                "max_handbrake_torque",
                "is not finite and ≥ 0",
                0.0,
            ),
            self.suspension.validate(),
            self.tyre.validate(),
        ])
    }
}

impl Validate for Engine {
    fn validate(&mut self) -> Option<String> {
        let d = Engine::default();
        let usable = |c: &[Vec2]| {
            !c.is_empty()
                && c.iter().all(|p| p.is_finite() && p.y >= 0.0)
                && c.windows(2).all(|w| w[0].x < w[1].x)
        };
        let curve = (!usable(&self.torque_curve)).then(|| {
            self.torque_curve = d.torque_curve.clone();
            "torque_curve is empty, not finite, has a negative torque or rpm not increasing; \
             using the default curve"
                .to_string()
        });
        join([
            curve,
            check(
                &mut self.idle_rpm,
                non_negative,
                "idle_rpm",
                "is not finite and ≥ 0",
                d.idle_rpm,
            ),
            check(
                &mut self.max_rpm,
                positive,
                "max_rpm",
                "is not finite and > 0",
                d.max_rpm,
            ),
        ])
    }
}

impl Validate for Gearbox {
    fn validate(&mut self) -> Option<String> {
        let d = Gearbox::default();
        let ratios =
            (self.ratios.is_empty() || !self.ratios.iter().all(|r| positive(*r))).then(|| {
                self.ratios = d.ratios.clone();
                "ratios are empty or not all finite and > 0; using the default ratios".to_string()
            });
        join([
            ratios,
            check(
                &mut self.reverse_ratio,
                positive,
                "reverse_ratio",
                "is not finite and > 0",
                d.reverse_ratio,
            ),
            check(
                &mut self.final_drive,
                positive,
                "final_drive",
                "is not finite and > 0",
                d.final_drive,
            ),
            check(
                &mut self.efficiency,
                |e| non_negative(e) && e <= 1.0,
                "efficiency",
                "is not in [0, 1]",
                d.efficiency,
            ),
            check(
                &mut self.shift_up_rpm,
                positive,
                "shift_up_rpm",
                "is not finite and > 0",
                d.shift_up_rpm,
            ),
            check(
                &mut self.shift_down_rpm,
                non_negative,
                "shift_down_rpm",
                "is not finite and ≥ 0",
                d.shift_down_rpm,
            ),
        ])
    }
}

impl Validate for VehicleController {
    /// Repairs each wheel and part; drops differentials and anti-roll bars that name a wheel
    /// that does not exist (or the same wheel twice). A controller without wheels is kept: it
    /// does nothing.
    fn validate(&mut self) -> Option<String> {
        let count = self.wheels.len();
        let mut problems: Vec<Option<String>> = Vec::new();
        if count == 0 {
            problems.push(Some("has no wheels; the vehicle does nothing".to_string()));
        }
        for (index, wheel) in self.wheels.iter_mut().enumerate() {
            problems.push(wheel.validate().map(|p| format!("wheel {index}: {p}")));
        }
        problems.push(self.engine.validate().map(|p| format!("engine: {p}")));
        problems.push(self.gearbox.validate().map(|p| format!("gearbox: {p}")));
        let pair_ok = |l: usize, r: usize| l < count && r < count && l != r;
        let before = self.differentials.len();
        self.differentials
            .retain(|d| pair_ok(d.left_wheel, d.right_wheel) && non_negative(d.torque_share));
        if self.differentials.len() != before {
            problems.push(Some(format!(
                "{} differentials name missing wheels or have a bad torque_share; dropped",
                before - self.differentials.len()
            )));
        }
        let before = self.anti_roll_bars.len();
        self.anti_roll_bars
            .retain(|b| pair_ok(b.left_wheel, b.right_wheel) && non_negative(b.stiffness));
        if self.anti_roll_bars.len() != before {
            problems.push(Some(format!(
                "{} anti-roll bars name missing wheels or have a bad stiffness; dropped",
                before - self.anti_roll_bars.len()
            )));
        }
        let d = VehicleController::default();
        problems.push(check(
            &mut self.drag,
            non_negative,
            "drag",
            "is not finite and ≥ 0",
            d.drag,
        ));
        problems.push(check(
            &mut self.rolling_resistance,
            non_negative,
            "rolling_resistance",
            "is not finite and ≥ 0",
            d.rolling_resistance,
        ));
        if self.solver_iterations == 0 || self.solver_iterations > MAX_SOLVER_ITERATIONS {
            let usable = self.solver_iterations.clamp(1, MAX_SOLVER_ITERATIONS);
            problems.push(Some(format!(
                "solver_iterations {} is not in 1..={MAX_SOLVER_ITERATIONS}; using {usable}",
                self.solver_iterations
            )));
            self.solver_iterations = usable;
        }
        join(problems).map(|p| format!("VehicleController {p}"))
    }
}
