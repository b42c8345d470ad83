//! [`PathfindingDiagnostics`]: the plugin's counters, for games and tools.

use std::time::Duration;

#[cfg(feature = "reflect")]
use bevy_ecs::reflect::ReflectResource;
use bevy_ecs::resource::Resource;
#[cfg(feature = "reflect")]
use bevy_reflect::std_traits::ReflectDefault;

#[cfg(doc)]
use crate::plugin::world::NavGrid;

/// Counters describing the plugin's background work, updated once a frame,
/// after the plugin's last set. Read-only for games (the plugin overwrites it).
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Resource, Debug, PartialEq, Default, Clone)
)]
pub struct PathfindingDiagnostics {
    /// Plans started since the app began, one per agent asking (the
    /// agents a shared search answers count one each).
    pub searches_started: u64,
    /// Searches since the app began that each answered a group of agents
    /// heading for one goal (see
    /// [`PathfindingSettings::shared_searches`](crate::plugin::PathfindingSettings::shared_searches));
    /// their agents are counted in `searches_started` too.
    pub shared_searches: u64,
    /// Results applied to agents (paths, fallbacks and failures).
    pub results_applied: u64,
    /// Results thrown away because their agent was gone, had asked for a
    /// newer plan, the grid changed under the path, or the agent could no
    /// longer see the path's start (it is then planned again from where it
    /// is).
    pub results_discarded: u64,
    /// Searches stopped by their cancel flag (before or while running).
    pub searches_cancelled: u64,
    /// Agents whose search was sent to the search threads and not yet
    /// applied.
    pub in_flight: usize,
    /// Agents waiting to be sent to the search threads (or for a
    /// [`NavGrid`]); entries of agents whose request was removed meanwhile
    /// are counted until the queue reaches them.
    pub queued: usize,
    /// The most frames an agent waiting to be sent has waited so far,
    /// counted from when it began waiting for a plan (0 when none waits).
    /// An agent that has waited 30 frames is sent ahead of the more urgent
    /// lines, so this stays near 30 unless the threads cannot keep up with
    /// the searches asked for, or those in flight are all they may take (see
    /// [`PathfindingSettings::max_searches_in_flight`](crate::plugin::PathfindingSettings::max_searches_in_flight)).
    pub longest_wait: u32,
    /// In lockstep mode ([`PathfindingSettings::lockstep`](crate::plugin::PathfindingSettings::lockstep)):
    /// how long the main thread waited in the last frame for answers due
    /// in it that were late (zero when none was).
    pub lockstep_wait: Duration,
    /// In lockstep mode: how long the main thread has waited for late
    /// answers in all.
    pub lockstep_wait_total: Duration,
    /// Search threads: one per worker, plus stand-ins while long searches
    /// run; 0 when searches run on the main thread.
    pub search_threads: usize,
    /// Agents the edit check looked at since the app began (the edit index
    /// hands it only the agents near an edit).
    pub edit_checks: u64,
    /// Searches run since the app began (to the end, or until cancelled
    /// while running; not those cancelled before they started).
    pub searches_finished: u64,
    /// The time those searches took, in all. The mean search time is
    /// `search_time / searches_finished`.
    pub search_time: Duration,
    /// The time local avoidance took (agents with
    /// [`LocalAvoidance`](crate::plugin::LocalAvoidance)) in the frame
    /// before the last: part of that frame's `frame_cost`.
    pub avoidance_cost: Duration,
    /// The time the plugin's systems took in the schedule's last run: its
    /// cost to the frame, apart from the searches on their own threads
    /// (without search threads, the searches run on the main thread are
    /// part of it).
    pub frame_cost: Duration,
    /// Bytes the navigation meshes the searches share hold (Polyanya's and
    /// those for agents of a radius, each in its newest version; see
    /// [`NavMesh::memory_bytes`](crate::mesh::NavMesh::memory_bytes)),
    /// measured about once a second (every 64 frames). Meshes built on
    /// demand ([`MeshBuilding`](crate::plugin::MeshBuilding)) grow with the
    /// area the searches reach.
    pub mesh_bytes: usize,
}

impl PathfindingDiagnostics {
    /// The mean time of a finished search so far, or zero before the first.
    #[must_use]
    pub fn mean_search_time(&self) -> Duration {
        if self.searches_finished == 0 {
            Duration::ZERO
        } else {
            let mean = self.search_time.as_nanos() / u128::from(self.searches_finished);
            Duration::from_nanos(u64::try_from(mean).unwrap_or(u64::MAX))
        }
    }
}
