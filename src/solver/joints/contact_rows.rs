//! Velocity rows for the XPBD joints of bodies that touch something.
//!
//! The contact solver works on velocities before the positions are integrated; the XPBD joint
//! passes move the bodies afterwards. A body held by a joint and resting on a contact therefore
//! meets the joint's pull only as a position correction after its friction was solved: each
//! substep the joint slides it by about `F h² / m` along the ground (`F` the load the joint
//! carries), which friction, one substep late, only stops again. A ragdoll or two jointed
//! capsules lying on the floor then crawl at a speed proportional to the substep and never
//! fall asleep.
//!
//! So each joint with a body in a contact this step also enters the contact solve as rigid
//! velocity rows ([`rows`](crate::solver::rows)) along what it always holds (the anchors'
//! relative velocity, and the relative angular velocity about the axes it locks), with no
//! position bias (the XPBD passes still correct the pose) and warm started with the last
//! step's impulses, as the six-axis joint always does. The contacts, their friction and the
//! joint then settle on one set of velocities, the position update keeps the joint closed to
//! first order, and the XPBD correction after it is second order in `h`. Limits and motors stay
//! XPBD only. Joints whose bodies touch nothing (chains, ropes, grids in the air) add no rows,
//! nor do compliant joints (rigid rows would not give way), which therefore still creep.

use bevy::math::Vec3A;
use bevy::prelude::*;

use super::prepared::{JointList, XpbdJoint, XpbdJoints};
use crate::math::Vector;
use crate::schedule::PhysicsStepTime;
use crate::settings::SolverConfig;
use crate::solver::contact::ContactConstraints;
use crate::solver::rows::{ConstraintRow, PreparedRow, StepContext, VelocityRows};
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

impl Held {
    /// The world axes held, orthonormal.
    fn axes(self) -> impl Iterator<Item = Vector> {
        let axes: [Vector; 3] = match self {
            Held::Free => [Vector::ZERO; 3],
            Held::All => [Vector::X, Vector::Y, Vector::Z],
            Held::AllBut(free) => {
                let (a, b) = free.any_orthonormal_pair();
                [a, b, Vector::ZERO]
            }
        };
        axes.into_iter().filter(|a| *a != Vector::ZERO)
    }
}

/// A joint's velocity rows this step: what they hold and where they sit in [`VelocityRows`].
#[derive(Clone, Copy, Default)]
pub(crate) struct JointRows {
    /// Linear and angular.
    held: [Held; 2],
    /// The row of each held axis (linear axes first), `u32::MAX` where none was made (a row
    /// neither body can move).
    index: [u32; 6],
}

impl JointRows {
    /// The impulses the rows applied to body 1 in the last substep, linear and angular (zero
    /// without rows).
    pub(crate) fn impulses(&self, rows: &VelocityRows) -> [Vector; 2] {
        let mut index = self.index.iter();
        self.held.map(|held| {
            held.axes()
                .zip(index.by_ref())
                .filter_map(|(axis, &i)| rows.rows.get(i as usize).map(|r| r.impulse * axis))
                .sum()
        })
    }
}

/// Adds the velocity rows of every prepared joint with a body in a contact (in
/// [`SolverSet::PrepareJoints`](crate::SolverSet), after the joints are prepared).
pub(crate) fn add_joint_rows(
    mut joints: ResMut<XpbdJoints>,
    contacts: Res<ContactConstraints>,
    solver: Res<SolverBodies>,
    mut rows: ResMut<VelocityRows>,
    time: Res<PhysicsStepTime>,
    config: Res<SolverConfig>,
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
        rows: &mut rows,
        step: StepContext::new(&time, &config),
    };
    add.list(&mut joints.fixed);
    add.list(&mut joints.prismatic);
    add.list(&mut joints.revolute);
    add.list(&mut joints.spherical);
    add.list(&mut joints.distance);
}

/// What [`add_joint_rows`] adds rows with.
struct Adder<'a> {
    touching: &'a [bool],
    bodies: &'a [RigidBodyQueryItem],
    rows: &'a mut VelocityRows,
    step: StepContext,
}

impl Adder<'_> {
    fn list<J: XpbdJoint>(&mut self, list: &mut JointList<J>) {
        let (entries, velocity) = list.entries_and_rows();
        velocity.clear();
        for entry in entries {
            let [s1, s2] = entry.slots;
            let touches = self.touching[s1] || self.touching[s2];
            let base = entry.joint.base();
            // A compliant joint gives way under load, which rigid rows would not.
            let rigid = base.compliance == 0.0;
            velocity.push(if touches && rigid && !base.is_broken() {
                self.joint(
                    entry.joint.held(self.bodies[s1].rotation),
                    [s1, s2],
                    entry.arms,
                    base.row_impulses(),
                )
            } else {
                JointRows::default()
            });
        }
    }

    /// The rows of one joint between slots `slots`, anchored at `arms` (from each centre of
    /// mass, body frame), warm started with the per-step impulses `warm` on body 1.
    fn joint(
        &mut self,
        held: [Held; 2],
        slots: [usize; 2],
        arms: [Vec3A; 2],
        warm: [Vector; 2],
    ) -> JointRows {
        let [r1, r2] = [0, 1].map(|i| self.bodies[slots[i]].rotation * Vector::from(arms[i]));
        let linear = held[0].axes().map(|a| {
            (
                ConstraintRow::new(a, r1.cross(a), a, r2.cross(a)),
                warm[0].dot(a),
            )
        });
        let angular = held[1].axes().map(|a| {
            (
                ConstraintRow::new(Vector::ZERO, a, Vector::ZERO, a),
                warm[1].dot(a),
            )
        });
        let mut index = [u32::MAX; 6];
        for ((row, warm), i) in linear.chain(angular).zip(&mut index) {
            // Rigid, without position bias: the XPBD passes correct the pose.
            let row = row.with_softness(0.0, 1.0);
            let pair = (slots[0], slots[1]);
            if let Some(prepared) = PreparedRow::new(&row, pair, self.bodies, &self.step, warm) {
                *i = self.rows.rows.len() as u32;
                self.rows.rows.push(prepared);
            }
        }
        JointRows { held, index }
    }
}
