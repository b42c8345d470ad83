//! Routes across several areas joined by links: on generated worlds (random
//! grids, 2-5 areas, random links, some one-way, disabled, narrow, costly or
//! for one profile), before and after random edits, every route's length
//! equals a brute-force reference's (Dijkstra over the link ends, with
//! single-area optimal lengths: the independent reference of
//! `tests/common` for points, a fresh Polyanya search per pair on a freshly
//! built mesh for a radius), every leg is valid on its area and every link
//! crossed is crossed as it allows.

mod common;

use std::sync::Arc;

use bevy_anyangle::atlas::{AreaId, Atlas, Link, LinkId, Place, Route, RouteQuery, RouteTask};
use bevy_anyangle::mesh::NavMesh;
use bevy_anyangle::prelude::*;
use common::generate::{Rng, random_grid};
use common::{Reference, close, keeps_radius};

/// The radius the worlds serve besides points.
const RADIUS: f64 = 0.4;

/// One area as the reference sees it.
struct RefArea {
    grid: Grid,
    exact: Reference,
    mesh: NavMesh,
}

impl RefArea {
    fn new(grid: &Grid) -> Self {
        RefArea {
            grid: grid.clone(),
            exact: Reference::new(grid),
            mesh: NavMesh::with_radius(grid, RADIUS).unwrap(),
        }
    }

    /// The shortest path's length from `a` to `b` in this area for an agent
    /// of `radius`, infinite if there is none (or `a` or `b` is no place
    /// for the agent).
    fn leg(&self, a: DVec2, b: DVec2, radius: f64) -> f64 {
        if radius == 0.0 {
            return self.exact.optimum(a, b).unwrap_or(f64::INFINITY);
        }
        let options = PlanOptions::with_algorithm(Algorithm::Polyanya);
        match Planner::new().plan_on_mesh(&self.mesh, a, b, &options) {
            Ok(path) if path.start_moved_from.is_none() && !path.is_fallback() => path.length,
            _ => f64::INFINITY,
        }
    }
}

/// The shortest route's length by brute force: Dijkstra over the start,
/// the goal and every link end, each two in one area joined by their
/// single-area optimum, each allowed link by its cost.
fn reference(atlas: &Atlas, areas: &[RefArea], q: &RouteQuery) -> f64 {
    let mut nodes: Vec<Place> = vec![q.from, q.to];
    let mut links: Vec<(usize, usize, f64, bool)> = Vec::new();
    for (_, link) in atlas.links() {
        let a = nodes.len();
        nodes.push(link.from);
        nodes.push(link.to);
        if link.enabled && q.radius <= link.max_radius && link.profiles & q.profiles != 0 {
            links.push((a, a + 1, link.cost, link.both_ways));
        }
    }
    let n = nodes.len();
    let mut edge = vec![f64::INFINITY; n * n];
    for i in 0..n {
        for j in 0..n {
            if i != j && nodes[i].area == nodes[j].area && j != 0 && i != 1 {
                let area = &areas[nodes[i].area.index()];
                edge[i * n + j] = area.leg(nodes[i].point, nodes[j].point, q.radius);
            }
        }
    }
    for &(a, b, cost, both) in &links {
        // A link end is usable only where the agent may stand (a point
        // agent: not on a double corner, where a route could squeeze).
        let stands = |p: usize| {
            let (area, point) = (&areas[nodes[p].area.index()], nodes[p].point);
            area.leg(point, point, q.radius).is_finite()
                && (q.radius > 0.0 || !area.exact.on_double_corner(point))
        };
        if stands(a) && stands(b) {
            edge[a * n + b] = edge[a * n + b].min(cost);
            if both {
                edge[b * n + a] = edge[b * n + a].min(cost);
            }
        }
    }
    // Dijkstra, dense.
    let mut dist = vec![f64::INFINITY; n];
    let mut done = vec![false; n];
    dist[0] = 0.0;
    for _ in 0..n {
        let Some(u) = (0..n)
            .filter(|&u| !done[u] && dist[u].is_finite())
            .min_by(|&a, &b| dist[a].total_cmp(&dist[b]))
        else {
            break;
        };
        done[u] = true;
        for v in 0..n {
            let d = dist[u] + edge[u * n + v];
            if d < dist[v] {
                dist[v] = d;
            }
        }
    }
    dist[1]
}

/// Checks `route` for `q`: legs valid on their areas, links crossed as
/// they allow, lengths summed right. Returns what is wrong.
fn check_route(
    atlas: &Atlas,
    areas: &[RefArea],
    q: &RouteQuery,
    route: &Route,
) -> Result<(), String> {
    let first = &route.legs[0];
    if first.area != q.from.area || first.waypoints[0] != q.from.point {
        return Err(format!(
            "starts at {:?} {:?}",
            first.area, first.waypoints[0]
        ));
    }
    let mut total = 0.0;
    for (k, leg) in route.legs.iter().enumerate() {
        let area = &areas[leg.area.index()];
        for w in leg.waypoints.windows(2) {
            if !area.exact.sees(w[0], w[1]) {
                return Err(format!("leg {k}: {:?} does not see {:?}", w[0], w[1]));
            }
        }
        if q.radius > 0.0 {
            keeps_radius(&area.grid, &leg.waypoints, q.radius)
                .map_err(|e| format!("leg {k}: {e}"))?;
        }
        let length: f64 = leg.waypoints.windows(2).map(|w| w[0].distance(w[1])).sum();
        if !close(length, leg.length) {
            return Err(format!(
                "leg {k}: length {} for a polyline of {length}",
                leg.length
            ));
        }
        total += length;
        let last = leg.waypoints[leg.waypoints.len() - 1];
        match (leg.then, route.legs.get(k + 1)) {
            (Some(c), Some(next)) => {
                let link = atlas.link(c.link).ok_or("a removed link")?;
                if !link.allows(q.radius, q.profiles) {
                    return Err(format!(
                        "leg {k}: link {:?} does not allow the agent",
                        c.link
                    ));
                }
                let (here, there) = if c.forward {
                    (link.from, link.to)
                } else if link.both_ways {
                    (link.to, link.from)
                } else {
                    return Err(format!("leg {k}: one-way link {:?} crossed back", c.link));
                };
                if here != Place::new(leg.area, last)
                    || there != Place::new(next.area, next.waypoints[0])
                {
                    return Err(format!(
                        "leg {k}: link {:?} not crossed from end to end",
                        c.link
                    ));
                }
                #[expect(clippy::float_cmp, reason = "copied")]
                if c.cost != link.cost {
                    return Err(format!(
                        "leg {k}: cost {} for link cost {}",
                        c.cost, link.cost
                    ));
                }
                total += c.cost;
            }
            (None, None) => {}
            _ => return Err(format!("leg {k}: links and legs do not alternate")),
        }
    }
    if !close(total, route.length) {
        return Err(format!(
            "length {} for legs and links of {total}",
            route.length
        ));
    }
    if !route.is_fallback() && route.end() != q.to {
        return Err(format!("ends at {:?}, not the goal", route.end()));
    }
    Ok(())
}

/// A random free cell's centre of `grid` (any point if none is free).
fn free_centre(rng: &mut Rng, grid: &Grid) -> DVec2 {
    for _ in 0..200 {
        let c = UVec2::new(
            rng.below(u64::from(grid.width())) as u32,
            rng.below(u64::from(grid.height())) as u32,
        );
        if grid.is_free(c) {
            return c.as_dvec2() + DVec2::splat(0.5);
        }
    }
    DVec2::splat(0.5)
}

/// A random place for a link end: mostly free cells' centres, sometimes
/// any multiple of 1/2 (cell corners, edges' midpoints, walls).
fn end_point(rng: &mut Rng, grid: &Grid) -> DVec2 {
    if rng.chance(0.8) {
        free_centre(rng, grid)
    } else {
        DVec2::new(
            rng.range(0, 2 * i64::from(grid.width())) as f64 / 2.0,
            rng.range(0, 2 * i64::from(grid.height())) as f64 / 2.0,
        )
    }
}

/// A random link between the areas of `grids`.
fn random_link(rng: &mut Rng, ids: &[AreaId], grids: &[Grid]) -> Link {
    let a = rng.below(ids.len() as u64) as usize;
    let b = if rng.chance(0.1) {
        a
    } else {
        rng.below(ids.len() as u64) as usize
    };
    let mut link = Link::new(
        Place::new(ids[a], end_point(rng, &grids[a])),
        Place::new(ids[b], end_point(rng, &grids[b])),
    );
    if rng.chance(0.4) {
        link = link.with_cost(rng.unit() * 8.0);
    }
    if rng.chance(0.3) {
        link = link.one_way();
    }
    if rng.chance(0.2) {
        link = link.with_enabled(false);
    }
    if rng.chance(0.25) {
        link = link.with_max_radius(0.3);
    }
    if rng.chance(0.2) {
        link = link.with_profiles(0b10);
    }
    link
}

/// A random query between the areas, from a place where the agent stands.
fn random_query(rng: &mut Rng, ids: &[AreaId], areas: &[RefArea]) -> RouteQuery {
    loop {
        let radius = if rng.chance(0.5) { 0.0 } else { RADIUS };
        let a = rng.below(ids.len() as u64) as usize;
        let b = rng.below(ids.len() as u64) as usize;
        let from = free_centre(rng, &areas[a].grid);
        if areas[a].leg(from, from, radius).is_infinite() {
            continue;
        }
        let to = if rng.chance(0.9) {
            free_centre(rng, &areas[b].grid)
        } else {
            end_point(rng, &areas[b].grid)
        };
        let profiles = if rng.chance(0.3) { 0b01 } else { u64::MAX };
        return RouteQuery::new(Place::new(ids[a], from), Place::new(ids[b], to))
            .with_radius(radius)
            .with_profiles(profiles);
    }
}

/// Answers `count` random queries and checks each against the reference.
fn check_queries(
    rng: &mut Rng,
    atlas: &Atlas,
    ids: &[AreaId],
    count: usize,
    what: &str,
) -> (usize, usize) {
    let areas: Vec<RefArea> = ids
        .iter()
        .map(|&id| RefArea::new(atlas.grid(id).unwrap()))
        .collect();
    let mut planner = Planner::new();
    let (mut found, mut crossing) = (0, 0);
    for _ in 0..count {
        let q = random_query(rng, ids, &areas);
        let route = atlas
            .find(&mut planner, &q)
            .unwrap_or_else(|e| panic!("{what}: {q:?}: {e}"));
        // In slices of a few expansions: the same answer.
        let budget = *rng.pick(&[1, 5, 40, 1_000]);
        let mut task = RouteTask::new(q);
        let mut sliced = Planner::new();
        let in_slices = loop {
            if let Some(answer) = atlas.step(&mut sliced, &mut task, budget) {
                break answer.unwrap_or_else(|e| panic!("{what}: {q:?}: {e}"));
            }
        };
        assert_eq!(in_slices, route, "{what}: {q:?}: in slices of {budget}");
        let best = reference(atlas, &areas, &q);
        if let Err(e) = check_route(atlas, &areas, &q, &route) {
            panic!("{what}: {q:?}: {e}\n{route:?}");
        }
        if std::env::var("ATLAS_STATS").is_ok() {
            eprintln!("legs {} best {best} radius {}", route.legs.len(), q.radius);
        }
        if best.is_finite() {
            assert!(
                !route.is_fallback(),
                "{what}: {q:?}: fallback for a goal {best} away\n{route:?}"
            );
            assert!(
                close(route.length, best),
                "{what}: {q:?}: length {} against the reference's {best}\n{route:?}",
                route.length
            );
            found += 1;
            crossing += usize::from(route.legs.len() > 1);
        } else {
            assert!(
                route.is_fallback(),
                "{what}: {q:?}: a route to an unreachable goal\n{route:?}"
            );
        }
    }
    (found, crossing)
}

/// A random edit of one area: a few cells or a small rectangle blocked or
/// freed.
fn random_edit(rng: &mut Rng, atlas: &mut Atlas, ids: &[AreaId]) {
    let id = ids[rng.below(ids.len() as u64) as usize];
    let grid = atlas.grid(id).unwrap();
    let (w, h) = (grid.width(), grid.height());
    let cells: Vec<(UVec2, UVec2, bool)> = (0..rng.range(1, 4))
        .map(|_| {
            let min = UVec2::new(
                rng.below(u64::from(w)) as u32,
                rng.below(u64::from(h)) as u32,
            );
            let size = UVec2::new(rng.range(1, 3) as u32, rng.range(1, 3) as u32);
            (min, (min + size).min(UVec2::new(w, h)), rng.chance(0.5))
        })
        .collect();
    atlas
        .edit_area(id, |e| {
            for &(min, max, free) in &cells {
                e.set_rect_free(URect::from_corners(min, max), free)?;
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn routes_across_areas_are_as_short_as_brute_force_before_and_after_edits() {
    let mut rng = Rng::new(0xa71a5);
    let (mut queries, mut found, mut crossing) = (0, 0, 0);
    for world in 0..40 {
        let mut atlas = Atlas::new();
        atlas.serve_radius(RADIUS).unwrap();
        let grids: Vec<Grid> = (0..rng.range(2, 5))
            .map(|_| random_grid(&mut rng, 18).grid)
            .collect();
        let ids: Vec<AreaId> = grids.iter().map(|g| atlas.add_area(g.clone())).collect();
        let mut links: Vec<LinkId> = (0..rng.range(2, 4 * ids.len() as i64))
            .map(|_| atlas.add_link(random_link(&mut rng, &ids, &grids)).unwrap())
            .collect();
        let (f, c) = check_queries(&mut rng, &atlas, &ids, 15, &format!("world {world}"));
        (found, crossing) = (found + f, crossing + c);
        // Edits, links switched, removed and added; then again.
        for round in 0..3 {
            for _ in 0..rng.range(1, 3) {
                random_edit(&mut rng, &mut atlas, &ids);
            }
            // (Some rounds edit only: routes cached between link ends must
            // follow the edits alone.)
            if let Some(&l) = links.get(rng.below(links.len() as u64) as usize)
                && rng.chance(0.5)
            {
                let enabled = atlas.link(l).unwrap().enabled;
                atlas.set_link_enabled(l, !enabled).unwrap();
            }
            if rng.chance(0.3) && links.len() > 1 {
                let l = links.swap_remove(rng.below(links.len() as u64) as usize);
                atlas.remove_link(l).unwrap();
            }
            if rng.chance(0.3) {
                let grids: Vec<Grid> = ids
                    .iter()
                    .map(|&id| atlas.grid(id).unwrap().clone())
                    .collect();
                links.push(atlas.add_link(random_link(&mut rng, &ids, &grids)).unwrap());
            }
            let what = format!("world {world}, round {round}");
            let (f, c) = check_queries(&mut rng, &atlas, &ids, 5, &what);
            (found, crossing) = (found + f, crossing + c);
        }
        queries += 30;
    }
    assert!(queries >= 1_000);
    // The worlds are not all cut off: many goals are reached, and many
    // routes cross links.
    assert!(found * 3 > queries, "{found} of {queries} reached");
    assert!(
        crossing * 6 > queries,
        "{crossing} of {queries} cross a link"
    );
}

#[test]
fn an_edit_searches_only_the_entries_it_can_change() {
    // Two open floors, stairs at the four corners of each.
    let mut atlas = Atlas::new();
    let ground = atlas.add_area(Grid::new(40, 40).unwrap());
    let upper = atlas.add_area(Grid::new(40, 40).unwrap());
    for corner in [(2.5, 2.5), (37.5, 2.5), (2.5, 37.5), (37.5, 37.5)] {
        let p = DVec2::new(corner.0, corner.1);
        atlas
            .add_link(Link::new(Place::new(ground, p), Place::new(upper, p)))
            .unwrap();
    }
    // A wall far from the straight ways between the corners (the sides and
    // diagonals): nothing to search.
    atlas
        .edit_area(ground, |e| e.set_rect_free(URect::new(8, 14, 9, 16), false))
        .unwrap();
    assert_eq!(atlas.last_work().searches, 0);
    // Freed again: no way through it is shorter than a straight line.
    atlas
        .edit_area(ground, |e| e.set_rect_free(URect::new(8, 14, 9, 16), true))
        .unwrap();
    assert_eq!(atlas.last_work().searches, 0);
    // A wall across the west side: only the pair of west corners is
    // searched again (the diagonals pass at its east end).
    atlas
        .edit_area(ground, |e| e.set_rect_free(URect::new(1, 20, 5, 21), false))
        .unwrap();
    assert_eq!(atlas.last_work().entries, 1);
    let route = atlas
        .find(
            &mut Planner::new(),
            &RouteQuery::new(
                Place::new(upper, DVec2::new(2.5, 2.5)),
                Place::new(ground, DVec2::new(2.5, 37.5)),
            ),
        )
        .unwrap();
    // Down the stairs and around the wall's east end (35.37 cells), or
    // straight across the upper floor (35) and down the other stairs.
    assert_eq!(route.legs.len(), 2);
    assert_eq!(route.legs[0].area, upper);
    assert!((route.length - 35.0).abs() < 1e-9);
    let walk = 2.5_f64.hypot(17.5) + 1.0 + 2.5_f64.hypot(16.5);
    let down = atlas
        .find(
            &mut Planner::new(),
            &RouteQuery::new(
                Place::new(ground, DVec2::new(2.5, 2.5)),
                Place::new(ground, DVec2::new(2.5, 37.5)),
            ),
        )
        .unwrap();
    assert!((down.length - 35.0_f64.min(walk)).abs() < 1e-9);
}

#[test]
fn routes_follow_an_edit_that_makes_another_floor_shorter() {
    // Two ways from the ground floor to the roof: across the first floor,
    // or across the second, one cell of cost more at each end.
    let mut atlas = Atlas::new();
    let [ground, first, second, roof] =
        [(); 4].map(|()| atlas.add_area(Grid::new(40, 12).unwrap()));
    let (west, east) = (DVec2::new(2.5, 2.5), DVec2::new(37.5, 2.5));
    for (from, to, at, cost) in [
        (ground, first, west, 0.0),
        (first, roof, east, 0.0),
        (ground, second, west, 1.0),
        (second, roof, east, 1.0),
    ] {
        let link = Link::new(Place::new(from, at), Place::new(to, at)).with_cost(cost);
        atlas.add_link(link).unwrap();
    }
    let query = RouteQuery::new(
        Place::new(ground, DVec2::new(2.5, 5.5)),
        Place::new(roof, DVec2::new(37.5, 5.5)),
    );
    let mut planner = Planner::new();
    let before = atlas.find(&mut planner, &query).unwrap();
    assert!((before.length - 41.0).abs() < 1e-9);
    assert_eq!(before.legs[1].area, first);
    // A wall across the first floor but for its last row: the way around
    // it is 39.02 cells, and the second floor's (35 + 2) is shorter.
    atlas
        .edit_area(first, |e| e.set_rect_free(URect::new(20, 0, 21, 11), false))
        .unwrap();
    let after = atlas.find(&mut planner, &query).unwrap();
    assert_eq!(after.legs[1].area, second);
    assert!((after.length - 43.0).abs() < 1e-9, "{after:?}");
}

#[test]
fn a_clone_is_a_snapshot_that_threads_can_search() {
    fn shared<T: Send + Sync + Clone>() {}
    shared::<Atlas>();
    let mut atlas = Atlas::new();
    let ground = atlas.add_area(Grid::new(10, 10).unwrap());
    let upper = atlas.add_area(Grid::new(10, 10).unwrap());
    let at = DVec2::new(8.5, 1.5);
    atlas
        .add_link(Link::new(Place::new(ground, at), Place::new(upper, at)))
        .unwrap();
    let query = RouteQuery::new(
        Place::new(ground, DVec2::new(1.5, 1.5)),
        Place::new(upper, DVec2::new(1.5, 1.5)),
    );
    let snapshot = atlas.clone();
    // A wall on the ground floor, between the start and the stairs.
    atlas
        .edit_area(ground, |e| e.set_rect_free(URect::new(5, 0, 6, 9), false))
        .unwrap();
    let now = atlas.find(&mut Planner::new(), &query).unwrap();
    let then = std::thread::spawn(move || snapshot.find(&mut Planner::new(), &query).unwrap())
        .join()
        .unwrap();
    assert!((then.length - 14.0).abs() < 1e-9);
    assert!(now.length > then.length + 1.0);
}

#[test]
fn a_task_stepped_across_an_edit_starts_over_and_answers_for_the_edited_atlas() {
    let mut atlas = Atlas::new();
    let ground = atlas.add_area(Grid::new(30, 10).unwrap());
    let upper = atlas.add_area(Grid::new(30, 10).unwrap());
    let at = DVec2::new(28.5, 1.5);
    atlas
        .add_link(Link::new(Place::new(ground, at), Place::new(upper, at)))
        .unwrap();
    let query = RouteQuery::new(
        Place::new(ground, DVec2::new(1.5, 1.5)),
        Place::new(upper, DVec2::new(1.5, 1.5)),
    );
    let mut planner = Planner::new();
    let mut task = RouteTask::new(query);
    assert!(atlas.step(&mut planner, &mut task, 1).is_none());
    atlas
        .edit_area(ground, |e| e.set_rect_free(URect::new(15, 0, 16, 9), false))
        .unwrap();
    let route = loop {
        if let Some(answer) = atlas.step(&mut planner, &mut task, 1) {
            break answer.unwrap();
        }
    };
    assert_eq!(route, atlas.find(&mut Planner::new(), &query).unwrap());
    assert!(route.length > 27.0 + 27.0 + 1.0);
}

#[test]
fn a_path_that_would_squeeze_through_a_corner_after_an_edit_is_searched_again() {
    // Around the block of the main area's middle row, by way of (1, 2);
    // or across the roof, at a cost.
    let mut atlas = Atlas::new();
    let main = atlas.add_area(Grid::from_ascii("....\n.#..\n....").unwrap());
    let roof = atlas.add_area(Grid::new(4, 3).unwrap());
    let (west, east) = (DVec2::new(0.5, 0.5), DVec2::new(2.5, 2.5));
    atlas
        .add_link(Link::new(Place::new(main, west), Place::new(roof, west)).with_cost(10.0))
        .unwrap();
    atlas
        .add_link(Link::new(Place::new(main, east), Place::new(roof, east)))
        .unwrap();
    let query = RouteQuery::new(Place::new(main, west), Place::new(roof, east));
    let mut planner = Planner::new();
    let before = atlas.find(&mut planner, &query).unwrap();
    assert!(
        (before.length - 2.0 * 2.5_f64.sqrt()).abs() < 1e-9,
        "{before:?}"
    );
    // Two more blocked cells: (1, 2) and (2, 1) become corners of two
    // blocked cells each, and the west end is walled in on the main area.
    atlas
        .edit_area(main, |e| {
            e.set_free(UVec2::new(1, 0), false)?;
            e.set_free(UVec2::new(0, 2), false)
        })
        .unwrap();
    let after = atlas.find(&mut planner, &query).unwrap();
    assert_eq!(after.legs[0].waypoints, vec![west]);
    assert!(
        (after.length - (10.0 + 8.0_f64.sqrt())).abs() < 1e-9,
        "{after:?}"
    );
}

#[test]
fn routes_that_read_shared_goal_legs_are_as_short_as_their_own() {
    let mut rng = Rng::new(0x60a1);
    let mut checked = 0;
    for _ in 0..30 {
        let mut atlas = Atlas::new();
        atlas.serve_radius(RADIUS).unwrap();
        let grids: Vec<Grid> = (0..rng.range(2, 5))
            .map(|_| random_grid(&mut rng, 18).grid)
            .collect();
        let ids: Vec<AreaId> = grids.iter().map(|g| atlas.add_area(g.clone())).collect();
        for _ in 0..rng.range(2, 4 * ids.len() as i64) {
            atlas.add_link(random_link(&mut rng, &ids, &grids)).unwrap();
        }
        let areas: Vec<RefArea> = grids.iter().map(RefArea::new).collect();
        let mut planner = Planner::new();
        // One goal and its legs; many queries to it, each on its own and
        // reading the legs (sliced, on a planner that ran other searches).
        let goal = random_query(&mut rng, &ids, &areas);
        for radius in [0.0, RADIUS] {
            let legs = Arc::new(atlas.goal_legs(&mut planner, goal.to, radius).unwrap());
            for _ in 0..8 {
                let from = random_query(&mut rng, &ids, &areas).from;
                let query = RouteQuery::new(from, goal.to)
                    .with_radius(radius)
                    .with_profiles(goal.profiles);
                let alone = atlas.find(&mut planner, &query);
                let mut task = RouteTask::new(query).with_goal_legs(Arc::clone(&legs));
                let shared = loop {
                    if let Some(answer) = atlas.step(&mut planner, &mut task, 40) {
                        break answer;
                    }
                };
                match (&alone, &shared) {
                    (Ok(a), Ok(b)) => {
                        assert!(close(a.length, b.length), "{a:?}\n{b:?}");
                        assert_eq!(a.kind, b.kind);
                        assert_eq!(a.end(), b.end());
                    }
                    (a, b) => assert_eq!(a, b),
                }
                checked += 1;
            }
        }
        // Legs of an older atlas are not read: still the right answer.
        let legs = Arc::new(atlas.goal_legs(&mut planner, goal.to, 0.0).unwrap());
        random_edit(&mut rng, &mut atlas, &ids);
        let query = RouteQuery::new(random_query(&mut rng, &ids, &areas).from, goal.to);
        let mut task = RouteTask::new(query).with_goal_legs(legs);
        let shared = loop {
            if let Some(answer) = atlas.step(&mut planner, &mut task, u64::MAX) {
                break answer;
            }
        };
        let alone = atlas.find(&mut planner, &query);
        assert_eq!(alone.map(|r| r.length), shared.map(|r| r.length));
    }
    assert!(checked >= 400, "{checked}");
}
