//! Apply: finished searches become paths. Each answer is judged first (is it
//! still wanted, was it planned on a grid edited since, did the agent move
//! out of sight of it) and then applied: a path joined to where the agent
//! is, a failure, or a new request when the answer is of no use.
//!
//! The grid may have changed while a search ran. A path that freed cells
//! might shorten is still valid: it is applied, and a better one planned
//! after it. A path an edit blocked is applied up to the blocked segment,
//! like a live path, and planned again at once: the agent makes progress (an
//! agent in a wall walks out) meanwhile.

use bevy_ecs::prelude::*;
use bevy_math::{DVec2, Vec2};

use crate::clearance::MAX_EXIT_DISTANCE;
use crate::grid::EditKind;
use crate::plugin::agent::{AgentIndex, PlanBook, PlanState, fail, index_margin};
use crate::plugin::api::{
    NavPath, PathFailure, PathReady, PathRequest, PathStatus, PathfindingSettings, PlanReason,
};
use crate::plugin::detect::EditWatch;
use crate::plugin::dispatch::{Outcome, Planning};
use crate::plugin::floors::RouteOutcomes;
use crate::plugin::geometry::{
    EditCheck, cut_at_blocked_segment, edit_impact, fits, join, way_out,
};
use crate::plugin::stats::Meter;
use crate::plugin::world::{Fit, NavGrid, PositionData, View, position};
use crate::search::{Path, PlanError, Role};

/// What apply reads and writes of an agent.
type AgentData = (
    &'static PathRequest,
    &'static mut PlanState,
    &'static mut PathStatus,
    &'static mut NavPath,
    PositionData,
);

/// What becomes of one search's answer.
enum Verdict<'a> {
    /// Of no use: plan the agent again, for this reason; `discarded` says
    /// whether it counts as a discarded result (a search cancelled before
    /// it ran does not).
    Again { why: PlanReason, discarded: bool },
    /// No path: the agent's new status, what the answer tells of the
    /// region its search started in, and whether an agent in a wall still
    /// walks out.
    Failed {
        status: PathStatus,
        region: Region,
        walk_out: bool,
        no_room: bool,
        view: View<'a>,
    },
    /// A path, and why to plan again once it is applied (edits made while
    /// it was planned that shorten or block it). (`view`, in both: the grid
    /// the search ran on, as it is now.)
    Path {
        found: &'a Path,
        refine: Option<PlanReason>,
        view: View<'a>,
    },
}

/// Carries out a verdict; returns why (and whether the answer counts as
/// discarded) when the agent must be planned again.
fn act(
    ctx: &Context<'_>,
    planning: &mut Planning,
    agent: &mut Agent<'_, '_>,
    verdict: Verdict<'_>,
    commands: &mut Commands,
) -> Option<(PlanReason, bool)> {
    match verdict {
        Verdict::Again { why, discarded } => Some((why, discarded)),
        Verdict::Failed {
            status,
            region,
            walk_out,
            no_room,
            view,
        } => {
            apply_failure(planning, agent, status, region, commands);
            if walk_out {
                walk_out_after_failure(ctx, view, &mut planning.index, agent, no_room);
            }
            None
        }
        Verdict::Path {
            found,
            refine,
            view,
        } => apply_path(ctx, view, planning, agent, found, refine, commands)
            .err()
            .map(|why| (why, true)),
    }
}

/// What a failed search's answer tells of the region it started in.
#[derive(Clone, Copy)]
enum Region {
    /// Nothing: the agent's record stays as it is.
    Untold,
    /// A point of it (the closest reachable point to an unreachable goal),
    /// or that there is none to record.
    Point(Option<DVec2>),
}

/// Applies finished searches: writes [`NavPath`] and [`PathStatus`] and fires
/// [`PathReady`] or [`PathFailed`](crate::plugin::PathFailed). Never blocks.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
#[expect(clippy::too_many_arguments, reason = "system parameters")]
pub(crate) fn apply_results(
    meter: Res<Meter>,
    mut planning: Planning,
    watch: Res<EditWatch>,
    settings: Option<Res<PathfindingSettings>>,
    mut nav: Option<ResMut<NavGrid>>,
    mut agents: Query<AgentData>,
    mut routes: ResMut<RouteOutcomes>,
    mut commands: Commands,
) {
    let _cost = meter.start();
    let counters = &mut planning.counters.0;
    counters.searches_cancelled = planning.searches.cancelled();
    (counters.searches_finished, counters.search_time) = planning.searches.work_done();
    // (About once a second: it reads every chunk.)
    if planning.searches.frames().is_multiple_of(64) {
        counters.mesh_bytes = planning.searches.mesh_share().memory_bytes();
    }
    if !planning.searches.has_outcomes() {
        counters.lockstep_wait = core::time::Duration::ZERO;
        keep_needed_edits(&planning, &watch, nav.as_mut());
        planning.searches.end_frame();
        return;
    }
    let settings = settings.as_deref().copied().unwrap_or_default();
    let outcomes = planning.searches.take_outcomes();
    (counters.lockstep_wait, counters.lockstep_wait_total) = planning.searches.waited();
    for done in outcomes {
        if done.route.is_some() {
            routes.0.push(done); // a route across areas: applied by `floors`
            continue;
        }
        #[cfg(feature = "debug-gizmos")]
        let mut done = done;
        // A cancelled search is counted as such, not as a discarded result.
        let discarded = u64::from(done.result.is_some());
        let Ok((request, mut state, mut status, mut path, pos)) = agents.get_mut(done.entity)
        else {
            planning.counters.0.results_discarded += discarded;
            continue;
        };
        // A request changed since `Detect` ran this frame (by a system not
        // ordered against the plugin's) is replanned next frame; its old
        // result must not show meanwhile.
        let Some(reason) = state.receive(done.ticket, request) else {
            planning.counters.0.results_discarded += discarded;
            continue;
        };
        // (A search cancelled before it ran has an empty trace.)
        #[cfg(feature = "debug-gizmos")]
        if let Some((trace, took)) = done.trace.take()
            && done.result.is_some()
        {
            crate::plugin::debug::keep_trace(&mut commands, done.entity, *trace, done.start, took);
        }
        let mut agent = Agent {
            entity: done.entity,
            reason,
            here: None,
            state: &mut state,
            status: &mut status,
            path: &mut path,
        };
        let again = match nav.as_deref() {
            None => Some((PlanReason::GridReplaced, true)),
            Some(nav) => {
                agent.here = position(pos, nav.transform().plane()).map(|p| nav.to_grid(p));
                let ctx = Context {
                    nav,
                    settings: &settings,
                    done: &done,
                };
                let verdict = judge(nav, &done, reason, agent.here);
                act(&ctx, &mut planning, &mut agent, verdict, &mut commands)
            }
        };
        if let Some((why, discarded)) = again {
            planning.counters.0.results_discarded += u64::from(discarded);
            planning
                .book
                .request(agent.entity, agent.state, agent.status, why);
        }
    }
    keep_needed_edits(&planning, &watch, nav.as_mut());
    planning.searches.end_frame();
    let counters = &mut planning.counters.0;
    counters.searches_cancelled = planning.searches.cancelled();
    counters.in_flight = planning.searches.outstanding();
    counters.queued = planning.book.queued();
}

/// The pieces of the agent an answer is applied to.
struct Agent<'a, 'w> {
    entity: Entity,
    /// Why its plan was asked for.
    reason: PlanReason,
    /// Where it stands now (grid), if it has a position.
    here: Option<DVec2>,
    state: &'a mut PlanState,
    status: &'a mut Mut<'w, PathStatus>,
    path: &'a mut Mut<'w, NavPath>,
}

/// What an answer is applied with.
struct Context<'a> {
    nav: &'a NavGrid,
    settings: &'a PathfindingSettings,
    done: &'a Outcome,
}

/// Judges a search's answer for an agent that still wants it (see
/// [`Verdict`]); `here` is where the agent stands now (grid).
fn judge<'a>(
    nav: &'a NavGrid,
    done: &'a Outcome,
    reason: PlanReason,
    here: Option<DVec2>,
) -> Verdict<'a> {
    let again = |why| Verdict::Again {
        why,
        discarded: true,
    };
    let Some(result) = done.result.as_ref() else {
        // Cancelled, yet still wanted: plan again.
        return Verdict::Again {
            why: reason,
            discarded: false,
        };
    };
    // The grid (eroded for the agent's clearance) the search ran on, as it
    // is now.
    let Some(view) = nav
        .view(done.key)
        .filter(|_| nav.layout_id() == done.layout_id)
    else {
        return again(PlanReason::GridReplaced);
    };
    let has_path = matches!(result, Ok(found) if !found.waypoints.is_empty());
    let refine = match staleness(nav, view, done, result) {
        Some(
            why @ (PlanReason::Shortcut | PlanReason::RegionsConnected | PlanReason::PathBlocked),
        ) if has_path => Some(why),
        Some(why) => return again(why),
        None => None,
    };
    match result {
        Ok(found) if has_path => Verdict::Path {
            found,
            refine,
            view,
        },
        Ok(_) => Verdict::Failed {
            status: PathStatus::Failed(PathFailure::Internal(
                "the planner returned no waypoints".into(),
            )),
            region: Region::Untold,
            walk_out: false,
            no_room: false,
            view,
        },
        // "No room" holds where the search started. An agent that has
        // moved on since (walking out of a place an edit closed in on, or
        // moved by the game) to where a place that fits it is in sight (on
        // the mesh for its radius: moved at all, for its search to tell) is
        // planned again from where it stands.
        Err(PlanError::NoRoom)
            if here.is_some_and(|p| view.may_find_room(done.key.1, p, Some(done.start))) =>
        {
            again(reason)
        }
        Err(error) => Verdict::Failed {
            status: failure_status(error),
            region: Region::Point(match error {
                PlanError::Unreachable { closest } => Some(*closest),
                _ => None,
            }),
            walk_out: true,
            no_room: matches!(error, PlanError::NoRoom),
            view,
        },
    }
}

/// The status a planner's error gives an agent.
fn failure_status(error: &PlanError) -> PathStatus {
    match error {
        PlanError::Unreachable { .. } => PathStatus::Unreachable,
        PlanError::NonFinite(Role::Start) => PathStatus::Failed(PathFailure::NonFiniteStart),
        PlanError::NonFinite(Role::Goal) => PathStatus::Failed(PathFailure::NonFiniteGoal),
        PlanError::NoFreeCell => PathStatus::Failed(PathFailure::NoFreeCell),
        PlanError::NoRoom => PathStatus::Failed(PathFailure::NoRoom),
        PlanError::BudgetExhausted { stats } => PathStatus::Failed(PathFailure::BudgetExhausted {
            expanded: stats.expanded,
        }),
        other => PathStatus::Failed(PathFailure::Internal(other.to_string())),
    }
}

/// Applies an answer without a path: the failure, and what it tells of the
/// region the search started in.
fn apply_failure(
    planning: &mut Planning,
    agent: &mut Agent<'_, '_>,
    status: PathStatus,
    region: Region,
    commands: &mut Commands,
) {
    planning.counters.0.results_applied += 1;
    if let Region::Point(reachable) = region {
        agent.state.record_region(reachable);
    }
    fail(
        commands,
        &mut planning.book,
        &mut planning.index,
        agent.entity,
        agent.state,
        agent.reason,
        agent.status,
        agent.path,
        status,
    );
}

/// An agent in a wall walks out all the same after a failed search: its
/// path is the way out alone. Others are indexed by where they stand, so
/// that a wall raised under them is seen (and one with no room, by the
/// cells whose freeing may make room).
fn walk_out_after_failure(
    ctx: &Context<'_>,
    view: View<'_>,
    index: &mut AgentIndex,
    agent: &mut Agent<'_, '_>,
    no_room: bool,
) {
    let Context { nav, done, .. } = *ctx;
    let Some(here) = agent.here else {
        return;
    };
    if !fits(view.grid, view.disc, here)
        && let Some(way_out) = way_out(nav, done.key, here, Some(done.algorithm), done.goal, false)
    {
        **agent.path = way_out;
        let margin = index_margin(nav, ctx.settings);
        index.index(
            nav,
            agent.entity,
            agent.path,
            agent.status,
            margin,
            Some(here),
            done.key.1,
        );
    } else {
        index.index_waiting(nav, agent.entity, here, done.key.1);
        if no_room {
            index.watch_room(agent.entity, here, done.key.1);
        }
    }
}

/// Applies a found path: joined to where the agent is now, cut before a
/// segment an edit blocked meanwhile, indexed, announced with
/// [`PathReady`]; a better plan is asked for when edits made meanwhile call
/// for one. `Err` (with the reason to plan again) when the agent can no
/// longer see the path: it is planned again from where it is, keeping its
/// old path meanwhile.
fn apply_path(
    ctx: &Context<'_>,
    view: View<'_>,
    planning: &mut Planning,
    agent: &mut Agent<'_, '_>,
    found: &Path,
    refine: Option<PlanReason>,
    commands: &mut Commands,
) -> Result<(), PlanReason> {
    let Context { nav, done, .. } = *ctx;
    // With a clearance, from where it does not fit: where it fits from
    // where it stands now.
    let exit = match done.key.1 {
        Fit::Eroded(c) if !c.is_none() && found.start_moved_from.is_some() => {
            agent.here.and_then(|h| view.start_point(done.key.1, h))
        }
        _ => None,
    };
    let joined = join(view.grid, view.disc, found, (agent.here, exit), done.start).filter(|j| {
        // Walking back to where the search started is no use when an edit
        // blocked the path beyond (unless that is the way out of a wall).
        !(refine == Some(PlanReason::PathBlocked) && j.next == 0 && !j.start_moved)
    });
    let Some(joined) = joined else {
        return Err(refine.unwrap_or(agent.reason));
    };
    planning.counters.0.results_applied += 1;
    let fallback = found.is_fallback();
    let waypoints: Vec<Vec2> = joined.waypoints.iter().map(|&p| nav.to_world(p)).collect();
    let length = (joined.length * f64::from(nav.transform().cell_size())) as f32;
    **agent.path = NavPath {
        waypoints,
        grid_waypoints: joined.waypoints,
        length,
        next: joined.next,
        grid_version: nav.version(),
        algorithm: Some(done.algorithm),
        goal: done.goal,
        fallback,
        start_moved: joined.start_moved,
        cut: false,
        crossings: Vec::new(),
        start_area: None,
    };
    let at = agent.here.unwrap_or(agent.path.grid_waypoints[0]);
    let refine = match (refine, view.edits_since(done.grid_version)) {
        (Some(PlanReason::PathBlocked), Some(edits)) => {
            // The join may have skipped the blocked part. An agent still in
            // a wall is served first.
            let walled = !fits(view.grid, view.disc, at);
            cut_at_blocked_segment(nav, view.grid, edits, view.disc, agent.path, at).then_some(
                if walled {
                    PlanReason::StartBlocked
                } else {
                    PlanReason::PathBlocked
                },
            )
        }
        (other, ..) => other,
    };
    agent.status.set_if_neq(if fallback {
        PathStatus::Fallback
    } else {
        PathStatus::Ready
    });
    planning
        .book
        .finish(agent.entity, agent.state, found.waypoints.last().copied());
    let margin = index_margin(nav, ctx.settings);
    planning.index.index(
        nav,
        agent.entity,
        agent.path,
        agent.status,
        margin,
        agent.here,
        done.key.1,
    );
    let ready = PathReady {
        entity: agent.entity,
        reason: agent.reason,
        fallback,
        length: agent.path.length,
    };
    commands.write_message(ready);
    commands.trigger(ready);
    if let Some(why) = refine {
        planning
            .book
            .request(agent.entity, agent.state, agent.status, why);
    }
    Ok(())
}

/// Tells the grid to keep the edits that searches still in flight (and the
/// edit check) need; older ones may go. Every frame, so that the log does
/// not grow while no search runs.
fn keep_needed_edits(planning: &Planning, watch: &EditWatch, nav: Option<&mut ResMut<NavGrid>>) {
    if let Some(nav) = nav {
        let seen = watch.seen_version();
        let keep = planning
            .searches
            .oldest_version_in_flight()
            .map_or(seen, |v| v.min(seen));
        nav.bypass_change_detection().keep_edits_after(keep);
    }
}

/// Whether a result planned on an older grid must be thrown away (and why):
/// the grid was replaced, or the edits made during the search affect the
/// path exactly as they would affect a live one (see [`geometry::impact`](crate::plugin::geometry::impact)), or
/// connect an unreachable goal.
fn staleness(
    nav: &NavGrid,
    view: View<'_>,
    done: &Outcome,
    result: &Result<Path, PlanError>,
) -> Option<PlanReason> {
    if nav.layout_id() != done.layout_id {
        return Some(PlanReason::GridReplaced);
    }
    if nav.version() == done.grid_version {
        return None;
    }
    let Some(edits) = view.edits_since(done.grid_version) else {
        return Some(PlanReason::GridReplaced);
    };
    let goal = nav.to_grid(done.goal);
    let check = match result {
        Ok(found) if !found.waypoints.is_empty() => {
            let first =
                usize::from(found.start_moved_from.is_none()).min(found.waypoints.len() - 1);
            EditCheck {
                behind: None,
                from: found.waypoints[0],
                agent: found.waypoints[0],
                region: found.waypoints[0],
                ahead: &found.waypoints[first..],
                goal,
                fallback: found.is_fallback(),
                radius: view.disc,
                reach: view.disc_reach(),
            }
        }
        // The grid had no free cell, or none the agent could walk to; any
        // freed cell may give it one.
        Err(PlanError::NoFreeCell) => {
            return edits
                .iter()
                .any(|e| e.kind != EditKind::Blocked)
                .then_some(PlanReason::RegionsConnected);
        }
        // No room where the agent stands: any edit of the grid itself near it
        // may open a way (a freed cell) or change how close to a wall it
        // may come on the way (a blocked one).
        Err(PlanError::NoRoom) => {
            let near = f64::from(MAX_EXIT_DISTANCE + done.key.1.reach() + 1);
            let Some(edits) = nav.edits_since(done.grid_version) else {
                return Some(PlanReason::GridReplaced);
            };
            return edits
                .iter()
                .any(|e| {
                    let (lo, hi) = (e.rect.min.as_dvec2(), e.rect.max.as_dvec2());
                    (done.start - done.start.clamp(lo, hi)).abs().max_element() <= near
                })
                .then_some(PlanReason::RegionsConnected);
        }
        // The start may lie in a wall or off the grid; `closest` lies in
        // the region the search started in.
        &Err(PlanError::Unreachable { closest }) => EditCheck {
            behind: None,
            from: done.start,
            agent: done.start,
            region: closest,
            ahead: &[],
            goal,
            fallback: true,
            radius: view.disc,
            reach: view.disc_reach(),
        },
        _ => return None,
    };
    edit_impact(view.grid, edits, &check)
}

/// Cancels the search of an agent whose [`PathRequest`] is removed (or which
/// is despawned), and forgets the request so that inserting it again plans.
/// An agent still waiting for its first plan is marked
/// [`PathFailure::RequestRemoved`], so that it does not look busy forever.
#[expect(clippy::needless_pass_by_value, reason = "observer parameters")]
pub(crate) fn on_request_removed(
    removed: On<Remove<PathRequest>>,
    mut book: ResMut<PlanBook>,
    mut index: ResMut<AgentIndex>,
    mut agents: Query<(&mut PlanState, &mut PathStatus, &mut NavPath)>,
) {
    index.unindex(removed.entity);
    if let Ok((mut state, mut status, mut path)) = agents.get_mut(removed.entity) {
        book.forget(removed.entity, &mut state);
        if status.is_busy() {
            *status = PathStatus::Failed(PathFailure::RequestRemoved);
            if !path.is_empty() {
                *path = NavPath::default();
            }
        }
    }
}
