//! Planning on a mesh for agents of a radius: the start moved onto the
//! mesh, Polyanya (or A\* and Lazy Theta\* over the polygons' corners)
//! between them, a fallback to the closest point the agent can reach; whole
//! or in slices.

use core::sync::atomic::AtomicBool;

use bevy_math::DVec2;

use super::endpoint::Endpoint;
use super::mesh_graph::Mode;
use super::polyanya;
use super::{
    Algorithm, Outcome, Path, PathKind, PlanError, PlanOptions, Planner, Role, SearchContext,
    SearchStats, SearchTrace, Step,
};
use crate::clearance::MAX_EXIT_DISTANCE;
use crate::geom::polyline_length;
use crate::mesh::NavMesh;
use crate::mesh::locate::{closest_reachable, closest_within, in_sight, nearest_on_mesh, on_mesh};

/// A search on a mesh for a radius, between two slices: where it goes and
/// the work done.
pub(super) struct RadiusSearch {
    /// The start on the mesh, and the point searched for (the goal, or
    /// after a search found it cut off, the closest point reachable).
    from: DVec2,
    to: DVec2,
    start: Endpoint,
    end: Endpoint,
    kind: PathKind,
    start_moved_from: Option<DVec2>,
    /// Whether `to` is already the fallback target.
    fell_back: bool,
    /// On a mesh built on demand, for a goal off the mesh: whether `to` is
    /// the mesh's point closest to the goal, the fallback target if the
    /// start reaches it (if it does not, the search for it has built every
    /// chunk the start reaches, and the fallback target is looked for
    /// there).
    tentative: bool,
    /// Whether the engine's search has begun (the next slice resumes it).
    begun: bool,
    stats: SearchStats,
}

impl Planner {
    /// A query on a mesh of [`NavMesh::with_radius`] from `start` to `goal`,
    /// run for at most `slice` more expansions (`None`: to the end), as
    /// [`Planner::plan_slice`] runs one on a grid: with `resume` it goes on
    /// with the search this planner paused last (the same query). The
    /// answer is the one [`Planner::plan_on_mesh`] gives, however the work
    /// is sliced. A search that finds its goal cut off pauses before the
    /// search for the fallback target when it runs in slices.
    #[expect(clippy::too_many_arguments, reason = "one query's inputs")]
    pub(crate) fn radius_slice(
        &mut self,
        mesh: &NavMesh,
        (start, goal): (DVec2, DVec2),
        options: &PlanOptions,
        cancel: Option<&AtomicBool>,
        mut trace: Option<&mut SearchTrace>,
        resume: bool,
        slice: Option<u64>,
    ) -> Step {
        self.polyanya.wanted.clear();
        let mut search = match self.paused_radius.take() {
            Some(search) if resume => search,
            _ => {
                if let Some(t) = trace.as_deref_mut() {
                    t.reset(options.algorithm);
                }
                if mesh.is_on_demand() && self.want_ends(mesh, start, goal, options) {
                    return Step::Paused;
                }
                match self.radius_begin(mesh, start, goal, options) {
                    Ok(search) => search,
                    Err(PlanError::MeshNotBuilt) if mesh.is_on_demand() => return Step::Paused,
                    Err(error) => return Step::Done(Err(error)),
                }
            }
        };
        loop {
            let mut ctx = SearchContext::new(
                mesh.grid(),
                (&search.start, &search.end),
                options,
                cancel,
                search.stats,
                trace.as_deref_mut(),
                slice,
            );
            let mut waypoints = Vec::new();
            let (from, to, begun) = (search.from, search.to, search.begun);
            let outcome = self.radius_search(&mut ctx, mesh, from, to, &mut waypoints, begun);
            let stats = ctx.stats;
            return Step::Done(match outcome {
                Outcome::Found => {
                    let length = polyline_length(&waypoints);
                    Ok(Path {
                        waypoints,
                        length,
                        cost: length,
                        kind: search.kind,
                        start_moved_from: search.start_moved_from,
                        stats,
                    })
                }
                Outcome::Exhausted if !search.fell_back || search.tentative => {
                    // Cut off: the closest point it can reach, searched
                    // afresh.
                    let (to, kind) = match self.radius_fallback(mesh, from, goal, options) {
                        Ok(target) => target,
                        Err(PlanError::MeshNotBuilt) if mesh.is_on_demand() => {
                            self.paused_radius = Some(RadiusSearch {
                                begun: true,
                                stats,
                                ..search
                            });
                            return Step::Paused;
                        }
                        Err(error) => return Step::Done(Err(error)),
                    };
                    let Some(end) = Endpoint::resolve(mesh.grid(), to) else {
                        return Step::Done(Err(PlanError::NoRoom));
                    };
                    search = RadiusSearch {
                        to,
                        end,
                        kind,
                        fell_back: true,
                        tentative: false,
                        begun: false,
                        stats: SearchStats::default(),
                        ..search
                    };
                    if slice.is_some() {
                        self.paused_radius = Some(search);
                        return Step::Paused;
                    }
                    continue;
                }
                Outcome::Exhausted => Err(PlanError::SearchFailed {
                    stats: SearchStats::default(),
                }),
                Outcome::Budget => Err(PlanError::BudgetExhausted { stats }),
                Outcome::Cancelled => Err(PlanError::Cancelled),
                Outcome::Paused | Outcome::Unbuilt => {
                    self.paused_radius = Some(RadiusSearch {
                        begun: true,
                        stats,
                        ..search
                    });
                    return Step::Paused;
                }
            });
        }
    }

    /// Checks a query on a mesh for a radius and sets its search up: the
    /// start moved onto the mesh, and a goal off the mesh replaced by the
    /// closest point the agent can reach (or refused, as the policy says).
    /// A goal on the mesh is searched for at once: only when the search
    /// finds it cut off does the walk over the start's polygons look for
    /// the closest point the agent can reach.
    fn radius_begin(
        &mut self,
        mesh: &NavMesh,
        start: DVec2,
        goal: DVec2,
        options: &PlanOptions,
    ) -> Result<RadiusSearch, PlanError> {
        if !start.is_finite() {
            return Err(PlanError::NonFinite(Role::Start));
        }
        if !goal.is_finite() {
            return Err(PlanError::NonFinite(Role::Goal));
        }
        let (start, goal) = (start + DVec2::ZERO, goal + DVec2::ZERO);
        let within = f64::from(MAX_EXIT_DISTANCE);
        let found = &mut self.polygon_marks.found;
        let from = nearest_on_mesh(mesh, start, within, found).ok_or_else(|| {
            if mesh.polygon_count() == 0 {
                PlanError::NoFreeCell
            } else {
                PlanError::NoRoom
            }
        })?;
        let start_moved_from = (from != start).then_some(start);
        let goal_on_mesh = on_mesh(mesh, goal, &mut self.polygon_marks.found);
        let mut tentative = false;
        let (to, kind) = if goal_on_mesh {
            (goal, PathKind::Found)
        } else if mesh.is_on_demand() && options.fallback != super::FallbackPolicy::Fail {
            // The mesh's point closest to the goal (the chunks around the
            // goal it lies in built by `want_ends`: no point beyond them is
            // closer): the fallback target if the start reaches it; the
            // whole part of the mesh the start reaches is looked at only if
            // it does not.
            match closest_within(mesh, goal, f64::from(MAX_EXIT_DISTANCE)) {
                Some((_, q)) => {
                    tentative = true;
                    (
                        q,
                        PathKind::Fallback {
                            requested_goal: goal,
                        },
                    )
                }
                None => self.radius_fallback(mesh, from, goal, options)?,
            }
        } else {
            self.radius_fallback(mesh, from, goal, options)?
        };
        let resolve = |p: DVec2| Endpoint::resolve(mesh.grid(), p).ok_or(PlanError::NoRoom);
        Ok(RadiusSearch {
            from,
            to,
            start: resolve(from)?,
            end: resolve(to)?,
            kind,
            start_moved_from,
            fell_back: !goal_on_mesh,
            tentative,
            begun: false,
            stats: SearchStats::default(),
        })
    }

    /// On a mesh built on demand, before a query from `start` to `goal`:
    /// lists in `polyanya.wanted` the chunks not built yet that setting it
    /// up reads next (those of both ends; for a start or a goal off the
    /// mesh, those of the next ring around it that the look for the mesh's
    /// nearest or closest point reads, ring by ring up to
    /// [`MAX_EXIT_DISTANCE`]); `true` if there are any. Lazy Theta\* and
    /// A\* over the polygons' corners want the whole mesh.
    fn want_ends(
        &mut self,
        mesh: &NavMesh,
        start: DVec2,
        goal: DVec2,
        options: &PlanOptions,
    ) -> bool {
        let wanted = &mut self.polyanya.wanted;
        if !(start.is_finite() && goal.is_finite()) {
            return false;
        }
        if !matches!(options.algorithm, Algorithm::Anya | Algorithm::Polyanya) {
            mesh.unbuilt_all(wanted);
            return !wanted.is_empty();
        }
        mesh.unbuilt_at(start, wanted);
        mesh.unbuilt_at(goal, wanted);
        if !wanted.is_empty() {
            return true;
        }
        let found = &mut self.polygon_marks.found;
        let within = f64::from(MAX_EXIT_DISTANCE);
        // A start off the mesh moves to the nearest point within sight
        // (looked for ring by ring: the chunks of the rings it reads).
        if !on_mesh(mesh, start, found)
            && mesh.want_rings(start, within, wanted, |m, r| {
                nearest_on_mesh(m, start, within, found).is_some_and(|q| q.distance(start) <= r)
            })
        {
            return true;
        }
        // A goal off the mesh: its closest point, likewise.
        if !on_mesh(mesh, goal, found) {
            return mesh.want_rings(goal, within, wanted, |m, r| {
                closest_within(m, goal, r).is_some()
            });
        }
        !wanted.is_empty()
    }

    /// The fallback target of a search from `from` for `goal` on a mesh for
    /// a radius: the closest point of the polygons connected to `from`'s;
    /// an error if the policy asks for one.
    fn radius_fallback(
        &mut self,
        mesh: &NavMesh,
        from: DVec2,
        goal: DVec2,
        options: &PlanOptions,
    ) -> Result<(DVec2, PathKind), PlanError> {
        let closest = closest_reachable(mesh, from, goal, &mut self.polygon_marks);
        if !self.polygon_marks.portals.is_empty() {
            // (A mesh built on demand: the walk goes on once the chunks
            // beyond are built.)
            let wanted = &mut self.polyanya.wanted;
            for &(id, k) in &self.polygon_marks.portals {
                wanted.push(mesh.slot_across(id, k));
            }
            wanted.sort_unstable();
            wanted.dedup();
            return Err(PlanError::MeshNotBuilt);
        }
        if options.fallback == super::FallbackPolicy::Fail {
            return Err(PlanError::Unreachable { closest });
        }
        Ok((
            closest,
            PathKind::Fallback {
                requested_goal: goal,
            },
        ))
    }

    /// One slice of the search from `from` to `to`, both on `mesh` (their
    /// endpoints in `ctx`), into `out`: [`Outcome::Exhausted`] if `to` is cut
    /// off from `from`. With `resume`, goes on with the engine's paused
    /// search.
    fn radius_search(
        &mut self,
        ctx: &mut SearchContext<'_>,
        mesh: &NavMesh,
        from: DVec2,
        to: DVec2,
        out: &mut Vec<DVec2>,
        resume: bool,
    ) -> Outcome {
        if !resume && from == to {
            out.push(from);
            return Outcome::Found;
        }
        if !resume && in_sight(mesh, from, to, &mut self.polygon_marks.found) {
            out.extend([from, to]);
            return Outcome::Found;
        }
        let mode = match ctx.options.algorithm {
            Algorithm::LazyTheta => Mode::LazyTheta,
            Algorithm::AStar => Mode::AStar,
            Algorithm::AStarSmoothed => Mode::AStarSmoothed,
            Algorithm::Anya | Algorithm::Polyanya => {
                return polyanya::search(ctx, mesh, &mut self.polyanya, out, resume);
            }
        };
        let found = &mut self.polygon_marks.found;
        self.mesh_graph
            .search(ctx, mesh, from, to, mode, found, out, resume)
    }
}
