//! Graph colouring of contact constraints, so that each colour can be solved in parallel.
//!
//! Two constraints conflict when they move the same dynamic body. Constraints are coloured
//! greedily in their (deterministic) order: each takes the lowest colour that neither of its
//! dynamic bodies has used yet; static and kinematic bodies are only read by the solver, so
//! any number of constraints of one colour may share them. Constraints that find no free
//! colour go to an overflow group solved on one thread. The constraints are then reordered by
//! colour. Within a colour every constraint reads and writes its own bodies only, so solving a
//! colour in parallel chunks gives bit-identical results for any number of threads — the same
//! results as solving it on one thread.
//!
//! Box2D v3 partitions its constraint graph the same way (Catto, "Solver2D", 2024).

use std::ops::Range;

use bevy::tasks::ComputeTaskPool;

use super::solver_body::RigidBodyQueryItem;
use crate::math::{Scalar, Vector};

/// Colours available before constraints overflow into the sequential group.
const COLOURS: usize = 63;

/// Below this many constraints a colour is solved on the calling thread.
const PARALLEL_CONSTRAINTS: usize = 128;

/// Something that acts on two bodies of the dense storage.
pub(crate) trait TwoBody {
    /// The two body slots.
    fn bodies(&self) -> (u32, u32);
}

/// The colour ranges of a reordered constraint list, and scratch space reused across steps.
#[derive(Default)]
pub(crate) struct Colouring {
    /// Ranges of the constraint list, one per colour in order; the last may be the overflow.
    ranges: Vec<Range<usize>>,
    /// Whether the last range is the overflow group (which must be solved sequentially).
    overflow: bool,
    used: Vec<u64>,
    colour_of: Vec<u8>,
    counts: Vec<usize>,
}

impl Colouring {
    /// Colours `constraints` and reorders them by colour (stable within a colour).
    /// `dynamic(slot)` tells whether a body is written by the solver.
    pub(crate) fn colour<T: TwoBody + Clone>(
        &mut self,
        constraints: &mut [T],
        scratch: &mut Vec<T>,
        body_count: usize,
        dynamic: impl Fn(u32) -> bool,
    ) {
        self.used.clear();
        self.used.resize(body_count, 0);
        self.colour_of.clear();
        self.counts.clear();
        self.counts.resize(COLOURS + 1, 0);
        for c in constraints.iter() {
            let (a, b) = c.bodies();
            let (da, db) = (dynamic(a), dynamic(b));
            let taken = if da { self.used[a as usize] } else { 0 }
                | if db { self.used[b as usize] } else { 0 };
            let colour = (!taken).trailing_zeros() as usize;
            let colour = if colour < COLOURS {
                let bit = 1u64 << colour;
                if da {
                    self.used[a as usize] |= bit;
                }
                if db {
                    self.used[b as usize] |= bit;
                }
                colour
            } else {
                COLOURS
            };
            self.colour_of.push(colour as u8);
            self.counts[colour] += 1;
        }
        // Counting sort into `scratch`, then swap.
        let mut starts = [0usize; COLOURS + 1];
        let mut total = 0;
        self.ranges.clear();
        for (colour, &count) in self.counts.iter().enumerate() {
            starts[colour] = total;
            if count > 0 {
                self.ranges.push(total..total + count);
            }
            total += count;
        }
        self.overflow = self.counts[COLOURS] > 0;
        scratch.clear();
        scratch.extend_from_slice(constraints);
        for (c, &colour) in scratch.iter().zip(&self.colour_of) {
            constraints[starts[colour as usize]] = c.clone();
            starts[colour as usize] += 1;
        }
    }

    /// Runs `f` on every constraint, colour after colour, each large colour in parallel
    /// chunks on the compute task pool.
    pub(crate) fn for_each<T: TwoBody + Send>(
        &self,
        constraints: &mut [T],
        bodies: &mut [RigidBodyQueryItem],
        f: impl Fn(&mut T, &mut BodyState, &mut BodyState) + Sync,
    ) {
        let access = BodyAccess(bodies.as_mut_ptr(), bodies.len());
        let run = |c: &mut T| {
            let (a, b) = c.bodies();
            // SAFETY: see `BodyAccess`. Within one colour no other constraint touches the
            // dynamic bodies of `c`, and non-dynamic bodies are copied, never written back.
            unsafe { access.with_pair(a, b, |x, y| f(c, x, y)) }
        };
        let pool = ComputeTaskPool::try_get().filter(|p| p.thread_num() > 1);
        for (i, range) in self.ranges.iter().enumerate() {
            let group = &mut constraints[range.clone()];
            let sequential = self.overflow && i + 1 == self.ranges.len();
            match pool {
                Some(pool) if !sequential && group.len() >= PARALLEL_CONSTRAINTS => {
                    let chunk = group.len().div_ceil(pool.thread_num() * 4).max(32);
                    pool.scope(|scope| {
                        for part in group.chunks_mut(chunk) {
                            let run = &run;
                            scope.spawn(async move { part.iter_mut().for_each(run) });
                        }
                    });
                }
                _ => group.iter_mut().for_each(run),
            }
        }
    }
}

/// Raw access to the dense body storage for the colour-parallel solve.
///
/// Invariant upheld by [`Colouring`]: while a colour is solved, each body with a non-zero
/// inverse mass is used by at most one constraint, and bodies with zero inverse mass (the
/// shared static slot, kinematic bodies) are only read. `with_pair` works on copies and
/// writes back only bodies with a non-zero inverse mass, so no two threads ever write the same
/// memory, and nothing is read while another thread writes it.
#[derive(Clone, Copy)]
struct BodyAccess(*mut RigidBodyQueryItem, usize);

// SAFETY: the pointer is only dereferenced under the invariant above.
unsafe impl Send for BodyAccess {}
// SAFETY: as above.
unsafe impl Sync for BodyAccess {}

impl BodyAccess {
    /// Calls `f` on copies of bodies `a` and `b`, then writes back the dynamic ones.
    ///
    /// # Safety
    /// `a` and `b` are distinct in-bounds slots, and the invariant of [`BodyAccess`] holds.
    unsafe fn with_pair(self, a: u32, b: u32, f: impl FnOnce(&mut BodyState, &mut BodyState)) {
        let (a, b) = (a as usize, b as usize);
        assert!(
            a != b && a < self.1 && b < self.1,
            "contact bodies are distinct slots"
        );
        // SAFETY: in bounds (checked above); no other thread writes these bodies now.
        let (mut x, mut y) = unsafe {
            (
                BodyState::load(&*self.0.add(a)),
                BodyState::load(&*self.0.add(b)),
            )
        };
        f(&mut x, &mut y);
        for (slot, body) in [(a, &x), (b, &y)] {
            if body.inverse_mass > 0.0 {
                // SAFETY: in bounds; this constraint is the only one using this dynamic body
                // in the current colour.
                unsafe {
                    let target = &mut *self.0.add(slot);
                    target.linear_velocity = body.linear_velocity;
                    target.angular_velocity = body.angular_velocity;
                }
            }
        }
    }
}

/// What the contact solver reads of a body, copied out of the dense storage for one
/// constraint; only the velocities are written back.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyState {
    pub linear_velocity: Vector,
    pub angular_velocity: Vector,
    pub inverse_mass: Scalar,
    /// Centre-of-mass displacement since the start of the step.
    pub moved: Vector,
    /// Rotation since the start of the step, as a small-angle rotation vector.
    pub turned: Vector,
}

impl BodyState {
    fn load(body: &RigidBodyQueryItem) -> Self {
        Self {
            linear_velocity: body.linear_velocity,
            angular_velocity: body.angular_velocity,
            inverse_mass: body.inverse_mass,
            moved: body.accumulated_translation,
            turned: body.turned,
        }
    }
}
