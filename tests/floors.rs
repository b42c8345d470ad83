//! Floors and links in the plugin: agents plan across areas, walk and are
//! carried across links, and replan when edits or links change under them.

#![cfg(feature = "plugin")]

use bevy_anyangle::plugin::*;
use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_math::{DVec2, UVec2, Vec2};

const STEP: f32 = 1.0 / 60.0;

/// An app with the plugin (`threads` search threads) and a fixed clock.
fn app(threads: usize) -> App {
    let mut app = App::new();
    app.add_plugins(AnyAnglePlugin {
        search_threads: Some(threads),
        ..AnyAnglePlugin::default()
    });
    app.insert_resource(SteeringClock::fixed(STEP));
    app.finish();
    app.cleanup();
    app
}

/// An area from a picture, its bottom-left corner at `(x, 0)`, cells of 1.
fn area(picture: &str, x: f32) -> NavArea {
    let transform = GridTransform::new(Vec2::new(x, 0.0), 1.0).unwrap();
    NavArea::new(NavGrid::from_ascii(picture, transform).unwrap())
}

/// Runs frames until `done` holds (at most `frames`), pausing a little so
/// that search threads answer; whether it came to hold.
fn run_until(app: &mut App, frames: usize, mut done: impl FnMut(&World) -> bool) -> bool {
    for _ in 0..frames {
        app.update();
        if done(app.world()) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    false
}

fn status(app: &App, e: Entity) -> PathStatus {
    app.world().get::<PathStatus>(e).unwrap().clone()
}

fn place(app: &App, e: Entity) -> Vec2 {
    app.world().get::<NavPosition>(e).unwrap().0
}

/// Whether agent `e` stands strictly inside a blocked cell of its area (or
/// off it), unless it walks a link.
fn walled(world: &World, e: Entity) -> bool {
    let path = world.get::<NavPath>(e).unwrap();
    let on_link = path.crossings.iter().any(|c| path.next == c.at + 1);
    let area = world.get::<OnArea>(e).unwrap().0;
    !on_link && in_wall(world, area, world.get::<NavPosition>(e).unwrap().0)
}

/// Whether world point `p` lies strictly inside a blocked cell of `area`
/// (or off it).
fn in_wall(world: &World, area: Entity, p: Vec2) -> bool {
    let nav = &world.get::<NavArea>(area).unwrap().grid;
    let g: DVec2 = nav.to_grid(p);
    let (w, h) = (
        f64::from(nav.grid().width()),
        f64::from(nav.grid().height()),
    );
    if !(g.x >= 0.0 && g.y >= 0.0 && g.x <= w && g.y <= h) {
        return true;
    }
    let (x, y) = (g.x.floor(), g.y.floor());
    let inside = g.x > x && g.y > y; // not on a cell edge
    inside && x < w && y < h && !nav.grid().is_free(UVec2::new(x as u32, y as u32))
}

/// Two 8 x 3 floors side by side (x 0..8 and 20..28), each with a wall
/// across the middle row but for one gap, joined by `link`.
fn two_floors(app: &mut App) -> (Entity, Entity) {
    let ground = app
        .world_mut()
        .spawn(area("........\n.######.\n........", 0.0))
        .id();
    let upper = app
        .world_mut()
        .spawn(area("........\n.######.\n........", 20.0))
        .id();
    (ground, upper)
}

#[test]
fn a_follower_walks_across_a_walked_link_onto_the_other_area() {
    let mut app = app(1);
    let (ground, upper) = two_floors(&mut app);
    let link = app
        .world_mut()
        .spawn(
            NavLink::new(
                LinkEnd::new(ground, Vec2::new(7.5, 2.5)),
                LinkEnd::new(upper, Vec2::new(20.5, 2.5)),
            )
            .with_cost(1.5),
        )
        .id();
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(0.5, 0.5)),
            OnArea(ground),
            PathRequest::to(Vec2::new(27.5, 0.5)),
            GoalArea(upper),
            PathFollower {
                speed: 6.0,
                arrive_radius: 0.01,
            },
        ))
        .id();
    assert!(run_until(&mut app, 2000, |w| w
        .get::<PathStatus>(agent)
        .is_some_and(|s| *s == PathStatus::Ready)));
    let path = app.world().get::<NavPath>(agent).unwrap().clone();
    assert_eq!(path.start_area, Some(ground));
    assert_eq!(path.crossings.len(), 1);
    let c = path.crossings[0];
    assert_eq!((c.link, c.from_area, c.to_area), (link, ground, upper));
    assert_eq!(path.waypoints[c.at], Vec2::new(7.5, 2.5));
    assert_eq!(path.waypoints[c.at + 1], Vec2::new(20.5, 2.5));
    // Around the wall on each floor: 0.5,0.5 -> 0.5,1 corner ... the exact
    // length is the sum of the legs' and the link's cost.
    let legs: f32 = path
        .waypoints
        .windows(2)
        .enumerate()
        .filter(|&(k, _)| k != c.at)
        .map(|(_, w)| w[0].distance(w[1]))
        .sum();
    assert!(
        (path.length - (legs + 1.5)).abs() < 1e-3,
        "{} vs {}",
        path.length,
        legs + 1.5
    );
    let mut on_upper = false;
    assert!(run_until(&mut app, 2000, |w| {
        on_upper |= w.get::<OnArea>(agent).unwrap().0 == upper;
        assert!(!walled(w, agent));
        w.get::<NavPath>(agent).unwrap().is_finished()
    }));
    assert!(on_upper);
    assert_eq!(app.world().get::<OnArea>(agent).unwrap().0, upper);
    assert!(place(&app, agent).distance(Vec2::new(27.5, 0.5)) < 0.02);
}

#[test]
fn a_handed_link_waits_for_the_game_and_the_agent_goes_on_from_its_far_end() {
    let mut app = app(1);
    let (ground, upper) = two_floors(&mut app);
    let ladder = app
        .world_mut()
        .spawn(
            NavLink::new(
                LinkEnd::new(ground, Vec2::new(0.5, 2.5)),
                LinkEnd::new(upper, Vec2::new(27.5, 2.5)),
            )
            .handed()
            .one_way(),
        )
        .id();
    app.init_resource::<Reached>();
    app.add_observer(|r: On<LinkReached>, mut seen: ResMut<Reached>| {
        seen.0.push((r.entity, r.crossing.link, r.far_end));
    });
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(3.5, 0.5)),
            OnArea(ground),
            PathRequest::to(Vec2::new(27.5, 0.5)),
            GoalArea(upper),
            PathFollower::default(),
        ))
        .id();
    assert!(run_until(&mut app, 3000, |w| w
        .get::<CrossingLink>(agent)
        .is_some()));
    let reached = &app.world().resource::<Reached>().0;
    assert_eq!(reached.as_slice(), [(agent, ladder, Vec2::new(27.5, 2.5))]);
    assert_eq!(place(&app, agent), Vec2::new(0.5, 2.5), "at the near end");
    // It waits as long as the game does.
    for _ in 0..30 {
        app.update();
    }
    assert_eq!(place(&app, agent), Vec2::new(0.5, 2.5));
    assert_eq!(app.world().get::<OnArea>(agent).unwrap().0, ground);
    app.world_mut().trigger(CrossLink { entity: agent });
    app.update();
    assert!(app.world().get::<CrossingLink>(agent).is_none());
    assert_eq!(app.world().get::<OnArea>(agent).unwrap().0, upper);
    assert!(run_until(&mut app, 2000, |w| w
        .get::<NavPath>(agent)
        .unwrap()
        .is_finished()));
    assert!(place(&app, agent).distance(Vec2::new(27.5, 0.5)) < 0.06);
    assert_eq!(
        status(&app, agent),
        PathStatus::Ready,
        "no replan on the way"
    );
}

#[test]
fn disabling_a_link_replans_exactly_the_agents_that_cross_it() {
    let mut app = app(1);
    let (ground, upper) = two_floors(&mut app);
    let west = app
        .world_mut()
        .spawn(NavLink::new(
            LinkEnd::new(ground, Vec2::new(0.5, 2.5)),
            LinkEnd::new(upper, Vec2::new(20.5, 2.5)),
        ))
        .id();
    let east = app
        .world_mut()
        .spawn(NavLink::new(
            LinkEnd::new(ground, Vec2::new(7.5, 0.5)),
            LinkEnd::new(upper, Vec2::new(27.5, 0.5)),
        ))
        .id();
    let spawn = |app: &mut App, x: f32, y: f32, gx: f32, gy: f32| {
        app.world_mut()
            .spawn((
                NavPosition(Vec2::new(x, y)),
                OnArea(ground),
                PathRequest::to(Vec2::new(gx, gy)),
                GoalArea(upper),
            ))
            .id()
    };
    // One crosses the west link, one the east one (no followers: they stay).
    let a = spawn(&mut app, 1.5, 2.5, 21.5, 2.5);
    let b = spawn(&mut app, 6.5, 0.5, 26.5, 0.5);
    assert!(run_until(&mut app, 2000, |w| {
        [a, b]
            .iter()
            .all(|&e| *w.get::<PathStatus>(e).unwrap() == PathStatus::Ready)
    }));
    let crosses = |app: &App, e: Entity| app.world().get::<NavPath>(e).unwrap().crossings[0].link;
    assert_eq!((crosses(&app, a), crosses(&app, b)), (west, east));
    let b_path = app.world().get::<NavPath>(b).unwrap().clone();
    app.world_mut().get_mut::<NavLink>(west).unwrap().enabled = false;
    let mut replanned = false;
    assert!(run_until(&mut app, 2000, |w| {
        replanned |= w.get::<Replanning>(a).is_some()
            || *w.get::<PathStatus>(a).unwrap() != PathStatus::Ready;
        w.get::<NavPath>(a)
            .unwrap()
            .crossings
            .first()
            .is_some_and(|c| c.link == east)
    }));
    assert_eq!(
        app.world().get::<NavPath>(b).unwrap(),
        &b_path,
        "the other agent keeps its path"
    );
    // Without any link: unreachable, and enabling one brings it back.
    app.world_mut().get_mut::<NavLink>(east).unwrap().enabled = false;
    assert!(run_until(&mut app, 2000, |w| [a, b].iter().all(|&e| w
        .get::<NavPath>(e)
        .unwrap()
        .crossings
        .is_empty()
        && *w.get::<PathStatus>(e).unwrap() != PathStatus::Ready)));
    app.world_mut().get_mut::<NavLink>(west).unwrap().enabled = true;
    assert!(run_until(&mut app, 2000, |w| [a, b].iter().all(|&e| {
        let path = w.get::<NavPath>(e).unwrap();
        *w.get::<PathStatus>(e).unwrap() == PathStatus::Ready
            && path.crossings.first().is_some_and(|c| c.link == west)
    })));
}

#[test]
fn opening_a_link_replans_only_the_agents_it_may_serve() {
    let mut app = app(1);
    let (ground, upper) = two_floors(&mut app);
    app.world_mut().spawn(NavLink::new(
        LinkEnd::new(ground, Vec2::new(0.5, 2.5)),
        LinkEnd::new(upper, Vec2::new(20.5, 2.5)),
    ));
    let spawn = |app: &mut App, from: Vec2, goal: Vec2, on: Entity| {
        app.world_mut()
            .spawn((
                NavPosition(from),
                OnArea(ground),
                PathRequest::to(goal),
                GoalArea(on),
            ))
            .id()
    };
    // One walks two cells on the ground floor; one goes up by the west
    // link and along the upper floor's far row (no followers: they stay).
    let stays = spawn(&mut app, Vec2::new(1.5, 0.5), Vec2::new(3.5, 0.5), ground);
    let climbs = spawn(&mut app, Vec2::new(1.5, 0.5), Vec2::new(26.5, 0.5), upper);
    let both = [stays, climbs];
    assert!(run_until(&mut app, 2000, |w| {
        both.iter()
            .all(|&e| *w.get::<PathStatus>(e).unwrap() == PathStatus::Ready)
    }));
    let paths = |app: &App| both.map(|e| app.world().get::<NavPath>(e).unwrap().clone());
    let replanned = |app: &mut App, link: NavLink| {
        let before = paths(app);
        app.world_mut().spawn(link);
        let mut seen = [false; 2];
        for _ in 0..60 {
            app.update();
            for (k, &e) in both.iter().enumerate() {
                let w = app.world();
                seen[k] |= w.get::<Replanning>(e).is_some()
                    || *w.get::<PathStatus>(e).unwrap() != PathStatus::Ready
                    || *w.get::<NavPath>(e).unwrap() != before[k];
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        seen
    };
    // A costly link far away serves neither: no route through it can be
    // as short as theirs.
    let costly = NavLink::new(
        LinkEnd::new(ground, Vec2::new(7.5, 2.5)),
        LinkEnd::new(upper, Vec2::new(27.5, 2.5)),
    )
    .with_cost(50.0);
    assert_eq!(replanned(&mut app, costly), [false, false]);
    // A free one on the climber's row serves it, not the agent that stays:
    // no route through it, either way, is as short as its two cells.
    let near = NavLink::new(
        LinkEnd::new(ground, Vec2::new(6.5, 0.5)),
        LinkEnd::new(upper, Vec2::new(26.0, 0.5)),
    );
    assert_eq!(replanned(&mut app, near), [false, true]);
    assert!(run_until(&mut app, 2000, |w| {
        *w.get::<PathStatus>(climbs).unwrap() == PathStatus::Ready
            && w.get::<Replanning>(climbs).is_none()
    }));
    let climbs_path = app.world().get::<NavPath>(climbs).unwrap();
    let link_x = climbs_path.waypoints[climbs_path.crossings[0].at].x;
    assert!(
        (link_x - 6.5).abs() < 1e-4,
        "the climber takes the new link: {climbs_path:?}"
    );
}

#[test]
fn an_agent_waiting_at_a_handed_link_that_closes_does_not_wait_on_it() {
    let mut app = app(1);
    let (ground, upper) = two_floors(&mut app);
    let lift = app
        .world_mut()
        .spawn(
            NavLink::new(
                LinkEnd::new(ground, Vec2::new(0.5, 2.5)),
                LinkEnd::new(upper, Vec2::new(20.5, 2.5)),
            )
            .handed(),
        )
        .id();
    let stairs = app
        .world_mut()
        .spawn(
            NavLink::new(
                LinkEnd::new(ground, Vec2::new(7.5, 2.5)),
                LinkEnd::new(upper, Vec2::new(27.5, 2.5)),
            )
            .with_cost(20.0),
        )
        .id();
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(1.5, 2.5)),
            OnArea(ground),
            PathRequest::to(Vec2::new(21.5, 2.5)),
            GoalArea(upper),
            PathFollower::default(),
        ))
        .id();
    assert!(run_until(&mut app, 3000, |w| w
        .get::<CrossingLink>(agent)
        .is_some()));
    app.world_mut().get_mut::<NavLink>(lift).unwrap().enabled = false;
    app.update();
    assert!(app.world().get::<CrossingLink>(agent).is_none());
    assert!(run_until(&mut app, 3000, |w| {
        let path = w.get::<NavPath>(agent).unwrap();
        path.crossings.first().is_some_and(|c| c.link == stairs)
    }));
    assert!(run_until(&mut app, 5000, |w| w
        .get::<OnArea>(agent)
        .unwrap()
        .0
        == upper));
}

#[test]
fn an_edit_across_the_remaining_leg_cuts_the_path_and_replans_around_it() {
    let mut app = app(1);
    let open = "..........\n..........\n..........\n..........";
    let ground = app.world_mut().spawn(area(open, 0.0)).id();
    let upper = app.world_mut().spawn(area(open, 20.0)).id();
    app.world_mut().spawn(NavLink::new(
        LinkEnd::new(ground, Vec2::new(9.5, 2.0)),
        LinkEnd::new(upper, Vec2::new(20.5, 2.0)),
    ));
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(0.5, 2.0)),
            OnArea(ground),
            PathRequest::to(Vec2::new(29.5, 2.0)),
            GoalArea(upper),
            PathFollower {
                speed: 2.0,
                arrive_radius: 0.01,
            },
        ))
        .id();
    let other = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(0.5, 3.5)),
            OnArea(ground),
            PathRequest::to(Vec2::new(5.5, 3.5)),
        ))
        .id();
    assert!(run_until(&mut app, 2000, |w| {
        [agent, other]
            .iter()
            .all(|&e| *w.get::<PathStatus>(e).unwrap() == PathStatus::Ready)
    }));
    let other_path = app.world().get::<NavPath>(other).unwrap().clone();
    // A wall across the upper floor's straight line (world x 24..26, y
    // 0..3; grid columns 4..6, rows 1..4 of 4): the remaining leg goes
    // around it, over the top.
    {
        let mut area = app.world_mut().get_mut::<NavArea>(upper).unwrap();
        area.grid
            .set_rect_free(bevy_math::URect::new(4, 1, 6, 4), false)
            .unwrap();
    }
    // From the very frame of the edit, the path ahead never crosses the
    // wall: cut before it, or already planned around it.
    let clear = |w: &World| {
        let path = w.get::<NavPath>(agent).unwrap();
        let nav = &w.get::<NavArea>(upper).unwrap().grid;
        let c = path.crossings.first().map_or(0, |c| c.at + 1);
        path.waypoints[c.max(path.next.saturating_sub(1))..]
            .windows(2)
            .filter(|s| s[0].x >= 20.0)
            .all(|s| nav.line_of_sight(s[0], s[1]))
    };
    app.update();
    assert!(clear(app.world()));
    assert!(run_until(&mut app, 2000, |w| {
        assert!(clear(w));
        let path = w.get::<NavPath>(agent).unwrap();
        !path.cut && *w.get::<PathStatus>(agent).unwrap() == PathStatus::Ready
    }));
    let path = app.world().get::<NavPath>(agent).unwrap().clone();
    assert!(
        path.waypoints
            .iter()
            .any(|p| (p.x - 24.0).abs() < 1e-4 && (p.y - 3.0).abs() < 1e-4)
    );
    assert_eq!(
        app.world().get::<NavPath>(other).unwrap(),
        &other_path,
        "not on its way"
    );
    assert!(run_until(&mut app, 3000, |w| {
        assert!(!walled(w, agent));
        w.get::<NavPath>(agent).unwrap().is_finished()
    }));
    assert!(place(&app, agent).distance(Vec2::new(29.5, 2.0)) < 0.02);
}

#[test]
fn a_wide_agent_takes_only_links_wide_enough_and_a_profile_only_its_own() {
    let mut app = app(1);
    let (ground, upper) = two_floors(&mut app);
    let narrow = app
        .world_mut()
        .spawn(
            NavLink::new(
                LinkEnd::new(ground, Vec2::new(0.5, 2.5)),
                LinkEnd::new(upper, Vec2::new(20.5, 2.5)),
            )
            .with_max_radius(0.2),
        )
        .id();
    let wide = app
        .world_mut()
        .spawn(
            NavLink::new(
                LinkEnd::new(ground, Vec2::new(7.5, 2.5)),
                LinkEnd::new(upper, Vec2::new(27.5, 2.5)),
            )
            .with_cost(30.0),
        )
        .id();
    let spawn = |app: &mut App, radius: f32| {
        app.world_mut()
            .spawn((
                NavPosition(Vec2::new(1.0, 2.5)),
                OnArea(ground),
                PathRequest::to(Vec2::new(21.0, 2.5)).with_radius(radius),
                GoalArea(upper),
            ))
            .id()
    };
    let point = spawn(&mut app, 0.0);
    let disc = spawn(&mut app, 0.3);
    assert!(run_until(&mut app, 3000, |w| {
        [point, disc]
            .iter()
            .all(|&e| *w.get::<PathStatus>(e).unwrap() == PathStatus::Ready)
    }));
    let link = |e| app.world().get::<NavPath>(e).unwrap().crossings[0].link;
    assert_eq!(link(point), narrow);
    assert_eq!(link(disc), wide);
}

#[test]
fn routes_run_on_the_main_thread_in_slices_too() {
    let mut app = app(0);
    let (ground, upper) = two_floors(&mut app);
    app.world_mut().spawn(NavLink::new(
        LinkEnd::new(ground, Vec2::new(7.5, 2.5)),
        LinkEnd::new(upper, Vec2::new(20.5, 2.5)),
    ));
    let agents: Vec<Entity> = (0..50)
        .map(|i| {
            app.world_mut()
                .spawn((
                    NavPosition(Vec2::new(0.5 + (i % 8) as f32, 0.5)),
                    OnArea(ground),
                    PathRequest::to(Vec2::new(27.5, 0.5)),
                    GoalArea(upper),
                ))
                .id()
        })
        .collect();
    assert!(run_until(&mut app, 500, |w| {
        agents
            .iter()
            .all(|&e| *w.get::<PathStatus>(e).unwrap() == PathStatus::Ready)
    }));
}

/// The handed links agents reached: agent, link, far end.
#[derive(Resource, Default)]
struct Reached(Vec<(Entity, Entity, Vec2)>);

/// A tiny deterministic generator.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Played as a game plays: thousands of agents over four floors, links
/// (walked and handed) toggled every second, cells edited every frame,
/// searches held back now and then (late answers), agents despawned and
/// spawned. Every frame: every follower stands in free space on its own
/// area (or walks a link), no agent waits at a disabled link, and every
/// path ahead holds on its areas as they are.
#[test]
fn a_game_across_floors_keeps_every_agent_in_free_space() {
    const SIDE: u32 = 24;
    const FLOORS: usize = 4;
    let mut app = app(2);
    let mut rng = Lcg(7);
    // Floors with pillars every 4 cells.
    let picture: String = (0..SIDE)
        .map(|y| {
            (0..SIDE)
                .map(|x| if x % 4 == 2 && y % 4 == 2 { '#' } else { '.' })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n");
    let floors: Vec<Entity> = (0..FLOORS)
        .map(|i| {
            app.world_mut()
                .spawn(area(&picture, i as f32 * 40.0).with_height(i as f32 * 3.0))
                .id()
        })
        .collect();
    // The centre of cell (x, y) (grid coordinates, y down) of a floor.
    let at = |floor: usize, x: u32, y: u32| {
        Vec2::new(
            floor as f32 * 40.0 + x as f32 + 0.5,
            (SIDE - 1 - y) as f32 + 0.5,
        )
    };
    let mut links = Vec::new();
    for f in 0..FLOORS - 1 {
        for k in 0..4u32 {
            let (x, y) = (1 + 6 * k, if k % 2 == 0 { 0 } else { SIDE - 1 });
            let mut link = NavLink::new(
                LinkEnd::new(floors[f], at(f, x, y)),
                LinkEnd::new(floors[f + 1], at(f + 1, x, y)),
            )
            .with_cost(k as f32);
            if k == 1 {
                link = link.handed();
            }
            if k == 3 {
                link = link.one_way();
            }
            links.push(app.world_mut().spawn(link).id());
        }
    }
    let spawn = |app: &mut App, rng: &mut Lcg| {
        let (f, g) = (
            rng.below(FLOORS as u64) as usize,
            rng.below(FLOORS as u64) as usize,
        );
        let cell = |rng: &mut Lcg| loop {
            let (x, y) = (
                rng.below(u64::from(SIDE)) as u32,
                rng.below(u64::from(SIDE)) as u32,
            );
            if !(x % 4 == 2 && y % 4 == 2) {
                return (x, y);
            }
        };
        // Start on a free cell (edits may have blocked some).
        let (sx, sy) = loop {
            let (x, y) = cell(rng);
            let grid = &app.world().get::<NavArea>(floors[f]).unwrap().grid;
            if grid.grid().is_free(UVec2::new(x, y)) {
                break (x, y);
            }
        };
        let (gx, gy) = cell(rng);
        app.world_mut()
            .spawn((
                NavPosition(at(f, sx, sy)),
                OnArea(floors[f]),
                PathRequest::to(at(g, gx, gy)),
                GoalArea(floors[g]),
                PathFollower {
                    speed: 3.0 + rng.below(4) as f32,
                    arrive_radius: 0.05,
                },
            ))
            .id()
    };
    let mut agents: Vec<Entity> = (0..2000).map(|_| spawn(&mut app, &mut rng)).collect();
    let mut waiting: Vec<(Entity, usize)> = Vec::new();
    let mut blocked_cells: Vec<(usize, UVec2)> = Vec::new();
    let mut crossed = 0;
    let mut history = std::collections::HashMap::<Entity, Vec<String>>::default();
    for frame in 0..360 {
        // Links toggle every second.
        if frame % 60 == 30 {
            for (i, &link) in links.iter().enumerate() {
                if rng.below(3) == 0 || i % 4 == (frame / 60) % 4 {
                    let mut l = app.world_mut().get_mut::<NavLink>(link).unwrap();
                    l.enabled = !l.enabled;
                }
            }
        }
        // Edits every frame, away from every agent.
        let f = rng.below(FLOORS as u64) as usize;
        if blocked_cells.len() > 20 || (rng.below(2) == 0 && !blocked_cells.is_empty()) {
            let (f, cell) =
                blocked_cells.swap_remove(rng.below(blocked_cells.len() as u64) as usize);
            let mut a = app.world_mut().get_mut::<NavArea>(floors[f]).unwrap();
            a.grid.set_cell_free(cell, true).unwrap();
        } else {
            let cell = UVec2::new(
                rng.below(u64::from(SIDE)) as u32,
                rng.below(u64::from(SIDE)) as u32,
            );
            let centre = at(f, cell.x, cell.y);
            let near = {
                let w = app.world();
                agents.iter().any(|&e| {
                    w.get::<OnArea>(e).is_some_and(|o| o.0 == floors[f])
                        && w.get::<NavPosition>(e).unwrap().0.distance(centre) < 1.5
                }) || links.iter().any(|&l| {
                    let l = w.get::<NavLink>(l).unwrap();
                    [l.from, l.to]
                        .iter()
                        .any(|end| end.area == floors[f] && end.point.distance(centre) < 1.5)
                })
            };
            if !near {
                let mut a = app.world_mut().get_mut::<NavArea>(floors[f]).unwrap();
                if a.grid.set_cell_free(cell, false).unwrap() {
                    blocked_cells.push((f, cell));
                }
            }
        }
        // Late answers now and then.
        app.world_mut().resource_mut::<PathfindingSettings>().paused = frame % 50 >= 45;
        // Despawns and new agents.
        for _ in 0..5 {
            let k = rng.below(agents.len() as u64) as usize;
            let gone = agents.swap_remove(k);
            app.world_mut().despawn(gone);
            agents.push(spawn(&mut app, &mut rng));
        }
        // The game carries agents across handed links after a while.
        let now: Vec<Entity> = {
            let w = app.world_mut();
            let mut q = w.query_filtered::<Entity, With<CrossingLink>>();
            q.iter(w).collect()
        };
        for e in now {
            if !waiting.iter().any(|&(w, _)| w == e) {
                waiting.push((e, frame));
            }
        }
        waiting.retain(|&(e, since)| {
            if app.world().get_entity(e).is_err() || app.world().get::<CrossingLink>(e).is_none() {
                return false;
            }
            if frame >= since + 10 {
                app.world_mut().trigger(CrossLink { entity: e });
                crossed += 1;
                return false;
            }
            true
        });
        app.update();
        std::thread::sleep(std::time::Duration::from_micros(300));
        let w = app.world();
        for &e in &agents {
            let line = format!(
                "frame {frame}: at {:?} on {:?} waiting {:?} status {:?} next {} waypoints {:?} crossings {:?}",
                w.get::<NavPosition>(e).unwrap().0,
                w.get::<OnArea>(e).unwrap().0,
                w.get::<CrossingLink>(e).map(|c| c.0.link),
                w.get::<PathStatus>(e).unwrap(),
                w.get::<NavPath>(e).unwrap().next,
                w.get::<NavPath>(e).unwrap().waypoints,
                w.get::<NavPath>(e)
                    .unwrap()
                    .crossings
                    .iter()
                    .map(|c| (c.at, c.link, c.crossing))
                    .collect::<Vec<_>>(),
            );
            let h = history.entry(e).or_default();
            h.push(line);
            if h.len() > 12 {
                h.remove(0);
            }
            if walled(w, e) {
                for l in &history[&e] {
                    eprintln!("{l}");
                }
            }
            assert!(
                !walled(w, e),
                "frame {frame}: {e} in a wall at {:?} on {:?}: {:?} {:?}",
                w.get::<NavPosition>(e),
                w.get::<OnArea>(e),
                w.get::<PathStatus>(e),
                w.get::<NavPath>(e)
            );
            if let Some(c) = w.get::<CrossingLink>(e) {
                assert!(
                    w.get::<NavLink>(c.0.link).unwrap().enabled,
                    "frame {frame}: {e} waits at a disabled link"
                );
            }
            let path = w.get::<NavPath>(e).unwrap();
            let mut area = path.start_area;
            for (k, s) in path.waypoints.windows(2).enumerate() {
                if let Some(c) = path.crossings.iter().find(|c| c.at == k) {
                    area = Some(c.to_area);
                    continue;
                }
                if k + 1 < path.next {
                    continue;
                }
                let nav = &w.get::<NavArea>(area.unwrap()).unwrap().grid;
                let from = if k + 1 == path.next {
                    w.get::<NavPosition>(e).unwrap().0
                } else {
                    s[0]
                };
                assert!(
                    nav.line_of_sight(from, s[1]) || nav.line_of_sight(s[0], s[1]),
                    "frame {frame}: {e}'s path ahead crosses a wall: {path:?}"
                );
            }
        }
    }
    // The game went on: agents crossed floors, and most reached their goals.
    assert!(crossed > 0, "handed links were used");
    let w = app.world();
    let ready = agents
        .iter()
        .filter(|&&e| w.get::<PathStatus>(e).unwrap().has_path())
        .count();
    assert!(
        ready > agents.len() * 9 / 10,
        "{ready} of {} have paths",
        agents.len()
    );
}

#[test]
fn on_the_ground_plane_a_walked_link_lifts_the_agent_from_one_floor_to_the_next() {
    use bevy_transform::components::Transform;
    let mut app = app(1);
    let floor = |x: f32, height: f32| {
        let placement = GridTransform::new(Vec2::new(x, 0.0), 1.0)
            .unwrap()
            .with_plane(WorldPlane::Xz);
        NavArea::new(NavGrid::from_ascii("......\n......", placement).unwrap()).with_height(height)
    };
    let ground = app.world_mut().spawn(floor(0.0, 0.0)).id();
    let upper = app.world_mut().spawn(floor(10.0, 3.0)).id();
    // Stairs from (5.5, z 1) below to (10.5, z 1) above: 5 units across.
    app.world_mut().spawn(NavLink::new(
        LinkEnd::new(ground, Vec2::new(5.5, 1.0)),
        LinkEnd::new(upper, Vec2::new(10.5, 1.0)),
    ));
    let agent = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.5, 0.0, 1.0),
            OnArea(ground),
            PathRequest::to(Vec2::new(15.5, 1.0)),
            GoalArea(upper),
            PathFollower {
                speed: 3.0,
                arrive_radius: 0.01,
            },
        ))
        .id();
    let mut heights = Vec::new();
    assert!(run_until(&mut app, 3000, |w| {
        let t = w.get::<Transform>(agent).unwrap().translation;
        heights.push((t.x, t.y));
        let path = w.get::<NavPath>(agent).unwrap();
        !path.is_empty() && path.is_finished()
    }));
    let t = app.world().get::<Transform>(agent).unwrap().translation;
    assert!((t.x - 15.5).abs() < 0.02 && (t.z - 1.0).abs() < 1e-4, "{t}");
    assert!((t.y - 3.0).abs() < 1e-5, "on the upper floor's height: {t}");
    // On the ground floor at 0, on the stairs between, rising with x.
    for w in heights.windows(2) {
        assert!(w[1].1 >= w[0].1 - 1e-6, "never down: {w:?}");
    }
    for &(x, y) in &heights {
        if x <= 5.5 {
            assert!(y.abs() < 1e-6, "{x} {y}");
        } else if x < 10.5 {
            let expected = 3.0 * (x - 5.5) / 5.0;
            assert!((y - expected).abs() < 1e-3, "{x}: {y} vs {expected}");
        }
    }
    assert!(
        heights.iter().any(|&(x, _)| x > 6.0 && x < 10.0),
        "seen on the stairs"
    );
}

#[test]
fn an_agent_follows_an_entity_onto_another_area() {
    let mut app = app(1);
    let (ground, upper) = two_floors(&mut app);
    app.world_mut().spawn(NavLink::new(
        LinkEnd::new(ground, Vec2::new(7.5, 2.5)),
        LinkEnd::new(upper, Vec2::new(20.5, 2.5)),
    ));
    let target = app
        .world_mut()
        .spawn((NavPosition(Vec2::new(27.5, 0.5)), OnArea(upper)))
        .id();
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(0.5, 0.5)),
            OnArea(ground),
            PathRequest::follow(target),
        ))
        .id();
    assert!(run_until(&mut app, 2000, |w| *w
        .get::<PathStatus>(agent)
        .unwrap()
        == PathStatus::Ready));
    let path = app.world().get::<NavPath>(agent).unwrap();
    assert_eq!(path.end(), Some(Vec2::new(27.5, 0.5)));
    assert_eq!(path.crossings.len(), 1);
    // A target that stands on no area cannot be reached.
    let lost = app.world_mut().spawn(NavPosition(Vec2::new(3.5, 0.5))).id();
    app.world_mut().get_mut::<PathRequest>(agent).unwrap().goal = PathGoal::Entity(lost);
    assert!(run_until(&mut app, 2000, |w| *w
        .get::<PathStatus>(agent)
        .unwrap()
        == PathStatus::Failed(PathFailure::TargetLost(lost))));
}

#[test]
fn an_agent_walled_in_by_an_edit_walks_out_and_on() {
    let mut app = app(1);
    let open = "........\n........\n........";
    let ground = app.world_mut().spawn(area(open, 0.0)).id();
    let upper = app.world_mut().spawn(area(open, 20.0)).id();
    app.world_mut().spawn(NavLink::new(
        LinkEnd::new(ground, Vec2::new(7.5, 1.5)),
        LinkEnd::new(upper, Vec2::new(20.5, 1.5)),
    ));
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(Vec2::new(1.5, 1.5)),
            OnArea(ground),
            PathRequest::to(Vec2::new(27.5, 1.5)),
            GoalArea(upper),
            PathFollower {
                speed: 0.5,
                arrive_radius: 0.01,
            },
        ))
        .id();
    assert!(run_until(&mut app, 2000, |w| *w
        .get::<PathStatus>(agent)
        .unwrap()
        == PathStatus::Ready));
    // The cell under it, and the one after it along its way, are blocked.
    {
        let mut area = app.world_mut().get_mut::<NavArea>(ground).unwrap();
        area.grid
            .set_rect_free(bevy_math::URect::new(1, 1, 3, 2), false)
            .unwrap();
    }
    assert!(walled(app.world(), agent));
    // Out of the wall within a second of its way out arriving (0.5 cell at
    // 0.5 cells a second; the search thread answers when it may), and never
    // back in.
    let (mut out, mut way_out, mut frame) = (None, None, 0);
    assert!(run_until(&mut app, 6000, |w| {
        frame += 1;
        let path = w.get::<NavPath>(agent).unwrap();
        if path.start_moved && way_out.is_none() {
            way_out = Some(frame);
        }
        if !walled(w, agent) && out.is_none() {
            out = Some(frame);
        }
        assert!(
            out.is_none() || !walled(w, agent),
            "back in the wall at {:?}: {path:?}",
            w.get::<NavPosition>(agent),
        );
        w.get::<OnArea>(agent).is_some_and(|o| o.0 == upper) && path.is_finished()
    }));
    let (Some(out), Some(way_out)) = (out, way_out) else {
        panic!("no way out ({way_out:?}) or never out ({out:?})");
    };
    assert!(
        out <= way_out + 62,
        "out {} frames after its way out came",
        out - way_out
    );
    assert!(place(&app, agent).distance(Vec2::new(27.5, 1.5)) < 0.02);
}

/// Runs `agents` (start floor, start, goal floor, goal) to completion on
/// three floors joined by stairs, with shared searches on or off; returns
/// each agent's path length and the shared searches run.
fn crowd_lengths(shared: bool, agents: &[(usize, Vec2, usize, Vec2)]) -> (Vec<f32>, u64) {
    let mut app = app(1);
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .shared_searches = shared;
    let picture = "..........\n.########.\n..........\n.########.\n..........";
    let floors: Vec<Entity> = (0..3)
        .map(|i| app.world_mut().spawn(area(picture, i as f32 * 20.0)).id())
        .collect();
    for f in 0..2 {
        for y in [0.5, 4.5] {
            app.world_mut().spawn(
                NavLink::new(
                    LinkEnd::new(floors[f], Vec2::new(9.5, y)),
                    LinkEnd::new(floors[f + 1], Vec2::new(20.5, y)),
                )
                .with_cost(1.0 + y),
            );
        }
    }
    let ids: Vec<Entity> = agents
        .iter()
        .map(|&(f, p, g, q)| {
            app.world_mut()
                .spawn((
                    NavPosition(p + Vec2::new(20.0 * f as f32, 0.0)),
                    OnArea(floors[f]),
                    PathRequest::to(q + Vec2::new(20.0 * g as f32, 0.0)),
                    GoalArea(floors[g]),
                ))
                .id()
        })
        .collect();
    assert!(run_until(&mut app, 3000, |w| ids
        .iter()
        .all(|&e| w.get::<PathStatus>(e).unwrap().has_path())));
    let w = app.world();
    let lengths = ids
        .iter()
        .map(|&e| w.get::<NavPath>(e).unwrap().length)
        .collect();
    (
        lengths,
        w.resource::<PathfindingDiagnostics>().shared_searches,
    )
}

#[test]
fn agents_heading_for_one_goal_across_floors_share_a_search_and_get_their_own_lengths() {
    let mut rng = Lcg(11);
    let goal = Vec2::new(8.5, 2.5);
    let agents: Vec<(usize, Vec2, usize, Vec2)> = (0..40)
        .map(|_| {
            let row = [0.5, 2.5, 4.5][rng.below(3) as usize];
            let p = Vec2::new(rng.below(10) as f32 + 0.5, row);
            (rng.below(3) as usize, p, 2, goal)
        })
        .collect();
    let (alone, none) = crowd_lengths(false, &agents);
    let (together, shared) = crowd_lengths(true, &agents);
    assert_eq!(none, 0);
    assert!(shared >= 1, "one search shared");
    for (a, b) in alone.iter().zip(&together) {
        assert!((a - b).abs() <= 1e-4 * a.max(1.0), "{a} vs {b}");
    }
}
