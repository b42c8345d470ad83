//! The search executor: where searches run, seen from the main thread. It
//! takes jobs, hands back outcomes, paces how many are sent ahead and keeps
//! count of the grid versions searches in flight still read.
//!
//! Dispatch and apply reach the search threads only through [`Searches`],
//! so another executor (one that runs searches on the main thread, a slice
//! per frame) can take the worker pool's place behind the same methods.

use std::collections::BTreeMap;
use std::time::Duration;

use bevy_ecs::resource::Resource;

use super::pace::Pace;
use super::workers::{Job, Outcome, WorkerPool};
use crate::plugin::agent::Priority;

/// The searches sent and not yet applied (not public).
#[derive(Resource)]
pub(crate) struct Searches {
    pool: WorkerPool,
    /// Whether the pool was last told to hold its threads.
    paused: bool,
    pace: Pace,
    /// Searches of each paced priority to keep waiting for the threads, as
    /// the pace set it at the last tick.
    target: usize,
    /// Grid versions of the searches sent and not answered, with counts.
    versions_in_flight: BTreeMap<u64, usize>,
}

impl Searches {
    /// An executor with `threads` search threads.
    pub(crate) fn new(threads: usize) -> Self {
        let pool = WorkerPool::new(threads);
        let pace = Pace::default();
        Searches {
            target: pace.target(pool.workers()),
            pool,
            paused: false,
            pace,
            versions_in_flight: BTreeMap::new(),
        }
    }

    /// Holds (or releases) searches not yet started.
    pub(crate) fn set_paused(&mut self, paused: bool) {
        if self.paused != paused {
            self.paused = paused;
            self.pool.set_paused(paused);
        }
    }

    /// Once a frame with work to do: updates the pacing estimates and looks
    /// after long searches.
    pub(crate) fn tick(&mut self) {
        self.pace.tick(&self.pool);
        self.target = self.pace.target(self.pool.workers());
        if self.pool.outstanding() > 0 {
            self.pool.supervise();
        }
    }

    /// Whether one more search of `priority` may be sent now: urgent ones
    /// always, the others while fewer than the pace's target wait; never
    /// more than `cap` in flight.
    pub(crate) fn has_room(&self, priority: Priority, cap: usize) -> bool {
        let paced = priority >= Priority::FirstPath;
        (!paced || self.pool.waiting(priority) < self.target) && self.pool.outstanding() < cap
    }

    /// Sends a search.
    pub(crate) fn send(&mut self, job: Job, priority: Priority) {
        *self.versions_in_flight.entry(job.grid_version).or_default() += 1;
        self.pool.send(job, priority);
    }

    /// Whether an outcome waits to be applied.
    pub(crate) fn has_outcomes(&self) -> bool {
        self.pool.has_outcomes()
    }

    /// The outcomes that arrived, each counted as answered.
    pub(crate) fn take_outcomes(&mut self) -> Vec<Outcome> {
        let outcomes: Vec<Outcome> = self.pool.outcomes().collect();
        for done in &outcomes {
            self.pool.answered();
            if let Some(n) = self.versions_in_flight.get_mut(&done.grid_version) {
                *n -= 1;
                if *n == 0 {
                    self.versions_in_flight.remove(&done.grid_version);
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
        self.pool.outstanding()
    }

    /// Searches stopped by their cancel flag since the start.
    pub(crate) fn cancelled(&self) -> u64 {
        self.pool.cancelled()
    }

    /// Searches run to the end (or until cancelled while running) since the
    /// start, and the time they took.
    pub(crate) fn work_done(&self) -> (u64, Duration) {
        self.pool.work_done()
    }

    /// Threads running searches now.
    pub(crate) fn threads(&self) -> usize {
        self.pool.threads()
    }
}
