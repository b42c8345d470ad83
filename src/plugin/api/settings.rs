//! [`PathfindingSettings`]: the runtime configuration resource.
//!
//! The plugin inserts the default settings unless the app already has the
//! resource, so a game either inserts its own before adding the plugin or
//! changes fields at any time through `ResMut<PathfindingSettings>`:
//!
//! ```
//! use bevy_anyangle::plugin::PathfindingSettings;
//! use bevy_anyangle::prelude::*;
//! use bevy_ecs::prelude::*;
//!
//! fn use_anya(mut settings: ResMut<PathfindingSettings>) {
//!     settings.algorithm = Algorithm::Anya;
//! }
//! # let mut world = World::new();
//! # world.insert_resource(PathfindingSettings::default());
//! # world.run_system_once(use_anya).unwrap();
//! # assert_eq!(world.resource::<PathfindingSettings>().algorithm, Algorithm::Anya);
//! # use bevy_ecs::system::RunSystemOnce;
//! ```
//!
//! A game may also remove the resource: the plugin then uses
//! [`PathfindingSettings::default`] until one is inserted again (its systems
//! read it as an `Option`, so they do not fail without it). Removing it
//! counts as changing every field to its default.
//!
//! # What a change does
//!
//! | field | effect on existing paths |
//! |---|---|
//! | `algorithm` | every agent without its own [`PathRequest::algorithm`](crate::plugin::PathRequest::algorithm) that has a path ahead or a search running replans ([`PlanReason::AlgorithmChanged`](crate::plugin::PlanReason::AlgorithmChanged)), following its old path meanwhile; agents that arrived stay |
//! | `fallback` | agents whose status is `Fallback` or `Unreachable`, and agents whose search is running (planned with the old policy), replan ([`PlanReason::FallbackChanged`](crate::plugin::PlanReason::FallbackChanged)) |
//! | `node_budget` | raised or removed: agents whose last search ran out of budget (status `Failed(BudgetExhausted)`) replan ([`PlanReason::BudgetChanged`](crate::plugin::PlanReason::BudgetChanged)) |
//! | `paused` | searches already running finish; the others wait (agents keep their paths) |
//! | `main_thread_budget` | without search threads: the searches of the next frames run for that long a frame |
//! | everything else | applies to the next searches; no replan |
//!
//! A replanning agent keeps following its current path meanwhile (it is
//! marked [`Replanning`](crate::plugin::Replanning)).

use core::time::Duration;

#[cfg(feature = "reflect")]
use bevy_ecs::reflect::ReflectResource;
use bevy_ecs::resource::Resource;
#[cfg(feature = "reflect")]
use bevy_reflect::std_traits::ReflectDefault;

use crate::search::{Algorithm, DEFAULT_NODE_BUDGET, FallbackPolicy, PlanOptions};

/// Runtime settings of the pathfinding plugin. See the [module docs](self)
/// for what changing each field does.
#[derive(Resource, Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Resource, Debug, PartialEq, Default, Clone)
)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PathfindingSettings {
    /// The planner for agents that do not pick their own. Default:
    /// [`Algorithm::Anya`] (shortest paths, nothing built beforehand).
    /// [`Algorithm::Polyanya`] gives the same paths in about half the time
    /// on game maps, on a navigation mesh the plugin builds once per
    /// profile's grid for all its searches (the first search on it waits
    /// for the build, some milliseconds on a 512 x 512 map) and keeps in
    /// step with edits chunk by chunk.
    /// Without search threads the main thread builds it in slices within
    /// [`main_thread_budget`](Self::main_thread_budget), a chunk or more a
    /// slice, and updates it after edits at once (the chunks they touched).
    pub algorithm: Algorithm,
    /// Unreachable goals: a fallback path to the closest reachable point
    /// (status `Fallback`, the default) or status `Unreachable`.
    pub fallback: FallbackPolicy,
    /// At most this many searches sent to the search threads and not yet
    /// applied; further agents wait their turn (most urgent first, see
    /// [`PathStatus`](crate::plugin::PathStatus)). `None` (the default): no fixed
    /// cap, the plugin keeps about two frames of work waiting for the
    /// threads. Values below 1 count as 1.
    pub max_searches_in_flight: Option<usize>,
    /// Holds the search threads: searches already running finish, queued
    /// ones wait until this is `false` again. For debugging tools (freeze
    /// planning to look at it) and for tests that need results to arrive
    /// late. Default: `false`.
    pub paused: bool,
    /// Without search threads (in the browser, or with
    /// [`AnyAnglePlugin::search_threads`](crate::plugin::AnyAnglePlugin::search_threads)
    /// `Some(0)`), searches run on the main thread, in slices, and the
    /// plugin's systems take about this long a frame in all: searches get
    /// what the plugin's other work that frame leaves of it, reckoning with
    /// what applying their answers and steering cost after them in recent
    /// frames (at most half the budget is kept for that). A search that
    /// does not end in a frame goes on in the next, with the same path as
    /// on a thread. The last slice may run over by up to about 0.15 ms, and
    /// a frame that applies more answers than of late costs more (see
    /// [`PathfindingDiagnostics::frame_cost`](crate::plugin::PathfindingDiagnostics::frame_cost)).
    /// While searches wait, one short slice (about 0.05 ms) runs each frame
    /// whatever the budget, so that they always go on. The first search on
    /// a grid of up to about 1000 x 1000 cells also allocates its search
    /// memory (a few milliseconds once; see [`Planner::reserve`](crate::search::Planner::reserve)).
    /// Ignored with search threads. Default: 3 ms (a fifth of a 60 fps
    /// frame).
    #[cfg_attr(feature = "serde", serde(default = "default_main_thread_budget"))]
    pub main_thread_budget: Duration,
    /// Node expansions allowed per search before it fails with
    /// [`PathFailure::BudgetExhausted`](crate::plugin::PathFailure::BudgetExhausted):
    /// the agent then stands where it is with an empty [`NavPath`](crate::plugin::NavPath)
    /// (an agent in a wall still gets its way out) and a
    /// [`PathFailed`](crate::plugin::PathFailed) message and event are sent; it
    /// plans again when its request changes, the grid is replaced, or the
    /// budget is raised or removed. `None`: no limit. Default:
    /// [`DEFAULT_NODE_BUDGET`] (one million, about four times what the
    /// hardest query of the bundled benchmark maps needs), so that no search
    /// ties up a search thread for minutes on a huge open map.
    pub node_budget: Option<u64>,
    /// Heuristic weight for Lazy Theta* and A* (see
    /// [`PlanOptions::heuristic_weight`]). Default: 1.
    pub heuristic_weight: f64,
    /// An agent farther than this (world units) from the segment of its path
    /// it is on replans ([`PlanReason::OffPath`](crate::plugin::PlanReason::OffPath)); an agent following
    /// an entity replans when the entity is this far from the path's end
    /// ([`PlanReason::TargetMoved`](crate::plugin::PlanReason::TargetMoved)).
    /// `f32::INFINITY` turns both off, and so does NaN (a value computed
    /// from a division by zero must not make every agent replan every
    /// frame); negative values count as 0 (see
    /// [`PathfindingSettings::replan_threshold`]). Keep it
    /// above [`PathFollower::arrive_radius`](crate::plugin::PathFollower::arrive_radius).
    /// Default: 2.
    pub replan_distance: f32,
    /// Whether agents of a radius plan on the navigation mesh for their
    /// radius (`true`, the default): they go wherever their disc fits,
    /// within 0.09 cell, on the shortest paths there (Anya and Polyanya;
    /// Lazy Theta\* and A\* plan over the mesh's corners, see
    /// [`PathRequest`](crate::plugin::PathRequest)). With `false` they plan
    /// on eroded grids, whole cells, which close corridors under 3 cells
    /// wide. Agents of a profile whose costs differ plan on eroded grids
    /// either way.
    ///
    /// An edit costs an eroded grid microseconds. The plugin keeps one mesh
    /// per (profile, radius class) in use for all its searches, and the
    /// first search on it after an edit rebuilds the 32 x 32-cell chunks
    /// the edit reaches (about 0.1 ms a chunk in release builds; an edit by
    /// a chunk's corner reaches four): a game that edits its grid every
    /// frame near many agents of many radius classes spends that much more
    /// search time per edit and class. Agents already planned keep what they
    /// planned on until they plan again.
    #[cfg_attr(feature = "serde", serde(default = "yes"))]
    pub radius_meshes: bool,
    /// Whether agents heading for one goal share one search from it
    /// (`true`, the default). When at least 8 agents of one profile
    /// without costs and one radius class, planned by Anya or Polyanya,
    /// wait to plan towards the same point (or the same entity), one search
    /// from the goal answers all of them ([`Planner::plan_many_on_mesh`] on
    /// the profile's mesh for their radius), with paths exactly as long as
    /// their own searches give: 1,000 agents cost about as much as 20
    /// single searches. Anya's point agents are grouped once the profile's
    /// mesh exists, or at once on grids of up to 2^20 cells (the group's
    /// search builds it, in tens of milliseconds). `false`: every agent
    /// gets its own search.
    ///
    /// [`Planner::plan_many_on_mesh`]: crate::search::Planner::plan_many_on_mesh
    #[cfg_attr(feature = "serde", serde(default = "yes"))]
    pub shared_searches: bool,
    /// Lockstep: `Some` makes every answer arrive in a frame fixed when
    /// its search is sent, and every outcome depend on the inputs alone
    /// (see [`Lockstep`] and the plugin's
    /// [lockstep section](crate::plugin#lockstep-and-determinism)).
    /// `None`, the default: answers are applied as soon as they arrive.
    #[cfg_attr(feature = "serde", serde(default))]
    pub lockstep: Option<Lockstep>,
    /// How the plugin builds its navigation meshes (Polyanya's, and those
    /// for agents of a radius): whole before the first search on them, or
    /// chunk by chunk as searches reach them. Default:
    /// [`MeshBuilding::Auto`].
    #[cfg_attr(feature = "serde", serde(default))]
    pub mesh_building: MeshBuilding,
}

/// How the plugin builds its navigation meshes
/// ([`PathfindingSettings::mesh_building`]). The paths are the same either
/// way.
///
/// ```
/// use bevy_anyangle::plugin::{MeshBuilding, PathfindingSettings};
///
/// let settings = PathfindingSettings::default();
/// assert_eq!(settings.mesh_building, MeshBuilding::Auto);
/// assert!(!MeshBuilding::Auto.on_demand(512 * 512));
/// assert!(MeshBuilding::Auto.on_demand(8192 * 8192));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Default, Clone)
)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum MeshBuilding {
    /// [`MeshBuilding::OnDemand`] on grids of more than 2^20 cells (1024 x
    /// 1024), [`MeshBuilding::Whole`] on smaller ones.
    #[default]
    Auto,
    /// The whole mesh is built before the first search on it (on a 512 x
    /// 512 map, milliseconds; on 8192 x 8192, seconds for a point agent's
    /// mesh and more for each radius class). Its chunks are meshed in
    /// groups, so searches across open areas expand fewer polygons.
    Whole,
    /// Chunks are built as searches reach them
    /// ([`NavMesh::on_demand`](crate::mesh::NavMesh::on_demand)): a first
    /// path waits only for the chunks around its way, and memory follows
    /// where agents go. In lockstep mode meshes are built whole (which
    /// chunks exist would depend on the order the searches ran in).
    OnDemand,
}

impl MeshBuilding {
    /// Whether meshes of a grid of `cells` cells are built on demand.
    #[must_use]
    pub fn on_demand(self, cells: u64) -> bool {
        match self {
            MeshBuilding::Auto => cells > 1 << 20,
            MeshBuilding::Whole => false,
            MeshBuilding::OnDemand => true,
        }
    }
}

/// The settings of lockstep mode ([`PathfindingSettings::lockstep`]).
///
/// A search sent in frame `N` is applied in frame `N + delay`: if its
/// answer is late, the main thread waits for it there
/// ([`PathfindingDiagnostics::lockstep_wait`](crate::plugin::PathfindingDiagnostics::lockstep_wait)
/// says how long). Which searches are sent in a frame depends only on the
/// agents' requests, never on how busy the search threads are: at most
/// `searches_per_frame` waiting agents are served a frame, in the order of
/// [who is served first](crate::plugin#who-is-served-first) (agents in a
/// wall or on a blocked path always at once). Set it before agents ask for
/// paths: answers to searches sent before it was set are applied as they
/// arrive; when it is unset, answers held for a later frame are applied at
/// once.
///
/// ```
/// use bevy_anyangle::plugin::{Lockstep, PathfindingSettings};
///
/// let settings = PathfindingSettings {
///     lockstep: Some(Lockstep::default()),
///     ..Default::default()
/// };
/// assert_eq!(settings.lockstep.unwrap().delay, 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(
    feature = "reflect",
    derive(bevy_reflect::Reflect),
    reflect(Debug, PartialEq, Default, Clone)
)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Lockstep {
    /// Frames between the frame a search is sent in and the frame its
    /// answer is applied in (0: the same frame; the main thread then waits
    /// for every search it sends). Default: 2, so that search threads work
    /// while the game's frames go on.
    pub delay: u32,
    /// The most waiting agents served a frame, besides those in a wall or
    /// on a blocked path (served at once). Lower it where searches are
    /// long (large maps) and the main thread would wait for them; raise it
    /// where many agents ask at once and searches are short. Default: 1024.
    pub searches_per_frame: u32,
}

impl Default for Lockstep {
    fn default() -> Self {
        Lockstep {
            delay: 2,
            searches_per_frame: 1024,
        }
    }
}

/// `true`, the default of the settings that are on unless turned off.
#[cfg(feature = "serde")]
fn yes() -> bool {
    true
}

impl PathfindingSettings {
    /// [`replan_distance`](Self::replan_distance) as the plugin uses it:
    /// negative values give 0, NaN gives `f32::INFINITY` (off).
    ///
    /// ```
    /// use bevy_anyangle::plugin::PathfindingSettings;
    ///
    /// let with = |d| PathfindingSettings { replan_distance: d, ..Default::default() };
    /// assert_eq!(with(-1.0).replan_threshold(), 0.0);
    /// assert_eq!(with(f32::NAN).replan_threshold(), f32::INFINITY);
    /// assert_eq!(with(3.0).replan_threshold(), 3.0);
    /// ```
    #[must_use]
    pub fn replan_threshold(&self) -> f32 {
        if self.replan_distance.is_nan() {
            f32::INFINITY
        } else {
            self.replan_distance.max(0.0)
        }
    }
}

impl Default for PathfindingSettings {
    fn default() -> Self {
        PathfindingSettings {
            algorithm: Algorithm::Anya,
            fallback: FallbackPolicy::ClosestReachable,
            max_searches_in_flight: None,
            paused: false,
            main_thread_budget: default_main_thread_budget(),
            node_budget: Some(DEFAULT_NODE_BUDGET),
            heuristic_weight: 1.0,
            replan_distance: 2.0,
            radius_meshes: true,
            shared_searches: true,
            lockstep: None,
            mesh_building: MeshBuilding::Auto,
        }
    }
}

/// [`PathfindingSettings::main_thread_budget`]'s default: 3 ms.
fn default_main_thread_budget() -> Duration {
    Duration::from_millis(3)
}

impl PathfindingSettings {
    /// The search options for one query with `algorithm`.
    #[must_use]
    pub fn plan_options(&self, algorithm: Algorithm) -> PlanOptions {
        PlanOptions {
            algorithm,
            fallback: self.fallback,
            heuristic_weight: self.heuristic_weight,
            node_budget: self.node_budget,
        }
    }
}

#[cfg(all(test, feature = "serde"))]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_through_serde() {
        let settings = PathfindingSettings {
            algorithm: Algorithm::LazyTheta,
            node_budget: Some(1000),
            replan_distance: 2.5,
            ..PathfindingSettings::default()
        };
        let text = ron::to_string(&settings).unwrap();
        assert_eq!(
            ron::from_str::<PathfindingSettings>(&text).unwrap(),
            settings
        );
    }

    #[test]
    fn settings_without_the_later_fields_read_as_their_defaults() {
        let full = ron::to_string(&PathfindingSettings::default()).unwrap();
        let mut text = full.clone();
        for field in [
            "radius_meshes:true",
            "shared_searches:true",
            "lockstep:None",
            "mesh_building:Auto",
        ] {
            assert!(text.contains(field), "{full}");
            text = text.replace(&format!("{field},"), "").replace(field, "");
        }
        assert_ne!(text, full);
        let read: PathfindingSettings =
            ron::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(read, PathfindingSettings::default(), "{text}");
    }
}
