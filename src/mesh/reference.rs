//! Brute-force references for meshes of agents of a radius, shared by the tests and `examples/radius.rs`: the distance to the walls, and where a disc fits on a fine lattice.
//!
//! A grid is given by its size and `blocked(x, y)` (true for blocked cells;
//! cells outside the size count as blocked whatever it says), so that the
//! file compiles inside the crate and beside it.

use bevy_math::DVec2;

/// Distance from `p` to the nearest blocked cell or the outside of a grid
/// of `size` cells, or `cap` if that is farther.
pub fn wall_distance_below(
    size: (u32, u32),
    blocked: &impl Fn(i64, i64) -> bool,
    p: DVec2,
    cap: f64,
) -> f64 {
    let (w, h) = (f64::from(size.0), f64::from(size.1));
    let best = p.x.min(w - p.x).min(p.y).min(h - p.y).clamp(0.0, cap);
    let mut best2 = best * best;
    let reach = best.ceil() as i64 + 1;
    let (cx, cy) = (p.x.floor() as i64, p.y.floor() as i64);
    let inside =
        |x: i64, y: i64| x >= 0 && y >= 0 && x < i64::from(size.0) && y < i64::from(size.1);
    for y in cy - reach..=cy + reach {
        let dy = (y as f64 - p.y).max(p.y - (y + 1) as f64).max(0.0);
        if dy * dy >= best2 {
            continue;
        }
        for x in cx - reach..=cx + reach {
            if inside(x, y) && blocked(x, y) {
                let dx = (x as f64 - p.x).max(p.x - (x + 1) as f64).max(0.0);
                best2 = best2.min(dx * dx + dy * dy);
            }
        }
    }
    best2.sqrt()
}

/// Where a disc of radius `r` can go, on the lattice of spacing `1 / k`: a
/// component number per lattice point (row by row, `size.0 * k + 1` points
/// a row), 0 where the disc does not fit. Points are joined to their four
/// neighbours; a disc moving between two where it fits keeps at least
/// `r - 1 / (2k)` from every wall.
pub fn lattice_components(
    size: (u32, u32),
    blocked: &impl Fn(i64, i64) -> bool,
    r: f64,
    k: u32,
) -> Vec<u32> {
    let (w, h) = (size.0 * k + 1, size.1 * k + 1);
    let fits: Vec<bool> = (0..w * h)
        .map(|i| {
            let p = DVec2::new(f64::from(i % w), f64::from(i / w)) / f64::from(k);
            wall_distance_below(size, blocked, p, r + 1.0) >= r
        })
        .collect();
    let mut label = vec![0u32; (w * h) as usize];
    let (mut next, mut stack) = (0, Vec::new());
    for i in 0..w * h {
        if !fits[i as usize] || label[i as usize] != 0 {
            continue;
        }
        next += 1;
        label[i as usize] = next;
        stack.push(i);
        while let Some(j) = stack.pop() {
            let (x, y) = (j % w, j / w);
            let around = [
                (x > 0).then(|| j - 1),
                (x + 1 < w).then(|| j + 1),
                (y > 0).then(|| j - w),
                (y + 1 < h).then(|| j + w),
            ];
            for n in around.into_iter().flatten() {
                if fits[n as usize] && label[n as usize] == 0 {
                    label[n as usize] = next;
                    stack.push(n);
                }
            }
        }
    }
    label
}
