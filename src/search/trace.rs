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

#[cfg(test)]
mod tests {
    use bevy_math::DVec2;

    use super::SearchTrace;
    use crate::grid::Grid;
    use crate::los::line_of_sight;
    use crate::search::{Algorithm, PlanOptions, Planner};

    fn den520d() -> Grid {
        Grid::from_movingai(include_str!("../../data/maps/den520d.map")).unwrap()
    }

    /// Queries across den520d that need a search (start and goal do not see
    /// each other).
    /// (Scenario queries of the map's benchmark; the first two at cell
    /// centres, the third at vertices.)
    const QUERIES: [((f64, f64), (f64, f64)); 3] = [
        ((244.5, 2.5), (18.5, 204.5)),
        ((101.5, 147.5), (162.5, 23.5)),
        ((100.0, 215.0), (71.0, 81.0)),
    ];

    #[test]
    fn a_traced_search_returns_the_same_path_and_records_every_expansion() {
        let grid = den520d();
        let mut planner = Planner::new();
        let mut trace = SearchTrace::default();
        for algorithm in Algorithm::ALL {
            let options = PlanOptions::with_algorithm(algorithm);
            for ((sx, sy), (gx, gy)) in QUERIES {
                let (s, g) = (DVec2::new(sx, sy), DVec2::new(gx, gy));
                assert!(!line_of_sight(&grid, s, g), "{s} -> {g} needs a search");
                let plain = planner.plan(&grid, s, g, &options).unwrap();
                let traced = planner
                    .plan_traced(&grid, s, g, &options, &mut trace)
                    .unwrap();
                assert_eq!(plain, traced, "{algorithm}: {s} -> {g}");
                assert_eq!(trace.algorithm, Some(algorithm));
                assert!(!trace.truncated);
                let expanded = traced.stats.expanded as usize;
                assert!(expanded > 0);
                if algorithm == Algorithm::Anya {
                    assert_eq!(trace.intervals.len(), expanded, "{s} -> {g}");
                    assert!(trace.points.is_empty());
                } else {
                    assert_eq!(trace.points.len(), expanded, "{algorithm}: {s} -> {g}");
                    assert!(trace.intervals.is_empty());
                    // The search starts by expanding the start.
                    assert_eq!(trace.points[0].point, s);
                    assert_eq!(trace.points[0].parent, s);
                }
            }
        }
    }

    #[test]
    fn expanded_points_are_reached_from_their_parents() {
        let grid = den520d();
        let mut planner = Planner::new();
        let mut trace = SearchTrace::default();
        let ((sx, sy), (gx, gy)) = QUERIES[0];
        let (s, g) = (DVec2::new(sx, sy), DVec2::new(gx, gy));
        for algorithm in [Algorithm::AStar, Algorithm::LazyTheta] {
            let options = PlanOptions::with_algorithm(algorithm);
            planner
                .plan_traced(&grid, s, g, &options, &mut trace)
                .unwrap();
            for e in &trace.points {
                assert!(grid.contains_point(e.point), "{e:?}");
                // A* moves one vertex at a time; Lazy Theta* expands a node
                // only with a parent that sees it.
                if algorithm == Algorithm::AStar && e.point != s {
                    let step = (e.point - e.parent).abs();
                    assert!(step.max_element() <= 1.0, "{algorithm}: {e:?}");
                }
                assert!(
                    line_of_sight(&grid, e.parent, e.point),
                    "{algorithm}: {e:?}"
                );
            }
        }
    }

    #[test]
    fn anya_intervals_lie_on_grid_lines_and_are_seen_from_their_roots() {
        let grid = den520d();
        let mut planner = Planner::new();
        let mut trace = SearchTrace::default();
        let options = PlanOptions::with_algorithm(Algorithm::Anya);
        let mut flat = 0;
        for ((sx, sy), (gx, gy)) in QUERIES {
            let (s, g) = (DVec2::new(sx, sy), DVec2::new(gx, gy));
            planner
                .plan_traced(&grid, s, g, &options, &mut trace)
                .unwrap();
            for i in &trace.intervals {
                assert!(i.row <= grid.height(), "{i:?}");
                assert!(
                    0.0 <= i.left && i.left <= i.right && i.right <= f64::from(grid.width()),
                    "{i:?}"
                );
                let y = f64::from(i.row);
                flat += usize::from(i.root.y == y);
                // Every point of the interval is visible from the root (with
                // a margin for the rounded ends of irrational endpoints).
                let eps = 1e-9;
                for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
                    let x = (i.left + eps) + (i.right - i.left - 2.0 * eps).max(0.0) * t;
                    let x = x.clamp(i.left, i.right);
                    assert!(
                        line_of_sight(&grid, i.root, DVec2::new(x, y)),
                        "{i:?} at x = {x}"
                    );
                }
            }
        }
        assert!(
            flat > 0,
            "flat intervals (along the root's row) are recorded too"
        );
    }

    #[test]
    fn a_full_trace_stops_recording_but_not_searching() {
        let grid = den520d();
        let mut planner = Planner::new();
        let ((sx, sy), (gx, gy)) = QUERIES[1];
        let (s, g) = (DVec2::new(sx, sy), DVec2::new(gx, gy));
        for algorithm in [Algorithm::Anya, Algorithm::LazyTheta] {
            let options = PlanOptions::with_algorithm(algorithm);
            let plain = planner.plan(&grid, s, g, &options).unwrap();
            let mut trace = SearchTrace::with_limit(10);
            let traced = planner
                .plan_traced(&grid, s, g, &options, &mut trace)
                .unwrap();
            assert_eq!(plain, traced);
            assert_eq!(trace.len(), 10);
            assert_eq!(trace.limit(), 10);
            assert!(trace.truncated);
        }
    }

    #[test]
    fn a_trace_holds_only_the_last_search() {
        let grid = den520d();
        let mut planner = Planner::new();
        let mut trace = SearchTrace::default();
        let ((sx, sy), (gx, gy)) = QUERIES[0];
        let (s, g) = (DVec2::new(sx, sy), DVec2::new(gx, gy));
        planner
            .plan_traced(
                &grid,
                s,
                g,
                &PlanOptions::with_algorithm(Algorithm::AStar),
                &mut trace,
            )
            .unwrap();
        assert!(!trace.points.is_empty());
        // Start and goal see each other: no search, an empty trace.
        let path = planner
            .plan_traced(
                &grid,
                s,
                s + DVec2::new(1.0, 0.0),
                &PlanOptions::with_algorithm(Algorithm::Anya),
                &mut trace,
            )
            .unwrap();
        assert_eq!(path.waypoints.len(), 2);
        assert_eq!(trace.algorithm, Some(Algorithm::Anya));
        assert!(trace.is_empty());
        assert!(!trace.truncated);
    }
}
