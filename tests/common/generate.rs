//! Seeded generators: small random grids of several families and query
//! points of several kinds. Everything is reproducible from a `u64` seed.

use bevy_anyangle::prelude::*;

use super::Reference;

/// splitmix64 (Steele, Lea & Flood 2014): tiny, fast, good enough to drive
/// test generators.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        // Multiply-shift: the bias is far below anything a test notices.
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    /// Uniform in `[0, 1)`, a multiple of 2^-53.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `true` with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// A generated grid, kept as a picture so a failure can print it.
#[derive(Clone, Debug)]
pub struct TestGrid {
    /// Which family it comes from.
    pub family: Family,
    /// Rows of `.` (free) and `#` (blocked), top row first.
    pub picture: String,
    /// The grid itself.
    pub grid: Grid,
}

/// Families of generated grids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Independent blocked cells, 0 to 45 % of them.
    Random,
    /// A checkerboard (double corners everywhere), partly opened up, or
    /// checkerboard patches on a random background.
    Checkerboard,
    /// 1-wide corridors (a depth-first maze), sometimes braided.
    Maze,
    /// Diagonal lines of blocked cells: staircases of double corners.
    Staircase,
    /// Random cells plus a ring of mostly blocked cells on the border.
    Border,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 5] = [
        Family::Random,
        Family::Checkerboard,
        Family::Maze,
        Family::Staircase,
        Family::Border,
    ];
}

/// A random grid of `family`, `w x h` cells.
#[must_use]
pub fn grid_of(rng: &mut Rng, family: Family, w: i64, h: i64) -> TestGrid {
    let mut blocked = vec![false; (w * h) as usize];
    let at = |x: i64, y: i64| (y * w + x) as usize;
    match family {
        Family::Random => {
            let density = rng.unit() * 0.45;
            for b in &mut blocked {
                *b = rng.chance(density);
            }
        }
        Family::Checkerboard => {
            let phase = rng.range(0, 1);
            let background = rng.unit() * 0.3;
            let patches = rng.chance(0.5);
            let (x0, y0, x1, y1) = if patches {
                let (x0, y0) = (rng.range(0, w - 1), rng.range(0, h - 1));
                (x0, y0, rng.range(x0, w - 1), rng.range(y0, h - 1))
            } else {
                (0, 0, w - 1, h - 1)
            };
            let opened = if rng.chance(0.2) {
                0.0
            } else {
                rng.unit() * 0.5
            };
            for y in 0..h {
                for x in 0..w {
                    let inside = (x0..=x1).contains(&x) && (y0..=y1).contains(&y);
                    blocked[at(x, y)] = if inside {
                        (x + y + phase) % 2 == 1 && !rng.chance(opened)
                    } else {
                        rng.chance(background)
                    };
                }
            }
        }
        Family::Maze => {
            blocked.fill(true);
            // Rooms at even coordinates, carved depth-first.
            let (rw, rh) = ((w + 1) / 2, (h + 1) / 2);
            let mut seen = vec![false; (rw * rh) as usize];
            let mut stack = vec![(rng.range(0, rw - 1), rng.range(0, rh - 1))];
            seen[(stack[0].1 * rw + stack[0].0) as usize] = true;
            blocked[at(stack[0].0 * 2, stack[0].1 * 2)] = false;
            while let Some(&(x, y)) = stack.last() {
                let options: Vec<(i64, i64)> = [(1, 0), (-1, 0), (0, 1), (0, -1)]
                    .into_iter()
                    .map(|(dx, dy)| (x + dx, y + dy))
                    .filter(|&(nx, ny)| {
                        nx >= 0 && ny >= 0 && nx < rw && ny < rh && !seen[(ny * rw + nx) as usize]
                    })
                    .collect();
                if options.is_empty() {
                    stack.pop();
                    continue;
                }
                let (nx, ny) = *rng.pick(&options);
                seen[(ny * rw + nx) as usize] = true;
                blocked[at(x + nx, y + ny)] = false; // the wall between (2x, 2y) and (2nx, 2ny)
                blocked[at(nx * 2, ny * 2)] = false;
                stack.push((nx, ny));
            }
            let braid = if rng.chance(0.5) {
                rng.unit() * 0.15
            } else {
                0.0
            };
            for b in &mut blocked {
                if *b && rng.chance(braid) {
                    *b = false;
                }
            }
        }
        Family::Staircase => {
            let lines = rng.range(1, 4);
            for _ in 0..lines {
                let anti = rng.chance(0.5);
                let c = rng.range(-h, w + h);
                let gaps = rng.unit() * 0.2;
                for y in 0..h {
                    for x in 0..w {
                        let on = if anti { x + y == c } else { x - y == c };
                        if on && !rng.chance(gaps) {
                            blocked[at(x, y)] = true;
                        }
                    }
                }
            }
            let noise = rng.unit() * 0.15;
            for b in &mut blocked {
                if rng.chance(noise) {
                    *b = true;
                }
            }
        }
        Family::Border => {
            let density = rng.unit() * 0.3;
            let ring = 0.5 + rng.unit() * 0.4;
            for y in 0..h {
                for x in 0..w {
                    let edge = x == 0 || y == 0 || x == w - 1 || y == h - 1;
                    blocked[at(x, y)] = rng.chance(if edge { ring } else { density });
                }
            }
        }
    }
    let mut picture = String::with_capacity(((w + 1) * h) as usize);
    for y in 0..h {
        for x in 0..w {
            picture.push(if blocked[at(x, y)] { '#' } else { '.' });
        }
        picture.push('\n');
    }
    let grid = Grid::from_ascii(&picture).expect("generated pictures are well formed");
    TestGrid {
        family,
        picture,
        grid,
    }
}

/// A grid of a random family and a random size in `3..=max_side` each way.
#[must_use]
pub fn random_grid(rng: &mut Rng, max_side: i64) -> TestGrid {
    let family = *rng.pick(&Family::ALL);
    let (w, h) = (rng.range(3, max_side), rng.range(3, max_side));
    grid_of(rng, family, w, h)
}

/// Kinds of query points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointKind {
    /// An integer point of `[0, w] x [0, h]`.
    Vertex,
    /// `(x + 1/2, y + 1/2)` for a cell.
    Centre,
    /// Any multiple of 1/2 in `[0, w] x [0, h]` (vertices, centres, edge midpoints).
    Half,
    /// A multiple of 2^-20, sometimes with one coordinate on a grid line.
    Float,
    /// A point outside the grid (up to two cells out).
    Outside,
}

/// A random point of `kind` for a `w x h` grid.
pub fn point(rng: &mut Rng, kind: PointKind, w: i64, h: i64) -> DVec2 {
    let lattice = |rng: &mut Rng, max: i64| -> f64 {
        let steps = (max as u64) << 20;
        (rng.below(steps + 1)) as f64 / f64::from(1u32 << 20)
    };
    match kind {
        PointKind::Vertex => DVec2::new(rng.range(0, w) as f64, rng.range(0, h) as f64),
        PointKind::Centre => DVec2::new(
            rng.range(0, w - 1) as f64 + 0.5,
            rng.range(0, h - 1) as f64 + 0.5,
        ),
        PointKind::Half => DVec2::new(
            rng.range(0, 2 * w) as f64 / 2.0,
            rng.range(0, 2 * h) as f64 / 2.0,
        ),
        PointKind::Float => {
            let mut p = DVec2::new(lattice(rng, w), lattice(rng, h));
            match rng.below(4) {
                0 => p.x = p.x.round(),
                1 => p.y = p.y.round(),
                _ => {}
            }
            p
        }
        PointKind::Outside => {
            let mut p = DVec2::new(
                rng.range(-4, 2 * w + 4) as f64 / 2.0,
                rng.range(-4, 2 * h + 4) as f64 / 2.0,
            );
            if (0.0..=w as f64).contains(&p.x) && (0.0..=h as f64).contains(&p.y) {
                if rng.chance(0.5) {
                    p.x = if rng.chance(0.5) {
                        -0.5 - rng.unit().floor()
                    } else {
                        w as f64 + 1.5
                    };
                } else {
                    p.y = if rng.chance(0.5) {
                        -1.0
                    } else {
                        h as f64 + 0.5
                    };
                }
            }
            p
        }
    }
}

/// One query: start and goal.
#[derive(Clone, Copy, Debug)]
pub struct Query {
    /// The requested start.
    pub start: DVec2,
    /// The requested goal.
    pub goal: DVec2,
}

/// How to draw query endpoints.
#[derive(Clone, Copy, Debug)]
pub struct QueryMix {
    /// Kinds to draw from, uniformly.
    pub kinds: &'static [PointKind],
    /// Probability that an endpoint is redrawn (a few times) until it is
    /// traversable, so most queries are not degenerate.
    pub prefer_free: f64,
}

impl QueryMix {
    /// Vertices and cell centres only (the GPPC kinds), mostly free.
    pub const LATTICE: QueryMix = QueryMix {
        kinds: &[PointKind::Vertex, PointKind::Centre, PointKind::Half],
        prefer_free: 0.9,
    };
    /// Everything, including arbitrary float points and points outside.
    pub const ANY: QueryMix = QueryMix {
        kinds: &[
            PointKind::Vertex,
            PointKind::Vertex,
            PointKind::Centre,
            PointKind::Half,
            PointKind::Float,
            PointKind::Float,
            PointKind::Outside,
        ],
        prefer_free: 0.8,
    };
    /// Vertices only.
    pub const VERTICES: QueryMix = QueryMix {
        kinds: &[PointKind::Vertex],
        prefer_free: 0.9,
    };
}

/// A random query on the grid of `reference` drawn from `mix`.
pub fn query(rng: &mut Rng, reference: &Reference, mix: QueryMix) -> Query {
    let (w, h) = (reference.width(), reference.height());
    let draw = |rng: &mut Rng| {
        let kind = *rng.pick(mix.kinds);
        let mut p = point(rng, kind, w, h);
        if rng.chance(mix.prefer_free) {
            for _ in 0..8 {
                if reference.traversable(p) {
                    break;
                }
                let kind = *rng.pick(mix.kinds);
                p = point(
                    rng,
                    if kind == PointKind::Outside {
                        PointKind::Half
                    } else {
                        kind
                    },
                    w,
                    h,
                );
            }
        }
        p
    };
    // Zero coordinates are sometimes written -0.0, which is the same point.
    let signed_zero = |rng: &mut Rng, p: DVec2| {
        let flip = |rng: &mut Rng, c: f64| if c == 0.0 && rng.chance(0.3) { -0.0 } else { c };
        DVec2::new(flip(rng, p.x), flip(rng, p.y))
    };
    let start = draw(rng);
    let goal = if rng.chance(0.03) { start } else { draw(rng) };
    Query {
        start: signed_zero(rng, start),
        goal: signed_zero(rng, goal),
    }
}

/// A `size` x `size` open grid with a walled box around its centre, open only
/// on the side away from the returned start (grid coordinates, with the
/// goal at the centre): a search from there must go round the box, and A*
/// floods most of the grid before it gets in (more than a million
/// expansions at `size` 2400).
pub fn walled_pocket(size: u32) -> (Grid, DVec2, DVec2) {
    let (m, k) = (size / 2, size * 2 / 5);
    let mut g = Grid::new(size, size).unwrap();
    g.edit(|e| {
        e.set_rect_free(URect::new(m - k, m - k, m + k, m - k + 2), false)?;
        e.set_rect_free(URect::new(m - k, m - k, m - k + 2, m + k), false)?;
        e.set_rect_free(URect::new(m + k - 2, m - k, m + k, m + k), false)?;
        e.set_rect_free(URect::new(m - k, m + k - 2, m - 10, m + k), false)?;
        e.set_rect_free(URect::new(m + 10, m + k - 2, m + k, m + k), false)?;
        Ok(())
    })
    .unwrap();
    let centre = f64::from(m) + 0.5;
    let start = DVec2::new(centre, f64::from(m - k) - 20.5);
    (g, start, DVec2::splat(centre))
}
