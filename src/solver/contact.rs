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

use bevy::prelude::*;
use smallvec::SmallVec;

use super::colouring::{BodyState, Colouring, TwoBody};
use super::softness::SoftCoefficients;
use super::solver_body::{RigidBodyQueryItem, SolverBodies};
use crate::collision::{ContactGraph, FrictionImpulse};
use crate::math::{Scalar, Vector, tangent_basis};
use crate::{PhysicsStepTime, SolverConfig};

/// One contact point of a [`ContactConstraint`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ContactConstraintPoint {
    /// Anchor relative to each centre of mass, world frame at the step start.
    r1: Vector,
    r2: Vector,
    /// Separation at the step start.
    separation: Scalar,
    normal_mass: Scalar,
    normal_impulse: Scalar,
    max_normal_impulse: Scalar,
    /// Normal speed before the solve, for restitution.
    relative_velocity: Scalar,
}

/// The friction of a whole manifold, applied at the centre of its points.
#[derive(Clone, Copy, Debug, Default)]
struct FrictionPatch {
    r1: Vector,
    r2: Vector,
    tangent_mass: [Scalar; 2],
    twist_mass: Scalar,
    /// Mean distance of the points from the centre: the twist friction's lever arm.
    radius: Scalar,
    tangent_impulse: [Scalar; 2],
    twist_impulse: Scalar,
}

/// A contact manifold prepared for the solver.
#[derive(Clone, Debug)]
pub(crate) struct ContactConstraint {
    b1: u32,
    b2: u32,
    normal: Vector,
    tangents: [Vector; 2],
    friction: Scalar,
    restitution: Scalar,
    /// Contacts with a static or sleeping body use the stiffer coefficients.
    against_static: bool,
    points: SmallVec<[ContactConstraintPoint; 4]>,
    patch: FrictionPatch,
    /// Where the impulses go back to: contact pair and manifold index.
    pair: u32,
    manifold: u32,
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
    scratch: Vec<ContactConstraint>,
}

/// Soft coefficients for dynamic-dynamic and dynamic-static contacts.
#[derive(Clone, Copy)]
pub(crate) struct ContactCoefficients {
    pub dynamic: SoftCoefficients,
    pub fixed: SoftCoefficients,
}

/// Builds contact constraints from the contact graph.
pub(crate) fn prepare_contacts(
    mut contacts: ResMut<ContactConstraints>,
    solver: Res<SolverBodies>,
    graph: Res<ContactGraph>,
    time: Res<PhysicsStepTime>,
) {
    contacts.constraints.clear();
    // Impulses are stored per step; the solver accumulates per substep.
    let per_substep = 1.0 / time.substeps as Scalar;
    for (pair_index, pair) in graph.pairs.iter().enumerate() {
        if pair.sensor || pair.manifolds.is_empty() {
            continue;
        }
        let b1 = solver.contact_slot(pair.body1);
        let b2 = solver.contact_slot(pair.body2);
        let (body1, body2) = (&solver.bodies[b1], &solver.bodies[b2]);
        if body1.inverse_mass == 0.0 && body2.inverse_mass == 0.0 {
            continue;
        }
        for (manifold_index, manifold) in pair.manifolds.iter().enumerate() {
            if manifold.points.is_empty() {
                continue;
            }
            let frame1 = manifold
                .subshape_pos1
                .map_or(pair.pose1, |p| pair.pose1 * p);
            let frame2 = manifold
                .subshape_pos2
                .map_or(pair.pose2, |p| pair.pose2 * p);
            let normal = frame1.rotation * manifold.local_n1;
            let tangents = <[Vector; 2]>::from(tangent_basis(normal));
            let anchors: SmallVec<[Vector; 4]> = manifold
                .points
                .iter()
                .map(|c| 0.5 * (frame1 * c.local_p1 + frame2 * c.local_p2))
                .collect();
            let points = manifold
                .points
                .iter()
                .zip(&anchors)
                .map(|(c, &anchor)| {
                    let r1 = anchor - body1.current_center_of_mass();
                    let r2 = anchor - body2.current_center_of_mass();
                    ContactConstraintPoint {
                        r1,
                        r2,
                        separation: c.dist,
                        normal_mass: inverse(point_inverse_mass(body1, body2, r1, r2, normal)),
                        normal_impulse: c.data * per_substep,
                        max_normal_impulse: 0.0,
                        relative_velocity: normal
                            .dot(body2.velocity_at(r2) - body1.velocity_at(r1)),
                    }
                })
                .collect();
            let patch = friction_patch(
                body1,
                body2,
                &anchors,
                normal,
                tangents,
                manifold.data,
                per_substep,
            );
            contacts.constraints.push(ContactConstraint {
                b1: b1 as u32,
                b2: b2 as u32,
                normal,
                tangents,
                friction: pair.friction,
                restitution: pair.restitution,
                against_static: b1 == SolverBodies::STATIC || b2 == SolverBodies::STATIC,
                points,
                patch,
                pair: pair_index as u32,
                manifold: manifold_index as u32,
            });
        }
    }
    let contacts = &mut *contacts;
    let bodies = &solver.bodies;
    contacts.colouring.colour(
        &mut contacts.constraints,
        &mut contacts.scratch,
        bodies.len(),
        |slot| bodies[slot as usize].inverse_mass > 0.0,
    );
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
    let twist = normal.dot(body1.step_inverse_inertia * normal)
        + normal.dot(body2.step_inverse_inertia * normal);
    FrictionPatch {
        r1,
        r2,
        tangent_mass: tangents.map(|t| inverse(point_inverse_mass(body1, body2, r1, r2, t))),
        twist_mass: inverse(twist),
        radius: anchors
            .iter()
            .map(|a| (*a - center).length())
            .sum::<Scalar>()
            / anchors.len() as Scalar,
        tangent_impulse: impulse.tangent.map(|t| t * per_substep),
        twist_impulse: impulse.twist * per_substep,
    }
}

/// `1/m₁ + 1/m₂ + (r₁ × d)ᵀ I₁⁻¹ (r₁ × d) + (r₂ × d)ᵀ I₂⁻¹ (r₂ × d)` along direction `d`.
fn point_inverse_mass(
    body1: &RigidBodyQueryItem,
    body2: &RigidBodyQueryItem,
    r1: Vector,
    r2: Vector,
    d: Vector,
) -> Scalar {
    let (rd1, rd2) = (r1.cross(d), r2.cross(d));
    body1.inverse_mass * (body1.translation_mask * d).dot(d)
        + body2.inverse_mass * (body2.translation_mask * d).dot(d)
        + rd1.dot(body1.step_inverse_inertia * rd1)
        + rd2.dot(body2.step_inverse_inertia * rd2)
}

fn inverse(k: Scalar) -> Scalar {
    if k > 0.0 { 1.0 / k } else { 0.0 }
}

/// Applies `p` to body 2 and `-p` to body 1 at their anchors.
#[inline]
fn apply(body1: &mut BodyState, body2: &mut BodyState, p: Vector, r1: Vector, r2: Vector) {
    body1.apply(-p, r1);
    body2.apply(p, r2);
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
                apply(
                    body1,
                    body2,
                    point.normal_impulse * c.normal,
                    point.r1,
                    point.r2,
                );
            }
            let f = &c.patch;
            let p = f.tangent_impulse[0] * c.tangents[0] + f.tangent_impulse[1] * c.tangents[1];
            apply(body1, body2, p, f.r1, f.r2);
            body1.apply_angular(-f.twist_impulse * c.normal);
            body2.apply_angular(f.twist_impulse * c.normal);
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
    let coefficients = config.contact_coefficients(time.substep_delta);
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
            let d_center = body2.moved - body1.moved;
            let mut total_normal = 0.0;
            // The biased pass runs through the points forwards and the relax pass backwards,
            // so neither end of a manifold systematically takes the load first.
            let mut order = [0usize, 1, 2, 3, 4, 5, 6, 7];
            let n = c.points.len().min(order.len());
            if coefficients.is_none() {
                order[..n].reverse();
            }
            for &i in &order[..n] {
                let point = &mut c.points[i];
                let moved = d_center + body2.turned.cross(point.r2) - body1.turned.cross(point.r1);
                let s = point.separation + c.normal.dot(moved);
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
                let vn = c
                    .normal
                    .dot(body2.velocity_at(point.r2) - body1.velocity_at(point.r1));
                let impulse = -point.normal_mass * mass_scale * (vn + bias)
                    - impulse_scale * point.normal_impulse;
                let new_impulse = (point.normal_impulse + impulse).max(0.0);
                let applied = new_impulse - point.normal_impulse;
                point.normal_impulse = new_impulse;
                point.max_normal_impulse = point.max_normal_impulse.max(new_impulse);
                total_normal += new_impulse;
                apply(body1, body2, applied * c.normal, point.r1, point.r2);
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
    let relative = body2.velocity_at(f.r2) - body1.velocity_at(f.r1);
    let old = f.tangent_impulse;
    let mut new = [0, 1].map(|k| old[k] - f.tangent_mass[k] * c.tangents[k].dot(relative));
    let length = (new[0] * new[0] + new[1] * new[1]).sqrt();
    if length > max {
        let scale = max / length;
        new = new.map(|t| t * scale);
    }
    f.tangent_impulse = new;
    let p = (new[0] - old[0]) * c.tangents[0] + (new[1] - old[1]) * c.tangents[1];
    apply(body1, body2, p, f.r1, f.r2);

    let spin = c
        .normal
        .dot(body2.angular_velocity - body1.angular_velocity);
    let max_twist = max * f.radius;
    let old = f.twist_impulse;
    f.twist_impulse = (old - f.twist_mass * spin).clamp(-max_twist, max_twist);
    let l = (f.twist_impulse - old) * c.normal;
    body1.apply_angular(-l);
    body2.apply_angular(l);
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
                let vn = c
                    .normal
                    .dot(body2.velocity_at(point.r2) - body1.velocity_at(point.r1));
                let impulse = -point.normal_mass * (vn + c.restitution * point.relative_velocity);
                let new_impulse = (point.normal_impulse + impulse).max(0.0);
                let applied = new_impulse - point.normal_impulse;
                point.normal_impulse = new_impulse;
                point.max_normal_impulse = point.max_normal_impulse.max(new_impulse);
                apply(body1, body2, applied * c.normal, point.r1, point.r2);
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
        let manifold = &mut graph.pairs[c.pair as usize].manifolds[c.manifold as usize];
        for (tracked, point) in manifold.points.iter_mut().zip(&c.points) {
            tracked.data = point.normal_impulse * substeps;
        }
        manifold.data = FrictionImpulse {
            tangent: c.patch.tangent_impulse.map(|t| t * substeps),
            twist: c.patch.twist_impulse * substeps,
        };
    }
}
