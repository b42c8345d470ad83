//! Drawing floors and links: each area's outline, each link (walked or
//! handed, open or closed, one way or both), and the agents on areas with
//! their routes across them.

use bevy_color::Color;
use bevy_ecs::prelude::*;
use bevy_gizmos::gizmos::Gizmos;
use bevy_math::{Vec2, Vec3};

use super::{AgentShape, DrawNavGizmos, NavGizmos, RecentChanges, cross, dashes, diamond, ring};
use crate::plugin::api::{LinkCrossing, NavPath, PathStatus, Replanning};
use crate::plugin::floors::{CrossingLink, NavArea, NavLink};
use crate::plugin::world::{OnArea, PositionData, WorldPlane, position};

/// The height to draw at on `area`: `h` off its plane, and on the `Xz`
/// plane the area's own height above that.
fn area_height(area: &NavArea, h: f32) -> f32 {
    match area.grid.transform().plane() {
        WorldPlane::Xy => h,
        WorldPlane::Xz => h + area.height,
    }
}

/// The outlines of the areas and the links between them.
pub(super) fn draw_links(
    mut gizmos: Gizmos<NavGizmos>,
    areas: Query<&NavArea>,
    links: Query<&NavLink>,
) {
    if !gizmos.config.enabled {
        return;
    }
    let cfg: &NavGizmos = gizmos.config_ext;
    if let Some(color) = cfg.area_outline {
        for area in &areas {
            let plane = area.grid.transform().plane();
            let h = area_height(area, cfg.height);
            let rect = area.grid.world_rect();
            let corners = [
                rect.min,
                Vec2::new(rect.max.x, rect.min.y),
                rect.max,
                Vec2::new(rect.min.x, rect.max.y),
                rect.min,
            ];
            gizmos.linestrip(corners.map(|c| plane.lift(c, h)), color);
        }
    }
    if !cfg.links {
        return;
    }
    for link in &links {
        let (Ok(from), Ok(to)) = (areas.get(link.from.area), areas.get(link.to.area)) else {
            continue;
        };
        let plane = from.grid.transform().plane();
        let s = cfg.marker_radius * from.grid.transform().cell_size();
        let (ha, hb) = (area_height(from, cfg.height), area_height(to, cfg.height));
        let (pa, pb) = (link.from.point, link.to.point);
        let (a, b) = (plane.lift(pa, ha), plane.lift(pb, hb));
        let color = match (link.enabled, link.crossing) {
            (false, _) => cfg.link_disabled,
            (true, LinkCrossing::Walked) => cfg.link_walked,
            (true, LinkCrossing::Handed) => cfg.link_handed,
        };
        match link.crossing {
            LinkCrossing::Walked => gizmos.line(a, b, color),
            LinkCrossing::Handed => dashes(&mut gizmos, a, b, 2.0 * s, color),
        }
        diamond(&mut gizmos, plane, pa, 1.5 * s, ha, color);
        diamond(&mut gizmos, plane, pb, 1.5 * s, hb, color);
        if !link.enabled {
            // Closed: a cross at the middle.
            let (mid, h) = (pa.lerp(pb, 0.5), f32::midpoint(ha, hb));
            cross(&mut gizmos, plane, mid, 2.0 * s, h, color);
        }
        if !link.both_ways {
            arrow_head(&mut gizmos, plane, a, b, 3.0 * s, color);
        }
    }
}

/// An arrow head of size `size` (world units) pointing from `a` to `b`,
/// two thirds of the way there, its wings in the plane through the line and
/// across `plane` (or along the plane's x axis for a line straight up).
fn arrow_head(
    gizmos: &mut Gizmos<NavGizmos>,
    plane: WorldPlane,
    a: Vec3,
    b: Vec3,
    size: f32,
    color: Color,
) {
    let Some(along) = (b - a).try_normalize() else {
        return;
    };
    let up = plane.lift(Vec2::ZERO, 1.0);
    let side = along
        .cross(up)
        .try_normalize()
        .unwrap_or_else(|| plane.lift(Vec2::X, 0.0));
    let tip = a.lerp(b, 2.0 / 3.0) + along * (size / 2.0);
    let back = tip - along * size;
    for wing in [back + side * (0.6 * size), back - side * (0.6 * size)] {
        gizmos.line(wing, tip, color);
    }
}

/// What an agent on an area looks like to [`draw_area_agents`].
type AreaAgentView = (
    Entity,
    &'static NavPath,
    &'static PathStatus,
    &'static OnArea,
    Has<Replanning>,
    Has<DrawNavGizmos>,
    Has<CrossingLink>,
    PositionData,
);

/// Draws the agents standing on areas: their paths across areas and
/// links, next waypoints, goals and states.
#[expect(clippy::needless_pass_by_value, reason = "system parameters")]
pub(super) fn draw_area_agents(
    mut gizmos: Gizmos<NavGizmos>,
    areas: Query<&NavArea>,
    agents: Query<AreaAgentView>,
    recent: Res<RecentChanges>,
) {
    if !gizmos.config.enabled {
        return;
    }
    let cfg: &NavGizmos = gizmos.config_ext;
    for (entity, path, status, on, replanning, marked, waiting, pos) in &agents {
        if !cfg.all_agents && !marked {
            continue;
        }
        let Ok(area) = areas.get(on.0) else {
            continue;
        };
        let plane = area.grid.transform().plane();
        let r = cfg.marker_radius * area.grid.transform().cell_size();
        let height_on = |e: Option<Entity>| {
            e.and_then(|e| areas.get(e).ok())
                .map_or(cfg.height, |a| area_height(a, cfg.height))
        };
        let here = position(pos, plane);
        // On a walked link its height runs from one end's area to the
        // other's; elsewhere it is its area's.
        let on_link = path.next.checked_sub(1).and_then(|k| {
            path.crossings
                .iter()
                .find(|c| c.at == k && c.crossing == LinkCrossing::Walked)
        });
        let here_height = match (on_link, here) {
            (Some(c), Some(p)) if c.at + 1 < path.waypoints.len() => {
                let (a, b) = (path.waypoints[c.at], path.waypoints[c.at + 1]);
                let t = if a == b {
                    1.0
                } else {
                    (p.distance(a) / a.distance(b)).clamp(0.0, 1.0)
                };
                let (h0, h1) = (height_on(Some(c.from_area)), height_on(Some(c.to_area)));
                h0 + (h1 - h0) * t
            }
            _ => height_on(Some(on.0)),
        };
        AgentShape {
            plane,
            r,
            here,
            path,
            status,
            highlighted: replanning || recent.replans.contains_key(&entity),
            height: |k: Option<usize>| match k {
                None => here_height,
                Some(k) => height_on(path.area_of(k).or(Some(on.0))),
            },
            link: |k: usize| path.crossings.iter().any(|c| c.at == k),
        }
        .draw(&mut gizmos);
        if waiting && let Some(p) = here {
            ring(&mut gizmos, plane, p, 2.0 * r, here_height, cfg.link_handed);
        }
    }
}
