//! Worker pool: long-lived search threads that take jobs from priority
//! channels and send their outcomes back.
//!
//! The pool owns a few threads (one per worker, see
//! [`AnyAnglePlugin::search_threads`](crate::plugin::AnyAnglePlugin::search_threads)),
//! each with its own [`Planner`], so search memory is reused from one job to
//! the next. The main thread sends jobs into one channel per [`Priority`];
//! an idle worker always takes the most urgent job waiting. Every job sends
//! exactly one [`Outcome`] back, also when it was cancelled, so the main
//! thread knows which grid versions searches still use.
//!
//! A search that runs longer than [`LONG_SEARCH`] does not hold the others
//! up: the pool notices it (in [`WorkerPool::supervise`], once a frame) and
//! starts a stand-in thread, so that as many threads as there are workers
//! keep serving short searches. When a long search ends, its thread leaves
//! if the pool has more threads than it needs. At most as many stand-ins as
//! workers run at once.

use core::time::Duration;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread;

use bevy_platform::time::Instant;
use crossbeam_channel::{Receiver, Select, Sender, TryRecvError};
use parking_lot::{Condvar, Mutex};

use super::fair::Turns;
use super::job::{Job, Outcome, Progress};
use crate::plugin::agent::Priority;
#[cfg(feature = "debug-gizmos")]
use crate::search::SearchTrace;
use crate::search::{PlanError, Planner, Step};

/// How soon a search counts as long, and a stand-in thread takes over its
/// share of the short ones.
pub(crate) const LONG_SEARCH: Duration = Duration::from_millis(20);

/// One thread's state, read by [`WorkerPool::supervise`].
struct Slot {
    /// When the current search started (nanoseconds since the pool's
    /// epoch), or 0 when idle.
    started: AtomicU64,
    /// Set once the current search counts as long.
    long: AtomicBool,
}

/// State shared by the pool handle and its threads.
struct Shared {
    jobs: [Receiver<Job>; 4],
    outcomes: Sender<Outcome>,
    epoch: Instant,
    /// The number of threads that should serve short searches.
    workers: usize,
    /// Threads alive and whether each one's search is long.
    threads: Mutex<Vec<Arc<Slot>>>,
    /// Answers owed for the jobs sent (one per agent a job answers) and
    /// not yet read.
    outstanding: AtomicUsize,
    /// Jobs sent and not yet taken by a thread, per priority.
    waiting: [AtomicUsize; 4],
    /// Searches finished, and the nanoseconds they took (for the work
    /// estimate that paces dispatching).
    finished: AtomicU64,
    busy_nanos: AtomicU64,
    /// Jobs answered as cancelled.
    cancelled: AtomicU64,
    /// Threads hold here while the pool is paused.
    paused: Mutex<bool>,
    resume: Condvar,
}

/// The pool's handle, owned by the plugin. Dropping it closes the job
/// channels; the threads finish their current job and leave.
pub(crate) struct WorkerPool {
    senders: [Sender<Job>; 4],
    outcomes: Receiver<Outcome>,
    shared: Arc<Shared>,
}

impl WorkerPool {
    /// A pool of `workers` threads (at least 1).
    pub(crate) fn new(workers: usize) -> Self {
        let workers = workers.max(1);
        let channels: [(Sender<Job>, Receiver<Job>); 4] =
            std::array::from_fn(|_| crossbeam_channel::unbounded());
        let (out_tx, out_rx) = crossbeam_channel::unbounded();
        let senders = channels.each_ref().map(|(s, _)| s.clone());
        let receivers = channels.map(|(_, r)| r);
        let shared = Arc::new(Shared {
            jobs: receivers,
            outcomes: out_tx,
            epoch: Instant::now(),
            workers,
            threads: Mutex::new(Vec::with_capacity(workers * 2)),
            outstanding: AtomicUsize::new(0),
            waiting: std::array::from_fn(|_| AtomicUsize::new(0)),
            finished: AtomicU64::new(0),
            busy_nanos: AtomicU64::new(0),
            cancelled: AtomicU64::new(0),
            paused: Mutex::new(false),
            resume: Condvar::new(),
        });
        let pool = WorkerPool {
            senders,
            outcomes: out_rx,
            shared,
        };
        {
            let mut threads = pool.shared.threads.lock();
            for _ in 0..workers {
                spawn_thread(&pool.shared, &mut threads);
            }
        }
        pool
    }

    /// The number of threads serving short searches.
    pub(crate) fn workers(&self) -> usize {
        self.shared.workers
    }

    /// Queues `job` with `priority`.
    pub(crate) fn send(&self, job: Job, priority: Priority) {
        let answers = job.members();
        self.shared.outstanding.fetch_add(answers, Ordering::AcqRel);
        self.shared.waiting[priority as usize].fetch_add(1, Ordering::AcqRel);
        // The receivers live as long as `shared`, which `self` holds.
        if let Err(e) = self.senders[priority as usize].send(job) {
            drop(e);
            self.shared.outstanding.fetch_sub(answers, Ordering::AcqRel);
            self.shared.waiting[priority as usize].fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// The outcomes that arrived, without waiting.
    pub(crate) fn outcomes(&self) -> crossbeam_channel::TryIter<'_, Outcome> {
        self.outcomes.try_iter()
    }

    /// Waits up to `timeout` for an outcome.
    pub(crate) fn wait_outcome(&self, timeout: Duration) -> Option<Outcome> {
        self.outcomes.recv_timeout(timeout).ok()
    }

    /// Whether an outcome waits to be read.
    pub(crate) fn has_outcomes(&self) -> bool {
        !self.outcomes.is_empty()
    }

    /// Answers owed for the jobs sent (one per agent) not read yet.
    pub(crate) fn outstanding(&self) -> usize {
        self.shared.outstanding.load(Ordering::Acquire)
    }

    /// Jobs of `priority` sent that no thread has taken yet.
    pub(crate) fn waiting(&self, priority: Priority) -> usize {
        self.shared.waiting[priority as usize].load(Ordering::Acquire)
    }

    /// Jobs answered as cancelled so far.
    pub(crate) fn cancelled(&self) -> u64 {
        self.shared.cancelled.load(Ordering::Relaxed)
    }

    /// Searches finished so far and the total time they took.
    pub(crate) fn work_done(&self) -> (u64, Duration) {
        (
            self.shared.finished.load(Ordering::Relaxed),
            Duration::from_nanos(self.shared.busy_nanos.load(Ordering::Relaxed)),
        )
    }

    /// Marks one outcome as read (the main thread calls it for each one).
    pub(crate) fn answered(&self) {
        self.shared.outstanding.fetch_sub(1, Ordering::AcqRel);
    }

    /// Holds (or releases) every thread before its next job.
    pub(crate) fn set_paused(&self, paused: bool) {
        let mut p = self.shared.paused.lock();
        if *p != paused {
            *p = paused;
            if !paused {
                self.shared.resume.notify_all();
            }
        }
    }

    /// Threads alive now (workers plus stand-ins).
    pub(crate) fn threads(&self) -> usize {
        self.shared.threads.lock().len()
    }

    /// Notices searches that became long and starts stand-in threads for
    /// them. Cheap; call once a frame while jobs are outstanding.
    pub(crate) fn supervise(&self) {
        let now = self.shared.epoch.elapsed().as_nanos() as u64;
        let limit = LONG_SEARCH.as_nanos() as u64;
        let mut threads = self.shared.threads.lock();
        let mut long = 0;
        for slot in threads.iter() {
            let started = slot.started.load(Ordering::Acquire);
            if slot.long.load(Ordering::Acquire) {
                long += 1;
            } else if started != 0 && now.saturating_sub(started) > limit {
                slot.long.store(true, Ordering::Release);
                long += 1;
            }
        }
        // A thread that leaves takes its slot out of the list first.
        let serving = threads.len() - long;
        let room = (2 * self.shared.workers).saturating_sub(threads.len());
        for _ in 0..self.shared.workers.saturating_sub(serving).min(room) {
            spawn_thread(&self.shared, &mut threads);
        }
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        // Release paused threads so that they see the closed channels.
        self.set_paused(false);
    }
}

/// Starts one thread and registers its slot.
fn spawn_thread(shared: &Arc<Shared>, threads: &mut Vec<Arc<Slot>>) {
    let slot = Arc::new(Slot {
        started: AtomicU64::new(0),
        long: AtomicBool::new(false),
    });
    let mine = Arc::clone(&slot);
    let shared_for_thread = Arc::clone(shared);
    let spawned = thread::Builder::new()
        .name("anyangle-search".into())
        .spawn(move || run(&shared_for_thread, &mine));
    if spawned.is_ok() {
        threads.push(slot);
    }
}

/// Takes the most urgent waiting job, or on a fair turn one of the line
/// whose turn it is (see [`Turns`]), with its priority, blocking until
/// there is one; `None` once the pool is gone.
fn next_job(jobs: &[Receiver<Job>; 4], turns: &mut Turns) -> Option<(Job, Priority)> {
    loop {
        let mut closed = 0;
        for priority in turns.order() {
            match jobs[priority as usize].try_recv() {
                Ok(job) => {
                    turns.begun();
                    return Some((job, priority));
                }
                Err(TryRecvError::Disconnected) => closed += 1,
                Err(TryRecvError::Empty) => {}
            }
        }
        if closed == jobs.len() {
            return None;
        }
        // Wait until some channel has a job (or closes), then take the most
        // urgent one in the next round.
        let mut select = Select::new();
        for rx in jobs {
            select.recv(rx);
        }
        select.ready();
    }
}

/// A thread's loop.
fn run(shared: &Shared, slot: &Slot) {
    let mut planner = Planner::new();
    let mut turns = Turns::default();
    loop {
        let Some((mut job, priority)) = next_job(&shared.jobs, &mut turns) else {
            return;
        };
        {
            // A job taken just as the pool paused waits with it.
            let mut paused = shared.paused.lock();
            while *paused {
                shared.resume.wait(&mut paused);
            }
        }
        shared.waiting[priority as usize].fetch_sub(1, Ordering::AcqRel);
        #[cfg(feature = "debug-gizmos")]
        let mut trace = job
            .trace
            .then(|| (Box::<SearchTrace>::default(), Duration::ZERO));
        let result = if job.cancelled() {
            None
        } else {
            let began = Instant::now();
            slot.started.store(
                (shared.epoch.elapsed().as_nanos() as u64).max(1),
                Ordering::Release,
            );
            #[cfg(feature = "debug-gizmos")]
            let traced = trace.as_mut().map(|t| &mut *t.0);
            #[cfg(not(feature = "debug-gizmos"))]
            let traced = None;
            let step = job.run(&mut planner, &mut Progress::default(), traced, None);
            slot.started.store(0, Ordering::Release);
            shared.finished.fetch_add(1, Ordering::Relaxed);
            let took = began.elapsed();
            #[cfg(feature = "debug-gizmos")]
            if let Some(t) = trace.as_mut() {
                t.1 = took;
            }
            shared
                .busy_nanos
                .fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
            match step {
                // (Without a slice limit a search never pauses.)
                Step::Done(Err(PlanError::Cancelled)) | Step::Paused => None,
                Step::Done(result) => Some(result),
            }
        };
        if result.is_none() {
            shared.cancelled.fetch_add(1, Ordering::Relaxed);
        }
        let outcomes = job.answer(
            result,
            #[cfg(feature = "debug-gizmos")]
            trace,
        );
        for outcome in outcomes {
            if shared.outcomes.send(outcome).is_err() {
                return; // the pool is gone
            }
        }
        if slot.long.swap(false, Ordering::AcqRel) && leave_after_long(shared, slot) {
            return;
        }
    }
}

/// After a long search: whether this thread is one too many now (more
/// threads than workers serve short searches), in which case it leaves.
fn leave_after_long(shared: &Shared, slot: &Slot) -> bool {
    let mut threads = shared.threads.lock();
    let long = threads
        .iter()
        .filter(|s| s.long.load(Ordering::Acquire))
        .count();
    if threads.len() - long > shared.workers {
        threads.retain(|s| !std::ptr::eq(Arc::as_ptr(s), slot));
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use bevy_math::DVec2;

    use super::*;
    use crate::grid::Grid;
    use crate::plugin::dispatch::job::test_job;
    use crate::search::{Algorithm, PlanOptions};

    /// Across the top row of `grid`, west to east.
    fn job(grid: &Arc<Grid>, entity: u32, cancel: bool) -> Job {
        let goal = DVec2::new(f64::from(grid.width()) - 0.5, 0.5);
        let job = test_job(grid, entity, DVec2::new(0.5, 0.5), goal);
        job.cancel.store(cancel, Ordering::Relaxed);
        job
    }

    fn collect(pool: &WorkerPool, n: usize) -> Vec<Outcome> {
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while got.len() < n && Instant::now() < deadline {
            for o in pool.outcomes() {
                pool.answered();
                got.push(o);
            }
            thread::sleep(Duration::from_millis(1));
        }
        got
    }

    #[test]
    fn every_job_is_answered_once_and_cancelled_jobs_do_not_search() {
        let grid = Arc::new(Grid::new(64, 8).unwrap());
        let pool = WorkerPool::new(2);
        for i in 1..=50 {
            pool.send(job(&grid, i, i % 5 == 0), Priority::ALL[i as usize % 4]);
        }
        let got = collect(&pool, 50);
        assert_eq!(got.len(), 50);
        assert_eq!(pool.outstanding(), 0);
        assert!(Priority::ALL.iter().all(|&p| pool.waiting(p) == 0));
        for o in &got {
            assert_eq!(o.result.is_none(), o.ticket % 5 == 0, "ticket {}", o.ticket);
        }
        assert_eq!(pool.cancelled(), 10);
    }

    #[test]
    fn urgent_jobs_jump_the_line() {
        let grid = Arc::new(Grid::new(64, 8).unwrap());
        let pool = WorkerPool::new(1);
        pool.set_paused(true);
        for i in 1..=20 {
            pool.send(job(&grid, i, false), Priority::Refine);
        }
        pool.send(job(&grid, 100, false), Priority::FirstPath);
        pool.send(job(&grid, 200, false), Priority::Urgent);
        pool.set_paused(false);
        let got = collect(&pool, 22);
        let order: Vec<u64> = got.iter().map(|o| o.ticket).collect();
        // The thread holds the one job it took as it paused.
        let first = order.iter().position(|&t| t == 200).unwrap();
        let second = order.iter().position(|&t| t == 100).unwrap();
        assert!(first <= 1 && second <= 2 && first < second, "{order:?}");
    }

    #[test]
    fn a_long_search_gets_a_stand_in_and_short_ones_keep_flowing() {
        // A long Lazy Theta* search on a large open grid with a wall.
        let mut big = Grid::new(2048, 2048).unwrap();
        big.set_rect_free(bevy_math::URect::new(1000, 1, 1001, 2048), false)
            .unwrap();
        let big = Arc::new(big);
        let small = Arc::new(Grid::new(64, 8).unwrap());
        let pool = WorkerPool::new(1);
        let mut long = job(&big, 1, false);
        long.start = DVec2::new(0.5, 2047.5);
        long.goal_grid = DVec2::new(2047.5, 2047.5);
        long.algorithm = Algorithm::LazyTheta;
        long.options = PlanOptions::with_algorithm(Algorithm::LazyTheta);
        let cancel = Arc::clone(&long.cancel);
        pool.send(long, Priority::Refine);
        // Wait until it runs long, then let the pool react.
        thread::sleep(LONG_SEARCH * 3);
        pool.supervise();
        assert_eq!(pool.threads(), 2, "a stand-in thread serves short searches");
        for i in 2..=11 {
            pool.send(job(&small, i, false), Priority::FirstPath);
        }
        let got = collect(&pool, 10);
        assert_eq!(
            got.len(),
            10,
            "short searches finish while the long one runs"
        );
        assert!(got.iter().all(|o| o.ticket != 1));
        cancel.store(true, Ordering::Relaxed);
        let rest = collect(&pool, 1);
        assert_eq!(rest.len(), 1);
        // The thread that ran the long search leaves again.
        let deadline = Instant::now() + Duration::from_secs(5);
        while pool.threads() > 1 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(pool.threads(), 1);
    }
}
