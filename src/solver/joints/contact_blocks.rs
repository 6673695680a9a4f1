//! Velocity blocks for the XPBD joints of bodies that touch something.
//!
//! The contact solver works on velocities before the positions are integrated; the XPBD joint
//! passes move the bodies afterwards. A body held by a joint and resting on a contact therefore
//! meets the joint's pull only as a position correction after its friction was solved: each
//! substep the joint slides it by about `F h² / m` along the ground (`F` the load the joint
//! carries), which friction, one substep late, only stops again. A ragdoll or two jointed
//! capsules lying on the floor then crawl at a speed proportional to the substep and never
//! fall asleep.
//!
//! So each joint with a body in a contact this step also enters the contact solve, beside the
//! velocity rows ([`rows`](crate::solver::rows)), as rigid velocity blocks over what it always
//! holds (the anchors' relative velocity, and the relative angular velocity about the axes it
//! locks), each solved exactly in one update, with no position bias (the XPBD passes still
//! correct the pose) and warm started with the last step's impulses, as the six-axis joint's
//! rows are. The contacts, their friction and the joint then settle on one set of velocities,
//! the position update keeps the joint closed to first order, and the XPBD correction after it
//! is second order in `h`. Limits and motors stay XPBD only. Joints whose bodies touch nothing
//! (chains, ropes, grids in the air) add no blocks, nor do compliant joints (rigid blocks would
//! not give way), which therefore still creep, nor blocks in which the bodies cannot move
//! (locked rotation axes on both sides). A joint that breaks during a step keeps its blocks
//! to the step's end.
//!
//! The method is that of engines that solve joints and contacts together at the velocity level
//! (Catto, "Solver2D: soft step", 2024; Box2D v3), kept here only as far as friction needs it:
//! the joints' positions stay with XPBD (Müller et al. 2020).

use bevy::prelude::*;

use super::prepared::{JointList, XpbdJoint, XpbdJoints};
use crate::math::{Scalar, Vector};
use crate::schedule::PhysicsStepTime;
use crate::solver::contact::ContactConstraints;
use crate::solver::rows::{PreparedBlock, VelocityRows};
use crate::solver::{RigidBodyQueryItem, SolverBodies};

/// Which relative motions (linear at the anchors, or angular) a joint always holds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) enum Held {
    /// None.
    #[default]
    Free,
    /// Along (or about) every axis.
    All,
    /// Along (or about) every axis perpendicular to this world axis (a unit vector).
    AllBut(Vector),
}

/// A joint's velocity blocks this step, linear and angular: their places in
/// [`VelocityRows::blocks`], `u32::MAX` where it has none.
#[derive(Clone, Copy)]
pub(crate) struct JointBlocks([u32; 2]);

impl Default for JointBlocks {
    fn default() -> Self {
        Self([u32::MAX; 2])
    }
}

impl JointBlocks {
    /// Whether the joint has any block.
    pub(crate) fn any(&self) -> bool {
        self.0 != [u32::MAX; 2]
    }

    /// The impulses the blocks applied to body 1 in the last substep, linear and angular
    /// (zero without blocks).
    pub(crate) fn impulses(&self, rows: &VelocityRows) -> [Vector; 2] {
        self.0.map(|i| {
            rows.blocks
                .get(i as usize)
                .map_or(Vector::ZERO, |b| b.impulse)
        })
    }
}

/// Adds the velocity blocks of every prepared rigid joint with a body in a contact (in
/// [`SolverSet::PrepareJoints`](crate::SolverSet), after the joints are prepared).
pub(crate) fn add_joint_blocks(
    mut joints: ResMut<XpbdJoints>,
    contacts: Res<ContactConstraints>,
    solver: Res<SolverBodies>,
    mut rows: ResMut<VelocityRows>,
    time: Res<PhysicsStepTime>,
) {
    let joints = &mut *joints;
    let touching = &mut joints.touching;
    touching.clear();
    touching.resize(solver.bodies.len(), false);
    for (b1, b2) in contacts.body_pairs() {
        touching[b1 as usize] = true;
        touching[b2 as usize] = true;
    }
    let mut add = Adder {
        touching,
        bodies: &solver.bodies,
        blocks: &mut rows.blocks,
        substeps: time.substeps.max(1) as Scalar,
    };
    add.list(&mut joints.fixed);
    add.list(&mut joints.prismatic);
    add.list(&mut joints.revolute);
    add.list(&mut joints.spherical);
    add.list(&mut joints.distance);
}

/// What [`add_joint_blocks`] adds blocks with.
struct Adder<'a> {
    touching: &'a [bool],
    bodies: &'a [RigidBodyQueryItem],
    blocks: &'a mut Vec<PreparedBlock>,
    substeps: Scalar,
}

impl Adder<'_> {
    fn list<J: XpbdJoint>(&mut self, list: &mut JointList<J>) {
        let (entries, velocity) = list.entries_and_blocks();
        velocity.clear();
        for entry in entries {
            let [s1, s2] = entry.slots;
            let touches = self.touching[s1] || self.touching[s2];
            let base = entry.joint.base();
            // A compliant joint gives way under load, which rigid blocks would not.
            let rigid = base.compliance == 0.0;
            if !touches || !rigid || base.is_broken() {
                velocity.push(JointBlocks::default());
                continue;
            }
            let [r1, r2] =
                [0, 1].map(|i| self.bodies[entry.slots[i]].rotation * Vector::from(entry.arms[i]));
            let held = entry.joint.held(self.bodies[s1].rotation);
            let warm = base.block_impulses();
            let arms = [Some([r1, r2]), None];
            velocity.push(JointBlocks(
                [0, 1].map(|i| self.block((s1, s2), arms[i], held[i], warm[i])),
            ));
        }
    }

    /// Adds the block holding `held` between `slots` (linear at `arms`, or angular), warm
    /// started with the per-step impulse `warm` on body 1; returns its place.
    fn block(
        &mut self,
        slots: (usize, usize),
        arms: Option<[Vector; 2]>,
        held: Held,
        warm: Vector,
    ) -> u32 {
        let free = match held {
            Held::Free => return u32::MAX,
            Held::All => Vector::ZERO,
            Held::AllBut(axis) => axis,
        };
        let warm = warm / self.substeps;
        match PreparedBlock::new(slots, arms, free, self.bodies, warm) {
            Some(block) => {
                self.blocks.push(block);
                (self.blocks.len() - 1) as u32
            }
            None => u32::MAX,
        }
    }
}
