//! Search traces: what a search expanded, recorded on request (for drawing).
//!
//! [`Planner::plan_traced`](super::Planner::plan_traced) fills a
//! [`SearchTrace`]: the points Lazy Theta* and A* expanded, each with the
//! parent it was expanded with, or the intervals Anya expanded, each with its
//! root. Searches that are not traced record nothing and pay one predictable
//! branch per expansion.

use bevy_math::DVec2;

use super::Algorithm;

/// A node Lazy Theta* or A* expanded, in grid coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "reflect", derive(bevy_reflect::Reflect))]
pub struct ExpandedPoint {
    /// The node's point (a vertex, or a start that is not one).
    pub point: DVec2,
    /// The parent it was expanded with (after Lazy Theta*'s line-of-sight
    /// check); the start is its own parent.
    pub parent: DVec2,
}

/// An interval Anya expanded: the points `left..=right` of grid line `row`,
/// all seen from `root`, in grid coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "reflect", derive(bevy_reflect::Reflect))]
pub struct TraceInterval {
    /// The grid line (`y`) the interval lies on.
    pub row: u32,
    /// `x` of the interval's left end.
    pub left: f64,
    /// `x` of the interval's right end (`>= left`).
    pub right: f64,
    /// The root: the last turning point (start or obstacle corner) of every
    /// path through the interval.
    pub root: DVec2,
}

/// What one search expanded, in order.
///
/// Filled by [`Planner::plan_traced`](super::Planner::plan_traced), which
/// clears it first. Lazy Theta* and A* (also smoothed) fill
/// [`SearchTrace::points`], Anya fills [`SearchTrace::intervals`]; a query
/// answered without searching (start and goal see each other, or coincide)
/// leaves both empty. At most [`SearchTrace::limit`] entries are kept; the
/// search itself is not shortened when the trace is full.
///
/// ```
/// use bevy_anyangle::prelude::*;
/// use bevy_anyangle::search::SearchTrace;
///
/// let grid = Grid::from_ascii("......\n.####.\n......").unwrap();
/// let mut trace = SearchTrace::default();
/// let path = Planner::new()
///     .plan_traced(
///         &grid,
///         DVec2::new(0.5, 0.5),
///         DVec2::new(5.5, 2.5),
///         &PlanOptions::with_algorithm(Algorithm::AStar),
///         &mut trace,
///     )
///     .unwrap();
/// assert_eq!(trace.algorithm, Some(Algorithm::AStar));
/// assert_eq!(trace.points.len() as u64, path.stats.expanded);
/// assert!(trace.intervals.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "reflect", derive(bevy_reflect::Reflect))]
pub struct SearchTrace {
    /// The planner that ran (`None` before the first traced search).
    pub algorithm: Option<Algorithm>,
    /// Nodes Lazy Theta* or A* expanded, in the order they were expanded.
    pub points: Vec<ExpandedPoint>,
    /// Intervals Anya expanded, in the order they were expanded (including
    /// those it expanded at once without queueing them).
    pub intervals: Vec<TraceInterval>,
    /// Whether entries were left out because the trace was full.
    pub truncated: bool,
    limit: usize,
}

impl Default for SearchTrace {
    /// An empty trace keeping at most [`SearchTrace::DEFAULT_LIMIT`] entries.
    fn default() -> Self {
        SearchTrace::with_limit(SearchTrace::DEFAULT_LIMIT)
    }
}

impl SearchTrace {
    /// The default [`SearchTrace::limit`]: enough for any search on the
    /// bundled 512 x 512 maps, a few MB at most.
    pub const DEFAULT_LIMIT: usize = 1 << 17;

    /// An empty trace keeping at most `limit` entries (points plus
    /// intervals).
    #[must_use]
    pub fn with_limit(limit: usize) -> Self {
        SearchTrace {
            algorithm: None,
            points: Vec::new(),
            intervals: Vec::new(),
            truncated: false,
            limit,
        }
    }

    /// The most entries (points plus intervals) this trace keeps.
    #[must_use]
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The number of entries recorded.
    #[must_use]
    pub fn len(&self) -> usize {
        self.points.len() + self.intervals.len()
    }

    /// Whether nothing was recorded.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties the trace (keeping its memory and limit) for a search with
    /// `algorithm`.
    pub(crate) fn reset(&mut self, algorithm: Algorithm) {
        self.algorithm = Some(algorithm);
        self.points.clear();
        self.intervals.clear();
        self.truncated = false;
    }

    /// Whether one more entry fits; notes the loss if not.
    #[inline]
    fn room(&mut self) -> bool {
        let fits = self.len() < self.limit;
        self.truncated |= !fits;
        fits
    }

    /// Records an expanded vertex-graph node.
    #[inline]
    pub(crate) fn point(&mut self, point: DVec2, parent: DVec2) {
        if self.room() {
            self.points.push(ExpandedPoint { point, parent });
        }
    }

    /// Records an expanded Anya interval.
    #[inline]
    pub(crate) fn interval(&mut self, row: u32, left: f64, right: f64, root: DVec2) {
        if self.room() {
            self.intervals.push(TraceInterval {
                row,
                left,
                right,
                root,
            });
        }
    }
}
