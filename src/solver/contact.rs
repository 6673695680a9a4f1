//! The soft-step contact solver (Catto, "Solver2D: soft step", 2024; Box2D v3).
//!
//! Once per step, every manifold with an awake dynamic body becomes a contact constraint:
//! anchors relative to each centre of mass, effective masses, friction, restitution, the
//! pre-solve normal speed and last step's impulses. Each substep then warm-starts with the
//! accumulated impulses, solves with a soft position bias (capped at the maximum push-out
//! speed; speculative points with positive separation only stop the approach at `s / h`),
//! and after position integration relaxes without bias. Restitution is applied once after all
//! substeps, for points that approached faster than the threshold.
//!
//! The current separation inside a substep is the step-start separation plus the relative
//! motion of the two anchors along the fixed normal, so the narrow phase runs once per step.
//! Rotation enters that motion linearised (`θ × r`): a spinning ball's anchor then slides along
//! its surface instead of swinging off the contact plane.
//!
//! Friction acts on each manifold as a patch, at the centre of its points (as PhysX's patch
//! friction does): two tangent impulses whose sum is clamped to the circle `μ Σλn`, and a twist
//! impulse about the normal clamped to `μ Σλn r`, with `r` the mean distance of the points from
//! the centre. Per-point friction would tie the friction of each corner to how Gauss–Seidel
//! happens to share the load among the corners, which makes sliding boxes yaw and veer.
//!
//! [Contact hooks](crate::collision::hooks) act here through the contact pair: dropped pairs
//! and disabled points build no constraint rows, overridden friction and restitution replace
//! the combined ones, and a tangent (surface) velocity becomes a target speed per friction
//! direction, precomputed per step, that the friction rows drive the relative tangential
//! speed toward instead of zero (as Box2D's `tangentSpeed` does): one subtraction per row.

use bevy::prelude::*;
use smallvec::SmallVec;

use super::colouring::{BodyState, Colouring, TwoBody};
use super::softness::SoftCoefficients;
use super::solver_body::{RigidBodyQueryItem, SolverBodies};
use crate::collision::{ContactGraph, FrictionImpulse};
use crate::math::{Scalar, Vector, tangent_basis};
use crate::schedule::PhysicsStepTime;
use crate::settings::SolverConfig;

/// How an impulse along a fixed direction `d` at anchors `r₁`, `r₂` acts on two bodies,
/// precomputed once per step (the direction, anchors and step inertia do not change within
/// it): the speed along `d` is `d·(v₂ − v₁) + (r₂ × d)·ω₂ − (r₁ × d)·ω₁`, and an impulse `λ`
/// turns the bodies by `∓λ I⁻¹ (r × d)`.
#[derive(Clone, Copy, Debug, Default)]
struct Arm {
    cross1: Vector,
    cross2: Vector,
    turn1: Vector,
    turn2: Vector,
    /// `1 / (d·w₁ d + d·w₂ d + (r₁×d)ᵀ I₁⁻¹ (r₁×d) + (r₂×d)ᵀ I₂⁻¹ (r₂×d))`.
    mass: Scalar,
}

impl Arm {
    fn new(
        body1: &RigidBodyQueryItem,
        body2: &RigidBodyQueryItem,
        r1: Vector,
        r2: Vector,
        d: Vector,
    ) -> Self {
        let (cross1, cross2) = (r1.cross(d), r2.cross(d));
        let (turn1, turn2) = (
            body1.step_inverse_inertia * cross1,
            body2.step_inverse_inertia * cross2,
        );
        let k = body1.inverse_mass * (body1.translation_mask * d).dot(d)
            + body2.inverse_mass * (body2.translation_mask * d).dot(d)
            + cross1.dot(turn1)
            + cross2.dot(turn2);
        Self {
            cross1,
            cross2,
            turn1,
            turn2,
            mass: if k > 0.0 { 1.0 / k } else { 0.0 },
        }
    }

    /// Relative speed along `d` (the linear part is passed in, shared by all arms along `d`).
    #[inline]
    fn speed(&self, linear: Scalar, body1: &BodyState, body2: &BodyState) -> Scalar {
        linear + self.cross2.dot(body2.angular_velocity) - self.cross1.dot(body1.angular_velocity)
    }

    /// Applies `λ` along `d` to body 2 and `−λ` to body 1; `push` is `d` scaled by each
    /// body's (masked) inverse mass.
    #[inline]
    fn apply(
        &self,
        push: &[Vector; 2],
        lambda: Scalar,
        body1: &mut BodyState,
        body2: &mut BodyState,
    ) {
        body1.linear_velocity -= lambda * push[0];
        body1.angular_velocity -= lambda * self.turn1;
        body2.linear_velocity += lambda * push[1];
        body2.angular_velocity += lambda * self.turn2;
    }
}

/// `d` scaled by each body's masked inverse mass: the velocity change per unit impulse.
fn push(body1: &RigidBodyQueryItem, body2: &RigidBodyQueryItem, d: Vector) -> [Vector; 2] {
    [
        body1.inverse_mass * body1.translation_mask * d,
        body2.inverse_mass * body2.translation_mask * d,
    ]
}

/// One contact point of a contact constraint.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ContactConstraintPoint {
    arm: Arm,
    /// Separation at the step start.
    separation: Scalar,
    normal_impulse: Scalar,
    max_normal_impulse: Scalar,
    /// Normal speed before the solve, for restitution.
    relative_velocity: Scalar,
}

/// The friction of a whole manifold, applied at the centre of its points.
#[derive(Clone, Copy, Debug, Default)]
struct FrictionPatch {
    arms: [Arm; 2],
    push: [[Vector; 2]; 2],
    /// `I⁻¹ n` of each body, and the effective mass of a twist about the normal.
    twist: [Vector; 2],
    twist_mass: Scalar,
    /// Mean distance of the points from the centre: the twist friction's lever arm.
    radius: Scalar,
    tangent_impulse: [Scalar; 2],
    twist_impulse: Scalar,
    /// Target relative speed along each tangent: the pair's tangent velocity, or zero.
    target_speed: [Scalar; 2],
}

/// A contact manifold prepared for the solver.
#[derive(Clone, Debug)]
pub(crate) struct ContactConstraint {
    b1: u32,
    b2: u32,
    normal: Vector,
    tangents: [Vector; 2],
    push: [Vector; 2],
    friction: Scalar,
    restitution: Scalar,
    /// Contacts with a static or sleeping body use the stiffer coefficients.
    against_static: bool,
    points: SmallVec<[ContactConstraintPoint; 4]>,
    patch: FrictionPatch,
    /// Where the impulses go back to: contact pair and manifold index, and the pair-wide
    /// index of the manifold's first point.
    pair: u32,
    manifold: u32,
    first_point: u32,
}

impl TwoBody for ContactConstraint {
    fn bodies(&self) -> (u32, u32) {
        (self.b1, self.b2)
    }
}

/// Every contact constraint of the step, ordered by colour.
#[derive(Resource, Default)]
pub(crate) struct ContactConstraints {
    pub constraints: Vec<ContactConstraint>,
    colouring: Colouring,
    manifolds: Vec<ManifoldRef>,
    scratch: Vec<ManifoldRef>,
}

/// Soft coefficients for dynamic-dynamic and dynamic-static contacts.
#[derive(Clone, Copy)]
pub(crate) struct ContactCoefficients {
    pub dynamic: SoftCoefficients,
    pub fixed: SoftCoefficients,
}

impl ContactCoefficients {
    /// The configured stiffness for substeps of length `h`, the frequency capped at a quarter
    /// of the substep rate (where the soft step stays stable).
    pub(crate) fn new(config: &SolverConfig, h: Scalar) -> Self {
        let hertz = config.contact_frequency.min(0.25 / h);
        let damping = config.contact_damping_ratio;
        Self {
            dynamic: SoftCoefficients::new(hertz, damping, h),
            fixed: SoftCoefficients::new(config.static_stiffness_factor * hertz, damping, h),
        }
    }
}

/// Builds contact constraints from the contact graph, in colour order.
pub(crate) fn prepare_contacts(
    mut contacts: ResMut<ContactConstraints>,
    solver: Res<SolverBodies>,
    graph: Res<ContactGraph>,
    time: Res<PhysicsStepTime>,
) {
    let contacts = &mut *contacts;
    let bodies = &solver.bodies;
    // Which manifolds take part, and between which bodies: colouring reorders these small
    // references, and the constraints are then built directly in their final order.
    contacts.manifolds.clear();
    for (pair_index, pair) in graph.pairs.iter().enumerate() {
        if pair.sensor || pair.manifolds.is_empty() || pair.modifications.dropped {
            continue;
        }
        let b1 = solver.contact_slot(pair.body1) as u32;
        let b2 = solver.contact_slot(pair.body2) as u32;
        if bodies[b1 as usize].inverse_mass == 0.0 && bodies[b2 as usize].inverse_mass == 0.0 {
            continue;
        }
        let mut first_point = 0;
        for (manifold_index, manifold) in pair.manifolds.iter().enumerate() {
            let count = manifold.points.len();
            if pair.modifications.any_enabled(first_point, count) {
                contacts.manifolds.push(ManifoldRef {
                    pair: pair_index as u32,
                    manifold: manifold_index as u32,
                    first_point: first_point as u32,
                    b1,
                    b2,
                });
            }
            first_point += count;
        }
    }
    contacts.colouring.colour(
        &mut contacts.manifolds,
        &mut contacts.scratch,
        bodies.len(),
        |slot| bodies[slot as usize].inverse_mass > 0.0,
    );
    // Impulses are stored per step; the solver accumulates per substep.
    let per_substep = 1.0 / time.substeps as Scalar;
    contacts.constraints.clear();
    contacts.constraints.extend(
        contacts
            .manifolds
            .iter()
            .map(|r| build_constraint(r, &graph, bodies, per_substep)),
    );
}

/// A manifold that becomes a contact constraint this step.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ManifoldRef {
    pair: u32,
    manifold: u32,
    first_point: u32,
    b1: u32,
    b2: u32,
}

impl TwoBody for ManifoldRef {
    fn bodies(&self) -> (u32, u32) {
        (self.b1, self.b2)
    }
}

fn build_constraint(
    r: &ManifoldRef,
    graph: &ContactGraph,
    bodies: &[RigidBodyQueryItem],
    per_substep: Scalar,
) -> ContactConstraint {
    let pair = &graph.pairs[r.pair as usize];
    let manifold = &pair.manifolds[r.manifold as usize];
    let (body1, body2) = (&bodies[r.b1 as usize], &bodies[r.b2 as usize]);
    let frame1 = manifold
        .subshape_pos1
        .map_or(pair.pose1, |p| pair.pose1 * p);
    let frame2 = manifold
        .subshape_pos2
        .map_or(pair.pose2, |p| pair.pose2 * p);
    let normal = frame1.rotation * manifold.local_n1;
    let tangents = <[Vector; 2]>::from(tangent_basis(normal));
    let (center1, center2) = (
        body1.current_center_of_mass(),
        body2.current_center_of_mass(),
    );
    let mut anchors = SmallVec::<[Vector; 4]>::new();
    let mut points = SmallVec::new();
    let first = r.first_point as usize;
    let enabled = manifold
        .points
        .iter()
        .enumerate()
        .filter(|(i, _)| pair.modifications.point_enabled(first + i));
    for (_, c) in enabled {
        let anchor = 0.5 * (frame1 * c.local_p1 + frame2 * c.local_p2);
        let (r1, r2) = (anchor - center1, anchor - center2);
        anchors.push(anchor);
        points.push(ContactConstraintPoint {
            arm: Arm::new(body1, body2, r1, r2, normal),
            separation: c.dist,
            normal_impulse: c.data * per_substep,
            max_normal_impulse: 0.0,
            relative_velocity: normal.dot(body2.velocity_at(r2) - body1.velocity_at(r1)),
        });
    }
    let mut patch = friction_patch(
        body1,
        body2,
        &anchors,
        normal,
        tangents,
        manifold.data,
        per_substep,
    );
    // A conveyor's surface velocity, as a target speed per friction direction.
    let tangent_velocity = pair.tangent_velocity();
    patch.target_speed = tangents.map(|t| t.dot(tangent_velocity));
    ContactConstraint {
        b1: r.b1,
        b2: r.b2,
        normal,
        tangents,
        push: push(body1, body2, normal),
        friction: pair.friction(),
        restitution: pair.restitution(),
        against_static: r.b1 == SolverBodies::STATIC as u32 || r.b2 == SolverBodies::STATIC as u32,
        points,
        patch,
        pair: r.pair,
        manifold: r.manifold,
        first_point: r.first_point,
    }
}

fn friction_patch(
    body1: &RigidBodyQueryItem,
    body2: &RigidBodyQueryItem,
    anchors: &[Vector],
    normal: Vector,
    tangents: [Vector; 2],
    impulse: FrictionImpulse,
    per_substep: Scalar,
) -> FrictionPatch {
    let center = anchors.iter().sum::<Vector>() / anchors.len() as Scalar;
    let r1 = center - body1.current_center_of_mass();
    let r2 = center - body2.current_center_of_mass();
    let twist = [
        body1.step_inverse_inertia * normal,
        body2.step_inverse_inertia * normal,
    ];
    let k = normal.dot(twist[0]) + normal.dot(twist[1]);
    FrictionPatch {
        arms: tangents.map(|t| Arm::new(body1, body2, r1, r2, t)),
        push: tangents.map(|t| push(body1, body2, t)),
        twist,
        twist_mass: if k > 0.0 { 1.0 / k } else { 0.0 },
        radius: anchors
            .iter()
            .map(|a| (*a - center).length())
            .sum::<Scalar>()
            / anchors.len() as Scalar,
        tangent_impulse: impulse.tangent.map(|t| t * per_substep),
        twist_impulse: impulse.twist * per_substep,
        target_speed: [0.0; 2],
    }
}

/// Re-applies the accumulated impulses at the start of each substep.
pub(crate) fn warm_start(
    mut solver: ResMut<SolverBodies>,
    mut contacts: ResMut<ContactConstraints>,
) {
    let contacts = &mut *contacts;
    contacts.colouring.for_each(
        &mut contacts.constraints,
        &mut solver.bodies,
        |c, body1, body2| {
            for point in &c.points {
                point.arm.apply(&c.push, point.normal_impulse, body1, body2);
            }
            let f = &c.patch;
            for k in 0..2 {
                f.arms[k].apply(&f.push[k], f.tangent_impulse[k], body1, body2);
            }
            body1.angular_velocity -= f.twist_impulse * f.twist[0];
            body2.angular_velocity += f.twist_impulse * f.twist[1];
        },
    );
}

/// Solves contacts with a soft position bias.
pub(crate) fn solve_contacts(
    mut solver: ResMut<SolverBodies>,
    mut contacts: ResMut<ContactConstraints>,
    time: Res<PhysicsStepTime>,
    config: Res<SolverConfig>,
) {
    let coefficients = ContactCoefficients::new(&config, time.substep_delta);
    solve(
        &mut solver,
        &mut contacts,
        Some(coefficients),
        time.substep_delta,
        config.max_push_out_speed,
    );
}

/// Solves contacts without position bias, removing the velocity the bias added.
pub(crate) fn relax_contacts(
    mut solver: ResMut<SolverBodies>,
    mut contacts: ResMut<ContactConstraints>,
    time: Res<PhysicsStepTime>,
    config: Res<SolverConfig>,
) {
    solve(
        &mut solver,
        &mut contacts,
        None,
        time.substep_delta,
        config.max_push_out_speed,
    );
}

fn solve(
    solver: &mut SolverBodies,
    contacts: &mut ContactConstraints,
    coefficients: Option<ContactCoefficients>,
    h: Scalar,
    max_push_out: Scalar,
) {
    let inv_h = 1.0 / h;
    contacts.colouring.for_each(
        &mut contacts.constraints,
        &mut solver.bodies,
        |c, body1, body2| {
            let soft = coefficients.map(|k| if c.against_static { k.fixed } else { k.dynamic });
            // Separation now: start separation plus the anchors' relative motion along n,
            // with rotation linearised (n·(θ × r) = θ·(r × n)), so a spinning ball's anchor
            // slides along its surface instead of swinging off the contact plane.
            let moved = c.normal.dot(body2.moved - body1.moved);
            let mut total_normal = 0.0;
            let mut solve_point = |point: &mut ContactConstraintPoint| {
                let arm = &point.arm;
                let s = point.separation + moved + body2.turned.dot(arm.cross2)
                    - body1.turned.dot(arm.cross1);
                let (bias, mass_scale, impulse_scale) = if s > 0.0 {
                    (s * inv_h, 1.0, 0.0)
                } else if let Some(soft) = soft {
                    (
                        (soft.bias_rate * s).max(-max_push_out),
                        soft.mass_scale,
                        soft.impulse_scale,
                    )
                } else {
                    (0.0, 1.0, 0.0)
                };
                let linear = c.normal.dot(body2.linear_velocity - body1.linear_velocity);
                let vn = arm.speed(linear, body1, body2);
                let impulse =
                    -arm.mass * mass_scale * (vn + bias) - impulse_scale * point.normal_impulse;
                let new_impulse = (point.normal_impulse + impulse).max(0.0);
                let applied = new_impulse - point.normal_impulse;
                point.normal_impulse = new_impulse;
                point.max_normal_impulse = point.max_normal_impulse.max(new_impulse);
                total_normal += new_impulse;
                arm.apply(&c.push, applied, body1, body2);
            };
            // The biased pass runs through the points forwards and the relax pass backwards,
            // so neither end of a manifold systematically takes the load first.
            if coefficients.is_some() {
                c.points.iter_mut().for_each(&mut solve_point);
            } else {
                c.points.iter_mut().rev().for_each(&mut solve_point);
            }
            solve_friction(c, body1, body2, c.friction * total_normal);
        },
    );
}

/// Patch friction: tangent impulses in a circle of radius `max`, twist within `max · radius`.
fn solve_friction(
    c: &mut ContactConstraint,
    body1: &mut BodyState,
    body2: &mut BodyState,
    max: Scalar,
) {
    let f = &mut c.patch;
    let relative = body2.linear_velocity - body1.linear_velocity;
    let old = f.tangent_impulse;
    let mut new = [0, 1].map(|k| {
        let speed = f.arms[k].speed(c.tangents[k].dot(relative), body1, body2) - f.target_speed[k];
        old[k] - f.arms[k].mass * speed
    });
    let length = (new[0] * new[0] + new[1] * new[1]).sqrt();
    if length > max {
        let scale = max / length;
        new = new.map(|t| t * scale);
    }
    f.tangent_impulse = new;
    for k in 0..2 {
        f.arms[k].apply(&f.push[k], new[k] - old[k], body1, body2);
    }

    let spin = c
        .normal
        .dot(body2.angular_velocity - body1.angular_velocity);
    // One point (radius 0) has no twist friction; written so that no coefficient, however
    // large, can make the limit NaN (∞ · 0) and the clamp below panic.
    let max_twist = if f.radius > 0.0 { max * f.radius } else { 0.0 };
    let old = f.twist_impulse;
    f.twist_impulse = clamp_symmetric(old - f.twist_mass * spin, max_twist);
    let applied = f.twist_impulse - old;
    body1.angular_velocity -= applied * f.twist[0];
    body2.angular_velocity += applied * f.twist[1];
}

/// `value` limited to `[-limit, limit]`; unlike `f32::clamp` it never panics (a NaN limit
/// leaves the value unlimited).
#[inline]
fn clamp_symmetric(value: Scalar, limit: Scalar) -> Scalar {
    value.min(limit).max(-limit)
}

/// Applies restitution once per step to points that approached faster than the threshold.
pub(crate) fn apply_restitution(
    mut solver: ResMut<SolverBodies>,
    mut contacts: ResMut<ContactConstraints>,
    config: Res<SolverConfig>,
) {
    let threshold = config.restitution_threshold;
    let contacts = &mut *contacts;
    contacts.colouring.for_each(
        &mut contacts.constraints,
        &mut solver.bodies,
        |c, body1, body2| {
            if c.restitution == 0.0 {
                return;
            }
            for point in &mut c.points {
                if point.relative_velocity > -threshold || point.max_normal_impulse == 0.0 {
                    continue;
                }
                let linear = c.normal.dot(body2.linear_velocity - body1.linear_velocity);
                let vn = point.arm.speed(linear, body1, body2);
                let impulse = -point.arm.mass * (vn + c.restitution * point.relative_velocity);
                let new_impulse = (point.normal_impulse + impulse).max(0.0);
                let applied = new_impulse - point.normal_impulse;
                point.normal_impulse = new_impulse;
                point.max_normal_impulse = point.max_normal_impulse.max(new_impulse);
                point.arm.apply(&c.push, applied, body1, body2);
            }
        },
    );
}

/// Stores the accumulated impulses in the contact graph for warm starting and reporting.
pub(crate) fn store_impulses(
    contacts: Res<ContactConstraints>,
    mut graph: ResMut<ContactGraph>,
    time: Res<PhysicsStepTime>,
) {
    // The accumulated impulse is what each substep applies; the step applied it `substeps`
    // times.
    let substeps = time.substeps as Scalar;
    for c in &contacts.constraints {
        let pair = &mut graph.pairs[c.pair as usize];
        let manifold = &mut pair.manifolds[c.manifold as usize];
        // Points disabled by a hook have no row (and were given zero impulse by the hook
        // system), so the rows belong to the enabled points in order.
        let first = c.first_point as usize;
        let enabled = manifold
            .points
            .iter_mut()
            .enumerate()
            .filter(|(i, _)| pair.modifications.point_enabled(first + i));
        for ((_, tracked), point) in enabled.zip(&c.points) {
            tracked.data = point.normal_impulse * substeps;
        }
        manifold.data = FrictionImpulse {
            tangent: c.patch.tangent_impulse.map(|t| t * substeps),
            twist: c.patch.twist_impulse * substeps,
        };
    }
}
