//! The crate's fast line of sight (`los::line_of_sight`, a cell walk) against
//! the plain one of `tests/common` (every grid-line crossing checked in exact
//! rational arithmetic): they must agree on every segment, and both must be
//! symmetric. Hand-made grids check the map border, edges between blocked
//! cells, double corners and touching a blocked cell's corner.

mod common;

use bevy_anyangle::los::line_of_sight;
use bevy_anyangle::prelude::*;
use common::Reference;
use common::generate::{Family, Rng, grid_of, random_grid};

fn v(x: f64, y: f64) -> DVec2 {
    DVec2::new(x, y)
}

/// Compares both line-of-sight checks on one segment, both ways; `None` if
/// the plain check cannot decide it exactly (then only symmetry is checked).
fn agree(grid: &Grid, r: &Reference, a: DVec2, b: DVec2) -> Result<Option<bool>, String> {
    let fast = line_of_sight(grid, a, b);
    if line_of_sight(grid, b, a) != fast {
        return Err(format!("line_of_sight is not symmetric on {a:?} - {b:?}"));
    }
    let Some(plain) = r.visible(a, b) else {
        return Ok(None);
    };
    if r.visible(b, a) != Some(plain) {
        return Err(format!(
            "reference: plain line of sight is not symmetric on {a:?} - {b:?}"
        ));
    }
    if fast != plain {
        return Err(format!(
            "line_of_sight says {fast}, the plain check {plain}, on {a:?} - {b:?}"
        ));
    }
    Ok(Some(plain))
}

/// Runs `segments` on many grids; panics with the first disagreements.
/// Returns (segments decided, visible ones).
fn run(
    seed: u64,
    grids: usize,
    mut segment: impl FnMut(&mut Rng, i64, i64) -> (DVec2, DVec2),
    per_grid: usize,
) -> (usize, usize) {
    let mut rng = Rng::new(seed);
    let mut failures = Vec::new();
    let (mut decided, mut visible) = (0, 0);
    for _ in 0..grids {
        let tg = random_grid(&mut rng, 16);
        let r = Reference::new(&tg.grid);
        for _ in 0..per_grid {
            let (a, b) = segment(&mut rng, r.width(), r.height());
            match agree(&tg.grid, &r, a, b) {
                Ok(Some(vis)) => {
                    decided += 1;
                    visible += usize::from(vis);
                }
                Err(e) if failures.len() < 5 => failures.push(format!("{e}\non\n{}", tg.picture)),
                Ok(None) | Err(_) => {}
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    (decided, visible)
}

/// A multiple of 1/2 in `[-1, side + 1]`.
fn half(rng: &mut Rng, side: i64) -> f64 {
    rng.range(-2, 2 * side + 2) as f64 / 2.0
}

#[test]
fn agrees_on_vertices_and_cell_centres_and_edge_midpoints() {
    // 400 grids x 400 segments = 160,000 segments, endpoints on the 1/2
    // lattice, the border and up to one cell outside.
    let (decided, visible) = run(
        0x105_0001,
        400,
        |rng, w, h| (v(half(rng, w), half(rng, h)), v(half(rng, w), half(rng, h))),
        400,
    );
    assert_eq!(decided, 160_000);
    assert!(
        visible > decided / 10,
        "too few visible segments: {visible} of {decided}"
    );
}

#[test]
fn agrees_on_every_vertex_pair_of_small_grids() {
    let mut rng = Rng::new(0x105_0002);
    let mut checked = 0;
    for i in 0..60 {
        let family = Family::ALL[i % Family::ALL.len()];
        let (w, h) = (rng.range(1, 8), rng.range(1, 8));
        let tg = grid_of(&mut rng, family, w, h);
        let r = Reference::new(&tg.grid);
        for ax in 0..=w {
            for ay in 0..=h {
                for bx in 0..=w {
                    for by in 0..=h {
                        let (a, b) = (v(ax as f64, ay as f64), v(bx as f64, by as f64));
                        agree(&tg.grid, &r, a, b)
                            .unwrap_or_else(|e| panic!("{e}\non\n{}", tg.picture));
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 50_000, "{checked}");
}

#[test]
fn agrees_on_dyadic_float_points() {
    // Multiples of 2^-k for k up to 45: exact for the plain check.
    let (decided, _) = run(
        0x105_0003,
        300,
        |rng, w, h| {
            let k = *rng.pick(&[3, 10, 20, 30, 45]);
            let mut p = || {
                let scale = (1u64 << k) as f64;
                let x = rng.range(-(1 << 20), (w + 1) << 20) as f64 / f64::from(1u32 << 20);
                let y = rng.range(-(1 << 20), (h + 1) << 20) as f64 / f64::from(1u32 << 20);
                // Keep k bits of fraction (rounding small negatives gives
                // -0.0, which is 0).
                v((x * scale).round() / scale, (y * scale).round() / scale)
            };
            (p(), p())
        },
        300,
    );
    assert_eq!(decided, 90_000);
}

#[test]
fn agrees_on_uniform_random_float_points() {
    // Any f64 in the grid; the plain check decides those whose coordinates
    // are multiples of 2^-56 (all but points very close to 0).
    let (decided, _) = run(
        0x105_0004,
        300,
        |rng, w, h| {
            let mut p = || {
                v(
                    rng.unit() * (w as f64 + 0.5) - 0.25,
                    rng.unit() * (h as f64 + 0.5) - 0.25,
                )
            };
            (p(), p())
        },
        300,
    );
    assert!(
        decided >= 85_000,
        "only {decided} of 90,000 decided exactly"
    );
}

#[test]
fn agrees_on_segments_through_or_just_past_vertices() {
    // b lies on the line from a through a vertex c, exactly or 2^-40 off it:
    // the cases where a walk must decide which side of a corner it passes.
    let (decided, visible) = run(
        0x105_0005,
        400,
        |rng, w, h| {
            let lattice = |rng: &mut Rng, side: i64| rng.range(0, side << 10) as f64 / 1024.0;
            let a = v(lattice(rng, w), lattice(rng, h));
            let c = v(rng.range(0, w) as f64, rng.range(0, h) as f64);
            let lambda = *rng.pick(&[0.5, 1.0, 1.5, 2.0, 0.25]);
            let mut b = c + (c - a) * lambda;
            let eps = 2f64.powi(-40);
            match rng.below(5) {
                0 => b.x += eps,
                1 => b.x -= eps,
                2 => b.y += eps,
                3 => b.y -= eps,
                _ => {}
            }
            (a, b)
        },
        250,
    );
    assert!(decided >= 99_000, "{decided}");
    assert!(visible > decided / 20, "{visible}");
}

/// Regression: -0.0 is the real number 0, but the walk orders
/// coordinates with `total_cmp`, which puts -0.0 below 0.0: the segment
/// along the top border from (0.875, 0) to (2.75, -0.0) is walked as if it
/// climbed into row -1, and is reported blocked (in debug builds a planner
/// can hit the walk's "overshot its end cell" assertion instead).
#[test]
fn negative_zero_is_zero() {
    let g = Grid::from_ascii(
        "...
         .#.
         .#.
         ###",
    )
    .unwrap();
    let r = Reference::new(&g);
    let (a, b) = (v(0.875, 0.0), v(2.75, -0.0));
    assert_eq!(r.visible(a, b), Some(true));
    assert!(line_of_sight(&g, a, v(2.75, 0.0)));
    assert!(line_of_sight(&g, a, b), "the top border, free cells below");
    assert!(line_of_sight(&g, b, a));
    assert!(line_of_sight(&g, v(-0.0, 0.5), v(0.0, 2.5)));
}

#[test]
fn non_finite_points_are_never_visible() {
    let g = Grid::new(4, 4).unwrap();
    let r = Reference::new(&g);
    for bad in [
        v(f64::NAN, 1.0),
        v(1.0, f64::INFINITY),
        v(f64::NEG_INFINITY, 0.0),
    ] {
        assert!(!line_of_sight(&g, bad, v(1.0, 1.0)));
        assert!(!line_of_sight(&g, v(1.0, 1.0), bad));
        assert_eq!(r.visible(bad, v(1.0, 1.0)), Some(false));
    }
}

/// The bullets of `SPEC.md`, "Traversable points and visible segments", on
/// both checks.
#[test]
fn follows_the_spec_bullets() {
    let g = Grid::from_ascii(
        "....
         .#..
         .##.
         ...#",
    )
    .unwrap();
    let r = Reference::new(&g);
    let both = |a: DVec2, b: DVec2| {
        let plain = r.visible(a, b).unwrap();
        assert_eq!(line_of_sight(&g, a, b), plain, "{a} - {b}");
        plain
    };
    // May run along the edge of a blocked cell, or touch a blocked cell's corner.
    assert!(both(v(1.0, 1.0), v(2.0, 1.0)), "top edge of (1, 1)");
    assert!(
        both(v(0.0, 2.0), v(2.0, 0.0)),
        "touches cell (1, 1) at its corner (1, 1)"
    );
    assert!(
        both(v(1.0, 0.0), v(3.0, 2.0)),
        "touches cell (1, 1) at its corner (2, 1)"
    );
    // May not cross a blocked cell's interior.
    assert!(!both(v(0.5, 0.5), v(2.5, 2.5)));
    assert!(!both(v(0.0, 1.5), v(4.0, 1.5)));
    // May not run along an edge shared by two blocked cells, nor along the
    // border next to a blocked cell.
    assert!(
        !both(v(2.0, 1.5), v(2.0, 3.0)),
        "x = 2 between (1, 2) and (2, 2)"
    );
    assert!(
        !both(v(1.0, 2.0), v(3.0, 2.0)),
        "y = 2 between (1, 1) and (1, 2)"
    );
    assert!(
        both(v(2.0, 1.0), v(2.0, 2.0)),
        "x = 2 between (1, 1) and the free (2, 1)"
    );
    assert!(!both(v(4.0, 3.0), v(4.0, 4.0)), "the border next to (3, 3)");
    assert!(
        both(v(4.0, 0.0), v(4.0, 3.0)),
        "the border next to free cells"
    );
    assert!(!both(v(4.0, 0.0), v(4.0, 4.0)));
    // May not pass through a double corner: (3, 3) has (2, 2) and (3, 3) blocked.
    assert!(r.is_double_corner(3, 3));
    assert!(!both(v(2.5, 3.5), v(3.5, 2.5)));
    assert!(
        !both(v(2.0, 3.0), v(4.0, 3.0)),
        "along y = 3 through (3, 3)"
    );
    assert!(both(v(2.5, 3.5), v(3.0, 3.0)), "ending at it is fine");
    // Outside the grid nothing is traversable.
    assert!(!both(v(-0.5, 0.5), v(0.5, 0.5)));
    assert!(!both(v(0.0, -0.0001), v(1.0, 0.0)));
    assert!(
        both(v(0.0, 0.0), v(4.0, 0.0)),
        "the top border, free cells below"
    );
    // A zero-length segment is visible iff its point is traversable.
    assert!(both(v(1.0, 1.0), v(1.0, 1.0)));
    assert!(!both(v(1.5, 1.5), v(1.5, 1.5)));
    assert!(
        both(v(2.0, 2.0), v(2.0, 2.0)),
        "vertex with one free cell (2, 1)"
    );
}

#[test]
fn border_edges_are_walkable_but_not_outside() {
    let g = Grid::new(3, 3).unwrap();
    assert!(line_of_sight(&g, v(0.0, 0.0), v(3.0, 0.0)));
    assert!(line_of_sight(&g, v(0.0, 0.0), v(0.0, 3.0)));
    assert!(line_of_sight(&g, v(0.0, 0.0), v(3.0, 3.0)));
    assert!(!line_of_sight(&g, v(0.0, 0.0), v(3.1, 0.0)));
    assert!(!line_of_sight(&g, v(-0.5, 0.0), v(1.0, 0.0)));
}

#[test]
fn edges_between_two_blocked_cells_are_not() {
    let g = Grid::from_ascii("...\n##.\n##.\n").unwrap();
    assert!(
        line_of_sight(&g, v(0.0, 1.0), v(2.0, 1.0)),
        "free cells above"
    );
    assert!(
        !line_of_sight(&g, v(1.0, 1.0), v(1.0, 3.0)),
        "between the two blocked columns"
    );
    assert!(
        line_of_sight(&g, v(2.0, 1.0), v(2.0, 3.0)),
        "free cells to the right"
    );
    assert!(!line_of_sight(&g, v(0.0, 2.0), v(2.0, 2.0)));
}

#[test]
fn double_corners_block_straight_and_diagonal_passage() {
    let g = Grid::from_ascii(".#.\n#..\n...").unwrap();
    // (1, 1) is a double corner: (0,0),(1,1) free, (1,0),(0,1) blocked.
    assert!(g.is_double_corner(1, 1));
    assert!(!line_of_sight(&g, v(0.0, 0.0), v(2.0, 2.0)));
    assert!(!line_of_sight(&g, v(0.5, 0.5), v(1.5, 1.5)));
    assert!(
        line_of_sight(&g, v(0.5, 0.5), v(1.0, 1.0)),
        "ending at it is fine"
    );
    assert!(line_of_sight(&g, v(1.0, 1.0), v(2.0, 2.0)));
    // Along grid line y = 1 through the double corner.
    assert!(!line_of_sight(&g, v(0.5, 1.0), v(1.5, 1.0)));
    // Along x = 1.
    assert!(!line_of_sight(&g, v(1.0, 0.5), v(1.0, 1.5)));
}

#[test]
fn touching_a_blocked_corner_is_fine() {
    let g = Grid::from_ascii("...\n.#.\n...").unwrap();
    assert!(line_of_sight(&g, v(0.0, 3.0), v(1.0, 2.0)));
    assert!(
        line_of_sight(&g, v(0.0, 2.0), v(2.0, 0.0)),
        "touches the corner (1, 1)"
    );
    assert!(line_of_sight(&g, v(0.0, 0.0), v(1.0, 1.0)));
    assert!(line_of_sight(&g, v(0.0, 2.0), v(1.0, 1.0)));
    assert!(!line_of_sight(&g, v(1.0, 2.0), v(2.0, 1.0)));
    assert!(
        line_of_sight(&g, v(0.0, 1.0), v(3.0, 1.0)),
        "along the top edge"
    );
}
