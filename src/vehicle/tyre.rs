//! The tyre model's pure functions: slip and the friction coefficient.

use super::Tyre;
use crate::math::Scalar;

/// Speed below which slip is measured against this speed instead of the wheel's own, m/s:
/// slip ratios are singular at standstill (Pacejka, *Tire and Vehicle Dynamics*, §8.2, on
/// the low-speed problem), and a metre a second keeps a creeping tyre on its peak friction.
pub(super) const SLIP_REFERENCE_SPEED: Scalar = 1.0;

/// Speed below which the tyre's linear stiffness is taken at this speed, m/s. The force
/// `N · stiffness · slip velocity / speed` is solved implicitly, so a small floor turns it
/// into an almost rigid grip at standstill (a car parked on a slope creeps at about
/// `slope force / (N · stiffness) · this`) without making the step unstable.
pub(super) const STIFFNESS_REFERENCE_SPEED: Scalar = 0.01;

/// Longitudinal and lateral slip of a contact patch: its velocity over the ground divided by
/// `max(|v_x|, |ω r|, SLIP_REFERENCE_SPEED)`.
///
/// `ground_speed` is the wheel's velocity along its forward direction, `rim_speed` its spin
/// times its radius, `lateral_speed` its velocity along its right direction.
pub(super) fn slip(
    ground_speed: Scalar,
    rim_speed: Scalar,
    lateral_speed: Scalar,
) -> (Scalar, Scalar) {
    let reference = ground_speed
        .abs()
        .max(rim_speed.abs())
        .max(SLIP_REFERENCE_SPEED);
    (
        (rim_speed - ground_speed) / reference,
        lateral_speed / reference,
    )
}

/// The friction coefficient at a combined slip `|slip|` (the length of the longitudinal and
/// lateral slip): the peak up to `peak_slip`, falling linearly to the sliding value at a slip
/// of 1, flat beyond.
pub(super) fn friction_coefficient(tyre: &Tyre, combined_slip: Scalar) -> Scalar {
    let fall = ((combined_slip - tyre.peak_slip) / (1.0 - tyre.peak_slip)).clamp(0.0, 1.0);
    tyre.peak_friction + (tyre.sliding_friction - tyre.peak_friction) * fall
}

/// The softness `γ` of a tyre axis's implicit linear force `J = −(C dt / v_ref) · u_end`:
/// an impulse row `ΔJ = −(u + γ J) / (k + γ)` with `γ = v_ref / (C dt)`, `C = load ·
/// stiffness`. Infinite (no force) without load.
pub(super) fn softness(
    stiffness: Scalar,
    load: Scalar,
    reference_speed: Scalar,
    dt: Scalar,
) -> Scalar {
    let rate = stiffness * load * dt;
    if rate > 0.0 {
        reference_speed.max(STIFFNESS_REFERENCE_SPEED) / rate
    } else {
        Scalar::INFINITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locked_wheel_slips_by_minus_one_and_slides() {
        let tyre = Tyre::default();
        let (long, lat) = slip(20.0, 0.0, 0.0);
        assert_eq!((long, lat), (-1.0, 0.0));
        assert_eq!(friction_coefficient(&tyre, 1.0), tyre.sliding_friction);
        assert_eq!(friction_coefficient(&tyre, 3.0), tyre.sliding_friction);
    }

    #[test]
    fn rolling_without_slip_is_on_the_peak() {
        let tyre = Tyre::default();
        let (long, lat) = slip(15.0, 15.0, 0.0);
        assert_eq!((long, lat), (0.0, 0.0));
        assert_eq!(friction_coefficient(&tyre, 0.0), tyre.peak_friction);
        assert_eq!(
            friction_coefficient(&tyre, tyre.peak_slip),
            tyre.peak_friction
        );
        // Halfway between the peak's slip and 1: halfway between the two coefficients.
        let middle = 0.5 * (tyre.peak_slip + 1.0);
        let expected = 0.5 * (tyre.peak_friction + tyre.sliding_friction);
        assert!((friction_coefficient(&tyre, middle) - expected).abs() < 1e-6);
    }

    #[test]
    fn slip_at_standstill_is_measured_against_the_reference_speed() {
        let (long, lat) = slip(0.0, 0.0, 0.1);
        assert_eq!(long, 0.0);
        assert!((lat - 0.1 / SLIP_REFERENCE_SPEED).abs() < 1e-7);
    }

    #[test]
    fn no_load_means_no_tyre_force() {
        assert_eq!(softness(15.0, 0.0, 10.0, 1.0 / 64.0), Scalar::INFINITY);
        assert!(softness(15.0, 4_000.0, 0.0, 1.0 / 64.0).is_finite());
    }
}
