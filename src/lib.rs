#![doc = include_str!("../README.md")]
//!
//! # Crate layout
//!
//! | module | what it holds |
//! |---|---|
//! | [`grid`] | the bit-packed [`Grid`](grid::Grid), Moving AI parsers, regions, edits |
//! | [`clearance`] | eroded grids: where an agent of a given radius fits |
//! | [`geom`] | exact orientation predicates |
//! | [`los`] | line of sight, exactly as `SPEC.md` defines it |
//! | [`mesh`] | navigation meshes of a grid's free space, kept in step with its edits (for Polyanya) |
//! | [`terrain`] | terrain types per cell, movement profiles, the cost of a segment across terrain |
//! | [`search`] | [`Planner`](search::Planner), [`Algorithm`](search::Algorithm), results and errors, search traces |
//! | [`atlas`] | several areas joined by links (stairs, lifts, doors, teleports): exact shortest routes across them |
//! | [`avoidance`] | local avoidance of disc agents among each other and a grid's walls (ORCA, with a safe step) |
//! | `plugin` | the Bevy plugin (feature `plugin`), laid out as its pipeline (see its docs) |
//!
//! The algorithm core (everything above) never sees Bevy's ECS; it builds with
//! `--no-default-features`.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `plugin` | yes | the Bevy plugin (`bevy_ecs`, `bevy_app`, `bevy_time`, `crossbeam-channel`, `parking_lot`) |
//! | `transform` | yes | agent positions from `Transform` / `GlobalTransform`, and `PathFollower` moving them (`bevy_transform`) |
//! | `reflect` | yes | `Reflect` on every public component, resource, event and settings type, registered by the plugin (`bevy_reflect`) |
//! | `serde` | no | `Serialize` / `Deserialize` on the settings, `NavPath`, `GridTransform`, `PathFollower` and the planner choices (`serde`) |
//! | `diagnostic` | no | `plugin::diagnostic`: the plugin's counters as Bevy diagnostics (`bevy_diagnostic`) |
//! | `asset` | no | `plugin::asset`: Moving AI `.map` files as Bevy assets, and a `NavGrid` that follows one (`bevy_asset`, `bevy_reflect`) |
//! | `debug-gizmos` | no | `plugin::debug`: walls, paths, goals, recent edits and search traces drawn with Bevy's gizmos (`bevy_gizmos` and the crates it needs) |
//! | `visual` | no | the `playground` example only (the full `bevy` crate; build it with `--ignore-rust-version`) |

pub mod atlas;
pub mod avoidance;
pub mod clearance;
mod endpoint;
mod fast_hash;
pub mod geom;
pub mod grid;
pub mod los;
pub mod mesh;
#[cfg(feature = "plugin")]
pub mod plugin;
pub mod search;
pub mod terrain;
#[cfg(test)]
mod test_rng;

/// The most used types, for a glob import.
pub mod prelude {
    pub use crate::clearance::{Clearance, ErodedGrid};
    pub use crate::grid::{Grid, GridError, MapParseError, Scenario};
    pub use crate::search::{
        Algorithm, DEFAULT_NODE_BUDGET, FallbackPolicy, Path, PathKind, PathQuery, PlanError,
        PlanOptions, PlanTask, Planner, SearchSpace, SearchStats, plan,
    };
    pub use bevy_math::{DVec2, URect, UVec2};
}
