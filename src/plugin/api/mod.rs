//! The plugin's public face: what a game puts on its agents, what it reads
//! back, the events it hears, the settings it tunes and the counters it
//! watches. Everything here is re-exported from [`crate::plugin`].
//!
//! An *agent* is any entity with a [`PathRequest`]. Inserting one also
//! inserts (as required components) a [`PathStatus`] and an empty
//! [`NavPath`], which the plugin fills in from a background search.
//!
//! # Consuming results
//!
//! Either react to the entity events [`PathReady`] and [`PathFailed`] with an
//! observer:
//!
//! ```
//! use bevy_anyangle::plugin::{PathFailed, PathReady};
//! use bevy_ecs::prelude::*;
//!
//! fn setup(world: &mut World) {
//!     world.add_observer(|ready: On<PathReady>| {
//!         println!("{} has a path ({:?})", ready.entity, ready.reason);
//!     });
//!     world.add_observer(|failed: On<PathFailed>| {
//!         println!("{} has no path: {:?}", failed.entity, failed.status);
//!     });
//! }
//! # setup(&mut World::new());
//! ```
//!
//! or poll with change detection, in a system ordered after
//! [`AnyAngleSystems::Apply`](crate::plugin::AnyAngleSystems::Apply):
//!
//! ```
//! use bevy_anyangle::plugin::{NavPath, PathStatus};
//! use bevy_ecs::prelude::*;
//!
//! fn on_new_paths(agents: Query<(Entity, &NavPath, &PathStatus), Changed<NavPath>>) {
//!     for (entity, path, status) in &agents {
//!         println!("{entity}: {status:?}, {} waypoints", path.waypoints.len());
//!     }
//! }
//! # bevy_ecs::system::assert_is_system(on_new_paths);
//! ```
//!
//! `Changed<NavPath>` fires when a new path is written (or an old one
//! cleared), not when [`NavPath::next`] advances; `Changed<PathStatus>` fires
//! on every status change, including `Computing` during a replan.

mod crossing;
mod diagnostics;
mod events;
mod path;
mod request;
pub mod settings;

pub use crossing::{LinkCrossing, PathCrossing};
pub use diagnostics::PathfindingDiagnostics;
pub use events::{PathFailed, PathReady};
pub(crate) use path::polyline_length;
pub use path::{NavPath, PathFailure, PathStatus, PlanReason, Replanning};
pub use request::{PathGoal, PathRequest};
pub use settings::{Lockstep, MeshBuilding, PathfindingSettings};
