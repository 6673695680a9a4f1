//! The engine's torque curve and the automatic gearbox.

use super::{Engine, Gearbox};
use crate::math::{Scalar, TAU};

/// Forward speed below which the gearbox may change direction, m/s.
pub(super) const DIRECTION_CHANGE_SPEED: Scalar = 1.0;

/// rpm per rad/s.
pub(super) const RPM_PER_RAD_PER_S: Scalar = 60.0 / TAU;

impl Engine {
    /// Torque at full throttle at `rpm`, N·m: the curve linearly interpolated, flat beyond its
    /// ends, zero from [`max_rpm`](Self::max_rpm) on.
    pub fn torque_at(&self, rpm: Scalar) -> Scalar {
        if rpm >= self.max_rpm {
            return 0.0;
        }
        let curve = &self.torque_curve;
        let (Some(first), Some(last)) = (curve.first(), curve.last()) else {
            return 0.0;
        };
        if rpm <= first.x {
            return first.y;
        }
        if rpm >= last.x {
            return last.y;
        }
        let upper = curve.partition_point(|p| p.x <= rpm);
        let (a, b) = (curve[upper - 1], curve[upper]);
        a.y + (b.y - a.y) * (rpm - a.x) / (b.x - a.x)
    }
}

impl Gearbox {
    /// The overall ratio engine turns per wheel turn in `gear` (negative in reverse, 0 for a
    /// gear that does not exist).
    pub fn overall_ratio(&self, gear: i32) -> Scalar {
        let ratio = match gear {
            -1 => -self.reverse_ratio,
            g if g >= 1 => self.ratios.get(g as usize - 1).copied().unwrap_or(0.0),
            _ => 0.0,
        };
        ratio * self.final_drive
    }

    /// The gear for the next step: one up or down by the engine speed `rpm`, or a change of
    /// direction when the driver asks for one (`throttle` against the motion) at low
    /// `forward_speed`.
    pub(super) fn next_gear(
        &self,
        gear: i32,
        rpm: Scalar,
        throttle: Scalar,
        forward_speed: Scalar,
    ) -> i32 {
        let slow = forward_speed.abs() < DIRECTION_CHANGE_SPEED;
        if gear < 1 {
            return if throttle > 0.0 && slow { 1 } else { -1 };
        }
        if throttle < 0.0 && slow {
            return -1;
        }
        let top = self.ratios.len() as i32;
        if rpm > self.shift_up_rpm && gear < top {
            gear + 1
        } else if rpm < self.shift_down_rpm && gear > 1 {
            gear - 1
        } else {
            gear.min(top)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_is_interpolated_and_cut_at_the_rev_limit() {
        let engine = Engine::default();
        assert_eq!(engine.torque_at(500.0), 250.0);
        assert_eq!(engine.torque_at(4_000.0), 320.0);
        assert!((engine.torque_at(2_500.0) - 285.0).abs() < 1e-4);
        assert_eq!(engine.torque_at(6_200.0), 280.0);
        assert_eq!(engine.torque_at(6_500.0), 0.0);
    }

    #[test]
    fn the_box_shifts_one_gear_at_a_time_with_hysteresis() {
        let gearbox = Gearbox::default();
        assert_eq!(gearbox.next_gear(1, 5_600.0, 1.0, 10.0), 2);
        assert_eq!(gearbox.next_gear(2, 4_000.0, 1.0, 10.0), 2);
        assert_eq!(gearbox.next_gear(2, 2_000.0, 1.0, 5.0), 1);
        assert_eq!(gearbox.next_gear(5, 6_000.0, 1.0, 60.0), 5);
        // Reverse only once slow; first again only once slow the other way.
        assert_eq!(gearbox.next_gear(3, 3_000.0, -1.0, 20.0), 3);
        assert_eq!(gearbox.next_gear(1, 900.0, -1.0, 0.5), -1);
        assert_eq!(gearbox.next_gear(-1, 900.0, 1.0, -3.0), -1);
        assert_eq!(gearbox.next_gear(-1, 900.0, 1.0, -0.5), 1);
        assert!(gearbox.overall_ratio(-1) < 0.0);
        assert_eq!(gearbox.overall_ratio(9), 0.0);
    }
}
