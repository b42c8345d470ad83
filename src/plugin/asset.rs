//! Moving AI `.map` files as Bevy assets, and a [`NavGrid`] that follows one
//! (feature `asset`).
//!
//! Add [`MovingAiMapPlugin`] after Bevy's `AssetPlugin`, load a map with the
//! `AssetServer` and insert a [`NavGridAsset`] naming it. Once the map has
//! loaded, the plugin inserts the [`NavGrid`]; whenever the asset changes
//! (hot reload with Bevy's `file_watcher` feature, or a write through
//! `Assets<MovingAiMap>`), the grid follows it:
//!
//! - a map of the same size is applied as edits of the cells that differ,
//!   so only the agents whose paths those cells touch replan, as after any
//!   edit ([`PlanReason::PathBlocked`](super::PlanReason::PathBlocked) and
//!   friends);
//! - a map of another size (or one that differs in more than
//!   [`MAX_EDIT_RUNS`] runs of cells) replaces the grid, and every agent
//!   replans ([`PlanReason::GridReplaced`](super::PlanReason::GridReplaced)).
//!
//! A map that fails to load leaves the [`NavGrid`] as it was (none, before
//! the first load: agents wait with [`PathStatus::Pending`](super::PathStatus::Pending));
//! the asset server reports the error as for any asset.
//!
//! ```no_run
//! use bevy_anyangle::plugin::asset::{MovingAiMap, MovingAiMapPlugin, NavGridAsset};
//! use bevy_anyangle::plugin::{AnyAnglePlugin, GridTransform};
//! use bevy_app::{App, Startup, TaskPoolPlugin};
//! use bevy_asset::{AssetPlugin, AssetServer};
//! use bevy_ecs::prelude::*;
//!
//! fn load_map(mut commands: Commands, server: Res<AssetServer>) {
//!     commands.insert_resource(NavGridAsset {
//!         map: server.load::<MovingAiMap>("maps/arena.map"),
//!         transform: GridTransform::default(),
//!     });
//! }
//!
//! App::new()
//!     .add_plugins((TaskPoolPlugin::default(), AssetPlugin::default()))
//!     .add_plugins((AnyAnglePlugin::default(), MovingAiMapPlugin))
//!     .add_systems(Startup, load_map)
//!     .run();
//! ```

use bevy_app::{App, Plugin, PreUpdate};
use bevy_asset::io::Reader;
use bevy_asset::{Asset, AssetApp, AssetEvent, AssetLoader, AssetServer, Assets, Handle};
use bevy_ecs::prelude::*;
use bevy_math::{URect, UVec2};
use bevy_reflect::TypePath;
use thiserror::Error;

use crate::grid::{Grid, MapParseError};
use crate::plugin::world::{GridTransform, NavGrid};

/// At most this many runs of changed cells (a run: neighbours in one row
/// that change the same way) are applied as edits when a map asset changes;
/// a bigger change replaces the grid.
pub const MAX_EDIT_RUNS: usize = 4096;

/// A Moving AI `.map` file, loaded by [`MovingAiMapLoader`].
#[derive(Asset, TypePath, Clone, Debug)]
pub struct MovingAiMap {
    /// The map's cells (see [`Grid::from_movingai`] for which letters are
    /// walkable).
    pub grid: Grid,
}

/// Why a `.map` asset did not load.
#[derive(Debug, Error)]
pub enum MovingAiMapError {
    /// The file could not be read.
    #[error("could not read the map: {0}")]
    Io(#[from] std::io::Error),
    /// The file is not UTF-8 text.
    #[error("the map is not UTF-8 text: {0}")]
    NotText(#[from] std::str::Utf8Error),
    /// The file is not a valid Moving AI map.
    #[error(transparent)]
    Parse(#[from] MapParseError),
}

/// Loads [`MovingAiMap`] assets from `.map` files.
#[derive(TypePath, Clone, Copy, Debug, Default)]
pub struct MovingAiMapLoader;

impl AssetLoader for MovingAiMapLoader {
    type Asset = MovingAiMap;
    type Settings = ();
    type Error = MovingAiMapError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _settings: &(),
        _load_context: &mut bevy_asset::LoadContext<'_>,
    ) -> Result<MovingAiMap, MovingAiMapError> {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await?;
        let text = std::str::from_utf8(&bytes)?;
        Ok(MovingAiMap {
            grid: Grid::from_movingai(text)?,
        })
    }

    fn extensions(&self) -> &[&str] {
        &["map"]
    }
}

/// The [`MovingAiMap`] the [`NavGrid`] follows, and where it lies in the
/// world. Insert it (or change it) to have [`MovingAiMapPlugin`] build the
/// grid once the map has loaded; remove it to stop following (the
/// [`NavGrid`] stays).
#[derive(Resource, Clone, Debug)]
pub struct NavGridAsset {
    /// The map.
    pub map: Handle<MovingAiMap>,
    /// Where the grid lies in the world; a change moves the grid (every
    /// agent replans, see [`NavGrid::set_transform`]).
    pub transform: GridTransform,
}

/// Registers the [`MovingAiMap`] asset and its loader, and keeps the
/// [`NavGrid`] in step with a [`NavGridAsset`] (see the [module docs](self)).
///
/// # Panics
///
/// When the app starts without Bevy's `AssetPlugin` (as Bevy's own asset
/// types do): add `AssetPlugin` (part of `DefaultPlugins`) first.
#[derive(Clone, Copy, Debug, Default)]
pub struct MovingAiMapPlugin;

impl Plugin for MovingAiMapPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(PreUpdate, sync_nav_grid);
        if app.world().contains_resource::<AssetServer>() {
            register(app);
        }
    }

    fn finish(&self, app: &mut App) {
        if !app.world().contains_resource::<Assets<MovingAiMap>>() {
            assert!(
                app.world().contains_resource::<AssetServer>(),
                "MovingAiMapPlugin needs Bevy's AssetPlugin (part of DefaultPlugins)"
            );
            register(app);
        }
    }
}

fn register(app: &mut App) {
    app.init_asset::<MovingAiMap>()
        .register_asset_loader(MovingAiMapLoader);
}

/// Whether the [`NavGrid`] waits for the asset to (re)load.
#[derive(Default)]
struct Stale(bool);

/// Builds or updates the [`NavGrid`] when its [`NavGridAsset`] or the map
/// it names changes.
fn sync_nav_grid(
    source: Option<Res<NavGridAsset>>,
    maps: Option<Res<Assets<MovingAiMap>>>,
    mut events: MessageReader<AssetEvent<MovingAiMap>>,
    nav: Option<ResMut<NavGrid>>,
    mut stale: Local<Stale>,
    mut commands: Commands,
) {
    let (Some(source), Some(maps)) = (source, maps) else {
        events.clear();
        return;
    };
    let id = source.map.id();
    for event in events.read() {
        if let AssetEvent::Added { id: changed }
        | AssetEvent::Modified { id: changed }
        | AssetEvent::LoadedWithDependencies { id: changed } = event
            && *changed == id
        {
            stale.0 = true;
        }
    }
    if source.is_changed() {
        stale.0 = true;
    }
    if !stale.0 {
        return;
    }
    let Some(map) = maps.get(id) else {
        return; // not loaded (yet, or failed): the grid stays as it is
    };
    stale.0 = false;
    match nav {
        Some(mut nav) if nav.grid().size() == map.grid.size() => {
            if nav.transform() != source.transform {
                nav.set_transform(source.transform);
            }
            if let Some(runs) = changed_runs(nav.grid(), &map.grid) {
                if !runs.is_empty() {
                    // Every run lies inside the grid, which has the map's size.
                    let applied = nav.edit(|editor| {
                        for &(rect, free) in &runs {
                            editor.set_rect_free(rect, free)?;
                        }
                        Ok(())
                    });
                    debug_assert!(applied.is_ok(), "runs lie inside the grid");
                }
            } else {
                commands.insert_resource(NavGrid::new(map.grid.clone(), source.transform));
            }
        }
        _ => commands.insert_resource(NavGrid::new(map.grid.clone(), source.transform)),
    }
}

/// The cells of `new` that differ from `old` (same size), as one-row runs
/// with their new state, or `None` if there are more than
/// [`MAX_EDIT_RUNS`].
fn changed_runs(old: &Grid, new: &Grid) -> Option<Vec<(URect, bool)>> {
    let mut runs: Vec<(URect, bool)> = Vec::new();
    for y in 0..new.height() {
        let mut x = 0;
        while x < new.width() {
            let free = new.is_free(UVec2::new(x, y));
            if old.is_free(UVec2::new(x, y)) == free {
                x += 1;
                continue;
            }
            let start = x;
            while x < new.width()
                && new.is_free(UVec2::new(x, y)) == free
                && old.is_free(UVec2::new(x, y)) != free
            {
                x += 1;
            }
            if runs.len() == MAX_EDIT_RUNS {
                return None;
            }
            runs.push((URect::new(start, y, x, y + 1), free));
        }
    }
    Some(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_cover_exactly_the_changed_cells() {
        let old = Grid::from_ascii("....\n.##.\n....").unwrap();
        let new = Grid::from_ascii("##..\n...#\n....").unwrap();
        let runs = changed_runs(&old, &new).unwrap();
        let mut patched = old.clone();
        for &(rect, free) in &runs {
            patched.set_rect_free(rect, free).unwrap();
        }
        for y in 0..3 {
            for x in 0..4 {
                let c = UVec2::new(x, y);
                assert_eq!(patched.is_free(c), new.is_free(c), "cell {c}");
            }
        }
        assert_eq!(runs.len(), 3, "{runs:?}");
        assert_eq!(changed_runs(&old, &old).unwrap(), Vec::new());
    }

    #[test]
    fn too_many_runs_replace_the_grid() {
        let old = Grid::new(2 * MAX_EDIT_RUNS as u32 + 2, 1).unwrap();
        let mut new = old.clone();
        for x in (0..old.width()).step_by(2) {
            new.set_free(UVec2::new(x, 0), false).unwrap();
        }
        assert_eq!(changed_runs(&old, &new), None);
    }
}
