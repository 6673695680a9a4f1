//! Graph colouring of contact constraints, their grouping into blocks of four for the wide
//! solver, and the stage runner that solves the colours one after another, each in parallel
//! chunks when the scene is large enough.
//!
//! ## Colouring
//!
//! Two constraints conflict when they move the same dynamic body. Constraints are coloured
//! greedily in their (deterministic) order: each takes the lowest colour that neither of its
//! dynamic bodies has used yet; static and kinematic bodies are only read by the solver, so
//! any number of constraints of one colour may share them. Constraints that find no free
//! colour go to an overflow group solved in order on one thread. The constraints are then
//! reordered by colour. Within a colour every constraint reads and writes its own bodies
//! only, so the constraints of a colour can be solved in any order, four at a time in the
//! lanes of one block, or in parallel chunks, with bit-identical results — the same results
//! as solving them one by one. Box2D v3 partitions its constraint graph the same way (Catto,
//! "Solver2D", 2024; the graph colouring of Box2D v3's `constraint_graph.c`).
//!
//! ## Stages
//!
//! A *stage* (warm start, solve, relax, restitution) runs every block once, colour after
//! colour. On one thread that is a plain loop. With the `parallel` feature, a large enough
//! scene and more than one compute thread, a stage is **one** job for the calling thread and
//! `threads − 1` helpers on Bevy's compute task pool (kept awake between stages, see
//! `crate::parallel`), however many colours there are: they claim chunks of blocks from one
//! atomic cursor that runs through the colours in order, and a chunk of colour `c` starts
//! only when every chunk before its colour has finished (a counter of finished chunks).
//! Nobody waits for a *worker*, only for chunks someone has claimed and is running, so a
//! helper that starts late (its thread was busy) finds less or nothing to do, and the stage
//! never deadlocks. This is the shape of Box2D v3's solver stages (Catto,
//! "Solver2D"; `solver.c`'s stage/block scheme), on Bevy's task pool.

use std::ops::Range;

use bevy::tasks::ComputeTaskPool;

use crate::parallel::{parallel_chunks, pool_with_helpers, run_chunks};

/// Colours available before constraints overflow into the sequential group.
const COLOURS: usize = 63;

/// Lanes per block of the wide solver.
pub(crate) const LANES: usize = 4;

/// Below this many blocks a stage runs on the calling thread. Every colour of a parallel
/// stage ends in a barrier and hands body states from one core to the other, which costs more
/// than a small scene saves: the 210-cube pyramid (under 256 blocks) gained 1.11–1.17× on two
/// threads when the VM's two cores were close, and ran 2.1× slower when a cache line took
/// 400 ns to go from one to the other and back.
pub(crate) const PARALLEL_BLOCKS: usize = 256;

/// Something that acts on two bodies of the dense storage.
pub(crate) trait TwoBody {
    /// The two body slots, each with whether the solver writes it (a dynamic body).
    fn bodies(&self) -> [(u32, bool); 2];
}

/// The colour ranges of a reordered constraint list, and scratch space reused across steps.
#[derive(Default)]
pub(crate) struct Colouring {
    /// Ranges of the constraint list, one per colour in order (the overflow group excluded).
    pub colours: Vec<Range<usize>>,
    /// The overflow group (solved in order on one thread); empty if every constraint found a
    /// colour.
    pub overflow: Range<usize>,
    used: Vec<u64>,
    colour_of: Vec<u8>,
    counts: Vec<usize>,
}

impl Colouring {
    /// Colours `constraints` (between bodies of slots below `body_count`) and reorders them
    /// by colour (stable within a colour).
    pub(crate) fn colour<T: TwoBody + Clone>(
        &mut self,
        constraints: &mut [T],
        scratch: &mut Vec<T>,
        body_count: usize,
    ) {
        self.used.clear();
        self.used.resize(body_count, 0);
        self.colour_of.clear();
        self.counts.clear();
        self.counts.resize(COLOURS + 1, 0);
        for c in constraints.iter() {
            let [(a, da), (b, db)] = c.bodies();
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
        // Counting sort into `scratch`, then copy back.
        let mut starts = [0usize; COLOURS + 1];
        let mut total = 0;
        self.colours.clear();
        for (colour, &count) in self.counts.iter().enumerate() {
            starts[colour] = total;
            if count > 0 && colour < COLOURS {
                self.colours.push(total..total + count);
            }
            total += count;
        }
        self.overflow = starts[COLOURS]..total;
        scratch.clear();
        scratch.extend_from_slice(constraints);
        for (c, &colour) in scratch.iter().zip(&self.colour_of) {
            constraints[starts[colour as usize]] = c.clone();
            starts[colour as usize] += 1;
        }
    }
}

/// The order in which a stage runs the blocks: block ranges per colour, then the overflow
/// blocks (one constraint each, in order), and the parallel chunks of both.
#[derive(Default)]
pub(crate) struct Stages {
    /// Blocks of each colour.
    pub colours: Vec<Range<u32>>,
    /// Blocks of the overflow group, run in order by one worker.
    pub overflow: Range<u32>,
    /// Parallel chunks: the blocks of each, and the index of the first chunk of its colour
    /// (every chunk before that must have finished before it starts).
    chunks: Vec<(Range<u32>, u32)>,
    /// The thread count `chunks` were cut for (0: not cut).
    chunked_for: usize,
}

impl Stages {
    /// Total number of blocks.
    pub(crate) fn blocks(&self) -> usize {
        self.overflow.end as usize
    }

    /// Forgets the chunks (the blocks changed).
    pub(crate) fn clear(&mut self) {
        self.colours.clear();
        self.overflow = 0..0;
        self.chunks.clear();
        self.chunked_for = 0;
    }

    /// The compute pool if this stage is worth running in parallel.
    pub(crate) fn parallel_pool(&self) -> Option<&'static ComputeTaskPool> {
        if self.blocks() < PARALLEL_BLOCKS {
            return None;
        }
        pool_with_helpers()
    }

    /// Cuts every colour into chunks for `threads` workers (about four per worker, at least
    /// eight blocks each); the overflow group is one chunk.
    fn cut(&mut self, threads: usize) {
        if self.chunked_for == threads {
            return;
        }
        self.chunks.clear();
        for colour in &self.colours {
            let first = self.chunks.len() as u32;
            let len = colour.len();
            let size = len.div_ceil(threads * 4).max(8) as u32;
            let mut start = colour.start;
            while start < colour.end {
                let end = (start + size).min(colour.end);
                self.chunks.push((start..end, first));
                start = end;
            }
        }
        if !self.overflow.is_empty() {
            let first = self.chunks.len() as u32;
            self.chunks.push((self.overflow.clone(), first));
        }
        self.chunked_for = threads;
    }

    /// Runs `kernel` on every block: colour after colour, then the overflow blocks in order.
    /// Large stages run on the compute task pool (see the module docs); the result is the
    /// same bit for bit.
    pub(crate) fn run(&mut self, kernel: impl Fn(usize) + Sync) {
        self.run_ranges(|blocks| blocks.for_each(&kernel));
    }

    /// Runs `kernel` on ranges of blocks that cover every block once, in the order of
    /// [`Stages::run`]: the blocks of one range are of one colour (so independent of each
    /// other), and an overflow block is a range of its own.
    pub(crate) fn run_ranges(&mut self, kernel: impl Fn(Range<usize>) + Sync) {
        if let Some(pool) = self.parallel_pool() {
            self.run_parallel(pool, &kernel);
        } else {
            self.run_serial(&kernel);
        }
    }

    /// Runs every block on the calling thread.
    fn run_serial(&self, kernel: &impl Fn(Range<usize>)) {
        for colour in &self.colours {
            kernel(colour.start as usize..colour.end as usize);
        }
        self.run_overflow(self.overflow.clone(), kernel);
    }

    /// Runs overflow blocks one by one, in order.
    fn run_overflow(&self, blocks: Range<u32>, kernel: &impl Fn(Range<usize>)) {
        for block in blocks {
            kernel(block as usize..block as usize + 1);
        }
    }

    fn run_parallel(&mut self, pool: &ComputeTaskPool, kernel: &(impl Fn(Range<usize>) + Sync)) {
        self.cut(pool.thread_num());
        run_chunks(
            pool,
            self.chunks.len(),
            |index| {
                let (blocks, wait_for) = &self.chunks[index];
                (*wait_for, blocks.start as usize..blocks.end as usize)
            },
            &|blocks: Range<usize>| {
                // Colours' chunks all end before the overflow group starts.
                if blocks.start >= self.overflow.start as usize {
                    self.run_overflow(blocks.start as u32..blocks.end as u32, kernel);
                } else {
                    kernel(blocks);
                }
            },
        );
    }

    /// Runs `kernel` on every block, in any order (for work where the blocks do not depend on
    /// each other, such as building them): in parallel chunks when the stage is large.
    pub(crate) fn run_independent(&self, kernel: impl Fn(usize) + Sync) {
        let blocks = self.blocks();
        match self.parallel_pool() {
            Some(pool) => parallel_chunks(pool, blocks, 8, &|range: Range<usize>| {
                range.for_each(&kernel)
            }),
            None => (0..blocks).for_each(kernel),
        }
    }
}
