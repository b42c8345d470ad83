//! `atlas`: worlds of one to four areas (grids of up to 12 x 12 cells)
//! joined by links, then up to 32 operations on them: route queries, edits
//! of an area (cells and rectangles blocked or freed, some outside the
//! grid), an area replaced by another grid, links enabled, disabled,
//! removed, added and replaced (some with a NaN, negative or infinite cost
//! or radius, a non-finite end, an unknown area or id), snapshots (clones)
//! and radii served (some invalid). The atlas serves point agents and,
//! now and then, one radius (a whole number of 64ths of a cell up to 1),
//! before or after its areas and links are added. Link ends lie anywhere:
//! in walls, outside the grid, on corners, on the lattices of
//! [`Input::point`]; costs from 0 to 1e300, one way or both, disabled,
//! narrow, for some profiles only. Queries start and end anywhere (unknown
//! areas and non-finite points too), for radii below, at and above the
//! served ones (negative, NaN, infinite), any profiles, either fallback
//! policy.
//!
//! What must hold (the atlas module's docs):
//!
//! - nothing panics; bad input gives the documented [`AtlasError`], and a
//!   refused change changes nothing (an edit's cells before the one out of
//!   bounds stay applied, as [`Atlas::edit_area`] says); changing only a
//!   link's cost, directions, radius, profiles or enabled flag searches
//!   nothing;
//! - every route: legs, each with waypoints, the first from the start (or
//!   where the start rule moved it, `start_moved_from` then the start),
//!   each consecutive two mutually visible on the leg's area, keeping the
//!   served radius from walls (exactly, as the crate's tests measure it) or, for a point
//!   agent, keeping the double-corner rules of `SPEC.md` (a leg leaves and
//!   reaches a double corner through its south-east cell, and never passes
//!   one from one free side to the other), each leg's `length` its
//!   polyline's; legs joined by the link they name, which exists, allows
//!   the agent, is crossed in a direction it allows, from end to end (for
//!   a point agent, ends where it may stand), at its cost; `length` the
//!   legs' lengths plus the costs (1e-9, relative); a found route ends at
//!   the goal, a fallback one names it;
//! - exact, for point agents: the length of a found route is a brute
//!   force's (Dijkstra over the start, the goal and the link ends where a
//!   point agent may stand, a valid point and no double corner, each two
//!   of one area joined by the reference optimum of `tests/common`, each
//!   link the agent may cross by its cost), and a goal the brute force
//!   cannot reach gets a fallback route: the start alone if no point of
//!   the goal's area is reached, else a route that ends in the goal's area
//!   as close to the goal as the closest free point of the regions reached
//!   there (within the crate's 1/1024 cell nudge off double corners);
//! - with [`FallbackPolicy::Fail`], the same route when the goal is
//!   reached, else [`PlanError::Unreachable`] naming the fallback route's
//!   end;
//! - every answer is the answer of an atlas built afresh on the same grids
//!   (read again from their cells), links and radii (length within 1e-9,
//!   relative, kind, moved start; or the same error): the tables kept up to
//!   date through edits are the tables built from scratch;
//! - a clone taken before later changes answers at the end as the atlas did
//!   when the clone was taken;
//! - a query that reads the legs to its goal searched once for many
//!   ([`Atlas::goal_legs`](bevy_anyangle::atlas::Atlas::goal_legs)) answers
//!   as it does alone.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use bevy_anyangle::atlas::{
    AreaId, Atlas, AtlasError, Link, LinkId, Place, Route, RouteQuery, RouteTask,
};
use bevy_anyangle::clearance::{ClearanceError, MAX_RADIUS};
use bevy_anyangle::grid::Grid;
use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::prelude::*;
use bevy_anyangle::search::Role;

use super::common::{NUDGE, Reference, close, keeps_radius};
use super::input::Input;
use super::picture;

/// Areas, at most.
const MAX_AREAS: u32 = 4;

/// Largest side of an area's grid, in cells.
const MAX_SIDE: u32 = 12;

/// Link ids given out (removed ones included), at most: further additions
/// are skipped.
const MAX_LINK_SLOTS: usize = 16;

/// Operations after the world is built, at most.
const MAX_OPS: usize = 32;

/// Clones kept to be asked again at the end, at most.
const MAX_SNAPSHOTS: usize = 2;

/// Served radii besides 0, at most.
const MAX_RADII: usize = 2;

/// Link costs (valid ones).
const COSTS: [f64; 16] = [
    0.0, 0.0, -0.0, 0.5, 1.0, 1.0, 2.0, 3.25, 0.125, 7.0, 12.0, 1e3, 1e12, 1e300, 5e-324, 1.5,
];

/// Link costs [`Atlas::add_link`] refuses.
const BAD_COSTS: [f64; 5] = [-1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -5e-324];

/// Profile masks, of links and of agents.
const PROFILES: [u64; 8] = [u64::MAX, u64::MAX, 1, 2, 3, 0, 1 << 63, 0b101];

/// Points that are not finite.
const NON_FINITE: [DVec2; 4] = [
    DVec2::NAN,
    DVec2::new(f64::INFINITY, 0.5),
    DVec2::new(0.5, f64::NEG_INFINITY),
    DVec2::new(f64::NAN, 1.0),
];

/// The id of area `k`: areas are numbered in order, so every atlas gives
/// its `k`-th area the same id (ids of areas an atlas does not have serve
/// as unknown ones).
fn area_id(k: usize) -> AreaId {
    static IDS: OnceLock<Vec<AreaId>> = OnceLock::new();
    IDS.get_or_init(|| {
        let mut atlas = Atlas::new();
        let grid = Grid::new(1, 1).expect("a 1 x 1 grid");
        (0..MAX_AREAS as usize + 4)
            .map(|_| atlas.add_area(grid.clone()))
            .collect()
    })[k]
}

/// The id of link `k` (links are numbered in order too).
fn link_id(k: usize) -> LinkId {
    static IDS: OnceLock<Vec<LinkId>> = OnceLock::new();
    IDS.get_or_init(|| {
        let mut atlas = Atlas::new();
        // A blocked cell: its link ends are no place to stand, so adding
        // links searches nothing.
        let area = atlas.add_area(Grid::from_ascii("#").expect("a picture"));
        let place = Place::new(area, DVec2::splat(0.5));
        (0..MAX_LINK_SLOTS + 4)
            .map(|_| {
                atlas
                    .add_link(Link::new(place, place))
                    .expect("a valid link")
            })
            .collect()
    })[k]
}

/// Runs the `atlas` check on one input.
///
/// # Panics
///
/// With a report (the world, the operations so far) when the atlas breaks
/// a promise.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let mut world = World::decode(&mut input);
    for _ in 0..MAX_OPS {
        if input.is_empty() {
            break;
        }
        world.op(&mut input);
    }
    // Every input asks at least one question (past the end: zeros).
    world.query(&mut input);
    world.check_snapshots();
}

/// What the reference knows of one area's grid.
struct RefArea {
    exact: Reference,
    /// Single-area optima between two points (the key: both points'
    /// coordinates' bits, the smaller pair first).
    pairs: HashMap<[u64; 4], f64>,
}

impl RefArea {
    fn new(grid: &Grid) -> Self {
        RefArea {
            exact: Reference::new(grid),
            pairs: HashMap::new(),
        }
    }

    /// The shortest path's length between `a` and `b` for a point agent,
    /// infinite if there is none or one is not a valid point.
    fn optimum(&mut self, a: DVec2, b: DVec2) -> f64 {
        let (ka, kb) = (
            [a.x.to_bits(), a.y.to_bits()],
            [b.x.to_bits(), b.y.to_bits()],
        );
        let (p, q, key) = if ka <= kb {
            (a, b, [ka[0], ka[1], kb[0], kb[1]])
        } else {
            (b, a, [kb[0], kb[1], ka[0], ka[1]])
        };
        let exact = &self.exact;
        *self
            .pairs
            .entry(key)
            .or_insert_with(|| exact.optimum(p, q).unwrap_or(f64::INFINITY))
    }
}

/// A snapshot: a clone of the atlas, and the answers the atlas gave when
/// it was taken.
struct Snapshot {
    atlas: Atlas,
    answers: Vec<(RouteQuery, Result<Route, AtlasError>)>,
    at: usize,
}

/// The atlas under test and what the check knows of it.
struct World {
    atlas: Atlas,
    planner: Planner,
    /// The links the atlas should hold, by id.
    links: Vec<Option<Link>>,
    /// The radii the atlas should serve, ascending, 0 first.
    served: Vec<f64>,
    /// Whether the first radius was served after the areas and links were
    /// added.
    served_late: bool,
    /// The reference of each area, dropped when the area changes.
    refs: Vec<Option<RefArea>>,
    /// An atlas built afresh on the current world, dropped when it changes.
    fresh: Option<(Atlas, Planner)>,
    snapshots: Vec<Snapshot>,
    /// The last queries asked, for snapshots.
    recent: Vec<RouteQuery>,
    /// What was done, for reports.
    log: Vec<String>,
}

/// One edit of an area's grid.
#[derive(Clone, Copy, Debug)]
enum Edit {
    Cell(UVec2, bool),
    Rect(URect, bool),
}

impl World {
    /// Areas, links and radii.
    fn decode(input: &mut Input) -> Self {
        let areas = 1 + input.below(MAX_AREAS) as usize;
        let setup = input.byte();
        let radius = (setup & 1 == 1).then(|| f64::from(1 + input.below(64)) / 64.0);
        let served_late = setup & 2 != 0;
        let mut world = World {
            atlas: Atlas::new(),
            planner: Planner::new(),
            links: Vec::new(),
            served: vec![0.0],
            served_late,
            refs: Vec::new(),
            fresh: None,
            snapshots: Vec::new(),
            recent: Vec::new(),
            log: Vec::new(),
        };
        if let (Some(r), false) = (radius, served_late) {
            world.serve(r);
        }
        for k in 0..areas {
            let grid = input.grid_within(MAX_SIDE);
            let id = world.atlas.add_area(grid);
            world.refs.push(None);
            world.log.push(format!("add area {k}"));
            assert_eq!(id, area_id(k), "{}", world.report("area ids in order"));
        }
        for _ in 0..input.below(7) {
            world.add_link(input);
        }
        if let (Some(r), true) = (radius, served_late) {
            world.serve(r);
        }
        world
    }

    fn areas(&self) -> usize {
        self.atlas.area_count()
    }

    /// The size of area `k` (4 x 4 for an area the atlas does not have).
    fn size(&self, k: usize) -> (u32, u32) {
        self.atlas
            .grid(area_id(k))
            .map_or((4, 4), |g| (g.width(), g.height()))
    }

    /// An area: mostly one of the atlas's, now and then one it does not
    /// have. The index and whether the atlas has it.
    fn area(&self, input: &mut Input) -> (usize, bool) {
        let n = self.areas();
        let v = input.below(16) as usize;
        let k = if v == 15 {
            n + input.below(3) as usize
        } else {
            v % n
        };
        (k, k < n)
    }

    /// A place: an area as [`World::area`] picks it; a free cell's centre
    /// (the first one for a zero byte), a point as [`Input::point`] picks it
    /// for that area's size, or now and then a point that is not finite.
    fn place(&self, input: &mut Input) -> Place {
        self.place_centred(input, 10)
    }

    /// [`World::place`], a free cell's centre for `centres` values out of
    /// 31.
    fn place_centred(&self, input: &mut Input, centres: u32) -> Place {
        let (k, _) = self.area(input);
        let (w, h) = self.size(k);
        let point = match input.below(32) {
            c if c < centres => {
                let pick = input.byte();
                self.atlas
                    .grid(area_id(k))
                    .and_then(|g| free_centre(g, pick))
                    .unwrap_or(DVec2::splat(0.5))
            }
            31 => NON_FINITE[input.below(4) as usize],
            _ => input.point(w, h),
        };
        Place::new(area_id(k), point)
    }

    /// The largest radius served.
    fn top_radius(&self) -> f64 {
        self.served[self.served.len() - 1]
    }

    /// A link's cost: mostly valid, now and then one the atlas refuses.
    fn cost(input: &mut Input) -> f64 {
        if input.below(8) == 7 {
            BAD_COSTS[input.below(BAD_COSTS.len() as u32) as usize]
        } else {
            COSTS[input.below(COSTS.len() as u32) as usize]
        }
    }

    /// A link's largest radius: mostly any, else narrow ones, now and then
    /// one the atlas refuses.
    fn max_radius(&self, input: &mut Input) -> f64 {
        let top = self.top_radius();
        match input.below(16) {
            0..=6 => f64::INFINITY,
            7 => 0.0,
            8 => -0.0,
            9 => top,
            10 => top / 2.0,
            11 => 0.25,
            12 => 1.0,
            13 => 1e-9,
            14 => f64::from(input.below(65)) / 64.0,
            _ => [f64::NAN, -1.0, f64::NEG_INFINITY][input.below(3) as usize],
        }
    }

    /// A link: ends anywhere, any cost, flags, radius and profiles.
    fn link(&self, input: &mut Input) -> Link {
        let from = self.place_centred(input, 16);
        let to = self.place_centred(input, 16);
        let flags = input.byte();
        let mut link = Link::new(from, to)
            .with_cost(Self::cost(input))
            .with_max_radius(self.max_radius(input))
            .with_profiles(PROFILES[input.below(PROFILES.len() as u32) as usize]);
        if flags & 1 == 1 {
            link = link.one_way();
        }
        if flags & 6 == 6 {
            link = link.with_enabled(false);
        }
        link
    }

    /// The errors [`Atlas::add_link`] may give for `link` (none: it must
    /// accept it).
    fn link_errors(&self, link: &Link) -> Vec<AtlasError> {
        let mut errors = Vec::new();
        for end in [link.from, link.to] {
            if end.area.index() >= self.areas() {
                errors.push(AtlasError::UnknownArea(end.area));
            }
            if !end.point.is_finite() {
                errors.push(AtlasError::NonFiniteEnd);
            }
        }
        if !(link.cost.is_finite() && link.cost >= 0.0) {
            errors.push(AtlasError::BadCost(link.cost));
        }
        if link.max_radius.is_nan() || link.max_radius < 0.0 {
            errors.push(AtlasError::BadMaxRadius(link.max_radius));
        }
        errors
    }

    /// A link id: one given out (maybe removed since), or one not given
    /// out. The id and the link it names now.
    fn pick_link(&self, input: &mut Input) -> (LinkId, Option<Link>) {
        let k = input.below(self.links.len() as u32 + 2) as usize;
        (link_id(k), self.links.get(k).copied().flatten())
    }

    /// The world changed: the fresh atlas is built again when needed.
    fn changed(&mut self) {
        self.fresh = None;
        self.check_links();
    }

    /// The atlas holds the links it should.
    fn check_links(&self) {
        let held: Vec<(LinkId, Link)> = self.atlas.links().map(|(id, l)| (id, *l)).collect();
        let wanted: Vec<(LinkId, Link)> = self
            .links
            .iter()
            .enumerate()
            .filter_map(|(k, l)| l.map(|l| (link_id(k), l)))
            .collect();
        assert!(
            same_links(&held, &wanted),
            "{}",
            self.report(&format!("the atlas holds links {held:?}"))
        );
        for (k, l) in self.links.iter().enumerate() {
            let got = self.atlas.link(link_id(k)).copied();
            assert!(
                format!("{got:?}") == format!("{l:?}"),
                "{}",
                self.report(&format!("link {k} is {got:?}"))
            );
        }
    }

    /// One operation.
    fn op(&mut self, input: &mut Input) {
        match input.below(16) {
            6 | 7 => self.edit(input),
            8 => self.toggle(input),
            9 => self.remove(input),
            10 => self.add_link(input),
            11 => self.set_link(input),
            12 => self.snapshot(input),
            13 => self.replace(input),
            14 => {
                let radius = match input.below(8) {
                    0..=4 => f64::from(1 + input.below(64)) / 64.0,
                    5 => [0.0, -0.0][input.below(2) as usize],
                    6 => [
                        f64::NAN,
                        -1.0 / 64.0,
                        f64::INFINITY,
                        MAX_RADIUS + 1.0,
                        1e300,
                    ][input.below(5) as usize],
                    _ => self.served[input.below(self.served.len() as u32) as usize],
                };
                self.serve(radius);
            }
            _ => self.query(input),
        }
    }

    /// Serves `radius` (unless that would serve too many).
    fn serve(&mut self, radius: f64) {
        let valid = (0.0..=MAX_RADIUS).contains(&radius);
        let new = valid && !self.served.contains(&radius);
        if new && self.served.len() > MAX_RADII {
            return;
        }
        self.log.push(format!("serve radius {radius}"));
        let result = self.atlas.serve_radius(radius);
        let ok = match &result {
            Ok(()) => valid,
            Err(AtlasError::Radius(ClearanceError::BadRadius(r))) => {
                !valid && same_f64(*r, radius) && !(radius.is_finite() && radius > MAX_RADIUS)
            }
            Err(AtlasError::Radius(ClearanceError::TooLarge(r))) => {
                same_f64(*r, radius) && radius.is_finite() && radius > MAX_RADIUS
            }
            Err(_) => false,
        };
        assert!(
            ok,
            "{}",
            self.report(&format!("serve_radius({radius}) gives {result:?}"))
        );
        if new {
            self.served.push(radius + 0.0);
            self.served.sort_by(f64::total_cmp);
            self.fresh = None;
        }
        assert!(
            self.atlas.radii() == self.served.as_slice(),
            "{}",
            self.report(&format!("the atlas serves {:?}", self.atlas.radii()))
        );
    }

    /// Adds a decoded link (valid or not).
    fn add_link(&mut self, input: &mut Input) {
        let link = self.link(input);
        if self.links.len() >= MAX_LINK_SLOTS {
            return;
        }
        self.log.push(format!("add link {link:?}"));
        let errors = self.link_errors(&link);
        let result = self.atlas.add_link(link);
        match &result {
            Ok(id) if errors.is_empty() && *id == link_id(self.links.len()) => {
                self.links.push(Some(link));
            }
            Err(e) if is_one_of(e, &errors) => {}
            _ => panic!(
                "{}",
                self.report(&format!(
                    "add_link gives {result:?}, expected one of {errors:?}"
                ))
            ),
        }
        self.changed();
    }

    /// Enables or disables a link (maybe a removed or unknown one).
    fn toggle(&mut self, input: &mut Input) {
        let (id, link) = self.pick_link(input);
        let enabled = match link {
            Some(l) if input.below(4) != 0 => !l.enabled,
            _ => input.bit(),
        };
        self.log.push(format!("set link {id:?} enabled {enabled}"));
        let result = self.atlas.set_link_enabled(id, enabled);
        match (&result, link) {
            (Ok(()), Some(l)) => {
                assert_eq!(
                    self.atlas.last_work().searches,
                    0,
                    "{}",
                    self.report("enabling or disabling a link searched")
                );
                self.links[id.index()] = Some(l.with_enabled(enabled));
            }
            (Err(AtlasError::UnknownLink(e)), None) if *e == id => {}
            _ => panic!(
                "{}",
                self.report(&format!(
                    "set_link_enabled gives {result:?} for link {link:?}"
                ))
            ),
        }
        self.changed();
    }

    /// Removes a link (maybe a removed or unknown one).
    fn remove(&mut self, input: &mut Input) {
        let (id, link) = self.pick_link(input);
        self.log.push(format!("remove link {id:?}"));
        let result = self.atlas.remove_link(id);
        match (&result, link) {
            (Ok(got), Some(l)) if same_links(&[(id, *got)], &[(id, l)]) => {
                self.links[id.index()] = None;
            }
            (Err(AtlasError::UnknownLink(e)), None) if *e == id => {}
            _ => panic!(
                "{}",
                self.report(&format!("remove_link gives {result:?} for link {link:?}"))
            ),
        }
        self.changed();
    }

    /// Replaces a link (maybe a removed or unknown one): a new link, or the
    /// old one with a new cost, new flags, or an end moved.
    fn set_link(&mut self, input: &mut Input) {
        let (id, old) = self.pick_link(input);
        let mode = input.below(4);
        let base = match old {
            Some(l) if mode != 0 => l,
            _ => self.link(input),
        };
        let link = match mode {
            1 => base.with_cost(Self::cost(input)),
            2 => {
                let flags = input.byte();
                Link {
                    both_ways: flags & 1 == 0,
                    enabled: flags & 2 == 0,
                    max_radius: self.max_radius(input),
                    profiles: PROFILES[input.below(PROFILES.len() as u32) as usize],
                    ..base
                }
            }
            3 => {
                let place = self.place(input);
                if input.bit() {
                    Link {
                        from: place,
                        ..base
                    }
                } else {
                    Link { to: place, ..base }
                }
            }
            _ => base,
        };
        self.log.push(format!("set link {id:?} to {link:?}"));
        let mut errors = self.link_errors(&link);
        if old.is_none() {
            errors.push(AtlasError::UnknownLink(id));
        }
        let result = self.atlas.set_link(id, link);
        match (&result, old) {
            (Ok(()), Some(old)) if errors.is_empty() => {
                self.links[id.index()] = Some(link);
                let moved = old.from != link.from || old.to != link.to;
                assert!(
                    moved || self.atlas.last_work().searches == 0,
                    "{}",
                    self.report("a link changed but for its ends searched")
                );
            }
            (Err(e), _) if is_one_of(e, &errors) => {}
            _ => panic!(
                "{}",
                self.report(&format!(
                    "set_link gives {result:?}, expected one of {errors:?}"
                ))
            ),
        }
        self.changed();
    }

    /// Edits an area (maybe an unknown one): cells and rectangles, some
    /// out of bounds.
    fn edit(&mut self, input: &mut Input) {
        let (k, known) = self.area(input);
        let (w, h) = self.size(k);
        let edits: Vec<Edit> = (0..=input.below(3))
            .map(|_| {
                let free = input.bit();
                match input.below(8) {
                    0 | 1 => Edit::Cell(UVec2::new(input.below(w + 2), input.below(h + 2)), free),
                    // Inverted: no cell (unless it leaves the grid).
                    2 => {
                        let max = UVec2::new(input.below(w + 1), input.below(h + 1));
                        let min = max + UVec2::new(1 + input.below(3), input.below(3));
                        Edit::Rect(URect { min, max }, free)
                    }
                    3 => Edit::Rect(
                        URect::new(0, 0, w + input.below(2), h + 1 - input.below(2)),
                        free,
                    ),
                    _ => {
                        let min = UVec2::new(input.below(w + 1), input.below(h + 1));
                        let max = min + UVec2::new(input.below(5), input.below(5));
                        Edit::Rect(URect { min, max }, free)
                    }
                }
            })
            .collect();
        self.log.push(format!("edit area {k}: {edits:?}"));
        // The cells as the edits should leave them, and the error.
        let mut cells = self.atlas.grid(area_id(k)).map(cells_of);
        let mut out_of_bounds = false;
        if let Some(cells) = &mut cells {
            for e in &edits {
                let (rect, free) = match *e {
                    Edit::Cell(c, free) => {
                        if c.x >= w || c.y >= h {
                            out_of_bounds = true;
                            break;
                        }
                        (URect::from_corners(c, c + UVec2::ONE), free)
                    }
                    Edit::Rect(r, free) => {
                        if r.max.x > w || r.max.y > h {
                            out_of_bounds = true;
                            break;
                        }
                        (r, free)
                    }
                };
                for y in rect.min.y..rect.max.y {
                    for x in rect.min.x..rect.max.x {
                        cells[(y * w + x) as usize] = free;
                    }
                }
            }
        }
        let result = self.atlas.edit_area(area_id(k), |editor| {
            for e in &edits {
                match *e {
                    Edit::Cell(c, free) => editor.set_free(c, free)?,
                    Edit::Rect(r, free) => editor.set_rect_free(r, free)?,
                };
            }
            Ok(())
        });
        let ok = match &result {
            Ok(()) => known && !out_of_bounds,
            Err(AtlasError::UnknownArea(a)) => !known && *a == area_id(k),
            Err(AtlasError::Grid(GridError::OutOfBounds { width, height, .. })) => {
                known && out_of_bounds && (*width, *height) == (w, h)
            }
            Err(_) => false,
        };
        assert!(
            ok,
            "{}",
            self.report(&format!("edit_area gives {result:?}"))
        );
        if let Some(cells) = cells {
            let now = self.atlas.grid(area_id(k)).map(cells_of);
            assert!(
                now.as_ref() == Some(&cells),
                "{}",
                self.report(&format!("area {k}'s cells after its edits"))
            );
            self.refs[k] = None;
        }
        self.changed();
    }

    /// Replaces an area's grid (maybe an unknown area's).
    fn replace(&mut self, input: &mut Input) {
        let (k, known) = self.area(input);
        let grid = input.grid_within(MAX_SIDE);
        self.log
            .push(format!("replace area {k} with\n{}", picture(&grid)));
        let cells = cells_of(&grid);
        let size = (grid.width(), grid.height());
        let result = self.atlas.replace_area(area_id(k), grid);
        let ok = match &result {
            Ok(()) => known,
            Err(AtlasError::UnknownArea(a)) => !known && *a == area_id(k),
            Err(_) => false,
        };
        assert!(
            ok,
            "{}",
            self.report(&format!("replace_area gives {result:?}"))
        );
        if known {
            let now = self.atlas.grid(area_id(k));
            assert!(
                now.is_some_and(|g| (g.width(), g.height()) == size && cells_of(g) == cells),
                "{}",
                self.report(&format!("area {k}'s grid after its replacement"))
            );
            self.refs[k] = None;
        }
        self.changed();
    }

    /// Takes a clone, with the atlas's answers to the last queries and a
    /// new one.
    fn snapshot(&mut self, input: &mut Input) {
        let extra = self.decode_query(input);
        if self.snapshots.len() >= MAX_SNAPSHOTS {
            return;
        }
        self.log.push(format!("snapshot {}", self.snapshots.len()));
        let atlas = self.atlas.clone();
        let mut answers = Vec::new();
        for q in self.recent.iter().copied().chain([extra]) {
            answers.push((q, self.atlas.find(&mut self.planner, &q)));
        }
        self.snapshots.push(Snapshot {
            atlas,
            answers,
            at: self.log.len(),
        });
    }

    /// Asks every snapshot its questions again.
    fn check_snapshots(&self) {
        let mut planner = Planner::new();
        for (k, s) in self.snapshots.iter().enumerate() {
            for (q, then) in &s.answers {
                let now = s.atlas.find(&mut planner, q);
                assert!(
                    same_answer(then, &now),
                    "{}",
                    self.report(&format!(
                        "snapshot {k} (taken after operation {}) answers {q:?} with {now:?}, \
                         the atlas answered {then:?} then",
                        s.at
                    ))
                );
            }
        }
    }

    /// A query: places anywhere, a radius, profiles, and whether to ask with
    /// [`FallbackPolicy::Fail`] too.
    fn decode_query(&self, input: &mut Input) -> RouteQuery {
        let from = self.place(input);
        let to = self.place(input);
        let top = self.top_radius();
        let radius = match input.below(16) {
            0..=8 => 0.0,
            9 | 10 => top,
            11 => top / 2.0,
            12 => f64::from(1 + input.below(64)) / 64.0,
            13 => top + 1.0 / 64.0,
            14 => -1.0 / 64.0,
            _ => [f64::NAN, f64::INFINITY, -0.0, f64::NEG_INFINITY][input.below(4) as usize],
        };
        let profiles = PROFILES[input.below(PROFILES.len() as u32) as usize];
        let fallback = input.fallback();
        RouteQuery::new(from, to)
            .with_radius(radius)
            .with_profiles(profiles)
            .with_fallback(fallback)
    }

    /// Asks a decoded query and checks the answers.
    fn query(&mut self, input: &mut Input) {
        let q = self.decode_query(input);
        self.log.push(format!("query {q:?}"));
        if self.recent.len() >= 3 {
            self.recent.remove(0);
        }
        self.recent.push(q);
        let fail = q.fallback == FallbackPolicy::Fail;
        let q = q.with_fallback(FallbackPolicy::ClosestReachable);
        let answer = self.atlas.find(&mut self.planner, &q);
        self.check_answer(&q, &answer);
        if let Ok(route) = &answer {
            if let Err(why) = self.check_route(&q, route) {
                panic!("{}", self.report(&format!("{q:?}: {why}: {route:?}")));
            }
            let class = self.class_of(q.radius);
            if class == 0.0 {
                self.check_exact(&q, route);
            }
        }
        // As a fresh atlas answers.
        let fresh = self.fresh_answer(&q);
        assert!(
            same_answer(&answer, &fresh),
            "{}",
            self.report(&format!(
                "{q:?}: the atlas answers {answer:?}, an atlas built afresh {fresh:?}"
            ))
        );
        // Reading the legs to its goal, searched once for many queries:
        // as short.
        if let Ok(legs) = self.atlas.goal_legs(&mut self.planner, q.to, q.radius) {
            let mut task = RouteTask::new(q).with_goal_legs(Arc::new(legs));
            let shared = loop {
                if let Some(answer) = self.atlas.step(&mut self.planner, &mut task, u64::MAX) {
                    break answer;
                }
            };
            assert!(
                same_answer(&answer, &shared),
                "{}",
                self.report(&format!(
                    "{q:?}: the atlas answers {answer:?}, with shared legs to the goal {shared:?}"
                ))
            );
        }
        if fail {
            let q = q.with_fallback(FallbackPolicy::Fail);
            let strict = self.atlas.find(&mut self.planner, &q);
            let agrees = match (&answer, &strict) {
                (Ok(route), Err(AtlasError::Plan(PlanError::Unreachable { closest })))
                    if route.is_fallback() =>
                {
                    closest.distance(route.end().point) <= 1e-9
                }
                (Ok(route), Ok(_)) if !route.is_fallback() => same_answer(&answer, &strict),
                (Err(_), Err(_)) => same_answer(&answer, &strict),
                _ => false,
            };
            assert!(
                agrees,
                "{}",
                self.report(&format!(
                    "{q:?}: with Fail {strict:?}, with ClosestReachable {answer:?}"
                ))
            );
        }
    }

    /// The smallest served radius at least `radius` (NaN if none).
    fn class_of(&self, radius: f64) -> f64 {
        self.served
            .iter()
            .copied()
            .find(|&r| r >= radius)
            .unwrap_or(f64::NAN)
    }

    /// An answer is an error exactly when it must be, and the right one.
    fn check_answer(&self, q: &RouteQuery, answer: &Result<Route, AtlasError>) {
        let mut errors = Vec::new();
        if !(q.radius >= 0.0 && q.radius <= self.top_radius()) {
            errors.push(AtlasError::RadiusNotServed(q.radius));
        }
        for area in [q.from.area, q.to.area] {
            if area.index() >= self.areas() {
                errors.push(AtlasError::UnknownArea(area));
            }
        }
        if !q.to.point.is_finite() {
            errors.push(PlanError::NonFinite(Role::Goal).into());
        }
        if !q.from.point.is_finite() {
            errors.push(PlanError::NonFinite(Role::Start).into());
        }
        let ok = if errors.is_empty() {
            // Only the start area's room for the agent can fail the query.
            let class = self.class_of(q.radius);
            let grid = self.atlas.grid(q.from.area).expect("a known area");
            let room = if class == 0.0 {
                grid.free_count() > 0
            } else {
                self.atlas
                    .mesh(q.from.area, q.radius)
                    .is_some_and(|m| m.polygon_count() > 0)
            };
            match answer {
                Ok(_) => room,
                Err(AtlasError::Plan(PlanError::NoFreeCell)) => !room,
                Err(AtlasError::Plan(PlanError::NoRoom)) => room && class > 0.0,
                Err(_) => false,
            }
        } else {
            matches!(answer, Err(e) if is_one_of(e, &errors))
        };
        assert!(
            ok,
            "{}",
            self.report(&format!(
                "{q:?} gives {answer:?}; errors that apply: {errors:?}"
            ))
        );
    }

    /// Checks `route` for `q` (see the module docs).
    fn check_route(&mut self, q: &RouteQuery, route: &Route) -> Result<(), String> {
        let class = self.class_of(q.radius);
        let first = route.legs.first().ok_or("no legs")?;
        if route.legs.iter().any(|l| l.waypoints.is_empty()) {
            return Err("a leg without waypoints".into());
        }
        if first.area != q.from.area {
            return Err(format!("starts on area {:?}", first.area));
        }
        let start = first.waypoints[0];
        match route.start_moved_from {
            None if start != q.from.point => {
                return Err(format!("starts at {start}, not at the start"));
            }
            Some(p) if p != q.from.point || start == p => {
                return Err(format!("start moved from {p} to {start}"));
            }
            _ => {}
        }
        let mut total = 0.0;
        for (k, leg) in route.legs.iter().enumerate() {
            let grid = self
                .atlas
                .grid(leg.area)
                .ok_or_else(|| format!("leg {k} on an unknown area"))?;
            for w in leg.waypoints.windows(2) {
                if !line_of_sight(grid, w[0], w[1]) {
                    return Err(format!("leg {k}: {} does not see {}", w[0], w[1]));
                }
            }
            if class > 0.0 {
                keeps_radius(grid, &leg.waypoints, class).map_err(|e| format!("leg {k}: {e}"))?;
            } else {
                double_corners(grid, &leg.waypoints).map_err(|e| format!("leg {k}: {e}"))?;
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
                    let link = *self
                        .atlas
                        .link(c.link)
                        .ok_or_else(|| format!("leg {k}: link {:?} does not exist", c.link))?;
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
                    if class == 0.0 {
                        for end in [here, there] {
                            if !self.stands(end.area.index(), end.point) {
                                return Err(format!(
                                    "leg {k}: link {:?} crossed at {end:?}, where a point \
                                     agent may not stand",
                                    c.link
                                ));
                            }
                        }
                    }
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
        match route.kind {
            PathKind::Found if route.end() != q.to => {
                Err(format!("found, but ends at {:?}", route.end()))
            }
            PathKind::Fallback { requested_goal } if requested_goal != q.to.point => {
                Err(format!("a fallback for goal {requested_goal}"))
            }
            _ => Ok(()),
        }
    }

    /// The reference of area `k`, built if needed.
    fn reference(&mut self, k: usize) -> &mut RefArea {
        if self.refs[k].is_none() {
            let grid = self.atlas.grid(area_id(k)).expect("a known area");
            self.refs[k] = Some(RefArea::new(grid));
        }
        self.refs[k].as_mut().expect("just built")
    }

    /// Whether a point agent may stand at link end `p` of area `k`: a valid
    /// point of the grid, and no double corner.
    fn stands(&mut self, k: usize, p: DVec2) -> bool {
        let exact = &self.reference(k).exact;
        exact.endpoint_region(p).is_some() && !exact.on_double_corner(p)
    }

    /// A point agent's route against the brute force (see the module docs).
    fn check_exact(&mut self, q: &RouteQuery, route: &Route) {
        let (a, b) = (q.from.area.index(), q.to.area.index());
        let start = route.legs[0].waypoints[0];
        let start_valid = self
            .reference(a)
            .exact
            .endpoint_region(q.from.point)
            .is_some();
        let moved_valid = self.reference(a).exact.endpoint_region(start).is_some();
        assert!(
            start_valid != route.start_moved_from.is_some() && moved_valid,
            "{}",
            self.report(&format!(
                "{q:?}: the start is {}a valid point, the route starts at {start} \
                     (moved from {:?})",
                if start_valid { "" } else { "not " },
                route.start_moved_from
            ))
        );
        let goal = q.to.point;
        // Nodes: the start, the goal, then each link's two ends.
        let mut nodes: Vec<(usize, DVec2)> = vec![(a, start), (b, goal)];
        let mut crossings: Vec<(usize, usize, f64)> = Vec::new();
        for link in self.links.iter().flatten() {
            let u = nodes.len();
            nodes.push((link.from.area.index(), link.from.point));
            nodes.push((link.to.area.index(), link.to.point));
            if link.allows(q.radius, q.profiles) {
                crossings.push((u, u + 1, link.cost));
                if link.both_ways {
                    crossings.push((u + 1, u, link.cost));
                }
            }
        }
        // The start and the goal, and the link ends where a point agent may
        // stand (a valid point, no double corner).
        let valid: Vec<bool> = nodes
            .iter()
            .enumerate()
            .map(|(u, &(k, p))| u < 2 || self.stands(k, p))
            .collect();
        let n = nodes.len();
        let mut dist = vec![f64::INFINITY; n];
        let mut done = vec![false; n];
        dist[0] = 0.0;
        while let Some(u) = (0..n)
            .filter(|&u| !done[u] && dist[u].is_finite())
            .min_by(|&x, &y| dist[x].total_cmp(&dist[y]))
        {
            done[u] = true;
            if u == 1 {
                break;
            }
            let (k, p) = nodes[u];
            for v in 1..n {
                if v != u && !done[v] && valid[v] && nodes[v].0 == k {
                    let d = dist[u] + self.reference(k).optimum(p, nodes[v].1);
                    dist[v] = dist[v].min(d);
                }
            }
            for &(x, y, cost) in &crossings {
                if x == u && valid[y] {
                    dist[y] = dist[y].min(dist[u] + cost);
                }
            }
        }
        let best = dist[1];
        if best.is_finite() {
            assert!(
                !route.is_fallback() && close(route.length, best),
                "{}",
                self.report(&format!(
                    "{q:?}: a route of {} ({:?}), the brute force's is {best}: {route:?}",
                    route.length, route.kind
                ))
            );
            return;
        }
        assert!(
            route.is_fallback(),
            "{}",
            self.report(&format!(
                "{q:?}: a route to a goal the brute force does not reach: {route:?}"
            ))
        );
        // The regions of the goal's area the agent reaches.
        let mut regions: Vec<u32> = Vec::new();
        for u in (0..n).filter(|&u| u != 1 && nodes[u].0 == b && dist[u].is_finite()) {
            if let Some(r) = self.reference(b).exact.endpoint_region(nodes[u].1)
                && !regions.contains(&r)
            {
                regions.push(r);
            }
        }
        if regions.is_empty() {
            let alone = route.legs.len() == 1 && route.legs[0].waypoints == [start];
            assert!(
                alone,
                "{}",
                self.report(&format!(
                    "{q:?}: no point of the goal's area is reached, yet the route is {route:?}"
                ))
            );
            return;
        }
        let closest = regions
            .iter()
            .filter_map(|&r| self.reference(b).exact.nearest(goal, Some(r)))
            .map(|near| near.dist)
            .fold(f64::INFINITY, f64::min);
        let end = route.end();
        let off = end.point.distance(goal);
        assert!(
            end.area == q.to.area && (off - closest).abs() <= NUDGE + 1e-9,
            "{}",
            self.report(&format!(
                "{q:?}: the fallback ends at {end:?}, {off} from the goal; the regions \
                 reached there ({regions:?}) come within {closest}: {route:?}"
            ))
        );
    }

    /// The answer of an atlas built afresh on the current world.
    fn fresh_answer(&mut self, q: &RouteQuery) -> Result<Route, AtlasError> {
        if self.fresh.is_none() {
            let mut atlas = Atlas::new();
            // The radii served first where the atlas under test served them
            // last, and the other way round.
            let early = self.served_late;
            let serve = |atlas: &mut Atlas| {
                for &r in &self.served[1..] {
                    atlas.serve_radius(r).expect("a radius served before");
                }
            };
            if early {
                serve(&mut atlas);
            }
            for k in 0..self.areas() {
                let grid = self.atlas.grid(area_id(k)).expect("a known area");
                // Read again from its cells: nothing derived is shared.
                let grid = Grid::from_ascii(&picture(grid)).expect("a picture");
                atlas.add_area(grid);
            }
            for link in &self.links {
                match link {
                    Some(l) => {
                        atlas.add_link(*l).expect("a link added before");
                    }
                    None => {
                        let place = Place::new(area_id(0), DVec2::ZERO);
                        let id = atlas
                            .add_link(Link::new(place, place))
                            .expect("a valid link");
                        atlas.remove_link(id).expect("a link just added");
                    }
                }
            }
            if !early {
                serve(&mut atlas);
            }
            self.fresh = Some((atlas, Planner::new()));
        }
        let (atlas, planner) = self.fresh.as_mut().expect("just built");
        atlas.find(planner, q)
    }

    /// A report: what is wrong, then the world and what was done to it.
    fn report(&self, what: &str) -> String {
        let mut s = format!("{what}\nradii served {:?}\n", self.served);
        for k in 0..self.areas() {
            let grid = self.atlas.grid(area_id(k)).expect("a known area");
            let _ = writeln!(
                s,
                "area {k} ({} x {}):\n{}",
                grid.width(),
                grid.height(),
                picture(grid)
            );
        }
        for (id, link) in self.atlas.links() {
            let _ = writeln!(s, "link {}: {link:?}", id.index());
        }
        s.push_str("operations:\n");
        for (k, op) in self.log.iter().enumerate() {
            let _ = writeln!(s, "{k}: {op}");
        }
        s
    }
}

/// The free cells around vertex `p` of `grid` (north-west, north-east,
/// south-west, south-east), if it is a double corner: two blocked cells
/// touching diagonally, two free ones touching diagonally.
fn double_corner(grid: &Grid, p: DVec2) -> Option<[bool; 4]> {
    if p.x.fract() != 0.0 || p.y.fract() != 0.0 {
        return None;
    }
    let (x, y) = (p.x as i64, p.y as i64);
    let around = [
        grid.is_free_xy(x - 1, y - 1),
        grid.is_free_xy(x, y - 1),
        grid.is_free_xy(x - 1, y),
        grid.is_free_xy(x, y),
    ];
    matches!(
        around,
        [true, false, false, true] | [false, true, true, false]
    )
    .then_some(around)
}

/// Which free quadrant of the double corner `v` (free cells `around`) the
/// point `q` lies in (0 to 3 as in [`double_corner`]); `None` for a blocked
/// one.
fn free_side(around: [bool; 4], v: DVec2, q: DVec2) -> Option<usize> {
    let d = q - v;
    let (west, east, north, south) = (d.x <= 0.0, d.x >= 0.0, d.y <= 0.0, d.y >= 0.0);
    [north && west, north && east, south && west, south && east]
        .iter()
        .zip(around)
        .position(|(&inside, free)| inside && free)
}

/// The double-corner rules of `SPEC.md` along a point agent's leg: a leg
/// that starts or ends on a double corner leaves or arrives through its
/// south-east cell, and a waypoint on one is never a way from one free
/// side to the other.
fn double_corners(grid: &Grid, w: &[DVec2]) -> Result<(), String> {
    let n = w.len();
    for (i, &p) in w.iter().enumerate() {
        let Some(around) = double_corner(grid, p) else {
            continue;
        };
        let sides: Vec<Option<usize>> = [i.checked_sub(1), (i + 1 < n).then_some(i + 1)]
            .into_iter()
            .flatten()
            .map(|j| free_side(around, p, w[j]))
            .collect();
        let ok = if i == 0 || i == n - 1 {
            sides.iter().all(|&s| s == Some(3))
        } else {
            sides[0].is_some() && sides[0] == sides[1]
        };
        if !ok {
            return Err(format!(
                "waypoint {i} {p} is a double corner, left or reached from the sides \
                 {sides:?} (of its neighbours; 0 north-west, 1 north-east, 2 south-west, \
                 3 south-east, None a blocked side)"
            ));
        }
    }
    Ok(())
}

/// Whether two lists of links are the same (costs and radii compared by
/// their bits, so that NaN is NaN).
fn same_links(a: &[(LinkId, Link)], b: &[(LinkId, Link)]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| format!("{x:?}") == format!("{y:?}"))
}

/// Whether two numbers are the same (NaN is NaN; -0 is not 0).
fn same_f64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Whether `e` is one of `errors` (numbers compared as [`same_f64`]).
fn is_one_of(e: &AtlasError, errors: &[AtlasError]) -> bool {
    let e = format!("{e:?}");
    errors.iter().any(|x| format!("{x:?}") == e)
}

/// Whether two answers are the same: routes as long (1e-9, relative), of
/// the same kind, from the same moved start; or the same error.
fn same_answer(a: &Result<Route, AtlasError>, b: &Result<Route, AtlasError>) -> bool {
    match (a, b) {
        (Ok(p), Ok(q)) => {
            close(p.length, q.length)
                && p.kind == q.kind
                && p.start_moved_from == q.start_moved_from
        }
        (Err(e), Err(f)) => format!("{e:?}") == format!("{f:?}"),
        _ => false,
    }
}

/// The centre of free cell number `pick` (modulo their count) of `grid`,
/// row by row; `None` if no cell is free.
fn free_centre(grid: &Grid, pick: u8) -> Option<DVec2> {
    let free: Vec<DVec2> = (0..i64::from(grid.height()))
        .flat_map(|y| (0..i64::from(grid.width())).map(move |x| (x, y)))
        .filter(|&(x, y)| grid.is_free_xy(x, y))
        .map(|(x, y)| DVec2::new(x as f64 + 0.5, y as f64 + 0.5))
        .collect();
    (!free.is_empty()).then(|| free[usize::from(pick) % free.len()])
}

/// The free flags of a grid's cells, row by row.
fn cells_of(grid: &Grid) -> Vec<bool> {
    let (w, h) = (i64::from(grid.width()), i64::from(grid.height()));
    (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .map(|(x, y)| grid.is_free_xy(x, y))
        .collect()
}
