//! The search executor: where searches run, seen from the main thread. It
//! takes jobs, hands back outcomes, paces how many are sent ahead and keeps
//! count of the grid versions searches in flight still read.
//!
//! Dispatch and apply reach the searches only through [`Searches`], which
//! runs them on the worker pool's threads or, where there are none, on the
//! main thread in slices (see [`main_thread`](super::main_thread)).

use core::time::Duration;
use std::collections::BTreeMap;

use bevy_ecs::resource::Resource;
use bevy_platform::time::Instant;

use super::job::{Job, Outcome};
use super::lockstep::Ledger;
use super::main_thread::MainThread;
use super::mesh_share::MeshShare;
use super::pace::Pace;
use super::workers::WorkerPool;
use crate::plugin::agent::Priority;

/// How long the main thread waits at a time for a late answer in
/// lockstep mode (it then looks after long searches and waits again).
const WAIT_SLICE: Duration = Duration::from_millis(2);

/// Where searches run.
enum Executor {
    /// On search threads.
    Threads(WorkerPool),
    /// On the main thread, a slice at a time.
    MainThread(MainThread),
}

/// The searches sent and not yet applied (not public).
#[derive(Resource)]
pub(crate) struct Searches {
    executor: Executor,
    /// Whether searches not yet begun were last told to wait.
    paused: bool,
    pace: Pace,
    /// Searches of each paced priority to keep waiting, as the pace set it
    /// at the last tick.
    target: usize,
    /// Grid versions of the searches sent and not answered, with counts.
    versions_in_flight: BTreeMap<u64, usize>,
    /// The newest grid of each profile searches on meshes were sent with,
    /// and the radii in use.
    mesh_share: MeshShare,
    /// Jobs sent so far (each job's number is the count before it).
    sent: u64,
    /// In lockstep mode: the jobs owed and the frames they are due in.
    lockstep: Option<Ledger>,
    /// In lockstep mode: how long the main thread waited for answers due
    /// in the last frame, and in all.
    waited: (Duration, Duration),
    /// Outcomes to apply at the next apply stage whatever the mode: those
    /// held when lockstep mode was turned off, and answers to jobs sent
    /// before it was turned on.
    loose: Vec<Outcome>,
    /// Frames ended so far.
    frames: u64,
}

impl Searches {
    /// An executor with `threads` search threads; with none (or if no
    /// thread can be started), searches run on the main thread.
    pub(crate) fn new(threads: usize) -> Self {
        let executor = match threads {
            0 => Executor::MainThread(MainThread::default()),
            n => {
                let pool = WorkerPool::new(n);
                if pool.threads() == 0 {
                    Executor::MainThread(MainThread::default())
                } else {
                    Executor::Threads(pool)
                }
            }
        };
        let mut searches = Searches {
            executor,
            paused: false,
            pace: Pace::default(),
            target: 0,
            versions_in_flight: BTreeMap::new(),
            mesh_share: MeshShare::default(),
            sent: 0,
            lockstep: None,
            waited: (Duration::ZERO, Duration::ZERO),
            loose: Vec::new(),
            frames: 0,
        };
        searches.target = searches.pace_target(Duration::ZERO);
        searches
    }

    /// What searches on meshes share with the main thread.
    pub(crate) fn mesh_share(&self) -> MeshShare {
        self.mesh_share.clone()
    }

    /// Turns lockstep mode on (with its delay and searches a frame) or off.
    /// Turned off, the outcomes held go to the next apply stage as they
    /// are; turned on, jobs sent before are applied as they arrive.
    pub(crate) fn set_lockstep(&mut self, lockstep: Option<crate::plugin::Lockstep>) {
        match (&mut self.lockstep, lockstep) {
            (Some(ledger), Some(l)) => ledger.configure(l.delay, l.searches_per_frame),
            (None, None) => {}
            (ledger, l) => {
                let was = ledger.take();
                *ledger = l.map(|l| Ledger::new(l.delay, l.searches_per_frame));
                self.mesh_share.set_exact(ledger.is_some());
                if let Some(mut was) = was {
                    self.loose = was.take_all();
                }
            }
        }
    }

    /// Sets how the meshes searches share are built.
    pub(crate) fn set_mesh_building(&mut self, building: crate::plugin::MeshBuilding) {
        self.mesh_share.set_building(building);
    }

    /// Whether lockstep mode is on.
    pub(crate) fn lockstep(&self) -> bool {
        self.lockstep.is_some()
    }

    /// How long the main thread waited in lockstep mode for answers due in
    /// the last frame, and in all.
    pub(crate) fn waited(&self) -> (Duration, Duration) {
        self.waited
    }

    /// Holds (or releases) searches not yet started. (In lockstep mode,
    /// searches sent are never held: each is due in its frame.)
    pub(crate) fn set_paused(&mut self, paused: bool) {
        let paused = paused && self.lockstep.is_none();
        if self.paused != paused {
            self.paused = paused;
            match &mut self.executor {
                Executor::Threads(pool) => pool.set_paused(paused),
                Executor::MainThread(main) => main.set_paused(paused),
            }
        }
    }

    /// Once a frame with work to do: updates the pacing estimates and looks
    /// after long searches. `main_thread_budget` is the time searches may
    /// take on the main thread each frame (without threads).
    pub(crate) fn tick(&mut self, main_thread_budget: Duration) {
        self.pace.tick(self.work_done());
        self.target = self.pace_target(main_thread_budget);
        match &mut self.executor {
            Executor::Threads(pool) if pool.outstanding() > 0 => pool.supervise(),
            Executor::Threads(_) => {}
            Executor::MainThread(main) => main.new_frame(),
        }
    }

    fn pace_target(&self, main_thread_budget: Duration) -> usize {
        self.pace.target(self.threads_serving(), main_thread_budget)
    }

    /// Without threads: runs searches on this thread for about `budget`,
    /// and returns whether they ran out before the budget did (so that more
    /// may be sent). With threads: nothing to do, `false`.
    pub(crate) fn work(&mut self, budget: Duration) -> bool {
        match &mut self.executor {
            Executor::MainThread(main) => main.work(budget),
            Executor::Threads(_) => false,
        }
    }

    /// Whether one more search of `priority` may be sent now, besides
    /// `held` jobs about to be: urgent ones always, the others while fewer
    /// than the pace's target wait (in lockstep mode, up to its count a
    /// frame); never more than `cap` answers owed.
    pub(crate) fn has_room(&self, priority: Priority, cap: usize, held: usize) -> bool {
        let paced = priority >= Priority::FirstPath;
        if let Some(ledger) = &self.lockstep {
            return ledger.has_room(paced, held) && ledger.owed() + held < cap;
        }
        let waiting = match &self.executor {
            Executor::Threads(pool) => pool.waiting(priority),
            Executor::MainThread(main) => main.waiting(priority),
        };
        (!paced || waiting + held < self.target) && self.outstanding() + held < cap
    }

    /// Sends a search.
    pub(crate) fn send(&mut self, mut job: Job, priority: Priority) {
        *self.versions_in_flight.entry(job.grid_version).or_default() += job.members();
        job.seq = self.sent;
        self.sent += 1;
        if let Some(ledger) = &mut self.lockstep {
            ledger.sent(job.seq, job.members(), priority >= Priority::FirstPath);
        }
        match &mut self.executor {
            Executor::Threads(pool) => pool.send(job, priority),
            Executor::MainThread(main) => main.send(job, priority),
        }
    }

    /// Whether an outcome waits to be applied (in lockstep mode: whether
    /// one is due this frame, arrived or not).
    pub(crate) fn has_outcomes(&self) -> bool {
        if let Some(ledger) = &self.lockstep
            && (ledger.any_due() || !self.loose.is_empty())
        {
            return true;
        }
        match &self.executor {
            Executor::Threads(pool) => pool.has_outcomes(),
            Executor::MainThread(main) => main.has_outcomes(),
        }
    }

    /// The outcomes that arrived, each counted as answered; in lockstep
    /// mode, those due this frame, in the order their jobs were sent,
    /// waited for if need be.
    pub(crate) fn take_outcomes(&mut self) -> Vec<Outcome> {
        let mut outcomes = core::mem::take(&mut self.loose);
        outcomes.extend(self.arrived());
        if let Some(ledger) = &mut self.lockstep {
            let mut loose = Vec::new();
            for outcome in outcomes.drain(..) {
                loose.extend(ledger.arrived(outcome));
            }
            let began = Instant::now();
            let mut waited = false;
            while ledger.missing_due() {
                waited = true;
                match &mut self.executor {
                    Executor::Threads(pool) => {
                        pool.supervise();
                        if let Some(outcome) = pool.wait_outcome(WAIT_SLICE) {
                            pool.answered();
                            loose.extend(ledger.arrived(outcome));
                        }
                    }
                    Executor::MainThread(main) => {
                        let idle = main.work(WAIT_SLICE);
                        for outcome in main.take_outcomes() {
                            loose.extend(ledger.arrived(outcome));
                        }
                        if idle && ledger.missing_due() && main.outstanding() == 0 {
                            // (Cannot happen: every job sent is answered.)
                            break;
                        }
                    }
                }
            }
            self.waited.0 = if waited {
                began.elapsed()
            } else {
                Duration::ZERO
            };
            self.waited.1 += self.waited.0;
            outcomes = loose;
            outcomes.extend(ledger.take_due());
        }
        let lockstep = self.lockstep.is_some();
        for done in &outcomes {
            if let Some(n) = self.versions_in_flight.get_mut(&done.sent_version) {
                *n -= 1;
                if *n == 0 {
                    self.versions_in_flight.remove(&done.sent_version);
                }
            }
        }
        if lockstep {
            self.mesh_share.keep_from(self.oldest_version_in_flight());
        }
        outcomes
    }

    /// The outcomes the executor has for the main thread now.
    fn arrived(&mut self) -> Vec<Outcome> {
        match &mut self.executor {
            Executor::Threads(pool) => {
                let outcomes: Vec<Outcome> = pool.outcomes().collect();
                for _ in &outcomes {
                    pool.answered();
                }
                outcomes
            }
            Executor::MainThread(main) => main.take_outcomes(),
        }
    }

    /// The apply stage of this frame is over (in lockstep mode, searches
    /// sent from now on belong to the next frame).
    pub(crate) fn end_frame(&mut self) {
        self.frames += 1;
        if let Some(ledger) = &mut self.lockstep {
            ledger.end_frame();
        }
    }

    /// Frames ended so far.
    pub(crate) fn frames(&self) -> u64 {
        self.frames
    }

    /// The oldest grid version a search in flight reads.
    pub(crate) fn oldest_version_in_flight(&self) -> Option<u64> {
        self.versions_in_flight.keys().next().copied()
    }

    /// Searches sent and not yet applied.
    pub(crate) fn outstanding(&self) -> usize {
        if let Some(ledger) = &self.lockstep {
            return ledger.owed();
        }
        match &self.executor {
            Executor::Threads(pool) => pool.outstanding(),
            Executor::MainThread(main) => main.outstanding(),
        }
    }

    /// Searches stopped by their cancel flag since the start.
    pub(crate) fn cancelled(&self) -> u64 {
        match &self.executor {
            Executor::Threads(pool) => pool.cancelled(),
            Executor::MainThread(main) => main.cancelled(),
        }
    }

    /// Searches run to the end (or until cancelled while running) since the
    /// start, and the time they took.
    pub(crate) fn work_done(&self) -> (u64, Duration) {
        match &self.executor {
            Executor::Threads(pool) => pool.work_done(),
            Executor::MainThread(main) => main.work_done(),
        }
    }

    /// Threads running searches now (0: searches run on the main thread).
    pub(crate) fn threads(&self) -> usize {
        match &self.executor {
            Executor::Threads(pool) => pool.threads(),
            Executor::MainThread(_) => 0,
        }
    }

    /// Threads that serve short searches (0 on the main thread).
    fn threads_serving(&self) -> usize {
        match &self.executor {
            Executor::Threads(pool) => pool.workers(),
            Executor::MainThread(_) => 0,
        }
    }
}
