//! The legs from one point to many, asked for one at a time: a planner
//! keeps two focused Polyanya searches (see `polyanya::focus`) between the
//! calls, so each leg goes on from the work of the ones before it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bevy_math::DVec2;

use super::endpoint::Endpoint;
use super::polyanya::TargetPolys;
use super::{Outcome, PlanOptions, Planner, SearchContext, SearchStats, polyanya};
use crate::geom::polyline_length;
use crate::mesh::NavMesh;
use crate::mesh::locate::on_mesh;

/// How many leg searches a planner keeps going at once.
pub(crate) const LEG_SEARCHES: usize = 2;

/// The next leg search's ticket.
static NEXT_TICKET: AtomicU64 = AtomicU64::new(1);

/// The far ends of legs on one mesh, resolved once for every search of
/// legs to them.
#[derive(Clone, Debug, Default)]
pub(crate) struct LegTargets {
    /// Each point as the mesh's grid resolves it (`None`: not on the mesh,
    /// no leg to it), and its place among the search's targets.
    ends: Vec<Option<(Endpoint, u32)>>,
    polys: TargetPolys,
}

impl LegTargets {
    /// `points` (in cells; `None`: no leg to it) on `mesh`.
    pub(crate) fn new(mesh: &NavMesh, points: &[Option<DVec2>]) -> Self {
        let mut found = Vec::new();
        let mut resolved = Vec::new();
        let ends = points
            .iter()
            .map(|&p| {
                let end = resolve(mesh, p?, &mut found)?;
                resolved.push(end.clone());
                Some((end, resolved.len() as u32 - 1))
            })
            .collect();
        LegTargets {
            ends,
            polys: TargetPolys::new(mesh, &resolved, &mut found),
        }
    }
}

/// `p` (in cells) as `mesh`'s grid resolves it, if it lies on the mesh.
fn resolve(mesh: &NavMesh, p: DVec2, found: &mut Vec<u32>) -> Option<Endpoint> {
    Endpoint::resolve(mesh.grid(), p).filter(|_| mesh.radius() == 0.0 || on_mesh(mesh, p, found))
}

/// The legs between one point and each of a [`LegTargets`] on one mesh,
/// searched by a [`Planner`] one at a time ([`Planner::leg`]).
#[derive(Clone, Debug)]
pub(crate) struct LegSearch {
    /// Which of the planner's leg searches it runs in.
    slot: usize,
    /// Its ticket, which the planner keeps beside the search while it
    /// holds it ([`u64::MAX`]: not begun).
    ticket: u64,
    /// The point, if on the mesh.
    source: Option<Endpoint>,
    targets: Arc<LegTargets>,
}

impl LegSearch {
    /// The legs from `source` (in cells) to each of `targets` on `mesh`,
    /// searched in the planner's leg search `slot`. A point not on the mesh
    /// has no leg.
    pub(crate) fn new(
        planner: &mut Planner,
        mesh: &NavMesh,
        slot: usize,
        source: DVec2,
        targets: Arc<LegTargets>,
    ) -> Self {
        LegSearch {
            slot,
            ticket: u64::MAX,
            source: resolve(mesh, source, &mut planner.polygon_marks.found),
            targets,
        }
    }
}

impl Planner {
    /// The leg of `search` to its target `k`: its length (infinite: none)
    /// and its waypoints from the source, in `out` (cleared first), once
    /// known; `None` while the work goes on (at most about `slice` more
    /// expansions, if given). A leg in plain sight is not searched (on a
    /// point agent's mesh). The planner must run no other leg search in the
    /// same slot in between; if it did, the search starts over.
    pub(crate) fn leg(
        &mut self,
        mesh: &NavMesh,
        search: &mut LegSearch,
        k: usize,
        slice: Option<u64>,
        out: &mut Vec<DVec2>,
    ) -> Option<f64> {
        out.clear();
        let (Some(source), Some((target, i))) = (&search.source, &search.targets.ends[k]) else {
            return Some(f64::INFINITY);
        };
        if source.p == target.p {
            out.push(source.p);
            return Some(0.0);
        }
        // Exact, whatever it takes: a leg cut short by a node budget would
        // read as no leg, and the route as longer than it is.
        let options = PlanOptions {
            node_budget: None,
            ..PlanOptions::default()
        };
        let mut ctx = SearchContext::new(
            mesh.grid(),
            (source, target),
            &options,
            None,
            SearchStats::default(),
            None,
            slice,
        );
        if mesh.radius() == 0.0 && super::context::visible(&mut ctx, source, target) {
            out.extend([source.p, target.p]);
            return Some(source.p.distance(target.p));
        }
        let scratch = &mut self.legs[search.slot];
        if self.leg_tickets[search.slot] != search.ticket || search.ticket == u64::MAX {
            // (Tickets are unique across planners: a task stepped with
            // another planner than before never takes its search for its
            // own.)
            search.ticket = NEXT_TICKET.fetch_add(1, Ordering::Relaxed);
            self.leg_tickets[search.slot] = search.ticket;
            polyanya::focus::focus_begin(&mut ctx, mesh, scratch, &search.targets.polys);
        }
        let i = *i as usize;
        match polyanya::focus::focus_run(&mut ctx, mesh, scratch, i) {
            Outcome::Paused => return None,
            Outcome::Found | Outcome::Exhausted => {}
            _ => return Some(f64::INFINITY),
        }
        if !scratch.path_from_target(i, out) {
            return Some(f64::INFINITY);
        }
        out.reverse();
        let scale = mesh.scale();
        if scale != 1 {
            for p in out.iter_mut() {
                *p /= scale as f64;
            }
            // The ends exactly as asked, not through the lattice.
            let last = out.len() - 1;
            (out[0], out[last]) = (source.p, target.p);
        }
        Some(polyline_length(out))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bevy_math::{DVec2, UVec2};

    use super::{LegSearch, LegTargets};
    use crate::geom::polyline_length;
    use crate::grid::Grid;
    use crate::los::line_of_sight;
    use crate::mesh::NavMesh;
    use crate::search::{Algorithm, FallbackPolicy, PathKind, PlanOptions, Planner};
    use crate::test_rng::Rng;

    fn random_grid(rng: &mut Rng) -> Grid {
        let mut grid = Grid::new(24, 18).unwrap();
        for y in 0..18 {
            for x in 0..24 {
                if rng.below(100) < 22 {
                    grid.set_free(UVec2::new(x, y), false).unwrap();
                }
            }
        }
        grid
    }

    /// A cell centre or a cell corner.
    fn random_point(rng: &mut Rng) -> DVec2 {
        let half = f64::from(rng.below(2)) * 0.5;
        DVec2::new(
            f64::from(rng.below(24)) + half,
            f64::from(rng.below(18)) + half,
        )
    }

    /// Legs asked for one at a time, in any order, again, in slices of any
    /// size, with another leg search run in the same slot in between, and
    /// now and then with another planner, are as long as a single search's
    /// paths (none where it has none), and run from the source to the
    /// target.
    #[test]
    fn legs_asked_one_at_a_time_are_as_short_as_single_searches() {
        let mut rng = Rng(0x1e95_0f0c);
        let options = PlanOptions {
            algorithm: Algorithm::Polyanya,
            fallback: FallbackPolicy::Fail,
            ..PlanOptions::default()
        };
        let mut planner = Planner::new();
        let mut others = [Planner::new(), Planner::new()];
        let mut checked = 0;
        for round in 0..90 {
            let grid = random_grid(&mut rng);
            let mesh = if round % 3 == 0 {
                NavMesh::with_radius(&grid, 0.4).unwrap()
            } else {
                NavMesh::build(&grid)
            };
            let points: Vec<Option<DVec2>> = (0..14)
                .map(|k| (k % 7 != 6).then(|| random_point(&mut rng)))
                .collect();
            let targets = Arc::new(LegTargets::new(&mesh, &points));
            let source = random_point(&mut rng);
            let slot = round % 2;
            let mut search =
                LegSearch::new(&mut planner, &mesh, slot, source, Arc::clone(&targets));
            for _ in 0..20 {
                let k = rng.below(points.len() as u32) as usize;
                if rng.below(8) == 0 {
                    // Another search in the same slot: this one starts over.
                    let other = random_point(&mut rng);
                    let mut intruder =
                        LegSearch::new(&mut planner, &mesh, slot, other, Arc::clone(&targets));
                    while planner
                        .leg(&mesh, &mut intruder, k, None, &mut Vec::new())
                        .is_none()
                    {}
                }
                let slice = [None, Some(1), Some(6)][rng.below(3) as usize];
                // Now and then with another planner (which runs searches of
                // its own in the same slot): the search starts over there.
                let other = &mut others[rng.below(2) as usize];
                if rng.below(6) == 0 {
                    let from = random_point(&mut rng);
                    let mut own = LegSearch::new(other, &mesh, slot, from, Arc::clone(&targets));
                    while other
                        .leg(&mesh, &mut own, k, Some(3), &mut Vec::new())
                        .is_none()
                    {}
                }
                let with = if rng.below(5) == 0 {
                    other
                } else {
                    &mut planner
                };
                let mut path = Vec::new();
                let d = loop {
                    if let Some(d) = with.leg(&mesh, &mut search, k, slice, &mut path) {
                        break d;
                    }
                };
                let single = points[k].and_then(|p| {
                    Planner::new()
                        .plan_on_mesh(&mesh, source, p, &options)
                        .ok()
                        .filter(|path| {
                            path.kind == PathKind::Found && path.start_moved_from.is_none()
                        })
                });
                match single {
                    Some(single) => {
                        assert!(
                            (d - single.length).abs() <= 1e-9 * single.length.max(1.0),
                            "round {round}: leg to {k} is {d}, a single search's {}",
                            single.length
                        );
                        assert_eq!(path.first(), Some(&source));
                        assert_eq!(path.last(), points[k].as_ref());
                        assert!((polyline_length(&path) - d).abs() <= 1e-9 * d.max(1.0));
                        if mesh.radius() == 0.0 {
                            for w in path.windows(2) {
                                assert!(line_of_sight(&grid, w[0], w[1]), "round {round}");
                            }
                        }
                        checked += 1;
                    }
                    None => assert!(d.is_infinite(), "round {round}: a leg to {k} of {d}"),
                }
            }
        }
        assert!(checked > 600, "{checked} legs found");
    }
}
