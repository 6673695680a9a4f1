//! The built-in XPBD joints prepared for the substep loop (see the [module docs](super)).
//!
//! Once per step, [`prepare_joints`] copies every joint of a type into a dense list with its
//! bodies' solver slots; every substep, [`solve_joints`] solves the lists without touching the
//! ECS; after the substeps, [`store_joints`] copies what the solver changed back into the
//! components.

use bevy::ecs::entity::EntityHashSet;
use bevy::prelude::*;

use super::{
    DistanceJoint, FixedJoint, Joint, JointCache, PrismaticJoint, RevoluteJoint, SphericalJoint,
    Substep,
};
use crate::schedule::PhysicsStepTime;
use crate::solver::xpbd::{ConstraintDisabled, ParticipantData, XpbdIterations, resolve};
use crate::solver::{RigidBodyQueryItem, SolverBodies};

/// A built-in XPBD joint as the dense substep loop solves it.
pub(crate) trait XpbdJoint: Joint + Copy + Send + Sync + 'static {
    /// One pass of the joint's solve, with the joint's cache for this substep.
    fn solve_pass(
        &mut self,
        bodies: [&mut RigidBodyQueryItem; 2],
        step: Substep,
        cache: &mut JointCache,
    );

    /// Copies what the solver changed (force, torque, broken state, readouts, multipliers,
    /// and the relative pose or rest length taken on the first solve) into `component`,
    /// leaving the settings, which the user may have changed meanwhile, alone.
    fn store(&self, component: &mut Self);

    /// This joint type's list.
    fn list(joints: &mut XpbdJoints) -> &mut JointList<Self>;
}

/// One joint ready for the substep loop.
#[derive(Clone, Copy)]
struct Prepared<J> {
    /// The joint entity.
    entity: Entity,
    /// Solver slots of its two bodies.
    bodies: [usize; 2],
    /// What its solve keeps between the passes of a substep.
    cache: JointCache,
    /// A copy of the component, solved in place and stored back after the substeps.
    joint: J,
}

/// The prepared joints of one type, in the order their query visits them.
pub(crate) struct JointList<J> {
    entries: Vec<Prepared<J>>,
    /// Joints warned about missing or repeated entities.
    warned: EntityHashSet,
}

impl<J> Default for JointList<J> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            warned: EntityHashSet::default(),
        }
    }
}

impl<J: XpbdJoint> JointList<J> {
    /// One Gauss–Seidel pass over the list; the first pass of a substep first clears each
    /// joint's multipliers and cache.
    #[inline]
    fn solve(&mut self, bodies: &mut [RigidBodyQueryItem], step: Substep, first_pass: bool) {
        for entry in &mut self.entries {
            if first_pass {
                entry.joint.clear_lagrange_multipliers();
                entry.cache = JointCache::default();
            }
            if let Ok(pair) = bodies.get_disjoint_mut(entry.bodies) {
                entry.joint.solve_pass(pair, step, &mut entry.cache);
            }
        }
    }
}

/// The prepared built-in XPBD joints of the step in progress, by type.
#[derive(Resource, Default)]
pub(crate) struct XpbdJoints {
    pub(super) fixed: JointList<FixedJoint>,
    pub(super) prismatic: JointList<PrismaticJoint>,
    pub(super) revolute: JointList<RevoluteJoint>,
    pub(super) spherical: JointList<SphericalJoint>,
    pub(super) distance: JointList<DistanceJoint>,
}

/// Resolves the bodies of every joint of type `J` to solver slots and copies the joints into
/// their dense list (once per step, in [`SolverSet::PrepareJoints`](crate::SolverSet)).
///
/// Static bodies are brought in with infinite mass, sleeping bodies joined to awake ones are
/// woken, a joint whose bodies are all static or asleep is left out (keeping its state), and a
/// joint naming a missing or non-body entity, or the same entity twice, is left out with a
/// warning naming it.
pub(crate) fn prepare_joints<J: XpbdJoint>(
    mut joints: ResMut<XpbdJoints>,
    mut solver: ResMut<SolverBodies>,
    components: Query<(Entity, &J), Without<ConstraintDisabled>>,
    participants: Query<ParticipantData>,
) {
    let list = J::list(&mut joints);
    list.entries.clear();
    for (entity, joint) in &components {
        let Some(bodies) = resolve(
            entity,
            joint.entities(),
            &mut solver,
            &participants,
            &mut list.warned,
        ) else {
            continue;
        };
        list.entries.push(Prepared {
            entity,
            bodies,
            cache: JointCache::default(),
            joint: *joint,
        });
    }
}

/// Solves every prepared joint, one type after another in a fixed order, in
/// [`XpbdIterations`] passes.
pub(crate) fn solve_joints(
    mut joints: ResMut<XpbdJoints>,
    mut solver: ResMut<SolverBodies>,
    time: Res<PhysicsStepTime>,
    iterations: Res<XpbdIterations>,
) {
    let joints = &mut *joints;
    let bodies = &mut solver.bodies;
    let h = Substep::new(time.substep_delta);
    for pass in 0..iterations.0.max(1) {
        let first = pass == 0;
        joints.fixed.solve(bodies, h, first);
        joints.prismatic.solve(bodies, h, first);
        joints.revolute.solve(bodies, h, first);
        joints.spherical.solve(bodies, h, first);
        joints.distance.solve(bodies, h, first);
    }
}

/// Copies the solved state of every prepared joint of type `J` back into its component,
/// without marking it changed (solver bookkeeping is not a change for `Changed<J>`, which is
/// how the validation stage finds joints the user changed).
pub(crate) fn store_joints<J: XpbdJoint>(
    mut joints: ResMut<XpbdJoints>,
    mut components: Query<(Entity, &mut J), Without<ConstraintDisabled>>,
) {
    let list = J::list(&mut joints);
    let mut entries = list.entries.iter();
    let mut next = entries.next();
    // The list is in the query's order, so one walk finds every component...
    for (entity, mut component) in &mut components {
        let Some(entry) = next else {
            break;
        };
        if entry.entity == entity {
            entry.joint.store(component.bypass_change_detection());
            next = entries.next();
        }
    }
    // ...unless the query's order changed during the step (components added or removed):
    // the rest are looked up.
    for entry in next.into_iter().chain(entries) {
        if let Ok((_, mut component)) = components.get_mut(entry.entity) {
            entry.joint.store(component.bypass_change_detection());
        }
    }
}
