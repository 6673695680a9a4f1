//! The soft-step contact solver (Catto, "Solver2D: soft step", 2024; Box2D v3).
//!
//! Once per step, every manifold with an awake dynamic body becomes a [`ContactConstraint`]:
//! anchors relative to each centre of mass, effective masses along the normal and two tangents,
//! friction, restitution, the pre-solve normal speed and last step's impulses. Each substep then
//! warm-starts with the accumulated impulses, solves with a soft position bias (capped at the
//! maximum push-out speed; speculative points with positive separation only stop the approach
//! at `s / h`), and after position integration relaxes without bias. Restitution is applied
//! once after all substeps, for points that approached faster than the threshold.
//!
//! The current separation inside a substep is the step-start separation plus the relative
//! motion of the two anchors along the fixed normal, so the narrow phase runs once per step.
//! Friction is a circular cone: both tangent impulses are solved and their sum clamped to
//! `μ λn`, so the friction force does not depend on how the tangent basis is oriented.

use bevy::prelude::*;
use smallvec::SmallVec;

use super::softness::SoftCoefficients;
use super::solver_body::{RigidBodyQueryItem, SolverBodies};
use crate::collision::ContactGraph;
use crate::math::{Scalar, Vector, tangent_basis};
use crate::{PhysicsStepTime, SolverConfig};

/// One contact point of a [`ContactConstraint`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ContactConstraintPoint {
    /// Anchor relative to each centre of mass, world frame at the step start.
    r1: Vector,
    r2: Vector,
    /// The same anchors in each body's frame, to follow rotation within the step.
    local_r1: Vector,
    local_r2: Vector,
    /// Separation at the step start.
    separation: Scalar,
    normal_mass: Scalar,
    tangent_mass: [Scalar; 2],
    normal_impulse: Scalar,
    tangent_impulse: [Scalar; 2],
    max_normal_impulse: Scalar,
    /// Normal speed before the solve, for restitution.
    relative_velocity: Scalar,
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
    /// Where the impulses go back to: contact pair and manifold index.
    pair: u32,
    manifold: u32,
}

/// Every contact constraint of the step.
#[derive(Resource, Default)]
pub(crate) struct ContactConstraints {
    pub constraints: Vec<ContactConstraint>,
}

/// Builds contact constraints from the contact graph.
pub(crate) fn prepare_contacts(
    mut contacts: ResMut<ContactConstraints>,
    solver: Res<SolverBodies>,
    graph: Res<ContactGraph>,
) {
    contacts.constraints.clear();
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
        let against_static = b1 == SolverBodies::STATIC || b2 == SolverBodies::STATIC;
        for (manifold_index, manifold) in pair.manifolds.iter().enumerate() {
            let frame1 = manifold.subshape_pos1.map_or(pair.pose1, |p| pair.pose1 * p);
            let frame2 = manifold.subshape_pos2.map_or(pair.pose2, |p| pair.pose2 * p);
            let normal = frame1.rotation * manifold.local_n1;
            let (t1, t2) = tangent_basis(normal);
            let points = manifold
                .points
                .iter()
                .map(|c| {
                    let anchor = 0.5 * (frame1 * c.local_p1 + frame2 * c.local_p2);
                    prepare_point(body1, body2, anchor, normal, [t1, t2], c.dist, c.data)
                })
                .collect();
            contacts.constraints.push(ContactConstraint {
                b1: b1 as u32,
                b2: b2 as u32,
                normal,
                tangents: [t1, t2],
                friction: pair.friction,
                restitution: pair.restitution,
                against_static,
                points,
                pair: pair_index as u32,
                manifold: manifold_index as u32,
            });
        }
    }
}

fn prepare_point(
    body1: &RigidBodyQueryItem,
    body2: &RigidBodyQueryItem,
    anchor: Vector,
    normal: Vector,
    tangents: [Vector; 2],
    separation: Scalar,
    impulse: crate::collision::ContactImpulse,
) -> ContactConstraintPoint {
    let r1 = anchor - body1.current_center_of_mass();
    let r2 = anchor - body2.current_center_of_mass();
    let effective_mass = |dir: Vector| {
        let k = body1.inverse_mass * (body1.translation_mask * dir).dot(dir)
            + body2.inverse_mass * (body2.translation_mask * dir).dot(dir)
            + r1.cross(dir).dot(body1.step_inverse_inertia * r1.cross(dir))
            + r2.cross(dir).dot(body2.step_inverse_inertia * r2.cross(dir));
        if k > 0.0 { 1.0 / k } else { 0.0 }
    };
    let relative = body2.velocity_at(r2) - body1.velocity_at(r1);
    ContactConstraintPoint {
        r1,
        r2,
        local_r1: body1.rotation.inverse() * r1,
        local_r2: body2.rotation.inverse() * r2,
        separation,
        normal_mass: effective_mass(normal),
        tangent_mass: [effective_mass(tangents[0]), effective_mass(tangents[1])],
        normal_impulse: impulse.normal,
        tangent_impulse: impulse.tangent,
        max_normal_impulse: 0.0,
        relative_velocity: normal.dot(relative),
    }
}

/// Two distinct bodies of the dense storage, mutably.
#[inline]
fn split(
    bodies: &mut [RigidBodyQueryItem],
    b1: u32,
    b2: u32,
) -> (&mut RigidBodyQueryItem, &mut RigidBodyQueryItem) {
    let [a, b] = bodies
        .get_disjoint_mut([b1 as usize, b2 as usize])
        .expect("contact bodies are distinct slots");
    (a, b)
}

/// Contacts against the shared static slot write to it too; it has zero inverse mass, so the
/// writes leave it at rest.
fn apply(
    body1: &mut RigidBodyQueryItem,
    body2: &mut RigidBodyQueryItem,
    p: Vector,
    r1: Vector,
    r2: Vector,
) {
    body1.apply_impulse(-p, r1);
    body2.apply_impulse(p, r2);
}

/// Re-applies the accumulated impulses at the start of each substep.
pub(crate) fn warm_start(mut solver: ResMut<SolverBodies>, mut contacts: ResMut<ContactConstraints>) {
    let bodies = &mut solver.bodies;
    for c in &mut contacts.constraints {
        let (body1, body2) = split(bodies, c.b1, c.b2);
        for point in &c.points {
            let p = point.normal_impulse * c.normal
                + point.tangent_impulse[0] * c.tangents[0]
                + point.tangent_impulse[1] * c.tangents[1];
            apply(body1, body2, p, point.r1, point.r2);
        }
    }
}

/// Solves contacts with a soft position bias.
pub(crate) fn solve_contacts(
    mut solver: ResMut<SolverBodies>,
    mut contacts: ResMut<ContactConstraints>,
    time: Res<PhysicsStepTime>,
    config: Res<SolverConfig>,
) {
    let coefficients = config.contact_coefficients(time.substep_delta);
    solve(&mut solver.bodies, &mut contacts.constraints, Some(coefficients), time.substep_delta, config.max_push_out_speed);
}

/// Solves contacts without position bias, removing the velocity the bias added.
pub(crate) fn relax_contacts(
    mut solver: ResMut<SolverBodies>,
    mut contacts: ResMut<ContactConstraints>,
    time: Res<PhysicsStepTime>,
    config: Res<SolverConfig>,
) {
    solve(&mut solver.bodies, &mut contacts.constraints, None, time.substep_delta, config.max_push_out_speed);
}

/// Soft coefficients for dynamic-dynamic and dynamic-static contacts.
#[derive(Clone, Copy)]
pub(crate) struct ContactCoefficients {
    pub dynamic: SoftCoefficients,
    pub fixed: SoftCoefficients,
}

fn solve(
    bodies: &mut [RigidBodyQueryItem],
    constraints: &mut [ContactConstraint],
    coefficients: Option<ContactCoefficients>,
    h: Scalar,
    max_push_out: Scalar,
) {
    let inv_h = 1.0 / h;
    for c in constraints {
        let (body1, body2) = split(bodies, c.b1, c.b2);
        let soft = coefficients.map(|k| if c.against_static { k.fixed } else { k.dynamic });
        let d_center = body2.accumulated_translation - body1.accumulated_translation;
        for point in &mut c.points {
            // Separation now: start separation plus the anchors' relative motion along n.
            let moved1 = body1.rotation * point.local_r1 - point.r1;
            let moved2 = body2.rotation * point.local_r2 - point.r2;
            let s = point.separation + c.normal.dot(d_center + moved2 - moved1);
            let (bias, mass_scale, impulse_scale) = if s > 0.0 {
                (s * inv_h, 1.0, 0.0)
            } else if let Some(soft) = soft {
                ((soft.bias_rate * s).max(-max_push_out), soft.mass_scale, soft.impulse_scale)
            } else {
                (0.0, 1.0, 0.0)
            };
            let vn = c.normal.dot(body2.velocity_at(point.r2) - body1.velocity_at(point.r1));
            let impulse = -point.normal_mass * mass_scale * (vn + bias) - impulse_scale * point.normal_impulse;
            let new_impulse = (point.normal_impulse + impulse).max(0.0);
            let applied = new_impulse - point.normal_impulse;
            point.normal_impulse = new_impulse;
            point.max_normal_impulse = point.max_normal_impulse.max(new_impulse);
            apply(body1, body2, applied * c.normal, point.r1, point.r2);
        }
        for point in &mut c.points {
            let max_friction = c.friction * point.normal_impulse;
            let relative = body2.velocity_at(point.r2) - body1.velocity_at(point.r1);
            let old = point.tangent_impulse;
            let mut new = [0.0; 2];
            for k in 0..2 {
                new[k] = old[k] - point.tangent_mass[k] * c.tangents[k].dot(relative);
            }
            let length = (new[0] * new[0] + new[1] * new[1]).sqrt();
            if length > max_friction {
                let scale = if length > 0.0 { max_friction / length } else { 0.0 };
                new = [new[0] * scale, new[1] * scale];
            }
            point.tangent_impulse = new;
            let p = (new[0] - old[0]) * c.tangents[0] + (new[1] - old[1]) * c.tangents[1];
            apply(body1, body2, p, point.r1, point.r2);
        }
    }
}

/// Applies restitution once per step to points that approached faster than the threshold.
pub(crate) fn apply_restitution(
    mut solver: ResMut<SolverBodies>,
    mut contacts: ResMut<ContactConstraints>,
    config: Res<SolverConfig>,
) {
    let threshold = config.restitution_threshold;
    let bodies = &mut solver.bodies;
    for c in &mut contacts.constraints {
        if c.restitution == 0.0 {
            continue;
        }
        let (body1, body2) = split(bodies, c.b1, c.b2);
        for point in &mut c.points {
            if point.relative_velocity > -threshold || point.max_normal_impulse == 0.0 {
                continue;
            }
            let vn = c.normal.dot(body2.velocity_at(point.r2) - body1.velocity_at(point.r1));
            let impulse = -point.normal_mass * (vn + c.restitution * point.relative_velocity);
            let new_impulse = (point.normal_impulse + impulse).max(0.0);
            let applied = new_impulse - point.normal_impulse;
            point.normal_impulse = new_impulse;
            point.max_normal_impulse = point.max_normal_impulse.max(new_impulse);
            apply(body1, body2, applied * c.normal, point.r1, point.r2);
        }
    }
}

/// Stores the accumulated impulses in the contact graph for warm starting and reporting.
pub(crate) fn store_impulses(contacts: Res<ContactConstraints>, mut graph: ResMut<ContactGraph>) {
    for c in &contacts.constraints {
        let manifold = &mut graph.pairs[c.pair as usize].manifolds[c.manifold as usize];
        for (tracked, point) in manifold.points.iter_mut().zip(&c.points) {
            tracked.data.normal = point.normal_impulse;
            tracked.data.tangent = point.tangent_impulse;
        }
    }
}
