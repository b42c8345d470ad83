//! The edit check: agents whose plan the grid's latest edits affect are
//! planned again (see [`geometry::impact`](crate::plugin::geometry::impact)
//! for which edits affect a plan).

use bevy_ecs::prelude::*;
use bevy_math::{DVec2, Vec2};

use crate::grid::{EditKind, GridEdit};
use crate::plugin::agent::{PlanBook, PlanState, Plans, Priority, index_margin, reindex_all};
use crate::plugin::api::{
    NavPath, PathFailure, PathRequest, PathStatus, PathfindingSettings, PlanReason,
};
use crate::plugin::geometry::{
    EditCheck, cut_at_blocked_segment, edit_impact, fits, point_in_rect, rect_distance,
    region_point, remaining, stop_here, walk_out,
};
use crate::plugin::stats::{Counters, Meter};
use crate::plugin::world::OnArea;
use crate::plugin::world::{Fit, NavGrid, PositionData, ProfileId, position};

/// What the edit check has seen of the grid, and its scratch memory.
#[derive(Resource, Default)]
pub(crate) struct EditWatch {
    /// The grid layout and version the edit check has seen.
    seen_layout: u64,
    seen_version: u64,
    /// (agent, index of the edit), `u32::MAX` for "any freed cell".
    hits: Vec<(Entity, u32)>,
    /// The edits near one agent.
    scratch_edits: Vec<GridEdit>,
}

impl EditWatch {
    /// The grid version the edit check has seen: the edit log must keep the
    /// edits after it.
    pub(crate) fn seen_version(&self) -> u64 {
        self.seen_version
    }
}

/// What the edit check reads and writes of an agent.
type EditedData = (
    Entity,
    &'static mut PlanState,
    &'static mut PathStatus,
    &'static mut NavPath,
    PositionData,
);

/// Replans the agents whose remaining path the latest grid edits affect
/// (see the [module docs](self)); every agent if the grid was replaced.
///
/// Only the agents the edit index reports near an edit are looked at (and
/// those watching for freed cells when cells were freed), so the cost
/// follows the agents an edit can affect, not the number of agents.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(crate) fn replan_on_grid_edits(
    meter: Res<Meter>,
    nav: Res<NavGrid>,
    settings: Option<Res<PathfindingSettings>>,
    mut watch: ResMut<EditWatch>,
    mut plans: Plans,
    mut agents: Query<EditedData, (With<PathRequest>, Without<OnArea>)>,
    mut counters: ResMut<Counters>,
) {
    let _cost = meter.start();
    let (book, index) = (&mut *plans.book, &mut *plans.index);
    if nav.layout_id() == watch.seen_layout && nav.version() == watch.seen_version {
        return;
    }
    let settings = settings.as_deref().copied().unwrap_or_default();
    let since = watch.seen_version;
    let edits = if nav.layout_id() == watch.seen_layout {
        nav.edits_since(since)
    } else {
        None
    };
    watch.seen_layout = nav.layout_id();
    watch.seen_version = nav.version();
    let (watch, index) = (&mut *watch, &mut *index);
    let plane = nav.transform().plane();
    let Some(edits) = edits else {
        // A new grid (or a gap in the edit log): every path is suspect.
        // Planned on the grid before, followed on this one it could cross
        // walls (or leave the grid): each agent stops where it stands (or
        // walks out of a wall it now stands in) until its new path comes.
        for (_, state, _, mut path, pos) in &mut agents {
            if path.is_empty() {
                continue;
            }
            if let Some(here) = position(pos, plane).map(|p| nav.to_grid(p)) {
                let walled = nav
                    .view(state.key())
                    .is_none_or(|view| !view.grid.is_point_traversable(here));
                if walled {
                    walk_out(&nav, state.key(), &mut path, here);
                } else {
                    stop_here(&nav, &mut path, here);
                }
            }
        }
        let margin = index_margin(&nav, &settings);
        reindex_all(
            index,
            &nav,
            margin,
            agents.iter().map(|(e, state, status, path, pos)| {
                (e, path, status, position(pos, plane), state.key().1)
            }),
        );
        for (entity, mut state, mut status, _, _) in &mut agents {
            let wants = status.has_path()
                || matches!(
                    *status,
                    PathStatus::Unreachable
                        | PathStatus::Failed(
                            PathFailure::NoFreeCell
                                | PathFailure::NoRoom
                                | PathFailure::BudgetExhausted { .. }
                        )
                );
            if wants && !state.queued() {
                book.request(entity, &mut state, &mut status, PlanReason::GridReplaced);
            }
        }
        return;
    };
    // Who may be concerned: (agent, index of the edit), `u32::MAX` for "any
    // freed cell".
    let hits = &mut watch.hits;
    hits.clear();
    for (i, e) in edits.iter().enumerate() {
        if e.kind != EditKind::Freed {
            index.segments.query(e.rect, |a| hits.push((a, i as u32)));
        }
        if e.kind != EditKind::Blocked {
            index.ellipses.query(e.rect, |a| hits.push((a, i as u32)));
        }
    }
    let freed_any = edits.iter().any(|e| e.kind != EditKind::Blocked);
    if freed_any {
        hits.extend(index.watch_freed.iter().map(|&a| (a, u32::MAX)));
    }
    hits.sort_unstable_by_key(|&(e, i)| (e.to_bits(), i));
    hits.dedup();
    let hits = std::mem::take(&mut watch.hits);
    let mut mine = std::mem::take(&mut watch.scratch_edits);
    let mut at = 0;
    while at < hits.len() {
        let entity = hits[at].0;
        let mut end = at;
        while end < hits.len() && hits[end].0 == entity {
            end += 1;
        }
        let group = &hits[at..end];
        at = end;
        let Ok((entity, mut state, mut status, mut path, pos)) = agents.get_mut(entity) else {
            continue;
        };
        // The edits near this agent (all of them for a watcher); for an
        // agent with a clearance, what they changed on its eroded grid.
        mine.clear();
        let key = state.key();
        if *status == PathStatus::Failed(PathFailure::NoRoom) {
            // An edit near an agent with no room where it stands (it is
            // indexed by the cells that matter) may make room: try again.
            if !state.queued() {
                book.request(
                    entity,
                    &mut state,
                    &mut status,
                    PlanReason::RegionsConnected,
                );
            }
            continue;
        }
        let mut freed = freed_any;
        if key == (ProfileId::DEFAULT, Fit::POINT) {
            if group.last().is_some_and(|&(_, i)| i == u32::MAX) {
                mine.extend_from_slice(edits);
            } else {
                mine.extend(group.iter().map(|&(_, i)| edits[i as usize]));
            }
        } else {
            match nav.view(key).and_then(|v| v.edits_since(since)) {
                Some(changed) => {
                    mine.extend_from_slice(changed);
                    freed = changed.iter().any(|e| e.kind != EditKind::Blocked);
                }
                None => {
                    // Its eroded grid is newer than the edits: plan again.
                    if !state.queued() {
                        book.request(entity, &mut state, &mut status, PlanReason::GridReplaced);
                    }
                    continue;
                }
            }
            if mine.is_empty() {
                continue; // nothing changed on its eroded grid
            }
        }
        counters.0.edit_checks += 1;
        check_agent(
            &nav,
            book,
            &mine,
            freed,
            entity,
            &mut state,
            &mut status,
            &mut path,
            position(pos, plane).map(|p| nav.to_grid(p)),
        );
    }
    watch.hits = hits;
    watch.scratch_edits = mine;
}

/// The edit check of one agent (see [`replan_on_grid_edits`]); `edits` are
/// the edits near it.
#[expect(clippy::too_many_arguments, reason = "the pieces of one agent")]
fn check_agent(
    nav: &NavGrid,
    book: &mut PlanBook,
    edits: &[GridEdit],
    freed_any: bool,
    entity: Entity,
    state: &mut PlanState,
    status: &mut Mut<PathStatus>,
    path: &mut Mut<NavPath>,
    agent: Option<DVec2>,
) {
    if matches!(
        **status,
        PathStatus::Failed(PathFailure::NoFreeCell | PathFailure::NoRoom)
    ) {
        if freed_any && !state.queued() {
            book.request(entity, state, status, PlanReason::RegionsConnected);
        }
        return;
    }
    // The grid the agent plans on: eroded for its clearance.
    let Some(view) = nav.view(state.key()) else {
        return;
    };
    let grid = view.grid;
    // An agent whose cell was blocked under it walks out first (and one
    // already in a wall that is planned again keeps that urgency); for a
    // disc on a mesh, one a blocked cell came closer to than its radius.
    let in_wall = agent.is_some_and(|p| !fits(grid, view.disc, p));
    let walled = in_wall
        && agent.is_some_and(|p| {
            edits.iter().any(|e| {
                e.kind != EditKind::Freed
                    && (point_in_rect(p, e.rect) || rect_distance(e.rect, p) < view.disc)
            })
        });
    if state.plan_pending() {
        // Its result is checked when it arrives; meanwhile the old path a
        // follower may still walk must not lead into a new wall, and a
        // blocked path goes to the front of the line.
        let cut = match agent {
            Some(agent) if !path.is_empty() => {
                cut_at_blocked_segment(nav, grid, edits, view.disc, path, agent)
            }
            _ => false,
        };
        if walled && let Some(agent) = agent {
            walk_out(nav, state.key(), path, agent);
        }
        if in_wall && state.reason() != PlanReason::StartBlocked {
            book.request(entity, state, status, PlanReason::StartBlocked);
        } else if cut && state.priority() > Some(Priority::Urgent) {
            book.request(entity, state, status, PlanReason::PathBlocked);
        }
        return;
    }
    let Some(agent) = agent else {
        return;
    };
    // Whatever its status (a failed search included), an agent walled in
    // is planned again, to get the way out at least.
    if walled {
        walk_out(nav, state.key(), path, agent);
        book.request(entity, state, status, PlanReason::StartBlocked);
        return;
    }
    let unreachable = **status == PathStatus::Unreachable;
    if !(status.has_path() || unreachable) {
        return;
    }
    let goal = nav.to_grid(if unreachable {
        state.goal().unwrap_or(Vec2::NAN)
    } else {
        path.goal
    });
    let (from, behind, ahead) = remaining(path, agent, grid, view.disc);
    let check = EditCheck {
        from,
        behind,
        agent,
        region: region_point(grid, agent, state.reachable()),
        ahead,
        goal,
        fallback: unreachable || path.fallback,
        radius: view.disc,
        reach: view.disc_reach(),
    };
    if let Some(reason) = edit_impact(grid, edits, &check) {
        if reason == PlanReason::PathBlocked {
            cut_at_blocked_segment(nav, grid, edits, view.disc, path, agent);
        }
        book.request(entity, state, status, reason);
    }
}
