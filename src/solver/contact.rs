//! The soft-step contact solver (Catto, "Solver2D: soft step", 2024; Box2D v3), solved four
//! manifolds at a time.
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
//!
//! ## The wide solver
//!
//! The constraints are graph-coloured (the `colouring` module): within a colour no
//! two constraints move the same dynamic body. Each colour is cut into *blocks* of four
//! constraints, stored as structure of arrays (one `Vec3x4` per vector quantity, one lane per
//! manifold; each contact point slot of a block is a `PointBlock`), and a block is solved
//! with four-lane arithmetic: its eight bodies' velocities are gathered from the compact body
//! states (`BodyState`) into lanes, every point and the friction patch are solved for all
//! four manifolds at once, and the dynamic bodies are scattered back. This is Box2D v3's wide
//! contact solver (`contact_solver.c`; Catto, "SIMD Matters", 2024) in 3D with 4 lanes (SSE2 /
//! NEON through glam's `Vec4`). A manifold keeps the Gauss–Seidel order of its own points
//! and friction, and constraints of one colour never share a dynamic body, so a block computes
//! exactly what solving its four manifolds one after another would; the blocks of a colour
//! are sorted by point count so their lanes are alike (a lane with fewer points carries
//! zero-mass padding points, which apply nothing).
//!
//! On x86-64 CPUs with AVX (checked at run time), the warm start, solve and relax passes take
//! two adjacent blocks of a colour with as many point slots at once, in eight lanes (one
//! 256-bit register per quantity; Box2D v3 builds for AVX2 the same way at compile time). The
//! blocks stay stored four lanes wide: a pair is loaded half from each. Since a lane's
//! arithmetic is the same IEEE operations in either width and the two blocks share no dynamic
//! body, the result is bit-identical to solving them one after the other (the
//! thread-determinism golden state holds with and without AVX). The 210-cube pyramid: 0.264 →
//! 0.243 ms per step in the profile harness.
//!
//! The body velocities the passes work on are `SolverBodies::states` (see [`SolverBodies`]),
//! the one state every stage of the substep reads and writes; the velocity rows
//! ([`rows`](super::rows)) run on the same states right after each contact pass.

use std::ops::Range;

use bevy::math::BVec4A;
use bevy::prelude::*;

use super::colouring::{Colouring, LANES, Stages, TwoBody};
use super::softness::SoftCoefficients;
use super::solver_body::{BodyState, RigidBodyQueryItem, SolverBodies};
use super::wide::{F4, Lane, S4, V3, Vec3x4, lane_mut, select, transpose_in, transpose_out};
use crate::collision::events::{ForceThresholds, StepImpulse};
use crate::collision::{ContactGraph, ContactPair, FrictionImpulse};
use crate::math::Scalar;
use crate::parallel::{Shared, parallel_fill, parallel_for};
use crate::prefetch::{PREFETCH_ABOVE, prefetch, prefetch_one};
use crate::schedule::PhysicsStepTime;
use crate::settings::{SolverConfig, SolverLanes};
use bevy::math::{Mat4, Vec4};

/// How an impulse along a fixed direction `d` at anchors `r₁`, `r₂` acts on two bodies, for
/// four manifolds, precomputed once per step (the direction, anchors and step inertia do not
/// change within it): the speed along `d` is `d·(v₂ − v₁) + (r₂ × d)·ω₂ − (r₁ × d)·ω₁`, and an
/// impulse `λ` turns the bodies by `∓λ I⁻¹ (r × d)`.
#[derive(Clone, Copy, Debug, Default)]
struct Arm<L = F4> {
    cross1: V3<L>,
    cross2: V3<L>,
    turn1: V3<L>,
    turn2: V3<L>,
    /// `1 / (d·w₁ d + d·w₂ d + (r₁×d)ᵀ I₁⁻¹ (r₁×d) + (r₂×d)ᵀ I₂⁻¹ (r₂×d))`.
    mass: L,
}

impl<L: Lane> Arm<L> {
    /// The arms of blocks `0..L::BLOCKS`, `get(b)` being block `b`'s.
    #[inline(always)]
    fn load<'a>(get: impl Fn(usize) -> &'a Arm) -> Self {
        Self {
            cross1: V3::load(|b| get(b).cross1),
            cross2: V3::load(|b| get(b).cross2),
            turn1: V3::load(|b| get(b).turn1),
            turn2: V3::load(|b| get(b).turn2),
            mass: L::load(|b| get(b).mass),
        }
    }

    /// Relative speed along `d` (the linear part is passed in, shared by all arms along `d`).
    #[inline(always)]
    fn speed(&self, linear: L, bodies: &Bodies<L>) -> L {
        linear + self.cross2.dot(bodies.w2) - self.cross1.dot(bodies.w1)
    }

    /// Applies `λ` along `d` to body 2 and `−λ` to body 1; `push` is `d` scaled by each
    /// body's (masked) inverse mass.
    #[inline(always)]
    fn apply(&self, push: &[V3<L>; 2], lambda: L, bodies: &mut Bodies<L>) {
        bodies.v1 -= push[0].scale(lambda);
        bodies.w1 -= self.turn1.scale(lambda);
        bodies.v2 += push[1].scale(lambda);
        bodies.w2 += self.turn2.scale(lambda);
    }
}

/// One contact point slot of a block: the `p`-th point of each of its four manifolds (zero
/// for a manifold with fewer points: a zero mass applies nothing).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PointBlock {
    arm: Arm,
    /// Separation at the step start.
    separation: F4,
    normal_impulse: F4,
    max_normal_impulse: F4,
    /// Normal speed before the solve, for restitution.
    relative_velocity: F4,
}

/// Four contact manifolds of one colour, in lanes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ContactBlock {
    body1: [u32; LANES],
    body2: [u32; LANES],
    /// Whether each lane's body moves (is dynamic) and must be written back.
    write1: [bool; LANES],
    write2: [bool; LANES],
    /// The block's point slots in [`ContactConstraints::points`].
    first_point: u32,
    point_count: u32,
    normal: Vec3x4,
    push: [Vec3x4; 2],
    friction: F4,
    restitution: F4,
    /// Contacts with a static or sleeping body use the stiffer coefficients.
    against_static: BVec4A,
    // The friction patch, at the centre of the points.
    tangents: [Vec3x4; 2],
    tangent_arms: [Arm; 2],
    tangent_push: [[Vec3x4; 2]; 2],
    /// `I⁻¹ n` of each body, and the effective mass of a twist about the normal.
    twist: [Vec3x4; 2],
    twist_mass: F4,
    /// Mean distance of the points from the centre: the twist friction's lever arm.
    radius: F4,
    tangent_impulse: [F4; 2],
    twist_impulse: F4,
    /// Target relative speed along each tangent: the pair's tangent velocity, or zero.
    target_speed: [F4; 2],
}

/// The bodies of a group's lanes, gathered from the body states.
#[derive(Clone, Copy, Default)]
struct Bodies<L> {
    v1: V3<L>,
    w1: V3<L>,
    v2: V3<L>,
    w2: V3<L>,
}

/// The compact states of a block's four first and four second bodies.
///
/// # Safety
/// No other thread writes these bodies' states now (see [`Shared`]).
#[inline(always)]
unsafe fn block_states<'a>(
    block: &ContactBlock,
    states: &'a Shared<BodyState>,
) -> ([&'a BodyState; 4], [&'a BodyState; 4]) {
    // SAFETY: the caller's contract.
    // (Written out: `array::map` over the references stays an out-of-line call.)
    let get = |[a, b, c, d]: [u32; 4]| unsafe {
        [
            states.get(a as usize),
            states.get(b as usize),
            states.get(c as usize),
            states.get(d as usize),
        ]
    };
    (get(block.body1), get(block.body2))
}

/// Four bodies' `field` as one vector per lane.
#[inline(always)]
fn lanes_of(bodies: [&BodyState; 4], field: impl Fn(&BodyState) -> Vec4) -> Vec3x4 {
    let [a, b, c, d] = bodies.map(field);
    transpose_in(a, b, c, d)
}

/// `part(b)` for each block of `L` (the second entry is unused with one block).
#[inline(always)]
fn per_block<L: Lane, T: Default>(mut part: impl FnMut(usize) -> T) -> [T; 2] {
    let first = part(0);
    let second = if L::BLOCKS == 2 {
        part(1)
    } else {
        T::default()
    };
    [first, second]
}

impl<L: Lane> Bodies<L> {
    /// Gathers the velocities of the bodies of `blocks` (`L::BLOCKS` of them).
    ///
    /// # Safety
    /// No other thread writes these bodies' states now (see [`Shared`]).
    #[inline(always)]
    unsafe fn gather(blocks: &[ContactBlock], states: Shared<BodyState>) -> Self {
        let parts = per_block::<L, _>(|b| {
            // SAFETY: the caller's contract.
            let (first, second) = unsafe { block_states(&blocks[b], &states) };
            Bodies {
                v1: lanes_of(first, |s| s.linear_velocity),
                w1: lanes_of(first, |s| s.angular_velocity),
                v2: lanes_of(second, |s| s.linear_velocity),
                w2: lanes_of(second, |s| s.angular_velocity),
            }
        });
        Self {
            v1: V3::load(|b| parts[b].v1),
            w1: V3::load(|b| parts[b].w1),
            v2: V3::load(|b| parts[b].v2),
            w2: V3::load(|b| parts[b].w2),
        }
    }

    /// How far body 2's centre moved relative to body 1's along `normal` since the step
    /// began, and each body's rotation since then.
    ///
    /// # Safety
    /// As for [`Bodies::gather`].
    #[inline(always)]
    unsafe fn displacement(
        blocks: &[ContactBlock],
        states: Shared<BodyState>,
        normal: V3<L>,
    ) -> (L, V3<L>, V3<L>) {
        let parts = per_block::<L, _>(|b| {
            // SAFETY: the caller's contract.
            let (first, second) = unsafe { block_states(&blocks[b], &states) };
            [
                lanes_of(first, |s| s.moved),
                lanes_of(second, |s| s.moved),
                lanes_of(first, |s| Vec4::from(s.rotation)),
                lanes_of(second, |s| Vec4::from(s.rotation)),
            ]
        });
        let [moved1, moved2, rotation1, rotation2] =
            std::array::from_fn(|i| V3::<L>::load(|b| parts[b][i]));
        // Twice the vector part of the rotation since the start: the small-angle rotation
        // vector (see `BodyState::turned`).
        let two = L::splat(2.0);
        (
            normal.dot(moved2 - moved1),
            rotation1.scale(two),
            rotation2.scale(two),
        )
    }

    /// Writes the velocities of the dynamic bodies of `blocks` back.
    ///
    /// # Safety
    /// No other thread reads or writes these dynamic bodies' states now (see [`Shared`]).
    #[inline(always)]
    unsafe fn scatter(&self, blocks: &[ContactBlock], states: Shared<BodyState>) {
        let ([v1, v1b], [w1, w1b]) = (self.v1.split(), self.w1.split());
        let ([v2, v2b], [w2, w2b]) = (self.v2.split(), self.w2.split());
        let parts = [[v1, w1, v2, w2], [v1b, w1b, v2b, w2b]];
        for (block, [v1, w1, v2, w2]) in blocks.iter().zip(parts).take(L::BLOCKS) {
            let (v1, w1) = (transpose_out(v1), transpose_out(w1));
            let (v2, w2) = (transpose_out(v2), transpose_out(w2));
            for lane in 0..LANES {
                if block.write1[lane] {
                    // SAFETY: the caller's contract.
                    let state = unsafe { states.get_mut(block.body1[lane] as usize) };
                    state.linear_velocity = v1[lane];
                    state.angular_velocity = w1[lane];
                }
                if block.write2[lane] {
                    // SAFETY: the caller's contract.
                    let state = unsafe { states.get_mut(block.body2[lane] as usize) };
                    state.linear_velocity = v2[lane];
                    state.angular_velocity = w2[lane];
                }
            }
        }
    }
}

/// Every contact constraint of the step, in blocks ordered by colour.
#[derive(Resource, Default)]
pub(crate) struct ContactConstraints {
    /// The manifolds in solver order (colour by colour; each colour sorted by point count).
    manifolds: Vec<ManifoldRef>,
    scratch: Vec<ManifoldRef>,
    colouring: Colouring,
    blocks: Vec<ContactBlock>,
    points: Vec<PointBlock>,
    /// The manifolds of each block, as a range of `manifolds`.
    block_manifolds: Vec<(u32, u32)>,
    /// Where each manifold's constraint sits, by its place in the contact graph's order
    /// ([`ManifoldRef::order`]): the impulse store walks the graph by pair with it.
    placed: Vec<Placed>,
    /// Each pair with constraints this step: its index in the contact graph and its first
    /// manifold in `placed` (its manifolds run to the next pair's first).
    pair_refs: Vec<(u32, u32)>,
    /// Each contact-graph pair's part in this step's constraints (scratch).
    pair_parts: Vec<PairPart>,
    stages: Stages,
    /// Whether any manifold has restitution (else the restitution pass is skipped).
    any_restitution: bool,
    /// How many manifolds the solve computes at once, from [`SolverConfig::lanes`].
    lanes: SolverLanes,
    /// The points of pairs with a contact force threshold, whose impulses are summed over the
    /// substeps (empty when no collider has a threshold).
    tracked: Vec<TrackedPoint>,
}

/// A contact point whose impulse over the whole step is reported (see
/// [`ContactForceThreshold`](crate::collision::ContactForceThreshold)).
#[derive(Clone, Copy, Debug)]
struct TrackedPoint {
    /// Its slot in [`ContactConstraints::points`] and its lane there.
    slot: u32,
    lane: u32,
    pair: u32,
    manifold: u32,
    /// The accumulated impulse after each substep's relax pass, summed: what the substeps
    /// applied (each warm-starts with the last substep's and adds the change).
    sum: Scalar,
    /// The accumulated impulse after the last relax pass.
    last: Scalar,
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

/// A manifold that becomes a contact constraint this step.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ManifoldRef {
    pair: u32,
    manifold: u32,
    first_point: u32,
    /// Enabled points.
    count: u32,
    b1: u32,
    b2: u32,
    /// Its place among the step's manifolds in the contact graph's order (colouring reorders
    /// the references).
    order: u32,
    /// Whether the solver writes each body (a dynamic one), for the colouring.
    moves: [bool; 2],
}

/// Where a manifold's constraint sits in the blocks: what [`store_impulses`] needs to bring
/// its impulses back to the contact graph.
#[derive(Clone, Copy, Debug, Default)]
struct Placed {
    manifold: u32,
    first_point: u32,
    block: u32,
    lane: u32,
}

impl TwoBody for ManifoldRef {
    fn bodies(&self) -> [(u32, bool); 2] {
        [(self.b1, self.moves[0]), (self.b2, self.moves[1])]
    }
}

/// Builds contact constraints from the contact graph, in colour order.
pub(crate) fn prepare_contacts(
    mut contacts: ResMut<ContactConstraints>,
    solver: Res<SolverBodies>,
    graph: Res<ContactGraph>,
    time: Res<PhysicsStepTime>,
    config: Res<SolverConfig>,
) {
    let contacts = &mut *contacts;
    contacts.lanes = config.lanes;
    let bodies = &solver.bodies;
    // Which manifolds take part, and between which bodies: colouring reorders these small
    // references, and the constraints are then built directly in their final order.
    list_manifolds(contacts, &graph, &solver);
    contacts
        .colouring
        .colour(&mut contacts.manifolds, &mut contacts.scratch, bodies.len());
    layout_blocks(contacts);
    // Impulses are stored per step; the solver accumulates per substep.
    let per_substep = 1.0 / time.substeps as Scalar;
    let blocks = Shared::new(&mut contacts.blocks);
    let points = Shared::new(&mut contacts.points);
    let placed = Shared::new(&mut contacts.placed);
    let refs = BlockRefs {
        ranges: &contacts.block_manifolds,
        manifolds: &contacts.manifolds,
    };
    let prefetching = refs.manifolds.len() >= PREFETCH_ABOVE;
    contacts.stages.run_independent(|index| {
        if prefetching {
            refs.prefetch_after(index, &graph);
            for r in refs.of(index + 3 * AHEAD) {
                prefetch_one(&bodies[r.b1 as usize]);
                prefetch_one(&bodies[r.b2 as usize]);
            }
        }
        // SAFETY: each block (and its point slots) is built by one kernel call.
        unsafe {
            let block = blocks.get_mut(index);
            let (first_point, point_count) = (block.first_point, block.point_count);
            *block = ContactBlock {
                first_point,
                point_count,
                ..Default::default()
            };
            let points = points.slice_mut(first_point as usize, point_count as usize);
            points.fill(PointBlock::default());
            build_block(block, points, refs.of(index), &graph, bodies, per_substep);
            for (lane, r) in refs.of(index).iter().enumerate() {
                *placed.get_mut(r.order as usize) = Placed {
                    manifold: r.manifold,
                    first_point: r.first_point,
                    block: index as u32,
                    lane: lane as u32,
                };
            }
        }
    });
    let any_restitution = contacts
        .blocks
        .iter()
        .any(|block| block.restitution.cmpgt(F4::ZERO).any());
    contacts.any_restitution = any_restitution;
}

/// Contact-graph pairs from which [`list_manifolds`] shares them out between threads.
/// Chosen, not measured, as for the other stages.
const PARALLEL_PAIR_PARTS: usize = 1024;

/// A contact-graph pair's part in this step's constraints (scratch of [`list_manifolds`]).
#[derive(Clone, Copy, Debug, Default)]
struct PairPart {
    /// How many of its manifolds become constraints (none for a sensor, a pair without
    /// manifolds or dropped by a hook, or two bodies that do not move).
    manifolds: u32,
    /// Its first manifold's place among the step's manifolds.
    first: u32,
    b1: u32,
    b2: u32,
    moves: [bool; 2],
}

/// Lists the manifolds that become constraints this step in `contacts.manifolds`, in the
/// contact graph's order, and each pair that has any in `contacts.pair_refs`.
///
/// Each pair's part (its bodies' slots and how many manifolds it gives) is found first, then
/// where its manifolds go (a running sum on this thread), then the references are written:
/// the first and last in parallel chunks for large graphs (the slot look-ups and the pairs'
/// manifolds are random reads), each pair by one call.
fn list_manifolds(contacts: &mut ContactConstraints, graph: &ContactGraph, solver: &SolverBodies) {
    let pairs = &graph.pairs;
    parallel_fill(
        &mut contacts.pair_parts,
        pairs.len(),
        PARALLEL_PAIR_PARTS,
        |index| pair_part(&pairs[index], solver),
    );
    contacts.pair_refs.clear();
    let mut total = 0;
    for (index, part) in contacts.pair_parts.iter_mut().enumerate() {
        part.first = total;
        if part.manifolds > 0 {
            contacts.pair_refs.push((index as u32, total));
        }
        total += part.manifolds;
    }
    let (parts, manifolds) = (&contacts.pair_parts, &mut contacts.manifolds);
    manifolds.clear();
    manifolds.reserve(total as usize);
    let spare = Shared::new(&mut manifolds.spare_capacity_mut()[..total as usize]);
    parallel_for(pairs.len(), PARALLEL_PAIR_PARTS, |range| {
        for index in range {
            let part = &parts[index];
            // SAFETY: each pair writes its own manifolds' places, `first..first + manifolds`.
            let out = unsafe { spare.slice_mut(part.first as usize, part.manifolds as usize) };
            let mut refs = enabled_manifolds(&pairs[index]);
            for (k, slot) in out.iter_mut().enumerate() {
                // The pair has exactly as many (`pair_part` counted them); the default only
                // keeps every place written whatever happens.
                let (manifold, first_point, count) = refs.next().unwrap_or_default();
                slot.write(ManifoldRef {
                    pair: index as u32,
                    manifold,
                    first_point,
                    count,
                    b1: part.b1,
                    b2: part.b2,
                    order: part.first + k as u32,
                    moves: part.moves,
                });
            }
        }
    });
    // SAFETY: the pairs' places `first..first + manifolds` tile `0..total`, each written.
    unsafe { manifolds.set_len(total as usize) };
    contacts.placed.resize(total as usize, Placed::default());
}

/// `pair`'s part in this step's constraints, its place aside.
fn pair_part(pair: &ContactPair, solver: &SolverBodies) -> PairPart {
    let none = PairPart::default();
    if pair.sensor || pair.manifolds.is_empty() || pair.modifications.dropped {
        return none;
    }
    let (b1, b2) = (
        solver.contact_slot(pair.body1),
        solver.contact_slot(pair.body2),
    );
    let [m1, m2] = [b1, b2].map(|slot| solver.bodies[slot].inverse_mass);
    if m1 == 0.0 && m2 == 0.0 {
        return none;
    }
    PairPart {
        manifolds: enabled_manifolds(pair).count() as u32,
        first: 0,
        b1: b1 as u32,
        b2: b2 as u32,
        moves: [m1 > 0.0, m2 > 0.0],
    }
}

/// The manifolds of `pair` with enabled points: each one's index, its first point's index
/// among the pair's points, and how many of its points are enabled.
fn enabled_manifolds(pair: &ContactPair) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
    let modifications = &pair.modifications;
    let mut first_point = 0;
    pair.manifolds
        .iter()
        .enumerate()
        .filter_map(move |(index, manifold)| {
            let (first, count) = (first_point, manifold.points.len());
            first_point += count;
            let enabled = if modifications.has_disabled_points() {
                (first..first + count)
                    .filter(|&i| modifications.point_enabled(i))
                    .count()
            } else {
                count
            };
            (enabled > 0).then_some((index as u32, first as u32, enabled as u32))
        })
}

/// Lists the contact points of the pairs with a force threshold, to sum their impulses over
/// the substeps. Without thresholds, nothing.
pub(crate) fn track_contact_forces(
    mut contacts: ResMut<ContactConstraints>,
    graph: Res<ContactGraph>,
    thresholds: Res<ForceThresholds>,
) {
    if contacts.tracked.is_empty() && !thresholds.any() {
        return;
    }
    let contacts = &mut *contacts;
    contacts.tracked.clear();
    if !thresholds.any() {
        return;
    }
    let refs = BlockRefs {
        ranges: &contacts.block_manifolds,
        manifolds: &contacts.manifolds,
    };
    for (index, block) in contacts.blocks.iter().enumerate() {
        for (lane, r) in refs.of(index).iter().enumerate() {
            if thresholds
                .of_pair(&graph.pairs[r.pair as usize])
                .is_infinite()
            {
                continue;
            }
            contacts.tracked.extend((0..r.count).map(|k| TrackedPoint {
                slot: block.first_point + k,
                lane: lane as u32,
                pair: r.pair,
                manifold: r.manifold,
                sum: 0.0,
                last: 0.0,
            }));
        }
    }
    // In the contact graph's order, for the report (blocks are in colour order).
    (contacts.tracked).sort_unstable_by_key(|t| (t.pair, t.manifold, t.slot));
}

impl TrackedPoint {
    /// Its accumulated impulse now.
    fn impulse_in(&self, points: &[PointBlock]) -> Scalar {
        points[self.slot as usize].normal_impulse.to_array()[self.lane as usize]
    }
}

impl ContactConstraints {
    /// Adds the impulses of the tracked points after a relax pass (the substep's last
    /// contact pass) to their sums.
    fn sum_tracked_impulses(&mut self) {
        for point in &mut self.tracked {
            let impulse = point.impulse_in(&self.points);
            point.sum += impulse;
            point.last = impulse;
        }
    }
}

/// Hands the tracked points' step impulses to the contact graph (in its order), restitution's
/// included: it changes the accumulated impulse after the last relax pass.
pub(crate) fn store_step_impulses(
    contacts: Res<ContactConstraints>,
    mut graph: ResMut<ContactGraph>,
) {
    if contacts.tracked.is_empty() && graph.step_impulses.is_empty() {
        return;
    }
    graph.step_impulses.clear();
    graph
        .step_impulses
        .extend(contacts.tracked.iter().map(|t| StepImpulse {
            pair: t.pair,
            manifold: t.manifold,
            impulse: t.sum + (t.impulse_in(&contacts.points) - t.last),
        }));
}

/// How many blocks ahead the preparation and the impulse store prefetch a block's manifold
/// points; its manifolds are prefetched twice as far ahead, its pairs (and in the preparation
/// its bodies) three times (see [`crate::prefetch`]): blocks visit the contact graph in colour
/// order, not in its memory order.
const AHEAD: usize = 2;

/// Which manifolds each block holds.
#[derive(Clone, Copy)]
struct BlockRefs<'a> {
    /// Each block's range in `manifolds`.
    ranges: &'a [(u32, u32)],
    manifolds: &'a [ManifoldRef],
}

impl<'a> BlockRefs<'a> {
    /// The manifolds of block `index` (none past the last block).
    fn of(self, index: usize) -> &'a [ManifoldRef] {
        let (start, end) = self.ranges.get(index).copied().unwrap_or_default();
        &self.manifolds[start as usize..end as usize]
    }

    /// Prefetches the contact graph entries of the blocks after block `index`, one pointer
    /// level per distance: pairs, then their manifolds, then the manifolds' points.
    fn prefetch_after(self, index: usize, graph: &ContactGraph) {
        for r in self.of(index + 3 * AHEAD) {
            prefetch_one(&graph.pairs[r.pair as usize]);
        }
        for r in self.of(index + 2 * AHEAD) {
            prefetch_one(&graph.pairs[r.pair as usize].manifolds[r.manifold as usize]);
        }
        for r in self.of(index + AHEAD) {
            prefetch(&graph.pairs[r.pair as usize].manifolds[r.manifold as usize].points);
        }
    }
}

/// Sorts each colour by point count and cuts it into blocks of four; the overflow group
/// becomes one block per constraint (it is solved in order). Only each block's point slots
/// are set here: the blocks and their points keep last step's contents until
/// [`prepare_contacts`] resets and builds them, in parallel for large scenes (zeroing them
/// here kept a large fill of memory on one thread).
fn layout_blocks(contacts: &mut ContactConstraints) {
    contacts.block_manifolds.clear();
    contacts.stages.clear();
    let mut layout = BlockLayout::default();
    for index in 0..contacts.colouring.colours.len() {
        let colour = contacts.colouring.colours[index].clone();
        // Alike lanes: most points first (a stable counting sort).
        sort_by_point_count(
            &mut contacts.manifolds[colour.clone()],
            &mut contacts.scratch,
        );
        let first = layout.blocks;
        let mut start = colour.start;
        while start < colour.end {
            let end = (start + LANES).min(colour.end);
            layout.add(contacts, start..end);
            start = end;
        }
        contacts.stages.colours.push(first..layout.blocks);
    }
    let first = layout.blocks;
    for index in contacts.colouring.overflow.clone() {
        layout.add(contacts, index..index + 1);
    }
    contacts.stages.overflow = first..layout.blocks;
    contacts.blocks.truncate(layout.blocks as usize);
    contacts.points.truncate(layout.points as usize);
    contacts
        .points
        .resize(layout.points as usize, PointBlock::default());
}

/// How many blocks and point slots [`layout_blocks`] has laid out.
#[derive(Default)]
struct BlockLayout {
    blocks: u32,
    points: u32,
}

impl BlockLayout {
    /// Lays out the next block, for the manifolds `refs` of the (reordered) list.
    fn add(&mut self, contacts: &mut ContactConstraints, refs: Range<usize>) {
        let point_count = contacts.manifolds[refs.clone()]
            .iter()
            .map(|r| r.count)
            .max()
            .unwrap_or(0);
        let slots = (self.points, point_count);
        match contacts.blocks.get_mut(self.blocks as usize) {
            Some(block) => (block.first_point, block.point_count) = slots,
            None => contacts.blocks.push(ContactBlock {
                first_point: slots.0,
                point_count: slots.1,
                ..Default::default()
            }),
        }
        contacts
            .block_manifolds
            .push((refs.start as u32, refs.end as u32));
        self.blocks += 1;
        self.points += point_count;
    }
}

/// What the arms of a block need of its eight bodies, in lanes: filled lane by lane, then
/// used by [`finish_block`].
#[derive(Default)]
struct BlockBodies {
    inverse_mass: [F4; 2],
    translation_mask: [Vec3x4; 2],
    /// Columns of each body's world inverse inertia at the step's start.
    inverse_inertia: [[Vec3x4; 3]; 2],
}

impl BlockBodies {
    fn set_lane(&mut self, lane: usize, body1: &RigidBodyQueryItem, body2: &RigidBodyQueryItem) {
        for (i, body) in [body1, body2].into_iter().enumerate() {
            lane_mut(&mut self.inverse_mass[i])[lane] = body.inverse_mass;
            self.translation_mask[i].set_lane(lane, body.translation_mask);
            let m = body.step_inverse_inertia;
            self.inverse_inertia[i][0].set_lane(lane, m.x_axis);
            self.inverse_inertia[i][1].set_lane(lane, m.y_axis);
            self.inverse_inertia[i][2].set_lane(lane, m.z_axis);
        }
    }

    /// The arm along `d` at the anchors `r1`, `r2`, as [`Arm`] describes it.
    #[inline(always)]
    fn arm(&self, r1: Vec3x4, r2: Vec3x4, d: Vec3x4) -> Arm {
        let (cross1, cross2) = (r1.cross(d), r2.cross(d));
        let (turn1, turn2) = (
            mat_vec(&self.inverse_inertia[0], cross1),
            mat_vec(&self.inverse_inertia[1], cross2),
        );
        let k = self.inverse_mass[0] * (self.translation_mask[0] * d).dot(d)
            + self.inverse_mass[1] * (self.translation_mask[1] * d).dot(d)
            + cross1.dot(turn1)
            + cross2.dot(turn2);
        Arm {
            cross1,
            cross2,
            turn1,
            turn2,
            mass: positive_inverse(k),
        }
    }

    /// `d` scaled by each body's masked inverse mass: the velocity change per unit impulse.
    #[inline(always)]
    fn push(&self, d: Vec3x4) -> [Vec3x4; 2] {
        [
            self.translation_mask[0].scale(self.inverse_mass[0]) * d,
            self.translation_mask[1].scale(self.inverse_mass[1]) * d,
        ]
    }
}

/// `m · v` for a matrix given by its columns, as `Mat3 * Vec3`.
#[inline(always)]
fn mat_vec(columns: &[Vec3x4; 3], v: Vec3x4) -> Vec3x4 {
    columns[0].scale(v.x) + columns[1].scale(v.y) + columns[2].scale(v.z)
}

/// `1 / k` where `k > 0`, else 0.
#[inline(always)]
fn positive_inverse(k: F4) -> F4 {
    select(k.cmpgt(F4::ZERO), F4::ONE / k, F4::ZERO)
}

/// Sorts `manifolds` by point count, most first, keeping the order of equal counts (a
/// counting sort: point counts are small).
fn sort_by_point_count(manifolds: &mut [ManifoldRef], scratch: &mut Vec<ManifoldRef>) {
    const BUCKETS: usize = 16;
    let bucket = |r: &ManifoldRef| BUCKETS - 1 - (r.count as usize).min(BUCKETS - 1);
    let mut starts = [0usize; BUCKETS + 1];
    let mut sorted = true;
    let mut last = 0;
    for r in manifolds.iter() {
        let b = bucket(r);
        sorted &= b >= last;
        last = b;
        starts[b + 1] += 1;
    }
    if sorted {
        return;
    }
    for b in 0..BUCKETS {
        starts[b + 1] += starts[b];
    }
    scratch.clear();
    scratch.extend_from_slice(manifolds);
    for r in scratch.iter() {
        let b = bucket(r);
        manifolds[starts[b]] = *r;
        starts[b] += 1;
    }
}

/// Lane `lane` of four lane vectors as a `Vec4` each, gathered lane by lane and turned into
/// structure of arrays by one transpose.
#[derive(Clone, Copy, Default)]
struct Lanes([Vec4; LANES]);

impl Lanes {
    #[inline(always)]
    fn vec3(&self) -> Vec3x4 {
        transpose_in(self.0[0], self.0[1], self.0[2], self.0[3])
    }

    /// The four lanes as quaternions (`xyz`, `w`).
    #[inline(always)]
    fn quat(&self) -> (Vec3x4, F4) {
        let m = Mat4::from_cols(self.0[0], self.0[1], self.0[2], self.0[3]).transpose();
        (
            Vec3x4 {
                x: m.x_axis,
                y: m.y_axis,
                z: m.z_axis,
            },
            m.w_axis,
        )
    }
}

/// `q * v` for unit quaternions (`xyz`, `w`), as glam's `Quat * Vec3`:
/// `v (w² − b·b) + b (2 v·b) + (b × v)(2 w)`.
#[inline(always)]
fn rotate((b, w): (Vec3x4, F4), v: Vec3x4) -> Vec3x4 {
    let b2 = b.dot(b);
    v.scale(w * w - b2) + b.scale(v.dot(b) * F4::splat(2.0)) + b.cross(v).scale(w * F4::splat(2.0))
}

/// `pose * p` for poses given as a quaternion and a translation.
#[inline(always)]
fn transform(rotation: (Vec3x4, F4), translation: Vec3x4, p: Vec3x4) -> Vec3x4 {
    rotate(rotation, p) + translation
}

/// Two unit vectors that form a right-handed orthonormal basis with the unit `n`, as glam's
/// `Vec3::any_orthonormal_pair` (Duff et al., "Building an Orthonormal Basis, Revisited").
#[inline(always)]
fn orthonormal_pair(n: Vec3x4) -> [Vec3x4; 2] {
    let sign = F4::ONE.copysign(n.z);
    let a = F4::splat(-1.0) / (sign + n.z);
    let b = n.x * n.y * a;
    [
        Vec3x4 {
            x: F4::ONE + sign * n.x * n.x * a,
            y: sign * b,
            z: -sign * n.x,
        },
        Vec3x4 {
            x: b,
            y: sign + n.y * n.y * a,
            z: -n.y,
        },
    ]
}

/// Builds a block from its manifolds `refs` (at most four, all of one colour): everything that
/// needs a manifold's own data (poses, points, impulses, coefficients) is gathered lane by lane,
/// and the geometry (normal, tangents, anchors, arms, effective masses, the friction patch) is
/// then computed four lanes at a time, as the scalar formulas would per manifold.
fn build_block(
    block: &mut ContactBlock,
    points: &mut [PointBlock],
    refs: &[ManifoldRef],
    graph: &ContactGraph,
    bodies: &[RigidBodyQueryItem],
    per_substep: Scalar,
) {
    let mut block_bodies = BlockBodies::default();
    let (mut rotation1, mut translation1) = (Lanes::default(), Lanes::default());
    let (mut rotation2, mut translation2) = (Lanes::default(), Lanes::default());
    let (mut local_normal, mut center1, mut center2) =
        (Lanes::default(), Lanes::default(), Lanes::default());
    let (mut v1, mut w1, mut v2, mut w2) = (
        Lanes::default(),
        Lanes::default(),
        Lanes::default(),
        Lanes::default(),
    );
    let mut tangent_velocity = Lanes::default();
    let mut counts = [0u32; LANES];
    for (lane, r) in refs.iter().enumerate() {
        let pair = &graph.pairs[r.pair as usize];
        let manifold = &pair.manifolds[r.manifold as usize];
        let (body1, body2) = (&bodies[r.b1 as usize], &bodies[r.b2 as usize]);
        block_bodies.set_lane(lane, body1, body2);
        let frame1 = manifold
            .subshape_pos1
            .map_or(pair.pose1, |p| pair.pose1 * p);
        let frame2 = manifold
            .subshape_pos2
            .map_or(pair.pose2, |p| pair.pose2 * p);
        rotation1.0[lane] = Vec4::from(frame1.rotation);
        translation1.0[lane] = frame1.translation.extend(0.0);
        rotation2.0[lane] = Vec4::from(frame2.rotation);
        translation2.0[lane] = frame2.translation.extend(0.0);
        local_normal.0[lane] = manifold.local_n1.extend(0.0);
        center1.0[lane] = body1.current_center_of_mass().extend(0.0);
        center2.0[lane] = body2.current_center_of_mass().extend(0.0);
        v1.0[lane] = body1.linear_velocity.extend(0.0);
        w1.0[lane] = body1.angular_velocity.extend(0.0);
        v2.0[lane] = body2.linear_velocity.extend(0.0);
        w2.0[lane] = body2.angular_velocity.extend(0.0);
        tangent_velocity.0[lane] = pair.tangent_velocity().extend(0.0);
        // The local points go into the arms' `cross1` and `cross2` until the arms are built.
        let first = r.first_point as usize;
        let enabled = manifold
            .points
            .iter()
            .enumerate()
            .filter(|(i, _)| pair.modifications.point_enabled(first + i));
        for ((_, c), slot) in enabled.zip(points.iter_mut()) {
            slot.arm.cross1.set_lane(lane, c.local_p1);
            slot.arm.cross2.set_lane(lane, c.local_p2);
            lane_mut(&mut slot.separation)[lane] = c.dist;
            lane_mut(&mut slot.normal_impulse)[lane] = c.data * per_substep;
        }
        counts[lane] = r.count;
        block.body1[lane] = r.b1;
        block.body2[lane] = r.b2;
        block.write1[lane] = body1.inverse_mass > 0.0;
        block.write2[lane] = body2.inverse_mass > 0.0;
        lane_mut(&mut block.friction)[lane] = pair.friction();
        lane_mut(&mut block.restitution)[lane] = pair.restitution();
        block.against_static.set(
            lane,
            r.b1 == SolverBodies::STATIC as u32 || r.b2 == SolverBodies::STATIC as u32,
        );
        let impulse: FrictionImpulse = manifold.data;
        lane_mut(&mut block.tangent_impulse[0])[lane] = impulse.tangent[0] * per_substep;
        lane_mut(&mut block.tangent_impulse[1])[lane] = impulse.tangent[1] * per_substep;
        lane_mut(&mut block.twist_impulse)[lane] = impulse.twist * per_substep;
    }

    let (rotation1, translation1) = (rotation1.quat(), translation1.vec3());
    let (rotation2, translation2) = (rotation2.quat(), translation2.vec3());
    let (center1, center2) = (center1.vec3(), center2.vec3());
    let (v1, w1, v2, w2) = (v1.vec3(), w1.vec3(), v2.vec3(), w2.vec3());
    let normal = rotate(rotation1, local_normal.vec3());
    let tangents = orthonormal_pair(normal);
    block.normal = normal;
    block.tangents = tangents;

    // The points: anchors midway between the two surfaces, their arms, and the normal speed
    // before the solve; the sum of the anchors for the patch centre.
    let mut anchors = [Vec3x4::default(); 4];
    let mut sum = Vec3x4::default();
    for (index, point) in points.iter_mut().enumerate() {
        let real = lanes_below(&counts, index);
        let a1 = transform(rotation1, translation1, point.arm.cross1);
        let a2 = transform(rotation2, translation2, point.arm.cross2);
        let anchor = (a1 + a2).scale(F4::splat(0.5));
        let (r1, r2) = (anchor - center1, anchor - center2);
        point.arm = block_bodies.arm(r1, r2, normal);
        point.arm.mass = select(real, point.arm.mass, F4::ZERO);
        point.max_normal_impulse = F4::ZERO;
        point.relative_velocity = select(
            real,
            normal.dot((v2 + w2.cross(r2)) - (v1 + w1.cross(r1))),
            F4::ZERO,
        );
        sum += select3(real, anchor, Vec3x4::default());
        if let Some(slot) = anchors.get_mut(index) {
            *slot = anchor;
        }
    }
    let count = Vec4::new(
        counts[0] as f32,
        counts[1] as f32,
        counts[2] as f32,
        counts[3] as f32,
    );
    let used = count.cmpgt(F4::ZERO);
    let center = Vec3x4 {
        x: select(used, sum.x / count, F4::ZERO),
        y: select(used, sum.y / count, F4::ZERO),
        z: select(used, sum.z / count, F4::ZERO),
    };
    let mut radius = F4::ZERO;
    for index in 0..points.len() {
        let anchor = match anchors.get(index) {
            Some(&anchor) => anchor,
            // More than four points (a manifold no reduction saw): compute it again.
            None => recompute_anchor(
                refs,
                graph,
                index,
                (rotation1, translation1),
                (rotation2, translation2),
            ),
        };
        let offset = anchor - center;
        let length = offset.dot(offset).sqrt();
        radius += select(lanes_below(&counts, index), length, F4::ZERO);
    }
    block.radius = select(used, radius / count, F4::ZERO);

    // The friction patch at the centre.
    let (r1, r2) = (center - center1, center - center2);
    let tangent_velocity = tangent_velocity.vec3();
    for (t, tangent) in tangents.into_iter().enumerate() {
        block.tangent_arms[t] = block_bodies.arm(r1, r2, tangent);
        block.tangent_push[t] = block_bodies.push(tangent);
        block.target_speed[t] = tangent.dot(tangent_velocity);
    }
    block.push = block_bodies.push(normal);
    block.twist = [
        mat_vec(&block_bodies.inverse_inertia[0], normal),
        mat_vec(&block_bodies.inverse_inertia[1], normal),
    ];
    block.twist_mass = positive_inverse(normal.dot(block.twist[0]) + normal.dot(block.twist[1]));
}

/// The lanes whose manifold has more than `index` points.
#[inline(always)]
fn lanes_below(counts: &[u32; LANES], index: usize) -> BVec4A {
    BVec4A::new(
        counts[0] as usize > index,
        counts[1] as usize > index,
        counts[2] as usize > index,
        counts[3] as usize > index,
    )
}

/// `mask ? a : b` for each component.
#[inline(always)]
fn select3(mask: BVec4A, a: Vec3x4, b: Vec3x4) -> Vec3x4 {
    Vec3x4 {
        x: select(mask, a.x, b.x),
        y: select(mask, a.y, b.y),
        z: select(mask, a.z, b.z),
    }
}

/// The anchors of point `index` of the block's manifolds, from the contact graph again (for
/// manifolds of more than four points, which the narrow phase normally reduces).
fn recompute_anchor(
    refs: &[ManifoldRef],
    graph: &ContactGraph,
    index: usize,
    frame1: ((Vec3x4, F4), Vec3x4),
    frame2: ((Vec3x4, F4), Vec3x4),
) -> Vec3x4 {
    let (mut p1, mut p2) = (Vec3x4::default(), Vec3x4::default());
    for (lane, r) in refs.iter().enumerate() {
        let pair = &graph.pairs[r.pair as usize];
        let manifold = &pair.manifolds[r.manifold as usize];
        let first = r.first_point as usize;
        if let Some((_, c)) = manifold
            .points
            .iter()
            .enumerate()
            .filter(|(i, _)| pair.modifications.point_enabled(first + i))
            .nth(index)
        {
            p1.set_lane(lane, c.local_p1);
            p2.set_lane(lane, c.local_p2);
        }
    }
    let a1 = transform(frame1.0, frame1.1, p1);
    let a2 = transform(frame2.0, frame2.1, p2);
    (a1 + a2).scale(F4::splat(0.5))
}

/// Re-applies the accumulated impulses at the start of each substep.
pub(crate) fn warm_start(
    mut solver: ResMut<SolverBodies>,
    mut contacts: ResMut<ContactConstraints>,
) {
    if contacts.manifolds.is_empty() {
        return;
    }
    let kernel = WarmStart {
        states: Shared::new(&mut solver.states),
    };
    contacts.run_groups(&kernel);
}

/// Adjacent blocks of one colour with the same number of point slots, solved together in
/// the lanes of one [`Lane`] value (`L::BLOCKS` of them).
struct Group<'a> {
    blocks: &'a mut [ContactBlock],
    /// The blocks' point slots, block after block.
    points: &'a mut [PointBlock],
    /// Point slots per block.
    slots: usize,
}

impl Group<'_> {
    /// Slot `slot` of every block, as `L` lanes.
    #[inline(always)]
    fn point<L: Lane>(&self, slot: usize, field: impl Fn(&PointBlock) -> F4) -> L {
        L::load(|b| field(&self.points[b * self.slots + slot]))
    }

    /// Writes `value` to slot `slot` of every block.
    #[inline(always)]
    fn set_point<L: Lane>(
        &mut self,
        slot: usize,
        value: L,
        field: impl Fn(&mut PointBlock) -> &mut F4,
    ) {
        for (b, part) in value.split().into_iter().take(L::BLOCKS).enumerate() {
            *field(&mut self.points[b * self.slots + slot]) = part;
        }
    }

    /// A field of every block, as `L` lanes.
    #[inline(always)]
    fn block<L: Lane>(&self, field: impl Fn(&ContactBlock) -> F4) -> L {
        L::load(|b| field(&self.blocks[b]))
    }

    /// A vector field of every block, as `L` lanes.
    #[inline(always)]
    fn block3<L: Lane>(&self, field: impl Fn(&ContactBlock) -> Vec3x4) -> V3<L> {
        V3::load(|b| field(&self.blocks[b]))
    }

    /// The arm of point slot `slot` of every block.
    #[inline(always)]
    fn point_arm<L: Lane>(&self, slot: usize) -> Arm<L> {
        Arm::load(|b| &self.points[b * self.slots + slot].arm)
    }

    /// The normal's `push` (see [`ContactBlock::push`]).
    #[inline(always)]
    fn push<L: Lane>(&self) -> [V3<L>; 2] {
        [
            self.block3(|block| block.push[0]),
            self.block3(|block| block.push[1]),
        ]
    }

    /// The friction patch's arm and push along tangent `k`.
    #[inline(always)]
    fn tangent<L: Lane>(&self, k: usize) -> (Arm<L>, [V3<L>; 2]) {
        (
            Arm::load(|b| &self.blocks[b].tangent_arms[k]),
            [
                self.block3(|block| block.tangent_push[k][0]),
                self.block3(|block| block.tangent_push[k][1]),
            ],
        )
    }

    /// Writes `value` to a field of every block.
    #[inline(always)]
    fn set_block<L: Lane>(&mut self, value: L, field: impl Fn(&mut ContactBlock) -> &mut F4) {
        for (b, part) in value.split().into_iter().take(L::BLOCKS).enumerate() {
            *field(&mut self.blocks[b]) = part;
        }
    }
}

/// A stage's work on one group of blocks, for any lane width.
trait GroupKernel: Sync {
    /// # Safety
    /// The group's blocks are of one colour, and no other thread touches their dynamic
    /// bodies' states now (see [`Shared`]).
    unsafe fn run<L: Lane>(&self, group: Group<'_>);
}

impl ContactConstraints {
    /// The solver slots of the two bodies of every manifold in this step's solve.
    pub(crate) fn body_pairs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.manifolds.iter().map(|m| (m.b1, m.b2))
    }

    /// Runs `kernel` on every block, colour after colour: two blocks at a time in eight AVX
    /// lanes where the CPU has AVX (adjacent blocks of a colour with as many point slots),
    /// else one at a time in four (or in scalar code, as [`SolverLanes`] says). The blocks of
    /// a colour share no dynamic body, and a lane computes the same bits in any width, so the
    /// result does not depend on the pairing.
    fn run_groups(&mut self, kernel: &impl GroupKernel) {
        let blocks = Shared::new(&mut self.blocks);
        let points = Shared::new(&mut self.points);
        let lanes = self.lanes;
        self.stages.run_ranges(|range| {
            if lanes == SolverLanes::One {
                // SAFETY: as below.
                return unsafe { groups::<S4>(kernel, range, blocks, points) };
            }
            #[cfg(target_arch = "x86_64")]
            if lanes == SolverLanes::Widest && range.len() > 1 && super::wide::avx_available() {
                // SAFETY: AVX is available; the stage runner hands each block to one call,
                // in ranges of one colour (see `Shared`).
                return unsafe { groups_avx(kernel, range, blocks, points) };
            }
            // SAFETY: as above.
            unsafe { groups::<F4>(kernel, range, blocks, points) }
        });
    }
}

/// Runs `kernel` on the blocks of `range` (of one colour), in groups of `L::BLOCKS` where
/// adjacent blocks have as many point slots, else one by one.
///
/// # Safety
/// No other call touches these blocks or their dynamic bodies now; if `L` is `F8`, the CPU
/// has AVX.
#[inline(always)]
unsafe fn groups<L: Lane>(
    kernel: &impl GroupKernel,
    range: Range<usize>,
    blocks: Shared<ContactBlock>,
    points: Shared<PointBlock>,
) {
    let mut index = range.start;
    while index < range.end {
        // SAFETY: the caller's contract.
        unsafe {
            let first = blocks.get(index);
            let slots = first.point_count as usize;
            let paired = L::BLOCKS == 2
                && index + 1 < range.end
                && blocks.get(index + 1).point_count == first.point_count;
            let count = if paired { 2 } else { 1 };
            let group = Group {
                points: points.slice_mut(first.first_point as usize, count * slots),
                blocks: blocks.slice_mut(index, count),
                slots,
            };
            if paired || L::BLOCKS == 1 {
                kernel.run::<L>(group);
            } else {
                kernel.run::<F4>(group);
            }
            index += count;
        }
    }
}

/// [`groups`] with eight lanes, compiled for AVX.
///
/// # Safety
/// As for [`groups`]; the CPU has AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn groups_avx(
    kernel: &impl GroupKernel,
    range: Range<usize>,
    blocks: Shared<ContactBlock>,
    points: Shared<PointBlock>,
) {
    // SAFETY: the caller's contract.
    unsafe { groups::<super::wide::F8>(kernel, range, blocks, points) }
}

/// The warm start: the accumulated impulses applied again.
struct WarmStart {
    states: Shared<BodyState>,
}

impl GroupKernel for WarmStart {
    #[inline(always)]
    unsafe fn run<L: Lane>(&self, group: Group<'_>) {
        // SAFETY: the caller's contract.
        let mut bodies = unsafe { Bodies::<L>::gather(group.blocks, self.states) };
        let push = group.push::<L>();
        for slot in 0..group.slots {
            let arm = group.point_arm::<L>(slot);
            arm.apply(&push, group.point(slot, |p| p.normal_impulse), &mut bodies);
        }
        for k in 0..2 {
            let (arm, push) = group.tangent::<L>(k);
            arm.apply(
                &push,
                group.block(|block| block.tangent_impulse[k]),
                &mut bodies,
            );
        }
        let twist = group.block::<L>(|block| block.twist_impulse);
        bodies.w1 -= group.block3(|block| block.twist[0]).scale(twist);
        bodies.w2 += group.block3(|block| block.twist[1]).scale(twist);
        // SAFETY: the caller's contract.
        unsafe { bodies.scatter(group.blocks, self.states) };
    }
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
    if !contacts.tracked.is_empty() {
        contacts.sum_tracked_impulses();
    }
}

fn solve(
    solver: &mut SolverBodies,
    contacts: &mut ContactConstraints,
    coefficients: Option<ContactCoefficients>,
    h: Scalar,
    max_push_out: Scalar,
) {
    if contacts.manifolds.is_empty() {
        return;
    }
    let kernel = Solve {
        states: Shared::new(&mut solver.states),
        soft: coefficients.map(|k| {
            let each = |s: SoftCoefficients| [s.bias_rate, s.mass_scale, s.impulse_scale];
            [each(k.dynamic), each(k.fixed)]
        }),
        inv_h: 1.0 / h,
        max_push_out: -max_push_out,
    };
    contacts.run_groups(&kernel);
}

/// One solve pass.
struct Solve {
    states: Shared<BodyState>,
    /// Bias rate, mass scale and impulse scale for contacts between dynamic bodies and
    /// against static ones (the biased pass), or `None` (the relax pass).
    soft: Option<[[Scalar; 3]; 2]>,
    inv_h: Scalar,
    /// The most negative bias speed (minus the maximum push-out speed).
    max_push_out: Scalar,
}

impl GroupKernel for Solve {
    #[inline(always)]
    unsafe fn run<L: Lane>(&self, mut group: Group<'_>) {
        let blocks = &*group.blocks;
        // SAFETY: the caller's contract.
        let mut bodies = unsafe { Bodies::<L>::gather(blocks, self.states) };
        let normal = group.block3::<L>(|block| block.normal);
        // Separation now: start separation plus the anchors' relative motion along n, with
        // rotation linearised (n·(θ × r) = θ·(r × n)), so a spinning ball's anchor slides
        // along its surface instead of swinging off the contact plane.
        // SAFETY: the caller's contract.
        let (moved, turned1, turned2) =
            unsafe { Bodies::displacement(blocks, self.states, normal) };
        let against_static = L::load_mask(|b| blocks[b].against_static);
        let soft = self.soft.map(|[dynamic, fixed]| {
            std::array::from_fn(|i| {
                L::select(against_static, L::splat(fixed[i]), L::splat(dynamic[i]))
            })
        });
        let pass = PointPass {
            moved,
            turned1,
            turned2,
            soft,
            inv_h: L::splat(self.inv_h),
            max_push_out: L::splat(self.max_push_out),
            normal,
            push: group.push(),
        };
        let mut total_normal = L::splat(0.0);
        // The biased pass runs through the points forwards and the relax pass backwards, so
        // neither end of a manifold systematically takes the load first.
        if soft.is_some() {
            for slot in 0..group.slots {
                solve_point(&mut group, slot, &pass, &mut bodies, &mut total_normal);
            }
        } else {
            for slot in (0..group.slots).rev() {
                solve_point(&mut group, slot, &pass, &mut bodies, &mut total_normal);
            }
        }
        let max = group.block::<L>(|block| block.friction) * total_normal;
        solve_friction(&mut group, normal, &mut bodies, max);
        // SAFETY: the caller's contract.
        unsafe { bodies.scatter(group.blocks, self.states) };
    }
}

/// What the points of one group share in a solve pass.
struct PointPass<L: Lane> {
    /// How far body 2's centre moved relative to body 1's along the normal, and each body's
    /// rotation, since the step began.
    moved: L,
    turned1: V3<L>,
    turned2: V3<L>,
    /// Bias rate, mass scale and impulse scale of each lane (the biased pass), or `None`.
    soft: Option<[L; 3]>,
    inv_h: L,
    max_push_out: L,
    normal: V3<L>,
    push: [V3<L>; 2],
}

/// One point slot of a group: the normal impulse of each lane's point.
#[inline(always)]
fn solve_point<L: Lane>(
    group: &mut Group<'_>,
    slot: usize,
    pass: &PointPass<L>,
    bodies: &mut Bodies<L>,
    total_normal: &mut L,
) {
    let arm = group.point_arm::<L>(slot);
    let separation: L = group.point(slot, |p| p.separation);
    let normal_impulse: L = group.point(slot, |p| p.normal_impulse);
    let s = separation + pass.moved + pass.turned2.dot(arm.cross2) - pass.turned1.dot(arm.cross1);
    let zero = L::splat(0.0);
    let speculative = s.cmpgt(zero);
    let speculative_bias = s * pass.inv_h;
    let (bias, mass_scale, impulse_scale) = match pass.soft {
        Some([bias_rate, mass_scale, impulse_scale]) => (
            L::select(
                speculative,
                speculative_bias,
                (bias_rate * s).max(pass.max_push_out),
            ),
            L::select(speculative, L::splat(1.0), mass_scale),
            L::select(speculative, zero, impulse_scale),
        ),
        None => (
            L::select(speculative, speculative_bias, zero),
            L::splat(1.0),
            zero,
        ),
    };
    let linear = pass.normal.dot(bodies.v2 - bodies.v1);
    let vn = arm.speed(linear, bodies);
    let impulse = -arm.mass * mass_scale * (vn + bias) - impulse_scale * normal_impulse;
    let new_impulse = (normal_impulse + impulse).max(zero);
    let applied = new_impulse - normal_impulse;
    let max_impulse = group
        .point::<L>(slot, |p| p.max_normal_impulse)
        .max(new_impulse);
    group.set_point(slot, new_impulse, |p| &mut p.normal_impulse);
    group.set_point(slot, max_impulse, |p| &mut p.max_normal_impulse);
    *total_normal = *total_normal + new_impulse;
    arm.apply(&pass.push, applied, bodies);
}

/// Patch friction: tangent impulses in a circle of radius `max`, twist within `max · radius`.
#[inline(always)]
fn solve_friction<L: Lane>(group: &mut Group<'_>, normal: V3<L>, bodies: &mut Bodies<L>, max: L) {
    let relative = bodies.v2 - bodies.v1;
    let old: [L; 2] = [
        group.block(|block| block.tangent_impulse[0]),
        group.block(|block| block.tangent_impulse[1]),
    ];
    let (arm0, push0) = group.tangent::<L>(0);
    let (arm1, push1) = group.tangent::<L>(1);
    let tangent0 = group.block3::<L>(|block| block.tangents[0]);
    let tangent1 = group.block3::<L>(|block| block.tangents[1]);
    let speed0 =
        arm0.speed(tangent0.dot(relative), bodies) - group.block(|block| block.target_speed[0]);
    let speed1 =
        arm1.speed(tangent1.dot(relative), bodies) - group.block(|block| block.target_speed[1]);
    let mut new0 = old[0] - arm0.mass * speed0;
    let mut new1 = old[1] - arm1.mass * speed1;
    let length = (new0 * new0 + new1 * new1).sqrt();
    let over = length.cmpgt(max);
    if L::any(over) {
        let scale = max / length;
        new0 = L::select(over, new0 * scale, new0);
        new1 = L::select(over, new1 * scale, new1);
    }
    group.set_block(new0, |block| &mut block.tangent_impulse[0]);
    group.set_block(new1, |block| &mut block.tangent_impulse[1]);
    arm0.apply(&push0, new0 - old[0], bodies);
    arm1.apply(&push1, new1 - old[1], bodies);

    let spin = normal.dot(bodies.w2 - bodies.w1);
    // One point (radius 0) has no twist friction; written so that no coefficient, however
    // large, can make the limit NaN (∞ · 0).
    let radius: L = group.block(|block| block.radius);
    let zero = L::splat(0.0);
    let max_twist = L::select(radius.cmpgt(zero), max * radius, zero);
    let old: L = group.block(|block| block.twist_impulse);
    let twist_mass: L = group.block(|block| block.twist_mass);
    let twist = clamp_symmetric(old - twist_mass * spin, max_twist);
    group.set_block(twist, |block| &mut block.twist_impulse);
    let applied = twist - old;
    bodies.w1 -= group.block3(|block| block.twist[0]).scale(applied);
    bodies.w2 += group.block3(|block| block.twist[1]).scale(applied);
}

/// `value` limited to `[-limit, limit]`.
#[inline(always)]
fn clamp_symmetric<L: Lane>(value: L, limit: L) -> L {
    value.min(limit).max(-limit)
}

/// Gauss–Seidel passes over a manifold's points in the restitution stage.
///
/// Each point is driven to bounce at `e` times its pre-solve approach speed. With several
/// points on one body, a single pass leaves the first point's impulse to overshoot (it also
/// lifts and spins the body at the others, whose impulses can only shrink back to zero), and
/// the body leaves with more energy than it came with: a thin plate landing on four corners at
/// 24 m/s with `e` = 0.98 left at 26 m/s spinning at 1,000 rad/s. Converged, the per-point
/// targets give back at most the approach energy (each active point's impulse `λ` changes the
/// energy by `λ (1 − e) vₙ / 2 ≤ 0`); eight passes bring that plate's bounce to 24.0 m/s
/// (the target is 23.9). Only bouncy manifolds pay for them.
const RESTITUTION_ITERATIONS: usize = 8;

/// Applies restitution once per step to points that approached faster than the threshold.
pub(crate) fn apply_restitution(
    mut solver: ResMut<SolverBodies>,
    mut contacts: ResMut<ContactConstraints>,
    config: Res<SolverConfig>,
) {
    if !contacts.any_restitution {
        return;
    }
    let threshold = F4::splat(-config.restitution_threshold);
    let contacts = &mut *contacts;
    let states = Shared::new(&mut solver.states);
    let blocks = Shared::new(&mut contacts.blocks);
    let points = Shared::new(&mut contacts.points);
    contacts.stages.run(|index| {
        // SAFETY: the stage runner runs each block once, and a colour's blocks share no
        // dynamic body (see `Shared`).
        unsafe {
            let block = blocks.get(index);
            let points = points.slice_mut(block.first_point as usize, block.point_count as usize);
            restitution_block(block, points, states, threshold);
        }
    });
}

/// # Safety
/// As for [`Bodies::gather`] and [`Bodies::scatter`].
#[inline(always)]
unsafe fn restitution_block(
    block: &ContactBlock,
    points: &mut [PointBlock],
    states: Shared<BodyState>,
    threshold: F4,
) {
    let bouncy = block.restitution.cmpne(F4::ZERO);
    if !bouncy.any() {
        return;
    }
    // SAFETY: the caller's contract.
    let mut bodies = unsafe { Bodies::<F4>::gather(std::slice::from_ref(block), states) };
    for _ in 0..RESTITUTION_ITERATIONS {
        for point in points.iter_mut() {
            let active = bouncy
                & !point.relative_velocity.cmpgt(threshold)
                & point.max_normal_impulse.cmpne(F4::ZERO);
            if !active.any() {
                continue;
            }
            let linear = block.normal.dot(bodies.v2 - bodies.v1);
            let vn = point.arm.speed(linear, &bodies);
            let impulse = -point.arm.mass * (vn + block.restitution * point.relative_velocity);
            let new_impulse = (point.normal_impulse + impulse).max(F4::ZERO);
            let applied = select(active, new_impulse - point.normal_impulse, F4::ZERO);
            point.normal_impulse = select(active, new_impulse, point.normal_impulse);
            point.max_normal_impulse = select(
                active,
                point.max_normal_impulse.max(new_impulse),
                point.max_normal_impulse,
            );
            point.arm.apply(&block.push, applied, &mut bodies);
        }
    }
    // SAFETY: the caller's contract.
    unsafe { bodies.scatter(std::slice::from_ref(block), states) };
}

/// Pairs from which [`store_impulses`] shares them out between threads; fewer are stored
/// inline. Chosen, not measured, like the other stages' thresholds: a few microseconds of
/// work, and low enough for the determinism test's scene to run the stage in chunks.
const PARALLEL_STORE: usize = 256;

/// Stores the accumulated impulses in the contact graph for warm starting and reporting.
///
/// Pair by pair, in the graph's order: each pair is written by one call, so large scenes share
/// the pairs out between threads.
pub(crate) fn store_impulses(
    contacts: Res<ContactConstraints>,
    mut graph: ResMut<ContactGraph>,
    time: Res<PhysicsStepTime>,
) {
    // The accumulated impulse is what each substep applies; the step applied it `substeps`
    // times.
    let substeps = time.substeps as Scalar;
    let (pair_refs, placed) = (&contacts.pair_refs, &contacts.placed);
    let pairs = Shared::new(&mut graph.pairs);
    parallel_for(pair_refs.len(), PARALLEL_STORE, |range| {
        for index in range {
            let (pair, first) = pair_refs[index];
            let end = pair_refs
                .get(index + 1)
                .map_or(placed.len(), |next| next.1 as usize);
            // SAFETY: each pair appears once in `pair_refs`, and its entry is in one range.
            let pair = unsafe { pairs.get_mut(pair as usize) };
            for p in &placed[first as usize..end] {
                store_manifold(pair, p, &contacts, substeps);
            }
        }
    });
}

/// Stores the impulses of the manifold placed at `p` in `pair`.
#[inline]
fn store_manifold(
    pair: &mut ContactPair,
    p: &Placed,
    contacts: &ContactConstraints,
    substeps: Scalar,
) {
    let block = &contacts.blocks[p.block as usize];
    let points = &contacts.points
        [block.first_point as usize..(block.first_point + block.point_count) as usize];
    let lane = p.lane as usize;
    let manifold = &mut pair.manifolds[p.manifold as usize];
    // Points disabled by a hook have no row (and were given zero impulse by the hook system),
    // so the rows belong to the enabled points in order.
    let first = p.first_point as usize;
    let enabled = manifold
        .points
        .iter_mut()
        .enumerate()
        .filter(|(i, _)| pair.modifications.point_enabled(first + i));
    for ((_, tracked), point) in enabled.zip(points) {
        tracked.data = point.normal_impulse.to_array()[lane] * substeps;
    }
    manifold.data = FrictionImpulse {
        tangent: block.tangent_impulse.map(|t| t.to_array()[lane] * substeps),
        twist: block.twist_impulse.to_array()[lane] * substeps,
    };
}
