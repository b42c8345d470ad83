//! Anya against a brute-force reference (visibility graph over the corners,
//! Dijkstra), the paper's figures, and the boundary cases of exactness.

use bevy_math::DVec2;

use crate::grid::Grid;
use crate::los::line_of_sight;
use crate::search::{Algorithm, Endpoint, PathKind, PlanOptions, Planner};

/// Queries that needed a search (not a straight line), over all tests.
static SEARCHED: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// A tiny deterministic generator (`SplitMix64`).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Shortest valid path length from `s` to `t` by Dijkstra over the
/// visibility graph of start, goal and every corner. `None` if unreachable.
fn reference(grid: &Grid, s: &Endpoint, t: &Endpoint) -> Option<f64> {
    let mut pts = vec![s.p, t.p];
    for y in 0..=i64::from(grid.height()) {
        for x in 0..=i64::from(grid.width()) {
            if grid.vertex_mask(x, y).count_ones() == 3 {
                pts.push(DVec2::new(x as f64, y as f64));
            }
        }
    }
    let n = pts.len();
    let ok = |i: usize, j: usize| {
        let (a, b) = (pts[i], pts[j]);
        let ends = [(i, b), (j, a)];
        ends.iter().all(|&(k, other)| match k {
            0 => s.allows_towards(other),
            1 => t.allows_towards(other),
            _ => true,
        }) && line_of_sight(grid, a, b)
    };
    let mut dist = vec![f64::INFINITY; n];
    let mut done = vec![false; n];
    dist[0] = 0.0;
    loop {
        let u = (0..n)
            .filter(|&i| !done[i])
            .min_by(|&a, &b| dist[a].total_cmp(&dist[b]))?;
        if dist[u].is_infinite() {
            return None;
        }
        if u == 1 {
            return Some(dist[1]);
        }
        done[u] = true;
        for v in 0..n {
            if !done[v] {
                let d = dist[u] + pts[u].distance(pts[v]);
                if d < dist[v] && ok(u, v) {
                    dist[v] = d;
                }
            }
        }
    }
}

/// Plans with Anya, checks the path is valid, and returns its length.
fn anya_length(planner: &mut Planner, grid: &Grid, s: DVec2, t: DVec2) -> Option<f64> {
    let opts = PlanOptions {
        algorithm: Algorithm::Anya,
        ..PlanOptions::default()
    };
    let path = planner.plan(grid, s, t, &opts).ok()?;
    if path.stats.expanded > 0 {
        SEARCHED.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    }
    if path.kind != PathKind::Found || path.start_moved_from.is_some() {
        return None;
    }
    let w = &path.waypoints;
    assert_eq!(w[0], s, "path starts at the start");
    assert_eq!(*w.last().expect("non-empty"), t, "path ends at the goal");
    let (se, te) = (
        Endpoint::resolve(grid, s).expect("valid start"),
        Endpoint::resolve(grid, t).expect("valid goal"),
    );
    if w.len() > 1 {
        assert!(
            se.allows_towards(w[1]),
            "leaves a double-corner start through its cell"
        );
        assert!(
            te.allows_towards(w[w.len() - 2]),
            "reaches a double-corner goal through its cell"
        );
    }
    for pair in w.windows(2) {
        assert!(
            line_of_sight(grid, pair[0], pair[1]),
            "invisible leg {pair:?} in {w:?}"
        );
    }
    Some(path.length)
}

/// Compares Anya with the reference on one query; returns whether it ran.
fn check(planner: &mut Planner, grid: &Grid, s: DVec2, t: DVec2) -> bool {
    let (Some(se), Some(te)) = (Endpoint::resolve(grid, s), Endpoint::resolve(grid, t)) else {
        return false;
    };
    if se.region != te.region {
        return false;
    }
    let want = reference(grid, &se, &te).expect("same region means reachable");
    let Some(got) = anya_length(planner, grid, s, t) else {
        panic!(
            "anya finds no path from {s} to {t} (optimum {want}) on\n{}",
            picture(grid)
        );
    };
    assert!(
        (got - want).abs() <= 1e-9 * want.max(1.0),
        "anya {got} vs optimum {want} from {s} to {t} on\n{}",
        picture(grid)
    );
    true
}

fn picture(grid: &Grid) -> String {
    let mut out = String::new();
    for y in 0..i64::from(grid.height()) {
        for x in 0..i64::from(grid.width()) {
            out.push(if grid.is_free_xy(x, y) { '.' } else { '#' });
        }
        out.push('\n');
    }
    out
}

fn random_grid(rng: &mut Rng, w: u32, h: u32, density: f64) -> Grid {
    let mut text = String::new();
    for _ in 0..h {
        for _ in 0..w {
            text.push(if rng.unit() < density { '#' } else { '.' });
        }
        text.push('\n');
    }
    Grid::from_ascii(&text).expect("valid picture")
}

/// A random point of one of several kinds: vertex, cell centre, a point on a
/// grid line, or any point.
fn random_point(rng: &mut Rng, grid: &Grid, kind: u64) -> DVec2 {
    let (w, h) = (u64::from(grid.width()), u64::from(grid.height()));
    match kind {
        0 => DVec2::new(rng.below(w + 1) as f64, rng.below(h + 1) as f64),
        1 => DVec2::new(rng.below(w) as f64 + 0.5, rng.below(h) as f64 + 0.5),
        2 => DVec2::new(rng.below(w + 1) as f64, rng.below(h) as f64 + rng.unit()),
        3 => DVec2::new(rng.below(w) as f64 + rng.unit(), rng.below(h + 1) as f64),
        _ => DVec2::new(rng.unit() * w as f64, rng.unit() * h as f64),
    }
}

fn random_queries(seed: u64, count: usize, kinds: &[u64]) -> usize {
    let mut rng = Rng(seed);
    let mut planner = Planner::new();
    let mut ran = 0;
    while ran < count {
        let side = if rng.below(4) == 0 { 24 } else { 9 };
        let (w, h) = (1 + rng.below(side) as u32, 1 + rng.below(side) as u32);
        let density = [0.1, 0.2, 0.3, 0.45][rng.below(4) as usize];
        let grid = random_grid(&mut rng, w, h, density);
        for _ in 0..8 {
            let ks = kinds[rng.below(kinds.len() as u64) as usize];
            let kt = kinds[rng.below(kinds.len() as u64) as usize];
            let (s, t) = (
                random_point(&mut rng, &grid, ks),
                random_point(&mut rng, &grid, kt),
            );
            if check(&mut planner, &grid, s, t) {
                ran += 1;
            }
        }
    }
    ran
}

#[test]
fn random_vertex_queries_are_optimal() {
    assert!(random_queries(1, 4000, &[0]) >= 4000);
}

#[test]
fn random_centre_queries_are_optimal() {
    assert!(random_queries(2, 4000, &[1]) >= 4000);
}

#[test]
fn random_mixed_queries_are_optimal() {
    assert!(random_queries(3, 4000, &[0, 1, 2, 3, 4]) >= 4000);
}

#[test]
fn checkerboards_never_squeeze() {
    let mut planner = Planner::new();
    let grid = Grid::from_ascii(
        ".#.#.
         #.#.#
         .#.#.
         .....",
    )
    .expect("valid");
    let mut rng = Rng(9);
    let mut ran = 0;
    for _ in 0..2000 {
        let (ks, kt) = (rng.below(5), rng.below(5));
        let s = random_point(&mut rng, &grid, ks);
        let t = random_point(&mut rng, &grid, kt);
        ran += usize::from(check(&mut planner, &grid, s, t));
    }
    assert!(ran > 200);
}

/// Many more queries on larger grids: `cargo test --lib anya -- --ignored`.
#[test]
#[ignore = "slow: about a minute"]
fn stress_many_random_queries() {
    let mut total = 0;
    for seed in 100..140 {
        total += random_queries(seed, 2500, &[0, 1, 2, 3, 4]);
    }
    assert!(total >= 100_000);
    let searched = SEARCHED.load(core::sync::atomic::Ordering::Relaxed);
    println!("{total} queries, {searched} searched");
}

/// Plans with Anya and returns the waypoints, after checking the length
/// against the reference.
fn waypoints(grid: &str, s: (f64, f64), t: (f64, f64)) -> Vec<DVec2> {
    let grid = Grid::from_ascii(grid).expect("valid picture");
    let (s, t) = (DVec2::new(s.0, s.1), DVec2::new(t.0, t.1));
    let mut planner = Planner::new();
    assert!(check(&mut planner, &grid, s, t), "query runs");
    let opts = PlanOptions {
        algorithm: Algorithm::Anya,
        ..PlanOptions::default()
    };
    planner.plan(&grid, s, t, &opts).expect("path").waypoints
}

fn pts(v: &[(f64, f64)]) -> Vec<DVec2> {
    v.iter().map(|&(x, y)| DVec2::new(x, y)).collect()
}

/// Figure 5 and 7 of the paper: a flat node runs along the line from its
/// root to a corner whose blocked cell is behind it, and turns there into a
/// cone (a non-observable successor).
#[test]
fn figure_7_flat_node_turns_at_its_far_corner() {
    let w = waypoints(
        "....
         ##..",
        (0.0, 1.0),
        (3.0, 2.0),
    );
    assert_eq!(w, pts(&[(0.0, 1.0), (2.0, 1.0), (3.0, 2.0)]));
}

/// Figure 6 of the paper: a cone node's interval ends at a corner; paths
/// hidden from the root turn there (non-observable successors) while the
/// rest of the interval projects on (observable successors).
#[test]
fn figure_6_cone_turns_at_a_corner_endpoint() {
    let w = waypoints(
        "......
         ......
         ..##..
         ..##..
         ......",
        (0.0, 0.0),
        (3.0, 5.0),
    );
    assert_eq!(w, pts(&[(0.0, 0.0), (2.0, 4.0), (3.0, 5.0)]));
}

/// Figure 4 of the paper: a cone node whose interval endpoints are not
/// vertices (rays from the root through corners), then projected twice.
#[test]
fn figure_4_cone_with_fractional_endpoints() {
    let w = waypoints(
        "#.#...
         ......
         ......
         .#....
         ......",
        (1.5, 0.5),
        (1.5, 4.5),
    );
    // Straight down the middle of cell column 1 is blocked by (1, 3).
    assert!(w.len() >= 3, "{w:?}");
}

/// The goal lies exactly on the endpoint of a projected interval: the ray
/// from root (2, 2) through corner (4, 3) reaches line 4 at the goal.
#[test]
fn goal_exactly_on_an_interval_endpoint() {
    let grid = "..........
                ..#.......
                ....#.....
                ..........";
    let w = waypoints(grid, (0.0, 0.0), (6.0, 4.0));
    // Turning at (4, 3) by a zero angle is as short; either form is right.
    let direct = pts(&[(0.0, 0.0), (2.0, 2.0), (6.0, 4.0)]);
    let touching = pts(&[(0.0, 0.0), (2.0, 2.0), (4.0, 3.0), (6.0, 4.0)]);
    assert!(w == direct || w == touching, "{w:?}");
    // Just beside the endpoint, on either side.
    for x in [
        6.0 - 1e-9,
        6.0 + 1e-9,
        5.999_999_999_999_999,
        6.000_000_000_000_001,
    ] {
        let w = waypoints(grid, (0.0, 0.0), (x, 4.0));
        assert!(w.len() >= 3);
    }
}

/// Three corners on one line: the path touches them all (collinear roots).
#[test]
fn collinear_roots() {
    let w = waypoints(
        ".......
         .#.....
         ...#...
         .....#.
         .......",
        (0.0, 2.0),
        (7.0, 4.0),
    );
    assert!(w.len() >= 3, "{w:?}");
}

/// A ray that passes exactly through a vertex between two blocks: a
/// zero-width interval.
#[test]
fn zero_width_interval_through_a_vertex() {
    let grid = "....#
                ##..#
                ...#.
                .....";
    let mut planner = Planner::new();
    let g = Grid::from_ascii(grid).expect("valid");
    for s in [(0.0, 1.0), (0.5, 0.5), (1.0, 0.0), (0.0, 0.0)] {
        for t in [(4.0, 4.0), (4.5, 3.5), (2.0, 4.0), (0.0, 4.0), (4.5, 2.5)] {
            let (s, t) = (DVec2::new(s.0, s.1), DVec2::new(t.0, t.1));
            check(&mut planner, &g, s, t);
        }
    }
}

/// Paths may run along the map border only with a free cell beside them,
/// and roots may sit on the border.
#[test]
fn roots_and_paths_on_the_map_border() {
    let w = waypoints(
        "......
         .####.
         ......",
        (0.0, 3.0),
        (6.0, 0.0),
    );
    // The grid is symmetric under a half turn, which swaps the endpoints:
    // the two shortest paths (sqrt 5 + sqrt 26 each) are mirror images, and
    // either may be found.
    assert!(
        w == pts(&[(0.0, 3.0), (5.0, 2.0), (6.0, 0.0)])
            || w == pts(&[(0.0, 3.0), (1.0, 1.0), (6.0, 0.0)]),
        "{w:?}"
    );
    let w = waypoints(".#\n.#\n..", (0.0, 0.0), (2.0, 3.0));
    assert_eq!(w, pts(&[(0.0, 0.0), (1.0, 2.0), (2.0, 3.0)]));
}

/// A start on a double corner leaves through its south-east cell only, and a
/// goal on one is reached through that cell only.
#[test]
fn double_corner_endpoints_use_the_south_east_cell() {
    // Vertex (1, 2) is a double corner: cells (0, 1) and (1, 2) free, (1, 1)
    // and (0, 2) blocked.
    let grid = "...
                .#.
                #..
                ...";
    let w = waypoints(grid, (1.0, 2.0), (0.5, 1.5));
    assert!(
        w.len() > 2,
        "no squeezing from the double-corner start: {w:?}"
    );
    let w = waypoints(grid, (0.5, 1.5), (1.0, 2.0));
    assert!(
        w.len() > 2,
        "no squeezing into the double-corner goal: {w:?}"
    );
    let w = waypoints(grid, (1.0, 2.0), (2.5, 3.5));
    assert_eq!(w.len(), 2);
    let w = waypoints(grid, (1.0, 2.0), (0.0, 4.0));
    assert!(w.len() > 2, "leaves through the south-east cell: {w:?}");
}

/// Cell centres stay exact: every turning point is an exact vertex.
#[test]
fn centres_turn_at_exact_vertices() {
    let w = waypoints(
        "....
         .##.
         ....",
        (0.5, 1.5),
        (3.5, 1.5),
    );
    // Over or under the block: as long either way, every turn exact.
    let over = pts(&[(0.5, 1.5), (1.0, 1.0), (3.0, 1.0), (3.5, 1.5)]);
    let under = pts(&[(0.5, 1.5), (1.0, 2.0), (3.0, 2.0), (3.5, 1.5)]);
    assert!(w == over || w == under, "{w:?}");
}

/// Arbitrary points, including ones a rounding error away from a line.
#[test]
fn arbitrary_points_near_lines() {
    let grid = Grid::from_ascii(
        ".....
         .#.#.
         .....
         ..#..",
    )
    .expect("valid");
    let mut planner = Planner::new();
    let eps = f64::EPSILON * 4.0;
    for (s, t) in [
        ((0.1, 0.1), (4.9, 3.9)),
        ((1.0 + eps, 2.0), (4.0, 0.0 + eps)),
        ((2.0, 2.0 - eps), (2.5, 3.999_999_999)),
        ((0.3, 2.0), (4.7, 1.0 + eps)),
        ((1.999_999_999_9, 1.5), (3.000_000_000_1, 1.5)),
    ] {
        check(
            &mut planner,
            &grid,
            DVec2::new(s.0, s.1),
            DVec2::new(t.0, t.1),
        );
    }
}

/// A maze of one-cell corridors.
#[test]
fn mazes_are_optimal() {
    let mut rng = Rng(77);
    let mut planner = Planner::new();
    let mut ran = 0;
    for _ in 0..30 {
        let (cw, ch) = (2 + rng.below(6) as usize, 2 + rng.below(6) as usize);
        let (w, h) = (2 * cw + 1, 2 * ch + 1);
        let mut free = vec![false; w * h];
        let mut stack = vec![(0usize, 0usize)];
        let mut seen = vec![false; cw * ch];
        seen[0] = true;
        free[w + 1] = true;
        while let Some(&(x, y)) = stack.last() {
            let mut next = Vec::new();
            for (dx, dy) in [(1i64, 0i64), (-1, 0), (0, 1), (0, -1)] {
                let (nx, ny) = (x as i64 + dx, y as i64 + dy);
                if nx >= 0
                    && ny >= 0
                    && (nx as usize) < cw
                    && (ny as usize) < ch
                    && !seen[ny as usize * cw + nx as usize]
                {
                    next.push((nx as usize, ny as usize));
                }
            }
            if next.is_empty() {
                stack.pop();
                continue;
            }
            let (nx, ny) = next[rng.below(next.len() as u64) as usize];
            seen[ny * cw + nx] = true;
            free[(2 * ny + 1) * w + 2 * nx + 1] = true;
            free[(y + ny + 1) * w + x + nx + 1] = true;
            stack.push((nx, ny));
        }
        let text: String = (0..h)
            .map(|y| {
                (0..w)
                    .map(|x| if free[y * w + x] { '.' } else { '#' })
                    .collect::<String>()
                    + "\n"
            })
            .collect();
        let grid = Grid::from_ascii(&text).expect("valid");
        for _ in 0..40 {
            let kind = rng.below(3);
            let (s, t) = (
                random_point(&mut rng, &grid, kind),
                random_point(&mut rng, &grid, kind),
            );
            ran += usize::from(check(&mut planner, &grid, s, t));
        }
    }
    assert!(ran > 100);
}

#[test]
fn small_int_recognises_exactly_the_small_integers() {
    use super::node::small_int;
    for v in [
        0.0,
        -0.0,
        1.0,
        -1.0,
        7.0,
        -12_345.0,
        16_777_216.0,
        -16_777_216.0,
    ] {
        assert_eq!(small_int(v), Some(v as i64), "{v}");
    }
    for v in [
        0.5,
        -0.5,
        1e-300,
        -1e-300,
        16_777_217.0,
        -16_777_217.0,
        2f64.powi(60),
        4_503_599_627_370_496.5f64.next_up(),
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        3.000_000_000_000_000_4,
    ] {
        assert_eq!(small_int(v), None, "{v}");
    }
}

#[test]
fn integer_endpoint_paths_match_the_exact_predicates() {
    use super::node::Ep;
    use core::cmp::Ordering;
    // floor, int_below and normalized of line endpoints with integer points
    // (fraction fast path) against the orientation-based definitions.
    let mut rng = Rng(7);
    for _ in 0..20_000 {
        let c = |rng: &mut Rng| rng.below(41) as f64 - 20.0;
        let r = DVec2::new(c(&mut rng), c(&mut rng));
        let o = DVec2::new(c(&mut rng), c(&mut rng));
        if o.y == r.y {
            continue;
        }
        let y = rng.below(41) as i64 - 20;
        if y as f64 == r.y {
            continue;
        }
        let e = Ep::Line(o);
        let at = |k: i64| e.cmp_point(r, DVec2::new(k as f64, y as f64));
        let f = e.floor(r, y);
        assert_ne!(at(f), Ordering::Less);
        assert_eq!(at(f + 1), Ordering::Less);
        let b = e.int_below(r, y);
        assert_eq!(at(b), Ordering::Greater);
        assert_ne!(at(b + 1), Ordering::Greater);
        match e.normalized(r, y) {
            Ep::Int(k) => assert_eq!(at(k), Ordering::Equal),
            Ep::Line(_) => assert_ne!(at(f), Ordering::Equal),
            Ep::Root => panic!("a line endpoint never becomes the root"),
        }
    }
}
