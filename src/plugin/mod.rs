//! The Bevy plugin: any-angle paths for entities, planned in the background.
//!
//! # The pipeline
//!
//! Every frame, the plugin's systems run in four chained sets
//! ([`AnyAngleSystems`]), and each stage lives in a module of its own:
//!
//! ```text
//!  Detect ──────────▶ Dispatch ─────────▶ [search threads] ─────▶ Apply ─────────▶ Steer
//!  who needs a plan   send searches,        plan on grid           judge answers,    walk
//!  (requests, edits,  most urgent first,    snapshots              join paths,       followers
//!   targets, moves)   paced by work                                fail, replan
//!  detect/            dispatch/                                    apply/            steer.rs
//! ```
//!
//! | module | what it holds |
//! |---|---|
//! | [`api`] | what a game touches: [`PathRequest`], [`NavPath`], [`PathStatus`], events, [`PathfindingSettings`], [`PathfindingDiagnostics`] |
//! | [`world`] | the [`NavGrid`] resource, the grids each kind of agent plans on, agent positions |
//! | `agent` | the one home of an agent's planning state: its phases and transitions, the job queue, the edit index |
//! | `detect` | the systems that find who needs a plan |
//! | `dispatch` | sending searches: the search executor (worker threads), pacing, tickets |
//! | `apply` | turning answers into paths, failures or new requests |
//! | `geometry` | the ECS-free path geometry the stages share: edit impact, cutting, joining, the way out of a wall |
//! | `steer` | [`PathFollower`] steering |
//! | `crowd` | crowd steering: followers with [`LocalAvoidance`] walk around each other and the walls, and spread out where they arrive |
//! | `stats` | the counters and frame timer behind [`PathfindingDiagnostics`] |
//! | `debug`, `asset`, `diagnostic` | optional features: gizmos, map assets, Bevy diagnostics |
//!
//! # Using it in a game
//!
//! 1. Add [`AnyAnglePlugin`]. It plans on search threads of its own (see
//!    [`AnyAnglePlugin::search_threads`]), so it needs no task pool; where
//!    there are none (the browser), on the main thread within a budget per
//!    frame.
//! 2. Insert a [`NavGrid`] resource: the walkable grid and where it lies in
//!    the world (see [`world::nav_grid`] for the y-up world / y-down grid
//!    convention).
//! 3. Give each agent a position (`Transform`, or [`NavPosition`]) and a
//!    [`PathRequest`]. The plugin adds a [`PathStatus`] and a [`NavPath`]
//!    and fills them in from a search on a background thread.
//! 4. Add a [`PathFollower`] to have the plugin walk the agent along the
//!    path, or steer it yourself from [`NavPath::next_waypoint`] in a system
//!    ordered after [`AnyAngleSystems::Apply`].
//! 5. Edit the grid through `ResMut<NavGrid>`; agents whose remaining path
//!    the edit affects replan, the others are left alone.
//!
//! ```
//! use bevy_anyangle::plugin::*;
//! use bevy_anyangle::prelude::*;
//! use bevy_app::App;
//! use bevy_math::Vec2;
//!
//! let mut app = App::new();
//! app.add_plugins(AnyAnglePlugin::default());
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
//! plan, send searches to the search threads, apply finished ones, steer.
//! With search threads, the main thread never runs a search and never waits
//! for one; without (the browser, or `search_threads: Some(0)`), dispatch
//! runs them on the main thread in slices, for at most
//! [`PathfindingSettings::main_thread_budget`] a frame, and a search that
//! does not end goes on in the next frame. In a frame
//! where nothing changed, the systems only look at change ticks, an empty
//! queue and an empty channel (plus the position of each entity some agent
//! follows, and of agents that moved).
//!
//! # Who is served first
//!
//! Agents wait for a search in three lines, served in this order:
//!
//! 1. agents whose path an edit blocked ([`PlanReason::PathBlocked`]), or
//!    whose cell an edit blocked under them ([`PlanReason::StartBlocked`]);
//! 2. agents with nothing to follow yet (new or changed requests);
//! 3. agents that follow a path while a better one is planned (shortcuts,
//!    regions connected, settings changes, moved targets, off-path agents).
//!
//! Within a line, first come, first served; an agent's wait counts from
//! when it began waiting for a plan, so one queued again (its answer thrown
//! away after an edit, its search cancelled by a newer request) keeps its
//! place. Searches of the first line are sent to the threads at once, the
//! others as the threads need them (about two frames of work kept waiting
//! for them, so that a backlog waits in the lines); a thread takes the most
//! urgent search waiting, but every fourth search it begins comes from the
//! second and the third line in turn (if one waits there). An agent that
//! has waited 30 frames is sent ahead of every search waiting for the
//! threads (but those of agents in a wall): the longest wait first among
//! agents with nothing to follow (the first two lines), then those of the
//! third line. However many edits keep blocking paths, no agent waits
//! unboundedly behind them.
//! [`PathfindingDiagnostics::longest_wait`] says how long the agent that
//! has waited longest to be sent has waited.
//!
//! # Crowds: one search for many agents, and local avoidance
//!
//! Agents waiting to plan towards the same goal (the same point, or the
//! same entity), at least 8 of them, of one profile without costs and one
//! radius class, planned by Anya or Polyanya, share one search run from
//! the goal out to all of them
//! ([`Planner::plan_many_on_mesh`](crate::search::Planner::plan_many_on_mesh)
//! on the profile's mesh): each gets a path exactly as long as its own
//! search would give, or the same fallback. With Anya, this waits for
//! nothing: agents are grouped once the profile's mesh exists (Polyanya
//! builds it), on grids of up to 2^20 cells, whose mesh the first group
//! builds in tens of milliseconds, or where meshes are built on demand (by
//! default on larger grids: the group's search builds the chunks around
//! its way). A group is one job of up to 4,096
//! agents on a search thread (512 on the main thread, where it runs in
//! slices like any search). Dispatch gathers them among the agents the pace lets it
//! send, and among the next 4,096 waiting in each line, who join ahead of
//! their turn. Shared searches are not kept: agents asking later get
//! searches of their own, or a new shared one.
//! [`PathfindingSettings::shared_searches`] turns it off, and
//! [`PathfindingDiagnostics::shared_searches`] counts them.
//!
//! Followers with a radius and [`LocalAvoidance`] walk their paths around
//! each other and never closer to a wall than their radius (ORCA, from the
//! core's [`avoidance`](crate::avoidance), with the walls as obstacles too);
//! those sent to one goal spread around it instead of stacking on it, and
//! one pushed away from where it came to rest walks back.
//! [`AvoidanceSettings`] holds the horizons;
//! [`PathfindingDiagnostics::avoidance_cost`] is what it costs a frame.
//!
#![cfg_attr(feature = "transform", doc = include_str!("in_a_game.md"))]
//! # Paths while the world changes
//!
//! - The path component is [`NavPath`] (not `Path`) so that it does not
//!   clash with [`crate::search::Path`] or `std::path::Path` in glob imports.
//! - When the goal of a [`PathRequest`] changes, the old path is cleared at
//!   once; on other replans (edits, off-path, a new algorithm in the
//!   request or the settings) the old path stays until the new one arrives
//!   (status `Ready` plus the [`Replanning`] marker), so followers keep
//!   moving, except that a path an edit blocked is cut short before the
//!   blocked segment. A new algorithm does not replan agents that have
//!   arrived.
//! - Agents may keep moving while their search runs. A new path is joined
//!   to where the agent is when it arrives, only by segments it can see: if
//!   it sees the path's second waypoint, it heads straight there; else if it
//!   sees the first, it walks back to it first ([`NavPath::next`] is 0);
//!   else the result is dropped and the agent is planned again from where it
//!   is, following its old path meanwhile. A follower never walks a segment
//!   without line of sight.
//! - A result planned on a grid that was edited meanwhile is checked against
//!   those edits like a live path, and thrown away and replanned if they
//!   affect it.
//! - An agent whose cell is blocked under it walks out at once: its
//!   [`NavPath`] becomes the way out alone (straight to the nearest walkable
//!   point) while its new path, which starts with the same way out, is
//!   planned, so it never waits in the wall for a search thread. If its
//!   search fails (an unreachable goal under [`FallbackPolicy::Fail`](crate::search::FallbackPolicy::Fail),
//!   a node budget run out), it still walks out: its [`NavPath`] then holds
//!   the way out alone, beside the failed [`PathStatus`].
//!
//! # Lockstep and determinism
//!
//! Games networked by lockstep run the same simulation on every peer from
//! the same inputs, so paths and steps must come out the same to the bit on
//! every machine. With [`PathfindingSettings::lockstep`] set, the plugin
//! guarantees it: **the same crate version, the same inputs (the grid and
//! its edits, the agents spawned and despawned, their requests and
//! components, in the same frames and the same order) and the same
//! settings give the same [`NavPath`], [`PathStatus`] and positions of
//! every agent in every frame**, whatever the number of search threads, the
//! main-thread executor, the machine's load, or the platform (x86-64 and
//! `wasm32` give the same bits); routes across [`floors`] areas too. The
//! tests play a game of 2,000 agents on a grid and 300 across two floors
//! for 1,200 frames and compare a hash of every frame across 1, 2 and 4
//! threads, the main thread, a CPU hog and `wasm32` under Node.
//!
//! How:
//!
//! - **Answers arrive in a fixed frame.** A search sent in frame `N` is
//!   applied in frame `N +` [`Lockstep::delay`], in the order searches were
//!   sent; the main thread waits there for a late one
//!   ([`PathfindingDiagnostics::lockstep_wait`]). Which agents are served
//!   in a frame depends on the requests alone: up to
//!   [`Lockstep::searches_per_frame`] from the paced lines, in the usual
//!   order of service, never on how busy the threads are.
//! - **Every search reads the world as it was sent.** A search on a mesh
//!   gets the mesh of exactly its grid version (never a newer one), and
//!   meshes are built whole (never on demand: which chunks exist would
//!   depend on the order searches ran in) and kept chunk by chunk, so a
//!   mesh is the same whatever
//!   versions it went through; shared-goal groups are the same size on
//!   threads and on the main thread; Anya's point agents share searches
//!   only on grids of up to 2^20 cells (not once a mesh happens to exist).
//! - **Arithmetic is IEEE-754 only where it decides.** Square roots (exact
//!   to the last bit by the standard) and the four operations; no
//!   platform maths library call decides an outcome; no fused operations
//!   besides the error-free products of the exact predicates (which are
//!   exact on every platform).
//! - **Order is the agents' own.** Every list that decides an outcome is
//!   sorted by entity or kept in the order things happened, never in a
//!   hash set's order or the order of a query over archetypes (which
//!   differs between platforms): agents joining a line between two
//!   dispatches, crowds stepped, areas and links numbered.
//!
//! What it does not cover or costs:
//!
//! - Reading wall-clock time breaks it: steer with
//!   [`SteeringClock::fixed`] (or a game clock of your own) rather than
//!   Bevy's real-time `Time`, and pace the simulation by frames.
//! - [`PathfindingDiagnostics`] counters that depend on timing (searches
//!   cancelled or discarded, search time, waits, frame cost) differ between
//!   runs; what agents see does not.
//! - Polyanya for agents of a radius with
//!   [`PathfindingSettings::radius_meshes`] off is not covered (it searches
//!   a mesh each search thread keeps of its own).
//! - Searches cost a little more: each grid version a search is sent with
//!   gets its mesh (rather than the newest), and point meshes are kept
//!   chunk by chunk. A frame whose answers are late waits for them: keep
//!   [`Lockstep::searches_per_frame`] to what the threads answer within the
//!   delay. `docs/plugin-bench.md` has the figures.

mod agent;
pub mod api;
mod apply;
#[cfg(feature = "asset")]
pub mod asset;
mod crowd;
#[cfg(feature = "debug-gizmos")]
pub mod debug;
mod detect;
#[cfg(feature = "diagnostic")]
pub mod diagnostic;
mod dispatch;
pub mod floors;
mod geometry;
mod stats;
mod steer;
pub mod world;

use bevy_app::{App, Plugin, Update};
use bevy_ecs::intern::Interned;
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::ScheduleLabel;

pub use api::{
    LinkCrossing, Lockstep, MeshBuilding, NavPath, PathCrossing, PathFailed, PathFailure, PathGoal,
    PathReady, PathRequest, PathStatus, PathfindingDiagnostics, PathfindingSettings, PlanReason,
    Replanning,
};
pub use crowd::AvoidanceSettings;
pub use floors::{CrossLink, CrossingLink, GoalArea, LinkEnd, LinkReached, NavArea, NavLink};
pub use steer::{ClockMode, LocalAvoidance, PathFollower, SteeringClock};
pub use world::{GridTransform, NavGrid, NavGridError, NavPosition, OnArea, ProfileId, WorldPlane};

/// The plugin's system sets, chained in this order in
/// [`AnyAnglePlugin::schedule`]. Order your own systems against them, e.g.
/// custom steering with `.after(AnyAngleSystems::Apply)`.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnyAngleSystems {
    /// Finds agents that need a (new) plan: changed requests, settings,
    /// grid edits, moved targets, agents off their path. Also advances
    /// [`NavPath::next`] for agents that moved.
    Detect,
    /// Sends queued agents' searches to the search threads, most urgent
    /// first, paced by the work they take (see the [module docs](self)).
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
    /// Threads that run searches. `None` (the default): one less than the
    /// machine's cores (the main thread keeps one), at least 1. A search
    /// that runs longer than 20 ms gets a stand-in thread meanwhile, so one
    /// slow query never holds up the others.
    ///
    /// `Some(0)`, and always where threads cannot be started (the browser:
    /// `wasm32` without atomics): searches run on the main thread, in
    /// slices, for at most
    /// [`PathfindingSettings::main_thread_budget`] each frame (3 ms by
    /// default), in the same order of service and with the same answers.
    pub search_threads: Option<usize>,
}

impl Default for AnyAnglePlugin {
    fn default() -> Self {
        AnyAnglePlugin {
            schedule: Update.intern(),
            steering: true,
            search_threads: None,
        }
    }
}

impl AnyAnglePlugin {
    /// This plugin with its systems in `schedule`, e.g. `FixedUpdate` for a
    /// game that simulates at a fixed rate (followers then advance by
    /// `Time<Fixed>`).
    ///
    /// ```
    /// use bevy_anyangle::plugin::AnyAnglePlugin;
    /// use bevy_app::{App, FixedUpdate};
    ///
    /// App::new().add_plugins(AnyAnglePlugin::default().in_schedule(FixedUpdate));
    /// ```
    #[must_use]
    #[expect(
        clippy::needless_pass_by_value,
        reason = "labels are passed by value, as to `add_systems`"
    )]
    pub fn in_schedule(self, schedule: impl ScheduleLabel) -> Self {
        AnyAnglePlugin {
            schedule: schedule.intern(),
            ..self
        }
    }

    /// The number of search threads this plugin starts (see
    /// [`AnyAnglePlugin::search_threads`]); 0: searches run on the main
    /// thread.
    #[must_use]
    pub fn threads(&self) -> usize {
        if !THREADS_AVAILABLE {
            return 0;
        }
        self.search_threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1))
        })
    }
}

/// Whether this platform can start threads (not the browser without
/// atomics).
const THREADS_AVAILABLE: bool = !cfg!(all(target_arch = "wasm32", not(target_feature = "atomics")));

impl Plugin for AnyAnglePlugin {
    fn build(&self, app: &mut App) {
        let schedule = self.schedule;
        // The public face: settings, counters, events.
        app.init_resource::<PathfindingSettings>()
            .init_resource::<PathfindingDiagnostics>()
            .add_message::<PathReady>()
            .add_message::<PathFailed>();
        // Each agent's planning state, attached beside its request.
        agent::attach_state(app);
        app.init_resource::<agent::PlanBook>()
            .init_resource::<agent::AgentIndex>()
            .init_resource::<detect::EditWatch>()
            .init_resource::<steer::Unseen>()
            .insert_resource(dispatch::Searches::new(self.threads()))
            .init_resource::<stats::Meter>()
            .init_resource::<stats::Counters>();
        // Floors and links: areas as entities, routes across them.
        app.init_resource::<floors::Areas>()
            .init_resource::<floors::RouteQueue>()
            .init_resource::<floors::RouteOutcomes>()
            .init_resource::<floors::RouteUnseen>()
            .add_message::<LinkReached>()
            .register_required_components::<OnArea, floors::RouteState>()
            .add_observer(floors::on_cross_link);
        app.configure_sets(
            schedule,
            (
                AnyAngleSystems::Detect,
                AnyAngleSystems::Dispatch,
                AnyAngleSystems::Apply,
                AnyAngleSystems::Steer,
            )
                .chain(),
        );
        // Detect: who needs a (new) plan.
        app.add_systems(
            schedule,
            (
                detect::replan_changed_requests,
                detect::replan_on_settings_change
                    .run_if(resource_changed_or_removed::<PathfindingSettings>),
                detect::replan_on_grid_edits.run_if(resource_exists_and_changed::<NavGrid>),
                detect::replan_moved_targets,
                detect::track_progress,
                detect::replan_unseen,
                floors::sync_areas,
                floors::detect_routes,
            )
                .chain()
                .in_set(AnyAngleSystems::Detect),
        );
        // Dispatch: searches to the search threads.
        app.add_systems(
            schedule,
            (
                dispatch::configure_searches,
                floors::dispatch_routes,
                dispatch::dispatch_searches,
            )
                .chain()
                .in_set(AnyAngleSystems::Dispatch),
        );
        // Apply: answers become paths, failures or new requests.
        app.add_systems(
            schedule,
            (
                apply::apply_results,
                floors::apply_routes,
                agent::sync_markers,
                stats::publish,
            )
                .chain()
                .in_set(AnyAngleSystems::Apply),
        )
        .add_observer(apply::on_request_removed);
        // Steer: followers walk their paths.
        if self.steering {
            app.init_resource::<steer::ActiveFollowers>()
                .init_resource::<crowd::Crowd>()
                .init_resource::<AvoidanceSettings>()
                .register_required_components::<LocalAvoidance, crowd::CrowdState>()
                .add_systems(
                    schedule,
                    (
                        steer::collect_followers,
                        steer::follow_paths,
                        floors::follow_routes,
                        crowd::steer_crowds,
                    )
                        .chain()
                        .in_set(AnyAngleSystems::Steer),
                );
        }
        // Once a frame, after the last stage: what the plugin cost it.
        app.add_systems(schedule, stats::close_frame.after(AnyAngleSystems::Steer));
        #[cfg(feature = "reflect")]
        app.register_type::<PathRequest>()
            .register_type::<PathGoal>()
            .register_type::<NavPosition>()
            .register_type::<PathStatus>()
            .register_type::<PathFailure>()
            .register_type::<PlanReason>()
            .register_type::<Replanning>()
            .register_type::<NavPath>()
            .register_type::<PathReady>()
            .register_type::<PathFailed>()
            .register_type::<PathfindingSettings>()
            .register_type::<Lockstep>()
            .register_type::<MeshBuilding>()
            .register_type::<PathfindingDiagnostics>()
            .register_type::<NavGrid>()
            .register_type::<GridTransform>()
            .register_type::<WorldPlane>()
            .register_type::<PathFollower>()
            .register_type::<LocalAvoidance>()
            .register_type::<AvoidanceSettings>()
            .register_type::<SteeringClock>()
            .register_type::<ClockMode>()
            .register_type::<crate::search::Algorithm>()
            .register_type::<crate::search::FallbackPolicy>()
            .register_type::<NavArea>()
            .register_type::<OnArea>()
            .register_type::<GoalArea>()
            .register_type::<NavLink>()
            .register_type::<LinkEnd>()
            .register_type::<LinkCrossing>()
            .register_type::<PathCrossing>()
            .register_type::<CrossingLink>()
            .register_type::<LinkReached>()
            .register_type::<CrossLink>();
    }
}
