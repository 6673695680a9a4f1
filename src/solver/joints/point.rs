//! The fast path of the most common joint: a spherical joint without limits or damping, which
//! only joins two anchors. Everything its passes read and write sits in one 128-byte
//! [`PointRow`], so a pass touches that row and the two bodies' compact records and nothing
//! else; the joint component's copy is brought up to date once, when the step's state is
//! stored.
//!
//! Joint passes that share no body (those of one level of the passes' order, see
//! [`prepared`](super::prepared)) are solved four at a time, one per SIMD lane
//! ([`lanes`](super::lanes)): the bodies and rows are read into lanes, each lane in its own
//! pass of the substep.
//!
//! Either way the solve is [`JointSolve::point`](super::JointSolve::point) followed by the
//! joint's force bookkeeping and break test, operation for operation, so every path gives
//! bit-identical results.

use bevy::math::{BVec4A, Mat3A, Quat, Vec3A, Vec4};

use super::lanes::{Mat3x4, Quatx4, gather, gather_matrices, lanes, mat_mul};
use super::{JointBase, Substep, XBody, point_inverse};
use crate::math::{Scalar, Vector};
use crate::solver::wide::Vec3x4;

/// Where the row's `(K + α̃ I)⁻¹` stands this substep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
enum BlockState {
    /// Not built yet.
    #[default]
    Empty,
    /// Built, and singular: the joint cannot move its bodies.
    Singular,
    /// Built.
    Built,
}

/// The hot state of one spherical joint without limits or damping (see the module docs), or a
/// placeholder saying that the joint at this place in the list takes the general path.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct PointRow {
    /// `(K + α̃ I)⁻¹` of this substep (symmetric, so its columns are its rows).
    inverse: Mat3A,
    /// Each anchor relative to its body's centre of mass, in the body frame.
    pub(super) arms: [Vec3A; 2],
    /// This substep's multiplier.
    pub(super) lagrange: Vec3A,
    /// This substep's force on body 2, N.
    pub(super) force: Vector,
    /// The bodies' places in the compact body array.
    pub(super) records: [u32; 2],
    pub(super) compliance: Scalar,
    /// `∞` for a joint that never breaks.
    break_force: Scalar,
    state: BlockState,
    pub(super) broken: bool,
    /// The joint takes the general path; the row is unused.
    pub(super) general: bool,
}

impl PointRow {
    /// This substep's multiplier.
    pub(crate) fn lagrange(&self) -> Vector {
        self.lagrange.into()
    }

    /// The placeholder of a joint that takes the general path.
    pub(crate) fn general() -> Self {
        Self {
            general: true,
            ..Self::default()
        }
    }

    /// The row of a joint with the given shared data, bodies and arms.
    pub(crate) fn new(base: &JointBase, records: [usize; 2], arms: [Vec3A; 2]) -> Self {
        Self {
            inverse: Mat3A::ZERO,
            arms,
            lagrange: Vec3A::ZERO,
            force: base.force,
            records: records.map(|r| r as u32),
            compliance: base.compliance,
            break_force: base.break_force.unwrap_or(Scalar::INFINITY),
            state: BlockState::Empty,
            broken: base.is_broken(),
            general: false,
        }
    }

    /// Whether the row's joint may be solved in a lane of [`solve_four`]: it takes this fast
    /// path, between two bodies.
    pub(crate) fn takes_lanes(&self) -> bool {
        !self.general && self.records[0] != self.records[1]
    }

    /// The start of a substep: clears the multiplier, the force (unless the joint has broken)
    /// and the block.
    #[inline(always)]
    pub(super) fn clear(&mut self) {
        self.lagrange = Vec3A::ZERO;
        if !self.broken {
            self.force = Vector::ZERO;
        }
        self.state = BlockState::Empty;
    }

    /// Builds the block from the bodies' poses now.
    #[inline(always)]
    fn build(&mut self, x1: &XBody, x2: &XBody, r1: Vec3A, r2: Vec3A, tilde: Scalar) {
        (self.state, self.inverse) = match point_inverse(x1, x2, r1, r2, tilde) {
            Some(inverse) => (BlockState::Built, inverse),
            None => (BlockState::Singular, Mat3A::ZERO),
        };
    }

    /// Adds one pass's force `df` and breaks the joint if its force now exceeds its break
    /// force.
    #[inline(always)]
    pub(super) fn book(&mut self, df: Vec3A) {
        self.force += Vector::from(df);
        if self.break_force < Scalar::INFINITY && self.force.length() > self.break_force {
            self.broken = true;
        }
    }

    /// One pass on the bodies of `records` at the row's places; the first pass of a substep
    /// first clears the multiplier, the force (unless the joint has broken) and the block.
    #[inline(always)]
    pub(crate) fn solve(&mut self, records: &mut [XBody], step: Substep, first_pass: bool) {
        let [i1, i2] = self.records.map(|i| i as usize);
        self.solve_on(records.get_disjoint_mut([i1, i2]).ok(), step, first_pass);
    }

    /// [`solve`](Self::solve) on the row's two bodies (`None` if it joins a body to itself:
    /// then the pass only clears).
    #[inline(always)]
    pub(crate) fn solve_on(
        &mut self,
        bodies: Option<[&mut XBody; 2]>,
        step: Substep,
        first_pass: bool,
    ) {
        if first_pass {
            self.clear();
        }
        if self.broken {
            return;
        }
        let Some([x1, x2]) = bodies else {
            return;
        };
        let r1 = x1.rotation * self.arms[0];
        let r2 = x2.rotation * self.arms[1];
        let delta = (x1.center() + r1) - (x2.center() + r2);
        let tilde = self.compliance * step.inv_h2;
        if self.state == BlockState::Empty {
            self.build(x1, x2, r1, r2, tilde);
        }
        if self.state != BlockState::Built {
            return;
        }
        let rhs = if tilde == 0.0 {
            delta
        } else {
            delta + tilde * self.lagrange
        };
        let p = -(self.inverse * rhs);
        self.lagrange += p;
        x1.apply_position_impulse(p, r1);
        x2.apply_position_impulse(-p, r2);
        self.book(Vec3A::ZERO - p * step.inv_h2);
    }
}

/// One pass of four rows on their bodies (`bodies[lane]`: the two of `rows[lane]`), the first
/// of its substep for the lanes set in `first_pass`, whose joints share no body (they are of
/// one level of the passes' order, see [`prepared`](super::prepared)): one per SIMD lane
/// ([`lanes`](super::lanes)), computing lane by lane exactly what [`PointRow::solve`]
/// computes, or one after another when one of them has broken or its block is singular.
#[inline(always)]
pub(crate) fn solve_four(
    mut rows: [&mut PointRow; 4],
    bodies: [[&mut XBody; 2]; 4],
    step: Substep,
    first_pass: [bool; 4],
) {
    for (row, first) in rows.iter_mut().zip(first_pass) {
        if first {
            row.clear();
        }
    }
    let one_at_a_time = |rows: [&mut PointRow; 4], bodies: [[&mut XBody; 2]; 4]| {
        for (row, pair) in rows.into_iter().zip(bodies) {
            row.solve_on(Some(pair), step, false);
        }
    };
    if rows
        .iter()
        .zip(first_pass)
        .any(|(row, first)| row.broken || (!first && row.state != BlockState::Built))
    {
        return one_at_a_time(rows, bodies);
    }
    let side = |k: usize| bodies.each_ref().map(|pair| &*pair[k]);
    let (b1, b2) = (side(0), side(1));
    let (c1, c2) = (Side::gather(b1), Side::gather(b2));
    let arm = |k: usize| gather(rows.each_ref().map(|row| row.arms[k]));
    let (r1, r2) = (c1.rotation.rotate(arm(0)), c2.rotation.rotate(arm(1)));
    let delta = (c1.center() + r1) - (c2.center() + r2);
    let tilde = Vec4::from_array(rows.each_ref().map(|row| row.compliance * step.inv_h2));
    if first_pass.contains(&true) {
        // The blocks of the rows in their substep's first pass, built side by side
        // (`PointRow::build` lane by lane).
        let (inverse, built) = point_inverse_four(&c1, &c2, r1, r2, tilde);
        let columns = inverse.map(lanes);
        for (lane, row) in rows.iter_mut().enumerate() {
            if first_pass[lane] {
                (row.state, row.inverse) = if built.test(lane) {
                    let [x, y, z] = columns.map(|column| column[lane]);
                    (BlockState::Built, Mat3A::from_cols(x, y, z))
                } else {
                    (BlockState::Singular, Mat3A::ZERO)
                };
            }
        }
        if rows.iter().any(|row| row.state != BlockState::Built) {
            return one_at_a_time(rows, bodies);
        }
    }
    let inverse = gather_matrices(rows.each_ref().map(|row| &row.inverse));
    let lagrange = gather(rows.each_ref().map(|row| row.lagrange));
    let rhs = Vec3x4::select(
        tilde.cmpeq(Vec4::ZERO),
        delta,
        delta + lagrange.scale(tilde),
    );
    let p = -mat_mul(&inverse, rhs);
    let lagrange = lagrange + p;
    let (moved1, moved2) = (c1.moved(p, r1), c2.moved(-p, r2));
    let df = Vec3x4::default() - p.scale(Vec4::splat(step.inv_h2));
    for ((row, lagrange), df) in rows.into_iter().zip(lanes(lagrange)).zip(lanes(df)) {
        row.lagrange = lagrange;
        row.book(df);
    }
    let (moved1, moved2) = (moved1.lanes(), moved2.lanes());
    for (lane, [x1, x2]) in bodies.into_iter().enumerate() {
        moved1[lane].store(x1);
        moved2[lane].store(x2);
    }
}

/// [`point_inverse`] of four joints, lane by lane, and which lanes' blocks are invertible.
#[inline(always)]
fn point_inverse_four(
    s1: &Side,
    s2: &Side,
    r1: Vec3x4,
    r2: Vec3x4,
    tilde: Vec4,
) -> (Mat3x4, BVec4A) {
    let [m1, m2] = [s1.point_mass(r1), s2.point_mass(r2)];
    let m: Mat3x4 = std::array::from_fn(|k| m1[k] + m2[k] + diagonal(k, tilde));
    let c = [m[1].cross(m[2]), m[2].cross(m[0]), m[0].cross(m[1])];
    let det = m[0].dot(c[0]);
    let scale = m[0].length() * m[1].length() * m[2].length();
    let finite = det.cmplt(Vec4::INFINITY) & det.cmpgt(Vec4::NEG_INFINITY);
    let built = !det.abs().cmple(scale * Scalar::EPSILON) & finite;
    let inv = Vec4::ONE / det;
    (c.map(|c| c.scale(inv)), built)
}

/// Column `k` of a diagonal matrix whose diagonal is `value`: `value` in component `k`, zeros
/// elsewhere (added as the scalar path adds `Vec3A::new(w, 0.0, 0.0)` and the like).
#[inline(always)]
fn diagonal(k: usize, value: Vec4) -> Vec3x4 {
    let mut column = [Vec4::ZERO; 3];
    column[k] = value;
    let [x, y, z] = column;
    Vec3x4 { x, y, z }
}

/// One side's bodies of four joints, in lanes.
struct Side<'a> {
    bodies: [&'a XBody; 4],
    translation: Vec3x4,
    start: Vec3x4,
    rotation: Quatx4,
    /// Each lane's spin ([`XBody::spin`]), and which lanes' bodies are uniform.
    spin: Vec4,
    uniform: BVec4A,
    dynamic: BVec4A,
}

impl<'a> Side<'a> {
    #[inline(always)]
    fn gather(b: [&'a XBody; 4]) -> Self {
        Self {
            bodies: b,
            translation: gather(b.map(|b| b.translation)),
            start: gather(b.map(|b| b.start)),
            rotation: Quatx4::gather(b.map(|b| b.rotation)),
            spin: Vec4::from_array(b.map(|b| b.spin)),
            uniform: BVec4A::new(b[0].uniform, b[1].uniform, b[2].uniform, b[3].uniform),
            dynamic: BVec4A::new(b[0].dynamic, b[1].dynamic, b[2].dynamic, b[3].dynamic),
        }
    }

    #[inline(always)]
    fn inverse_mass(&self) -> Vec3x4 {
        gather(self.bodies.map(|b| b.inverse_mass))
    }

    #[inline(always)]
    fn inverse_inertia(&self) -> Mat3x4 {
        gather_matrices(self.bodies.map(|b| &b.inverse_inertia))
    }

    /// `point_mass` of the four bodies pushed at offsets `r`, lane by lane: `w I − [r]× I⁻¹
    /// [r]×`, zero for bodies that cannot move.
    #[inline(always)]
    fn point_mass(&self, r: Vec3x4) -> Mat3x4 {
        let a = self.inverse_inertia();
        let [u0, u1, u2] = [r.cross(a[0]), r.cross(a[1]), r.cross(a[2])];
        let w = self.inverse_mass();
        let columns = [
            u2.scale(r.y) - u1.scale(r.z) + diagonal(0, w.x),
            u0.scale(r.z) - u2.scale(r.x) + diagonal(1, w.y),
            u1.scale(r.x) - u0.scale(r.y) + diagonal(2, w.z),
        ];
        columns.map(|column| Vec3x4::select(self.dynamic, column, Vec3x4::default()))
    }

    #[inline(always)]
    fn center(&self) -> Vec3x4 {
        self.start + self.translation
    }

    /// The poses after the position impulse `p` at offset `r`
    /// ([`XBody::apply_position_impulse`] lane by lane). With four uniform bodies (the usual
    /// case: balls, cubes, no locked axis) it reads no vector or matrix of theirs: `w p` is
    /// `(w, w, w) ∘ p` and the turn is `s (r × p)`, as [`XBody::turn`] computes it.
    #[inline(always)]
    fn moved(&self, p: Vec3x4, r: Vec3x4) -> Moved {
        let torque = r.cross(p);
        let spun = torque.scale(self.spin);
        let (translation, turn) = if self.uniform.all() {
            let w = Vec4::from_array(self.bodies.map(|b| b.inverse_mass.x));
            (p.scale(w), spun)
        } else {
            let turned = mat_mul(&self.inverse_inertia(), torque);
            (
                self.inverse_mass() * p,
                Vec3x4::select(self.uniform, spun, turned),
            )
        };
        Moved {
            translation: self.translation + translation,
            rotation: self.rotation.nudge(turn),
        }
    }
}

/// One side's moved poses.
struct Moved {
    translation: Vec3x4,
    rotation: Quatx4,
}

impl Moved {
    /// The pose of each lane.
    #[inline(always)]
    fn lanes(&self) -> [Pose; 4] {
        let (t, q) = (lanes(self.translation), self.rotation.lanes());
        std::array::from_fn(|i| Pose(t[i], q[i]))
    }
}

/// A moved pose: the translation and rotation of an [`XBody`].
#[derive(Clone, Copy)]
struct Pose(Vec3A, Quat);

impl Pose {
    /// Writes the pose into `body`, unless the body cannot move.
    #[inline(always)]
    fn store(self, body: &mut XBody) {
        if body.dynamic {
            (body.translation, body.rotation) = (self.0, self.1);
        }
    }
}
