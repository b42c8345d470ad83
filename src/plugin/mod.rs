//! The Bevy plugin: any-angle paths for entities, planned in the background.
//!
//! # Using it in a game
//!
//! 1. Add [`AnyAnglePlugin`] (and Bevy's task pools: `DefaultPlugins`,
//!    `MinimalPlugins`, or `bevy_app::TaskPoolPlugin` in a headless app).
//! 2. Insert a [`NavGrid`] resource: the walkable grid and where it lies in
//!    the world (see [`nav_grid`] for the y-up world / y-down grid
//!    convention).
//! 3. Give each agent a position (`Transform`, or [`NavPosition`]) and a
//!    [`PathRequest`]. The plugin adds a [`PathStatus`] and a [`NavPath`]
//!    and fills them in from a search on the `AsyncComputeTaskPool`.
//! 4. Add a [`PathFollower`] to have the plugin walk the agent along the
//!    path, or steer it yourself from [`NavPath::next_waypoint`] in a system
//!    ordered after [`AnyAngleSystems::Apply`].
//! 5. Edit the grid through `ResMut<NavGrid>`; agents whose remaining path
//!    the edit affects replan, the others are left alone.
//!
//! ```
//! use bevy_anyangle::plugin::*;
//! use bevy_anyangle::prelude::*;
//! use bevy_app::{App, TaskPoolPlugin};
//! use bevy_math::Vec2;
//!
//! let mut app = App::new();
//! app.add_plugins((TaskPoolPlugin::default(), AnyAnglePlugin::default()));
//! app.insert_resource(
//!     NavGrid::from_ascii(
//!         "..........
//!          ....##....
//!          ....##....
//!          ..........",
//!         GridTransform::default(),
//!     )
//!     .unwrap(),
//! );
//! // World y is up: row 0 of the picture spans y in [3, 4].
//! let agent = app
//!     .world_mut()
//!     .spawn((NavPosition(Vec2::new(0.5, 2.0)), PathRequest::to(Vec2::new(9.5, 2.0))))
//!     .id();
//! app.finish();
//! app.cleanup();
//! for _ in 0..1000 {
//!     app.update();
//!     if *app.world().get::<PathStatus>(agent).unwrap() == PathStatus::Ready {
//!         break;
//!     }
//!     std::thread::sleep(std::time::Duration::from_millis(1));
//! }
//! let path = app.world().get::<NavPath>(agent).unwrap();
//! assert_eq!(path.end(), Some(Vec2::new(9.5, 2.0)));
//! assert!(path.waypoints.len() >= 3, "around the block");
//! ```
//!
//! # Frame by frame
//!
//! The plugin's systems run in [`AnyAnglePlugin::schedule`] (`Update` by
//! default) in four chained sets, [`AnyAngleSystems`]: detect who needs a
//! plan, start searches, apply finished ones, steer. The main thread never
//! runs a search and never waits for one. In a frame where nothing changed,
//! the systems only look at change ticks, an empty queue and an empty
//! channel (plus the position of each entity some agent follows).
//!
#![cfg_attr(feature = "transform", doc = include_str!("in_a_game.md"))]
//! # Where the issue left choices open
//!
//! - The path component is [`NavPath`] (not `Path`) so that it does not
//!   clash with [`crate::search::Path`] or `std::path::Path` in glob imports.
//! - When the [`PathRequest`] itself changes, the old path is cleared at
//!   once; on other replans (edits, off-path, settings) the old path stays
//!   until the new one arrives, so followers keep moving, except that a
//!   path an edit blocked is cut short before the blocked segment.
//! - Agents may keep moving while their search runs. A new path starts
//!   where the agent is when it arrives if the agent sees the path's second
//!   waypoint from there (on the current grid); otherwise it starts where
//!   the search started and the agent walks back there first
//!   ([`NavPath::next`] is 0), rather than cutting a corner towards the
//!   second waypoint or counting as off its path.
//! - A result planned on a grid that was edited meanwhile is checked against
//!   those edits like a live path, and thrown away and replanned if they
//!   affect it.

pub mod components;
pub mod nav_grid;
mod position;
pub mod replan;
pub mod settings;
pub mod steering;
pub mod tasks;

use bevy_app::{App, Plugin, Update};
use bevy_ecs::intern::Interned;
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::ScheduleLabel;

pub use components::{
    NavPath, NavPosition, PathFailed, PathFailure, PathGoal, PathReady, PathRequest, PathStatus,
    PlanReason,
};
pub use nav_grid::{GridTransform, NavGrid, NavGridError};
pub use settings::PathfindingSettings;
pub use steering::{ClockMode, PathFollower, SteeringClock};
pub use tasks::PathfindingDiagnostics;

/// The plugin's system sets, chained in this order in
/// [`AnyAnglePlugin::schedule`]. Order your own systems against them, e.g.
/// custom steering with `.after(AnyAngleSystems::Apply)`.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnyAngleSystems {
    /// Finds agents that need a (new) plan: changed requests, settings,
    /// grid edits, moved targets, agents off their path. Also advances
    /// [`NavPath::next`] for agents that moved.
    Detect,
    /// Starts background searches for queued agents, up to
    /// [`PathfindingSettings::max_searches_in_flight`].
    Dispatch,
    /// Applies finished searches: writes [`NavPath`] and [`PathStatus`],
    /// triggers [`PathReady`] and [`PathFailed`].
    Apply,
    /// Moves [`PathFollower`] agents along their paths.
    Steer,
}

/// Adds any-angle path planning for entities with a [`PathRequest`].
///
/// Build-time settings are fields; runtime settings live in the
/// [`PathfindingSettings`] resource (inserted with defaults unless the app
/// already has one; without it the plugin uses the defaults). See the [module docs](self) for a walk-through.
#[derive(Clone, Debug)]
pub struct AnyAnglePlugin {
    /// The schedule the plugin's systems run in. Default: `Update`.
    pub schedule: Interned<dyn ScheduleLabel>,
    /// Whether to add the [`PathFollower`] steering system. Default: `true`.
    pub steering: bool,
}

impl Default for AnyAnglePlugin {
    fn default() -> Self {
        AnyAnglePlugin {
            schedule: Update.intern(),
            steering: true,
        }
    }
}

impl Plugin for AnyAnglePlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<PathfindingSettings>()
            .init_resource::<PathfindingDiagnostics>()
            .init_resource::<SteeringClock>()
            .init_resource::<tasks::Planning>()
            .configure_sets(
                self.schedule,
                (
                    AnyAngleSystems::Detect,
                    AnyAngleSystems::Dispatch,
                    AnyAngleSystems::Apply,
                    AnyAngleSystems::Steer,
                )
                    .chain(),
            )
            .add_systems(
                self.schedule,
                (
                    replan::replan_changed_requests,
                    replan::replan_on_settings_change
                        .run_if(resource_changed_or_removed::<PathfindingSettings>),
                    replan::replan_on_grid_edits.run_if(resource_exists_and_changed::<NavGrid>),
                    replan::replan_moved_targets,
                    replan::track_progress,
                )
                    .chain()
                    .in_set(AnyAngleSystems::Detect),
            )
            .add_systems(
                self.schedule,
                tasks::dispatch_searches.in_set(AnyAngleSystems::Dispatch),
            )
            .add_systems(
                self.schedule,
                tasks::apply_results.in_set(AnyAngleSystems::Apply),
            )
            .add_observer(tasks::on_request_removed);
        if self.steering {
            app.init_resource::<steering::ActiveFollowers>()
                .add_systems(
                    self.schedule,
                    (
                        steering::tick_clock,
                        steering::collect_followers,
                        steering::follow_paths,
                    )
                        .chain()
                        .in_set(AnyAngleSystems::Steer),
                );
        }
    }
}
