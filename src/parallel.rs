//! The engine's parallel loops on Bevy's compute task pool, and the crew of helper threads
//! that runs them.
//!
//! With the `parallel` feature and more than one compute thread, a large stage (the narrow
//! phase's pair updates, the contact solver's colour stages) is cut into chunks
//! that the calling thread and `threads − 1` helpers claim from one atomic cursor. Loops whose
//! iterations are independent use [`parallel_for`]; the colour stages use [`run_chunks`] with
//! an order between chunks (see `solver::colouring`). Either way each element is computed by
//! exactly one thread with the same arithmetic, so results are bit-identical for any thread
//! count.
//!
//! ## The crew
//!
//! A scope on Bevy's compute task pool wakes a sleeping pool thread and waits for its task:
//! 3–8 µs per scope on the 2-core machine the engine is benchmarked on (more the longer the
//! pool slept before), paid by every
//! stage of every substep (a step of a mid-sized scene opens a dozen), which cost the 210-cube
//! pyramid a quarter of its step. So the stages do not open scopes. They hand their work to a
//! *crew*: detached tasks on the compute pool that, once started, spin waiting for the next job
//! and leave after [`IDLE`] without one. Within a step the stages follow each other within
//! microseconds, so the helpers are awake for all of them; between steps they leave, and the
//! first stage of the next step starts them again. Box2D v3's solver keeps its workers spinning
//! through a step's stages for the same reason (Catto, "Solver2D", 2024).
//!
//! A job is a closure on the publishing thread's stack that shares its work out itself (the
//! stages claim chunks from an atomic cursor), so it is correct however many helpers join in,
//! none included: the publisher runs it too, and returns only when every helper that started
//! it has returned. One world steps at a time on the crew; a second one publishing meanwhile
//! (two apps stepping on two threads) runs its job alone. A panic in any worker's part of a
//! job (engine code, or user code such as a custom shape queried by the narrow phase) reaches
//! the caller with its own payload once no helper is left in the job, and the crew serves the
//! next job as before (see [`run`]).
//!
//! ## Whether to share out at all
//!
//! The step runner runs each step either with the crew or on the calling thread alone
//! ([`on_one_thread_if`]), as the world's [`ThreadUse`](crate::schedule::ThreadUse) says; by
//! default it times a few steps each way now and then and keeps the faster. Since results do
//! not depend on the thread count, the choice only changes the time a step takes.

use std::cell::Cell;
use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bevy::tasks::{ComputeTaskPool, TaskPool};

/// Runs `kernel` on `0..len` in chunks: in parallel on the compute task pool if `len` is at
/// least `threshold` and the pool has more than one thread, else on the calling thread as
/// one chunk. For loops whose iterations are independent (they write disjoint data).
pub(crate) fn parallel_for(len: usize, threshold: usize, kernel: impl Fn(Range<usize>) + Sync) {
    if len >= threshold
        && let Some(pool) = pool_with_helpers()
    {
        parallel_chunks(pool, len, 64, &kernel);
    } else {
        kernel(0..len);
    }
}

/// Replaces the contents of `out` with `f(0), f(1), … f(len − 1)`, computed as
/// [`parallel_for`] runs them (each element by one call, so the result is the same for any
/// thread count). The elements are written straight into the vector's spare capacity, not
/// first cleared on the calling thread; if `f` panics, `out` is left empty.
pub(crate) fn parallel_fill<T: Send + Sync>(
    out: &mut Vec<T>,
    len: usize,
    threshold: usize,
    f: impl Fn(usize) -> T + Sync,
) {
    out.clear();
    out.reserve(len);
    let spare = Shared::new(&mut out.spare_capacity_mut()[..len]);
    parallel_for(len, threshold, |range| {
        for index in range {
            // SAFETY: each element is written by the one call whose range holds it.
            unsafe { spare.get_mut(index) }.write(f(index));
        }
    });
    // SAFETY: `parallel_for` ran every index of `0..len` once, so all `len` are written.
    unsafe { out.set_len(len) };
}

/// The compute task pool, if it has threads to spare for helpers (with the `parallel`
/// feature and more than one compute thread) and the step running on this thread may use
/// them (see [`on_one_thread_if`]).
pub(crate) fn pool_with_helpers() -> Option<&'static ComputeTaskPool> {
    if ONE_THREAD.get() {
        return None;
    }
    compute_pool()
}

/// The compute task pool, if it has threads to spare for helpers, whatever the step running
/// on this thread may use.
pub(crate) fn compute_pool() -> Option<&'static ComputeTaskPool> {
    ComputeTaskPool::try_get().filter(|pool| pool.thread_num() > 1)
}

thread_local! {
    /// Set while a step that must stay on this thread runs on it. Thread-local, not global:
    /// the step's systems all run on the thread that runs the step (single-threaded
    /// executors), and two worlds stepping on two threads choose independently.
    static ONE_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with the parallel stages kept on this thread if `one_thread`, and returns what it
/// returns (see [`ThreadUse`](crate::schedule::ThreadUse)). The flag is restored however `f`
/// ends, a panic included.
pub(crate) fn on_one_thread_if<R>(one_thread: bool, f: impl FnOnce() -> R) -> R {
    /// Puts the outer flag back when dropped, on return or unwind.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ONE_THREAD.set(self.0);
        }
    }
    let _restore = Restore(ONE_THREAD.replace(one_thread));
    f()
}

/// Runs `kernel` on `0..len` in about four chunks per thread (of at least `min_chunk`), with
/// no order between them.
pub(crate) fn parallel_chunks(
    pool: &TaskPool,
    len: usize,
    min_chunk: usize,
    kernel: &(impl Fn(Range<usize>) + Sync),
) {
    let size = len.div_ceil(pool.thread_num() * 4).max(min_chunk);
    let chunks = len.div_ceil(size);
    run_chunks(
        pool,
        chunks,
        |index| (0, index * size..((index + 1) * size).min(len)),
        kernel,
    );
}

/// Runs `count` chunks on the compute task pool: the calling thread and `threads − 1` helper
/// tasks claim chunks from one atomic cursor, in order; `chunk(index)` gives the chunk's
/// range and how many chunks must have finished before it may start (see the module docs).
/// One job for the crew, however many chunks.
pub(crate) fn run_chunks(
    pool: &TaskPool,
    count: usize,
    chunk: impl Fn(usize) -> (u32, Range<usize>) + Sync,
    kernel: &(impl Fn(Range<usize>) + Sync),
) {
    let cursor = AtomicUsize::new(0);
    let finished = AtomicU32::new(0);
    let abandoned = AtomicBool::new(false);
    let work = |helper: bool| {
        let _unwinding = AbandonOnUnwind(&abandoned);
        let mut helped = 0;
        while !abandoned.load(Ordering::Relaxed) {
            let index = cursor.fetch_add(1, Ordering::Relaxed);
            if index >= count {
                break;
            }
            let (wait_for, range) = chunk(index);
            // Every chunk before `wait_for` has been claimed (the cursor passed it), so each
            // is being run by a worker that needs nothing from this one, unless that worker
            // panicked. (A worker alone never waits: it finished every earlier chunk itself.)
            let mut spins = 0u32;
            while finished.load(Ordering::Acquire) < wait_for {
                if abandoned.load(Ordering::Acquire) {
                    return;
                }
                pause(&mut spins);
            }
            kernel(range);
            finished.fetch_add(1, Ordering::AcqRel);
            helped += 1;
        }
        if helper && helped > 0 {
            PARALLEL_COUNTERS
                .helper_chunks
                .fetch_add(helped, Ordering::Relaxed);
        }
    };
    run(pool, &work);
    PARALLEL_COUNTERS
        .parallel_stages
        .fetch_add(1, Ordering::Relaxed);
}

/// Marks a job abandoned if dropped while its worker unwinds from a panic, so that the other
/// workers stop waiting for the chunk it will never finish.
struct AbandonOnUnwind<'a>(&'a AtomicBool);

impl Drop for AbandonOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Release);
        }
    }
}

/// Counters that show whether (and how much) the parallel paths ran. Not part of the API:
/// the determinism test reads them.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct ParallelCounters {
    /// Parallel loops (contact solver stages, narrow phases) handed to several workers.
    pub parallel_stages: AtomicU64,
    /// Chunks run by helper tasks (not by the thread that handed the loop out).
    pub helper_chunks: AtomicU64,
    /// Substeps whose joint passes ran in parallel chunks.
    pub joint_stages: AtomicU64,
}

/// The process-wide counters.
#[doc(hidden)]
pub static PARALLEL_COUNTERS: ParallelCounters = ParallelCounters {
    parallel_stages: AtomicU64::new(0),
    helper_chunks: AtomicU64::new(0),
    joint_stages: AtomicU64::new(0),
};

/// Shared mutable access to a slice for the parallel loops.
///
/// Invariant upheld by the callers: no two threads ever write the same element, and nothing
/// is read while another thread writes it. In a [`parallel_for`] loop each index belongs to
/// the one chunk that contains it (in the broad phase's queries, each chunk's output list). In
/// a colour stage (`solver::colouring`) each block is run by exactly one worker, each block's
/// data is written only by the kernel run on that block, and each body with a non-zero inverse
/// mass is used by at most one block lane of the colour; bodies with zero inverse mass (the
/// shared static slot, kinematic bodies) are only read. Colours are separated by the runner's
/// acquire/release counter of finished chunks.
pub(crate) struct Shared<T> {
    ptr: *mut T,
    len: usize,
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Shared<T> {}

// SAFETY: elements are only accessed under the invariant above. Another thread may get `&mut T`
// (so `T` must be `Send`) or, at the same time as others, `&T` (so `T` must be `Sync`).
unsafe impl<T: Send + Sync> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for Shared<T> {}

impl<T> Shared<T> {
    pub(crate) fn new(slice: &mut [T]) -> Self {
        Self {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
        }
    }

    /// The element at `index`, for reading.
    ///
    /// # Safety
    /// No other thread writes it while the reference lives (see [`Shared`]).
    #[inline(always)]
    pub(crate) unsafe fn get(&self, index: usize) -> &T {
        assert!(index < self.len, "index {index} out of bounds {}", self.len);
        // SAFETY: in bounds; no concurrent writer (the caller's contract).
        unsafe { &*self.ptr.add(index) }
    }

    /// The element at `index`, for writing.
    ///
    /// # Safety
    /// No other thread reads or writes it while the reference lives (see [`Shared`]).
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn get_mut(&self, index: usize) -> &mut T {
        assert!(index < self.len, "index {index} out of bounds {}", self.len);
        // SAFETY: in bounds; exclusive for the caller (its contract).
        unsafe { &mut *self.ptr.add(index) }
    }

    /// `len` elements from `start`, for writing.
    ///
    /// # Safety
    /// No other thread reads or writes them while the slice lives (see [`Shared`]).
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn slice_mut(&self, start: usize, len: usize) -> &mut [T] {
        assert!(
            start <= self.len && len <= self.len - start,
            "range {start}+{len} out of bounds {}",
            self.len
        );
        // SAFETY: in bounds; exclusive for the caller (its contract).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }
}

/// One step of a wait for another thread: spin briefly, then give the core away (a worker
/// waited for may have been preempted on this one).
fn pause(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

/// How long a helper spins without a job before it leaves its pool thread.
const IDLE: Duration = Duration::from_micros(100);

/// A published job: the closure to call, with `true` when a helper calls it.
type Job<'a> = &'a (dyn Fn(bool) + Sync);

/// A job as the crew sees it: the job and its epoch, which tells a helper whether it has run
/// this job already (it may load the pointer of a job posted after the epoch it noticed).
struct Posted<'a> {
    epoch: u64,
    job: Job<'a>,
}

/// A panic's payload, as `catch_unwind` returns it.
type Panic = Box<dyn std::any::Any + Send>;

/// The crew's shared state (one per process, like the compute pool).
struct Crew {
    /// Whether a publisher owns the crew.
    claimed: AtomicBool,
    /// The current job (a [`Posted`] on the publisher's stack), or null.
    job: AtomicPtr<Posted<'static>>,
    /// The epoch of the last job posted: a helper that sees it change looks for a job.
    epoch: AtomicU64,
    /// Helpers that may be reading the current job: the publisher waits for none.
    busy: AtomicUsize,
    /// Helpers started and not yet gone.
    awake: AtomicUsize,
    /// The first panic of a helper in the current job, for the publisher to resume.
    helper_panic: Mutex<Option<Panic>>,
}

static CREW: Crew = Crew {
    claimed: AtomicBool::new(false),
    job: AtomicPtr::new(std::ptr::null_mut()),
    epoch: AtomicU64::new(0),
    busy: AtomicUsize::new(0),
    awake: AtomicUsize::new(0),
    helper_panic: Mutex::new(None),
};

/// Calls `job(false)` on this thread and `job(true)` on every helper that is awake or wakes
/// in time (up to `threads − 1` of `pool`'s threads; see the module docs), and returns when
/// all of them have returned.
///
/// A panic in any part of the job reaches the caller with its own payload, as if the job had
/// run on this thread alone: the caller's own panic unwinds on, and a helper's is resumed here
/// once every helper has left the job. Either way no helper touches the job after this
/// function has left, and the crew is free for the next job. (A job shared out by
/// [`run_chunks`] marks itself abandoned as a worker unwinds, so that no other worker waits for
/// a chunk that will never finish.)
pub(crate) fn run(pool: &TaskPool, job: Job<'_>) {
    if CREW
        .claimed
        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        job(false);
        return;
    }
    // One publisher at a time (the claim above), so the next epoch is this job's.
    let posted = Posted {
        epoch: CREW.epoch.load(Ordering::SeqCst) + 1,
        job,
    };
    let pointer = (&posted as *const Posted<'_>)
        .cast::<Posted<'static>>()
        .cast_mut();
    // SAFETY of publishing a pointer to `posted`: `publication` withdraws it, and waits until
    // no helper can still be using it, before this frame ends, by return or by unwinding.
    let publication = Publication::post(pointer, posted.epoch);
    let helpers = pool.thread_num().saturating_sub(1);
    // Counted once: a helper started here may run the job and leave before a second look.
    for _ in CREW.awake.load(Ordering::Acquire)..helpers {
        let awake = Awake::count();
        pool.spawn(async move {
            help();
            drop(awake);
        })
        .detach();
    }
    job(false);
    if let Some(panic) = publication.withdraw() {
        std::panic::resume_unwind(panic);
    }
}

/// The crew's current job, from its posting until it is withdrawn: by
/// [`Publication::withdraw`], or by `drop` while the publisher unwinds from a panic in its own
/// part of the job.
struct Publication;

impl Publication {
    fn post(job: *mut Posted<'static>, epoch: u64) -> Self {
        // The pointer first: a helper that sees the new epoch finds the job, unless withdrawn.
        CREW.job.store(job, Ordering::SeqCst);
        CREW.epoch.store(epoch, Ordering::SeqCst);
        Publication
    }

    /// Withdraws the job and returns the first panic of a helper in it, if one panicked.
    fn withdraw(self) -> Option<Panic> {
        std::mem::forget(self);
        withdraw_job()
    }
}

impl Drop for Publication {
    fn drop(&mut self) {
        // The publisher's panic unwinds on; a helper's, if there was one too, is dropped.
        drop(withdraw_job());
    }
}

/// Withdraws the current job, waits until no helper can still be using it, frees the crew
/// and returns the first panic of a helper in the job.
fn withdraw_job() -> Option<Panic> {
    CREW.job.store(std::ptr::null_mut(), Ordering::SeqCst);
    // A helper that read the pointer counted itself busy before reading it (both SeqCst), so
    // once the withdrawal is visible, `busy` covers everyone who may still hold the job.
    let mut spins = 0u32;
    while CREW.busy.load(Ordering::SeqCst) != 0 {
        pause(&mut spins);
    }
    let panic = lock(&CREW.helper_panic).take();
    CREW.claimed.store(false, Ordering::Release);
    panic
}

/// `mutex`'s guard, whether or not a thread panicked while holding it (nothing here can leave
/// its value half-written).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A helper's life: run each new job once, leave after [`IDLE`] without one.
fn help() {
    let mut seen = 0;
    let mut idle_since = Instant::now();
    let mut spins = 0u32;
    loop {
        let epoch = CREW.epoch.load(Ordering::SeqCst);
        if epoch != seen {
            CREW.busy.fetch_add(1, Ordering::SeqCst);
            // SAFETY: the publisher withdraws the pointer before waiting for `busy` to drop to
            // zero, and this helper counted itself busy before loading it.
            seen = match unsafe { CREW.job.load(Ordering::SeqCst).as_ref() } {
                Some(posted) if posted.epoch != seen => {
                    // The panic goes to the publisher, which resumes it; this thread stays in
                    // the crew for the next job.
                    let job = posted.job;
                    if let Err(panic) =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(true)))
                    {
                        lock(&CREW.helper_panic).get_or_insert(panic);
                    }
                    posted.epoch
                }
                // Run already: its epoch is being stored.
                Some(_) => seen,
                // The job of `epoch` was posted before it (see `Publication::post`) and has
                // been withdrawn since.
                None => epoch,
            };
            CREW.busy.fetch_sub(1, Ordering::SeqCst);
            idle_since = Instant::now();
            continue;
        }
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(128) && idle_since.elapsed() > IDLE {
            break;
        }
    }
}

/// One helper counted in `Crew::awake` until dropped, whether its task ran or was dropped
/// unrun (its pool shut down).
struct Awake;

impl Awake {
    fn count() -> Self {
        CREW.awake.fetch_add(1, Ordering::AcqRel);
        Awake
    }
}

impl Drop for Awake {
    fn drop(&mut self) {
        CREW.awake.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(all(test, feature = "parallel"))]
pub(crate) mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    /// Spins until `done()` or a second has passed.
    fn wait_for(done: impl Fn() -> bool) {
        let start = Instant::now();
        while !done() && start.elapsed() < Duration::from_secs(1) {
            std::hint::spin_loop();
        }
    }

    /// The tests share the process-wide crew, so they take turns (the crew's own tests and any
    /// other unit test that runs work on the compute pool).
    pub(crate) static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn two_threads() -> TaskPool {
        bevy::tasks::TaskPoolBuilder::new().num_threads(2).build()
    }

    #[test]
    fn a_helper_runs_a_job_once_and_the_publisher_waits_for_it() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let pool = two_threads();
        let mut joined = 0;
        for _ in 0..100 {
            let (helper_started, helper_ran) = (AtomicBool::new(false), AtomicU32::new(0));
            run(&pool, &|helper| {
                if helper {
                    helper_started.store(true, Ordering::SeqCst);
                    // Still inside the job when the publisher would return if it did not wait.
                    std::thread::sleep(Duration::from_micros(200));
                    helper_ran.fetch_add(1, Ordering::SeqCst);
                } else {
                    wait_for(|| helper_started.load(Ordering::SeqCst));
                }
            });
            // A helper leaving as the job is posted may still count as awake: then the
            // publisher runs the job alone, which is correct too.
            if helper_started.load(Ordering::SeqCst) {
                joined += 1;
                assert_eq!(
                    helper_ran.load(Ordering::SeqCst),
                    1,
                    "the helper ran the job once, and before the publisher returned"
                );
            }
        }
        assert!(joined > 0, "no helper joined any of 100 jobs");
    }

    #[test]
    fn helpers_leave_the_pool_soon_after_the_last_job() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let pool = two_threads();
        let helped = AtomicBool::new(false);
        run(&pool, &|helper| {
            if helper {
                helped.store(true, Ordering::SeqCst);
            } else {
                wait_for(|| helped.load(Ordering::SeqCst));
            }
        });
        assert!(helped.load(Ordering::SeqCst), "a helper joined the job");
        let done = Instant::now();
        wait_for(|| CREW.awake.load(Ordering::SeqCst) == 0);
        // `IDLE` plus the time to notice it, with room for a loaded machine.
        assert!(
            CREW.awake.load(Ordering::SeqCst) == 0 && done.elapsed() < Duration::from_millis(500),
            "the helper still holds its pool thread {:?} after the last job",
            done.elapsed()
        );
    }

    /// Runs four chunks, each after the one before it, whose kernel panics with "a kernel bug"
    /// on the threads `panics_here` picks (`true`: a helper), and returns the panic that
    /// reached the caller. The publisher's chunks first wait until a helper has claimed a
    /// chunk; the job is run again until a helper took part and a chunk ran on a thread that
    /// panics (a loaded machine may start the helper late, or the helper may take every chunk).
    fn panicking_job(pool: &TaskPool, panics_here: fn(bool) -> bool) -> Option<String> {
        let publisher = std::thread::current().id();
        let on_helper = move || std::thread::current().id() != publisher;
        for _ in 0..100 {
            let (helper_in_job, panicked) = (AtomicBool::new(false), AtomicBool::new(false));
            let chunk = |index: usize| {
                if on_helper() {
                    helper_in_job.store(true, Ordering::SeqCst);
                }
                (index as u32, index..index + 1)
            };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_chunks(pool, 4, chunk, &|_| {
                    if !on_helper() {
                        wait_for(|| helper_in_job.load(Ordering::SeqCst));
                    }
                    if panics_here(on_helper()) {
                        panicked.store(true, Ordering::SeqCst);
                        panic!("a kernel bug");
                    }
                })
            }));
            if helper_in_job.load(Ordering::SeqCst) && panicked.load(Ordering::SeqCst) {
                return result
                    .err()
                    .map(|panic| panic.downcast_ref::<&str>().unwrap().to_string());
            }
        }
        panic!("no job had both a helper in it and a panicking chunk");
    }

    /// After a job that panicked: the job is withdrawn (a helper arriving late finds none),
    /// the crew is free, and the next job is shared with a helper again.
    fn crew_is_whole_again(pool: &TaskPool) {
        assert!(
            CREW.job.load(Ordering::SeqCst).is_null(),
            "the job is still posted"
        );
        assert!(
            !CREW.claimed.load(Ordering::SeqCst),
            "the crew is still claimed"
        );
        let helped = AtomicBool::new(false);
        for _ in 0..100 {
            run(pool, &|helper| {
                if helper {
                    helped.store(true, Ordering::SeqCst);
                } else {
                    wait_for(|| helped.load(Ordering::SeqCst));
                }
            });
            if helped.load(Ordering::SeqCst) {
                return;
            }
        }
        panic!("no helper joined a job after the panic");
    }

    #[test]
    fn a_panic_on_a_helper_reaches_the_publisher_instead_of_hanging_it() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let pool = two_threads();
        for _ in 0..20 {
            let panic = panicking_job(&pool, |on_helper| on_helper);
            assert_eq!(
                panic.as_deref(),
                Some("a kernel bug"),
                "the helper's own panic"
            );
            crew_is_whole_again(&pool);
        }
    }

    #[test]
    fn a_panic_on_the_publisher_leaves_no_helper_in_its_job() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let pool = two_threads();
        for _ in 0..20 {
            let panic = panicking_job(&pool, |on_helper| !on_helper);
            assert_eq!(panic.as_deref(), Some("a kernel bug"));
            crew_is_whole_again(&pool);
        }
    }

    #[test]
    fn a_panic_in_a_step_on_one_thread_clears_the_flag() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        ComputeTaskPool::get_or_init(two_threads);
        let result = std::panic::catch_unwind(|| on_one_thread_if(true, || panic!("a step bug")));
        assert!(result.is_err());
        assert!(
            pool_with_helpers().is_some(),
            "later steps may share out again"
        );
    }

    #[test]
    fn a_step_on_one_thread_keeps_its_stages_on_it() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        ComputeTaskPool::get_or_init(two_threads);
        assert!(pool_with_helpers().is_some());
        assert!(on_one_thread_if(true, || pool_with_helpers().is_none()));
        assert!(on_one_thread_if(false, || pool_with_helpers().is_some()));
        assert!(
            pool_with_helpers().is_some(),
            "the flag is cleared after the step"
        );
    }
}
