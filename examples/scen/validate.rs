//! An independent check of every answer, following `SPEC.md` line by line.
//!
//! It trusts only the grid's cells ([`Grid::is_free_xy`]) and the crate's public
//! [`line_of_sight`]: reachability comes from its own flood fill, not from the
//! grid's region labels, and fallback targets from a scan of the start's
//! region, not from the planner.

use std::collections::VecDeque;

use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::prelude::*;

/// Relative tolerance for lengths and distances.
const TOLERANCE: f64 = 1e-9;

/// How much farther from the goal than the closest reachable point a
/// fallback target may be. When that point is a double corner that belongs
/// to another cell, the planner moves it 1/1024 of a cell along both axes
/// into the chosen cell, so that it is a valid goal.
const FALLBACK_TOLERANCE: f64 = 1.5 / 1024.0;

/// Region labels from a 4-connected flood fill of the free cells.
pub struct Validator<'g> {
    grid: &'g Grid,
    width: i64,
    height: i64,
    /// Region per cell, row-major; `0` for blocked cells.
    label: Vec<u32>,
}

/// The free cell a point belongs to, and its region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Anchor {
    cell: (i64, i64),
    region: u32,
}

impl<'g> Validator<'g> {
    /// Labels the regions of `grid`.
    pub fn new(grid: &'g Grid) -> Self {
        let (width, height) = (i64::from(grid.width()), i64::from(grid.height()));
        let mut label = vec![0u32; (width * height) as usize];
        let mut next = 0;
        let mut queue = VecDeque::new();
        for y in 0..height {
            for x in 0..width {
                if label[(y * width + x) as usize] != 0 || !grid.is_free_xy(x, y) {
                    continue;
                }
                next += 1;
                label[(y * width + x) as usize] = next;
                queue.push_back((x, y));
                while let Some((cx, cy)) = queue.pop_front() {
                    for (nx, ny) in [(cx + 1, cy), (cx - 1, cy), (cx, cy + 1), (cx, cy - 1)] {
                        if grid.is_free_xy(nx, ny) && label[(ny * width + nx) as usize] == 0 {
                            label[(ny * width + nx) as usize] = next;
                            queue.push_back((nx, ny));
                        }
                    }
                }
            }
        }
        Validator {
            grid,
            width,
            height,
            label,
        }
    }

    fn region(&self, x: i64, y: i64) -> u32 {
        if x < 0 || y < 0 || x >= self.width || y >= self.height {
            0
        } else {
            self.label[(y * self.width + x) as usize]
        }
    }

    /// Whether vertex `(x, y)` is a double corner: two free cells touching
    /// diagonally, the other two blocked.
    fn is_double_corner(&self, x: i64, y: i64) -> bool {
        let free = |cx, cy| self.grid.is_free_xy(cx, cy);
        let (nw, ne, sw, se) = (
            free(x - 1, y - 1),
            free(x, y - 1),
            free(x - 1, y),
            free(x, y),
        );
        (nw && se && !ne && !sw) || (ne && sw && !nw && !se)
    }

    /// The free cell a start or goal point belongs to (`SPEC.md`): on a
    /// double corner the cell to its south-east, else any free cell whose
    /// closed square holds it (they all share one region). `None` for a point
    /// that is not a valid start or goal.
    #[expect(
        clippy::float_cmp,
        reason = "whether a coordinate is exactly an integer"
    )]
    fn anchor(&self, p: DVec2) -> Option<Anchor> {
        let in_range = p.is_finite()
            && (0.0..=self.width as f64).contains(&p.x)
            && (0.0..=self.height as f64).contains(&p.y);
        if !in_range {
            return None;
        }
        let (fx, fy) = (p.x.floor() as i64, p.y.floor() as i64);
        let on_x = p.x == p.x.floor();
        let on_y = p.y == p.y.floor();
        let make = |x, y| {
            let region = self.region(x, y);
            (region != 0).then_some(Anchor {
                cell: (x, y),
                region,
            })
        };
        if on_x && on_y && self.is_double_corner(fx, fy) {
            return make(fx, fy);
        }
        let xs: &[i64] = if on_x { &[fx, fx - 1] } else { &[fx] };
        let ys: &[i64] = if on_y { &[fy, fy - 1] } else { &[fy] };
        ys.iter()
            .flat_map(|&y| xs.iter().map(move |&x| (x, y)))
            .find_map(|(x, y)| make(x, y))
    }

    /// Whether `p` is a valid start or goal point.
    pub fn is_valid_point(&self, p: DVec2) -> bool {
        self.anchor(p).is_some()
    }

    /// Whether `goal` is reachable from `start` (both must be valid points).
    pub fn reachable(&self, start: DVec2, goal: DVec2) -> bool {
        match (self.anchor(start), self.anchor(goal)) {
            (Some(s), Some(g)) => s.region == g.region,
            _ => false,
        }
    }

    /// The distance from `goal` to the closest point of `start`'s region:
    /// the minimum, over the region's free cells, of the distance from the
    /// goal to the cell's square.
    fn fallback_distance(&self, start: DVec2, goal: DVec2) -> Option<f64> {
        let region = self.anchor(start)?.region;
        let mut best = f64::INFINITY;
        for y in 0..self.height {
            for x in 0..self.width {
                if self.label[(y * self.width + x) as usize] == region {
                    let min = DVec2::new(x as f64, y as f64);
                    best = best.min(goal.distance(goal.clamp(min, min + 1.0)));
                }
            }
        }
        Some(best)
    }

    /// Checks an "unreachable" answer whose closest reachable point is
    /// `closest`. Returns why it is wrong, or `None` if it is right.
    pub fn check_unreachable(&self, start: DVec2, goal: DVec2, closest: DVec2) -> Option<String> {
        if !self.is_valid_point(start) {
            // The planner moved the start first; the answer is about the moved start.
            return None;
        }
        if self.reachable(start, goal) {
            return Some("declares unreachable a goal the flood fill reaches".into());
        }
        let best = self.fallback_distance(start, goal)?;
        let got = closest.distance(goal);
        if (got - best).abs() > FALLBACK_TOLERANCE + TOLERANCE * best.max(1.0) {
            return Some(format!(
                "names ({closest}) at distance {got} from the goal as the closest reachable \
                 point; the closest is at distance {best}"
            ));
        }
        if !self.reachable(start, closest) {
            return Some(format!(
                "names ({closest}), outside the start's region, as the closest point"
            ));
        }
        None
    }

    /// Checks one returned path for the query `start -> goal`. Returns why
    /// it is invalid, or `None` if it is valid.
    pub fn check_path(&self, start: DVec2, goal: DVec2, path: &Path) -> Option<String> {
        let w = &path.waypoints;
        let (Some(&first), Some(&last)) = (w.first(), w.last()) else {
            return Some("the path has no waypoint".into());
        };
        if let Some(i) = w.iter().position(|p| !p.is_finite()) {
            return Some(format!("waypoint {i} is not finite"));
        }
        if let Some(why) = self.check_start(start, first, path.start_moved_from) {
            return Some(why);
        }
        match path.kind {
            PathKind::Found => {
                if last != goal {
                    return Some(format!("ends at ({last}) instead of the goal ({goal})"));
                }
                if !self.reachable(first, goal) {
                    return Some("reaches a goal the flood fill says is unreachable".into());
                }
            }
            PathKind::Fallback { requested_goal } => {
                if requested_goal != goal {
                    return Some(format!(
                        "falls back from ({requested_goal}), not the goal ({goal})"
                    ));
                }
                if self.reachable(first, goal) {
                    return Some("falls back although the goal is reachable".into());
                }
                let Some(best) = self.fallback_distance(first, goal) else {
                    return Some(format!("starts at ({first}), not a valid point"));
                };
                let got = last.distance(goal);
                if (got - best).abs() > FALLBACK_TOLERANCE + TOLERANCE * best.max(1.0) {
                    return Some(format!(
                        "falls back to ({last}) at distance {got} from the goal; the closest \
                         reachable point is at distance {best}"
                    ));
                }
                if !self.reachable(first, last) {
                    return Some(format!(
                        "falls back to ({last}), outside the start's region"
                    ));
                }
            }
        }
        for (i, pair) in w.windows(2).enumerate() {
            if !line_of_sight(self.grid, pair[0], pair[1]) {
                return Some(format!(
                    "waypoints {i} ({}) and {} ({}) do not see each other",
                    pair[0],
                    i + 1,
                    pair[1]
                ));
            }
        }
        if let Some(why) = self.check_double_corners(w) {
            return Some(why);
        }
        let length: f64 = w.windows(2).map(|p| p[0].distance(p[1])).sum();
        if (length - path.length).abs() > TOLERANCE * length.max(1.0) {
            return Some(format!(
                "reports length {} but its waypoints give {length}",
                path.length
            ));
        }
        None
    }

    /// Checks that a path starts at `start`, or, if the planner says it moved
    /// an invalid start, that it did so from `start` to a valid point.
    fn check_start(&self, start: DVec2, first: DVec2, moved_from: Option<DVec2>) -> Option<String> {
        let Some(from) = moved_from else {
            return (first != start)
                .then(|| format!("starts at ({first}) instead of the start ({start})"));
        };
        if from != start {
            Some(format!(
                "says the start was moved from ({from}), not ({start})"
            ))
        } else if self.is_valid_point(start) {
            Some("moved a start that is a valid point".into())
        } else if !self.is_valid_point(first) {
            Some(format!("moved the start to ({first}), not a valid point"))
        } else {
            None
        }
    }

    /// The double-corner rules of `SPEC.md`: an end on a double corner leaves
    /// or arrives through the cell to its south-east; an interior waypoint on
    /// a double corner does not cross from one free cell to the other.
    fn check_double_corners(&self, w: &[DVec2]) -> Option<String> {
        let n = w.len();
        if n < 2 {
            return None;
        }
        for (i, &p) in w.iter().enumerate() {
            if p != p.floor() || !self.is_double_corner(p.x as i64, p.y as i64) {
                continue;
            }
            // The free cell the segment towards a neighbouring waypoint runs
            // through or along (an axis-parallel segment runs between two
            // cells, one of them blocked at a double corner).
            let (x, y) = (p.x as i64, p.y as i64);
            let span = |v: f64, c: i64| {
                if v > 0.0 {
                    c..=c
                } else if v < 0.0 {
                    c - 1..=c - 1
                } else {
                    c - 1..=c
                }
            };
            let side = |q: DVec2| {
                let d = q - p;
                let mut cells = span(d.y, y).flat_map(|cy| span(d.x, x).map(move |cx| (cx, cy)));
                let free = cells.clone().find(|&(cx, cy)| self.grid.is_free_xy(cx, cy));
                free.or_else(|| cells.next()).unwrap_or((x, y))
            };
            let sides: Vec<_> = [i.checked_sub(1), (i + 1 < n).then_some(i + 1)]
                .into_iter()
                .flatten()
                .map(|j| side(w[j]))
                .collect();
            let ok = if i == 0 || i == n - 1 {
                sides.iter().all(|&s| s == (x, y))
            } else {
                sides[0] == sides[1]
            };
            if !ok {
                let role = match i {
                    0 => "the start leaves",
                    _ if i == n - 1 => "the goal is reached",
                    _ => "the path crosses",
                };
                return Some(format!(
                    "{role} through the wrong side of the double corner ({p}) (waypoint {i})"
                ));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Grid {
        // Vertex (2, 2) is a double corner; the right column joins the two
        // free cells touching there. Cell (0, 3) is cut off from the rest.
        Grid::from_ascii(
            "....
             ..#.
             ##..
             .#..",
        )
        .unwrap()
    }

    fn path(points: &[(f64, f64)], kind: PathKind) -> Path {
        let waypoints: Vec<DVec2> = points.iter().map(|&(x, y)| DVec2::new(x, y)).collect();
        let length = waypoints.windows(2).map(|p| p[0].distance(p[1])).sum();
        Path {
            waypoints,
            length,
            cost: length,
            kind,
            start_moved_from: None,
            stats: SearchStats::default(),
        }
    }

    fn v(x: f64, y: f64) -> DVec2 {
        DVec2::new(x, y)
    }

    #[test]
    fn accepts_a_shortest_path_around_a_double_corner() {
        let g = grid();
        let val = Validator::new(&g);
        let p = path(&[(1.0, 1.0), (3.0, 1.0), (3.0, 3.0)], PathKind::Found);
        assert_eq!(val.check_path(v(1.0, 1.0), v(3.0, 3.0), &p), None);
    }

    #[test]
    fn rejects_squeezing_through_a_double_corner() {
        let g = grid();
        let val = Validator::new(&g);
        let p = path(&[(1.0, 1.0), (3.0, 3.0)], PathKind::Found);
        assert!(val.check_path(v(1.0, 1.0), v(3.0, 3.0), &p).is_some());
        // Two legs meeting at the double corner cross it just the same.
        let p = path(&[(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)], PathKind::Found);
        let why = val.check_path(v(1.0, 1.0), v(3.0, 3.0), &p).unwrap();
        assert!(why.contains("double corner"), "{why}");
    }

    #[test]
    fn a_start_on_a_double_corner_leaves_south_east() {
        let g = grid();
        let val = Validator::new(&g);
        let p = path(&[(2.0, 2.0), (1.0, 1.0)], PathKind::Found);
        let why = val.check_path(v(2.0, 2.0), v(1.0, 1.0), &p).unwrap();
        assert!(why.contains("start leaves"), "{why}");
        let p = path(
            &[(2.0, 2.0), (3.0, 2.0), (3.0, 1.0), (1.0, 1.0)],
            PathKind::Found,
        );
        assert_eq!(val.check_path(v(2.0, 2.0), v(1.0, 1.0), &p), None);
    }

    #[test]
    fn rejects_wrong_ends_lengths_and_blocked_legs() {
        let g = grid();
        let val = Validator::new(&g);
        let (s, t) = (v(0.5, 0.5), v(3.5, 3.5));
        let good = path(&[(0.5, 0.5), (3.0, 1.0), (3.5, 3.5)], PathKind::Found);
        assert_eq!(val.check_path(s, t, &good), None);
        let mut bad = good.clone();
        bad.length += 0.1;
        assert!(val.check_path(s, t, &bad).unwrap().contains("length"));
        assert!(
            val.check_path(v(0.5, 1.5), t, &good)
                .unwrap()
                .contains("starts at")
        );
        assert!(
            val.check_path(s, v(3.5, 2.5), &good)
                .unwrap()
                .contains("ends at")
        );
        let through = path(&[(0.5, 0.5), (3.5, 3.5)], PathKind::Found);
        assert!(
            val.check_path(s, t, &through)
                .unwrap()
                .contains("do not see")
        );
    }

    #[test]
    fn unreachable_and_fallback_answers() {
        let g = grid();
        let val = Validator::new(&g);
        let (s, cut_off) = (v(0.5, 0.5), v(0.5, 3.5));
        assert!(!val.reachable(s, cut_off));
        assert_eq!(val.check_unreachable(s, cut_off, v(0.5, 2.0)), None);
        assert!(val.check_unreachable(s, v(3.5, 3.5), v(3.5, 3.5)).is_some());
        assert!(val.check_unreachable(s, cut_off, v(3.0, 3.0)).is_some());
        let requested_goal = cut_off;
        let fallback = path(
            &[(0.5, 0.5), (0.5, 2.0)],
            PathKind::Fallback { requested_goal },
        );
        assert_eq!(val.check_path(s, cut_off, &fallback), None);
        let far = path(
            &[(0.5, 0.5), (1.5, 0.5)],
            PathKind::Fallback { requested_goal },
        );
        assert!(
            val.check_path(s, cut_off, &far)
                .unwrap()
                .contains("closest")
        );
    }

    #[test]
    fn valid_points() {
        let g = grid();
        let val = Validator::new(&g);
        assert!(
            val.is_valid_point(v(2.0, 2.0)),
            "double corner, free south-east cell"
        );
        assert!(!val.is_valid_point(v(2.5, 1.5)), "inside an obstacle");
        assert!(!val.is_valid_point(v(4.5, 0.5)), "outside");
        assert!(
            val.is_valid_point(v(4.0, 4.0)),
            "the bottom-right vertex of a free cell"
        );
    }
}
