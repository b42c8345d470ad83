//! Quickstart: seven agents cross the `arena` map with the real plugin, in
//! a headless app (no window).
//!
//! Six are points; the seventh, G, has a radius of 1.5 cells and keeps that
//! far from every wall, taking the same trip as A (which hugs the walls).
//! The agents get `PathRequest`s and walk with `PathFollower`. A second in,
//! the map is edited: a wall goes up in the middle (agents whose paths cross
//! it replan), an obstacle is removed (agents it gives a shortcut replan),
//! and a room is closed, which makes one agent's goal unreachable (it gets a
//! fallback path to the closest reachable point). Later a door opens and
//! that agent replans to its real goal. The example prints what happened
//! and draws the map in ASCII; with `--out FILE` it also writes an SVG
//! picture.
//!
//! ```text
//! cargo run --release --example quickstart [-- --out quickstart.svg]
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;

use bevy_anyangle::plugin::{
    AnyAnglePlugin, GridTransform, NavGrid, NavPath, PathFailed, PathFollower, PathReady,
    PathRequest, PathStatus, PathfindingSettings, PlanReason, SteeringClock,
};
use bevy_anyangle::prelude::*;
use bevy_app::{App, TaskPoolPlugin};
use bevy_ecs::prelude::*;
use bevy_math::Vec2;
use bevy_transform::components::Transform;

const MAP: &str = include_str!("../data/maps/arena.map");
/// Simulated frames per second (the steering clock is fixed).
const FPS: f32 = 30.0;
const WALL_FRAME: u32 = 30;
const DOOR_FRAME: u32 = 150;
const MAX_FRAMES: u32 = 1200;

/// A one-letter name for printing.
#[derive(Component, Clone, Copy)]
struct Label(char);

/// The current frame, for the journal.
#[derive(Resource, Default)]
struct Frame(u32);

/// What the observers saw, in order.
#[derive(Resource, Default)]
struct Journal(Vec<(u32, Entity, String)>);

/// Per agent: the first path, and where it has been.
#[derive(Default)]
struct Track {
    first_path: Vec<Vec2>,
    trail: Vec<Vec2>,
}

/// The wide agent's radius, in cells (world units).
const WIDE: f32 = 1.5;

/// What `--help` prints.
const HELP: &str = "\
Seven agents cross the bundled arena map with the real plugin, headless:
paths, obstacle edits mid-run and who replans, an unreachable goal's fallback
path, a wide agent (G, radius 1.5 cells) keeping off the walls. Prints a
journal and an ASCII picture.

Usage:
  cargo run --release --example quickstart [-- --out FILE]

Options:
  --out FILE   also write an SVG picture of the run to FILE
  -h, --help   print this help
";

fn main() -> std::process::ExitCode {
    let svg_path = match svg_argument(std::env::args().skip(1)) {
        Ok(Some(path)) => Some(path),
        Ok(None) => None,
        Err(help) => {
            let ok = help.is_empty();
            if ok {
                print!("{HELP}");
            } else {
                eprintln!("error: {help}\n\n{HELP}");
            }
            return if ok {
                std::process::ExitCode::SUCCESS
            } else {
                std::process::ExitCode::from(2)
            };
        }
    };
    let nav =
        NavGrid::from_movingai(MAP, GridTransform::default()).expect("the bundled map parses");
    let (width, height) = (nav.grid().width(), nav.grid().height());
    // Grid (x, y) with y down -> world (x, height - y) with y up.
    let at = |x: f32, y: f32| Vec2::new(x, height as f32 - y);

    let mut app = App::new();
    app.add_plugins((TaskPoolPlugin::default(), AnyAnglePlugin::default()))
        .insert_resource(nav)
        .insert_resource(SteeringClock::fixed(1.0 / FPS))
        .init_resource::<Frame>()
        .init_resource::<Journal>()
        .add_observer(on_ready)
        .add_observer(on_failed);

    let trips = [
        ('A', at(3.5, 5.5), at(45.5, 25.5), 0.0),
        ('B', at(5.5, 25.5), at(44.5, 22.5), 0.0),
        ('C', at(20.5, 40.5), at(28.5, 4.5), 0.0),
        ('D', at(16.5, 44.5), at(16.5, 12.5), 0.0),
        ('E', at(40.5, 5.5), at(8.5, 44.5), 0.0),
        ('F', at(5.5, 44.5), at(42.5, 41.5), 0.0),
        // A's trip for an agent 3 cells wide: its path keeps 1.5 cells from
        // every wall (it plans on the navigation mesh for that radius).
        ('G', at(4.5, 6.5), at(44.5, 26.5), WIDE),
    ];
    let mut agents = Vec::new();
    for (name, start, goal, radius) in trips {
        let id = app
            .world_mut()
            .spawn((
                Label(name),
                Transform::from_translation(start.extend(0.0)),
                PathRequest::to(goal).with_radius(radius),
                PathFollower {
                    speed: 8.0,
                    arrive_radius: 0.05,
                },
            ))
            .id();
        agents.push((name, id, goal));
    }
    app.finish();
    app.cleanup();

    let algorithm = app.world().resource::<PathfindingSettings>().algorithm;
    println!(
        "bevy_anyangle quickstart: arena.map ({width} x {height} cells), {} agents, {algorithm}",
        agents.len()
    );
    println!(
        "(world y is up; cell (x, y) of the map file spans world [x, x+1] x [{height}-y-1, {height}-y])\n"
    );

    let blocked_wall = URect::new(24, 19, 25, 31);
    let freed_block = URect::new(15, 15, 19, 19);
    let room = [URect::new(35, 35, 48, 36), URect::new(35, 35, 36, 48)];
    let door = UVec2::new(35, 41);
    let mut tracks: BTreeMap<char, Track> = BTreeMap::new();
    let mut printed = 0;

    for frame in 0..MAX_FRAMES {
        app.world_mut().resource_mut::<Frame>().0 = frame;
        if frame == WALL_FRAME {
            let mut nav = app.world_mut().resource_mut::<NavGrid>();
            nav.edit(|e| {
                e.set_rect_free(blocked_wall, false)?;
                e.set_rect_free(freed_block, true)?;
                for r in room {
                    e.set_rect_free(r, false)?;
                }
                Ok(())
            })
            .expect("the edits are inside the grid");
            println!(
                "frame {frame:4}  EDIT: wall at x=24, rows 19..31 blocked; block at x 15..19, y 15..19 removed; \
                 room x 36..48, y 36..48 closed"
            );
        }
        if frame == DOOR_FRAME {
            app.world_mut()
                .resource_mut::<NavGrid>()
                .set_cell_free(door, true)
                .expect("in the grid");
            println!(
                "frame {frame:4}  EDIT: door opened at cell ({}, {})",
                door.x, door.y
            );
        }
        app.update();

        let world = app.world_mut();
        let journal = &world.resource::<Journal>().0;
        for (f, entity, text) in &journal[printed..] {
            let name = world.get::<Label>(*entity).map_or('?', |n| n.0);
            println!("frame {f:4}  {name} {text}");
        }
        printed = journal.len();
        if frame == WALL_FRAME + 20 {
            let replanned: Vec<char> = journal
                .iter()
                .filter(|(f, ..)| *f >= WALL_FRAME)
                .filter_map(|(_, e, _)| world.get::<Label>(*e).map(|n| n.0))
                .collect();
            let untouched: String = agents
                .iter()
                .map(|a| a.0)
                .filter(|n| !replanned.contains(n))
                .collect();
            println!("            not affected by the edit (path untouched): {untouched}");
        }
        let mut all_done = frame > DOOR_FRAME;
        for &(name, id, _) in &agents {
            let p = world
                .get::<Transform>(id)
                .expect("agent")
                .translation
                .truncate();
            let path = world.get::<NavPath>(id).expect("agent");
            let track = tracks.entry(name).or_default();
            if track.first_path.is_empty() && !path.is_empty() {
                track.first_path.clone_from(&path.waypoints);
            }
            if track.trail.last() != Some(&p) {
                track.trail.push(p);
            }
            all_done &= path.is_finished() && !path.is_empty();
        }
        if all_done {
            println!("frame {frame:4}  every agent has arrived");
            break;
        }
        // Give the background searches a moment, as a real frame would.
        std::thread::sleep(std::time::Duration::from_micros(300));
    }

    println!("\nfinal state:");
    let world = app.world();
    let nav = world.resource::<NavGrid>();
    for &(name, id, goal) in &agents {
        let status = world.get::<PathStatus>(id).expect("agent");
        let p = world
            .get::<Transform>(id)
            .expect("agent")
            .translation
            .truncate();
        let walked: f32 = tracks[&name]
            .trail
            .windows(2)
            .map(|w| w[0].distance(w[1]))
            .sum();
        println!(
            "  {name}: {status:?}, at ({:.2}, {:.2}), {:.2} from its goal, walked {walked:.1}",
            p.x,
            p.y,
            p.distance(goal)
        );
    }
    // How close the wide agent came to a wall (of the grid as it is now),
    // along its trail sampled every 1/16 cell.
    let grid = nav.grid();
    let mut closest = f64::INFINITY;
    for w in tracks[&'G'].trail.windows(2) {
        let (a, b) = (nav.to_grid(w[0]), nav.to_grid(w[1]));
        let steps = (a.distance(b) * 16.0).ceil().max(1.0) as usize;
        for i in 0..=steps {
            let q = a.lerp(b, i as f64 / steps as f64);
            for y in q.y as i64 - 3..=q.y as i64 + 3 {
                for x in q.x as i64 - 3..=q.x as i64 + 3 {
                    if !grid.is_free_xy(x, y) {
                        let dx = (x as f64 - q.x).max(q.x - (x + 1) as f64).max(0.0);
                        let dy = (y as f64 - q.y).max(q.y - (y + 1) as f64).max(0.0);
                        closest = closest.min(dx.hypot(dy));
                    }
                }
            }
        }
    }
    println!("  G (radius {WIDE}) came no closer than {closest:.3} cells to a wall");

    println!(
        "\n{}",
        ascii_picture(
            nav,
            &agents,
            &tracks,
            &[blocked_wall],
            &[freed_block],
            &room
        )
    );
    let Some(svg_path) = svg_path else {
        println!("(Run with --out FILE for an SVG picture.)");
        return std::process::ExitCode::SUCCESS;
    };
    let svg = svg_picture(
        nav,
        &agents,
        &tracks,
        &[blocked_wall],
        &[freed_block],
        &room,
    );
    match std::fs::write(&svg_path, svg) {
        Ok(()) => {
            println!("SVG picture written to {svg_path}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("could not write {svg_path}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The SVG path of `--out PATH` (or `--out=PATH`), if given; `Err("")` for
/// `--help`, `Err(message)` for anything else.
fn svg_argument(args: impl IntoIterator<Item = String>) -> Result<Option<String>, String> {
    let mut args = args.into_iter();
    let mut out = None;
    while let Some(a) = args.next() {
        let path = match a.as_str() {
            "-h" | "--help" => return Err(String::new()),
            "--out" => args.next().ok_or("--out needs a file name")?,
            _ => match a.strip_prefix("--out=") {
                Some(p) => p.to_owned(),
                None => return Err(format!("unknown argument {a:?}")),
            },
        };
        if path.is_empty() {
            return Err("--out needs a file name".into());
        }
        if out.replace(path).is_some() {
            return Err("--out given twice".into());
        }
    }
    Ok(out)
}

#[expect(clippy::needless_pass_by_value, reason = "observer parameters")]
fn on_ready(
    ready: On<PathReady>,
    frame: Res<Frame>,
    paths: Query<&NavPath>,
    mut journal: ResMut<Journal>,
) {
    let n = paths.get(ready.entity).map_or(0, |p| p.waypoints.len());
    let what = if ready.fallback {
        "FALLBACK path (goal unreachable)"
    } else {
        "path ready"
    };
    let why = match ready.reason {
        PlanReason::NewRequest => "new request".to_owned(),
        other => format!("replanned: {other:?}"),
    };
    journal.0.push((
        frame.0,
        ready.entity,
        format!("{what}: {:.1} units, {n} waypoints ({why})", ready.length),
    ));
}

#[expect(clippy::needless_pass_by_value, reason = "observer parameters")]
fn on_failed(failed: On<PathFailed>, frame: Res<Frame>, mut journal: ResMut<Journal>) {
    journal.0.push((
        frame.0,
        failed.entity,
        format!("no path: {:?} ({:?})", failed.status, failed.reason),
    ));
}

fn in_rects(rects: &[URect], x: u32, y: u32) -> bool {
    rects
        .iter()
        .any(|r| (r.min.x..r.max.x).contains(&x) && (r.min.y..r.max.y).contains(&y))
}

/// The map with the edits and each agent's walked trail.
fn ascii_picture(
    nav: &NavGrid,
    agents: &[(char, Entity, Vec2)],
    tracks: &BTreeMap<char, Track>,
    blocked: &[URect],
    freed: &[URect],
    room: &[URect],
) -> String {
    let g = nav.grid();
    let (w, h) = (g.width() as usize, g.height() as usize);
    let mut rows: Vec<Vec<char>> = (0..h)
        .map(|y| {
            (0..w)
                .map(|x| {
                    let (xu, yu) = (x as u32, y as u32);
                    if in_rects(blocked, xu, yu)
                        || in_rects(room, xu, yu) && !g.is_free_xy(x as i64, y as i64)
                    {
                        '='
                    } else if in_rects(freed, xu, yu) || in_rects(room, xu, yu) {
                        ':'
                    } else if g.is_free_xy(x as i64, y as i64) {
                        ' '
                    } else {
                        '#'
                    }
                })
                .collect()
        })
        .collect();
    // A point on a cell edge is drawn in a free cell touching it.
    let mut plot = |p: Vec2, c: char| {
        let q = nav.to_grid(p);
        let cands = [
            q,
            q - DVec2::new(1e-3, 0.0),
            q - DVec2::new(0.0, 1e-3),
            q - DVec2::splat(1e-3),
        ];
        let cell = |v: DVec2| {
            let x = v.x.floor().clamp(0.0, w as f64 - 1.0) as usize;
            let y = v.y.floor().clamp(0.0, h as f64 - 1.0) as usize;
            (x, y)
        };
        let (x, y) = cands
            .into_iter()
            .map(cell)
            .find(|&(x, y)| g.is_free_xy(x as i64, y as i64))
            .unwrap_or_else(|| cell(q));
        rows[y][x] = c;
    };
    for &(name, _, goal) in agents {
        let trail = &tracks[&name].trail;
        for s in trail.windows(2) {
            let steps = (s[0].distance(s[1]) * 4.0).ceil().max(1.0) as usize;
            for i in 0..=steps {
                plot(
                    s[0].lerp(s[1], i as f32 / steps as f32),
                    name.to_ascii_lowercase(),
                );
            }
        }
        plot(goal, name);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Map after the edits (# wall, = blocked by an edit, : freed by an edit, a-g trails walked, A-G goals; G is {WIDE} cells in radius):"
    );
    let _ = writeln!(out, "+{}+", "-".repeat(w));
    for row in rows {
        let _ = writeln!(out, "|{}|", row.into_iter().collect::<String>());
    }
    let _ = write!(out, "+{}+", "-".repeat(w));
    out
}

/// The same picture as SVG, in grid coordinates (y down, as SVG).
fn svg_picture(
    nav: &NavGrid,
    agents: &[(char, Entity, Vec2)],
    tracks: &BTreeMap<char, Track>,
    blocked: &[URect],
    freed: &[URect],
    room: &[URect],
) -> String {
    const COLORS: [&str; 7] = [
        "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#e377c2",
    ];
    let g = nav.grid();
    let (w, h) = (g.width(), g.height());
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="-1 -1 {} {}" width="{}" height="{}">"#,
        w + 2,
        h + 2,
        (w + 2) * 14,
        (h + 2) * 14
    );
    let _ = writeln!(
        s,
        r##"<rect x="0" y="0" width="{w}" height="{h}" fill="#fafafa"/>"##
    );
    for y in 0..h {
        for x in 0..w {
            let fill = if in_rects(blocked, x, y)
                || in_rects(room, x, y) && !g.is_free_xy(i64::from(x), i64::from(y))
            {
                Some("#8c2d04")
            } else if in_rects(freed, x, y) || in_rects(room, x, y) {
                Some("#c7e9c0")
            } else if g.is_free_xy(i64::from(x), i64::from(y)) {
                None
            } else {
                Some("#555")
            };
            if let Some(fill) = fill {
                let _ = writeln!(
                    s,
                    r#"<rect x="{x}" y="{y}" width="1" height="1" fill="{fill}"/>"#
                );
            }
        }
    }
    let points = |ps: &[Vec2]| -> String {
        ps.iter()
            .map(|&p| {
                let q = nav.to_grid(p);
                format!("{:.3},{:.3}", q.x, q.y)
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (i, &(name, _, goal)) in agents.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let track = &tracks[&name];
        if name == 'G' {
            // The ground the wide agent covered: its trail swept by its disc.
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="{}" stroke-linecap="round" stroke-linejoin="round" opacity="0.25"/>"#,
                points(&track.trail),
                2.0 * WIDE
            );
        }
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="0.15" stroke-dasharray="0.4 0.3" opacity="0.6"/>"#,
            points(&track.first_path)
        );
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="0.25"/>"#,
            points(&track.trail)
        );
        let q = nav.to_grid(goal);
        let _ = writeln!(
            s,
            r#"<circle cx="{:.3}" cy="{:.3}" r="0.5" fill="none" stroke="{color}" stroke-width="0.2"/>"#,
            q.x, q.y
        );
        if let Some(start) = track.trail.first() {
            let q = nav.to_grid(*start);
            let _ = writeln!(
                s,
                r#"<text x="{:.3}" y="{:.3}" font-size="1.6" font-family="monospace" fill="{color}">{name}</text>"#,
                q.x - 0.5,
                q.y - 0.6
            );
        }
    }
    let _ = writeln!(
        s,
        r#"<text x="0" y="{:.1}" font-size="0.9" font-family="sans-serif">dashed: first path; solid: walked; circles: goals; brown: blocked by edits; green: freed; pink band: the ground wide agent G covered</text>"#,
        f64::from(h) + 0.8
    );
    s.push_str("</svg>\n");
    s
}
