//! The edit index: which agents an edit of the grid may concern, found by
//! the cells near their paths (for blocked cells), the boxes of their
//! shortcut ellipses (for freed cells), and a watch list (for any freed
//! cell).

use bevy_ecs::entity::{Entity, EntityHashSet};
use bevy_ecs::resource::Resource;
use bevy_math::{DVec2, URect, UVec2, Vec2};

use super::edit_index::EditIndex;
use crate::clearance::MAX_EXIT_DISTANCE;
use crate::plugin::api::{NavPath, PathFailure, PathStatus, PathfindingSettings};
use crate::plugin::world::{Fit, NavGrid};

/// The agents by the cells an edit must touch to concern them (not public).
#[derive(Resource)]
pub(crate) struct AgentIndex {
    /// Agents with a path, by the cells near its segments (for blocked
    /// cells).
    pub(crate) segments: EditIndex,
    /// Agents with a path, by the box of the ellipse a shortcut must reach
    /// into (for freed cells).
    pub(crate) ellipses: EditIndex,
    /// Agents that any freed cell may concern: fallback paths, unreachable
    /// goals, grids without a free cell.
    pub(crate) watch_freed: EntityHashSet,
}

impl Default for AgentIndex {
    fn default() -> Self {
        AgentIndex {
            segments: EditIndex::new(1, 1),
            ellipses: EditIndex::new(1, 1),
            watch_freed: EntityHashSet::default(),
        }
    }
}

impl AgentIndex {
    /// Puts the agent's path and status into the edit index (see
    /// the detect stage): its segments and shortcut ellipse if it has a
    /// path, the freed-cells watch list if its goal is unreachable or the
    /// grid had no free cell. An agent walking back to its path's start
    /// ([`NavPath::next`] 0) from `here` (grid) has that segment indexed
    /// too, so that an edit across it is seen.
    #[expect(clippy::too_many_arguments, reason = "the pieces of one agent")]
    pub(crate) fn index(
        &mut self,
        nav: &NavGrid,
        entity: Entity,
        path: &NavPath,
        status: &PathStatus,
        margin: u32,
        here: Option<DVec2>,
        fit: Fit,
    ) {
        self.fit(nav);
        // An edit changes what the agent plans on up to `reach` cells away.
        let margin = margin + fit.reach();
        let watch = matches!(
            status,
            PathStatus::Fallback
                | PathStatus::Unreachable
                | PathStatus::Failed(PathFailure::NoFreeCell)
        ) || path.fallback;
        if watch {
            self.watch_freed.insert(entity);
        } else {
            self.watch_freed.remove(&entity);
        }
        let gw = &path.grid_waypoints;
        if gw.is_empty() {
            self.segments.remove(entity);
            self.ellipses.remove(entity);
            return;
        }
        let walk_back = here
            .filter(|h| path.next == 0 && h.is_finite() && *h != gw[0])
            .map(|h| [h, gw[0]]);
        self.segments.set(
            entity,
            segment_boxes(gw, margin).chain(
                walk_back
                    .iter()
                    .flat_map(move |pair| segment_boxes(pair, margin)),
            ),
        );
        let length = crate::geom::polyline_length(gw);
        let reach = f64::from(fit.reach());
        self.ellipses.set(
            entity,
            [ellipse_box(gw[0], gw[gw.len() - 1], length + 2.0 * reach)],
        );
    }

    /// Sizes the edit index for `nav`'s grid (emptying it if the size
    /// changed).
    fn fit(&mut self, nav: &NavGrid) {
        let size = (nav.grid().width(), nav.grid().height());
        if self.segments.size() != size {
            self.segments = EditIndex::new(size.0, size.1);
            self.ellipses = EditIndex::new(size.0, size.1);
        }
    }

    /// Puts an agent that waits for its first path into the edit index by
    /// where it stands (`here`, grid), so that blocking its cell raises it
    /// to the front of the line.
    pub(crate) fn index_waiting(&mut self, nav: &NavGrid, entity: Entity, here: DVec2, fit: Fit) {
        self.fit(nav);
        self.ellipses.remove(entity);
        if here.is_finite() {
            let near = DVec2::splat(1.0 + f64::from(fit.reach()));
            self.segments
                .set(entity, [cell_box(here - near, here + near)]);
        } else {
            self.segments.remove(entity);
        }
    }

    /// Has cells freed near an agent that does not fit where it stands
    /// ([`PathFailure::NoRoom`]) plan it again: those within sight of a
    /// place it may walk to ([`MAX_EXIT_DISTANCE`]), plus the reach of its
    /// clearance.
    pub(crate) fn watch_room(&mut self, entity: Entity, here: DVec2, fit: Fit) {
        if here.is_finite() {
            let near = DVec2::splat(f64::from(MAX_EXIT_DISTANCE + fit.reach() + 1));
            self.ellipses
                .set(entity, [cell_box(here - near, here + near)]);
        }
    }

    /// Removes the agent from the edit index.
    pub(crate) fn unindex(&mut self, entity: Entity) {
        self.segments.remove(entity);
        self.ellipses.remove(entity);
        self.watch_freed.remove(&entity);
    }

    /// Puts an agent whose plan failed on the watch list for freed cells if
    /// its failure is one a freed cell may mend.
    pub(crate) fn watch_failure(&mut self, entity: Entity, status: &PathStatus) {
        if matches!(
            status,
            PathStatus::Unreachable | PathStatus::Failed(PathFailure::NoFreeCell)
        ) {
            self.watch_freed.insert(entity);
        }
    }
}

/// Boxes (cells) around a path's segments, `margin` cells wider on each
/// side; long segments are cut into pieces of at most 32 cells each way, so
/// that a box does not cover far more than its segment.
fn segment_boxes(waypoints: &[DVec2], margin: u32) -> impl Iterator<Item = URect> + '_ {
    let m = f64::from(margin);
    let last = waypoints.len() - 1;
    let end = std::iter::once((waypoints[last], waypoints[last]));
    waypoints
        .windows(2)
        .flat_map(|w| {
            let (a, b) = (w[0], w[1]);
            let extent = (b - a).abs().max_element();
            let pieces = ((extent / 32.0).ceil() as usize).max(1);
            (0..pieces).map(move |i| {
                let t0 = i as f64 / pieces as f64;
                let t1 = (i + 1) as f64 / pieces as f64;
                (a.lerp(b, t0), a.lerp(b, t1))
            })
        })
        .chain(end)
        .map(move |(a, b)| cell_box(a.min(b) - m, a.max(b) + m))
}

/// The cells meeting the closed box `[lo, hi]` (grid coordinates), clamped
/// at 0 (the index clips the far side).
fn cell_box(lo: DVec2, hi: DVec2) -> URect {
    let lo = lo.floor().max(DVec2::ZERO);
    let hi = (hi.floor() + DVec2::ONE).max(DVec2::ZERO);
    let cap = f64::from(u32::MAX);
    URect::from_corners(
        UVec2::new(lo.x.min(cap) as u32, lo.y.min(cap) as u32),
        UVec2::new(hi.x.min(cap) as u32, hi.y.min(cap) as u32),
    )
}

/// The cells meeting the bounding box of the ellipse `|p - a| + |p - b| <=
/// length` (a freed cell outside it cannot shorten a path of that length
/// from `a` to `b`), one cell wider for rounding.
fn ellipse_box(a: DVec2, b: DVec2, length: f64) -> URect {
    let c = (a + b) / 2.0;
    let major = (length / 2.0).max(a.distance(b) / 2.0);
    let focal = a.distance(b) / 2.0;
    let minor = (major * major - focal * focal).max(0.0).sqrt();
    let (cos, sin) = if focal > 0.0 {
        let d = (b - a) / (2.0 * focal);
        (d.x, d.y)
    } else {
        (1.0, 0.0)
    };
    let ex = (major * major * cos * cos + minor * minor * sin * sin).sqrt();
    let ey = (major * major * sin * sin + minor * minor * cos * cos).sqrt();
    let half = DVec2::new(ex, ey) + DVec2::ONE;
    cell_box(c - half, c + half)
}

/// How far (cells) an agent may stand off its path's segments and still be
/// found through them: one cell for edits beside the path, plus the
/// off-path distance (at most 8 cells; farther agents replan anyway).
pub(crate) fn index_margin(nav: &NavGrid, settings: &PathfindingSettings) -> u32 {
    let off = f64::from(settings.replan_threshold()) / f64::from(nav.transform().cell_size());
    1 + if off.is_finite() {
        off.ceil().min(8.0) as u32
    } else {
        8
    }
}

/// Every agent's state, for rebuilding the edit index after the grid was
/// replaced.
/// Agents without a path are indexed by where they stand (`here`, world).
pub(crate) fn reindex_all<'a>(
    index: &mut AgentIndex,
    nav: &NavGrid,
    margin: u32,
    agents: impl Iterator<Item = (Entity, &'a NavPath, &'a PathStatus, Option<Vec2>, Fit)>,
) {
    let (w, h) = (nav.grid().width(), nav.grid().height());
    index.segments = EditIndex::new(w, h);
    index.ellipses = EditIndex::new(w, h);
    index.watch_freed.clear();
    for (entity, path, status, here, fit) in agents {
        let here_grid = here.map(|p| nav.to_grid(p));
        index.index(nav, entity, path, status, margin, here_grid, fit);
        if let Some(here) = here
            && path.is_empty()
        {
            index.index_waiting(nav, entity, nav.to_grid(here), fit);
        }
    }
}
