//! Chains of plain spherical joints solved exactly: a direct solve along the chain instead of
//! Gauss–Seidel passes.
//!
//! A Gauss–Seidel pass corrects one joint at a time, so a correction travels down a chain one
//! joint per pass and halves at each (two links of equal mass share it). A hanging chain's
//! weight then never reaches the top joint within a substep's passes, and the chain sags and
//! bounces like a soft spring: a 100-link chain at rest, 4 substeps × 4 passes, stretches by
//! 0.09–0.35 % and swings between the two over about 4 s.
//!
//! Where the plain spherical joints (the [`PointRow`] fast path) form *paths*, each dynamic
//! body joined to at most two of them and to no other joint, the point constraints of a path
//! are solved together. Their system `(J M⁻¹ Jᵀ + α̃) Δλ = −(C + α̃ λ)` couples only
//! neighbouring joints, through the body they share, so it is block tridiagonal with 3×3
//! blocks: joint `i`'s own `Kᵢ + α̃ᵢ I` on the diagonal and, beside it,
//! `σ σ' (w I − [rᵢ]× I⁻¹ [rᵢ₊₁]×)` of the shared body (`σ = ±1` by the side the body is on).
//! Once per substep it is factored by block elimination down the path (the block Thomas
//! algorithm, the chain case of Baraff's linear-time elimination over the joint tree) and
//! solved with the error of that moment: one Newton step of the whole path, as in Deul et al.'s
//! direct position-based solve of rods, here for the point constraints of rigid links. The
//! step is exact for the linearized constraints; what it leaves is second order in the turn
//! its correction gives the links, so further steps would buy nothing a user could see (the
//! swinging 100-link chain of the benchmarks: largest gap 0.01–0.02 mm with one step or four),
//! and a path takes one whatever [`XpbdIterations`](crate::solver::xpbd::XpbdIterations) says.
//!
//! Static and kinematic bodies end a path (their joints do not couple), and so does a broken
//! joint, so a chain hanging from an anchor, a rope between two posts and a free chain are all
//! paths; a branching tree, a loop or a grid keeps the Gauss–Seidel passes. A path of fewer
//! than [`MIN_PATH`] joints keeps them too: there they converge as it is.
//!
//! The 100-link chain at rest then keeps its length to f32 rounding (0.00001 % against
//! 0.09–0.35 %), and the swinging chain's largest gap is 0.02 mm against 11.5 mm, in less
//! time than the four passes took: 0.065 against 0.078 ms per step (the `chain` example).
//!
//! - D. Baraff, *Linear-Time Dynamics using Lagrange Multipliers*, SIGGRAPH 1996.
//! - C. Deul, T. Kugelstadt, M. Weiler, J. Bender, *Direct Position-Based Solver for Stiff
//!   Rods*, Computer Graphics Forum 37(6), 2018.

use bevy::math::{Mat3A, Vec3A};

use super::point::PointRow;
use super::{Substep, XBody, point_block, point_coupling, symmetric_inverse};

/// The fewest joints a path needs to be solved directly.
pub(crate) const MIN_PATH: usize = 3;

/// The paths of the plain spherical joints (see the module docs), found when the joint passes
/// are scheduled, and the scratch of their solve.
#[derive(Default)]
pub(crate) struct JointPaths {
    /// The spherical list's entries of every path, path after path, each in path order.
    entries: Vec<u32>,
    /// Per place in `entries`: the side (0: body 1, 1: body 2) of the joint's body that it
    /// shares with the joint before it in the path (for a path's first joint, the end's side).
    enter: Vec<u8>,
    /// Where each path starts in `entries`, and where the last ends.
    starts: Vec<u32>,
    /// Per spherical entry: whether it is on a path.
    on_path: Vec<bool>,
    /// Per place in `entries`, this substep: `Dᵢ⁻¹` of the elimination.
    inverse: Vec<Mat3A>,
    /// Per place: the block coupling the joint to the one before it (`A₍ᵢ₋₁,ᵢ₎`).
    upper: Vec<Mat3A>,
    /// Per place: the world arms of this pass.
    arms: Vec<[Vec3A; 2]>,
    /// Per place: the right-hand side, then the multiplier step.
    work: Vec<Vec3A>,
    /// Scratch for [`find`](Self::find), per compact body record: how many joints of any kind
    /// act on it, and the first two spherical entries that may be on a path.
    joint_counts: Vec<u32>,
    ends: Vec<[u32; 2]>,
}

impl JointPaths {
    /// Whether spherical entry `entry` is solved on a path.
    pub(crate) fn on_path(&self, entry: usize) -> bool {
        self.on_path.get(entry).copied().unwrap_or(false)
    }

    /// Finds the paths among `rows` (the spherical list's rows) of the joints joining the
    /// compact body records in `joints` (every joint of every list, spherical ones included);
    /// `dynamic` says which records' bodies can move.
    pub(crate) fn find(
        &mut self,
        rows: &[PointRow],
        joints: impl Iterator<Item = [usize; 2]>,
        dynamic: &[bool],
    ) {
        self.entries.clear();
        self.enter.clear();
        self.starts.clear();
        self.on_path.clear();
        self.on_path.resize(rows.len(), false);
        self.joint_counts.clear();
        self.joint_counts.resize(dynamic.len(), 0);
        self.ends.clear();
        self.ends.resize(dynamic.len(), [u32::MAX; 2]);
        for [a, b] in joints {
            self.joint_counts[a] += 1;
            self.joint_counts[b] += 1;
        }
        // A broken joint joins nothing.
        for row in rows.iter().filter(|row| row.takes_lanes() && row.broken) {
            for record in row.records {
                self.joint_counts[record as usize] -= 1;
            }
        }
        for (entry, row) in rows.iter().enumerate() {
            if holds(row) {
                for record in row.records {
                    let ends = &mut self.ends[record as usize];
                    let free = ends.iter().position(|&e| e == u32::MAX);
                    if let Some(k) = free {
                        ends[k] = entry as u32;
                    }
                }
            }
        }
        // Walk from each end of a path: a joint with a static body or a body it alone acts on.
        let mut visited = std::mem::take(&mut self.on_path);
        for (entry, row) in rows.iter().enumerate() {
            if visited[entry] || !holds(row) {
                continue;
            }
            let end = (0..2).find(|&side| {
                let record = row.records[side] as usize;
                !dynamic[record] || self.joint_counts[record] == 1
            });
            if let Some(side) = end {
                self.walk(rows, entry, side, dynamic, &mut visited);
            }
        }
        visited.fill(false);
        self.on_path = visited;
        for &entry in &self.entries {
            self.on_path[entry as usize] = true;
        }
        self.starts.push(self.entries.len() as u32);
        let n = self.entries.len();
        self.inverse.resize(n, Mat3A::ZERO);
        self.upper.resize(n, Mat3A::ZERO);
        self.arms.resize(n, [Vec3A::ZERO; 2]);
        self.work.resize(n, Vec3A::ZERO);
    }

    /// Follows the joints from `entry`, entered from its side `side`, and keeps them as a path
    /// if they are one: every body between two of them joined to those two only.
    fn walk(
        &mut self,
        rows: &[PointRow],
        mut entry: usize,
        mut side: usize,
        dynamic: &[bool],
        visited: &mut [bool],
    ) {
        let start = self.entries.len();
        let mut path = true;
        loop {
            visited[entry] = true;
            self.entries.push(entry as u32);
            self.enter.push(side as u8);
            let out = rows[entry].records[1 - side] as usize;
            if !dynamic[out] || self.joint_counts[out] == 1 {
                break;
            }
            let [e0, e1] = self.ends[out];
            let next = if e0 as usize == entry { e1 } else { e0 } as usize;
            if self.joint_counts[out] != 2 || e1 == u32::MAX || visited[next] {
                path = false;
                break;
            }
            side = usize::from(rows[next].records[0] as usize != out);
            entry = next;
        }
        if path && self.entries.len() - start >= MIN_PATH {
            self.starts.push(start as u32);
        } else {
            self.entries.truncate(start);
            self.enter.truncate(start);
        }
    }

    /// One substep of every path: one Newton step of the direct solve, or, for a path whose
    /// system cannot be factored (one of its joints is broken or a block is singular),
    /// `passes` Gauss–Seidel passes of its joints in path order.
    pub(crate) fn solve(
        &mut self,
        rows: &mut [PointRow],
        records: &mut [XBody],
        step: Substep,
        passes: u32,
    ) {
        for path in 0..self.starts.len().saturating_sub(1) {
            let places = self.starts[path] as usize..self.starts[path + 1] as usize;
            for place in places.clone() {
                rows[self.entries[place] as usize].clear();
            }
            if self.newton_step(places.clone(), rows, records, step) {
                continue;
            }
            for _ in 0..passes {
                for place in places.clone() {
                    rows[self.entries[place] as usize].solve(records, step, false);
                }
            }
        }
    }

    /// One Newton step of the path, with the bodies' poses now and the multipliers just
    /// cleared (so the right-hand side is `−C`): the system factored and the right-hand sides
    /// eliminated down the path, the multiplier steps found back up it, and the position
    /// impulses applied. Whether it could (no joint is broken and no block is singular);
    /// if not, nothing has moved.
    fn newton_step(
        &mut self,
        places: std::ops::Range<usize>,
        rows: &mut [PointRow],
        records: &mut [XBody],
        step: Substep,
    ) -> bool {
        for place in places.clone() {
            let row = &rows[self.entries[place] as usize];
            if row.broken {
                return false;
            }
            let arms = arms_now(row, records);
            let [x1, x2] = row.records.map(|r| &records[r as usize]);
            let tilde = row.compliance * step.inv_h2;
            let mut block = point_block(x1, x2, arms[0], arms[1], tilde);
            let mut rhs = (x2.center() + arms[1]) - (x1.center() + arms[0]);
            if place > places.start {
                // The shared body is on side `enter` of this joint and on the other side of the
                // one before; an impulse on side 0 is `+p`, on side 1 `−p`.
                let (before, side) = (1 - self.enter[place - 1] as usize, self.enter[place]);
                let shared = &records[row.records[side as usize] as usize];
                let coupling =
                    point_coupling(shared, self.arms[place - 1][before], arms[side as usize]);
                let upper = if before == side as usize {
                    coupling
                } else {
                    -coupling
                };
                block -= upper.transpose() * self.inverse[place - 1] * upper;
                rhs -= upper.transpose() * (self.inverse[place - 1] * self.work[place - 1]);
                self.upper[place] = upper;
            }
            let Some(inverse) = symmetric_inverse(&block) else {
                return false;
            };
            self.inverse[place] = inverse;
            self.arms[place] = arms;
            self.work[place] = rhs;
        }
        // Back substitution up the path.
        let mut next = Vec3A::ZERO;
        for place in places.clone().rev() {
            let mut rhs = self.work[place];
            if place + 1 < places.end {
                rhs -= self.upper[place + 1] * next;
            }
            next = self.inverse[place] * rhs;
            self.work[place] = next;
        }
        for place in places {
            let row = &mut rows[self.entries[place] as usize];
            let (p, [r1, r2]) = (self.work[place], self.arms[place]);
            row.lagrange += p;
            let [i1, i2] = row.records.map(|r| r as usize);
            records[i1].apply_position_impulse(p, r1);
            records[i2].apply_position_impulse(-p, r2);
            row.book(Vec3A::ZERO - p * step.inv_h2);
        }
        true
    }
}

/// Whether `row` is the fast path's row of a joint between two bodies that has not broken: a
/// joint that may be on a path.
fn holds(row: &PointRow) -> bool {
    row.takes_lanes() && !row.broken
}

/// The world arms of `row`'s joint, from its bodies' rotations now.
#[inline(always)]
fn arms_now(row: &PointRow, records: &[XBody]) -> [Vec3A; 2] {
    [0, 1].map(|k| records[row.records[k] as usize].rotation * row.arms[k])
}

#[cfg(test)]
// Tests build their scenes with platform math; the rule (`clippy.toml`) guards the step.
#[allow(clippy::disallowed_methods)]
mod tests {
    use bevy::math::{Quat, Vec3};
    use bevy::prelude::Entity;

    use super::*;
    use crate::solver::joints::{Joint, SphericalJoint};

    /// Plain spherical rows between the given records, with the given arms.
    fn rows(pairs: &[[usize; 2]], arms: impl Fn(usize) -> [Vec3A; 2]) -> Vec<PointRow> {
        let joint = SphericalJoint::new(Entity::PLACEHOLDER, Entity::PLACEHOLDER);
        let base = joint.base();
        (0..pairs.len())
            .map(|i| PointRow::new(base, pairs[i], arms(i)))
            .collect()
    }

    /// The paths `find` makes of `pairs` (spherical rows) and `others` (joints of other
    /// kinds), with the records in `fixed` static: each path's entries with the side each is
    /// entered from.
    fn paths(pairs: &[[usize; 2]], others: &[[usize; 2]], fixed: &[usize]) -> Vec<Vec<(u32, u8)>> {
        let bodies = 1 + pairs.iter().chain(others).flatten().max().unwrap();
        let dynamic: Vec<bool> = (0..bodies).map(|b| !fixed.contains(&b)).collect();
        let mut paths = JointPaths::default();
        let rows = rows(pairs, |_| [Vec3A::ZERO; 2]);
        paths.find(&rows, pairs.iter().chain(others).copied(), &dynamic);
        let found: Vec<Vec<(u32, u8)>> = paths
            .starts
            .windows(2)
            .map(|w| {
                let places = w[0] as usize..w[1] as usize;
                places.map(|p| (paths.entries[p], paths.enter[p])).collect()
            })
            .collect();
        for (entry, _) in pairs.iter().enumerate() {
            let listed = found.iter().flatten().any(|&(e, _)| e as usize == entry);
            assert_eq!(paths.on_path(entry), listed, "entry {entry}");
        }
        found
    }

    #[test]
    fn chains_ropes_and_free_chains_are_paths_and_nothing_else_is() {
        // A chain hanging from static record 0, listed top down.
        let chain = [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]];
        let down: Vec<(u32, u8)> = (0..5).map(|e| (e, 0)).collect();
        assert_eq!(paths(&chain, &[], &[0]), [down]);
        // Listed bottom up, each joint naming the lower body first: the same path, walked
        // from whichever end comes first.
        let reversed = [[5, 4], [4, 3], [3, 2], [2, 1], [1, 0]];
        let up: Vec<(u32, u8)> = (0..5).map(|e| (e, 0)).collect();
        assert_eq!(paths(&reversed, &[], &[0]), [up]);
        // A rope between two static posts (records 0 and 9), and a free chain.
        let rope = [[0, 1], [1, 2], [2, 3], [3, 9]];
        assert_eq!(paths(&rope, &[], &[0, 9]).len(), 1);
        assert_eq!(paths(&chain, &[], &[]).len(), 1);
        // Several chains from one static anchor are separate paths.
        let two = [[0, 1], [1, 2], [2, 3], [0, 4], [4, 5], [5, 6]];
        assert_eq!(paths(&two, &[], &[0]).len(), 2);
        // Too short: two joints.
        assert!(paths(&[[0, 1], [1, 2]], &[], &[0]).is_empty());
        // A loop, a branch and a chain with another kind of joint on one of its links.
        let ring = [[0, 1], [1, 2], [2, 3], [3, 4], [4, 0]];
        assert!(paths(&ring, &[], &[]).is_empty());
        let branch = [[0, 1], [1, 2], [2, 3], [2, 4], [4, 5], [5, 6]];
        assert!(paths(&branch, &[], &[0]).is_empty());
        assert!(paths(&chain, &[[3, 7]], &[0]).is_empty());
        // A broken joint splits a chain.
        let long: Vec<[usize; 2]> = (0..8).map(|i| [i, i + 1]).collect();
        let dynamic = vec![false, true, true, true, true, true, true, true, true];
        let mut rows = rows(&long, |_| [Vec3A::ZERO; 2]);
        rows[3].broken = true;
        let mut split = JointPaths::default();
        split.find(&rows, long.iter().copied(), &dynamic);
        assert_eq!(
            (split.entries.as_slice(), split.starts.as_slice()),
            (&[0, 1, 2, 4, 5, 6, 7][..], &[0, 3, 7][..])
        );
    }

    /// A dynamic body record at `centre`, turned by `rotation`, with a lopsided inertia.
    fn body(centre: Vec3, rotation: Quat, inverse_mass: f32) -> XBody {
        let local = Mat3A::from_diagonal(Vec3::new(2.0, 0.5, 1.0) * inverse_mass);
        let turn = Mat3A::from_quat(rotation);
        XBody {
            translation: Vec3A::ZERO,
            start: centre.into(),
            rotation,
            inverse_mass: Vec3A::splat(inverse_mass),
            inverse_inertia: turn * local * turn.transpose(),
            spin: 0.0,
            uniform: false,
            dynamic: true,
        }
    }

    /// The largest gap between the two anchors of any of `rows`' joints, m.
    fn largest_gap(rows: &[PointRow], records: &[XBody]) -> f32 {
        rows.iter()
            .map(|row| {
                let [x1, x2] = row.records.map(|r| &records[r as usize]);
                let [r1, r2] = arms_now(row, records);
                ((x1.center() + r1) - (x2.center() + r2)).length()
            })
            .fold(0.0, f32::max)
    }

    #[test]
    fn one_newton_step_closes_a_path_to_second_order() {
        // A static anchor (record 0) and six links of alternating mass, each about 1 m below
        // the one before, turned and shifted by a few millimetres so that every joint is open
        // by 1–5 mm in some direction; anchors 0.5 m above and below each link's centre.
        let mut records = vec![XBody {
            dynamic: false,
            inverse_mass: Vec3A::ZERO,
            inverse_inertia: Mat3A::ZERO,
            ..body(Vec3::ZERO, Quat::IDENTITY, 0.0)
        }];
        for i in 1..=6 {
            let k = i as f32;
            let nudge = 0.003 * Vec3::new((1.7 * k).sin(), (2.3 * k).cos(), (0.9 * k).sin());
            let rotation = Quat::from_scaled_axis(0.002 * Vec3::new(k.cos(), k.sin(), 0.5));
            let mass = if i % 2 == 0 { 1.0 } else { 0.2 };
            records.push(body(Vec3::new(0.0, -k, 0.0) + nudge, rotation, mass));
        }
        let pairs: Vec<[usize; 2]> = (0..6).map(|i| [i, i + 1]).collect();
        let arm = Vec3A::new(0.0, 0.5, 0.0);
        let mut rows = rows(&pairs, |_| [-arm, arm]);
        let before = largest_gap(&rows, &records);
        assert!(before > 1e-3, "the joints start open: {before} m");
        let mut paths = JointPaths::default();
        let dynamic: Vec<bool> = records.iter().map(|r| r.dynamic).collect();
        paths.find(&rows, pairs.iter().copied(), &dynamic);
        assert_eq!(paths.starts, [0, 6], "one path of six joints");
        let step = Substep::new(1.0 / 240.0);
        let turned_from: Vec<Quat> = records.iter().map(|r| r.rotation).collect();
        paths.solve(&mut rows, &mut records, step, 4);
        // What is left is the linearization's error: an arm of 0.5 m turned by θ is off its
        // linear prediction by ½ θ² × 0.5 m, at each end of a joint, plus f32 rounding at 6 m
        // from the origin (½ ulp(8) = 0.5 µm per coordinate). One Gauss–Seidel pass would
        // leave the lower joints open by a good part of their millimetres.
        let turn = records
            .iter()
            .zip(&turned_from)
            .map(|(r, q)| r.rotation.angle_between(*q))
            .fold(0.0, f32::max);
        let bound = 2.0 * 0.5 * turn * turn * 0.5 + 2e-6;
        let after = largest_gap(&rows, &records);
        println!(
            "largest gap {before:.2e} m before, {after:.2e} m after one Newton step \
             (links turned by up to {turn:.2e} rad: bound {bound:.2e} m)"
        );
        assert!(after < bound, "largest gap after one Newton step {after} m");
        // The multipliers are the impulses applied, and the forces λ / h².
        for row in &rows {
            let expected = -row.lagrange * step.inv_h2;
            assert!((Vec3A::from(row.force) - expected).length() <= 1e-3 * expected.length());
        }
    }
}
