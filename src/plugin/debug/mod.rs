//! Debug drawing with Bevy's gizmos: walls, agents' paths and goals, recent
//! edits, search traces, and the areas and links of floors.
//!
//! [`AnyAngleDebugPlugin`] (feature `debug-gizmos`) draws, every frame, in
//! the world plane of the [`NavGrid`]:
//!
//! - the outlines of blocked cells, only in the part of the grid some camera
//!   sees, and coarser when that part holds more than
//!   [`NavGizmos::max_blocked_samples`] cells;
//! - each agent's remaining path from where it stands, in the colour of the
//!   planner that made it, its next waypoint and its goal; an agent that is
//!   replanning, or got a new plan in the last [`NavGizmos::recent`]
//!   seconds for another reason than a new request, in
//!   [`NavGizmos::replanned`] instead;
//! - a fallback path's requested (unreachable) goal as a cross in
//!   [`NavGizmos::fallback`], joined to the reachable end by a dashed line;
//!   agents waiting for a first path, and agents without one, as rings;
//! - cells edited in the last [`NavGizmos::recent`] seconds, blocked and
//!   freed in their own colours;
//! - for agents marked [`TraceSearch`], what their last search expanded:
//!   points with links to their parents (Lazy Theta*, A*), or intervals with
//!   links to their roots (Anya);
//! - for agents with a radius marked [`DrawClearance`], the free cells their
//!   radius keeps them off (blocked on their eroded grid, see
//!   [`crate::clearance`]), in [`NavGizmos::clearance`].
//!
//! and, for [floors](crate::plugin::floors), in the plane of each
//! [`NavArea`] (on the `Xz` plane at the area's [`NavArea::height`] above
//! [`NavGizmos::height`]):
//!
//! - each area's outline (its [`NavGrid::world_rect`]), in
//!   [`NavGizmos::area_outline`];
//! - each [`NavLink`] (when [`NavGizmos::links`] is on) as a line between
//!   its two ends, each end marked by a small diamond: solid in
//!   [`NavGizmos::link_walked`] for a walked link, dashed in
//!   [`NavGizmos::link_handed`] for a handed one, and in
//!   [`NavGizmos::link_disabled`] with a cross at its middle while it is
//!   disabled; a one-way link has an arrow head pointing from its `from`
//!   end to its `to` end;
//! - the agents standing on areas ([`OnArea`]) as the agents above, their
//!   paths running from area to area with the links they cross dashed; an
//!   agent waiting at a handed link ([`CrossingLink`]) has a wider ring
//!   in [`NavGizmos::link_handed`].
//!
//! Colours and switches live in the [`NavGizmos`] gizmo config group (line
//! width and the on/off switch of all of it in Bevy's `GizmoConfigStore`).
//! Every agent is drawn unless [`NavGizmos::all_agents`] is off; then only
//! agents marked [`DrawNavGizmos`] are.
//!
//! The plugin needs Bevy's `GizmoPlugin` and `AssetPlugin` (both part of
//! `DefaultPlugins`; it panics at start-up without them) and draws in
//! `PostUpdate`.
//!
//! ```
//! use bevy_anyangle::plugin::debug::{AnyAngleDebugPlugin, NavGizmos, TraceSearch};
//! use bevy_anyangle::plugin::*;
//! use bevy_app::App;
//! use bevy_ecs::prelude::*;
//! use bevy_gizmos::config::GizmoConfigStore;
//! use bevy_math::Vec2;
//!
//! fn build(app: &mut App) {
//!     // After Bevy's `DefaultPlugins` (they bring `GizmoPlugin`).
//!     app.add_plugins((AnyAnglePlugin::default(), AnyAngleDebugPlugin))
//!         .add_systems(bevy_app::Startup, setup);
//! }
//!
//! fn setup(mut commands: Commands, mut store: ResMut<GizmoConfigStore>) {
//!     let (lines, nav) = store.config_mut::<NavGizmos>();
//!     lines.line.width = 1.5;
//!     nav.recent = 2.0; // edits and replans stay highlighted for 2 s
//!     // Show what this agent's searches expand.
//!     commands.spawn((
//!         NavPosition(Vec2::new(0.5, 0.5)),
//!         PathRequest::to(Vec2::new(9.5, 0.5)),
//!         TraceSearch,
//!     ));
//! }
//! # bevy_ecs::system::assert_is_system(setup);
//! # let _ = build;
//! ```

use core::time::Duration;

use bevy_platform::time::Instant;

use bevy_app::{App, Plugin, PostUpdate};
use bevy_asset::Assets;
use bevy_camera::Camera;
use bevy_color::{Alpha, Color};
use bevy_ecs::entity::EntityHashMap;
use bevy_ecs::prelude::*;
#[cfg(feature = "reflect")]
use bevy_ecs::reflect::ReflectComponent;
use bevy_gizmos::config::GizmoConfigGroup;
use bevy_gizmos::gizmos::Gizmos;
use bevy_gizmos::{AppGizmoBuilder, GizmoAsset};
use bevy_math::{DVec2, URect, UVec2, Vec2, Vec3};
use bevy_reflect::Reflect;
#[cfg(feature = "reflect")]
use bevy_reflect::std_traits::ReflectDefault;
use bevy_time::Time;
use bevy_transform::components::GlobalTransform;

use crate::clearance::Clearance;
use crate::grid::{EditKind, GridEdit};
use crate::mesh::NavMesh;
use crate::plugin::agent::PlanState;
use crate::plugin::api::{NavPath, PathReady, PathRequest, PathStatus, PlanReason, Replanning};
use crate::plugin::world::{Fit, NavGrid, OnArea, PositionData, ProfileId, WorldPlane, position};
use crate::search::{Algorithm, SearchTrace};

mod floors;

/// Adds the debug drawing described in the [module docs](self).
#[derive(Clone, Copy, Debug, Default)]
pub struct AnyAngleDebugPlugin;

impl Plugin for AnyAngleDebugPlugin {
    fn build(&self, app: &mut App) {
        app.init_gizmo_group::<NavGizmos>()
            .init_resource::<RecentChanges>()
            .init_resource::<DiscOutlines>()
            .add_systems(
                PostUpdate,
                (
                    (track_edits, track_replans),
                    (
                        draw_blocked,
                        draw_clearance,
                        draw_edits,
                        draw_agents,
                        draw_traces,
                        // Links over the paths that cross them.
                        (floors::draw_area_agents, floors::draw_links).chain(),
                    ),
                )
                    .chain()
                    .in_set(NavGizmosSystems),
            );
        #[cfg(feature = "reflect")]
        app.register_type::<NavGizmos>()
            .register_type::<DrawNavGizmos>()
            .register_type::<DrawClearance>()
            .register_type::<TraceSearch>();
    }

    fn finish(&self, app: &mut App) {
        assert!(
            app.world().contains_resource::<Assets<GizmoAsset>>(),
            "AnyAngleDebugPlugin needs Bevy's GizmoPlugin (part of DefaultPlugins) and AssetPlugin"
        );
    }
}

/// The debug drawing's systems (in `PostUpdate`), to order others against.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NavGizmosSystems;

/// Colours and switches of the debug drawing (a gizmo config group: line
/// width and the switch for all of it are in Bevy's `GizmoConfigStore`).
#[derive(Clone, Debug, PartialEq, Reflect, GizmoConfigGroup)]
pub struct NavGizmos {
    /// Draw every agent (`true`, the default) or only those marked
    /// [`DrawNavGizmos`].
    pub all_agents: bool,
    /// How far off the grid's plane to draw, world units (z in the XY
    /// plane, y in the XZ plane). Default 0.
    pub height: f32,
    /// Outline colour of blocked cells; `None` draws no cells.
    pub blocked: Option<Color>,
    /// At most this many cells are read per frame to outline blocked cells:
    /// when a camera sees more, blocks of cells are drawn as one, after a
    /// sample of each. Default 262,144 (a 512 x 512 map cell by cell).
    pub max_blocked_samples: u32,
    /// Paths planned by Lazy Theta*.
    pub lazy_theta: Color,
    /// Paths planned by Anya.
    pub anya: Color,
    /// Paths planned by Polyanya.
    pub polyanya: Color,
    /// Paths planned by A*.
    pub astar: Color,
    /// Paths planned by A* with smoothing.
    pub astar_smoothed: Color,
    /// Agents replanning, or replanned in the last [`NavGizmos::recent`]
    /// seconds (edits, moved targets, settings).
    pub replanned: Color,
    /// Agents waiting for their first path.
    pub waiting: Color,
    /// Agents whose planning failed, or whose goal is unreachable.
    pub failed: Color,
    /// The requested goal of a fallback path (unreachable) and its link to
    /// the fallback target, the path's end.
    pub fallback: Color,
    /// Cells an edit blocked recently.
    pub edit_blocked: Color,
    /// Cells an edit freed recently.
    pub edit_freed: Color,
    /// Seconds that edits and replans stay highlighted. Default 1.
    pub recent: f32,
    /// Expanded points or intervals of a traced search.
    pub trace: Color,
    /// Links of a traced search: expanded points to their parents, Anya's
    /// intervals to their roots.
    pub trace_links: Color,
    /// Radius of the rings marking agents and waypoints, in cells.
    /// Default 0.3.
    pub marker_radius: f32,
    /// Outline colour of the free cells an agent marked [`DrawClearance`]
    /// keeps off because of its radius.
    pub clearance: Color,
    /// Draw the [`NavLink`]s between areas (`true`, the default).
    pub links: bool,
    /// Enabled links that followers walk ([`LinkCrossing::Walked`]): solid
    /// lines. Default amber.
    pub link_walked: Color,
    /// Enabled links the game carries agents across
    /// ([`LinkCrossing::Handed`]): dashed lines; also the ring around an
    /// agent waiting at one. Default violet.
    pub link_handed: Color,
    /// Disabled links ([`NavLink::enabled`] off), walked (solid) or handed
    /// (dashed), with a cross at their middle. Default red.
    pub link_disabled: Color,
    /// Outline colour of each [`NavArea`]'s world rectangle; `None` draws
    /// none. Default a dim blue-grey.
    pub area_outline: Option<Color>,
}

impl Default for NavGizmos {
    fn default() -> Self {
        NavGizmos {
            all_agents: true,
            height: 0.0,
            blocked: Some(Color::srgb(0.55, 0.55, 0.6)),
            max_blocked_samples: 1 << 18,
            lazy_theta: Color::srgb(0.2, 0.8, 0.3),
            anya: Color::srgb(0.25, 0.6, 1.0),
            polyanya: Color::srgb(0.2, 0.85, 0.85),
            astar: Color::srgb(1.0, 0.55, 0.1),
            astar_smoothed: Color::srgb(0.95, 0.85, 0.2),
            replanned: Color::srgb(1.0, 0.2, 0.8),
            waiting: Color::srgb(0.8, 0.8, 0.8),
            failed: Color::srgb(1.0, 0.15, 0.15),
            fallback: Color::srgb(1.0, 0.35, 0.2),
            edit_blocked: Color::srgb(1.0, 0.3, 0.3),
            edit_freed: Color::srgb(0.3, 1.0, 0.5),
            recent: 1.0,
            trace: Color::srgb(0.8, 0.6, 1.0),
            trace_links: Color::srgba(0.8, 0.6, 1.0, 0.3),
            marker_radius: 0.3,
            clearance: Color::srgba(1.0, 0.7, 0.2, 0.7),
            links: true,
            link_walked: Color::srgb(1.0, 0.78, 0.25),
            link_handed: Color::srgb(0.72, 0.5, 1.0),
            link_disabled: Color::srgb(1.0, 0.22, 0.22),
            area_outline: Some(Color::srgb(0.42, 0.45, 0.55)),
        }
    }
}

impl NavGizmos {
    /// The colour of paths planned by `algorithm`.
    #[must_use]
    pub fn algorithm_color(&self, algorithm: Algorithm) -> Color {
        match algorithm {
            Algorithm::LazyTheta => self.lazy_theta,
            Algorithm::Anya => self.anya,
            Algorithm::AStar => self.astar,
            Algorithm::AStarSmoothed => self.astar_smoothed,
            Algorithm::Polyanya => self.polyanya,
        }
    }
}

/// Marker: draw this agent even when [`NavGizmos::all_agents`] is off.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "reflect", derive(Reflect), reflect(Component, Default))]
pub struct DrawNavGizmos;

/// Marker: draw where this agent's [`PathRequest::radius`] keeps it off, in
/// [`NavGizmos::clearance`]: for an agent planning on the mesh for its
/// radius (see [`PathRequest`]), the mesh's edges along the walls (the
/// walls grown by the radius); for one planning on an eroded grid, the free
/// cells blocked there (see [`crate::clearance`]), as runs along each row.
/// Only what cameras see is drawn, and nothing when they see more than
/// [`NavGizmos::max_blocked_samples`] cells.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "reflect", derive(Reflect), reflect(Component, Default))]
pub struct DrawClearance;

/// Marker: record what this agent's searches expand, and draw the last one.
///
/// Only marked agents' searches are traced (a search's trace costs memory
/// in proportion to the nodes it expands, up to
/// [`SearchTrace::DEFAULT_LIMIT`] entries); the result arrives with the
/// path, as [`LastSearch`].
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "reflect", derive(Reflect), reflect(Component, Default))]
pub struct TraceSearch;

/// What the last traced search of an agent (marked [`TraceSearch`])
/// expanded, in grid coordinates. Inserted by the plugin when the search's
/// result arrives.
#[derive(Component, Clone, Debug, PartialEq)]
pub struct LastSearch {
    /// The search's trace.
    pub trace: SearchTrace,
    /// Where the search started (grid coordinates).
    pub start: DVec2,
    /// How long the search took on its search thread (recording the trace
    /// included).
    pub time: Duration,
}

/// Stores a finished search's trace on its agent.
pub(crate) fn keep_trace(
    commands: &mut Commands,
    entity: Entity,
    trace: SearchTrace,
    start: DVec2,
    time: Duration,
) {
    commands
        .entity(entity)
        .try_insert(LastSearch { trace, start, time });
}

/// Recent edits and replans, with the time they were seen.
#[derive(Resource, Default)]
struct RecentChanges {
    /// The grid layout and version seen last.
    layout: u64,
    version: u64,
    edits: Vec<(GridEdit, f32)>,
    replans: EntityHashMap<f32>,
    /// Time source when the app has no `Time`.
    epoch: Option<Instant>,
}

impl RecentChanges {
    fn now(&mut self, time: Option<&Time>) -> f32 {
        match time {
            Some(t) => t.elapsed_secs(),
            None => self
                .epoch
                .get_or_insert_with(Instant::now)
                .elapsed()
                .as_secs_f32(),
        }
    }
}

/// The one place where drawing meets the world: grid point `p` as a 3D
/// world point, `height` off the grid's plane.
fn lift(nav: &NavGrid, p: DVec2, height: f32) -> Vec3 {
    lift_world(nav, nav.to_world(p), height)
}

/// World point `p` (2D, in the grid's plane) as a 3D world point.
fn lift_world(nav: &NavGrid, p: Vec2, height: f32) -> Vec3 {
    nav.transform().plane().lift(p, height)
}

/// A ring of `radius` world units around world point `p` of `plane`,
/// `h` off it.
fn ring(
    gizmos: &mut Gizmos<NavGizmos>,
    plane: WorldPlane,
    p: Vec2,
    radius: f32,
    h: f32,
    color: Color,
) {
    const SIDES: usize = 12;
    gizmos.linestrip(
        (0..=SIDES).map(|i| {
            let a = i as f32 * core::f32::consts::TAU / SIDES as f32;
            plane.lift(p + radius * Vec2::from_angle(a), h)
        }),
        color,
    );
}

/// A diagonal cross of half-size `r` world units at world point `p` of
/// `plane`, `h` off it.
fn cross(gizmos: &mut Gizmos<NavGizmos>, plane: WorldPlane, p: Vec2, r: f32, h: f32, color: Color) {
    for d in [Vec2::new(r, r), Vec2::new(r, -r)] {
        gizmos.line(plane.lift(p - d, h), plane.lift(p + d, h), color);
    }
}

/// A diamond (a square on its corner) of half-diagonal `r` world units at
/// world point `p` of `plane`, `h` off it.
fn diamond(
    gizmos: &mut Gizmos<NavGizmos>,
    plane: WorldPlane,
    p: Vec2,
    r: f32,
    h: f32,
    color: Color,
) {
    let corners = [(r, 0.0), (0.0, r), (-r, 0.0), (0.0, -r), (r, 0.0)];
    gizmos.linestrip(
        corners.map(|(x, y)| plane.lift(p + Vec2::new(x, y), h)),
        color,
    );
}

/// The outline of a rectangle of cells.
fn cell_rect(gizmos: &mut Gizmos<NavGizmos>, nav: &NavGrid, rect: URect, h: f32, color: Color) {
    let (a, b) = (rect.min.as_dvec2(), rect.max.as_dvec2());
    let corners = [a, DVec2::new(b.x, a.y), b, DVec2::new(a.x, b.y), a];
    gizmos.linestrip(corners.map(|c| lift(nav, c, h)), color);
}

/// The meshes for the radii of agents marked [`DrawClearance`] that plan on
/// meshes, kept in step with their profiles' grids for drawing (the search
/// threads keep their own).
#[derive(Resource, Default)]
struct DiscOutlines(Vec<((ProfileId, u32), NavMesh)>);

/// Outlines, for each clearance of an agent marked [`DrawClearance`], where
/// its radius keeps it off: for an agent on an eroded grid, the runs of
/// cells free on the grid and blocked on its eroded grid; for an agent on a
/// mesh for its radius, the mesh's edges along the walls.
fn draw_clearance(
    mut gizmos: Gizmos<NavGizmos>,
    nav: Option<Res<NavGrid>>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    agents: Query<(&PathRequest, Option<&PlanState>), With<DrawClearance>>,
    mut outlines: ResMut<DiscOutlines>,
) {
    let Some(nav) = nav else { return };
    if !gizmos.config.enabled || agents.is_empty() {
        outlines.0.clear();
        return;
    }
    let cfg: &NavGizmos = gizmos.config_ext;
    let (height, budget, color) = (cfg.height, cfg.max_blocked_samples, cfg.clearance);
    let view = visible_cells(&nav, &cameras, height);
    if u64::from(view.width()) * u64::from(view.height()) > u64::from(budget) {
        return;
    }
    // (What the agent last planned on; before its first search, what its
    // radius gives on an eroded grid.)
    let mut kinds: Vec<(ProfileId, Fit)> = agents
        .iter()
        .filter_map(|(r, state)| match state.map(PlanState::key) {
            Some(key) if key.0 == r.profile => Some(key),
            _ => Some((r.profile, Fit::Eroded(nav.clearance_of(r.radius).ok()?))),
        })
        .filter(|(_, fit)| !fit.is_none())
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    outlines
        .0
        .retain(|(k, _)| kinds.contains(&(k.0, Fit::Disc(k.1))));
    let (lo, hi) = (view.min.as_dvec2(), view.max.as_dvec2());
    for &(profile, fit) in &kinds {
        let (Fit::Disc(n), Some(grid)) = (fit, nav.grid_for(profile, Clearance::NONE)) else {
            continue;
        };
        let at = match outlines.0.iter().position(|(k, _)| *k == (profile, n)) {
            Some(at) => at,
            None => {
                let Ok(mesh) = NavMesh::with_radius(grid, fit.disc_radius()) else {
                    continue;
                };
                outlines.0.push(((profile, n), mesh));
                outlines.0.len() - 1
            }
        };
        let mesh = &mut outlines.0[at].1;
        mesh.sync(grid);
        for [a, b] in mesh.wall_edges() {
            if a.min(b).cmple(hi).all() && a.max(b).cmpge(lo).all() {
                gizmos.line(lift(&nav, a, height), lift(&nav, b, height), color);
            }
        }
    }
    for (profile, fit) in kinds {
        let Fit::Eroded(clearance) = fit else {
            continue;
        };
        // (Kept from the agent's first search on.)
        let (Some(grid), Some(eroded)) = (
            nav.grid_for(profile, Clearance::NONE),
            nav.grid_for(profile, clearance),
        ) else {
            continue;
        };
        for y in view.min.y..view.max.y {
            let mut run: Option<u32> = None;
            for x in view.min.x..=view.max.x {
                let kept_off = x < view.max.x && {
                    let c = UVec2::new(x, y);
                    grid.is_free(c) && !eroded.is_free(c)
                };
                match (kept_off, run) {
                    (true, None) => run = Some(x),
                    (false, Some(x0)) => {
                        cell_rect(
                            &mut gizmos,
                            &nav,
                            URect::new(x0, y, x, y + 1),
                            height,
                            color,
                        );
                        run = None;
                    }
                    _ => {}
                }
            }
        }
    }
}

/// Notes the edits made since the last frame.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
fn track_edits(
    nav: Option<Res<NavGrid>>,
    mut recent: ResMut<RecentChanges>,
    time: Option<Res<Time>>,
    config: Res<bevy_gizmos::config::GizmoConfigStore>,
) {
    let keep = config.config::<NavGizmos>().1.recent;
    let now = recent.now(time.as_deref());
    recent.edits.retain(|(_, t)| now - t <= keep);
    let Some(nav) = nav else {
        recent.edits.clear();
        return;
    };
    if nav.layout_id() != recent.layout {
        recent.layout = nav.layout_id();
        recent.version = nav.version();
        recent.edits.clear();
        return;
    }
    if nav.version() == recent.version {
        return;
    }
    if let Some(edits) = nav.edits_since(recent.version) {
        recent.edits.extend(edits.iter().map(|e| (*e, now)));
    }
    recent.version = nav.version();
}

/// Notes agents that got a new plan for another reason than a new request.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
fn track_replans(
    mut ready: MessageReader<PathReady>,
    mut recent: ResMut<RecentChanges>,
    time: Option<Res<Time>>,
    config: Res<bevy_gizmos::config::GizmoConfigStore>,
) {
    let keep = config.config::<NavGizmos>().1.recent;
    let now = recent.now(time.as_deref());
    recent.replans.retain(|_, t| now - *t <= keep);
    for r in ready.read() {
        if r.reason != PlanReason::NewRequest {
            recent.replans.insert(r.entity, now);
        }
    }
}

/// The cells (half-open) that cameras see of the grid: the whole grid
/// when there is no camera, or a view does not meet the grid's plane.
fn visible_cells(nav: &NavGrid, cameras: &Query<(&Camera, &GlobalTransform)>, h: f32) -> URect {
    let size = nav.grid().size();
    let whole = URect::from_corners(UVec2::ZERO, size);
    let mut seen: Option<(DVec2, DVec2)> = None;
    let plane = nav.transform().plane();
    let normal = plane.lift(Vec2::ZERO, 1.0);
    for (camera, transform) in cameras {
        if !camera.is_active {
            continue;
        }
        let Some(view) = camera.logical_viewport_size() else {
            return whole;
        };
        for corner in [
            Vec2::ZERO,
            Vec2::new(view.x, 0.0),
            Vec2::new(0.0, view.y),
            view,
        ] {
            let Ok(ray) = camera.viewport_to_world(transform, corner) else {
                return whole;
            };
            // Where the corner's ray meets the grid's plane.
            let along = ray.direction.dot(normal);
            let t = (h - ray.origin.dot(normal)) / along;
            if !(t.is_finite() && t >= 0.0) {
                return whole; // parallel to the plane, or looking away
            }
            let g = nav.to_grid(plane.project(ray.get_point(t)));
            seen = Some(seen.map_or((g, g), |(lo, hi)| (lo.min(g), hi.max(g))));
        }
    }
    let Some((lo, hi)) = seen else {
        return whole;
    };
    let max = size.as_dvec2();
    let lo = (lo.floor() - DVec2::ONE).clamp(DVec2::ZERO, max);
    let hi = (hi.ceil() + DVec2::ONE).clamp(DVec2::ZERO, max);
    URect::from_corners(lo.as_uvec2(), hi.as_uvec2())
}

/// The outlines of blocked cells last drawn, kept until the grid or the
/// view changes.
#[derive(Default)]
struct BlockedCache {
    key: Option<(u64, u64, URect, u32, u32)>,
    /// Segments in grid coordinates.
    segments: Vec<(DVec2, DVec2)>,
    /// Whether each block of the previous and current rows is blocked.
    rows: [Vec<bool>; 2],
    /// Open vertical runs: the block row each started at, per column edge.
    open: Vec<Option<u32>>,
}

impl BlockedCache {
    /// Outlines the blocked blocks of `stride` cells in `view`, each block
    /// judged by the cell at its centre; outside the grid counts as blocked.
    fn rebuild(&mut self, nav: &NavGrid, view: URect, stride: u32) {
        self.segments.clear();
        let grid = nav.grid();
        let (w, h) = (grid.width(), grid.height());
        // Blocks aligned to multiples of the stride, so that panning does
        // not make the picture flicker.
        let bx0 = view.min.x / stride;
        let by0 = view.min.y / stride;
        let bx1 = view.max.x.div_ceil(stride);
        let by1 = view.max.y.div_ceil(stride);
        let cols = (bx1 - bx0) as usize;
        let blocked = |bx: u32, by: u32| {
            let x = (bx * stride + stride / 2).min(w - 1);
            let y = (by * stride + stride / 2).min(h - 1);
            bx * stride >= w || by * stride >= h || grid.is_blocked(UVec2::new(x, y))
        };
        let corner = |bx: u32, by: u32| {
            DVec2::new(
                f64::from((bx * stride).min(w)),
                f64::from((by * stride).min(h)),
            )
        };
        self.open.clear();
        self.open.resize(cols + 1, None);
        let [prev, cur] = &mut self.rows;
        prev.clear();
        // The row above the view (outside the grid above row 0).
        prev.extend((bx0..bx1).map(|bx| by0 == 0 || blocked(bx, by0 - 1)));
        for by in by0..=by1 {
            cur.clear();
            if by < by1 {
                cur.extend((bx0..bx1).map(|bx| blocked(bx, by)));
            } else {
                // The row below the view.
                cur.extend((bx0..bx1).map(|bx| by * stride >= h || blocked(bx, by)));
            }
            // Horizontal edges between the previous row and this one, in
            // runs (not along the grid's outer border).
            let mut run: Option<u32> = None;
            for i in 0..=cols {
                let edge = i < cols && prev[i] != cur[i] && by > 0 && by * stride < h;
                match (edge, run) {
                    (true, None) => run = Some(i as u32),
                    (false, Some(s)) => {
                        let bx = bx0 + i as u32;
                        self.segments.push((corner(bx0 + s, by), corner(bx, by)));
                        run = None;
                    }
                    _ => {}
                }
            }
            // Vertical edges beside the blocks of this row, in runs across
            // rows.
            for i in 0..=cols {
                let edge = by < by1 && {
                    let left = if i == 0 {
                        bx0 == 0 || blocked(bx0 - 1, by)
                    } else {
                        cur[i - 1]
                    };
                    let right = if i == cols {
                        (bx0 + i as u32) * stride >= w || blocked(bx0 + i as u32, by)
                    } else {
                        cur[i]
                    };
                    let bx = bx0 + i as u32;
                    left != right && bx > 0 && bx * stride < w
                };
                match (edge, self.open[i]) {
                    (true, None) => self.open[i] = Some(by),
                    (false, Some(s)) => {
                        let bx = bx0 + i as u32;
                        self.segments.push((corner(bx, s), corner(bx, by)));
                        self.open[i] = None;
                    }
                    _ => {}
                }
            }
            core::mem::swap(prev, cur);
        }
        // The grid's border.
        let max = DVec2::new(f64::from(w), f64::from(h));
        self.segments.extend([
            (DVec2::ZERO, DVec2::new(max.x, 0.0)),
            (DVec2::new(max.x, 0.0), max),
            (max, DVec2::new(0.0, max.y)),
            (DVec2::new(0.0, max.y), DVec2::ZERO),
        ]);
    }
}

/// Outlines blocked cells in view.
fn draw_blocked(
    mut gizmos: Gizmos<NavGizmos>,
    nav: Option<Res<NavGrid>>,
    cameras: Query<(&Camera, &GlobalTransform)>,
    mut cache: Local<BlockedCache>,
) {
    let Some(nav) = nav else { return };
    let cfg: &NavGizmos = gizmos.config_ext;
    let (height, budget) = (cfg.height, cfg.max_blocked_samples.max(1));
    let Some(color) = cfg.blocked.filter(|_| gizmos.config.enabled) else {
        return;
    };
    let view = visible_cells(&nav, &cameras, height);
    if view.is_empty() {
        return;
    }
    let cells = u64::from(view.width()) * u64::from(view.height());
    // The smallest power of two whose blocks keep the samples in budget.
    let mut stride = 1u32;
    while cells / (u64::from(stride) * u64::from(stride)) > u64::from(budget) {
        stride *= 2;
    }
    let key = (nav.layout_id(), nav.version(), view, stride, budget);
    if cache.key != Some(key) {
        cache.rebuild(&nav, view, stride);
        cache.key = Some(key);
    }
    for &(a, b) in &cache.segments {
        gizmos.line(lift(&nav, a, height), lift(&nav, b, height), color);
    }
}

/// Outlines recently edited cells, fading out.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
fn draw_edits(
    mut gizmos: Gizmos<NavGizmos>,
    nav: Option<Res<NavGrid>>,
    mut recent: ResMut<RecentChanges>,
    time: Option<Res<Time>>,
) {
    let Some(nav) = nav else { return };
    let cfg: &NavGizmos = gizmos.config_ext;
    let now = recent.now(time.as_deref());
    for (edit, at) in &recent.edits {
        let fade = 1.0 - ((now - at) / cfg.recent.max(1e-3)).clamp(0.0, 1.0);
        let color = match edit.kind {
            EditKind::Blocked | EditKind::Mixed => cfg.edit_blocked,
            EditKind::Freed => cfg.edit_freed,
        };
        let color = color.with_alpha(color.alpha() * (0.3 + 0.7 * fade));
        cell_rect(&mut gizmos, &nav, edit.rect, cfg.height, color);
    }
}

/// What an agent looks like to [`draw_agents`].
type AgentView = (
    Entity,
    &'static NavPath,
    &'static PathStatus,
    Has<Replanning>,
    Has<DrawNavGizmos>,
    PositionData,
);

/// Draws agents' remaining paths, next waypoints, goals and states (agents
/// on areas are drawn by [`draw_area_agents`]).
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
fn draw_agents(
    mut gizmos: Gizmos<NavGizmos>,
    nav: Option<Res<NavGrid>>,
    agents: Query<AgentView, Without<OnArea>>,
    recent: Res<RecentChanges>,
) {
    let Some(nav) = nav else { return };
    let cfg: &NavGizmos = gizmos.config_ext;
    let plane = nav.transform().plane();
    let h = cfg.height;
    let r = cfg.marker_radius * nav.transform().cell_size();
    for (entity, path, status, replanning, marked, pos) in &agents {
        if !cfg.all_agents && !marked {
            continue;
        }
        AgentShape {
            plane,
            r,
            here: position(pos, plane),
            path,
            status,
            highlighted: replanning || recent.replans.contains_key(&entity),
            height: |_: Option<usize>| h,
            link: |_: usize| false,
        }
        .draw(&mut gizmos);
    }
}

/// One agent as drawn: where it stands, its path and state, and how to
/// place them in the world.
struct AgentShape<'a, H, L> {
    plane: WorldPlane,
    /// Radius of the ring around the agent, world units.
    r: f32,
    /// Where it stands (world), if it has a position.
    here: Option<Vec2>,
    path: &'a NavPath,
    status: &'a PathStatus,
    /// Replanning or replanned recently.
    highlighted: bool,
    /// The height to draw waypoint `k` at (`Some(k)`), or the agent itself
    /// (`None`).
    height: H,
    /// Whether the segment from waypoint `k` to the next crosses a link.
    link: L,
}

impl<H: Fn(Option<usize>) -> f32, L: Fn(usize) -> bool> AgentShape<'_, H, L> {
    /// Draws its remaining path from where it stands (the links it crosses
    /// dashed), its next waypoint and its goal; without a path to follow, a
    /// ring where it stands.
    fn draw(&self, gizmos: &mut Gizmos<NavGizmos>) {
        let cfg: &NavGizmos = gizmos.config_ext;
        let (plane, r, path) = (self.plane, self.r, self.path);
        let height = &self.height;
        let at = |k: Option<usize>, p: Vec2| plane.lift(p, height(k));
        let Some(algorithm) = path
            .algorithm
            .filter(|_| self.status.has_path() && !path.is_empty())
        else {
            // Nothing to follow: a ring where the agent stands.
            let color = if self.status.is_busy() {
                cfg.waiting
            } else {
                cfg.failed
            };
            if let Some(p) = self.here {
                ring(gizmos, plane, p, r, height(None), color);
                if !self.status.is_busy() {
                    cross(gizmos, plane, p, r * 0.7, height(None), color);
                }
            }
            return;
        };
        let color = if self.highlighted {
            cfg.replanned
        } else {
            cfg.algorithm_color(algorithm)
        };
        let rest = path.remaining();
        let next = path.next;
        if let (Some(p), Some(&first)) = (self.here, rest.first()) {
            let (a, b) = (at(None, p), at(Some(next), first));
            if next > 0 && (self.link)(next - 1) {
                dashes(gizmos, a, b, r, color);
            } else {
                gizmos.line(a, b, color);
            }
            ring(gizmos, plane, first, r * 0.6, height(Some(next)), color);
        }
        // The rest in runs between links, the links dashed.
        let mut run = 0;
        for i in 0..rest.len() {
            let last = i + 1 == rest.len();
            if !(last || (self.link)(next + i)) {
                continue;
            }
            if i > run {
                gizmos.linestrip((run..=i).map(|j| at(Some(next + j), rest[j])), color);
            }
            if !last {
                let a = at(Some(next + i), rest[i]);
                dashes(gizmos, a, at(Some(next + i + 1), rest[i + 1]), r, color);
            }
            run = i + 1;
        }
        if let Some(p) = self.here {
            ring(gizmos, plane, p, r, height(None), color);
        }
        let Some(end) = path.end() else { return };
        if path.is_finished() {
            return;
        }
        let h = height(Some(path.waypoints.len() - 1));
        if path.fallback {
            // The requested goal, unreachable, and a dashed link to where
            // the path ends instead (the fallback target: a square).
            cross(gizmos, plane, path.goal, r, h, cfg.fallback);
            let s = r * 0.8;
            let square = [(-s, -s), (s, -s), (s, s), (-s, s), (-s, -s)]
                .map(|(x, y)| plane.lift(end + Vec2::new(x, y), h));
            gizmos.linestrip(square, cfg.fallback);
            let (a, b) = (plane.lift(end, h), plane.lift(path.goal, h));
            dashes(gizmos, a, b, r, cfg.fallback);
        } else {
            cross(gizmos, plane, end, r, h, color);
        }
    }
}

/// A dashed line from `a` to `b`, dashes `dash` world units long.
fn dashes(gizmos: &mut Gizmos<NavGizmos>, a: Vec3, b: Vec3, dash: f32, color: Color) {
    let length = a.distance(b);
    if !(length.is_finite() && dash > 0.0) {
        return;
    }
    let n = ((length / dash) as usize).min(1000);
    for i in (0..n).step_by(2) {
        let t0 = i as f32 / n as f32;
        let t1 = (i + 1) as f32 / n as f32;
        gizmos.line(a.lerp(b, t0), a.lerp(b, t1), color);
    }
}

/// Draws the last search of agents marked [`TraceSearch`].
fn draw_traces(
    mut gizmos: Gizmos<NavGizmos>,
    nav: Option<Res<NavGrid>>,
    traced: Query<&LastSearch, With<TraceSearch>>,
) {
    let Some(nav) = nav else { return };
    let cfg: &NavGizmos = gizmos.config_ext;
    let h = cfg.height;
    let (w, hh) = (
        f64::from(nav.grid().width()),
        f64::from(nav.grid().height()),
    );
    let inside = |p: DVec2| p.x >= 0.0 && p.y >= 0.0 && p.x <= w && p.y <= hh;
    for last in &traced {
        let trace = &last.trace;
        for e in &trace.points {
            if !(inside(e.point) && inside(e.parent)) {
                continue;
            }
            let p = lift(&nav, e.point, h);
            gizmos.line(lift(&nav, e.parent, h), p, cfg.trace_links);
            let s = 0.12;
            for d in [DVec2::new(s, 0.0), DVec2::new(0.0, s)] {
                gizmos.line(
                    lift(&nav, e.point - d, h),
                    lift(&nav, e.point + d, h),
                    cfg.trace,
                );
            }
        }
        for i in &trace.intervals {
            let y = f64::from(i.row);
            let (a, b) = (DVec2::new(i.left, y), DVec2::new(i.right, y));
            if !(inside(a) && inside(b) && inside(i.root)) {
                continue;
            }
            let root = lift(&nav, i.root, h);
            gizmos.line(root, lift(&nav, a, h), cfg.trace_links);
            gizmos.line(root, lift(&nav, b, h), cfg.trace_links);
            gizmos.line(lift(&nav, a, h), lift(&nav, b, h), cfg.trace);
        }
    }
}
