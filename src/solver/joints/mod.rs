//! Joints: XPBD constraints between two bodies, each a component on its own entity.
//!
//! | joint | removes | limits | motor | spring, friction |
//! | --- | --- | --- | --- | --- |
//! | [`FixedJoint`] | all relative motion | – | – | – |
//! | [`DistanceJoint`] | distance between anchors | min/max distance | – | spring |
//! | [`SphericalJoint`] | anchor separation | swing and twist angles | – | – |
//! | [`RevoluteJoint`] | all but rotation about one axis | angle (several turns) | speed or angle | both |
//! | [`PrismaticJoint`] | all but translation along one axis | distance | speed or position | both |
//! | [`D6Joint`] | any of six axes (locked, limited or free) | per axis, swing cone, soft, bouncy | spring–damper drive per axis | drive |
//!
//! A [`JointSpring`] pulls a joint's free coordinate (length, hinge angle, slider position)
//! towards a rest value from both sides, given as a frequency and damping ratio (relative to
//! the joint's effective mass, as Box2D and Jolt do) or as a physical stiffness and damping;
//! joint friction resists motion along the free coordinate with a limited force or torque.
//! Both are XPBD rows, solved after the joint's limits; a motor works against the friction
//! ([`JointSpring`] says how a spring is solved).
//!
//! [`D6Joint`] is different: it is built on velocity rows ([`rows`](crate::solver::rows)) and
//! solved with the contacts, not with XPBD; it shares only the collision filtering below.
//!
//! Every joint shares [`JointBase`] (bodies, anchors in each body's frame, compliance, velocity
//! damping, break force, whether the joined bodies collide) and the builders of the [`Joint`]
//! trait. The XPBD joints follow the same rules as user constraints
//! ([`solve_constraint`](crate::solver::xpbd::solve_constraint)): a joint between two static
//! bodies does nothing, a joint naming a missing entity is skipped with a warning, and sleeping
//! bodies are woken by awake partners.
//!
//! The force and torque a joint applied during the last substep are readable with
//! [`Joint::force`] and [`Joint::torque`] (`λ / h²`, Müller et al. 2020); a joint whose force
//! exceeds its break force disables itself and sends [`JointBroken`].
//!
//! By default joined bodies do not collide with each other (as in Box2D and PhysX); use
//! [`Joint::with_collision`] to let them.
//!
//! ## How the XPBD joints are solved
//!
//! A joint grid or a long chain spends nearly all its step in the joint passes (16 per step at
//! the default 4 substeps × 4 [`XpbdIterations`]), so they touch only dense data made for
//! them, and the ECS only at the ends of the step:
//!
//! - **Once per step** ([`SolverSet::PrepareJoints`](crate::SolverSet)), each joint type's
//!   components are copied into a dense list, with their bodies' solver slots (resolved once,
//!   bringing static and sleeping partners into the step) and each anchor relative to its
//!   body's centre of mass. A fixed or prismatic joint's relative rotation and a distance
//!   joint's rest length are taken here on its first step. The substep's passes over all
//!   lists, pass after pass in a fixed type order (fixed, prismatic, revolute, spherical,
//!   distance), are then put in *level order*: a joint pass's level is one more than the
//!   highest level of the earlier joint passes it shares a body with, and the substep runs
//!   them level by level. Every body then meets its joints in exactly the order of the
//!   passes one after another, so the result is theirs bit for bit, but consecutive joint
//!   passes are independent and the processor works on several at once. Passes overlap: in
//!   a chain, the second pass starts on the first link as soon as the first pass has moved
//!   past the second, so four passes run side by side down the chain. The order depends only
//!   on which bodies each joint joins and whether it takes the fast path below, and is kept
//!   from step to step while those stay the same.
//! - **Separate groups of joined bodies run in parallel.** Joints whose bodies are not
//!   connected through other joints (two ragdolls, a door and a bridge) cannot affect each
//!   other within the joint solve, so the program is also sorted by these groups (the
//!   connected components of the graph of bodies and joints, a body that cannot move
//!   included), and with the `parallel` feature a large program is shared out whole groups
//!   at a time: one parallel stage per substep, with no wait between groups, and the same
//!   result bit for bit. One large group (a joint grid) stays on one thread: splitting it
//!   would mean waiting between its levels, a few joints each, which costs more than it
//!   saves.
//! - **Every substep** ([`SubstepSolverSet::SolveXpbdConstraints`]), the compact 128-byte
//!   records of the bodies the joints act on (built once per step: inverse mass, exact `s I`
//!   for isotropic bodies) take their centre of mass, rotation and, for other bodies, world
//!   inverse inertia from the bodies' states, the joint passes run in that order, and the
//!   moved poses are written back to the states for the user constraints and the velocity
//!   projection. A *uniform* body (the same inverse mass on every axis, inverse inertia
//!   `s I`: balls and cubes without locked axes) turns by `s v` rather than by a matrix
//!   product, in every path, so the four-lane solve below reads two scalars of it instead of
//!   a vector and a matrix. The first pass of a substep clears the multipliers and builds
//!   each joint's 3×3 blocks,
//!   `(K + α̃ I)⁻¹` of its point constraint and of a fixed or prismatic joint's orientation,
//!   from the arms of that moment; the other passes reuse them, while the error `C` is always
//!   that of the current poses. Within a substep the arms turn by the corrections only, a
//!   small fraction of a radian, and the Gauss–Seidel iteration converges to the same
//!   `C + α̃ λ = 0` whatever `K` it uses. Rebuilding the blocks every pass would cost half as
//!   much again as the whole pass and holds the joints no tighter: on the 40 × 40 grid of the
//!   benchmarks the worst joint error over steps 200–400 is 5.6 cm with the blocks kept,
//!   5.7 cm with them rebuilt (mean 0.33 cm either way).
//! - A **spherical joint without limits or damping**, the joint of chains, ropes and grids,
//!   takes a fast path: everything its passes read and write sits in one 128-byte row, so a
//!   pass touches that row and two body records and nothing else. Such joint passes of one
//!   level share no body, so they are solved four at a time, one per SIMD lane, blocks
//!   included: on the 40 × 40 grid 12,248 of the 12,480 joint passes of a substep go in
//!   groups of four. Every lane computes exactly what the general path computes (tests hold
//!   both the one-joint and the four-joint solve to the general path's bits). A chain's rows
//!   are solved directly instead (next item).
//! - **Chains are solved exactly.** Where plain spherical joints form a *path* (a chain
//!   hanging from an anchor, a rope between two posts, a free chain: every dynamic body on it
//!   joined to at most two joints, both plain spherical, and no loop), Gauss–Seidel passes
//!   would carry a correction one joint down the chain per pass, halving it at each, and a
//!   100-link chain at rest sags 0.09–0.35 %, bouncing like a soft spring. Instead the path's
//!   point constraints are solved together, once per substep: their system is block
//!   tridiagonal, factored by elimination down the chain and solved exactly, a Newton step of
//!   the whole chain (Baraff 1996; Deul et al. 2018). The chain at rest then keeps its length
//!   to f32 rounding, and the step costs less than the four passes did. Branching trees,
//!   loops and grids keep the passes; [`XpbdIterations`] sets those passes only (a path takes
//!   one Newton step per substep, exact for the linearized constraints).
//! - **Joints on contacts.** A joint with a body in a contact this step also enters the
//!   contact solve as rigid velocity blocks over what it always holds, without position bias and
//!   warm started from the last step, so friction is solved against the joint's load rather
//!   than meeting it as a position correction after the fact, which made jointed bodies lying
//!   on the ground crawl and never fall asleep (the module `contact_blocks` in the source says
//!   more). Its [`force`](Joint::force) and [`torque`](Joint::torque) include the blocks' share.
//!   Such a joint then takes one XPBD pass per substep, not [`XpbdIterations`]: its blocks keep
//!   it closed to first order, and the pass corrects the second-order drift of the position
//!   update.
//! - **After the substeps** ([`SolverSet::Writeback`](crate::SolverSet)), what the solver
//!   changed (force, torque, broken state, readouts such as [`RevoluteJoint::angle`],
//!   multipliers, the relative pose or rest length taken on the first step) is copied back into
//!   the components, without marking them changed; settings the user changed meanwhile are
//!   left alone.
//!
//! Joint corrections nudge the rotations (`q ← q + ½ (Δθ, 0) q`) and renormalise them at once
//! (by one reciprocal of the length and four products, in every path: 1.2 % of the 40 × 40
//! grid's step against glam's four divisions): the blocks are kept for the substep while the
//! arms turn with the rotations, and an unnormalised quaternion would stretch the arms.
//!
//! Used on its own (a user adding `solve_constraint::<SphericalJoint, 2>`), a built-in joint
//! solves through the same code, with its blocks built afresh on every call.
//!
//! - D. Baraff, *Linear-Time Dynamics using Lagrange Multipliers*, SIGGRAPH 1996.
//! - C. Deul, T. Kugelstadt, M. Weiler, J. Bender, *Direct Position-Based Solver for Stiff
//!   Rods*, Computer Graphics Forum 37(6), 2018.
//! - M. Müller, M. Macklin, N. Chentanez, S. Jeschke, T.-Y. Kim, *Detailed Rigid Body
//!   Simulation with Extended Position Based Dynamics*, SCA 2020.

mod body;
mod contact_blocks;
mod d6;
mod distance;
mod fixed;
mod lanes;
mod path;
mod point;
mod prepared;
mod prismatic;
mod revolute;
mod spherical;
mod spring;

pub use d6::{D6Axis, D6Drive, D6Joint, D6Limit, D6Motion};
pub use distance::DistanceJoint;
pub use fixed::FixedJoint;
pub use prismatic::PrismaticJoint;
pub use revolute::RevoluteJoint;
pub use spherical::SphericalJoint;
pub use spring::{JointSpring, SpringCoefficients};

use bevy::ecs::component::Mutable;
use bevy::ecs::entity::{EntityMapper, MapEntities};
use bevy::math::{Mat3A, Vec3A};
use bevy::prelude::*;

use super::RigidBodyQueryItem;
use super::xpbd::lagrange_update;
use super::xpbd::{ConstraintDisabled, XpbdConstraint, XpbdIterations};
use crate::collision::broad_phase::CollisionExclusions;
use crate::math::{Scalar, Vector};
use crate::schedule::{
    PhysicsSchedule, PhysicsStepSet, SolverSet, SubstepSchedule, SubstepSolverSet,
};
use crate::solver::rows::solve_velocity_constraint;
use crate::validation::{Validate, ValidationApp, check, join, non_negative};
pub(crate) use body::{JointBody, XBody};

/// What every joint has: its bodies, anchors, compliance, damping, break force and state.
#[derive(Clone, Reflect, Copy, Debug, PartialEq)]
#[reflect(Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct JointBase {
    /// The first body.
    pub entity1: Entity,
    /// The second body.
    pub entity2: Entity,
    /// Attachment point in the first body's frame (relative to its origin).
    pub local_anchor1: Vector,
    /// Attachment point in the second body's frame.
    pub local_anchor2: Vector,
    /// Compliance α of the joint's positional and angular constraints (inverse stiffness,
    /// m/N or rad/(N·m)); 0 is rigid.
    pub compliance: Scalar,
    /// Damping of the anchors' relative linear velocity, 1/s.
    pub linear_damping: Scalar,
    /// Damping of the bodies' relative angular velocity, 1/s.
    pub angular_damping: Scalar,
    /// The force (N) above which the joint breaks.
    pub break_force: Option<Scalar>,
    /// Whether the joined bodies collide with each other. Default `false`.
    pub collide_connected: bool,
    force: Vector,
    torque: Vector,
    /// The per-step impulses (linear, angular) on body 1 of the joint's velocity blocks in the
    /// last step, their warm start (see `contact_blocks`); zero if it had none.
    block_impulses: [Vector; 2],
    broken: bool,
    /// Whether this substep's velocity damping was applied (damping runs once per substep,
    /// however many passes the solver makes).
    damped: bool,
}

impl JointBase {
    fn new(entity1: Entity, entity2: Entity) -> Self {
        Self {
            entity1,
            entity2,
            local_anchor1: Vector::ZERO,
            local_anchor2: Vector::ZERO,
            compliance: 0.0,
            linear_damping: 0.0,
            angular_damping: 0.0,
            break_force: None,
            collide_connected: false,
            force: Vector::ZERO,
            torque: Vector::ZERO,
            block_impulses: [Vector::ZERO; 2],
            broken: false,
            damped: false,
        }
    }

    /// Starts a new substep: forgets the last substep's force, torque and damping. A broken
    /// joint keeps the force that broke it.
    pub(crate) fn begin_substep(&mut self) {
        if self.broken {
            return;
        }
        self.force = Vector::ZERO;
        self.torque = Vector::ZERO;
        self.damped = false;
    }

    /// The per-step impulses (linear, angular) on body 1 of the joint's velocity blocks in the
    /// last step.
    pub(crate) fn block_impulses(&self) -> [Vector; 2] {
        self.block_impulses
    }

    /// Takes the impulses `[linear, angular]` on body 1 of the joint's velocity blocks in the
    /// last substep (of length `h`, one of `substeps`): keeps them per step for the next
    /// step's warm start, adds their force and torque on body 2 to the last substep's, and
    /// breaks the joint if the force now exceeds its break force.
    pub(crate) fn take_block_impulses(
        &mut self,
        [linear, angular]: [Vector; 2],
        h: Scalar,
        substeps: Scalar,
    ) {
        self.block_impulses = [linear * substeps, angular * substeps];
        if self.broken || (linear == Vector::ZERO && angular == Vector::ZERO) {
            return;
        }
        self.force -= linear / h;
        self.torque -= angular / h;
        if self
            .break_force
            .is_some_and(|max| self.force.length() > max)
        {
            self.broken = true;
        }
    }

    /// True once the joint has broken.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Takes the force and broken state a [`point::PointRow`] solved into, as a substep of the
    /// general path would have left them.
    pub(crate) fn absorb_point(&mut self, row: &point::PointRow) {
        self.force = row.force;
        self.broken = row.broken;
        self.damped = !row.broken;
    }

    /// Copies the state the solver keeps (force, torque, broken, damped) from `solved`.
    pub(crate) fn store(&mut self, solved: &JointBase) {
        self.force = solved.force;
        self.torque = solved.torque;
        self.block_impulses = solved.block_impulses;
        self.broken = solved.broken;
        self.damped = solved.damped;
    }
}

impl Validate for JointBase {
    fn validate(&mut self) -> Option<String> {
        let why = "is not a finite number ≥ 0";
        join([
            check_anchor(&mut self.local_anchor1, "local anchor 1"),
            check_anchor(&mut self.local_anchor2, "local anchor 2"),
            check(&mut self.compliance, non_negative, "compliance", why, 0.0),
            check(
                &mut self.linear_damping,
                non_negative,
                "linear damping",
                why,
                0.0,
            ),
            check(
                &mut self.angular_damping,
                non_negative,
                "angular damping",
                why,
                0.0,
            ),
            check_break_force(&mut self.break_force),
        ])
    }
}

/// A non-finite anchor is replaced by the body origin.
fn check_anchor(anchor: &mut Vector, what: &str) -> Option<String> {
    if anchor.is_finite() {
        return None;
    }
    let message = format!("{what} {anchor} is not finite; using the body origin");
    *anchor = Vector::ZERO;
    Some(message)
}

/// A NaN or negative break force is dropped: the joint never breaks.
fn check_break_force(break_force: &mut Option<Scalar>) -> Option<String> {
    let force = (*break_force)?;
    if force >= 0.0 {
        return None;
    }
    *break_force = None;
    Some(format!(
        "break force {force} is NaN or negative; the joint never breaks"
    ))
}

/// A zero-length or non-finite joint axis is replaced by `default`; a usable one is
/// normalised.
pub(crate) fn check_axis(axis: &mut Vector, what: &str, default: Vector) -> Option<String> {
    // Checked every step: a unit axis is left bit for bit as it is.
    if (axis.length_squared() - 1.0).abs() <= 4.0 * Scalar::EPSILON {
        return None;
    }
    if let Some(unit) = axis.try_normalize() {
        *axis = unit;
        return None;
    }
    let message = format!("{what} {axis} has no direction; using {default}");
    *axis = default;
    Some(message)
}

/// Orders a limit range, or removes it (returning the problem) if it has a NaN end or no
/// real number lies in it.
pub(crate) fn check_limits(limits: &mut Option<(Scalar, Scalar)>, what: &str) -> Option<String> {
    let (a, b) = (*limits)?;
    let (min, max) = (a.min(b), a.max(b));
    if a.is_nan() || b.is_nan() || min == Scalar::INFINITY || max == Scalar::NEG_INFINITY {
        *limits = None;
        return Some(format!(
            "{what} ({a}, {b}) are not a usable range; no limit"
        ));
    }
    *limits = Some((min, max));
    None
}

/// Checks a motor: a non-finite target removes it; a NaN or negative force limit is 0 (no
/// force); a bad position compliance is 0.
pub(crate) fn check_motor(motor: &mut Option<JointMotor>) -> Option<String> {
    let m = motor.as_mut()?;
    let target = match m.target {
        MotorTarget::Velocity(speed) => speed,
        MotorTarget::Position { target, .. } => target,
    };
    if !target.is_finite() {
        *motor = None;
        return Some(format!(
            "motor target {target} is not finite; motor removed"
        ));
    }
    let why = "is not a finite number ≥ 0";
    let compliance = match &mut m.target {
        MotorTarget::Position { compliance, .. } => {
            check(compliance, non_negative, "motor compliance", why, 0.0)
        }
        MotorTarget::Velocity(_) => None,
    };
    let force = check(
        &mut m.max_force,
        |f| f >= 0.0,
        "motor max_force",
        "is NaN or negative",
        0.0,
    );
    join([compliance, force])
}

/// `value` limited to `[min, max]`; unlike `f32::clamp` it never panics (a NaN bound is no
/// bound).
#[inline]
pub(crate) fn clamp_range(value: Scalar, min: Scalar, max: Scalar) -> Scalar {
    value.max(min).min(max)
}

/// Builders and readouts shared by every joint.
pub trait Joint: Component<Mutability = Mutable> + XpbdConstraint<2> + Sized {
    /// The shared joint data.
    fn base(&self) -> &JointBase;
    /// The shared joint data, mutably.
    fn base_mut(&mut self) -> &mut JointBase;

    /// Sets the attachment point in the first body's frame.
    fn with_local_anchor1(mut self, anchor: Vector) -> Self {
        self.base_mut().local_anchor1 = anchor;
        self
    }
    /// Sets the attachment point in the second body's frame.
    fn with_local_anchor2(mut self, anchor: Vector) -> Self {
        self.base_mut().local_anchor2 = anchor;
        self
    }
    /// Sets the compliance (inverse stiffness); 0 is rigid. A negative or non-finite value is
    /// replaced by 0 with a warning when the joint enters the world.
    fn with_compliance(mut self, compliance: Scalar) -> Self {
        self.base_mut().compliance = compliance;
        self
    }
    /// Damps the relative linear velocity of the anchors, 1/s (finite and ≥ 0, else 0).
    fn with_linear_velocity_damping(mut self, damping: Scalar) -> Self {
        self.base_mut().linear_damping = damping;
        self
    }
    /// Damps the relative angular velocity of the bodies, 1/s (finite and ≥ 0, else 0).
    fn with_angular_velocity_damping(mut self, damping: Scalar) -> Self {
        self.base_mut().angular_damping = damping;
        self
    }
    /// Breaks the joint when the force it applies exceeds `force` newtons. A NaN or negative
    /// force is dropped with a warning (the joint then never breaks).
    fn with_break_force(mut self, force: Scalar) -> Self {
        self.base_mut().break_force = Some(force);
        self
    }
    /// Lets the joined bodies collide with each other (they do not by default).
    fn with_collision(mut self, collide: bool) -> Self {
        self.base_mut().collide_connected = collide;
        self
    }
    /// The force the joint applied to the second body during the last substep (all solver
    /// passes together), N; the first body received the opposite.
    fn force(&self) -> Vector {
        self.base().force
    }
    /// The torque the joint's angular constraints applied to the second body during the last
    /// substep, N·m.
    fn torque(&self) -> Vector {
        self.base().torque
    }
    /// True once the joint has broken.
    fn is_broken(&self) -> bool {
        self.base().broken
    }
}

/// Sent once when a joint breaks.
#[derive(Message, Clone, Copy, Debug, PartialEq)]
pub struct JointBroken {
    /// The joint entity (it now has [`ConstraintDisabled`]).
    pub joint: Entity,
    /// The force that broke it, N.
    pub force: Vector,
}

/// Adds the joints to the solver, collision filtering and break reporting.
pub(crate) struct JointPlugin;

impl Plugin for JointPlugin {
    fn build(&self, app: &mut App) {
        app.add_message::<JointBroken>()
            .init_resource::<XpbdIterations>()
            .validate_resource::<XpbdIterations>()
            .validate_component::<FixedJoint>()
            .validate_component::<PrismaticJoint>()
            .validate_component::<RevoluteJoint>()
            .validate_component::<SphericalJoint>()
            .validate_component::<DistanceJoint>()
            .validate_component::<D6Joint>()
            .add_observer(wake_joined_on_add::<FixedJoint>)
            .add_observer(wake_joined_on_add::<PrismaticJoint>)
            .add_observer(wake_joined_on_add::<RevoluteJoint>)
            .add_observer(wake_joined_on_add::<SphericalJoint>)
            .add_observer(wake_joined_on_add::<DistanceJoint>)
            .add_observer(wake_d6_joined_on_add)
            .init_resource::<prepared::XpbdJoints>()
            .add_systems(
                SubstepSchedule,
                prepared::solve_joints.in_set(SubstepSolverSet::SolveXpbdConstraints),
            )
            .add_systems(
                PhysicsSchedule,
                (
                    (
                        clear_exclusions,
                        collect_exclusions::<FixedJoint>,
                        collect_exclusions::<PrismaticJoint>,
                        collect_exclusions::<RevoluteJoint>,
                        collect_exclusions::<SphericalJoint>,
                        collect_exclusions::<DistanceJoint>,
                        collect_d6_exclusions,
                        sort_exclusions,
                    )
                        .chain()
                        .in_set(PhysicsStepSet::Prepare),
                    (
                        report_broken::<FixedJoint>,
                        report_broken::<PrismaticJoint>,
                        report_broken::<RevoluteJoint>,
                        report_broken::<SphericalJoint>,
                        report_broken::<DistanceJoint>,
                    )
                        .in_set(PhysicsStepSet::Finalize),
                    (
                        prepared::begin_prepare,
                        prepared::prepare_joints::<FixedJoint>,
                        prepared::prepare_joints::<PrismaticJoint>,
                        prepared::prepare_joints::<RevoluteJoint>,
                        prepared::prepare_joints::<SphericalJoint>,
                        prepared::prepare_joints::<DistanceJoint>,
                        contact_blocks::add_joint_blocks,
                        solve_velocity_constraint::<D6Joint, 2>,
                    )
                        .chain()
                        .in_set(SolverSet::PrepareJoints),
                    (
                        prepared::store_joints::<FixedJoint>,
                        prepared::store_joints::<PrismaticJoint>,
                        prepared::store_joints::<RevoluteJoint>,
                        prepared::store_joints::<SphericalJoint>,
                        prepared::store_joints::<DistanceJoint>,
                    )
                        .in_set(SolverSet::Writeback),
                ),
            );
    }
}

fn clear_exclusions(mut exclusions: ResMut<CollisionExclusions>) {
    exclusions.clear();
}

fn collect_exclusions<J: Joint>(
    joints: Query<&J, Without<ConstraintDisabled>>,
    mut exclusions: ResMut<CollisionExclusions>,
) {
    for joint in &joints {
        let base = joint.base();
        if !base.collide_connected {
            exclusions.push(base.entity1, base.entity2);
        }
    }
}

fn collect_d6_exclusions(
    joints: Query<&D6Joint, Without<ConstraintDisabled>>,
    mut exclusions: ResMut<CollisionExclusions>,
) {
    for joint in &joints {
        if !joint.collide_connected {
            exclusions.push(joint.entity1, joint.entity2);
        }
    }
}

/// A new joint wakes both its bodies, so that a sleeping one joins the next step whole, with
/// gravity and contacts, rather than being brought in by the joint halfway through it.
fn wake_joined_on_add<J: Joint>(add: On<Add, J>, joints: Query<&J>, commands: Commands) {
    if let Ok(joint) = joints.get(add.entity) {
        let base = joint.base();
        wake(commands, [base.entity1, base.entity2]);
    }
}

/// [`wake_joined_on_add`] for [`D6Joint`].
fn wake_d6_joined_on_add(add: On<Add, D6Joint>, joints: Query<&D6Joint>, commands: Commands) {
    if let Ok(joint) = joints.get(add.entity) {
        wake(commands, [joint.entity1, joint.entity2]);
    }
}

fn wake(mut commands: Commands, bodies: [Entity; 2]) {
    for body in bodies {
        if let Ok(mut body) = commands.get_entity(body) {
            body.remove::<crate::body::Sleeping>();
        }
    }
}

fn sort_exclusions(mut exclusions: ResMut<CollisionExclusions>) {
    exclusions.finish();
}

fn report_broken<J: Joint>(
    mut commands: Commands,
    joints: Query<(Entity, &J), Without<ConstraintDisabled>>,
    mut broken: MessageWriter<JointBroken>,
) {
    for (entity, joint) in &joints {
        if joint.is_broken() {
            commands.entity(entity).insert(ConstraintDisabled);
            broken.write(JointBroken {
                joint: entity,
                force: joint.force(),
            });
        }
    }
}

/// The world-space state of a joint's anchors inside one solve.
pub(crate) struct Anchors {
    /// Anchor offsets from each centre of mass (world).
    pub r1: Vector,
    pub r2: Vector,
    /// World anchor positions.
    pub p1: Vector,
    pub p2: Vector,
}

impl Anchors {
    /// The distance between the anchors at the start of the step: what joints that adopt
    /// their initial configuration measure (before any integration of the step).
    pub(crate) fn distance_at_step_start(
        base: &JointBase,
        b1: &RigidBodyQueryItem,
        b2: &RigidBodyQueryItem,
    ) -> Scalar {
        let anchor = |b: &RigidBodyQueryItem, local: Vector| b.position + b.start_rotation * local;
        (anchor(b1, base.local_anchor1) - anchor(b2, base.local_anchor2)).length()
    }

    #[inline]
    pub(crate) fn new(b1: &JointBody, b2: &JointBody) -> Self {
        let r1 = b1.anchor_offset();
        let r2 = b2.anchor_offset();
        Self {
            r1,
            r2,
            p1: b1.center() + r1,
            p2: b2.center() + r2,
        }
    }
}

/// The inverse of a joint's 3×3 effective mass, kept for the passes of one substep.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) enum Block {
    /// Not built yet this substep.
    #[default]
    Empty,
    /// Built, and singular: the part cannot move the bodies.
    Singular,
    /// Built: `(K + α̃ I)⁻¹`, symmetric (so its columns are its rows).
    Inverse(Mat3A),
}

impl Block {
    #[inline]
    fn of(inverse: Option<Mat3A>) -> Self {
        inverse.map_or(Block::Singular, Block::Inverse)
    }
}

/// What a joint keeps between the passes of one substep: the inverses of its 3×3 blocks
/// (`(K + α̃ I)⁻¹` of the point and the orientation constraint), built on the first pass from
/// the arms of that moment, and a hinge's starting angle. Cleared at the start of every
/// substep.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct JointCache {
    pub point: Block,
    pub orientation: Block,
    /// A hinge's angle, counting whole turns, at its bodies' poses before this substep's XPBD
    /// sets: taken on the substep's first pass (see [`RevoluteJoint::angle`]).
    pub start_angle: Option<Scalar>,
}

/// The substep length `h` and `1 / h²`, computed once per substep.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Substep {
    pub h: Scalar,
    pub inv_h2: Scalar,
}

impl Substep {
    pub(crate) fn new(h: Scalar) -> Self {
        Self {
            h,
            inv_h2: 1.0 / (h * h),
        }
    }
}

/// Solves a joint's parts in one pass and accumulates the force and torque they apply to
/// body 2: a position impulse `p` on body 1 is a force `-p / h²` on body 2, a velocity impulse
/// `p` on body 2 is a force `p / h`.
pub(crate) struct JointSolve<'a> {
    force: Vec3A,
    torque: Vector,
    pub h: Scalar,
    /// `1 / h²`.
    inv_h2: Scalar,
    cache: &'a mut JointCache,
}

impl<'a> JointSolve<'a> {
    /// A solve in the substep `step` with the joint's cache for this substep (a fresh one is
    /// built into on first use).
    #[inline(always)]
    pub(crate) fn new(step: Substep, cache: &'a mut JointCache) -> Self {
        Self {
            force: Vec3A::ZERO,
            torque: Vector::ZERO,
            h: step.h,
            inv_h2: step.inv_h2,
            cache,
        }
    }

    /// Applies the position impulse `p` to body 1 and `-p` to body 2 at their anchors, and
    /// books the force it exerts on body 2.
    #[inline]
    fn push(&mut self, b1: &mut JointBody, b2: &mut JointBody, anchors: &Anchors, p: Vector) {
        let pa = Vec3A::from(p);
        b1.apply_position_impulse(pa, anchors.r1.into());
        b2.apply_position_impulse(-pa, anchors.r2.into());
        self.force -= pa * self.inv_h2;
    }

    /// Applies the angular position impulse `p` to body 1 and `-p` to body 2, and books the
    /// torque it exerts on body 2.
    #[inline]
    fn turn(&mut self, b1: &mut JointBody, b2: &mut JointBody, p: Vector) {
        b1.apply_angular_impulse(p);
        b2.apply_angular_impulse(-p);
        self.torque -= p * self.inv_h2;
    }

    /// Joins the anchors, solving all three directions at once: with the 3×3 generalized
    /// inverse mass `K = K₁ + K₂`, `Kᵢ = wᵢ I − [rᵢ]× Iᵢ⁻¹ [rᵢ]×`, the vector multiplier update
    /// is `Δλ = −(K + α̃ I)⁻¹ (C + α̃ λ)`. An anchor away from the centre of mass makes `K`
    /// strongly direction-dependent, and a one-dimensional solve along the error would then
    /// need several passes to close even a single joint.
    ///
    /// `(K + α̃ I)⁻¹` is built on the substep's first pass and kept for the others (see the
    /// [module docs](self)); the error `C` is always that of the current poses.
    #[inline(always)]
    pub(crate) fn point(
        &mut self,
        b1: &mut JointBody,
        b2: &mut JointBody,
        lagrange: &mut Vector,
        compliance: Scalar,
    ) {
        let r1 = b1.anchor_offset_a();
        let r2 = b2.anchor_offset_a();
        let delta = (b1.center_a() + r1) - (b2.center_a() + r2);
        let tilde = compliance * self.inv_h2;
        if let Block::Empty = self.cache.point {
            self.cache.point = Block::of(point_inverse(b1.record(), b2.record(), r1, r2, tilde));
        }
        let Block::Inverse(inverse) = self.cache.point else {
            return;
        };
        // A rigid joint (the usual case) skips `α̃ λ`, which is then exactly zero.
        let rhs = if tilde == 0.0 {
            delta
        } else {
            delta + tilde * Vec3A::from(*lagrange)
        };
        let p = -(inverse * rhs);
        *lagrange += Vector::from(p);
        b1.apply_position_impulse(p, r1);
        b2.apply_position_impulse(-p, r2);
        self.force -= p * self.inv_h2;
    }

    /// Turns the bodies by the full rotation vector `rotation` (body 1 turned past body 2),
    /// solving all three axes at once with `K = I₁⁻¹ + I₂⁻¹`, as [`point`](Self::point) does
    /// for positions (and with its inverse kept for the substep's passes the same way).
    pub(crate) fn orientation(
        &mut self,
        b1: &mut JointBody,
        b2: &mut JointBody,
        rotation: Vector,
        lagrange: &mut Vector,
        compliance: Scalar,
    ) {
        let tilde = compliance * self.inv_h2;
        if let Block::Empty = self.cache.orientation {
            let k = *b1.inverse_inertia()
                + *b2.inverse_inertia()
                + Mat3A::from_diagonal(Vector::splat(tilde));
            self.cache.orientation = Block::of(symmetric_inverse(&k));
        }
        let Block::Inverse(inverse) = self.cache.orientation else {
            // Locked rotation axes make K singular: fall back to the one-axis solve.
            let mut scalar = lagrange.dot(rotation.normalize_or_zero());
            let p = self.angle_clamped(b1, b2, rotation, &mut scalar, compliance, Scalar::INFINITY);
            *lagrange += p;
            return;
        };
        let p: Vector = (-(inverse * Vec3A::from(rotation + tilde * *lagrange))).into();
        *lagrange += p;
        self.turn(b1, b2, p);
    }

    /// Drives `delta` (how far anchor 1 is past where it should be, relative to anchor 2) to
    /// zero with the given compliance, along `delta` only.
    pub(crate) fn position(
        &mut self,
        b1: &mut JointBody,
        b2: &mut JointBody,
        (anchors, delta): (&Anchors, Vector),
        lagrange: &mut Scalar,
        compliance: Scalar,
    ) {
        self.position_clamped(
            b1,
            b2,
            anchors,
            delta,
            lagrange,
            compliance,
            Scalar::INFINITY,
        );
    }

    /// Drives `rotation` (the rotation vector by which body 1 is turned past where it should
    /// be, relative to body 2) to zero with the given compliance.
    pub(crate) fn angle(
        &mut self,
        b1: &mut JointBody,
        b2: &mut JointBody,
        rotation: Vector,
        lagrange: &mut Scalar,
        compliance: Scalar,
    ) {
        self.angle_clamped(b1, b2, rotation, lagrange, compliance, Scalar::INFINITY);
    }

    /// [`position`](Self::position) with the accumulated multiplier clamped to
    /// `±max_lagrange` (a force limit of `max_lagrange / h²`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn position_clamped(
        &mut self,
        b1: &mut JointBody,
        b2: &mut JointBody,
        anchors: &Anchors,
        delta: Vector,
        lagrange: &mut Scalar,
        compliance: Scalar,
        max_lagrange: Scalar,
    ) -> Vector {
        let c = delta.length();
        if c <= Scalar::EPSILON {
            return Vector::ZERO;
        }
        let n = delta / c;
        let w =
            b1.positional_inverse_mass(anchors.r1, n) + b2.positional_inverse_mass(anchors.r2, n);
        let dl = clamped_update(lagrange, c, w, compliance, self.h, max_lagrange);
        let p = dl * n;
        self.push(b1, b2, anchors, p);
        p
    }

    /// [`angle`](Self::angle) with the accumulated multiplier clamped to `±max_lagrange`.
    pub(crate) fn angle_clamped(
        &mut self,
        b1: &mut JointBody,
        b2: &mut JointBody,
        rotation: Vector,
        lagrange: &mut Scalar,
        compliance: Scalar,
        max_lagrange: Scalar,
    ) -> Vector {
        let c = rotation.length();
        if c <= Scalar::EPSILON {
            return Vector::ZERO;
        }
        let n = rotation / c;
        let w = b1.angular_inverse_mass(n) + b2.angular_inverse_mass(n);
        let p = clamped_update(lagrange, c, w, compliance, self.h, max_lagrange) * n;
        self.turn(b1, b2, p);
        p
    }

    /// Keeps the angle from `a` (on body 1) to `b` (on body 2) about `axis` within
    /// `[min, max]`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn limit_angle(
        &mut self,
        b1: &mut JointBody,
        b2: &mut JointBody,
        axis: Vector,
        a: Vector,
        b: Vector,
        (min, max): (Scalar, Scalar),
        lagrange: &mut Scalar,
        compliance: Scalar,
    ) {
        let angle = signed_angle(a, b, axis);
        let excess = angle - clamp_range(angle, min, max);
        if excess != 0.0 {
            // Body 2 is turned `excess` too far about `axis`: body 1 is turned `-excess`.
            self.angle(b1, b2, -excess * axis, lagrange, compliance);
        }
    }

    /// Damps relative velocities (once per substep) and adds this pass's force and torque to
    /// `base`, breaking the joint if the force exceeds its break force.
    #[inline(always)]
    pub(crate) fn finish(self, base: &mut JointBase, b1: &mut JointBody, b2: &mut JointBody) {
        if !base.damped {
            base.damped = true;
            if base.linear_damping > 0.0 || base.angular_damping > 0.0 {
                damp(base, b1, b2, self.h);
            }
        }
        base.force += Vector::from(self.force);
        base.torque += self.torque;
        if base
            .break_force
            .is_some_and(|max| base.force.length() > max)
        {
            base.broken = true;
        }
    }
}

/// Updates `lagrange` by the XPBD step, keeping it within `±max`; returns the change.
fn clamped_update(
    lagrange: &mut Scalar,
    c: Scalar,
    w: Scalar,
    compliance: Scalar,
    h: Scalar,
    max: Scalar,
) -> Scalar {
    let new = clamp_range(
        *lagrange + lagrange_update(*lagrange, c, w, compliance, h),
        -max,
        max,
    );
    let change = new - *lagrange;
    *lagrange = new;
    change
}

/// `(K + α̃ I)⁻¹` of a point constraint between two bodies with arms `r1` and `r2` (world
/// offsets of the anchors from the centres of mass), or `None` if `K + α̃ I` is singular: with
/// `Kᵢ = wᵢ I − [rᵢ]× Iᵢ⁻¹ [rᵢ]×` (locked axes removed; zero for bodies that cannot move).
#[inline(never)]
pub(crate) fn point_inverse(
    b1: &XBody,
    b2: &XBody,
    r1: Vec3A,
    r2: Vec3A,
    tilde: Scalar,
) -> Option<Mat3A> {
    symmetric_inverse(&point_block(b1, b2, r1, r2, tilde))
}

/// `K + α̃ I` of a point constraint (see [`point_inverse`]).
#[inline(always)]
pub(crate) fn point_block(b1: &XBody, b2: &XBody, r1: Vec3A, r2: Vec3A, tilde: Scalar) -> Mat3A {
    point_mass(b1, r1) + point_mass(b2, r2) + Mat3A::from_diagonal(Vector::splat(tilde))
}

/// The 3×3 generalized inverse mass `w I − [r]× I⁻¹ [r]×` of a body pushed at offset `r`.
#[inline(always)]
fn point_mass(body: &XBody, r: Vec3A) -> Mat3A {
    point_coupling(body, r, r)
}

/// `w I − [a]× I⁻¹ [b]×`: how far a position impulse at offset `b` moves the body's point at
/// offset `a` (zero for bodies that cannot move). Transposed by swapping `a` and `b`.
#[inline(always)]
pub(crate) fn point_coupling(body: &XBody, a: Vec3A, b: Vec3A) -> Mat3A {
    if !body.dynamic {
        return Mat3A::ZERO;
    }
    // −[a]× A [b]× = ([a]× A) [b]×ᵀ. The columns of [a]× A are uₖ = a × Aₖ, and column j of
    // the product is Σₖ uₖ ([b]×)ⱼₖ, row j of [b]× being (0, −z, y), (z, 0, −x), (−y, x, 0).
    let m = &body.inverse_inertia;
    let (u0, u1, u2) = (a.cross(m.x_axis), a.cross(m.y_axis), a.cross(m.z_axis));
    let w = body.inverse_mass;
    Mat3A::from_cols(
        u2 * b.y - u1 * b.z + Vec3A::new(w.x, 0.0, 0.0),
        u0 * b.z - u2 * b.x + Vec3A::new(0.0, w.y, 0.0),
        u1 * b.x - u0 * b.y + Vec3A::new(0.0, 0.0, w.z),
    )
}

/// The inverse of the symmetric matrix `m` (its cofactor columns over its determinant), or
/// `None` if the matrix is singular to float precision (its determinant within
/// `Scalar::EPSILON` of the product of its column lengths, the largest it could be) or not
/// finite. The test is relative: `K` of a heavy body is small (`1/m` at its centre of mass), and
/// an absolute threshold would call a 200 kg body's block singular and leave its joint unsolved.
#[inline(always)]
pub(crate) fn symmetric_inverse(m: &Mat3A) -> Option<Mat3A> {
    let c0 = m.y_axis.cross(m.z_axis);
    let c1 = m.z_axis.cross(m.x_axis);
    let c2 = m.x_axis.cross(m.y_axis);
    let det = m.x_axis.dot(c0);
    let scale = m.x_axis.length() * m.y_axis.length() * m.z_axis.length();
    if det.abs() <= Scalar::EPSILON * scale || !det.is_finite() {
        return None;
    }
    let inv = 1.0 / det;
    Some(Mat3A::from_cols(c0 * inv, c1 * inv, c2 * inv))
}

/// `angle` wrapped into `(-π, π]`.
pub(crate) fn wrap_angle(angle: Scalar) -> Scalar {
    use std::f32::consts::{PI, TAU};
    angle - TAU * ((angle + PI) / TAU).floor()
}

/// The angle from `a` to `b` about `axis`, in `(-π, π]`.
pub(crate) fn signed_angle(a: Vector, b: Vector, axis: Vector) -> Scalar {
    crate::math::atan2(a.cross(b).dot(axis), a.dot(b))
}

/// Joint velocity damping (Müller et al. 2020, §3.6): removes the fraction `min(c h, 1)` of the
/// anchors' relative linear velocity and of the bodies' relative angular velocity.
#[inline(never)]
fn damp(base: &JointBase, b1: &mut JointBody, b2: &mut JointBody, h: Scalar) {
    let anchors = Anchors::new(b1, b2);
    if base.linear_damping > 0.0 {
        let dv = (b2.velocity_at(anchors.r2) - b1.velocity_at(anchors.r1))
            * (base.linear_damping * h).min(1.0);
        velocity_impulse(b1, b2, &anchors, dv);
    }
    if base.angular_damping > 0.0 {
        let dw =
            (b2.angular_velocity() - b1.angular_velocity()) * (base.angular_damping * h).min(1.0);
        let length = dw.length();
        if length > 0.0 {
            let n = dw / length;
            let w = b1.angular_inverse_mass(n) + b2.angular_inverse_mass(n);
            if w > 0.0 {
                let p = n * (length / w);
                b1.add_angular_velocity_impulse(p);
                b2.add_angular_velocity_impulse(-p);
            }
        }
    }
}

/// Reduces the anchors' relative velocity by `dv` with a velocity impulse along `dv`.
fn velocity_impulse(b1: &mut JointBody, b2: &mut JointBody, anchors: &Anchors, dv: Vector) {
    let length = dv.length();
    if length <= 0.0 {
        return;
    }
    let n = dv / length;
    let w = b1.positional_inverse_mass(anchors.r1, n) + b2.positional_inverse_mass(anchors.r2, n);
    if w > 0.0 {
        let p = n * (length / w);
        b1.add_velocity_impulse(p, anchors.r1);
        b2.add_velocity_impulse(-p, anchors.r2);
    }
}

/// A joint motor: drives a revolute joint's angle or a prismatic joint's position.
///
/// Both kinds work at the position level, as XPBD prescribes: a speed target asks the joint
/// to advance by `(target − current speed) · h` from where integration left it during each
/// substep, so that the velocity projection ends the substep at the target speed; a position
/// target is a compliant constraint on the angle or position. Either way the multiplier is
/// clamped so the force stays within `max_force`.
#[derive(Clone, Reflect, Copy, Debug, PartialEq)]
#[reflect(Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub struct JointMotor {
    /// What the motor drives towards.
    pub target: MotorTarget,
    /// The largest force (prismatic, N) or torque (revolute, N·m) the motor may apply.
    pub max_force: Scalar,
}

/// The goal of a [`JointMotor`].
#[derive(Clone, Reflect, Copy, Debug, PartialEq)]
#[reflect(Debug, PartialEq)]
#[cfg_attr(
    feature = "serialize",
    derive(serde::Serialize, serde::Deserialize),
    reflect(Serialize, Deserialize)
)]
pub enum MotorTarget {
    /// A relative speed: rad/s (revolute) or m/s (prismatic).
    Velocity(Scalar),
    /// A relative angle (rad) or position (m), reached through a spring of the given
    /// compliance (0 is as stiff as the solver allows).
    Position {
        /// The angle or position.
        target: Scalar,
        /// Inverse stiffness of the spring.
        compliance: Scalar,
    },
}

impl JointMotor {
    /// Drives the joint at `speed` (rad/s or m/s) with at most `max_force` (N·m or N;
    /// `Scalar::INFINITY` for no limit).
    pub fn velocity(speed: Scalar, max_force: Scalar) -> Self {
        Self {
            target: MotorTarget::Velocity(speed),
            max_force,
        }
    }

    /// Drives the joint to `target` (rad or m) with a rigid spring and at most `max_force`
    /// (N·m or N; `Scalar::INFINITY` for no limit). With a finite limit the motor is a
    /// time-optimal servo: it moves at the largest speed from which half its force can still
    /// stop the joint at the target (the other half is kept for loads such as gravity), so it
    /// arrives without swinging about the target. For a soft servo, see
    /// [`with_compliance`](Self::with_compliance), or give the joint a
    /// [`JointSpring`] towards the target instead.
    pub fn position(target: Scalar, max_force: Scalar) -> Self {
        Self {
            target: MotorTarget::Position {
                target,
                compliance: 0.0,
            },
            max_force,
        }
    }

    /// Limits the motor's force (or torque). A NaN or negative limit is replaced by 0 (the
    /// motor applies no force) with a warning when the joint enters the world.
    pub fn with_max_force(mut self, max_force: Scalar) -> Self {
        self.max_force = max_force;
        self
    }

    /// Sets the compliance of a position motor's spring (finite and ≥ 0, else 0).
    pub fn with_compliance(mut self, compliance: Scalar) -> Self {
        if let MotorTarget::Position { compliance: c, .. } = &mut self.target {
            *c = compliance;
        }
        self
    }

    /// The speed a rigid, force-limited position motor asks for when the joint is `error`
    /// past its target: the speed that gets there within the substep `h`, but no more than
    /// the braking speed √(2·a·|error|) for the deceleration `a` half the force gives the
    /// joint's `inverse_mass`. A bang-bang servo that only pushes towards the target with its
    /// force limit has no damping and swings about it forever under a load; this one
    /// arrives with no speed left. `None` for the motors that solve their own row: velocity
    /// motors, soft springs and unlimited motors, which reach the target exactly.
    pub(crate) fn servo_speed(
        &self,
        error: Scalar,
        inverse_mass: Scalar,
        h: Scalar,
    ) -> Option<Scalar> {
        match self.target {
            MotorTarget::Position { compliance, .. }
                if compliance == 0.0 && self.max_force.is_finite() =>
            {
                let braking = (self.max_force * inverse_mass * error.abs()).sqrt();
                Some(-error.signum() * (error.abs() / h).min(braking))
            }
            _ => None,
        }
    }
}

/// Implements the [`Joint`] and [`MapEntities`] boilerplate for a joint type with a `base`
/// field.
macro_rules! impl_joint {
    ($ty:ty) => {
        impl $crate::solver::joints::Joint for $ty {
            fn base(&self) -> &$crate::solver::joints::JointBase {
                &self.base
            }
            fn base_mut(&mut self) -> &mut $crate::solver::joints::JointBase {
                &mut self.base
            }
        }

        impl bevy::ecs::entity::MapEntities for $ty {
            fn map_entities<M: bevy::ecs::entity::EntityMapper>(&mut self, mapper: &mut M) {
                bevy::ecs::entity::MapEntities::map_entities(&mut self.base, mapper);
            }
        }
    };
}
use impl_joint;

impl MapEntities for JointBase {
    fn map_entities<M: EntityMapper>(&mut self, mapper: &mut M) {
        self.entity1 = mapper.get_mapped(self.entity1);
        self.entity2 = mapper.get_mapped(self.entity2);
    }
}
