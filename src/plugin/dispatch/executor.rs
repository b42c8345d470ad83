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

use super::job::{Job, Outcome};
use super::main_thread::MainThread;
use super::mesh_share::MeshShare;
use super::pace::Pace;
use super::workers::WorkerPool;
use crate::plugin::agent::Priority;

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
        };
        searches.target = searches.pace_target(Duration::ZERO);
        searches
    }

    /// What searches on meshes share with the main thread.
    pub(crate) fn mesh_share(&self) -> MeshShare {
        self.mesh_share.clone()
    }

    /// Holds (or releases) searches not yet started.
    pub(crate) fn set_paused(&mut self, paused: bool) {
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
    /// than the pace's target wait; never more than `cap` answers owed.
    pub(crate) fn has_room(&self, priority: Priority, cap: usize, held: usize) -> bool {
        let paced = priority >= Priority::FirstPath;
        let waiting = match &self.executor {
            Executor::Threads(pool) => pool.waiting(priority),
            Executor::MainThread(main) => main.waiting(priority),
        };
        (!paced || waiting + held < self.target) && self.outstanding() + held < cap
    }

    /// Sends a search.
    pub(crate) fn send(&mut self, job: Job, priority: Priority) {
        *self.versions_in_flight.entry(job.grid_version).or_default() += job.members();
        match &mut self.executor {
            Executor::Threads(pool) => pool.send(job, priority),
            Executor::MainThread(main) => main.send(job, priority),
        }
    }

    /// Whether an outcome waits to be applied.
    pub(crate) fn has_outcomes(&self) -> bool {
        match &self.executor {
            Executor::Threads(pool) => pool.has_outcomes(),
            Executor::MainThread(main) => main.has_outcomes(),
        }
    }

    /// The outcomes that arrived, each counted as answered.
    pub(crate) fn take_outcomes(&mut self) -> Vec<Outcome> {
        let outcomes: Vec<Outcome> = match &mut self.executor {
            Executor::Threads(pool) => {
                let outcomes: Vec<Outcome> = pool.outcomes().collect();
                for _ in &outcomes {
                    pool.answered();
                }
                outcomes
            }
            Executor::MainThread(main) => main.take_outcomes(),
        };
        for done in &outcomes {
            if let Some(n) = self.versions_in_flight.get_mut(&done.sent_version) {
                *n -= 1;
                if *n == 0 {
                    self.versions_in_flight.remove(&done.sent_version);
                }
            }
        }
        outcomes
    }

    /// The oldest grid version a search in flight reads.
    pub(crate) fn oldest_version_in_flight(&self) -> Option<u64> {
        self.versions_in_flight.keys().next().copied()
    }

    /// Searches sent and not yet applied.
    pub(crate) fn outstanding(&self) -> usize {
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
