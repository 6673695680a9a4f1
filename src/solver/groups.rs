//! Independent groups of constraints, and the runner that shares whole groups out between
//! threads.
//!
//! Constraints solved Gauss–Seidel style one after another (the joints' XPBD passes) give
//! results that depend on their order wherever two of them move the same body. Two
//! constraints that are not connected through bodies they move never do: the connected
//! components of the graph whose nodes are bodies and whose edges are constraints can be
//! solved in any order, on any thread, and each body still meets its constraints in the order
//! it did. So a list sorted by component ([`Components`], keeping the order within each)
//! and run whole components at a time ([`Groups`]) computes bit for bit what the list in its
//! own order computes, on any number of threads. Separate ragdolls, vehicles or doors are such
//! components; one large mechanism (a joint grid) is one component and stays on one thread.

use std::ops::Range;

use crate::parallel::{pool_with_helpers, run_chunks};

/// The connected components of a graph, numbered in the order of each one's first edge.
#[derive(Default)]
pub(crate) struct Components {
    /// Per edge, its component.
    pub of_edge: Vec<u32>,
    /// Scratch per node: union–find parents, then component numbers.
    parent: Vec<u32>,
    /// Scratch for [`sort`](Self::sort).
    starts: Vec<u32>,
    sorted: Vec<u32>,
    count: usize,
}

impl Components {
    /// Finds the components of the graph of `nodes` nodes (fewer than 2³¹) and the given
    /// edges (a self-loop `[a, a]` is an edge of `a`'s component).
    pub(crate) fn find(&mut self, edges: impl Iterator<Item = [usize; 2]> + Clone, nodes: usize) {
        let parent = &mut self.parent;
        parent.clear();
        parent.extend(0..nodes as u32);
        fn root(parent: &mut [u32], mut node: u32) -> u32 {
            while parent[node as usize] != node {
                // Path halving.
                parent[node as usize] = parent[parent[node as usize] as usize];
                node = parent[node as usize];
            }
            node
        }
        for [a, b] in edges.clone() {
            let (a, b) = (root(parent, a as u32), root(parent, b as u32));
            parent[a.max(b) as usize] = a.min(b);
        }
        self.of_edge.clear();
        self.of_edge
            .extend(edges.map(|[a, _]| root(parent, a as u32)));
        // A root's entry becomes its component's number, marked by the top bit, at its first
        // edge.
        const NUMBERED: u32 = 1 << 31;
        let mut count = 0;
        for component in &mut self.of_edge {
            let root = &mut parent[*component as usize];
            if *root & NUMBERED == 0 {
                *root = NUMBERED | count;
                count += 1;
            }
            *component = *root & !NUMBERED;
        }
        self.count = count as usize;
    }

    /// Sorts `items` stably by the component of their edge (`edge_of(item)`).
    pub(crate) fn sort(&mut self, items: &mut [u32], edge_of: impl Fn(u32) -> usize) {
        let starts = &mut self.starts;
        starts.clear();
        starts.resize(self.count + 1, 0);
        for &item in items.iter() {
            starts[self.of_edge[edge_of(item)] as usize + 1] += 1;
        }
        for c in 1..starts.len() {
            starts[c] += starts[c - 1];
        }
        self.sorted.clear();
        self.sorted.resize(items.len(), 0);
        for &item in items.iter() {
            let at = &mut starts[self.of_edge[edge_of(item)] as usize];
            self.sorted[*at as usize] = item;
            *at += 1;
        }
        items.copy_from_slice(&self.sorted);
    }
}

/// A list cut into groups that share nothing (whole components), and the parallel chunks of
/// whole groups that [`run`](Self::run) shares out.
#[derive(Default)]
pub(crate) struct Groups {
    /// Where each group ends in the list (groups without items left out).
    ends: Vec<u32>,
    /// Parallel chunks, largest first, cut for `chunked_for` threads (0: not cut).
    pub(crate) chunks: Vec<(u32, u32)>,
    chunked_for: usize,
}

impl Groups {
    /// Forgets the groups.
    pub(crate) fn clear(&mut self) {
        self.ends.clear();
        self.chunked_for = 0;
    }

    /// Ends the group in progress at `end` (a group without items is skipped).
    pub(crate) fn end(&mut self, end: usize) {
        if end as u32 > self.ends.last().copied().unwrap_or(0) {
            self.ends.push(end as u32);
        }
    }

    /// Runs `kernel` on ranges of the list that cover it once, each made of whole groups: on
    /// the calling thread as one range, or, for a list of at least `threshold` items in
    /// several groups, in parallel chunks. Returns whether it ran in parallel.
    pub(crate) fn run(&mut self, threshold: usize, kernel: impl Fn(Range<usize>) + Sync) -> bool {
        let len = self.ends.last().copied().unwrap_or(0) as usize;
        let pool = pool_with_helpers().filter(|_| len >= threshold && self.ends.len() > 1);
        let Some(pool) = pool else {
            kernel(0..len);
            return false;
        };
        self.cut(pool.thread_num());
        let chunk = |index: usize| {
            let (start, end) = self.chunks[index];
            (0, start as usize..end as usize)
        };
        run_chunks(pool, self.chunks.len(), chunk, &kernel);
        true
    }

    /// Cuts the list into chunks of whole groups for `threads` workers: consecutive groups
    /// until a chunk holds a quarter of a worker's share, largest chunk first, so that a large
    /// group does not start last.
    pub(crate) fn cut(&mut self, threads: usize) {
        if self.chunked_for == threads {
            return;
        }
        self.chunked_for = threads;
        self.chunks.clear();
        let total = self.ends.last().copied().unwrap_or(0);
        let target = total.div_ceil(threads as u32 * 4);
        let mut start = 0;
        for &end in &self.ends {
            if end - start >= target || Some(&end) == self.ends.last() {
                self.chunks.push((start, end));
                start = end;
            }
        }
        self.chunks
            .sort_unstable_by_key(|&(start, end)| (std::cmp::Reverse(end - start), start));
    }
}
