//! Soft-constraint coefficients from a frequency and a damping ratio.
//!
//! Following Erin Catto, "Solver2D: soft constraints" (2024) and "Soft Constraints:
//! Reinventing the Spring" (GDC 2011), as used in Box2D v3's soft step: a constraint behaves like
//! a damped spring of angular frequency ω = 2πf and damping ratio ζ, integrated implicitly over
//! the substep h. With `a1 = 2ζ + hω`, `a2 = hω a1`, `a3 = 1 / (1 + a2)`:
//! `bias = ω / a1` (1/s), `mass_scale = a2 a3`, `impulse_scale = a3`. The contact impulse is then
//! `Δλ = -m_eff mass_scale (v_n + bias s) - impulse_scale λ`. The coefficients do not depend on
//! mass, so the same values serve every contact.

use crate::math::Scalar;

/// Coefficients of a soft constraint for one substep length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SoftCoefficients {
    /// Multiplies the position error to give a velocity bias, in 1/s.
    pub bias_rate: Scalar,
    /// Scales the effective mass.
    pub mass_scale: Scalar,
    /// Scales the accumulated impulse subtracted each iteration.
    pub impulse_scale: Scalar,
}

impl SoftCoefficients {
    /// Coefficients for frequency `hertz`, damping ratio `zeta` and substep `h`.
    /// A frequency of zero gives a rigid constraint with no position correction.
    pub fn new(hertz: Scalar, zeta: Scalar, h: Scalar) -> Self {
        if hertz <= 0.0 {
            return Self::RIGID;
        }
        let omega = 2.0 * std::f32::consts::PI * hertz;
        let a1 = 2.0 * zeta + h * omega;
        let a2 = h * omega * a1;
        let a3 = 1.0 / (1.0 + a2);
        Self {
            bias_rate: omega / a1,
            mass_scale: a2 * a3,
            impulse_scale: a3,
        }
    }

    /// A rigid constraint without position bias (used by the relax pass).
    pub const RIGID: Self = Self {
        bias_rate: 0.0,
        mass_scale: 1.0,
        impulse_scale: 0.0,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_spring_limits() {
        // Very stiff: the constraint becomes rigid with Baumgarte rate 1/h.
        let h = 1.0 / 240.0;
        let s = SoftCoefficients::new(1.0e6, 1.0, h);
        assert!((s.mass_scale - 1.0).abs() < 1e-3);
        assert!(s.impulse_scale < 1e-3);
        assert!((s.bias_rate * h - 1.0).abs() < 1e-2);
        // Very soft: no correction at all.
        let s = SoftCoefficients::new(1.0e-6, 1.0, h);
        assert!(s.mass_scale < 1e-6 && (s.impulse_scale - 1.0).abs() < 1e-6);
    }
}
