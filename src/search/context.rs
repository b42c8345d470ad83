//! What a search engine gets besides its scratch memory, and how it ends.

use core::sync::atomic::AtomicBool;

use super::{PlanOptions, SearchStats, SearchTrace};
use crate::endpoint::Endpoint;
use crate::grid::Grid;
use crate::los::line_of_sight;

/// How a search core ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The waypoints are in the output vector, start first.
    Found,
    /// The open list ran dry.
    Exhausted,
    /// The node budget ran out.
    Budget,
    /// The cancel flag was raised.
    Cancelled,
    /// The slice of expansions asked for is done; the search can go on
    /// from its scratch memory.
    Paused,
    /// The search needs chunks of its mesh (one built on demand) not built
    /// yet, listed in its scratch memory: it goes on once they are.
    Unbuilt,
}

/// What a search core gets besides its scratch memory.
pub(crate) struct SearchContext<'a> {
    pub grid: &'a Grid,
    pub start: &'a Endpoint,
    pub goal: &'a Endpoint,
    pub options: &'a PlanOptions,
    pub cancel: Option<&'a AtomicBool>,
    pub stats: SearchStats,
    /// Where to record what the search expands, if anywhere.
    pub trace: Option<&'a mut SearchTrace>,
    /// Stop (out of budget, or paused) once this many nodes are expanded.
    pub stop_at: u64,
    /// Look at the cancel flag again once this many nodes are expanded.
    pub cancel_check: u64,
}

impl<'a> SearchContext<'a> {
    /// The context of a search from `start` to `goal` on `grid` that has
    /// done `stats` so far and may go on for at most `slice` more
    /// expansions (`None`: to the end), within `options`' node budget.
    pub(crate) fn new(
        grid: &'a Grid,
        (start, goal): (&'a Endpoint, &'a Endpoint),
        options: &'a PlanOptions,
        cancel: Option<&'a AtomicBool>,
        stats: SearchStats,
        trace: Option<&'a mut SearchTrace>,
        slice: Option<u64>,
    ) -> Self {
        let budget = options.node_budget.unwrap_or(u64::MAX);
        let stop_at = slice.map_or(budget, |n| {
            budget.min(stats.expanded.saturating_add(n.max(1)))
        });
        SearchContext {
            grid,
            start,
            goal,
            options,
            cancel,
            stats,
            trace,
            stop_at,
            cancel_check: 0,
        }
    }

    /// Checked between expansions: whether to stop, and why. The node
    /// budget and the end of a slice are checked each time, the cancel flag
    /// at the first check and then once every 1024 expansions (however many
    /// nodes an engine expands at a time).
    #[inline]
    pub(crate) fn should_stop(&mut self) -> Option<Outcome> {
        if self.stats.expanded >= self.stop_at {
            let spent = self
                .options
                .node_budget
                .is_some_and(|budget| self.stats.expanded >= budget);
            return Some(if spent {
                Outcome::Budget
            } else {
                Outcome::Paused
            });
        }
        if self.stats.expanded >= self.cancel_check
            && let Some(flag) = self.cancel
        {
            self.cancel_check = self.stats.expanded + 1024;
            if flag.load(core::sync::atomic::Ordering::Relaxed) {
                return Some(Outcome::Cancelled);
            }
        }
        None
    }
}

/// Whether the segment between two endpoints is usable as one path leg:
/// visible, and allowed by both points' double-corner restrictions. Counts a
/// line-of-sight check.
pub(crate) fn visible(ctx: &mut SearchContext<'_>, a: &Endpoint, b: &Endpoint) -> bool {
    ctx.stats.los_checks += 1;
    a.allows_towards(b.p) && b.allows_towards(a.p) && line_of_sight(ctx.grid, a.p, b.p)
}
