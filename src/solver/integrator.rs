//! Semi-implicit Euler integration inside each substep.
//!
//! Velocities first (gravity, constant forces, damping, the gyroscopic term), then positions
//! from the new velocities. Rotations use the first-order quaternion update, renormalised.
//! Damping uses the implicit form `v / (1 + h c)` on the previous velocity (as Box2D does),
//! which is stable for any coefficient and leaves the weight of a resting body unchanged.
//!
//! ## The gyroscopic term
//!
//! Without torque a body keeps its angular momentum `L = I ω`, not its angular velocity: when
//! its principal moments differ, `ω` changes as the body turns (Euler's equations,
//! `I ω̇ + ω × I ω = τ` in the body frame). That is what makes a box spun about its
//! intermediate axis flip over (the Dzhanibekov effect). An explicit update of this term gains
//! energy and blows up for thin, fast-spinning bodies; backward Euler (Erin Catto, "Numerical
//! Methods", GDC 2015) is stable but loses energy and momentum, 13 % in 10 s for a tumbling
//! box at our substep. This engine uses the implicit midpoint rule on Euler's equations in the
//! body frame, solved by Newton's method (at most two iterations, fewer once the residual is
//! below rounding): a Gauss method, which conserves every quadratic invariant, here both the
//! kinetic energy `½ ω·I ω` and `|I ω|` (Hairer, Lubich and Wanner, *Geometric Numerical
//! Integration*, 2006, §IV.2), and is stable at any spin.
//! Bodies with equal principal moments (spheres, cubes) skip it: for them the term is zero.
//! Bodies with two equal moments (capsules, cylinders) take the rule's closed form, a turn of
//! the spin across the symmetry axis, instead of the Newton iterations.
//!
//! ## Threads
//!
//! Each body is integrated on its own, so with the `parallel` feature the passes share the
//! bodies out between the crew's threads (see `crate::parallel`) once there are
//! `PARALLEL_BODIES` of them; each state is written by exactly one thread with the same
//! arithmetic, so the result does not depend on the thread count.

use bevy::math::{Mat3A, Vec3A, Vec4};
use bevy::prelude::*;

use super::solver_body::{BodyState, RigidBodyQueryItem, SolverBodies};
use crate::math::{Matrix3, Quaternion, Scalar, Vector, integrate_rotation};
use crate::parallel::{Shared, parallel_for};
use crate::schedule::PhysicsStepTime;
use crate::settings::SolverConfig;

/// The most a body may turn in one substep, rad (Box2D's `B2_MAX_ROTATION`, a quarter turn).
///
/// Contacts are found once per step and linearised about the step's start, so a body that
/// turns by radians within a substep meets the ground with contact points and arms that no
/// longer describe it, and the solve can throw it off with energy it never had (the fuzzer
/// found a 4 mm hull spinning at 490 rad/s leave the ground at 170 m/s). Spin above
/// `MAX_ROTATION / h` (188 rad/s at 4 substeps of a 1/60 s step) is scaled down to it.
const MAX_ROTATION: Scalar = 0.25 * std::f32::consts::PI;

/// Bodies from which the integration passes are shared out between threads; fewer are
/// integrated inline. Chosen, not measured: a few microseconds of work, and low enough for the
/// determinism test's scene to run the passes in chunks.
const PARALLEL_BODIES: usize = 512;

/// Adds gravity, constant forces and damping to every dynamic body's velocity, and limits
/// its spin to [`MAX_ROTATION`] per substep and its speed to
/// [`SolverConfig::max_linear_speed`].
pub(crate) fn integrate_velocities(
    mut solver: ResMut<SolverBodies>,
    time: Res<PhysicsStepTime>,
    config: Res<SolverConfig>,
) {
    let h = time.substep_delta;
    let max_speed = config.max_linear_speed();
    let solver = &mut *solver;
    let bodies = &solver.bodies;
    each_state(&mut solver.states, |slot, state| {
        integrate_velocity(&bodies[slot], state, h, max_speed);
    });
}

/// Calls `f(slot, state)` for every body but the static slot 0, on the crew's threads when
/// there are enough bodies to pay for sharing them out (each state is written by one call).
fn each_state(states: &mut [BodyState], f: impl Fn(usize, &mut BodyState) + Sync) {
    let shared = Shared::new(states);
    parallel_for(states.len(), PARALLEL_BODIES, |range| {
        for slot in range.start.max(1)..range.end {
            // SAFETY: each slot lies in exactly one range, run by one call.
            f(slot, unsafe { shared.get_mut(slot) });
        }
    });
}

/// Gravity, forces, damping and the gyroscopic term for one body over `h`.
#[inline]
fn integrate_velocity(
    body: &RigidBodyQueryItem,
    state: &mut BodyState,
    h: Scalar,
    max_speed: Scalar,
) {
    if body.inverse_mass == 0.0 {
        return;
    }
    let (mut linear, mut angular) = (state.linear_velocity(), state.angular_velocity());
    // Damping acts on the velocity the body had, not on this substep's gravity: a body
    // held at rest must still weigh m g.
    linear *= 1.0 / (1.0 + h * body.linear_damping);
    angular *= 1.0 / (1.0 + h * body.angular_damping);
    linear += body.linear_acceleration * h;
    angular += body.angular_acceleration * h;
    if let Some(inertia) = body.gyroscopic_inertia {
        let rotation = state.rotation * body.start_rotation;
        let omega = match symmetry_axis(&inertia) {
            Some(axis) => symmetric_step(angular, rotation, &inertia, axis, h),
            None => gyroscopic_step(angular, rotation, inertia, h),
        };
        angular = omega * body.locked_axes.rotation_mask();
    }
    let turn_squared = angular.length_squared() * (h * h);
    if turn_squared > MAX_ROTATION * MAX_ROTATION {
        angular *= MAX_ROTATION / turn_squared.sqrt();
    }
    let speed_squared = linear.length_squared();
    if speed_squared > max_speed * max_speed {
        linear *= max_speed / speed_squared.sqrt();
    }
    state.set_velocities(linear, angular);
}

/// One step of `I ω̇ = −ω × I ω` (see the module docs) for the world angular velocity `omega`
/// of a body at `rotation` with body-frame `inertia`, by the implicit midpoint rule (in SIMD
/// vectors).
fn gyroscopic_step(omega: Vector, rotation: Quaternion, inertia: Matrix3, h: Scalar) -> Vector {
    let inertia = Mat3A::from(inertia);
    let w0 = rotation.inverse() * Vec3A::from(omega);
    let mut w1 = w0;
    for _ in 0..2 {
        let mid = 0.5 * (w0 + w1);
        let i_mid = inertia * mid;
        let residual = inertia * (w1 - w0) + h * mid.cross(i_mid);
        // Converged: what is left is below the rounding of `I ω` itself (a body turning about
        // a principal axis, or slowly, stops after one step or none).
        if residual.length_squared() <= Scalar::EPSILON * Scalar::EPSILON * i_mid.length_squared() {
            break;
        }
        // The Jacobian `I + ½h ([mid]× I − [I mid]×)`, column by column.
        let column = |i_k: Vec3A, axis: Vec3A| i_k + 0.5 * h * (mid.cross(i_k) - i_mid.cross(axis));
        let jacobian = [
            column(inertia.x_axis, Vec3A::X),
            column(inertia.y_axis, Vec3A::Y),
            column(inertia.z_axis, Vec3A::Z),
        ];
        let Some(step) = solve_by_columns(jacobian, residual) else {
            return omega;
        };
        w1 -= step;
    }
    // Solved exactly, the rule keeps the energy; where two Newton iterations fall short (a
    // very thin body spinning fast), never let the term add energy.
    let (before, after) = (w0.dot(inertia * w0), w1.dot(inertia * w1));
    if after > before && after.is_finite() {
        w1 *= (before / after).sqrt();
    }
    if !w1.is_finite() {
        return omega;
    }
    (rotation * w1).into()
}

/// The symmetry axis (0, 1 or 2) of a body-frame inertia that is diagonal with exactly two
/// equal moments (capsules, cylinders, cones, square prisms), or `None`.
#[inline]
fn symmetry_axis(inertia: &Matrix3) -> Option<usize> {
    let [x, y, z] = [inertia.x_axis.x, inertia.y_axis.y, inertia.z_axis.z];
    if *inertia != Matrix3::from_diagonal(Vector::new(x, y, z)) {
        return None;
    }
    match (x == y, y == z, z == x) {
        (true, false, _) => Some(2),
        (false, true, _) => Some(0),
        (false, false, true) => Some(1),
        _ => None,
    }
}

/// [`gyroscopic_step`] of a body whose moments about `axis` and the two axes across it are
/// `c` and `a`, in closed form. Euler's equations then keep the body-frame spin `s` about
/// the axis and turn the spin across it, `(u, v)` (the next two axes in cyclic order), at the
/// rate `λ = s (c − a) / a`: `u̇ = −λ v`, `v̇ = λ u`. The implicit midpoint rule keeps `s`
/// exactly and turns `(u, v)` by the angle `2 atan(h λ / 2)` (the Cayley transform), which
/// is what the Newton iterations converge to, without them.
#[inline]
fn symmetric_step(
    omega: Vector,
    rotation: Quaternion,
    inertia: &Matrix3,
    axis: usize,
    h: Scalar,
) -> Vector {
    let w = rotation.inverse() * omega;
    let (u_axis, v_axis) = ((axis + 1) % 3, (axis + 2) % 3);
    let (a, c) = (inertia.col(u_axis)[u_axis], inertia.col(axis)[axis]);
    let t = 0.5 * h * w[axis] * (c - a) / a;
    let (cos, sin) = ((1.0 - t * t) / (1.0 + t * t), 2.0 * t / (1.0 + t * t));
    let (u, v) = (w[u_axis], w[v_axis]);
    let mut turned = w;
    turned[u_axis] = cos * u - sin * v;
    turned[v_axis] = sin * u + cos * v;
    if !turned.is_finite() {
        return omega;
    }
    rotation * turned
}

/// `x` with `[c₀ c₁ c₂] x = b` by Cramer's rule (the rows of the inverse are the columns'
/// pairwise cross products over the determinant), or `None` if the matrix is singular: one
/// determinant and no inverse matrix, for the Newton step above.
#[inline]
fn solve_by_columns([c0, c1, c2]: [Vec3A; 3], b: Vec3A) -> Option<Vec3A> {
    let (r0, r1, r2) = (c1.cross(c2), c2.cross(c0), c0.cross(c1));
    let determinant = c0.dot(r0);
    if !determinant.is_normal() {
        return None;
    }
    Some(Vec3A::new(r0.dot(b), r1.dot(b), r2.dot(b)) / determinant)
}

/// Moves every body by its velocity (static bodies have none).
pub(crate) fn integrate_positions(mut solver: ResMut<SolverBodies>, time: Res<PhysicsStepTime>) {
    let h = time.substep_delta;
    each_state(&mut solver.states, |_, state| integrate_position(state, h));
    solver.substeps_done += 1;
}

/// Moves one body by its velocity over `h`.
#[inline]
fn integrate_position(state: &mut BodyState, h: Scalar) {
    state.moved += state.linear_velocity * h;
    // A body that does not turn keeps its rotation bit for bit (renormalising it would not).
    if state.angular_velocity != Vec4::ZERO {
        let turn = state.angular_velocity() * h;
        state.set_rotation(integrate_rotation(state.rotation, turn));
    }
}
