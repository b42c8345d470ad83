//! The "what people use today" baseline: the `pathfinding` crate's `astar`
//! on the 8-connected vertex grid, with the moves of the crate's own grid A*
//! (`SPEC.md`): a diagonal move crosses a free cell, a straight move runs
//! along an edge with a free cell on at least one side, and no move enters a
//! double corner, except a goal there, reached from its south-east quadrant
//! (a start there leaves into that quadrant only).
//!
//! Costs are `straight + diagonal * sqrt 2`, kept as two integers and compared
//! exactly, so ties break the same on every machine and the returned length
//! is exact. Only the public `Grid` API is used: the graph is what a user of
//! `pathfinding` would build from it.

use core::cmp::Ordering;
use core::f64::consts::SQRT_2;
use core::ops::Add;

use bevy_anyangle::grid::Grid;
use pathfinding::num_traits::Zero;
use pathfinding::prelude::astar;

/// The cost `straight + diagonal * sqrt 2` of a path of grid moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OctileCost {
    /// Straight moves (cost 1 each).
    pub straight: u32,
    /// Diagonal moves (cost sqrt 2 each).
    pub diagonal: u32,
}

impl OctileCost {
    /// The cost as a number.
    pub fn value(self) -> f64 {
        f64::from(self.straight) + f64::from(self.diagonal) * SQRT_2
    }

    /// The octile distance between two vertices: the cost of the cheapest
    /// move sequence on an empty grid (a consistent A* heuristic).
    pub fn between(a: [i64; 2], b: [i64; 2]) -> Self {
        let (dx, dy) = ((a[0] - b[0]).unsigned_abs(), (a[1] - b[1]).unsigned_abs());
        let (lo, hi) = (dx.min(dy), dx.max(dy));
        OctileCost {
            straight: (hi - lo) as u32,
            diagonal: lo as u32,
        }
    }
}

impl Add for OctileCost {
    type Output = OctileCost;

    fn add(self, o: OctileCost) -> OctileCost {
        OctileCost {
            straight: self.straight + o.straight,
            diagonal: self.diagonal + o.diagonal,
        }
    }
}

impl Zero for OctileCost {
    fn zero() -> Self {
        OctileCost::default()
    }

    fn is_zero(&self) -> bool {
        self.straight == 0 && self.diagonal == 0
    }
}

impl Ord for OctileCost {
    /// Exact: the sign of `a - b sqrt 2` with `a` the difference of straight
    /// counts and `b` the difference of diagonal counts the other way round
    /// (`a^2 = 2 b^2` has no solution in non-zero integers).
    fn cmp(&self, o: &Self) -> Ordering {
        let a = i128::from(self.straight) - i128::from(o.straight);
        let b = i128::from(o.diagonal) - i128::from(self.diagonal);
        match (a.signum(), b.signum()) {
            (_, 0) => a.cmp(&0),
            (0, _) => 0.cmp(&b),
            (1, -1) => Ordering::Greater,
            (-1, 1) => Ordering::Less,
            (1, _) => (a * a).cmp(&(2 * b * b)),
            _ => (2 * b * b).cmp(&(a * a)),
        }
    }
}

impl PartialOrd for OctileCost {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Move offsets, indexed by the bits of [`VertexGraph`]'s move masks.
const MOVES: [(i64, i64); 8] = [
    (1, 0),
    (-1, 0),
    (0, 1),
    (0, -1),
    (1, 1),
    (-1, -1),
    (1, -1),
    (-1, 1),
];

/// The vertex grid as a `pathfinding` user would precompute it.
pub struct VertexGraph {
    /// Vertices per row (`width + 1`).
    w1: i64,
    /// Vertices per column (`height + 1`).
    h1: i64,
    /// Per vertex: bit `i` set iff move `MOVES[i]` is a legal grid move
    /// (cell rules only; double corners are checked per query).
    moves: Vec<u8>,
    /// Per vertex: whether it is a double corner.
    double: Vec<bool>,
}

/// What one baseline query found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BaselinePath {
    /// The path's exact cost, `None` if the goal was not reached.
    pub cost: Option<OctileCost>,
    /// How many nodes `astar` expanded (calls of the successor function).
    pub expanded: u64,
}

impl VertexGraph {
    /// Precomputes the moves of every vertex of `grid`.
    pub fn new(grid: &Grid) -> Self {
        let (w1, h1) = (i64::from(grid.width()) + 1, i64::from(grid.height()) + 1);
        let mut moves = Vec::with_capacity((w1 * h1) as usize);
        let mut double = Vec::with_capacity((w1 * h1) as usize);
        for y in 0..h1 {
            for x in 0..w1 {
                let mut m = 0u8;
                for (i, &(dx, dy)) in MOVES.iter().enumerate() {
                    let legal = if dx != 0 && dy != 0 {
                        // The cell the diagonal crosses.
                        grid.is_free_xy(x.min(x + dx), y.min(y + dy))
                    } else if dy == 0 {
                        // Along a horizontal edge: the cells above and below.
                        let cx = x.min(x + dx);
                        grid.is_free_xy(cx, y - 1) || grid.is_free_xy(cx, y)
                    } else {
                        let cy = y.min(y + dy);
                        grid.is_free_xy(x - 1, cy) || grid.is_free_xy(x, cy)
                    };
                    if legal {
                        m |= 1 << i;
                    }
                }
                moves.push(m);
                double.push(grid.is_double_corner(x, y));
            }
        }
        VertexGraph {
            w1,
            h1,
            moves,
            double,
        }
    }

    /// The node of vertex `v`, if it is on the grid.
    fn node(&self, v: [i64; 2]) -> Option<u32> {
        ((0..self.w1).contains(&v[0]) && (0..self.h1).contains(&v[1]))
            .then(|| (v[1] * self.w1 + v[0]) as u32)
    }

    /// Plans from vertex `start` to vertex `goal` with `pathfinding::astar`.
    /// A goal off the grid or unreachable makes `astar` exhaust the start's
    /// component, as it would for any user of the crate.
    pub fn plan(&self, start: [i64; 2], goal: [i64; 2]) -> BaselinePath {
        let mut expanded = 0u64;
        let Some(s) = self.node(start) else {
            return BaselinePath {
                cost: None,
                expanded,
            };
        };
        let g = self.node(goal);
        let w1 = self.w1;
        let xy = |n: u32| [i64::from(n) % w1, i64::from(n) / w1];
        let start_double = self.double[s as usize];
        let successors = |&n: &u32| {
            expanded += 1;
            let mut out = [(0u32, OctileCost::zero()); 8];
            let mut count = 0;
            let mut m = self.moves[n as usize];
            if n == s && start_double {
                // South-east quadrant only: (1, 0), (0, 1), (1, 1).
                m &= 0b0001_0101;
            }
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                let (dx, dy) = MOVES[i];
                let to = (i64::from(n) + dy * w1 + dx) as u32;
                if self.double[to as usize] && !(Some(to) == g && dx <= 0 && dy <= 0) {
                    continue;
                }
                let step = if dx != 0 && dy != 0 {
                    OctileCost {
                        straight: 0,
                        diagonal: 1,
                    }
                } else {
                    OctileCost {
                        straight: 1,
                        diagonal: 0,
                    }
                };
                out[count] = (to, step);
                count += 1;
            }
            out.into_iter().take(count)
        };
        let found = astar(
            &s,
            successors,
            |&n| OctileCost::between(xy(n), goal),
            |&n| Some(n) == g,
        );
        BaselinePath {
            cost: found.map(|(_, c)| c),
            expanded,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(straight: u32, diagonal: u32) -> OctileCost {
        OctileCost { straight, diagonal }
    }

    #[test]
    fn costs_compare_exactly() {
        // 1 + 1 = 2 > sqrt 2; 3 > 2 sqrt 2 = 2.83; 7 < 5 sqrt 2 = 7.07.
        assert!(cost(2, 0) > cost(0, 1));
        assert!(cost(3, 0) > cost(0, 2));
        assert!(cost(7, 0) < cost(0, 5));
        assert!(cost(1, 3) > cost(1, 2));
        assert_eq!(cost(4, 4).cmp(&cost(4, 4)), Ordering::Equal);
        assert!(cost(0, 5) > cost(7, 0));
    }

    #[test]
    fn octile_distance() {
        assert_eq!(OctileCost::between([0, 0], [5, 2]), cost(3, 2));
        assert_eq!(OctileCost::between([5, 2], [0, 0]), cost(3, 2));
    }

    #[test]
    fn plans_around_a_wall_without_squeezing() {
        use bevy_anyangle::prelude::{Algorithm, DVec2, PlanOptions, Planner};

        // The double corner at (2, 1) may not be crossed: the path goes
        // around the blocked cells.
        let grid = Grid::from_ascii(
            ".#..
             ..#.
             ....",
        )
        .expect("a valid picture");
        let graph = VertexGraph::new(&grid);
        let p = graph.plan([0, 0], [4, 0]);
        let c = p.cost.expect("reachable");
        assert!(p.expanded > 0);
        // (0,0) -> (1,1) -> (2,2) -> (3,2) -> (4,1) -> (4,0): below the double
        // corner (2, 1), never along the blocked top of cell (1, 0).
        assert_eq!(c, cost(2, 3));
        let ours = Planner::new()
            .plan(
                &grid,
                DVec2::new(0.0, 0.0),
                DVec2::new(4.0, 0.0),
                &PlanOptions::with_algorithm(Algorithm::AStar),
            )
            .expect("reachable");
        assert!((c.value() - ours.length).abs() < 1e-9);
    }

    #[test]
    fn unreachable_goals_exhaust_the_component() {
        let grid = Grid::from_ascii(
            "..#..
             ..#..",
        )
        .expect("a valid picture");
        let graph = VertexGraph::new(&grid);
        let p = graph.plan([0, 0], [5, 0]);
        assert_eq!(p.cost, None);
        assert!(p.expanded >= 6, "every vertex of the left part is expanded");
        assert_eq!(graph.plan([0, 0], [99, 99]).cost, None, "off the grid");
    }
}
