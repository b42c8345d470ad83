//! The grids each kind of agent plans on (per movement profile and clearance), kept in step with the `NavGrid`'s edits.
//!
//! The [`NavGrid`](crate::plugin::NavGrid)'s own grid is the default profile's. A
//! grid built from terrain ([`NavGrid::from_terrain`](crate::plugin::NavGrid::from_terrain),
//! or a Moving AI map) also keeps the terrain, and each profile added with
//! [`NavGrid::add_profile`](crate::plugin::NavGrid::add_profile) gets a grid of its
//! own, free where its terrain is passable. Each (profile, clearance) in use
//! gets an eroded grid of its profile's grid. Every edit goes to the
//! `NavGrid`'s grid first; the terrain, the profile grids and the eroded grids
//! follow, each keeping a log of its own changes tagged with the `NavGrid`'s
//! version, so that the plugin checks each agent against the changes of the
//! grid it plans on. An agent planning on the mesh for its radius
//! (`Fit::Disc`; the dispatcher's mesh store keeps the meshes) is checked against
//! its profile's grid and log, with its radius.

use std::sync::Arc;

use bevy_math::{DVec2, URect, UVec2};
#[cfg(feature = "reflect")]
use bevy_reflect::std_traits::ReflectDefault;

use crate::clearance::{Clearance, ErodedGrid};
use crate::grid::{Grid, GridEdit};
use crate::terrain::{Profile, Terrain, TerrainMap};

/// A movement profile registered with a [`NavGrid`](crate::plugin::NavGrid) (see
/// [`NavGrid::add_profile`](crate::plugin::NavGrid::add_profile)).
///
/// [`ProfileId::DEFAULT`] is the default profile (ground and swamp
/// passable), the `NavGrid`'s own grid; it is the default of
/// [`PathRequest::profile`](crate::plugin::PathRequest::profile).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Hash, Default, Clone)
)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ProfileId(pub(crate) u16);

impl ProfileId {
    /// The default profile: the [`NavGrid`](crate::plugin::NavGrid)'s own grid.
    pub const DEFAULT: ProfileId = ProfileId(0);
}

/// Which grid an agent plans on: its profile's, for its fit.
pub(crate) type ViewKey = (ProfileId, Fit);

/// How far (cells) an agent must stand from where a search started to be
/// elsewhere: positions read two ways (a `Transform` and a parent's
/// `GlobalTransform`) may differ by rounding.
pub(crate) const MOVED: f64 = 1e-3;

/// How an agent's radius shapes the space it plans in. Agents of one
/// profile and fit share it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Fit {
    /// The profile's grid eroded for the clearance (see [`crate::clearance`];
    /// [`Clearance::NONE`]: the grid itself, for point agents).
    Eroded(Clearance),
    /// The navigation mesh of the profile's grid for a disc of this many
    /// 64ths of a cell ([`NavMesh::with_radius`](crate::mesh::NavMesh::with_radius)),
    /// kept once for every search; the view is the profile's grid.
    Disc(u32),
}

impl Fit {
    /// Point agents: the profile's grid itself.
    pub(crate) const POINT: Fit = Fit::Eroded(Clearance::NONE);

    /// Whether this is a point agent's.
    pub(crate) fn is_none(self) -> bool {
        self == Fit::POINT
    }

    /// The radius of a disc, in cells (0 for eroded grids).
    pub(crate) fn disc_radius(self) -> f64 {
        match self {
            Fit::Eroded(_) => 0.0,
            Fit::Disc(n) => f64::from(n) / 64.0,
        }
    }

    /// How many cells from an edited cell of the profile's grid what the
    /// agent plans on may change.
    pub(crate) fn reach(self) -> u32 {
        match self {
            Fit::Eroded(clearance) => clearance.reach(),
            Fit::Disc(_) => {
                let r = self.disc_radius();
                (r + crate::mesh::NavMesh::tolerance_for(r)).ceil() as u32
            }
        }
    }
}

/// A profile's own grid, with the log of its changes.
#[derive(Clone, Debug)]
struct ProfileLayer {
    profile: Profile,
    grid: Arc<Grid>,
    log: Vec<GridEdit>,
    /// The `NavGrid`'s version when the layer was built.
    since: u64,
    /// The rectangles its grid changed in by the edit being committed.
    changed: Vec<URect>,
}

/// The eroded grid of one (profile, clearance), with its own edit log.
#[derive(Clone, Debug)]
struct ClearanceView {
    profile: ProfileId,
    eroded: ErodedGrid,
    /// The eroded grid's changes, each tagged with the version of the
    /// `NavGrid` edit that made it, oldest first; complete after `since`.
    log: Vec<GridEdit>,
    /// The `NavGrid`'s version when the view was built.
    since: u64,
}

/// The terrain, the profiles' grids and the eroded grids of a `NavGrid`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Layers {
    pub(crate) terrain: Option<TerrainMap>,
    /// A snapshot of `terrain` for searches with costs, dropped by edits.
    terrain_snapshot: Option<Arc<TerrainMap>>,
    /// Profile `ProfileId(i + 1)` is `profiles[i]`.
    profiles: Vec<ProfileLayer>,
    views: Vec<ClearanceView>,
    /// Eroded grids kept for good.
    pinned: Vec<(ProfileId, Clearance)>,
}

/// The grid an agent of one (profile, clearance) plans on, and its changes.
#[derive(Clone, Copy)]
pub(crate) struct View<'a> {
    /// The (eroded) grid.
    pub(crate) grid: &'a Grid,
    snapshot: &'a Arc<Grid>,
    /// The profile's grid it is eroded from (`grid` itself without a
    /// clearance).
    base: &'a Arc<Grid>,
    log: &'a [GridEdit],
    /// The oldest version `edits_since` answers for.
    floor: u64,
    version: u64,
    /// For a disc ([`Fit::Disc`]): its radius in cells; `grid` is the
    /// profile's (0 otherwise).
    pub(crate) disc: f64,
}

impl<'a> View<'a> {
    /// The changes to this grid made by the `NavGrid` edits after `version`,
    /// oldest first; `None` if the log no longer reaches back that far.
    pub(crate) fn edits_since(&self, version: u64) -> Option<&'a [GridEdit]> {
        if version < self.floor || version > self.version {
            return None;
        }
        let first = self.log.partition_point(|e| e.version <= version);
        Some(&self.log[first..])
    }

    /// For a disc: how far from an edited cell its mesh may change (its
    /// radius plus the mesh's tolerance); 0 otherwise.
    pub(crate) fn disc_reach(&self) -> f64 {
        self.disc + crate::mesh::NavMesh::tolerance_for(self.disc)
    }

    /// A snapshot of the grid for a background search.
    pub(crate) fn snapshot(&self) -> Arc<Grid> {
        Arc::clone(self.snapshot)
    }

    /// A snapshot of the profile's grid.
    pub(crate) fn base_snapshot(&self) -> Arc<Grid> {
        Arc::clone(self.base)
    }

    /// Where the path of an agent of `fit` standing at `p` (grid) starts on
    /// this grid, `None` where it does not fit and sees no place that does
    /// (see [`crate::clearance::start_point`]). For a disc, which plans on a
    /// mesh the search threads keep: `p` where it surely lies on the mesh
    /// (its radius plus the mesh's tolerance from every wall), else `None`
    /// (its search moves it onto the mesh).
    pub(crate) fn start_point(&self, fit: Fit, p: DVec2) -> Option<DVec2> {
        match fit {
            Fit::Eroded(clearance) => {
                crate::clearance::start_point(self.base, self.grid, clearance, p)
            }
            Fit::Disc(_) => {
                let r = fit.disc_radius();
                let room = r + crate::mesh::NavMesh::tolerance_for(r);
                (crate::clearance::wall_distance(self.base, p, fit.reach()) >= room).then_some(p)
            }
        }
    }

    /// Whether an agent of `fit` whose search found no room for it, started
    /// at `from` (grid; `None`: somewhere else than `p`), may find some from
    /// `p`, where it stands now: on an eroded grid, where it fits at `p` or
    /// sees a place that does ([`View::start_point`]); as a disc, whose mesh
    /// only the searches hold, wherever it stands elsewhere than `from`, by
    /// more than [`MOVED`] (a search from there tells).
    pub(crate) fn may_find_room(&self, fit: Fit, p: DVec2, from: Option<DVec2>) -> bool {
        match fit {
            Fit::Eroded(_) => self.start_point(fit, p).is_some(),
            Fit::Disc(_) => from.is_none_or(|from| from.distance(p) > MOVED),
        }
    }
}

/// Moves a grid's logged edits into `out`, tagged with `version` (the
/// `NavGrid`'s, not the grid's own).
fn take_edits(grid: &mut Arc<Grid>, out: &mut Vec<GridEdit>, version: u64) {
    if grid.edits_since(0).next().is_none() {
        return;
    }
    let grid = Arc::make_mut(grid);
    let from = out.len();
    out.extend(grid.edits_since(0).copied());
    grid.clear_edits_through(grid.version());
    for e in &mut out[from..] {
        e.version = version;
    }
}

impl Layers {
    /// Layers for a grid built from `terrain` (or without terrain).
    pub(crate) fn new(terrain: Option<TerrainMap>) -> Self {
        Layers {
            terrain,
            ..Layers::default()
        }
    }

    /// The profile of `id`, if registered.
    pub(crate) fn profile(&self, id: ProfileId) -> Option<&Profile> {
        if id == ProfileId::DEFAULT {
            return Some(default_profile());
        }
        self.profiles
            .get(usize::from(id.0) - 1)
            .map(|layer| &layer.profile)
    }

    /// Registers `profile` (its grid built from the terrain); the id of an
    /// equal profile if there is one. `None` without terrain, or when 65,535
    /// profiles exist.
    pub(crate) fn add_profile(&mut self, profile: Profile, version: u64) -> Option<ProfileId> {
        let terrain = self.terrain.as_ref()?;
        if profile == *default_profile() {
            return Some(ProfileId::DEFAULT);
        }
        if let Some(i) = self.profiles.iter().position(|l| l.profile == profile) {
            return Some(ProfileId(u16::try_from(i + 1).ok()?));
        }
        let id = ProfileId(u16::try_from(self.profiles.len() + 1).ok()?);
        self.profiles.push(ProfileLayer {
            grid: Arc::new(terrain.grid(&profile)),
            profile,
            log: Vec::new(),
            since: version,
            changed: Vec::new(),
        });
        Some(id)
    }

    /// A snapshot of the terrain for a search with costs.
    pub(crate) fn terrain_snapshot(&mut self) -> Option<Arc<TerrainMap>> {
        let terrain = self.terrain.as_ref()?;
        Some(Arc::clone(
            self.terrain_snapshot
                .get_or_insert_with(|| Arc::new(terrain.clone())),
        ))
    }

    /// After the `NavGrid`'s grid `main` changed in `main_rects` (and the
    /// terrain, already set, in `terrain_rects`): brings the terrain in line
    /// with `main` (a cell freed there becomes ground, a cell blocked there
    /// out of bounds, unless its terrain already says so) and the profile
    /// grids in line with the terrain. Returns whether a profile grid
    /// changed.
    pub(crate) fn follow(
        &mut self,
        main: &Grid,
        main_rects: &[URect],
        terrain_rects: &[URect],
    ) -> bool {
        let Some(terrain) = self.terrain.as_mut() else {
            return false;
        };
        let default = default_profile();
        let mut any_terrain = !terrain_rects.is_empty();
        for rect in main_rects {
            for y in rect.min.y..rect.max.y {
                for x in rect.min.x..rect.max.x {
                    let (xi, yi) = (i64::from(x), i64::from(y));
                    let free = main.is_free_xy(xi, yi);
                    let t = terrain.get(xi, yi).unwrap_or(Terrain::OUT_OF_BOUNDS);
                    if default.cost(t).is_some() != free {
                        let now = if free {
                            Terrain::GROUND
                        } else {
                            Terrain::OUT_OF_BOUNDS
                        };
                        let _ = terrain.set(UVec2::new(x, y), now);
                        any_terrain = true;
                    }
                }
            }
        }
        if any_terrain {
            self.terrain_snapshot = None;
        }
        let terrain = &*terrain;
        let mut any = false;
        for layer in &mut self.profiles {
            layer.changed.clear();
            let mut runs: Vec<(URect, bool)> = Vec::new();
            // (A terrain edit's rectangle is often the grid's edit too.)
            let extra = terrain_rects.iter().filter(|r| !main_rects.contains(r));
            for rect in main_rects.iter().chain(extra) {
                for y in rect.min.y..rect.max.y {
                    let mut run: Option<(u32, bool)> = None;
                    for x in rect.min.x..=rect.max.x {
                        let want = (x < rect.max.x).then(|| {
                            let t = terrain
                                .get(i64::from(x), i64::from(y))
                                .unwrap_or(Terrain::OUT_OF_BOUNDS);
                            layer.profile.cost(t).is_some()
                        });
                        let differs = want
                            .filter(|&w| w != layer.grid.is_free_xy(i64::from(x), i64::from(y)));
                        match (run, differs) {
                            (Some((_, free)), Some(w)) if free == w => {}
                            _ => {
                                if let Some((x0, free)) = run.take() {
                                    runs.push((URect::new(x0, y, x, y + 1), free));
                                }
                                run = differs.map(|w| (x, w));
                            }
                        }
                    }
                }
            }
            if !runs.is_empty() {
                any = true;
                let grid = Arc::make_mut(&mut layer.grid);
                let _ = grid.edit(|e| {
                    for &(r, free) in &runs {
                        e.set_rect_free(r, free)?;
                    }
                    Ok(())
                });
                layer.changed.extend(runs.iter().map(|&(r, _)| r));
            }
        }
        any
    }

    /// Logs what [`Layers::follow`] changed and updates the eroded grids,
    /// every change tagged with the `NavGrid`'s new `version`.
    pub(crate) fn commit(&mut self, main: &Grid, main_rects: &[URect], version: u64) {
        for layer in &mut self.profiles {
            take_edits(&mut layer.grid, &mut layer.log, version);
        }
        for view in &mut self.views {
            let (base, rects): (&Grid, &[URect]) = if view.profile == ProfileId::DEFAULT {
                (main, main_rects)
            } else {
                let layer = &self.profiles[usize::from(view.profile.0) - 1];
                (&layer.grid, &layer.changed)
            };
            if rects.is_empty() {
                continue;
            }
            view.eroded.update(base, rects.iter().copied());
            take_edits(view.eroded.grid_mut(), &mut view.log, version);
        }
    }

    /// Forgets logged changes up to `floor` (as the `NavGrid`'s log does).
    pub(crate) fn trim(&mut self, floor: u64) {
        for layer in &mut self.profiles {
            layer.log.retain(|e| e.version > floor);
        }
        for view in &mut self.views {
            view.log.retain(|e| e.version > floor);
        }
    }

    /// The grid and changes of `key`; `main` and `main_log` are the
    /// `NavGrid`'s own.
    pub(crate) fn view<'a>(
        &'a self,
        main: &'a Arc<Grid>,
        main_log: &'a [GridEdit],
        floor: u64,
        version: u64,
        (profile, fit): ViewKey,
    ) -> Option<View<'a>> {
        let (base, base_log, base_since) = if profile == ProfileId::DEFAULT {
            (main, main_log, 0)
        } else {
            let layer = self.profiles.get(usize::from(profile.0) - 1)?;
            (&layer.grid, layer.log.as_slice(), layer.since)
        };
        let clearance = match fit {
            Fit::Eroded(clearance) if !clearance.is_none() => clearance,
            _ => {
                return Some(View {
                    grid: base,
                    snapshot: base,
                    base,
                    log: base_log,
                    floor: floor.max(base_since),
                    version,
                    disc: fit.disc_radius(),
                });
            }
        };
        let view = self
            .views
            .iter()
            .find(|v| v.profile == profile && v.eroded.clearance() == clearance)?;
        Some(View {
            grid: view.eroded.grid(),
            snapshot: view.eroded.snapshot_ref(),
            base,
            log: &view.log,
            floor: floor.max(view.since),
            version,
            disc: 0.0,
        })
    }

    /// The (profile, clearance) pairs whose eroded grids are kept.
    pub(crate) fn kept(&self) -> impl Iterator<Item = (ProfileId, Clearance)> + '_ {
        self.views.iter().map(|v| (v.profile, v.eroded.clearance()))
    }

    /// Whether `key` names an eroded grid (of a registered profile).
    fn eroded(&self, key: ViewKey) -> Option<(ProfileId, Clearance)> {
        match key.1 {
            Fit::Eroded(c) if !c.is_none() && self.profile(key.0).is_some() => Some((key.0, c)),
            _ => None,
        }
    }

    /// Keeps `key`'s eroded grid for good (building it if needed).
    pub(crate) fn pin(&mut self, main: &Grid, key: (ProfileId, Clearance), version: u64) {
        let Some(key) = self.eroded((key.0, Fit::Eroded(key.1))) else {
            return;
        };
        if self.pinned.contains(&key) {
            return;
        }
        if !self.kept().any(|k| k == key) {
            self.add_view(main, key, version);
        }
        self.pinned.push(key);
    }

    /// Keeps exactly the eroded grids of `used` (and the pinned ones),
    /// building the missing ones (of registered profiles).
    pub(crate) fn keep(
        &mut self,
        main: &Grid,
        used: impl Iterator<Item = ViewKey> + Clone,
        version: u64,
    ) {
        let pinned = &self.pinned;
        self.views.retain(|v| {
            let key = (v.profile, Fit::Eroded(v.eroded.clearance()));
            used.clone().any(|u| u == key) || pinned.contains(&(key.0, v.eroded.clearance()))
        });
        for key in used {
            if let Some(key) = self.eroded(key)
                && !self.kept().any(|k| k == key)
            {
                self.add_view(main, key, version);
            }
        }
    }

    fn add_view(
        &mut self,
        main: &Grid,
        (profile, clearance): (ProfileId, Clearance),
        version: u64,
    ) {
        let base: &Grid = if profile == ProfileId::DEFAULT {
            main
        } else {
            &self.profiles[usize::from(profile.0) - 1].grid
        };
        let view = ClearanceView {
            profile,
            eroded: ErodedGrid::new(base, clearance),
            log: Vec::new(),
            since: version,
        };
        let at = self
            .views
            .partition_point(|v| (v.profile, v.eroded.clearance()) < (profile, clearance));
        self.views.insert(at, view);
    }
}

/// The default profile (ground and swamp at cost 1).
fn default_profile() -> &'static Profile {
    static DEFAULT: std::sync::OnceLock<Profile> = std::sync::OnceLock::new();
    DEFAULT.get_or_init(Profile::default)
}
