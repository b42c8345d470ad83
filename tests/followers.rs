//! Followers the game moves: knocked back, teleported or pushed by physics
//! to a free spot from which the next waypoint of their path is hidden. A
//! follower never walks a segment it cannot see (points stay in free space,
//! discs at least their radius from every wall), and it never waits forever
//! against a wall: it plans again from where it was put and reaches its
//! goal.

mod common;

use bevy_anyangle::grid::Grid;
use bevy_anyangle::plugin::{
    AnyAnglePlugin, GridTransform, LocalAvoidance, NavGrid, NavPath, NavPosition, PathFollower,
    PathRequest, PathStatus, PathfindingDiagnostics, PathfindingSettings, Replanning,
    SteeringClock,
};
use bevy_app::App;
use bevy_ecs::prelude::*;
use bevy_math::{DVec2, Vec2};
use common::generate::Rng;
use common::wall_distance;

/// A 24 x 8 room with a one-cell ledge along row 3 from x = 2 to x = 21:
/// the rows above and below it meet only at the two ends.
fn ledge_grid() -> Grid {
    let rows: Vec<String> = (0..8)
        .map(|y| {
            (0..24)
                .map(|x| {
                    if y == 3 && (2..22).contains(&x) {
                        '#'
                    } else {
                        '.'
                    }
                })
                .collect()
        })
        .collect();
    Grid::from_ascii(&rows.join("\n")).unwrap()
}

/// How an agent is set up.
#[derive(Clone, Copy, Debug)]
struct Kind {
    radius: f32,
    avoid: bool,
}

const POINT: Kind = Kind {
    radius: 0.0,
    avoid: false,
};
const POINT_AVOIDING: Kind = Kind {
    radius: 0.0,
    avoid: true,
};
const DISC: Kind = Kind {
    radius: 0.4,
    avoid: false,
};
const DISC_AVOIDING: Kind = Kind {
    radius: 0.4,
    avoid: true,
};

/// An app on [`ledge_grid`] (one world unit a cell) whose agents replan
/// only when pushed farther than 4 cells off their path, with one agent of
/// `kind` at `start` sent to `goal` (world points).
fn ledge_app(kind: Kind, start: Vec2, goal: Vec2) -> (App, Entity) {
    let nav = NavGrid::new(ledge_grid(), GridTransform::default());
    let mut app = App::new();
    app.add_plugins(AnyAnglePlugin::default())
        .insert_resource(nav)
        .insert_resource(SteeringClock::fixed(1.0 / 60.0));
    app.finish();
    app.cleanup();
    app.world_mut()
        .resource_mut::<PathfindingSettings>()
        .replan_distance = 4.0;
    let mut agent = app.world_mut().spawn((
        NavPosition(start),
        PathRequest::to(goal).with_radius(kind.radius),
        PathFollower {
            speed: 3.0,
            arrive_radius: 0.05,
        },
    ));
    if kind.avoid {
        agent.insert(LocalAvoidance);
    }
    let agent = agent.id();
    (app, agent)
}

/// Asserts that the agent stands where it may: in free space, and a disc
/// at least its radius from every wall.
fn assert_in_free_space(app: &App, agent: Entity, kind: Kind, frame: usize) {
    let nav = app.world().resource::<NavGrid>();
    let p = nav.to_grid(app.world().get::<NavPosition>(agent).unwrap().0);
    assert!(
        nav.grid().is_point_traversable(p),
        "frame {frame}: {kind:?} at {p} stands in a wall"
    );
    let gap = wall_distance(nav.grid(), p, 3);
    assert!(
        gap >= f64::from(kind.radius) - 1e-5,
        "frame {frame}: {kind:?} at {p} is {gap} from a wall"
    );
}

/// Runs the agent from `start` to `goal` until it is at least `x` along its
/// way, then moves it to `to` as a game would; then runs it until it has
/// finished its path at `goal`, checking every frame that it stands in free
/// space. Points are in grid coordinates (y down). Returns the frame it
/// finished in.
fn push_behind_the_ledge(kind: Kind, start: Vec2, goal: Vec2, x: f32, to: Vec2) -> usize {
    let world = |p: Vec2| Vec2::new(p.x, 8.0 - p.y);
    let (start, goal, to) = (world(start), world(goal), world(to));
    let (mut app, agent) = ledge_app(kind, start, goal);
    let mut pushed = false;
    for frame in 1..=3_000 {
        app.update();
        assert_in_free_space(&app, agent, kind, frame);
        let here = app.world().get::<NavPosition>(agent).unwrap().0;
        if !pushed && here.x >= x {
            app.world_mut().get_mut::<NavPosition>(agent).unwrap().0 = to;
            pushed = true;
            continue;
        }
        let path = app.world().get::<NavPath>(agent).unwrap();
        let status = app.world().get::<PathStatus>(agent).unwrap();
        // (A path cut to where the agent stands, while it is planned again,
        // is finished but does not end at the goal.)
        if pushed && *status == PathStatus::Ready && path.is_finished() && !path.cut {
            let end = app.world().get::<NavPosition>(agent).unwrap().0;
            let reach = 0.05 + kind.radius + 1e-4;
            assert!(
                end.distance(goal) <= reach,
                "{kind:?} finished at {end}, {} from its goal",
                end.distance(goal)
            );
            return frame;
        }
    }
    let here = app.world().get::<NavPosition>(agent).unwrap().0;
    let status = app.world().get::<PathStatus>(agent).unwrap().clone();
    panic!("{kind:?} never reached {goal}: at {here}, {status:?}, pushed {pushed}");
}

#[test]
fn a_follower_moved_behind_a_ledge_never_walks_through_it() {
    // On its path along the top of the ledge, the agent is put 2 cells
    // below its path, under the ledge: its next waypoint (the goal) lies
    // beyond the ledge, within the replan distance. It must not walk
    // straight there.
    let (start, goal) = (Vec2::new(4.5, 2.5), Vec2::new(20.5, 2.5));
    for kind in [POINT, POINT_AVOIDING, DISC] {
        push_behind_the_ledge(kind, start, goal, 6.0, Vec2::new(12.5, 4.5));
    }
}

#[test]
fn an_avoiding_disc_moved_behind_a_ledge_does_not_press_against_it_forever() {
    // Its goal lies straight across the ledge from where it is put: the
    // wall leaves it no slide. It plans again and walks round the ledge.
    let (start, goal) = (Vec2::new(4.5, 1.5), Vec2::new(12.5, 1.5));
    push_behind_the_ledge(DISC_AVOIDING, start, goal, 6.0, Vec2::new(12.5, 4.5));
}

/// A 48 x 48 room of 8 x 8 blocks, each holding one obstacle well inside
/// it (a ledge 5 cells long one way or the other, or a 2 x 2 pillar), so
/// that obstacles stand at least 2 cells apart and every place a disc of
/// radius 0.4 fits is connected to every other.
fn ledges_and_pillars(rng: &mut Rng) -> Grid {
    let mut cells = vec![vec!['.'; 48]; 48];
    for by in 0..6 {
        for bx in 0..6 {
            let (ox, oy) = (bx * 8, by * 8);
            let shape: &[(usize, usize)] = match rng.below(3) {
                0 => &[(1, 3), (2, 3), (3, 3), (4, 3), (5, 3)],
                1 => &[(3, 1), (3, 2), (3, 3), (3, 4), (3, 5)],
                _ => &[(3, 3), (4, 3), (3, 4), (4, 4)],
            };
            let shift = rng.below(2) as usize;
            for &(x, y) in shape {
                cells[oy + y + shift][ox + x + shift] = '#';
            }
        }
    }
    let rows: Vec<String> = cells.iter().map(|r| r.iter().collect()).collect();
    Grid::from_ascii(&rows.join("\n")).unwrap()
}

/// A random grid point of `grid` where an agent of `radius` stands at least
/// `room` more than its radius from every wall, and (when `apart` > 0) at
/// least `apart` from every point of `taken`.
fn spot(rng: &mut Rng, grid: &Grid, radius: f64, room: f64, taken: &[DVec2], apart: f64) -> DVec2 {
    loop {
        let p = DVec2::new(rng.unit() * 48.0, rng.unit() * 48.0);
        if grid.is_point_traversable(p)
            && wall_distance(grid, p, 3) >= radius + room
            && taken.iter().all(|q| q.distance(p) >= apart)
        {
            return p;
        }
    }
}

#[test]
fn followers_the_game_moves_at_random_stay_in_free_space_and_reach_their_goals() {
    for seed in [0x5eed_f011, 0x5eed_f012, 0x5eed_f013, 0x5eed_f014] {
        pushed_at_random(seed);
    }
}

/// One run of [`followers_the_game_moves_at_random_stay_in_free_space_and_reach_their_goals`].
fn pushed_at_random(seed: u64) {
    // 30 agents of each kind (points, points with `LocalAvoidance`, discs,
    // discs with `LocalAvoidance`) cross a room of ledges and pillars.
    // During the first 20 seconds the game moves agents at random moments
    // (each at most four times) to free spots up to 3 cells away where they
    // fit, often behind a ledge or a pillar from their next waypoint. Every
    // frame every agent stands in free space (discs at least their radius
    // from every wall); in the end every agent has finished its path at its
    // own goal.
    let mut rng = Rng::new(seed);
    let grid = ledges_and_pillars(&mut rng);
    let nav = NavGrid::new(grid.clone(), GridTransform::default());
    let mut app = App::new();
    app.add_plugins(AnyAnglePlugin::default())
        .insert_resource(nav)
        .insert_resource(SteeringClock::fixed(1.0 / 60.0));
    app.finish();
    app.cleanup();
    let kinds = [POINT, POINT_AVOIDING, DISC, DISC_AVOIDING];
    let (mut starts, mut goals) = (Vec::new(), Vec::new());
    let mut agents = Vec::new();
    for i in 0..120 {
        let kind = kinds[i % 4];
        let r = f64::from(kind.radius);
        // Goals 2r + 0.1 apart, so that every agent can end at its own.
        let start = spot(&mut rng, &grid, r, 0.1, &starts, 0.9);
        let goal = spot(&mut rng, &grid, r, 0.1, &goals, 0.9);
        starts.push(start);
        goals.push(goal);
        let nav = app.world().resource::<NavGrid>();
        let (s, g) = (nav.to_world(start), nav.to_world(goal));
        let mut agent = app.world_mut().spawn((
            NavPosition(s),
            PathRequest::to(g).with_radius(kind.radius),
            PathFollower {
                speed: 3.0,
                arrive_radius: 0.05,
            },
        ));
        if kind.avoid {
            agent.insert(LocalAvoidance);
        }
        agents.push((agent.id(), kind, goal, 0_u32));
    }
    let mut pushes = 0;
    for frame in 1..=6_000 {
        app.update();
        for &(e, kind, ..) in &agents {
            assert_in_free_space(&app, e, kind, frame);
        }
        let done = all_finished(&app, agents.iter().map(|a| a.0));
        if done && frame > 1_200 {
            break;
        }
        if frame > 1_200 {
            continue;
        }
        for (e, kind, _, pushed) in &mut agents {
            if *pushed >= 4 || !rng.chance(1.0 / 150.0) {
                continue;
            }
            let nav = app.world().resource::<NavGrid>();
            let here = nav.to_grid(app.world().get::<NavPosition>(*e).unwrap().0);
            let r = f64::from(kind.radius);
            let to = loop {
                let angle = rng.unit() * std::f64::consts::TAU;
                let d = rng.unit() * 3.0;
                let p = here + DVec2::new(angle.cos(), angle.sin()) * d;
                if grid.contains_point(p)
                    && grid.is_point_traversable(p)
                    && wall_distance(&grid, p, 3) >= r + 0.02
                {
                    break p;
                }
            };
            let to = nav.to_world(to);
            app.world_mut().get_mut::<NavPosition>(*e).unwrap().0 = to;
            *pushed += 1;
            pushes += 1;
        }
    }
    assert!(pushes > 200, "seed {seed:x}: only {pushes} pushes");
    // The frames above are not paced: on a loaded machine the search
    // thread may not have answered the last plans yet. A game's frames
    // would give it time; so do these.
    let waited = std::time::Instant::now();
    let mut frame = 6_000;
    while !all_finished(&app, agents.iter().map(|a| a.0))
        && waited.elapsed() < std::time::Duration::from_secs(10)
    {
        std::thread::sleep(std::time::Duration::from_millis(1));
        app.update();
        frame += 1;
        for &(e, kind, ..) in &agents {
            assert_in_free_space(&app, e, kind, frame);
        }
    }
    let nav = app.world().resource::<NavGrid>();
    for (i, &(e, kind, goal, pushed)) in agents.iter().enumerate() {
        let w = app.world();
        let status = w.get::<PathStatus>(e).unwrap();
        let path = w.get::<NavPath>(e).unwrap();
        let at = nav.to_grid(w.get::<NavPosition>(e).unwrap().0);
        // A plain follower ends within its arrive radius; an avoiding disc
        // within its radius.
        let reach = if kind.avoid && kind.radius > 0.0 {
            f64::from(kind.radius)
        } else {
            0.05
        } + 1e-4;
        assert!(
            *status == PathStatus::Ready && path.is_finished() && at.distance(goal) <= reach,
            "seed {seed:x}: agent {i} ({e}, {kind:?}, pushed {pushed} times) is at {at}, {} from its goal {goal}: \
             {status:?}, finished {}, replanning {}, cut {}, next {} of {:?}; {:?}",
            at.distance(goal),
            path.is_finished(),
            w.get::<Replanning>(e).is_some(),
            path.cut,
            path.next,
            path.grid_waypoints,
            w.resource::<PathfindingDiagnostics>(),
        );
    }
}

/// Whether every agent has a path it has finished, one that ends at its
/// goal (not cut short while it is planned again), and no plan on the way
/// (one pushed off the end of a path it had finished is planned again).
fn all_finished(app: &App, mut agents: impl Iterator<Item = Entity>) -> bool {
    agents.all(|e| {
        let w = app.world();
        let path = w.get::<NavPath>(e).unwrap();
        w.get::<PathStatus>(e).unwrap().has_path()
            && path.is_finished()
            && !path.cut
            && w.get::<Replanning>(e).is_none()
    })
}

#[test]
fn an_avoiding_disc_an_edit_closes_in_on_walks_out_to_where_it_fits() {
    // Radius 1, at rest 0.8 below a cell that an edit then blocks: its way
    // out ends a few tenths of a cell away, within the half radius at which
    // an avoiding disc counts as arrived at a point. It walks the way out to
    // its end all the same, to where it fits.
    let grid = Grid::from_ascii(&vec![".".repeat(20); 10].join("\n")).unwrap();
    let mut app = App::new();
    app.add_plugins(AnyAnglePlugin::default())
        .insert_resource(NavGrid::new(grid, GridTransform::default()))
        .insert_resource(SteeringClock::fixed(1.0 / 60.0));
    app.finish();
    app.cleanup();
    let here = Vec2::new(5.5, 10.0 - 4.2);
    let agent = app
        .world_mut()
        .spawn((
            NavPosition(here),
            PathRequest::to(here).with_radius(1.0),
            PathFollower {
                speed: 3.0,
                arrive_radius: 0.05,
            },
            LocalAvoidance,
        ))
        .id();
    for _ in 0..60 {
        app.update();
    }
    assert!(app.world().get::<NavPath>(agent).unwrap().is_finished());
    app.world_mut()
        .resource_mut::<NavGrid>()
        .set_cell_free(bevy_math::UVec2::new(5, 5), false)
        .unwrap();
    for _ in 0..300 {
        app.update();
    }
    let nav = app.world().resource::<NavGrid>();
    let at = nav.to_grid(app.world().get::<NavPosition>(agent).unwrap().0);
    let gap = wall_distance(nav.grid(), at, 3);
    assert!(
        gap >= 1.0 - 1e-4,
        "the disc stays at {at}, {gap} from the new wall: {:?}",
        app.world().get::<NavPath>(agent).unwrap()
    );
}

/// A game that replaces the grid (a new level layout, a loaded save) while
/// agents follow paths planned on the old one: their paths cross what are
/// walls now, and their new plans come late (searches held). Every agent
/// stops where it stands (an agent now in a wall walks out of it), never
/// walks through the new walls, and reaches its goal once planned again.
#[test]
fn followers_stop_when_the_grid_is_replaced_and_never_cross_its_walls() {
    for kind in [POINT, POINT_AVOIDING, DISC, DISC_AVOIDING] {
        // The ledge map's room, world y up: from the left of the room
        // along its bottom row to the right.
        let world = |p: Vec2| Vec2::new(p.x, 8.0 - p.y);
        let (start, goal) = (world(Vec2::new(1.5, 6.5)), world(Vec2::new(22.5, 6.5)));
        let (mut app, agent) = ledge_app(kind, start, goal);
        for _ in 0..40 {
            app.update();
        }
        // The new grid: a wall across the bottom rows just ahead of the
        // agent, a way round it through the top rows.
        let mut grid = ledge_grid();
        for y in 4..8 {
            grid.set_free(bevy_math::UVec2::new(6, y), false).unwrap();
        }
        app.world_mut().resource_mut::<PathfindingSettings>().paused = true;
        app.insert_resource(NavGrid::new(grid, GridTransform::default()));
        for frame in 1..=240 {
            app.update();
            assert_in_free_space(&app, agent, kind, frame);
        }
        app.world_mut().resource_mut::<PathfindingSettings>().paused = false;
        let mut arrived = false;
        for frame in 241..=3_000 {
            app.update();
            assert_in_free_space(&app, agent, kind, frame);
            let w = app.world();
            let path = w.get::<NavPath>(agent).unwrap();
            if path.is_finished() && !path.cut && w.get::<Replanning>(agent).is_none() {
                let end = w.get::<NavPosition>(agent).unwrap().0;
                arrived = end.distance(goal) <= 0.05 + kind.radius + 1e-4;
                break;
            }
        }
        assert!(arrived, "{kind:?} never reached {goal}");
    }
}
