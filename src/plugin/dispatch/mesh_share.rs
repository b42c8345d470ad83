//! Mesh store: the navigation meshes for the radii agents use, one per
//! (profile, radius class), and for Polyanya's point agents, one per
//! profile, shared by every search, with the newest grid of each profile
//! they follow.
//!
//! The main thread records the newest grid of each profile as it sends
//! searches, and the radius classes agents use. A search on a mesh takes
//! the newest grid of its profile and the mesh for its class: the first one
//! to find the mesh older than that grid brings it up to date, rebuilding
//! the chunks the edits since touched, while the others wanting that mesh
//! wait for it rather than do the same work; the searches after them find
//! it current. So each edit rebuilds its chunks once per class, however
//! many search threads there are, and each class is kept once in memory.
//! A mesh is searched as an immutable snapshot: a search still running on
//! an older one keeps it (its chunks shared with the newer one) until it
//! ends. The answer says which grid version it was found on, and the
//! plugin checks it against the edits made since, as for any search. The
//! meshes of radius classes no agent uses any more, or of a grid replaced
//! by another layout, are dropped.
//!
//! Without search threads, the first search on a class builds its mesh in
//! slices, within the frame budget, as far as each slice's work allows.
//! (Polyanya on an eroded grid, for an agent of a radius with meshes
//! turned off, keeps its planner's own mesh of that grid.)

use std::sync::Arc;

use parking_lot::Mutex;

use crate::grid::Grid;
use crate::mesh::NavMesh;
use crate::plugin::MeshBuilding;
use crate::plugin::world::ProfileId;

/// The newest grid snapshot sent with a search, per (layout, profile), the
/// radius classes in use, and the meshes for them.
#[derive(Clone, Default)]
pub(crate) struct MeshShare(Arc<Mutex<Shared>>);

#[derive(Default)]
struct Shared {
    /// Lockstep mode: every search gets the mesh of its own grid version,
    /// meshes are kept chunk by chunk (see [`MeshShare::set_exact`]).
    exact: bool,
    /// Whether meshes are built whole or on demand (see
    /// [`MeshShare::set_building`]).
    building: MeshBuilding,
    /// In lockstep mode: the oldest grid version a search in flight reads
    /// (`None`: none), as of the last [`MeshShare::keep_from`].
    oldest: Option<u64>,
    grids: Vec<Newest>,
    /// The radii of the meshes agents use, in 64ths of a cell, sorted.
    radii: Vec<u32>,
    meshes: Vec<Kept>,
}

/// One profile's newest grid.
struct Newest {
    layout_id: u64,
    profile: ProfileId,
    version: u64,
    grid: Arc<Grid>,
}

/// The mesh of one (layout, profile, radius class).
struct Kept {
    layout_id: u64,
    profile: ProfileId,
    /// The radius, in 64ths of a cell.
    radius: u32,
    /// Locked while the mesh is brought up to date (not while searched).
    mesh: Arc<Mutex<Slot>>,
}

/// A kept mesh and the grid version its grid belongs to.
#[derive(Default)]
struct Slot {
    version: u64,
    /// `None` until the first search on it begins building it; then
    /// possibly incomplete (built in slices on the main thread).
    mesh: Option<Arc<NavMesh>>,
    /// In lockstep mode: the meshes of the grid versions searches in
    /// flight may still ask for.
    kept: Vec<(u64, Arc<NavMesh>)>,
}

impl MeshShare {
    /// Records `grid`, the profile's grid at `NavGrid` version `version`,
    /// if it is newer than the one recorded.
    pub(crate) fn offer(&self, layout_id: u64, profile: ProfileId, version: u64, grid: &Arc<Grid>) {
        let mut shared = self.0.lock();
        let shared = &mut *shared;
        match shared.grids.iter_mut().find(|n| n.profile == profile) {
            Some(n) if n.layout_id == layout_id && n.version >= version => {}
            Some(n) => {
                n.layout_id = layout_id;
                n.version = version;
                n.grid = Arc::clone(grid);
                // (Meshes of a layout replaced go.)
                shared
                    .meshes
                    .retain(|k| k.profile != profile || k.layout_id == layout_id);
            }
            None => shared.grids.push(Newest {
                layout_id,
                profile,
                version,
                grid: Arc::clone(grid),
            }),
        }
    }

    /// Turns lockstep mode on or off (the meshes kept go when it changes).
    /// In lockstep mode a search gets the mesh of exactly the grid version
    /// it was sent with, never a newer one, and meshes are kept chunk by
    /// chunk: a mesh is then the same whatever versions it was brought up
    /// to date through, and whichever search built it.
    pub(crate) fn set_exact(&self, exact: bool) {
        let mut shared = self.0.lock();
        if shared.exact != exact {
            shared.exact = exact;
            shared.meshes.clear();
        }
    }

    /// Sets how meshes are built (the meshes kept go when it changes):
    /// meshes made after it are built on demand where `building` says so
    /// for their grid's size, outside lockstep mode.
    pub(crate) fn set_building(&self, building: MeshBuilding) {
        let mut shared = self.0.lock();
        if shared.building != building {
            shared.building = building;
            shared.meshes.clear();
        }
    }

    /// Whether meshes of a grid of `cells` cells are built on demand now
    /// (a group's search then needs no whole mesh first).
    pub(crate) fn on_demand(&self, cells: u64) -> bool {
        let shared = self.0.lock();
        !shared.exact && shared.building.on_demand(cells)
    }

    /// Builds the chunks `wanted` of `mesh`, the mesh of grid version
    /// `version` for (`layout_id`, `profile`, `radius`) a search stopped
    /// on (a mesh built on demand); returns the mesh to go on with, as
    /// `mesh` with those chunks built (polygon ids unchanged), and the work
    /// it took. The store's mesh grows, if it is still `mesh`'s (the same
    /// lineage and grid version, with more chunks maybe): the searches
    /// after this one find the chunks built; otherwise (brought up to a
    /// newer grid, or replaced) the search grows a copy of its own.
    pub(crate) fn grow(
        &self,
        layout_id: u64,
        profile: ProfileId,
        radius: u32,
        version: u64,
        mesh: Arc<NavMesh>,
        wanted: &[u32],
    ) -> (Arc<NavMesh>, u64) {
        let slot = {
            let shared = self.0.lock();
            shared
                .meshes
                .iter()
                .find(|k| k.layout_id == layout_id && k.profile == profile && k.radius == radius)
                .map(|k| Arc::clone(&k.mesh))
        };
        if let Some(slot) = slot {
            let mut slot = slot.lock();
            // (Of the same lineage and version, the store's mesh holds
            // every chunk the search's does.)
            if slot.version == version
                && slot
                    .mesh
                    .as_ref()
                    .is_some_and(|m| m.lineage() == mesh.lineage())
                && let Some(kept) = slot.mesh.take()
            {
                drop(mesh);
                let mut kept = Arc::unwrap_or_clone(kept);
                let work = kept.build_chunks(wanted);
                let kept = Arc::new(kept);
                slot.mesh = Some(Arc::clone(&kept));
                return (kept, work);
            }
        }
        let mut own = Arc::unwrap_or_clone(mesh);
        let work = own.build_chunks(wanted);
        (Arc::new(own), work)
    }

    /// In lockstep mode: drops the meshes kept for grid versions older
    /// than `oldest` (no search in flight asks for them; `None`: no search
    /// is in flight).
    pub(crate) fn keep_from(&self, oldest: Option<u64>) {
        let mut shared = self.0.lock();
        shared.oldest = oldest;
        // (A mesh being built now drops them when its search is done.)
        for kept in &shared.meshes {
            if let Some(mut slot) = kept.mesh.try_lock() {
                slot.kept.retain(|(v, _)| oldest.is_some_and(|o| *v >= o));
            }
        }
    }

    /// The profile's recorded grid and its version, if newer than
    /// `version` (of the same layout); never in lockstep mode.
    pub(crate) fn newer(
        &self,
        layout_id: u64,
        profile: ProfileId,
        version: u64,
    ) -> Option<(u64, Arc<Grid>)> {
        let shared = self.0.lock();
        if shared.exact {
            return None;
        }
        shared
            .grids
            .iter()
            .find(|n| n.profile == profile && n.layout_id == layout_id && n.version > version)
            .map(|n| (n.version, Arc::clone(&n.grid)))
    }

    /// Sets the radii agents use (64ths of a cell); the meshes of other
    /// radii go (a search still running on one keeps its snapshot). Point
    /// agents' meshes (radius 0, for Polyanya) stay while their layout does.
    pub(crate) fn set_radii(&self, radii: impl Iterator<Item = u32>) {
        let mut shared = self.0.lock();
        let shared = &mut *shared;
        shared.radii.clear();
        shared.radii.extend(radii);
        shared.radii.sort_unstable();
        shared.radii.dedup();
        let radii = &shared.radii;
        shared
            .meshes
            .retain(|k| k.radius == 0 || radii.binary_search(&k.radius).is_ok());
    }

    /// Whether the mesh for (`layout_id`, `profile`, `radius`) is built,
    /// or being built or brought up to date by a search now.
    /// (Never in lockstep mode, where whether a search has begun building
    /// it must not decide anything.)
    pub(crate) fn has_mesh(&self, layout_id: u64, profile: ProfileId, radius: u32) -> bool {
        let shared = self.0.lock();
        !shared.exact
            && shared.meshes.iter().any(|k| {
                k.layout_id == layout_id
                    && k.profile == profile
                    && k.radius == radius
                    && k.mesh
                        .try_lock()
                        .is_none_or(|slot| slot.mesh.as_ref().is_some_and(|m| m.is_complete()))
            })
    }

    /// The mesh of `grid` (the profile's grid at version `version` of
    /// layout `layout_id`) for agents of `radius` 64ths of a cell, and the
    /// version of the grid it is the mesh of: `version`, or a later one
    /// another search brought it up to already. Builds or brings it up to
    /// date first, for at most `work` (see [`NavMesh::sync_within`]);
    /// `None` if it is not done (call again). Waits while another search
    /// brings the same mesh up to date. In lockstep mode, the mesh of
    /// exactly `version`.
    pub(crate) fn mesh(
        &self,
        layout_id: u64,
        profile: ProfileId,
        radius: u32,
        version: u64,
        grid: &Grid,
        work: &mut u64,
    ) -> Option<(u64, Arc<NavMesh>)> {
        let (exact, on_demand, slot) = {
            let mut shared = self.0.lock();
            let found = shared
                .meshes
                .iter()
                .find(|k| k.layout_id == layout_id && k.profile == profile && k.radius == radius)
                .map(|k| Arc::clone(&k.mesh));
            let slot = found.unwrap_or_else(|| {
                let mesh = Arc::new(Mutex::new(Slot::default()));
                shared.meshes.push(Kept {
                    layout_id,
                    profile,
                    radius,
                    mesh: Arc::clone(&mesh),
                });
                mesh
            });
            let cells = u64::from(grid.width()) * u64::from(grid.height());
            let on_demand = !shared.exact && shared.building.on_demand(cells);
            (shared.exact.then_some(shared.oldest), on_demand, slot)
        };
        let mut slot = slot.lock();
        if let Some(oldest) = exact {
            slot.kept
                .retain(|(v, _)| *v == version || oldest.is_some_and(|o| *v >= o));
            return exact_mesh(&mut slot, radius, version, grid, work);
        }
        if let Some(mesh) = &slot.mesh
            && slot.version >= version
            && mesh.is_complete()
        {
            return Some((slot.version, Arc::clone(mesh)));
        }
        // Brought up to date out of its `Arc`: a copy (one pointer per
        // chunk, the grid's rows shared) if a search still holds it.
        let mut mesh = match slot.mesh.take() {
            Some(mesh) => Arc::unwrap_or_clone(mesh),
            None if on_demand => NavMesh::on_demand(grid, f64::from(radius) / 64.0)
                .unwrap_or_else(|_| NavMesh::unbuilt_with_radius(grid, f64::from(radius) / 64.0)),
            None => NavMesh::unbuilt_with_radius(grid, f64::from(radius) / 64.0),
        };
        // (Never back to an older grid: a mesh another search brought
        // further only goes on building.)
        let done = if slot.version > version {
            let own = mesh.grid().clone();
            mesh.sync_within(&own, work)
        } else {
            slot.version = version;
            mesh.sync_within(grid, work)
        };
        let mesh = Arc::new(mesh);
        slot.mesh = Some(Arc::clone(&mesh));
        done.then_some((slot.version, mesh))
    }

    /// Bytes the kept meshes hold, each in its newest version (those
    /// being brought up to date now are left out).
    pub(crate) fn memory_bytes(&self) -> usize {
        let slots: Vec<_> = self
            .0
            .lock()
            .meshes
            .iter()
            .map(|k| Arc::clone(&k.mesh))
            .collect();
        slots
            .iter()
            .filter_map(|slot| slot.try_lock()?.mesh.as_ref().map(|m| m.memory_bytes()))
            .sum()
    }

    /// How many meshes are kept (for the tests).
    #[cfg(test)]
    fn kept(&self) -> usize {
        self.0.lock().meshes.len()
    }
}

/// [`MeshShare::mesh`] in lockstep mode: the mesh of `grid`, version
/// `version`, from those kept, or the slot's mesh brought to that grid
/// (whatever grid it had: a mesh kept chunk by chunk is the same whatever
/// grids it went through).
fn exact_mesh(
    slot: &mut Slot,
    radius: u32,
    version: u64,
    grid: &Grid,
    work: &mut u64,
) -> Option<(u64, Arc<NavMesh>)> {
    if let Some((_, mesh)) = slot.kept.iter().find(|(v, _)| *v == version) {
        return Some((version, Arc::clone(mesh)));
    }
    let mut mesh = match slot.mesh.take() {
        Some(mesh) => Arc::unwrap_or_clone(mesh),
        None => NavMesh::unbuilt_chunked(grid, f64::from(radius) / 64.0),
    };
    let done = mesh.sync_within(grid, work);
    slot.version = version;
    let mesh = Arc::new(mesh);
    slot.mesh = Some(Arc::clone(&mesh));
    if !done {
        return None;
    }
    slot.kept.push((version, Arc::clone(&mesh)));
    Some((version, mesh))
}

#[cfg(test)]
mod tests {
    use bevy_math::DVec2;

    use super::*;

    /// Checks that `mesh` holds exactly the points `fresh` holds, `fresh`
    /// a mesh of the same grid built afresh (its polygons may be split
    /// differently): on a lattice of spacing 1/32 cell over the grid, moved
    /// by 1/64 cell off the lines where the meshes of radius classes (in
    /// 64ths of a cell) have their edges (each point looked up in the cell
    /// around it).
    fn holds_what_a_fresh_mesh_holds(mesh: &NavMesh, fresh: &NavMesh) {
        let grid = fresh.grid();
        assert_eq!(mesh.grid(), grid);
        let (w, h) = (i64::from(grid.width()), i64::from(grid.height()));
        let mut found = Vec::new();
        let mut on = |m: &NavMesh, p: DVec2| {
            let cell = p.floor();
            let cell = [
                (cell.x as i64).clamp(0, w - 1),
                (cell.y as i64).clamp(0, h - 1),
            ];
            found.clear();
            m.polygons_at(p * m.scale() as f64, &[cell], &mut found);
            !found.is_empty()
        };
        let mut held = 0;
        for y in 0..h * 32 {
            for x in 0..w * 32 {
                let p = (DVec2::new(x as f64, y as f64) + 0.5) / 32.0;
                let (a, b) = (on(mesh, p), on(fresh, p));
                assert_eq!(a, b, "{p}: on the mesh {a}, on a fresh one {b}");
                held += usize::from(a);
            }
        }
        assert!(held > 0, "the meshes hold no point");
    }

    #[test]
    fn only_newer_grids_of_the_same_layout_are_kept_and_given() {
        let share = MeshShare::default();
        let (a, b) = (
            Arc::new(Grid::new(4, 4).unwrap()),
            Arc::new(Grid::new(5, 5).unwrap()),
        );
        let p = ProfileId::DEFAULT;
        share.offer(1, p, 3, &a);
        share.offer(1, p, 2, &b);
        assert_eq!(
            share.newer(1, p, 2).map(|(v, g)| (v, g.width())),
            Some((3, 4))
        );
        assert!(share.newer(1, p, 3).is_none());
        assert!(share.newer(2, p, 0).is_none(), "another layout");
        share.offer(2, p, 1, &b);
        assert_eq!(
            share.newer(2, p, 0).map(|(v, g)| (v, g.width())),
            Some((1, 5))
        );
        assert!(share.newer(1, p, 0).is_none(), "the old layout is gone");
    }

    #[test]
    fn one_mesh_per_class_is_shared_and_brought_up_to_date_once() {
        let share = MeshShare::default();
        let p = ProfileId::DEFAULT;
        let mut grid = Grid::new(40, 40).unwrap();
        share.set_radii([32, 16].into_iter());
        let get = |version: u64, grid: &Grid, radius: u32| {
            share
                .mesh(1, p, radius, version, grid, &mut { u64::MAX })
                .unwrap()
        };
        let (v, a) = get(0, &grid, 32);
        let (_, b) = get(0, &grid, 32);
        assert_eq!(v, 0);
        assert!(Arc::ptr_eq(&a, &b), "one mesh for the class");
        assert_eq!(a.radius(), 0.5);
        let (_, c) = get(0, &grid, 16);
        assert!(!Arc::ptr_eq(&a, &c), "one per class");
        assert_eq!(share.kept(), 2);

        // An edit: the first search after it brings the mesh up to date; one
        // that asks for the older version gets the newer one.
        grid.set_rect_free(bevy_math::URect::new(10, 10, 20, 20), false)
            .unwrap();
        let (v, d) = get(1, &grid, 32);
        assert_eq!(v, 1);
        assert!(!Arc::ptr_eq(&a, &d));
        assert_eq!(d.grid(), &grid);
        let (v, e) = get(0, &Grid::new(40, 40).unwrap(), 32);
        assert_eq!(v, 1);
        assert!(Arc::ptr_eq(&d, &e));
        // The snapshot a search held is the mesh of the grid before.
        assert_eq!(a.grid(), &Grid::new(40, 40).unwrap());
        // It is the mesh before the edit synced with the grid after it, and
        // holds what a fresh mesh of that grid holds.
        let mut synced = NavMesh::with_radius(&Grid::new(40, 40).unwrap(), 0.5).unwrap();
        synced.sync(&grid);
        assert!(d.polygons().eq(synced.polygons()));
        holds_what_a_fresh_mesh_holds(&d, &NavMesh::with_radius(&grid, 0.5).unwrap());

        // A point agent's mesh (for Polyanya) is kept beside them, built
        // afresh.
        let (_, point) = get(1, &grid, 0);
        assert_eq!(point.radius(), 0.0);
        assert!(point.polygons().eq(NavMesh::build(&grid).polygons()));

        // Unused classes and replaced layouts go; point meshes stay with
        // their layout.
        share.set_radii([16].into_iter());
        assert_eq!(share.kept(), 2);
        share.set_radii(core::iter::empty());
        assert_eq!(share.kept(), 1);
        share.offer(1, p, 1, &Arc::new(grid.clone()));
        assert_eq!(share.kept(), 1);
        share.offer(2, p, 0, &Arc::new(grid.clone()));
        assert_eq!(share.kept(), 0);
    }

    #[test]
    fn in_lockstep_each_search_gets_the_mesh_of_its_own_version() {
        let share = MeshShare::default();
        share.set_exact(true);
        let p = ProfileId::DEFAULT;
        let g0 = Grid::new(70, 70).unwrap();
        let mut g1 = g0.clone();
        g1.set_rect_free(bevy_math::URect::new(10, 10, 20, 20), false)
            .unwrap();
        let mut g2 = g1.clone();
        g2.set_rect_free(bevy_math::URect::new(40, 30, 45, 60), false)
            .unwrap();
        let get = |version: u64, grid: &Grid, radius: u32| {
            share
                .mesh(1, p, radius, version, grid, &mut { u64::MAX })
                .unwrap()
        };
        for radius in [0, 32] {
            let fresh = |grid: &Grid| {
                let mut mesh = NavMesh::unbuilt_chunked(grid, f64::from(radius) / 64.0);
                assert!(mesh.sync_within(grid, &mut { u64::MAX }));
                mesh.polygons().collect::<Vec<_>>()
            };
            // Versions asked for out of order: each gets its own grid's
            // mesh, the same as one built afresh chunk by chunk.
            for (version, grid) in [(2, &g2), (0, &g0), (1, &g1), (2, &g2)] {
                let (v, mesh) = get(version, grid, radius);
                assert_eq!(v, version);
                assert_eq!(mesh.grid(), grid);
                assert_eq!(mesh.polygons().collect::<Vec<_>>(), fresh(grid));
            }
            // No newer grid is handed out.
            share.offer(1, p, 2, &Arc::new(g2.clone()));
            assert!(share.newer(1, p, 0).is_none());
        }
        // Versions no search in flight reads go (but for the slot's own).
        share.keep_from(Some(2));
        let kept = |radius: u32| {
            let shared = share.0.lock();
            let k = shared.meshes.iter().find(|k| k.radius == radius).unwrap();
            let slot = k.mesh.lock();
            slot.kept.iter().map(|(v, _)| *v).collect::<Vec<_>>()
        };
        assert_eq!(kept(0), [2]);
        assert_eq!(kept(32), [2]);
    }

    #[test]
    fn a_mesh_built_in_slices_is_answered_once_built() {
        let share = MeshShare::default();
        let grid = Grid::new(100, 100).unwrap();
        let mut slices = 0;
        let mesh = loop {
            slices += 1;
            if let Some((_, mesh)) = share.mesh(1, ProfileId::DEFAULT, 32, 0, &grid, &mut { 1 }) {
                break mesh;
            }
        };
        assert!(slices > 1, "built in {slices} slices");
        assert!(mesh.is_complete());
        let fresh = NavMesh::with_radius(&grid, 0.5).unwrap();
        assert!(mesh.polygons().eq(fresh.polygons()));
    }
}

#[cfg(test)]
mod demand_tests {
    use super::*;

    /// Meshes built on demand: a search's chunks go to the store's mesh
    /// while it is the search's (same lineage, same grid version); after
    /// an edit, or once the mesh was replaced, the search grows a copy of
    /// its own and the store's mesh is left as it is.
    #[test]
    fn chunks_a_search_builds_go_to_the_store_while_its_mesh_is_the_stores() {
        let share = MeshShare::default();
        share.set_building(MeshBuilding::OnDemand);
        assert!(share.on_demand(1));
        let p = ProfileId::DEFAULT;
        let mut grid = Grid::new(300, 300).unwrap();
        let get = |version: u64, grid: &Grid| {
            share
                .mesh(1, p, 32, version, grid, &mut { u64::MAX })
                .unwrap()
        };
        let (v, m0) = get(0, &grid);
        assert_eq!(v, 0);
        assert!(m0.is_on_demand());
        assert_eq!(m0.chunk_count(), 0);
        let (a, work) = share.grow(1, p, 32, 0, Arc::clone(&m0), &[0, 1]);
        assert!(work > 0);
        assert_eq!(a.chunk_count(), 2);
        assert_eq!(get(0, &grid).1.chunk_count(), 2, "the store's mesh grew");
        // A search on the first snapshot (none of those chunks) grows the
        // store's mesh, which holds them all.
        let (b, _) = share.grow(1, p, 32, 0, Arc::clone(&m0), &[5]);
        assert_eq!(b.chunk_count(), 3);
        assert_eq!(get(0, &grid).1.chunk_count(), 3);

        // An edit in chunk 0: the store's mesh is brought up to it; a
        // search still on version 0 grows its own copy.
        grid.set_free(bevy_math::UVec2::new(3, 3), false).unwrap();
        let (v, m1) = get(1, &grid);
        assert_eq!((v, m1.chunk_count()), (1, 3));
        let (c, _) = share.grow(1, p, 32, 0, Arc::clone(&b), &[7]);
        assert_eq!(c.chunk_count(), 4);
        assert_eq!(c.grid(), b.grid());
        assert_eq!(get(1, &grid).1.chunk_count(), 3, "the store's mesh is left");

        // Built whole now: the meshes kept go; a search on an old mesh
        // built on demand grows its own.
        share.set_building(MeshBuilding::Whole);
        assert!(!share.on_demand(1 << 40));
        let (_, whole) = get(1, &grid);
        assert!(!whole.is_on_demand());
        let (d, _) = share.grow(1, p, 32, 1, Arc::clone(&m1), &[9]);
        assert!(d.is_on_demand());
        assert_eq!(d.chunk_count(), 4);
        let (_, again) = get(1, &grid);
        assert!(Arc::ptr_eq(&again, &whole), "the store's mesh is left");
    }
}
