//! The walls of a grid as a disc meets them: half-planes from nearby blocked cells, and the safe step.
//!
//! A blocked cell `(x, y)` is the closed square `[x, x + 1] x [y, y + 1]`;
//! everything outside the grid is blocked. A disc of radius `r` centred at
//! `p` keeps clear of the walls when `p` is at distance at least `r` from
//! every blocked square.
//!
//! [`wall_planes`] turns the nearest blocked squares into the hard
//! half-planes of the velocity program. [`safe_step`] is the guarantee
//! behind it: it cuts a displacement where the swept disc would first come
//! closer than `r + SKIN` to a blocked square (computed exactly, up to
//! rounding that `SKIN` absorbs, and checked again with the exact distance
//! between the swept segment and each square), then slides the rest along
//! the wall it met, and keeps the straight way to the end of the slide
//! when that way is clear too. A disc touching a wall (within `2 SKIN` of
//! its radius) may move where it keeps its radius plus `SKIN / 8`, or
//! away from the wall.

use bevy_math::DVec2;

use super::lp::HalfPlane;
use crate::geom::{cell_distance, closest_in_cell, segment_distance};
use crate::grid::Grid;
use crate::los::line_of_sight;

/// The clearance kept beyond the radius, so that rounding in later
/// arithmetic cannot bring a disc closer than its radius.
pub(crate) const SKIN: f64 = 1e-9;

/// How many wall half-planes a disc gets at most.
pub(crate) const MAX_WALL_PLANES: usize = 8;

/// Halvings of a point's step in search of the longest visible prefix.
const POINT_HALVINGS: u32 = 24;

/// Whether segment `a-b` meets the closed box `[low, high]`.
fn segment_meets_box(a: DVec2, b: DVec2, low: DVec2, high: DVec2) -> bool {
    slab_entry(a, b - a, low, high).is_some()
}

/// The exact distance between segment `a-b` and cell `(x, y)`'s square:
/// zero when they meet, otherwise attained at an end of the segment or at a
/// corner of the square.
pub(crate) fn segment_cell_distance(a: DVec2, b: DVec2, x: i64, y: i64) -> f64 {
    let low = DVec2::new(x as f64, y as f64);
    let high = low + DVec2::ONE;
    if segment_meets_box(a, b, low, high) {
        return 0.0;
    }
    let corners = [
        low,
        DVec2::new(high.x, low.y),
        DVec2::new(low.x, high.y),
        high,
    ];
    let mut best = cell_distance(a, x, y).min(cell_distance(b, x, y));
    for c in corners {
        best = best.min(segment_distance(c, a, b));
    }
    best
}

/// The first `t` in `[0, 1]` at which `p + t * s` lies in the closed box
/// `[low, high]`, if any.
fn slab_entry(p: DVec2, s: DVec2, low: DVec2, high: DVec2) -> Option<f64> {
    let (mut enter, mut leave) = (0.0_f64, 1.0_f64);
    for axis in 0..2 {
        let (pa, sa, lo, hi) = (p[axis], s[axis], low[axis], high[axis]);
        if sa == 0.0 {
            if pa < lo || pa > hi {
                return None;
            }
            continue;
        }
        let (t0, t1) = ((lo - pa) / sa, (hi - pa) / sa);
        let (t0, t1) = if t0 <= t1 { (t0, t1) } else { (t1, t0) };
        enter = enter.max(t0);
        leave = leave.min(t1);
        if enter > leave {
            return None;
        }
    }
    Some(enter)
}

/// The first `t` in `[0, 1]` at which `p + t * s` is within `reach` of
/// `centre`, if any.
fn circle_entry(p: DVec2, s: DVec2, centre: DVec2, reach: f64) -> Option<f64> {
    let from = p - centre;
    let a = s.length_squared();
    let c = from.length_squared() - reach * reach;
    if c <= 0.0 {
        return Some(0.0);
    }
    if a == 0.0 {
        return None;
    }
    let half_b = from.dot(s);
    if half_b >= 0.0 {
        return None;
    }
    let discriminant = half_b * half_b - a * c;
    if discriminant < 0.0 {
        return None;
    }
    // The smaller root, in the form that does not cancel.
    let t = c / (-half_b + discriminant.sqrt());
    (t <= 1.0).then_some(t.max(0.0))
}

/// The first `t` in `[0, 1]` at which `p + t * s` comes within `reach` of
/// cell `(x, y)`'s square (the square grown by a disc of radius `reach`: two
/// boxes and four corner circles), if any.
fn cell_entry(p: DVec2, s: DVec2, x: i64, y: i64, reach: f64) -> Option<f64> {
    let low = DVec2::new(x as f64, y as f64);
    let high = low + DVec2::ONE;
    let wide = slab_entry(
        p,
        s,
        low - DVec2::new(reach, 0.0),
        high + DVec2::new(reach, 0.0),
    );
    let tall = slab_entry(
        p,
        s,
        low - DVec2::new(0.0, reach),
        high + DVec2::new(0.0, reach),
    );
    let corners = [
        low,
        DVec2::new(high.x, low.y),
        DVec2::new(low.x, high.y),
        high,
    ];
    corners
        .into_iter()
        .filter_map(|c| circle_entry(p, s, c, reach))
        .chain(wide)
        .chain(tall)
        .reduce(f64::min)
}

/// The blocked cells near a disc: the cells of the box `centre +- reach`,
/// limited to the grid and the ring of outside cells around it.
#[inline]
fn cell_box(grid: &Grid, low: DVec2, high: DVec2) -> (i64, i64, i64, i64) {
    let (w, h) = (i64::from(grid.width()), i64::from(grid.height()));
    (
        (low.x.floor() as i64).max(-1),
        (low.y.floor() as i64).max(-1),
        (high.x.floor() as i64).min(w),
        (high.y.floor() as i64).min(h),
    )
}

/// Whether blocked cell `(x, y)` shares an edge with a free cell (the
/// others are hidden behind such cells).
#[inline]
fn on_the_surface(grid: &Grid, x: i64, y: i64) -> bool {
    grid.is_free_xy(x - 1, y)
        || grid.is_free_xy(x + 1, y)
        || grid.is_free_xy(x, y - 1)
        || grid.is_free_xy(x, y + 1)
}

/// Pushes onto `planes` the hard half-planes of the walls near a disc at
/// `p` of radius `radius`: for each of the [`MAX_WALL_PLANES`] nearest
/// distinct closest points `q` of blocked squares within
/// `radius + max_speed * horizon`, `v · n >= -d / horizon` with
/// `n = (p - q) / |p - q|` and `d = |p - q| - radius` (the farther ones
/// allow any velocity up to `max_speed`). `found` is reused memory.
pub(crate) fn wall_planes(
    grid: &Grid,
    p: DVec2,
    radius: f64,
    max_speed: f64,
    horizon: f64,
    found: &mut Vec<(f64, DVec2)>,
    planes: &mut Vec<HalfPlane>,
) {
    let reach = radius + max_speed * horizon;
    let (x0, y0, x1, y1) = cell_box(grid, p - reach, p + reach);
    found.clear();
    for y in y0..=y1 {
        for x in x0..=x1 {
            if grid.is_free_xy(x, y) {
                continue;
            }
            let q = closest_in_cell(p, x, y);
            let distance = p.distance(q);
            if distance >= reach || distance == 0.0 || !on_the_surface(grid, x, y) {
                continue;
            }
            if found.iter().any(|&(_, other)| other == q) {
                continue;
            }
            // Keep `found` sorted by distance and at most MAX_WALL_PLANES long.
            let at = found.partition_point(|&(d, _)| d <= distance);
            if at < MAX_WALL_PLANES {
                if found.len() == MAX_WALL_PLANES {
                    found.pop();
                }
                found.insert(at, (distance, q));
            }
        }
    }
    for &(distance, q) in found.iter() {
        planes.push(HalfPlane {
            normal: (p - q) / distance,
            offset: -(distance - radius) / horizon,
        });
    }
}

/// How far along `s` a disc at `p` may go, and the outward normal of the
/// wall that stops it (if one does).
fn sweep(grid: &Grid, p: DVec2, s: DVec2, radius: f64) -> (f64, Option<DVec2>) {
    let keep = radius + SKIN;
    let margin = keep + SKIN;
    let end = p + s;
    let (x0, y0, x1, y1) = cell_box(grid, p.min(end) - margin, p.max(end) + margin);
    let mut best = 1.0;
    let mut normal = None;
    for y in y0..=y1 {
        for x in x0..=x1 {
            if grid.is_free_xy(x, y) {
                continue;
            }
            let q = closest_in_cell(p, x, y);
            let start = p.distance(q);
            let (t, n) = if start < margin {
                // Touching already (or overlapping). The distance to a
                // convex square cannot fall along a direction that leaves
                // it; a disc that touches may also go where it keeps its
                // radius and a little more (along a wall); any other
                // direction is refused.
                let away = p - q;
                let leaves = start > 0.0
                    && s.dot(away) >= 0.0
                    && cell_distance(end, x, y) >= start.min(radius);
                let keeps =
                    start >= radius && segment_cell_distance(p, end, x, y) >= radius + 0.125 * SKIN;
                (
                    if leaves || keeps { 1.0 } else { 0.0 },
                    (start > 0.0).then(|| away / start),
                )
            } else {
                match cell_entry(p, s, x, y, keep) {
                    None => (1.0, None),
                    Some(t) => {
                        let contact = p + t * s;
                        let q = closest_in_cell(contact, x, y);
                        (t, Some((contact - q).normalize_or_zero()))
                    }
                }
            };
            // The exact distance of the kept segment to this square backs
            // the computation above up against rounding.
            let t = if t > 0.0
                && start >= margin
                && segment_cell_distance(p, p + t * s, x, y) < radius + 0.5 * SKIN
            {
                0.0
            } else {
                t
            };
            if t < best {
                best = t;
                normal = n;
            }
        }
    }
    (best, normal)
}

/// The displacement a disc of `radius` at `p` makes of the wanted
/// displacement `wanted`, such that the disc keeps at least `radius` from
/// every blocked square of `grid` all along the straight segment from `p`
/// to `p` plus it.
///
/// It goes as far along `wanted` as it may; if a wall stops it, the rest of
/// `wanted` slides along that wall, checked in the same way, and the step
/// is the straight way to the end of the slide, or as far along it as the
/// disc may go, or the first leg alone, whichever goes furthest.
///
/// A disc already closer than `radius` to some walls only moves in
/// directions that take it no closer to any of them. A disc of radius 0
/// moves along segments visible by [`line_of_sight`], its prefix found by
/// halving, its slide along one axis.
pub(crate) fn safe_step(grid: &Grid, p: DVec2, wanted: DVec2, radius: f64) -> DVec2 {
    let (first, slide) = legs(grid, p, wanted, radius);
    if slide == DVec2::ZERO {
        return first;
    }
    let whole = first + slide;
    let straight = if radius == 0.0 {
        visible_prefix(grid, p, whole)
    } else {
        whole * sweep(grid, p, whole, radius).0
    };
    if straight.length_squared() >= first.length_squared() {
        straight
    } else {
        first
    }
}

/// The two legs of [`safe_step`]: the prefix of `wanted`, then the slide.
fn legs(grid: &Grid, p: DVec2, wanted: DVec2, radius: f64) -> (DVec2, DVec2) {
    if radius == 0.0 {
        return point_legs(grid, p, wanted);
    }
    if !grid.contains_point(p) || wanted == DVec2::ZERO {
        return (DVec2::ZERO, DVec2::ZERO);
    }
    let (t, normal) = sweep(grid, p, wanted, radius);
    let first = wanted * t;
    let Some(normal) = normal.filter(|_| t < 1.0) else {
        return (first, DVec2::ZERO);
    };
    let rest = wanted - first;
    let into = rest.dot(normal);
    if into >= 0.0 {
        return (first, DVec2::ZERO);
    }
    let tangent = rest - into * normal;
    // A hair outwards, so that rounding cannot turn the tangent inwards
    // (and no longer than the tangent).
    let slide = tangent * (1.0 - 1e-6) + normal * (tangent.length() * 1e-6);
    if slide.length_squared() == 0.0 {
        return (first, DVec2::ZERO);
    }
    let (t, _) = sweep(grid, p + first, slide, radius);
    (first, slide * t)
}

/// [`legs`] for a point.
fn point_legs(grid: &Grid, p: DVec2, wanted: DVec2) -> (DVec2, DVec2) {
    if !grid.is_point_traversable(p) || !grid.contains_point(p) {
        return (DVec2::ZERO, DVec2::ZERO);
    }
    let first = visible_prefix(grid, p, wanted);
    let rest = wanted - first;
    if rest == DVec2::ZERO {
        return (first, DVec2::ZERO);
    }
    let from = p + first;
    let (major, minor) = if rest.x.abs() >= rest.y.abs() {
        (DVec2::new(rest.x, 0.0), DVec2::new(0.0, rest.y))
    } else {
        (DVec2::new(0.0, rest.y), DVec2::new(rest.x, 0.0))
    };
    for axis in [major, minor] {
        if axis != DVec2::ZERO {
            let slide = visible_prefix(grid, from, axis);
            if slide != DVec2::ZERO {
                return (first, slide);
            }
        }
    }
    (first, DVec2::ZERO)
}

/// The longest prefix `t * s` (`t` found by halving) with `p`, `p + t * s`
/// visible.
fn visible_prefix(grid: &Grid, p: DVec2, s: DVec2) -> DVec2 {
    if line_of_sight(grid, p, p + s) {
        return s;
    }
    let (mut low, mut high) = (0.0, 1.0);
    for _ in 0..POINT_HALVINGS {
        let mid = 0.5 * (low + high);
        if line_of_sight(grid, p, p + s * mid) {
            low = mid;
        } else {
            high = mid;
        }
    }
    s * low
}

#[cfg(test)]
/// The distance from `p` to the nearest blocked square of `grid` within
/// `limit` (or `limit` when none is that close).
pub(crate) fn wall_distance(grid: &Grid, p: DVec2, limit: f64) -> f64 {
    let (x0, y0, x1, y1) = cell_box(grid, p - limit, p + limit);
    let mut best = limit;
    for y in y0..=y1 {
        for x in x0..=x1 {
            if !grid.is_free_xy(x, y) {
                best = best.min(cell_distance(p, x, y));
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    fn uniform(rng: &mut Rng, low: f64, high: f64) -> f64 {
        low + (high - low) * f64::from(rng.below(1 << 20)) / f64::from(1 << 20)
    }

    #[test]
    fn segment_distance_matches_sampling() {
        let mut rng = Rng(0xD15C);
        for _ in 0..2000 {
            let a = DVec2::new(uniform(&mut rng, -2.0, 3.0), uniform(&mut rng, -2.0, 3.0));
            let b = DVec2::new(uniform(&mut rng, -2.0, 3.0), uniform(&mut rng, -2.0, 3.0));
            let exact = segment_cell_distance(a, b, 0, 0);
            let sampled = (0..=2000)
                .map(|i| cell_distance(a.lerp(b, f64::from(i) / 2000.0), 0, 0))
                .fold(f64::INFINITY, f64::min);
            assert!(exact <= sampled + 1e-12, "{a} {b}: {exact} > {sampled}");
            assert!(sampled - exact < 3e-3, "{a} {b}: {exact} << {sampled}");
        }
    }

    /// A 12 x 12 grid with random blocked cells inside an open frame.
    fn random_grid(rng: &mut Rng) -> Grid {
        let mut grid = Grid::new(12, 12).expect("a small grid");
        for _ in 0..25 {
            let cell = bevy_math::UVec2::new(rng.below(12), rng.below(12));
            grid.set_free(cell, false).expect("inside");
        }
        grid
    }

    /// The largest `t` (to 1/1000) up to which every sampled point of
    /// `p + t * s` is at least `radius` from the walls.
    fn sampled_reach(grid: &Grid, p: DVec2, s: DVec2, radius: f64) -> f64 {
        (0..=1000)
            .map(|i| f64::from(i) / 1000.0)
            .take_while(|&t| wall_distance(grid, p + s * t, 3.0) >= radius)
            .last()
            .unwrap_or(0.0)
    }

    #[test]
    fn safe_step_is_conservative_against_dense_sampling() {
        let mut rng = Rng(0x5AFE);
        let (mut cases, mut cut, mut slid) = (0, 0, 0);
        for _ in 0..200 {
            let grid = random_grid(&mut rng);
            for _ in 0..50 {
                let radius = uniform(&mut rng, 0.05, 0.9);
                let p = DVec2::new(uniform(&mut rng, 0.0, 12.0), uniform(&mut rng, 0.0, 12.0));
                if wall_distance(&grid, p, 2.0) < radius {
                    continue;
                }
                cases += 1;
                let wanted = DVec2::new(uniform(&mut rng, -2.0, 2.0), uniform(&mut rng, -2.0, 2.0));
                let (first, _) = legs(&grid, p, wanted, radius);
                let step = safe_step(&grid, p, wanted, radius);
                for i in 0..=4000 {
                    let q = p + step * (f64::from(i) / 4000.0);
                    let d = wall_distance(&grid, q, 3.0);
                    assert!(d >= radius, "{p} + {step}: {d} < {radius} at {q}");
                }
                // Not too short either: it reaches as far as sampling says
                // the first leg could, less the skin.
                let reach = sampled_reach(&grid, p, wanted, radius);
                assert!(
                    step.length() >= reach * wanted.length() - 1e-6,
                    "{p} + {wanted} (r {radius}): {step} stops short of {reach}"
                );
                assert!(step.length() >= first.length());
                slid += usize::from(step != first);
                cut += usize::from(reach < 1.0);
            }
        }
        assert!(
            cases > 4000 && cut > 1000 && slid > 1000,
            "{cases} cases, {cut} cut, {slid} slid"
        );
    }

    #[test]
    fn a_disc_driven_into_a_wall_stops_at_its_radius() {
        let grid = Grid::from_ascii(
            "....
             ....
             ####",
        )
        .expect("a picture");
        let mut p = DVec2::new(1.5, 0.5);
        for _ in 0..300 {
            p += safe_step(&grid, p, DVec2::new(0.01, 0.05), 0.4);
            assert!(wall_distance(&grid, p, 2.0) >= 0.4);
        }
        assert!((p.y - 1.6).abs() < 1e-6, "it reached the wall: {p}");
        assert!(
            p.x > 3.6 - 1e-6 && p.x <= 3.6,
            "and slid along it to the border: {p}"
        );
    }

    #[test]
    fn a_disc_overlapping_a_wall_only_moves_away() {
        let grid = Grid::from_ascii(
            "...
             .#.
             ...",
        )
        .expect("a picture");
        let p = DVec2::new(1.5, 0.8);
        assert_eq!(safe_step(&grid, p, DVec2::new(0.0, 0.1), 0.4), DVec2::ZERO);
        let up = safe_step(&grid, p, DVec2::new(0.05, -0.1), 0.4);
        assert_eq!(up, DVec2::new(0.05, -0.1));
    }

    #[test]
    fn points_keep_to_visible_segments() {
        let grid = Grid::from_ascii(
            "..#
             #..",
        )
        .expect("a picture");
        let p = DVec2::new(0.5, 0.5);
        let step = safe_step(&grid, p, DVec2::new(2.0, 0.0), 0.0);
        assert!((step - DVec2::new(1.5, 0.0)).length() < 1e-6, "{step}");
        assert!(line_of_sight(&grid, p, p + step));
        // Through the double corner (1, 1): refused, slides along x instead.
        let corner = safe_step(&grid, p, DVec2::new(1.0, 1.0), 0.0);
        assert!(line_of_sight(&grid, p, p + corner));
    }
}
