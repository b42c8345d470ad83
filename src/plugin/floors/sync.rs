//! The areas and links routes are planned on: an [`Atlas`] kept in step
//! with the [`NavArea`] and [`NavLink`] entities, and what changed in it
//! this frame.

use std::sync::{Arc, OnceLock};

use bevy_ecs::entity::{EntityHashMap, EntityHashSet};
use bevy_ecs::prelude::*;
use bevy_math::{DVec2, URect, UVec2, Vec2};

use super::{NavArea, NavLink};
use crate::atlas::{AreaId, Atlas, AtlasError, Link, LinkId, Place};
use crate::clearance::Clearance;
use crate::grid::{EditKind, Grid};
use crate::plugin::api::LinkCrossing;
use crate::plugin::world::GridTransform;

/// One area as the atlas holds it.
struct AreaRecord {
    id: AreaId,
    /// The grid's layout and version the atlas follows.
    layout: u64,
    version: u64,
    transform: GridTransform,
    /// The grid's rows (for its placement).
    rows: u32,
    height: f32,
}

/// An area's id and placement.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AreaView {
    pub id: AreaId,
    pub transform: GridTransform,
    pub rows: u32,
    pub height: f32,
}

impl AreaView {
    /// World point to the area's grid coordinates.
    pub(crate) fn to_grid(self, p: Vec2) -> DVec2 {
        self.transform.to_grid(self.rows, p)
    }

    /// The area's grid coordinates to a world point.
    pub(crate) fn to_world(self, p: DVec2) -> Vec2 {
        self.transform.to_world(self.rows, p)
    }

    /// World units per cell.
    pub(crate) fn cell(self) -> f64 {
        f64::from(self.transform.cell_size())
    }
}

/// A change of the areas and links, for the agents it may concern.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Change {
    /// Cells of an area were blocked (grid coordinates, half-open).
    Blocked(Entity, URect),
    /// Cells of an area were freed (grid coordinates, half-open).
    Freed(Entity, URect),
    /// An area was replaced, moved or removed.
    Replaced(Entity),
    /// A link admits fewer agents than before (or is gone).
    LinkNarrowed(Entity),
    /// A link costs more than before (and admits the same agents).
    LinkCostlier(Entity),
    /// A link admits more agents than before, costs less, or is new. (An
    /// area that is new counts as replaced.)
    LinkWidened(Opened),
}

/// A link that may now shorten routes: its ends (area entity and grid
/// point), its cost (in the grid units of its first end's area) and
/// whether it goes both ways. A route through it is at least as long as
/// the straight line to its near end (on that end's area), plus the cost,
/// plus the straight line on from its far end (on the goal's area).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Opened {
    pub(crate) ends: [(Entity, DVec2); 2],
    pub(crate) cost: f64,
    pub(crate) both_ways: bool,
    /// The widest agent it admits (cells), or `-1` if it is closed.
    pub(crate) max_radius: f64,
}

/// An end of an enabled link on an area, as a way out of it (`leave`) or
/// into it (`enter`), for the bounds of [`Opened`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct EndOn {
    pub(crate) point: DVec2,
    pub(crate) cost: f64,
    pub(crate) leave: bool,
    pub(crate) enter: bool,
    pub(crate) max_radius: f64,
}

/// The atlas routes are planned on, and how its ids map to entities (not
/// public).
#[derive(Resource)]
pub(crate) struct Areas {
    atlas: Atlas,
    /// The atlas as searches see it, shared until the next change.
    snapshot: Option<Arc<Atlas>>,
    records: EntityHashMap<AreaRecord>,
    /// The entity of each area id (areas whose entity is gone: `None`).
    by_id: Vec<Option<Entity>>,
    /// Each link entity's id and the component it was synced from.
    links: EntityHashMap<(LinkId, NavLink)>,
    link_entities: Vec<Option<Entity>>,
    /// Links not in the atlas yet (an area of theirs is unknown, or a field
    /// is refused): tried again every frame.
    unplaced: EntityHashSet,
    /// The changes of this frame and the atlas version after each, kept
    /// while routes planned before them may still arrive.
    log: Vec<(u64, Change)>,
    /// Changes logged this frame start here.
    fresh: usize,
    /// The version after the newest change dropped from the log.
    dropped_through: u64,
    /// A one-cell grid for jobs' grid field (routes search the atlas).
    pub(crate) placeholder: Arc<Grid>,
    /// The enabled links' ends by area, worked out when first asked for
    /// after a change of the links or areas.
    ends_on: OnceLock<EntityHashMap<Vec<EndOn>>>,
}

impl Default for Areas {
    fn default() -> Self {
        Areas {
            atlas: Atlas::new(),
            snapshot: None,
            records: EntityHashMap::default(),
            by_id: Vec::new(),
            links: EntityHashMap::default(),
            link_entities: Vec::new(),
            unplaced: EntityHashSet::default(),
            log: Vec::new(),
            fresh: 0,
            dropped_through: 0,
            placeholder: Arc::new(Grid::new(1, 1).expect("a 1 x 1 grid")),
            ends_on: OnceLock::new(),
        }
    }
}

/// The most changes the log keeps for routes still in flight; a route
/// older than the log is planned again.
const LOG: usize = 1 << 14;

impl Areas {
    /// The atlas as of now.
    pub(crate) fn atlas(&self) -> &Atlas {
        &self.atlas
    }

    /// The atlas for a search (shared until the next change).
    pub(crate) fn snapshot(&mut self) -> Arc<Atlas> {
        let atlas = &self.atlas;
        Arc::clone(self.snapshot.get_or_insert_with(|| Arc::new(atlas.clone())))
    }

    /// Area `entity`: its id, and how its grid lies in the world.
    pub(crate) fn area(&self, entity: Entity) -> Option<AreaView> {
        self.records.get(&entity).map(|r| AreaView {
            id: r.id,
            transform: r.transform,
            rows: r.rows,
            height: r.height,
        })
    }

    /// The entity of area `id`.
    pub(crate) fn area_entity(&self, id: AreaId) -> Option<Entity> {
        self.by_id.get(id.index()).copied().flatten()
    }

    /// The ends of the enabled links on `area`.
    pub(crate) fn ends_on(&self, area: Entity) -> &[EndOn] {
        let by_area = self.ends_on.get_or_init(|| {
            let mut by_area: EntityHashMap<Vec<EndOn>> = EntityHashMap::default();
            for (_, link) in self.atlas.links().filter(|(_, l)| l.enabled) {
                let ends = [
                    (link.from, true, link.both_ways),
                    (link.to, link.both_ways, true),
                ];
                for (end, leave, enter) in ends {
                    if let Some(on) = self.area_entity(end.area) {
                        by_area.entry(on).or_default().push(EndOn {
                            point: end.point,
                            cost: link.cost,
                            leave,
                            enter,
                            max_radius: link.max_radius,
                        });
                    }
                }
            }
            by_area
        });
        by_area.get(&area).map_or(&[], Vec::as_slice)
    }

    /// The entity of link `id` and how it is crossed.
    pub(crate) fn link(&self, id: LinkId) -> Option<(Entity, LinkCrossing)> {
        let entity = self.link_entities.get(id.index()).copied().flatten()?;
        let (_, link) = self.links.get(&entity)?;
        Some((entity, link.crossing))
    }

    /// Whether link `entity` is in the atlas and enabled.
    pub(crate) fn link_enabled(&self, entity: Entity) -> bool {
        self.links
            .get(&entity)
            .and_then(|(id, _)| self.atlas.link(*id))
            .is_some_and(|l| l.enabled)
    }

    /// The changes logged this frame.
    pub(crate) fn fresh(&self) -> &[(u64, Change)] {
        &self.log[self.fresh..]
    }

    /// The changes after atlas version `version`; `None` if the log no
    /// longer reaches back that far.
    pub(crate) fn changes_after(&self, version: u64) -> Option<&[(u64, Change)]> {
        if version < self.dropped_through {
            return None;
        }
        let first = self.log.partition_point(|&(v, _)| v <= version);
        Some(&self.log[first..])
    }

    /// Serves agents of radius `radius` (cells, at least 0) from now on:
    /// the smallest served radius at least as large, quantised up to 64ths
    /// of a cell.
    pub(crate) fn serve(&mut self, radius: f64) -> Result<f64, AtlasError> {
        Clearance::from_radius(radius)?;
        let class = (radius * 64.0).ceil() / 64.0;
        if !self.atlas.radii().contains(&class) {
            self.atlas.serve_radius(class)?;
            self.snapshot = None;
        }
        Ok(class)
    }

    fn record(&mut self, change: Change) {
        self.snapshot = None;
        if !matches!(change, Change::Blocked(..) | Change::Freed(..)) {
            self.ends_on = OnceLock::new();
        }
        self.log.push((self.atlas.version(), change));
    }
}

/// Brings the atlas up to date with the area and link entities, and logs
/// what changed for the agents it concerns.
pub(crate) fn sync_areas(
    mut areas: ResMut<Areas>,
    mut area_q: Query<(Entity, &mut NavArea)>,
    mut removed_areas: RemovedComponents<NavArea>,
    links: Query<(Entity, Ref<NavLink>)>,
    mut removed_links: RemovedComponents<NavLink>,
) {
    let areas = &mut *areas;
    // Drop what the log no longer needs: changes older than a frame are
    // read only by routes in flight, and those check their age.
    if areas.log.len() > LOG {
        let cut = areas.log.len() - LOG;
        areas.dropped_through = areas.log[cut - 1].0;
        areas.log.drain(..cut);
    }
    areas.fresh = areas.log.len();
    let mut moved = false;
    for entity in removed_areas.read() {
        if area_q.contains(entity) {
            continue; // removed and inserted again: synced below
        }
        if let Some(record) = areas.records.remove(&entity) {
            let blocked = Grid::new_blocked(1, 1).expect("a 1 x 1 grid");
            let _ = areas.atlas.replace_area(record.id, blocked);
            areas.by_id[record.id.index()] = None;
            areas.record(Change::Replaced(entity));
        }
    }
    // Areas and links in the order of their entities, which number them in
    // the atlas (the order of a query over archetypes differs between
    // platforms).
    let mut changed: Vec<Entity> = area_q
        .iter_mut()
        .filter(|(entity, area)| area.is_changed() || !areas.records.contains_key(entity))
        .map(|(entity, _)| entity)
        .collect();
    changed.sort_unstable_by_key(|e| e.to_bits());
    for entity in changed {
        let Ok((_, mut area)) = area_q.get_mut(entity) else {
            continue;
        };
        let area = area.bypass_change_detection();
        let nav = &area.grid;
        let (layout, version, transform) = (nav.layout_id(), nav.version(), nav.transform());
        match areas.records.get_mut(&entity) {
            None => {
                let id = areas.atlas.add_area(nav.grid().clone());
                if areas.by_id.len() <= id.index() {
                    areas.by_id.resize(id.index() + 1, None);
                }
                areas.by_id[id.index()] = Some(entity);
                areas.records.insert(
                    entity,
                    AreaRecord {
                        id,
                        layout,
                        version,
                        transform,
                        rows: nav.grid().height(),
                        height: area.height,
                    },
                );
                areas.record(Change::Replaced(entity));
                moved = true;
            }
            Some(record) => {
                record.height = area.height;
                let edits = (record.layout == layout && record.transform == transform)
                    .then(|| nav.edits_since(record.version))
                    .flatten();
                let id = record.id;
                match edits {
                    _ if record.version == version
                        && record.layout == layout
                        && record.transform == transform => {}
                    Some(edits) => {
                        let grid = nav.grid();
                        let mut changes = Vec::new();
                        let _ = areas.atlas.edit_area(id, |e| {
                            for edit in edits {
                                for y in edit.rect.min.y..edit.rect.max.y {
                                    for x in edit.rect.min.x..edit.rect.max.x {
                                        let cell = UVec2::new(x, y);
                                        e.set_free(cell, grid.is_free(cell))?;
                                    }
                                }
                                if edit.kind != EditKind::Freed {
                                    changes.push(Change::Blocked(entity, edit.rect));
                                }
                                if edit.kind != EditKind::Blocked {
                                    changes.push(Change::Freed(entity, edit.rect));
                                }
                            }
                            Ok(())
                        });
                        for change in changes {
                            areas.record(change);
                        }
                    }
                    None => {
                        let _ = areas.atlas.replace_area(id, nav.grid().clone());
                        moved |= record.transform != transform;
                        areas.record(Change::Replaced(entity));
                    }
                }
                if let Some(record) = areas.records.get_mut(&entity) {
                    (record.layout, record.version, record.transform) =
                        (layout, version, transform);
                    record.rows = nav.grid().height();
                }
            }
        }
        area.grid.keep_edits_after(version);
    }
    // Links: gone, changed, new, or waiting for their areas.
    for entity in removed_links.read() {
        if links.contains(entity) {
            continue;
        }
        if let Some((id, _)) = areas.links.remove(&entity) {
            let _ = areas.atlas.remove_link(id);
            areas.link_entities[id.index()] = None;
            areas.record(Change::LinkNarrowed(entity));
        }
        areas.unplaced.remove(&entity);
    }
    let mut changed: Vec<(Entity, NavLink)> = links
        .iter()
        .filter(|(entity, link)| link.is_changed() || moved || areas.unplaced.contains(entity))
        .map(|(entity, link)| (entity, *link))
        .collect();
    changed.sort_unstable_by_key(|(e, _)| e.to_bits());
    for (entity, link) in changed {
        sync_link(areas, entity, link);
    }
}

/// Puts link `entity` into the atlas as `link` says (or takes it out while
/// it cannot be placed), and logs the change.
fn sync_link(areas: &mut Areas, entity: Entity, link: NavLink) {
    let placed = place(areas, &link);
    let old = areas.links.get(&entity).map(|&(id, _)| id);
    match (placed, old) {
        (Some(new), Some(id)) => {
            let before = areas.atlas.link(id).copied();
            if before == Some(new) {
                areas.links.insert(entity, (id, link));
                areas.unplaced.remove(&entity);
                return; // the same link (its crossing may differ)
            }
            if areas.atlas.set_link(id, new).is_err() {
                unplace(areas, entity, id);
                return;
            }
            areas.links.insert(entity, (id, link));
            let narrower = before.is_some_and(|b| narrows(&b, &new));
            let costlier = before.is_some_and(|b| new.cost > b.cost);
            let wider = before.is_none_or(|b| narrows(&new, &b) || new.cost < b.cost);
            if narrower {
                areas.record(Change::LinkNarrowed(entity));
            } else if costlier {
                areas.record(Change::LinkCostlier(entity));
            }
            if wider && let Some(opened) = opened(areas, &new) {
                areas.record(Change::LinkWidened(opened));
            }
            areas.unplaced.remove(&entity);
        }
        (Some(new), None) => match areas.atlas.add_link(new) {
            Ok(id) => {
                if areas.link_entities.len() <= id.index() {
                    areas.link_entities.resize(id.index() + 1, None);
                }
                areas.link_entities[id.index()] = Some(entity);
                areas.links.insert(entity, (id, link));
                areas.unplaced.remove(&entity);
                if let Some(opened) = opened(areas, &new) {
                    areas.record(Change::LinkWidened(opened));
                }
            }
            Err(_) => {
                areas.unplaced.insert(entity);
            }
        },
        (None, Some(id)) => unplace(areas, entity, id),
        (None, None) => {
            areas.unplaced.insert(entity);
        }
    }
}

/// What a placed link offers routes ([`Opened`]).
fn opened(areas: &Areas, link: &Link) -> Option<Opened> {
    Some(Opened {
        ends: [
            (areas.area_entity(link.from.area)?, link.from.point),
            (areas.area_entity(link.to.area)?, link.to.point),
        ],
        cost: link.cost,
        both_ways: link.both_ways,
        max_radius: if link.enabled { link.max_radius } else { -1.0 },
    })
}

/// Takes link `entity` (atlas id `id`) out until it can be placed again.
fn unplace(areas: &mut Areas, entity: Entity, id: LinkId) {
    let _ = areas.atlas.remove_link(id);
    areas.link_entities[id.index()] = None;
    areas.links.remove(&entity);
    areas.unplaced.insert(entity);
    areas.record(Change::LinkNarrowed(entity));
}

/// Whether `new` refuses an agent, a way or a profile `old` admitted, or
/// moved an end: a route across `old` may no longer hold with `new`.
fn narrows(old: &Link, new: &Link) -> bool {
    (old.enabled && !new.enabled)
        || (old.both_ways && !new.both_ways)
        || new.max_radius < old.max_radius
        || (old.profiles & !new.profiles) != 0
        || old.from != new.from
        || old.to != new.to
}

/// The atlas link for `link`: its ends in their areas' grid coordinates,
/// its cost and radius in cells (of its first end's area). `None` while an
/// area of it is unknown.
fn place(areas: &Areas, link: &NavLink) -> Option<Link> {
    let from = areas.area(link.from.area)?;
    let to = areas.area(link.to.area)?;
    let cell = from.cell();
    let placed = Link::new(
        Place::new(from.id, from.to_grid(link.from.point)),
        Place::new(to.id, to.to_grid(link.to.point)),
    )
    .with_cost(f64::from(link.cost) / cell)
    .with_max_radius(f64::from(link.max_radius) / cell)
    .with_profiles(link.profiles)
    .with_enabled(link.enabled);
    Some(if link.both_ways {
        placed
    } else {
        placed.one_way()
    })
}
