//! The built-in XPBD joints prepared for the substep loop (see the [module docs](super)).
//!
//! Once per step, [`prepare_joints`] copies every joint of a type into a dense list with its
//! bodies' solver slots and their places in the compact body array; every substep,
//! [`solve_joints`] gathers the compact body records, runs the passes over the lists in the
//! order [`XpbdJoints::schedule`] gives them (separate groups of joined bodies in parallel,
//! see [`groups`](crate::solver::groups)) and the direct solve of the chains
//! ([`path`](super::path)) without touching the ECS, and writes the moved poses back; after
//! the substeps, [`store_joints`] copies what the solver changed back into the components.

use std::ops::Range;

use bevy::ecs::entity::{EntityHashMap, EntityHashSet};
use bevy::math::Vec3A;
use bevy::prelude::*;

use super::contact_blocks::{Held, JointBlocks};
use super::path::JointPaths;
use super::point::{PointRow, solve_four};
use super::{
    DistanceJoint, FixedJoint, Joint, JointBody, JointCache, JointMotor, PrismaticJoint,
    RevoluteJoint, SphericalJoint, Substep, XBody,
};
use crate::body::CreationOrder;
use crate::body::creation::{OrderKey, order_key};
use crate::math::{Quaternion, Scalar, Vector};
use crate::parallel::{Shared, parallel_for};
use crate::schedule::PhysicsStepTime;
use crate::settings::{SolverConfig, SolverLanes};
use crate::solver::groups::{Components, Groups};
use crate::solver::rows::VelocityRows;
use crate::solver::solver_body::{BodyState, XpbdStart};
use crate::solver::xpbd::{ConstraintDisabled, ParticipantData, XpbdIterations, resolve};
use crate::solver::{RigidBodyQueryItem, SolverBodies};

/// A built-in XPBD joint as the dense substep loop solves it.
pub(crate) trait XpbdJoint: Joint + Copy + Send + Sync + 'static {
    /// Readies the joint for a step, with its bodies at their step-start pose: a joint that
    /// holds the relative pose or distance it started with takes it on its first step.
    fn prepare(&mut self, b1: &RigidBodyQueryItem, b2: &RigidBodyQueryItem) {
        let _ = (b1, b2);
    }

    /// One pass of the joint's solve, with the joint's cache for this substep.
    fn solve_pass(&mut self, bodies: [JointBody; 2], step: Substep, cache: &mut JointCache);

    /// Takes the readouts that depend on the bodies' rotations (a hinge's angle) from the
    /// rotations the step ended with, once per step rather than in every pass.
    fn read_out(&mut self, rotations: [Quaternion; 2]) {
        let _ = rotations;
    }

    /// Copies what the solver changed (force, torque, broken state, readouts, multipliers,
    /// and the relative pose or rest length taken on the first step) into `component`,
    /// leaving the settings, which the user may have changed meanwhile, alone.
    fn store(&self, component: &mut Self);

    /// This joint type's list.
    fn list(joints: &mut XpbdJoints) -> &mut JointList<Self>;

    /// The joint's motor, if it has one, and the multiplier it ended the step with (what it
    /// pushed in the last substep, `F h²`).
    fn motor_load(&self) -> Option<(JointMotor, Scalar)> {
        None
    }

    /// What the joint always holds, linear (at the anchors) and angular, with body 1 turned
    /// by `rotation1`: what its velocity blocks hold (see
    /// [`contact_blocks`](super::contact_blocks)).
    fn held(&self, rotation1: Quaternion) -> [Held; 2] {
        let _ = rotation1;
        [Held::Free; 2]
    }

    /// Whether joints of this type may take the [`PointRow`] fast path.
    const POINT_ROWS: bool = false;

    /// Whether this joint only joins its anchors (it may take the [`PointRow`] fast path).
    fn point_only(&self) -> bool {
        false
    }

    /// Takes the state its [`PointRow`] solved into.
    fn absorb_point(&mut self, row: &PointRow) {
        let _ = row;
    }
}

/// [`XpbdConstraint::solve`](crate::solver::xpbd::XpbdConstraint::solve) of a built-in joint
/// used on its own (not through the engine's prepared lists, say by a user who adds
/// `solve_constraint::<SphericalJoint, 2>`): one pass, with the 3×3 blocks built afresh.
pub(crate) fn solve_alone<J: XpbdJoint>(
    joint: &mut J,
    [b1, b2]: [&mut RigidBodyQueryItem; 2],
    dt: Scalar,
) {
    joint.prepare(b1, b2);
    let arms = arms(joint.base(), b1, b2);
    let gather = |b: &RigidBodyQueryItem| {
        let isotropic = XBody::isotropic_inertia(b);
        XBody::gather(b, b.accumulated_translation, b.rotation, isotropic)
    };
    let (mut x1, mut x2) = (gather(b1), gather(b2));
    let (mut s1, mut s2) = (BodyState::of(b1), BodyState::of(b2));
    let (start1, start2) = (XpbdStart::of_item(b1), XpbdStart::of_item(b2));
    let (q1, q2) = (b1.start_rotation, b2.start_rotation);
    joint.solve_pass(
        [
            JointBody::new(&mut x1, &mut s1, (&start1, q1), arms[0]),
            JointBody::new(&mut x2, &mut s2, (&start2, q2), arms[1]),
        ],
        Substep::new(dt),
        &mut JointCache::default(),
    );
    for (body, (x, state)) in [b1, b2].into_iter().zip([(x1, s1), (x2, s2)]) {
        x.scatter(body);
        body.linear_velocity = state.linear_velocity();
        body.angular_velocity = state.angular_velocity();
    }
}

/// Each anchor relative to its body's centre of mass, in the body frame.
fn arms(base: &super::JointBase, b1: &RigidBodyQueryItem, b2: &RigidBodyQueryItem) -> [Vec3A; 2] {
    [
        (base.local_anchor1 - b1.center_of_mass).into(),
        (base.local_anchor2 - b2.center_of_mass).into(),
    ]
}

/// One joint ready for the substep loop.
#[derive(Clone, Copy)]
pub(super) struct Prepared<J> {
    /// Its bodies' places in the compact body array.
    records: [usize; 2],
    /// Its bodies' solver slots.
    pub(super) slots: [usize; 2],
    /// Each anchor relative to its body's centre of mass, in the body frame.
    pub(super) arms: [Vec3A; 2],
    /// What its solve keeps between the passes of a substep.
    cache: JointCache,
    /// The joint entity.
    entity: Entity,
    /// A copy of the component, solved in place and stored back after the substeps.
    pub(super) joint: J,
}

/// The prepared joints of one type, in their creation order.
pub(crate) struct JointList<J> {
    entries: Vec<Prepared<J>>,
    /// For types with [`XpbdJoint::POINT_ROWS`], one per entry: its fast-path state, or a
    /// placeholder sending it down the general path.
    rows: Vec<PointRow>,
    /// One per entry once [`add_joint_blocks`](super::contact_blocks::add_joint_blocks) ran: its
    /// velocity blocks this step.
    velocity_blocks: Vec<JointBlocks>,
    /// Joints warned about missing or repeated entities.
    warned: EntityHashSet,
    /// Scratch: the joint entities in creation order, when the query does not yield them so.
    by_order: Vec<OrderKey>,
}

impl<J> Default for JointList<J> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            rows: Vec::new(),
            velocity_blocks: Vec::new(),
            warned: EntityHashSet::default(),
            by_order: Vec::new(),
        }
    }
}

impl<J: XpbdJoint> JointList<J> {
    /// Whether the joint at `entry` has velocity blocks this step.
    fn has_velocity_blocks(&self, entry: usize) -> bool {
        self.velocity_blocks
            .get(entry)
            .is_some_and(JointBlocks::any)
    }

    /// The prepared joints, and their velocity blocks to fill in.
    pub(super) fn entries_and_blocks(&mut self) -> (&[Prepared<J>], &mut Vec<JointBlocks>) {
        (&self.entries, &mut self.velocity_blocks)
    }

    /// Adds the joint of `entity` to the list, with its bodies resolved to solver slots and
    /// compact records, unless it is left out (see [`prepare_joints`]).
    fn push(
        &mut self,
        entity: Entity,
        joint: &J,
        records: &mut Records,
        solver: &mut SolverBodies,
        participants: &Query<ParticipantData>,
    ) {
        let Some(slots) = resolve(
            entity,
            joint.entities(),
            solver,
            participants,
            &mut self.warned,
            false,
        ) else {
            return;
        };
        let records = [records.of(slots[0], solver), records.of(slots[1], solver)];
        let (b1, b2) = (&solver.bodies[slots[0]], &solver.bodies[slots[1]]);
        let mut joint = *joint;
        joint.prepare(b1, b2);
        let entry = Prepared {
            records,
            slots,
            arms: arms(joint.base(), b1, b2),
            cache: JointCache::default(),
            entity,
            joint,
        };
        if J::POINT_ROWS {
            self.rows.push(if joint.point_only() {
                PointRow::new(joint.base(), entry.records, entry.arms)
            } else {
                PointRow::general()
            });
        }
        self.entries.push(entry);
    }

    /// Whether the joint at `entry` may be solved in a lane of [`solve_four`].
    fn takes_lanes(&self, entry: usize) -> bool {
        self.rows.get(entry).is_some_and(PointRow::takes_lanes)
    }
}

/// The joint lists in the order a pass visits them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum ListId {
    Fixed,
    Prismatic,
    Revolute,
    Spherical,
    Distance,
}

impl ListId {
    const ALL: [Self; 5] = [
        Self::Fixed,
        Self::Prismatic,
        Self::Revolute,
        Self::Spherical,
        Self::Distance,
    ];
}

/// One step of a substep's joint passes (see [`XpbdJoints::schedule`]).
#[derive(Clone, Copy, Debug)]
enum Op {
    /// One pass of one joint, the substep's first if `first`.
    One {
        list: ListId,
        entry: u32,
        first: bool,
    },
    /// One pass of four plain spherical joints that share no body, in lanes ([`solve_four`]).
    Four { entries: [u32; 4], first: [bool; 4] },
}

impl Op {
    /// One pass of the spherical joint `entry`, the substep's first if `first`.
    fn spherical((entry, first): (u32, bool)) -> Self {
        Self::One {
            list: ListId::Spherical,
            entry,
            first,
        }
    }
}

/// Orders the joints joining the given pairs of bodies (numbered below `bodies`) so that
/// joints sharing no body follow each other, without changing what a Gauss–Seidel pass
/// computes: a joint's level is one more than the highest level of the earlier joints it
/// shares a body with, and the joints are visited level by level, in list order within a
/// level. Every joint then still meets each of its bodies after exactly the same earlier joints
/// as in list order, so a pass in this order computes bit for bit what a pass in list order
/// would; but consecutive joints are independent, and the processor overlaps them instead of
/// waiting for each joint's result before it starts the next. (A chain has one joint per level
/// and keeps its order.) `body_levels` and `levels` are scratch; the order goes to `order`.
fn level_order(
    pairs: impl Iterator<Item = [usize; 2]>,
    bodies: usize,
    body_levels: &mut Vec<u32>,
    levels: &mut Vec<u32>,
    order: &mut Vec<u32>,
) {
    body_levels.clear();
    body_levels.resize(bodies, 0);
    levels.clear();
    let mut top = 0;
    for [a, b] in pairs {
        let level = body_levels[a].max(body_levels[b]);
        body_levels[a] = level + 1;
        body_levels[b] = level + 1;
        levels.push(level);
        top = top.max(level + 1);
    }
    // A counting sort by level, stable within a level.
    let n = levels.len();
    levels.resize(n + top as usize + 1, 0);
    let (levels, starts) = levels.split_at_mut(n);
    for &level in levels.iter() {
        starts[level as usize + 1] += 1;
    }
    for l in 1..starts.len() {
        starts[l] += starts[l - 1];
    }
    order.clear();
    order.resize(n, 0);
    for (i, &level) in levels.iter().enumerate() {
        let at = &mut starts[level as usize];
        order[*at as usize] = i as u32;
        *at += 1;
    }
}

impl<J: XpbdJoint> Prepared<J> {
    /// One pass of the general path on the joint's two bodies (`None` if it joins a body to
    /// itself: then the pass only clears); the first pass of a substep first clears the
    /// joint's multipliers and cache.
    #[inline(always)]
    fn solve(&mut self, bodies: Option<[JointBody; 2]>, step: Substep, first_pass: bool) {
        if first_pass {
            self.joint.clear_lagrange_multipliers();
            self.cache = JointCache::default();
        }
        if let Some(bodies) = bodies {
            self.joint.solve_pass(bodies, step, &mut self.cache);
        }
    }
}

/// Below this many body records, their refresh and write-back run on the calling thread.
const PARALLEL_RECORDS: usize = 512;

/// The compact records of the bodies the prepared joints act on.
#[derive(Default)]
struct Records {
    /// Each body's record: its constants from the step's start, its pose and (for a body
    /// without isotropic inertia) world inverse inertia refreshed every substep.
    records: Vec<XBody>,
    /// Per record, the body's rotation at the start of the step.
    start_rotations: Vec<Quaternion>,
    /// The rotation each record was refreshed to this substep.
    gathered: Vec<Quaternion>,
    /// The solver slot of each record.
    slots: Vec<usize>,
    /// Per record, `Some(s)` for a dynamic body with the inverse inertia `s I` and no locked
    /// rotation axis, whose world inverse inertia is `s I` at any rotation.
    isotropic: Vec<Option<Scalar>>,
    /// Per record, whether its body can move.
    dynamic: Vec<bool>,
    /// Solver slot → record (`u32::MAX`: none), valid for this step's slots.
    by_slot: Vec<u32>,
}

impl Records {
    /// Forgets the last step's bodies.
    fn clear(&mut self) {
        for &slot in &self.slots {
            self.by_slot[slot] = u32::MAX;
        }
        self.records.clear();
        self.start_rotations.clear();
        self.slots.clear();
        self.isotropic.clear();
        self.dynamic.clear();
    }

    /// The record of solver slot `slot`, added (and the body marked for the XPBD sets) if it
    /// has none yet.
    fn of(&mut self, slot: usize, solver: &mut SolverBodies) -> usize {
        if self.by_slot.len() <= slot {
            self.by_slot.resize(slot + 1, u32::MAX);
        }
        if self.by_slot[slot] == u32::MAX {
            solver.mark_constrained(slot);
            let body = &solver.bodies[slot];
            let isotropic = XBody::isotropic_inertia(body);
            self.by_slot[slot] = self.slots.len() as u32;
            self.slots.push(slot);
            let start = body.start_rotation;
            let record = XBody::gather(body, Vector::ZERO, start, isotropic);
            self.records.push(record);
            self.start_rotations.push(start);
            self.isotropic.push(isotropic);
            self.dynamic.push(body.is_dynamic());
        }
        self.by_slot[slot] as usize
    }

    /// Brings every record's pose, and the world inverse inertia of those without isotropic
    /// inertia, up to date with its body's state.
    #[inline(never)]
    fn refresh(&mut self, solver: &SolverBodies) {
        self.gathered
            .resize(self.records.len(), Quaternion::IDENTITY);
        let (records, gathered) = (
            Shared::new(&mut self.records),
            Shared::new(&mut self.gathered),
        );
        parallel_for(self.slots.len(), PARALLEL_RECORDS, |range| {
            for i in range {
                let slot = self.slots[i];
                let rotation = solver.states[slot].rotation * self.start_rotations[i];
                // SAFETY: each record is refreshed by the one call whose range holds it.
                let record = unsafe { records.get_mut(i) };
                record.translation = solver.states[slot].moved.truncate().into();
                record.rotation = rotation;
                if record.dynamic && self.isotropic[i].is_none() {
                    let inverse_inertia = solver.bodies[slot].world_inv_inertia_at(rotation);
                    record.inverse_inertia = inverse_inertia.into();
                }
                // SAFETY: as above.
                *unsafe { gathered.get_mut(i) } = rotation;
            }
        });
    }

    /// Writes every moved pose back to its body's state.
    #[inline(never)]
    fn scatter(&self, solver: &mut SolverBodies) {
        let states = Shared::new(&mut solver.states);
        parallel_for(self.records.len(), PARALLEL_RECORDS, |range| {
            for i in range {
                // SAFETY: records and solver slots are one to one, so each state is written by
                // the one call whose range holds its record.
                let state = unsafe { states.get_mut(self.slots[i]) };
                let (start, gathered) = (self.start_rotations[i], self.gathered[i]);
                self.records[i].scatter_state(state, start, gathered);
            }
        });
    }
}

/// What the joint-pass schedule of one joint is made from: its bodies' records, whether it
/// takes the four-lane fast path and whether it has broken (a broken joint ends a
/// [path](super::path)), and whether each body can move.
type ScheduleKey = (u32, u32, [bool; 3], [bool; 2]);

/// The prepared built-in XPBD joints of the step in progress, by type, and the compact
/// records of their bodies.
#[derive(Resource, Default)]
pub(crate) struct XpbdJoints {
    records: Records,
    /// A substep's passes over every list, in level order (see [`XpbdJoints::schedule`]).
    program: Vec<Op>,
    /// The components of the joints' graph (body records joined by joints, see
    /// [`groups`](crate::solver::groups)): two components share no joint and no record, so
    /// their passes may run on different threads. A body that cannot move still joins its
    /// joints' components: every joint pass holds its two records mutably, even the one it
    /// only reads.
    components: Components,
    /// Where each component's ops lie in `program`.
    groups: Groups,
    /// The number of passes `program` was checked for this step, or `None` if the lists were
    /// prepared since.
    program_passes: Option<u32>,
    /// What `program` was made from (see [`XpbdJoints::schedule`]), and for how many passes.
    scheduled: Vec<ScheduleKey>,
    scheduled_passes: u32,
    /// Scratch: this step's `scheduled`.
    key: Vec<ScheduleKey>,
    /// The chains of plain spherical joints solved directly, not in `program`.
    paths: JointPaths,
    /// Scratch for [`XpbdJoints::schedule`].
    body_levels: Vec<u32>,
    levels: Vec<u32>,
    order: Vec<u32>,
    four: Vec<(u32, bool)>,
    /// Whether plain spherical joints may be solved four at a time ([`SolverLanes`]).
    four_lanes: bool,
    /// Scratch: per solver slot, whether the body is in a contact this step.
    pub(super) touching: Vec<bool>,
    pub(super) fixed: JointList<FixedJoint>,
    pub(super) prismatic: JointList<PrismaticJoint>,
    pub(super) revolute: JointList<RevoluteJoint>,
    pub(super) spherical: JointList<SphericalJoint>,
    pub(super) distance: JointList<DistanceJoint>,
}

/// Starts a step's joint preparation (before the [`prepare_joints`] of every type).
pub(crate) fn begin_prepare(mut joints: ResMut<XpbdJoints>) {
    joints.records.clear();
    joints.program_passes = None;
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
    components: Query<(Entity, Option<&CreationOrder>, &J), Without<ConstraintDisabled>>,
    participants: Query<ParticipantData>,
) {
    // The records and this type's list, side by side.
    let mut records = std::mem::take(&mut joints.records);
    let list = J::list(&mut joints);
    list.entries.clear();
    list.rows.clear();
    list.velocity_blocks.clear();
    // Gauss–Seidel results depend on the order, so joints are visited in creation order, not
    // in the ECS storage order, which changes whenever a joint entity gains or loses a
    // component (a joint breaking moves another into its place) and differs between peers.
    // The query is walked when it already yields creation order (the usual case), otherwise
    // each joint is looked up.
    let key = |(entity, order, _): (Entity, Option<&CreationOrder>, &J)| order_key(entity, order);
    if components.iter().is_sorted_by_key(key) {
        for (entity, _, joint) in &components {
            list.push(entity, joint, &mut records, &mut solver, &participants);
        }
    } else {
        let mut order = std::mem::take(&mut list.by_order);
        order.clear();
        order.extend(components.iter().map(key));
        order.sort_unstable();
        for &OrderKey { entity, .. } in &order {
            if let Ok((_, _, joint)) = components.get(entity) {
                list.push(entity, joint, &mut records, &mut solver, &participants);
            }
        }
        list.by_order = order;
    }
    joints.records = records;
}

/// Solves every prepared joint, one type after another in a fixed order, in
/// [`XpbdIterations`] passes, on the compact body records.
pub(crate) fn solve_joints(
    mut joints: ResMut<XpbdJoints>,
    mut solver: ResMut<SolverBodies>,
    time: Res<PhysicsStepTime>,
    iterations: Res<XpbdIterations>,
    config: Res<SolverConfig>,
) {
    let joints = &mut *joints;
    if joints.records.slots.is_empty() {
        return;
    }
    let iterations = iterations.passes();
    let four_lanes = config.lanes != SolverLanes::One;
    if joints.program_passes != Some(iterations) || joints.four_lanes != four_lanes {
        joints.four_lanes = four_lanes;
        joints.schedule(iterations);
    }
    joints.records.refresh(&solver);
    let solver = &mut *solver;
    let passes = Passes {
        fixed: Shared::new(&mut joints.fixed.entries),
        prismatic: Shared::new(&mut joints.prismatic.entries),
        revolute: Shared::new(&mut joints.revolute.entries),
        spherical: Shared::new(&mut joints.spherical.entries),
        distance: Shared::new(&mut joints.distance.entries),
        rows: Shared::new(&mut joints.spherical.rows),
        records: Shared::new(&mut joints.records.records),
        states: Shared::new(&mut solver.states),
        starts: &solver.xpbd_start,
        start_rotations: &joints.records.start_rotations,
        step: Substep::new(time.substep_delta),
    };
    let program = &joints.program;
    // SAFETY: each range is made of whole components, which share no joint and no record.
    let kernel = |ops: Range<usize>| unsafe { passes.run(&program[ops]) };
    if joints.groups.run(PARALLEL_JOINT_OPS, kernel) {
        let counter = &crate::parallel::PARALLEL_COUNTERS.joint_stages;
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    let records = &mut joints.records.records;
    let rows = &mut joints.spherical.rows;
    joints.paths.solve(rows, records, passes.step, iterations);
    joints.records.scatter(solver);
}

/// What a substep's joint passes read and move, shared by the workers that run the program's
/// components (see [`groups`](crate::solver::groups)): the prepared joints, the compact body
/// records, and by solver slot the bodies' live states (velocities) and where they were
/// before this substep's XPBD sets.
#[derive(Clone, Copy)]
struct Passes<'a> {
    fixed: Shared<Prepared<FixedJoint>>,
    prismatic: Shared<Prepared<PrismaticJoint>>,
    revolute: Shared<Prepared<RevoluteJoint>>,
    spherical: Shared<Prepared<SphericalJoint>>,
    distance: Shared<Prepared<DistanceJoint>>,
    /// The spherical joints' fast-path rows.
    rows: Shared<PointRow>,
    records: Shared<XBody>,
    states: Shared<BodyState>,
    starts: &'a [XpbdStart],
    /// By record: the body's rotation at the start of the step.
    start_rotations: &'a [Quaternion],
    step: Substep,
}

impl Passes<'_> {
    /// Runs `ops` in order.
    ///
    /// # Safety
    /// No other thread meanwhile touches a joint or a body record of these ops (the ops of
    /// different components share none).
    unsafe fn run(&self, ops: &[Op]) {
        for &op in ops {
            // SAFETY: the caller's.
            unsafe {
                match op {
                    Op::One { list, entry, first } => self.one(list, entry as usize, first),
                    Op::Four { entries, first } => self.four(entries, first),
                }
            }
        }
    }

    /// One pass of joint `entry` of `list`, the substep's first if `first`.
    ///
    /// # Safety
    /// As [`run`](Self::run).
    #[inline(always)]
    unsafe fn one(&self, list: ListId, entry: usize, first: bool) {
        // SAFETY: the caller's.
        unsafe {
            match list {
                ListId::Fixed => self.general(self.fixed, entry, first),
                ListId::Prismatic => self.general(self.prismatic, entry, first),
                ListId::Revolute => self.general(self.revolute, entry, first),
                ListId::Distance => self.general(self.distance, entry, first),
                ListId::Spherical => {
                    let row = self.rows.get_mut(entry);
                    if row.general {
                        self.general(self.spherical, entry, first);
                    } else {
                        let [a, b] = row.records;
                        row.solve_on(self.pair([a as usize, b as usize]), self.step, first);
                    }
                }
            }
        }
    }

    /// One pass of the general path of joint `entry` of `list`.
    ///
    /// # Safety
    /// As [`run`](Self::run).
    #[inline(always)]
    unsafe fn general<J: XpbdJoint>(&self, list: Shared<Prepared<J>>, entry: usize, first: bool) {
        // SAFETY: the caller's.
        unsafe {
            let prepared = list.get_mut(entry);
            let bodies = self.pair(prepared.records).map(|[x1, x2]| {
                let [s1, s2] = prepared.slots.map(|slot| self.states.get_mut(slot));
                let start = |k: usize| {
                    let record = prepared.records[k];
                    (
                        &self.starts[prepared.slots[k]],
                        self.start_rotations[record],
                    )
                };
                [
                    JointBody::new(x1, s1, start(0), prepared.arms[0]),
                    JointBody::new(x2, s2, start(1), prepared.arms[1]),
                ]
            });
            prepared.solve(bodies, self.step, first);
        }
    }

    /// One pass of four fast-path spherical joints in lanes.
    ///
    /// # Safety
    /// As [`run`](Self::run).
    #[inline(always)]
    unsafe fn four(&self, entries: [u32; 4], first: [bool; 4]) {
        // SAFETY: the caller's; the four joints share no body (they are of one level).
        unsafe {
            let row = |lane: usize| self.rows.get_mut(entries[lane] as usize);
            let rows = [row(0), row(1), row(2), row(3)];
            // A joint in lanes joins two bodies (`PointRow::takes_lanes`).
            let pair = |lane: usize| {
                let [a, b] = rows[lane].records;
                self.pair([a as usize, b as usize])
            };
            if let (Some(a), Some(b), Some(c), Some(d)) = (pair(0), pair(1), pair(2), pair(3)) {
                solve_four(rows, [a, b, c, d], self.step, first);
            }
        }
    }

    /// The records `[a, b]`, or `None` if they are one.
    ///
    /// # Safety
    /// As [`run`](Self::run).
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    unsafe fn pair(&self, [a, b]: [usize; 2]) -> Option<[&mut XBody; 2]> {
        // SAFETY: the caller's; two different records.
        (a != b).then(|| unsafe { [self.records.get_mut(a), self.records.get_mut(b)] })
    }
}

impl XpbdJoints {
    /// How many joints `list` holds.
    fn len(&self, list: ListId) -> usize {
        match list {
            ListId::Fixed => self.fixed.entries.len(),
            ListId::Prismatic => self.prismatic.entries.len(),
            ListId::Revolute => self.revolute.entries.len(),
            ListId::Spherical => self.spherical.entries.len(),
            ListId::Distance => self.distance.entries.len(),
        }
    }

    /// Whether joint `entry` of `list` has velocity blocks this step.
    fn has_velocity_blocks(&self, list: ListId, entry: usize) -> bool {
        match list {
            ListId::Fixed => self.fixed.has_velocity_blocks(entry),
            ListId::Prismatic => self.prismatic.has_velocity_blocks(entry),
            ListId::Revolute => self.revolute.has_velocity_blocks(entry),
            ListId::Spherical => self.spherical.has_velocity_blocks(entry),
            ListId::Distance => self.distance.has_velocity_blocks(entry),
        }
    }

    /// The compact records of the bodies of joint `entry` of `list`.
    fn records_of(&self, list: ListId, entry: usize) -> [usize; 2] {
        match list {
            ListId::Fixed => self.fixed.entries[entry].records,
            ListId::Prismatic => self.prismatic.entries[entry].records,
            ListId::Revolute => self.revolute.entries[entry].records,
            ListId::Spherical => self.spherical.entries[entry].records,
            ListId::Distance => self.distance.entries[entry].records,
        }
    }

    /// Brings the program up to date for a substep's `passes` passes: every joint of every
    /// list not on a [path](super::path), pass after pass, in [`level_order`], so that
    /// consecutive joint passes share no body, also across passes (a chain's second pass starts
    /// as soon as the first has moved past its second joint); each level's plain spherical
    /// joints are grouped by four, to be solved in lanes. The program is then sorted by
    /// [component](Components), keeping the order within each, so that whole components can
    /// run on different threads. Each body still meets its joints in the order of the passes
    /// one after another, so the result is theirs, bit for bit. The program and the paths
    /// depend only on each joint's bodies, whether they can move and the joint's path and
    /// whether it has broken, so last step's are kept while those stay the same.
    fn schedule(&mut self, passes: u32) {
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        for list in ListId::ALL {
            key.extend((0..self.len(list)).map(|entry| {
                let [a, b] = self.records_of(list, entry);
                let row = (list == ListId::Spherical)
                    .then(|| self.spherical.rows.get(entry))
                    .flatten();
                let lanes = self.four_lanes && row.is_some_and(PointRow::takes_lanes);
                let broken = row.is_some_and(|row| row.broken);
                let dynamic = [a, b].map(|r| self.records.dynamic[r]);
                let blocks = self.has_velocity_blocks(list, entry);
                (a as u32, b as u32, [lanes, broken, blocks], dynamic)
            }));
        }
        let unchanged = key == self.scheduled && self.scheduled_passes == passes;
        self.key = key;
        self.program_passes = Some(passes);
        if !unchanged {
            std::mem::swap(&mut self.key, &mut self.scheduled);
            self.scheduled_passes = passes;
            self.write_program(passes);
        }
    }

    /// Writes the program (see [`schedule`](Self::schedule)).
    fn write_program(&mut self, passes: u32) {
        let mut paths = std::mem::take(&mut self.paths);
        paths.find(
            &self.spherical.rows,
            ListId::ALL
                .into_iter()
                .flat_map(|list| (0..self.len(list)).map(move |entry| (list, entry)))
                .map(|(list, entry)| self.records_of(list, entry)),
            &self.records.dynamic,
        );
        let layout = PassLayout::new(ListId::ALL.map(|list| self.len(list)));
        let (mut body_levels, mut levels, mut order) = (
            std::mem::take(&mut self.body_levels),
            std::mem::take(&mut self.levels),
            std::mem::take(&mut self.order),
        );
        level_order(
            (0..passes as usize * layout.per_pass).map(|flat| {
                let (_, list, entry) = layout.decode(flat);
                self.records_of(list, entry)
            }),
            self.records.slots.len(),
            &mut body_levels,
            &mut levels,
            &mut order,
        );
        let (mut program, mut four) = (
            std::mem::take(&mut self.program),
            std::mem::take(&mut self.four),
        );
        program.clear();
        four.clear();
        let mut components = std::mem::take(&mut self.components);
        components.find(
            (0..layout.per_pass).map(|flat| {
                let (_, list, entry) = layout.decode(flat);
                self.records_of(list, entry)
            }),
            self.records.slots.len(),
        );
        let joint_of = |flat: u32| flat as usize % layout.per_pass;
        components.sort(&mut order, joint_of);
        self.groups.clear();
        let mut at = None;
        for &flat in &order {
            // `levels` still holds each joint pass's level.
            let component = components.of_edge[joint_of(flat)];
            if at != Some((component, levels[flat as usize])) {
                program.extend(four.drain(..).map(Op::spherical));
                if at.is_some_and(|(c, _)| c != component) {
                    self.groups.end(program.len());
                }
                at = Some((component, levels[flat as usize]));
            }
            let (pass, list, entry) = layout.decode(flat as usize);
            if list == ListId::Spherical && paths.on_path(entry) {
                continue;
            }
            // A joint whose velocity blocks already hold it in the contact solve only corrects
            // the second-order drift the position update leaves: one pass.
            if pass > 0 && self.has_velocity_blocks(list, entry) {
                continue;
            }
            let (entry, first) = (entry as u32, pass == 0);
            let lanes = self.four_lanes && self.spherical.takes_lanes(entry as usize);
            if list != ListId::Spherical || !lanes {
                program.push(Op::One { list, entry, first });
                continue;
            }
            four.push((entry, first));
            if let [a, b, c, d] = four[..] {
                program.push(Op::Four {
                    entries: [a.0, b.0, c.0, d.0],
                    first: [a.1, b.1, c.1, d.1],
                });
                four.clear();
            }
        }
        program.extend(four.drain(..).map(Op::spherical));
        self.groups.end(program.len());
        self.components = components;
        (self.body_levels, self.levels, self.order) = (body_levels, levels, order);
        (self.program, self.four) = (program, four);
        self.paths = paths;
    }
}

/// Below this many joint passes in a substep's program, it runs on the calling thread.
const PARALLEL_JOINT_OPS: usize = 256;

/// Where the joint passes of a substep's passes one after another sit: pass by pass, list by
/// list in [`ListId::ALL`] order, entry by entry.
struct PassLayout {
    lens: [usize; 5],
    /// Joints in all lists.
    per_pass: usize,
}

impl PassLayout {
    fn new(lens: [usize; 5]) -> Self {
        Self {
            lens,
            per_pass: lens.iter().sum(),
        }
    }

    /// The pass, list and entry of the joint pass at `flat`.
    fn decode(&self, flat: usize) -> (usize, ListId, usize) {
        let (pass, mut entry) = (flat / self.per_pass, flat % self.per_pass);
        let mut list = 0;
        while entry >= self.lens[list] {
            entry -= self.lens[list];
            list += 1;
        }
        (pass, ListId::ALL[list], entry)
    }
}

/// Copies the solved state of every prepared joint of type `J` back into its component,
/// without marking it changed (solver bookkeeping is not a change for `Changed<J>`, which is
/// how the validation stage finds joints the user changed).
pub(crate) fn store_joints<J: XpbdJoint>(
    mut joints: ResMut<XpbdJoints>,
    solver: Res<SolverBodies>,
    rows: Res<VelocityRows>,
    time: Res<PhysicsStepTime>,
    mut components: Query<(Entity, &mut J), Without<ConstraintDisabled>>,
    mut stalled: Local<StalledMotors>,
) {
    let list = J::list(&mut joints);
    // The joints whose state their fast-path rows hold take it first.
    for (entry, row) in list.entries.iter_mut().zip(&list.rows) {
        if !row.general {
            entry.joint.absorb_point(row);
        }
    }
    // Then the velocity blocks' share of the load (it adds to the force the fast-path rows
    // just set).
    let (h, substeps) = (time.substep_delta, time.substeps.max(1) as Scalar);
    for (index, entry) in list.entries.iter_mut().enumerate() {
        let blocks = list.velocity_blocks.get(index).copied().unwrap_or_default();
        let impulses = blocks.impulses(&rows);
        entry
            .joint
            .base_mut()
            .take_block_impulses(impulses, h, substeps);
        entry
            .joint
            .read_out(entry.slots.map(|slot| solver.rotation(slot)));
    }
    warn_of_stalled_motors(list, &time, &mut stalled);
    let mut entries = list.entries.iter();
    let mut next = entries.next();
    // The list is usually in the query's order, so one walk finds every component...
    for (entity, mut component) in &mut components {
        let Some(entry) = next else {
            break;
        };
        if entry.entity == entity {
            entry.joint.store(component.bypass_change_detection());
            next = entries.next();
        }
    }
    // ...unless the query's order is not index order or changed during the step:
    // the rest are looked up.
    for entry in next.into_iter().chain(entries) {
        if let Ok((_, mut component)) = components.get_mut(entry.entity) {
            entry.joint.store(component.bypass_change_detection());
        }
    }
}

/// How long a motor may push at its force limit before a warning says so, s.
const STALL_WARNING_TIME: Scalar = 2.0;

/// Joints whose motor has pushed at its force limit, for how long (s), and those warned of.
#[derive(Default)]
pub(crate) struct StalledMotors {
    time: EntityHashMap<Scalar>,
    warned: EntityHashSet,
}

/// Warns, once per joint, of a motor that has pushed at its force limit for
/// [`STALL_WARNING_TIME`]: a door whose motor cannot beat its load or friction gives no other
/// sign. Only a log line: nothing the simulation computes depends on it.
fn warn_of_stalled_motors<J: XpbdJoint>(
    list: &JointList<J>,
    time: &PhysicsStepTime,
    stalled: &mut StalledMotors,
) {
    let h = time.substep_delta;
    for entry in &list.entries {
        let Some((motor, lagrange)) = entry.joint.motor_load() else {
            continue;
        };
        let limit = motor.max_force * h * h;
        let at_limit = limit.is_finite() && lagrange.abs() >= limit * (1.0 - 1e-3);
        if !at_limit {
            stalled.time.remove(&entry.entity);
            continue;
        }
        let pushed = stalled.time.entry(entry.entity).or_default();
        *pushed += time.delta;
        if *pushed >= STALL_WARNING_TIME && stalled.warned.insert(entry.entity) {
            warn!(
                "{}: joint motor has pushed at its force limit ({}) for {STALL_WARNING_TIME} s \
                 without reaching its target; raise `max_force` if it should",
                entry.entity, motor.max_force
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(pairs: &[[usize; 2]], bodies: usize) -> Vec<u32> {
        let (mut body_levels, mut levels, mut order) = (Vec::new(), Vec::new(), Vec::new());
        level_order(
            pairs.iter().copied(),
            bodies,
            &mut body_levels,
            &mut levels,
            &mut order,
        );
        order
    }

    /// Every two joints that share a body are visited in list order (so the result is that
    /// of list order), and the order is a permutation.
    fn check(pairs: &[[usize; 2]], order: &[u32]) {
        let mut position = vec![usize::MAX; pairs.len()];
        for (k, &i) in order.iter().enumerate() {
            assert_eq!(position[i as usize], usize::MAX, "joint {i} visited twice");
            position[i as usize] = k;
        }
        assert!(
            position.iter().all(|&p| p != usize::MAX),
            "a joint is never visited"
        );
        for i in 0..pairs.len() {
            for j in i + 1..pairs.len() {
                let shared = pairs[i].iter().any(|b| pairs[j].contains(b));
                assert!(
                    !shared || position[i] < position[j],
                    "joints {i} and {j} share a body but are visited out of list order"
                );
            }
        }
    }

    #[test]
    fn a_chain_keeps_its_order() {
        let pairs: Vec<[usize; 2]> = (0..20).map(|i| [i, i + 1]).collect();
        let order = order(&pairs, 21);
        assert_eq!(order, (0..20).collect::<Vec<u32>>());
    }

    #[test]
    fn a_grid_is_visited_in_a_valid_order_with_independent_neighbours() {
        // The joint grid of the benchmarks: each ball joined to its right and lower
        // neighbours, in row-major order.
        let n = 12;
        let mut pairs = Vec::new();
        for row in 0..n {
            for column in 0..n {
                let here = row * n + column;
                if column + 1 < n {
                    pairs.push([here, here + 1]);
                }
                if row + 1 < n {
                    pairs.push([here, here + n]);
                }
            }
        }
        let order = order(&pairs, n * n);
        check(&pairs, &order);
        let conflicts = |order: &[u32]| {
            order
                .windows(2)
                .filter(|w| {
                    let (a, b) = (pairs[w[0] as usize], pairs[w[1] as usize]);
                    a.iter().any(|x| b.contains(x))
                })
                .count()
        };
        let list: Vec<u32> = (0..pairs.len() as u32).collect();
        assert!(conflicts(&list) > pairs.len() / 3);
        // Within a level no two joints share a body; only where one level ends and the next
        // begins may two neighbours.
        assert!(
            10 * conflicts(&order) < conflicts(&list),
            "{} of {} neighbours in the order share a body ({} in list order)",
            conflicts(&order),
            pairs.len(),
            conflicts(&list)
        );
    }

    #[test]
    fn random_pairs_are_visited_in_a_valid_order() {
        // A fixed pseudo-random sequence (xorshift), repeated bodies included.
        let mut state = 0x2545_f491_u32;
        let mut next = |m: usize| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as usize % m
        };
        let pairs: Vec<[usize; 2]> = (0..300)
            .map(|_| {
                let a = next(50);
                [a, (a + 1 + next(49)) % 50]
            })
            .collect();
        check(&pairs, &order(&pairs, 50));
    }

    /// A list of joints made by `make` between the given pairs of records, each with its
    /// fast-path row if it has one.
    fn list<J: XpbdJoint>(pairs: &[[usize; 2]], make: impl Fn() -> J) -> JointList<J> {
        let mut list = JointList::default();
        for &records in pairs {
            let joint = make();
            if J::POINT_ROWS {
                list.rows.push(if joint.point_only() {
                    PointRow::new(joint.base(), records, [Vec3A::ZERO; 2])
                } else {
                    PointRow::general()
                });
            }
            list.entries.push(Prepared {
                records,
                slots: records,
                arms: [Vec3A::ZERO; 2],
                cache: JointCache::default(),
                entity: Entity::PLACEHOLDER,
                joint,
            });
        }
        list
    }

    #[test]
    fn the_program_keeps_every_bodys_order_of_joints_across_passes() {
        // A chain of 40 plain spherical joints over records 0–40, and distance joints (the
        // general path; after the spherical joints in each pass) tying every tenth link to
        // the next but one.
        let bodies = 41;
        let chain: Vec<[usize; 2]> = (0..40).map(|i| [i, i + 1]).collect();
        let ties: Vec<[usize; 2]> = (0..39).step_by(10).map(|i| [i, i + 2]).collect();
        let e = Entity::PLACEHOLDER;
        let mut joints = XpbdJoints {
            spherical: list(&chain, || SphericalJoint::new(e, e)),
            distance: list(&ties, || DistanceJoint::new(e, e)),
            ..default()
        };
        joints.records.slots = vec![0; bodies];
        joints.records.dynamic = vec![true; bodies];
        // Four passes: in a chain, pass k's joint j meets pass k + 1's joint j − 2, so four
        // passes give four independent joints a level.
        let passes = 4;
        joints.four_lanes = true;
        joints.schedule(passes);
        // The program's single joint passes, in order.
        let mut done = Vec::new();
        for &op in &joints.program {
            match op {
                Op::One { list, entry, first } => done.push((list, entry as usize, first)),
                Op::Four { entries, first } => done.extend(
                    (0..4).map(|lane| (ListId::Spherical, entries[lane] as usize, first[lane])),
                ),
            }
        }
        // The passes one after another, and the number of each joint's pass in it.
        let mut sequence = Vec::new();
        for pass in 0..passes {
            sequence.extend((0..chain.len()).map(|i| (ListId::Spherical, i, pass)));
            sequence.extend((0..ties.len()).map(|i| (ListId::Distance, i, pass)));
        }
        let pairs_of = |list: ListId, entry: usize| match list {
            ListId::Spherical => chain[entry],
            _ => ties[entry],
        };
        // Each joint's k-th appearance in the program is its pass k, the first flagged.
        let mut seen = std::collections::HashMap::new();
        let program: Vec<(ListId, usize, u32)> = done
            .iter()
            .map(|&(list, entry, first)| {
                let pass = seen.entry((list as u8, entry)).or_insert(0);
                assert_eq!(first, *pass == 0, "{list:?} {entry}: wrong first flag");
                *pass += 1;
                (list, entry, *pass - 1)
            })
            .collect();
        let mut sorted = program.clone();
        sorted.sort_by_key(|&(list, entry, pass)| (pass, list as u8, entry));
        let mut expected = sequence.clone();
        expected.sort_by_key(|&(list, entry, pass)| (pass, list as u8, entry));
        assert_eq!(sorted, expected, "not every joint is solved once per pass");
        // Every body meets its joints in the order of the passes one after another.
        for body in 0..bodies {
            let touches = |ops: &[(ListId, usize, u32)]| -> Vec<(ListId, usize, u32)> {
                ops.iter()
                    .copied()
                    .filter(|&(list, entry, _)| pairs_of(list, entry).contains(&body))
                    .collect()
            };
            assert_eq!(touches(&program), touches(&sequence), "body {body}");
        }
        // And the passes overlap: some groups of four hold joints of different passes.
        let mut at = 0;
        let mut mixed = 0;
        for &op in &joints.program {
            let n = if matches!(op, Op::Four { .. }) { 4 } else { 1 };
            let passes: Vec<u32> = program[at..at + n].iter().map(|p| p.2).collect();
            mixed += usize::from(n == 4 && passes.iter().any(|&p| p != passes[0]));
            at += n;
        }
        assert!(mixed > 0, "no group of four spans passes");
    }

    /// The single joint passes of a program, in order: list, entry and first-pass flag.
    fn passes_of(ops: &[Op]) -> Vec<(ListId, usize, bool)> {
        let mut done = Vec::new();
        for &op in ops {
            match op {
                Op::One { list, entry, first } => done.push((list, entry as usize, first)),
                Op::Four { entries, first } => done.extend(
                    (0..4).map(|lane| (ListId::Spherical, entries[lane] as usize, first[lane])),
                ),
            }
        }
        done
    }

    #[test]
    fn separate_groups_run_in_chunks_that_share_no_body() {
        // Three groups, their joints interleaved in list order: a chain of spherical joints
        // over records 0–9; a chain over 10–19 alternating spherical and distance joints; two
        // short chains hanging from the static record 20 (21–24 and 25–28), one group since a
        // joint pass holds both its records, even one that cannot move. Distance joints tie
        // links of the first and third groups too, so that no chain is a path solved apart.
        let bodies = 29;
        let a = (0..9).map(|i| [i, i + 1]);
        let b = (10..19).step_by(2).map(|i| [i, i + 1]);
        let hanging = [20, 21, 22, 23, 24, 20, 25, 26, 27, 28];
        let c = (0..9)
            .filter(|&i| i != 4)
            .map(|i| [hanging[i], hanging[i + 1]]);
        let mut spherical: Vec<[usize; 2]> = Vec::new();
        let (mut a, mut b, mut c) = (a.peekable(), b.peekable(), c.peekable());
        while a.peek().is_some() || b.peek().is_some() || c.peek().is_some() {
            spherical.extend(a.next().into_iter().chain(b.next()).chain(c.next()));
        }
        let mut ties: Vec<[usize; 2]> = (11..19).step_by(2).map(|i| [i, i + 1]).collect();
        ties.extend([[0, 2], [21, 23], [26, 28]]);
        let e = Entity::PLACEHOLDER;
        let mut joints = XpbdJoints {
            spherical: list(&spherical, || SphericalJoint::new(e, e)),
            distance: list(&ties, || DistanceJoint::new(e, e)),
            ..default()
        };
        joints.records.slots = vec![0; bodies];
        joints.records.dynamic = (0..bodies).map(|r| r != 20).collect();
        joints.four_lanes = true;
        let passes = 4;
        joints.schedule(passes);
        joints.groups.cut(2);
        let pairs_of = |list: ListId, entry: usize| match list {
            ListId::Spherical => spherical[entry],
            _ => ties[entry],
        };
        // The chunks cover the program once, and no two share a body.
        let program = &joints.program;
        let mut covered = vec![0; program.len()];
        let mut owner = vec![usize::MAX; bodies];
        for (chunk, &(start, end)) in joints.groups.chunks.iter().enumerate() {
            for at in start as usize..end as usize {
                covered[at] += 1;
                for (list, entry, _) in passes_of(&program[at..at + 1]) {
                    for record in pairs_of(list, entry) {
                        let first = std::mem::replace(&mut owner[record], chunk);
                        assert!(
                            first == usize::MAX || first == chunk,
                            "record {record} is in chunks {first} and {chunk}"
                        );
                    }
                }
            }
        }
        assert!(covered.iter().all(|&n| n == 1), "{covered:?}");
        assert_eq!(joints.groups.chunks.len(), 3, "three groups, two threads");
        // Every body still meets its joints in the order of the passes one after another.
        let mut sequence = Vec::new();
        for pass in 0..passes as usize {
            sequence.extend((0..spherical.len()).map(|i| (ListId::Spherical, i, pass)));
            sequence.extend((0..ties.len()).map(|i| (ListId::Distance, i, pass)));
        }
        let mut seen = std::collections::HashMap::new();
        let done: Vec<(ListId, usize, usize)> = passes_of(program)
            .into_iter()
            .map(|(list, entry, _)| {
                let pass = seen.entry((list as u8, entry)).or_insert(0);
                *pass += 1;
                (list, entry, *pass - 1)
            })
            .collect();
        assert_eq!(done.len(), sequence.len());
        for body in 0..bodies {
            let touches = |ops: &[(ListId, usize, usize)]| -> Vec<(ListId, usize, usize)> {
                ops.iter()
                    .copied()
                    .filter(|&(list, entry, _)| pairs_of(list, entry).contains(&body))
                    .collect()
            };
            assert_eq!(touches(&done), touches(&sequence), "body {body}");
        }
    }
}
