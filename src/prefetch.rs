//! Software prefetches for the loops that walk the contact graph in an order its memory is not
//! laid out in.
//!
//! A contact pair's manifolds and each manifold's points are separate heap blocks (parry's
//! `ContactManifold` keeps its points in a `Vec`), so the narrow phase and the contact
//! preparation follow two or three dependent pointers per manifold. On a large scene these miss
//! the cache, and a loop body that does a lot of arithmetic per element keeps the processor
//! from reaching the next element's loads on its own: in the 5,050-cube pyramid, the first load
//! of a manifold's points took 46 % of the samples in the narrow phase's pair update, and the
//! loads of the pair and of its points 30 % of those in the contact block preparation. The
//! loops therefore ask for the memory of the elements a few iterations ahead, one pointer level
//! per distance: the pairs farthest ahead, their manifolds nearer, their points nearest
//! (software prefetching; Drepper, "What Every Programmer Should Know About Memory", 2007,
//! §6.3.2).
//!
//! Below [`PREFETCH_ABOVE`] pairs or manifolds, the contact graph stays in the cache from
//! step to step and the prefetches only cost instructions (3.5 % of the 210-cube pyramid's
//! step), so the loops skip them.
//!
//! A prefetch only hints: it never faults and never changes a result.

/// Fewest contact pairs (or manifolds) for which the loops over them prefetch.
pub(crate) const PREFETCH_ABOVE: usize = 2048;

/// Bytes in a cache line on the processors the engine targets.
const LINE: usize = 64;

/// Starts loading the cache lines that hold `values` (a no-op where there is no prefetch
/// instruction on stable Rust).
#[inline(always)]
pub(crate) fn prefetch<T>(values: &[T]) {
    let start = values.as_ptr() as usize;
    let end = start + std::mem::size_of_val(values);
    let mut line = start & !(LINE - 1);
    while line < end {
        prefetch_line(line);
        line += LINE;
    }
}

/// Starts loading the cache lines that hold `value`.
#[inline(always)]
pub(crate) fn prefetch_one<T>(value: &T) {
    prefetch(std::slice::from_ref(value));
}

#[inline(always)]
fn prefetch_line(address: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86-64 baseline, and a prefetch reads nothing the program
    // sees and never faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(address as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
