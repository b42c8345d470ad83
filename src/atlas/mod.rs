//! Worlds of several walkable areas joined by links (stairs, ladders, lifts,
//! doors, teleports, jumps): exact shortest routes across all of them.
//!
//! An [`Atlas`] owns one [`Grid`] per area (each in its own grid
//! coordinates) and a set of [`Link`]s, each joining a point of one area to
//! a point of another (or of the same area), with a cost, one way or both
//! ways, for agents up to a radius, for some movement profiles, enabled or
//! not. A [`RouteQuery`] asks for the shortest route from a point of one area
//! to a point of another; the [`Route`] is a list of [`Leg`]s, one per area
//! crossed, each an any-angle path on its area, with the link taken at its
//! end.
//!
//! **Exact.** A route's length is the sum of its legs' lengths plus the
//! costs of its links, and the atlas returns the least: every leg is a
//! shortest path (Polyanya on the area's navigation mesh, for the agent's
//! radius), and the choice of links is a shortest-path search over a
//! table of the exact distances between the link ends of each area. The
//! table is kept current as areas are edited: an edit searches again only
//! the entries it can change (a path that the blocked cells come near, or
//! a pair of ends that a way through the freed cells could bring closer).
//! Enabling, disabling and re-costing a link cost nothing.
//!
//! **Link ends.** A link may be crossed only by an agent that may stand at
//! both its ends: on its mesh (for a disc, where it fits), and for a point
//! agent not on a double corner (where two blocked cells meet diagonally: a
//! route through it could squeeze between them). A link end that an edit
//! walls in is unusable until an edit frees it again.
//!
//! **Radius.** An atlas serves point agents and each radius given to
//! [`Atlas::serve_radius`]; an agent plans with the smallest served radius
//! at least its own, on links whose `max_radius` is at least its own.
//!
//! **Unreachable goals.** With
//! [`FallbackPolicy::ClosestReachable`](crate::search::FallbackPolicy::ClosestReachable)
//! a route to an unreachable goal ends at the point of the goal's area
//! closest to the goal among those the agent can reach (the nearest of the
//! fallback targets of the regions it reaches there; ties go to the
//! shorter route); if no point of the goal's area is reachable, the route
//! is the start alone. Both are marked
//! [`PathKind::Fallback`](crate::search::PathKind::Fallback). With
//! [`FallbackPolicy::Fail`](crate::search::FallbackPolicy::Fail) the query
//! fails with [`PlanError::Unreachable`].
//!
//! ```
//! use bevy_anyangle::atlas::{Atlas, Link, Place, RouteQuery};
//! use bevy_anyangle::prelude::*;
//!
//! // Two floors; stairs join their east ends.
//! let mut atlas = Atlas::new();
//! let ground = atlas.add_area(Grid::from_ascii("......\n.####.\n......").unwrap());
//! let upper = atlas.add_area(Grid::from_ascii("......\n......\n......").unwrap());
//! let stairs = atlas
//!     .add_link(Link::new(
//!         Place::new(ground, DVec2::new(5.5, 1.5)),
//!         Place::new(upper, DVec2::new(5.5, 1.5)),
//!     ).with_cost(2.0))
//!     .unwrap();
//!
//! let query = RouteQuery::new(
//!     Place::new(ground, DVec2::new(0.5, 1.5)),
//!     Place::new(upper, DVec2::new(0.5, 1.5)),
//! );
//! let route = atlas.find(&mut Planner::new(), &query).unwrap();
//! assert_eq!(route.legs.len(), 2);
//! assert_eq!(route.legs[0].then.unwrap().link, stairs);
//! // Around the wall's corners (4 + √2 cells), up the stairs (2), back
//! // west (5).
//! assert!((route.length - (4.0 + 2.0_f64.sqrt() + 2.0 + 5.0)).abs() < 1e-9);
//!
//! // Close the stairs: the upper floor is out of reach.
//! atlas.set_link_enabled(stairs, false).unwrap();
//! let route = atlas.find(&mut Planner::new(), &query).unwrap();
//! assert!(route.is_fallback());
//! ```

mod closure;
mod route;
mod table;
mod task;

use std::sync::Arc;

use bevy_math::DVec2;
use thiserror::Error;

pub use route::{Crossing, Leg, Route, RouteQuery};
pub use table::TableWork;
pub use task::{GoalLegs, RouteTask};

use crate::clearance::{Clearance, ClearanceError};
use crate::grid::{Grid, GridEditor, GridError};
use crate::mesh::NavMesh;
use crate::search::{PlanError, Planner};
use table::EndTable;

/// An area of an [`Atlas`], as [`Atlas::add_area`] returned it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AreaId(u32);

impl AreaId {
    /// The area's index: areas are numbered from 0 in the order they were
    /// added.
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A link of an [`Atlas`], as [`Atlas::add_link`] returned it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LinkId(u32);

impl LinkId {
    /// The link's index: links are numbered from 0 in the order they were
    /// added (a removed link's number is not given again).
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A point of an area, in the area's grid coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Place {
    /// The area.
    pub area: AreaId,
    /// The point, in that area's grid coordinates.
    pub point: DVec2,
}

impl Place {
    /// Point `point` of area `area`.
    #[must_use]
    pub fn new(area: AreaId, point: DVec2) -> Self {
        Place { area, point }
    }
}

/// Which end of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Side {
    From,
    To,
}

/// A way between two places that is not walked on a grid: stairs, a
/// ladder, a lift, a door, a teleporter, a jump.
///
/// An agent that reaches one end may cross to the other (from `from` to
/// `to`, and back if `both_ways`), adding `cost` to its route's length.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Link {
    /// One end.
    pub from: Place,
    /// The other end.
    pub to: Place,
    /// What crossing costs, in cells of walking (finite, at least 0).
    pub cost: f64,
    /// Whether agents may cross from `to` to `from` too.
    pub both_ways: bool,
    /// The largest agent radius that may cross, in cells (at least 0;
    /// infinite: any).
    pub max_radius: f64,
    /// The movement profiles that may cross, as a bit mask matched against
    /// [`RouteQuery::profiles`]; all ones: any.
    pub profiles: u64,
    /// Whether the link may be crossed at all.
    pub enabled: bool,
}

impl Link {
    /// A link between `from` and `to`: free to cross, both ways, for every
    /// agent, enabled.
    #[must_use]
    pub fn new(from: Place, to: Place) -> Self {
        Link {
            from,
            to,
            cost: 0.0,
            both_ways: true,
            max_radius: f64::INFINITY,
            profiles: u64::MAX,
            enabled: true,
        }
    }

    /// The same link, costing `cost` to cross.
    #[must_use]
    pub fn with_cost(self, cost: f64) -> Self {
        Link { cost, ..self }
    }

    /// The same link, crossed from `from` to `to` only.
    #[must_use]
    pub fn one_way(self) -> Self {
        Link {
            both_ways: false,
            ..self
        }
    }

    /// The same link, for agents of radius up to `max_radius` only.
    #[must_use]
    pub fn with_max_radius(self, max_radius: f64) -> Self {
        Link { max_radius, ..self }
    }

    /// The same link, for the profiles of bit mask `profiles` only.
    #[must_use]
    pub fn with_profiles(self, profiles: u64) -> Self {
        Link { profiles, ..self }
    }

    /// The same link, enabled or not.
    #[must_use]
    pub fn with_enabled(self, enabled: bool) -> Self {
        Link { enabled, ..self }
    }

    /// Whether an agent of radius `radius` and profile mask `profiles` may
    /// cross it (in the directions it allows).
    #[must_use]
    pub fn allows(&self, radius: f64, profiles: u64) -> bool {
        self.enabled && radius <= self.max_radius && self.profiles & profiles != 0
    }
}

/// Why an [`Atlas`] refused a change or a query.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum AtlasError {
    /// No area has this id.
    #[error("no area {0:?} in the atlas")]
    UnknownArea(AreaId),
    /// No link has this id (or it was removed).
    #[error("no link {0:?} in the atlas")]
    UnknownLink(LinkId),
    /// A link end is not a finite point.
    #[error("a link end is not a finite point")]
    NonFiniteEnd,
    /// A link's cost is negative or not finite.
    #[error("link cost {0} is not a finite number >= 0")]
    BadCost(f64),
    /// A link's largest radius is negative or not a number.
    #[error("link radius {0} is not a number >= 0")]
    BadMaxRadius(f64),
    /// A radius the atlas cannot serve.
    #[error(transparent)]
    Radius(#[from] ClearanceError),
    /// The query's radius is above every radius the atlas serves (see
    /// [`Atlas::serve_radius`]).
    #[error("no served radius is at least {0}")]
    RadiusNotServed(f64),
    /// An edit of an area's grid failed.
    #[error(transparent)]
    Grid(#[from] GridError),
    /// The search of a leg failed (a start where the agent does not fit and
    /// sees no place where it does, an unreachable goal with
    /// [`FallbackPolicy::Fail`](crate::search::FallbackPolicy::Fail), …).
    #[error(transparent)]
    Plan(#[from] PlanError),
}

/// One area: its grid, and a link table per served radius.
#[derive(Clone)]
struct Area {
    grid: Grid,
    /// `tables[k]` serves `Atlas::radii[k]`.
    tables: Vec<EndTable>,
}

/// Several walkable areas joined by links (see the [module docs](self)).
///
/// Cloning an atlas is cheap: clones share each area's grid, meshes and
/// table until one of them edits it (a snapshot for search threads).
pub struct Atlas {
    areas: Vec<Arc<Area>>,
    links: Vec<Option<Link>>,
    /// The radii served, ascending; `0.0` first.
    radii: Vec<f64>,
    planner: Planner,
    work: TableWork,
    /// Where each area's ends are among the end graph's nodes, per served
    /// radius.
    layouts: Vec<closure::Layout>,
    /// Changes with every change: a route task begun before a change
    /// starts over.
    version: u64,
    /// Rows of the end graph searched since the last change.
    /// Rows of the end graph searched since the last change that altered
    /// a distance; clones share them (and what their searches add) until
    /// one of them changes.
    rows: Arc<std::sync::Mutex<crate::fast_hash::FastMap<closure::RowKey, Arc<closure::Rows>>>>,
}

impl Default for Atlas {
    fn default() -> Self {
        Self::new()
    }
}

impl Clone for Atlas {
    fn clone(&self) -> Self {
        Atlas {
            areas: self.areas.clone(),
            links: self.links.clone(),
            radii: self.radii.clone(),
            planner: Planner::new(),
            work: self.work,
            rows: Arc::clone(&self.rows),
            layouts: self.layouts.clone(),
            version: self.version,
        }
    }
}

impl core::fmt::Debug for Atlas {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Atlas")
            .field("areas", &self.areas.len())
            .field("links", &self.links.iter().flatten().count())
            .field("radii", &self.radii)
            .finish_non_exhaustive()
    }
}

impl Atlas {
    /// An atlas without areas, serving point agents.
    #[must_use]
    pub fn new() -> Self {
        Atlas {
            areas: Vec::new(),
            links: Vec::new(),
            radii: vec![0.0],
            planner: Planner::new(),
            work: TableWork::default(),
            rows: Arc::default(),
            layouts: Vec::new(),
            version: next_version(),
        }
    }

    /// Adds an area walkable where `grid` is free; returns its id.
    pub fn add_area(&mut self, grid: Grid) -> AreaId {
        let tables = self
            .radii
            .iter()
            .map(|&r| EndTable::new(mesh_for(&grid, r)))
            .collect();
        self.areas.push(Arc::new(Area { grid, tables }));
        self.forget_rows();
        AreaId(self.areas.len() as u32 - 1)
    }

    /// How many areas the atlas has.
    #[must_use]
    pub fn area_count(&self) -> usize {
        self.areas.len()
    }

    /// The grid of area `area`.
    #[must_use]
    pub fn grid(&self, area: AreaId) -> Option<&Grid> {
        self.areas.get(area.index()).map(|a| &a.grid)
    }

    /// The navigation mesh area `area` is searched on for agents of radius
    /// `radius` (the smallest served radius at least `radius`).
    #[must_use]
    pub fn mesh(&self, area: AreaId, radius: f64) -> Option<&NavMesh> {
        let k = self.class_of(radius)?;
        self.areas.get(area.index()).map(|a| &a.tables[k].mesh)
    }

    /// The radii served, ascending, `0.0` (point agents) first.
    #[must_use]
    pub fn radii(&self) -> &[f64] {
        &self.radii
    }

    /// Serves agents of radius `radius` too (see the [module docs](self)):
    /// builds every area's mesh for that radius and its link table.
    ///
    /// # Errors
    ///
    /// [`AtlasError::Radius`] for a radius [`Clearance::from_radius`]
    /// refuses.
    pub fn serve_radius(&mut self, radius: f64) -> Result<(), AtlasError> {
        Clearance::from_radius(radius)?;
        let radius = radius + 0.0;
        let Err(k) = self.radii.binary_search_by(|r| r.total_cmp(&radius)) else {
            return Ok(());
        };
        self.radii.insert(k, radius);
        let mut work = TableWork::default();
        for a in 0..self.areas.len() {
            let ends = self.ends_in(AreaId(a as u32));
            let area = Arc::make_mut(&mut self.areas[a]);
            let mut table = EndTable::new(mesh_for(&area.grid, radius));
            work += table.set_ends(&ends, &mut self.planner);
            area.tables.insert(k, table);
        }
        self.work = work;
        self.forget_rows();
        Ok(())
    }

    /// The index of the smallest served radius at least `radius`.
    fn class_of(&self, radius: f64) -> Option<usize> {
        self.radii.iter().position(|&r| r >= radius)
    }

    /// Edits area `area`'s grid with `f` (as [`Grid::edit`]) and brings its
    /// meshes and link tables up to date: the entries the edits can change
    /// are marked ([`Atlas::last_work`] counts them), and searched again by
    /// the next query, or by [`Atlas::settle`], once for every clone that
    /// shares the area (a game edits on its main thread and leaves the
    /// searches to its search threads). Nothing else is searched again.
    ///
    /// # Errors
    ///
    /// [`AtlasError::UnknownArea`], or the error `f` returns (edits before
    /// it stay applied, and the tables follow them).
    pub fn edit_area<R>(
        &mut self,
        area: AreaId,
        f: impl FnOnce(&mut GridEditor<'_>) -> Result<R, GridError>,
    ) -> Result<R, AtlasError> {
        let a = self
            .areas
            .get_mut(area.index())
            .map(Arc::make_mut)
            .ok_or(AtlasError::UnknownArea(area))?;
        let before = a.grid.version();
        let result = a.grid.edit(f);
        let edits: Vec<_> = a.grid.edits_since(before).copied().collect();
        a.grid.clear_edits_through(a.grid.version());
        let mut work = TableWork::default();
        if !edits.is_empty() {
            for table in &mut a.tables {
                work += table.sync(&a.grid, Some(&edits), &mut self.planner, true);
            }
        }
        self.work = work;
        self.version = next_version();
        if work.changed > 0 {
            self.forget_rows();
        }
        Ok(result?)
    }

    /// Replaces area `area`'s grid with `grid` (of any size): its meshes
    /// and link tables are built afresh.
    ///
    /// # Errors
    ///
    /// [`AtlasError::UnknownArea`].
    pub fn replace_area(&mut self, area: AreaId, grid: Grid) -> Result<(), AtlasError> {
        let a = self
            .areas
            .get_mut(area.index())
            .map(Arc::make_mut)
            .ok_or(AtlasError::UnknownArea(area))?;
        a.grid = grid;
        let mut work = TableWork::default();
        for table in &mut a.tables {
            work += table.sync(&a.grid, None, &mut self.planner, false);
        }
        self.work = work;
        self.forget_rows();
        Ok(())
    }

    /// A number that changes with every change of the atlas (areas,
    /// links, served radii): two atlases with the same version are the same
    /// (a clone keeps its original's until either changes).
    #[must_use]
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Searches the link-table entries that edits marked and left for later
    /// (see [`Atlas::edit_area`]), if no query or clone did yet; queries do
    /// this themselves first. Returns the work it did.
    pub fn settle(&self, planner: &mut Planner) -> TableWork {
        let mut work = TableWork::default();
        for area in &self.areas {
            for table in &area.tables {
                work += table.settle(planner);
            }
        }
        work
    }

    /// Whether edits left link-table entries for [`Atlas::settle`] (or the
    /// next query) to search.
    #[must_use]
    pub fn is_settled(&self) -> bool {
        self.areas
            .iter()
            .all(|a| a.tables.iter().all(|t| !t.pending()))
    }

    /// The work the last change of the atlas did on its tables.
    #[must_use]
    pub fn last_work(&self) -> TableWork {
        self.work
    }

    /// Link `link`, if it exists.
    #[must_use]
    pub fn link(&self, link: LinkId) -> Option<&Link> {
        self.links.get(link.index()).and_then(Option::as_ref)
    }

    /// Every link, with its id.
    pub fn links(&self) -> impl Iterator<Item = (LinkId, &Link)> + '_ {
        self.links
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.as_ref().map(|l| (LinkId(i as u32), l)))
    }

    /// Adds `link`; returns its id. The link tables of its ends' areas gain
    /// a row each.
    ///
    /// # Errors
    ///
    /// [`AtlasError::UnknownArea`], [`AtlasError::NonFiniteEnd`],
    /// [`AtlasError::BadCost`] or [`AtlasError::BadMaxRadius`].
    pub fn add_link(&mut self, link: Link) -> Result<LinkId, AtlasError> {
        self.check(&link)?;
        self.links.push(Some(link));
        self.update_ends(&[link.from.area, link.to.area]);
        Ok(LinkId(self.links.len() as u32 - 1))
    }

    /// Replaces link `id` with `link`. Changing only its cost, directions,
    /// radius, profiles or enabled flag costs no search; moving an end
    /// searches that end's row again.
    ///
    /// # Errors
    ///
    /// [`AtlasError::UnknownLink`], or as [`Atlas::add_link`].
    pub fn set_link(&mut self, id: LinkId, link: Link) -> Result<(), AtlasError> {
        self.check(&link)?;
        let slot = self
            .links
            .get_mut(id.index())
            .and_then(Option::as_mut)
            .ok_or(AtlasError::UnknownLink(id))?;
        let old = core::mem::replace(slot, link);
        self.work = TableWork::default();
        self.forget_rows();
        if old.from != link.from || old.to != link.to {
            self.update_ends(&[old.from.area, old.to.area, link.from.area, link.to.area]);
        }
        Ok(())
    }

    /// Enables or disables link `id` (no search).
    ///
    /// # Errors
    ///
    /// [`AtlasError::UnknownLink`].
    pub fn set_link_enabled(&mut self, id: LinkId, enabled: bool) -> Result<(), AtlasError> {
        let link = *self.link(id).ok_or(AtlasError::UnknownLink(id))?;
        self.set_link(id, link.with_enabled(enabled))
    }

    /// Removes link `id`; its id is not given again.
    ///
    /// # Errors
    ///
    /// [`AtlasError::UnknownLink`].
    pub fn remove_link(&mut self, id: LinkId) -> Result<Link, AtlasError> {
        let link = self
            .links
            .get_mut(id.index())
            .and_then(Option::take)
            .ok_or(AtlasError::UnknownLink(id))?;
        self.update_ends(&[link.from.area, link.to.area]);
        Ok(link)
    }

    /// Drops the rows searched before a change, and lays the end graph
    /// out again.
    fn forget_rows(&mut self) {
        self.version = next_version();
        self.rows = Arc::default();
        self.layouts = (0..self.radii.len()).map(|k| self.layout(k)).collect();
    }

    /// Checks a link's fields.
    fn check(&self, link: &Link) -> Result<(), AtlasError> {
        for end in [link.from, link.to] {
            if end.area.index() >= self.areas.len() {
                return Err(AtlasError::UnknownArea(end.area));
            }
            if !end.point.is_finite() {
                return Err(AtlasError::NonFiniteEnd);
            }
        }
        if !(link.cost.is_finite() && link.cost >= 0.0) {
            return Err(AtlasError::BadCost(link.cost));
        }
        if link.max_radius.is_nan() || link.max_radius < 0.0 {
            return Err(AtlasError::BadMaxRadius(link.max_radius));
        }
        Ok(())
    }

    /// The link ends in area `area`, in link order.
    fn ends_in(&self, area: AreaId) -> Vec<(LinkId, Side, DVec2)> {
        let mut ends = Vec::new();
        for (id, link) in self.links() {
            if link.from.area == area {
                ends.push((id, Side::From, link.from.point + DVec2::ZERO));
            }
            if link.to.area == area {
                ends.push((id, Side::To, link.to.point + DVec2::ZERO));
            }
        }
        ends
    }

    /// Brings the ends of the tables of `areas` up to date with the links.
    fn update_ends(&mut self, areas: &[AreaId]) {
        let mut work = TableWork::default();
        let mut done: Vec<AreaId> = Vec::new();
        for &area in areas {
            if done.contains(&area) {
                continue;
            }
            done.push(area);
            let ends = self.ends_in(area);
            for table in &mut Arc::make_mut(&mut self.areas[area.index()]).tables {
                work += table.set_ends(&ends, &mut self.planner);
            }
        }
        self.work = work;
        self.forget_rows();
    }
}

/// A version no atlas has had: unique across clones, so a route task
/// stepped on two diverging clones notices.
fn next_version() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The mesh of `grid` for agents of radius `radius`.
fn mesh_for(grid: &Grid, radius: f64) -> NavMesh {
    if radius > 0.0 {
        NavMesh::with_radius(grid, radius).expect("a radius Clearance::from_radius accepts")
    } else {
        NavMesh::build(grid)
    }
}
