//! What the main thread shares with the searches on meshes: the newest
//! grid of each profile, and the radii agents use.
//!
//! A search thread keeps a navigation mesh per (grid, radius) and brings it
//! up to date with the grid of each search it runs on it, rebuilding the
//! chunks the edits since touched. Searches sent over many frames of edits
//! would each rebuild the chunks of one frame's edits; on the newest grid,
//! the first one brings the mesh up to date at once and those after it
//! find it current. The answer says which grid version it was found on,
//! and the plugin checks it against the edits made since, as for any
//! search. A thread drops the meshes of radii no agent uses any more.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::grid::Grid;
use crate::plugin::world::ProfileId;

/// The newest grid snapshot sent with a search, per (layout, profile), and
/// the radius classes in use.
#[derive(Clone, Default)]
pub(crate) struct MeshShare(Arc<Mutex<Shared>>);

#[derive(Default)]
struct Shared {
    grids: Vec<Newest>,
    /// The radii of the meshes agents use, in 64ths of a cell, sorted.
    radii: Vec<u32>,
}

/// One profile's newest grid.
struct Newest {
    layout_id: u64,
    profile: ProfileId,
    version: u64,
    grid: Arc<Grid>,
}

impl MeshShare {
    /// Records `grid`, the profile's grid at `NavGrid` version `version`,
    /// if it is newer than the one recorded.
    pub(crate) fn offer(&self, layout_id: u64, profile: ProfileId, version: u64, grid: &Arc<Grid>) {
        let mut shared = self.0.lock();
        match shared.grids.iter_mut().find(|n| n.profile == profile) {
            Some(n) if n.layout_id == layout_id && n.version >= version => {}
            Some(n) => {
                n.layout_id = layout_id;
                n.version = version;
                n.grid = Arc::clone(grid);
            }
            None => shared.grids.push(Newest {
                layout_id,
                profile,
                version,
                grid: Arc::clone(grid),
            }),
        }
    }

    /// The profile's recorded grid and its version, if newer than
    /// `version` (of the same layout).
    pub(crate) fn newer(
        &self,
        layout_id: u64,
        profile: ProfileId,
        version: u64,
    ) -> Option<(u64, Arc<Grid>)> {
        let shared = self.0.lock();
        shared
            .grids
            .iter()
            .find(|n| n.profile == profile && n.layout_id == layout_id && n.version > version)
            .map(|n| (n.version, Arc::clone(&n.grid)))
    }

    /// Sets the radii agents use (64ths of a cell).
    pub(crate) fn set_radii(&self, radii: impl Iterator<Item = u32>) {
        let mut shared = self.0.lock();
        shared.radii.clear();
        shared.radii.extend(radii);
        shared.radii.sort_unstable();
        shared.radii.dedup();
    }

    /// Whether an agent uses the mesh for `radius` cells.
    pub(crate) fn in_use(&self, radius: f64) -> bool {
        let n = radius * 64.0;
        let shared = self.0.lock();
        shared.radii.binary_search(&(n as u32)).is_ok() && n.fract() == 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn radii_in_use_are_told_exactly() {
        let share = MeshShare::default();
        share.set_radii([32, 29, 32].into_iter());
        assert!(share.in_use(0.5));
        assert!(share.in_use(29.0 / 64.0));
        assert!(!share.in_use(0.45));
        assert!(!share.in_use(1.0));
        share.set_radii(core::iter::empty());
        assert!(!share.in_use(0.5));
    }
}
