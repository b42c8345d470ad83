//! Edits checked against grids built in one go from the same picture (cells,
//! columns, vertex table, regions), and snapshots checked for independence.

use std::collections::HashMap;

use bevy_math::{URect, UVec2};

use super::{Grid, RegionId};
use crate::test_rng::Rng;

/// The grid's picture, as `Grid::from_ascii` reads it.
fn picture(g: &Grid) -> String {
    (0..i64::from(g.height()))
        .map(|y| {
            let row: String = (0..i64::from(g.width()))
                .map(|x| if g.is_free_xy(x, y) { '.' } else { '#' })
                .collect();
            row + "\n"
        })
        .collect()
}

/// A `width x height` grid with about `percent` % of its cells blocked.
fn random_grid(rng: &mut Rng, width: u32, height: u32, percent: u32) -> Grid {
    let text: String = (0..height)
        .map(|_| {
            let row: String = (0..width)
                .map(|_| if rng.below(100) < percent { '#' } else { '.' })
                .collect();
            row + "\n"
        })
        .collect();
    Grid::from_ascii(&text).unwrap()
}

/// `g` holds what a fresh build from its picture holds: the same cells (rows
/// and columns), vertex table and regions (up to renaming).
fn assert_like_fresh(g: &Grid, context: &str) {
    let fresh = Grid::from_ascii(&picture(g)).unwrap();
    assert!(*g == fresh, "{context}: cells");
    assert_eq!(g.cols, fresh.cols, "{context}: columns");
    assert_eq!(g.vertex_info, fresh.vertex_info, "{context}: vertex table");
    assert_eq!(g.region_count(), fresh.region_count(), "{context}: count");
    // The same partition: labels map one to one.
    let (mut there, mut back) = (HashMap::new(), HashMap::new());
    for y in 0..i64::from(g.height()) {
        for x in 0..i64::from(g.width()) {
            let (a, b) = (g.region(x, y), fresh.region(x, y));
            assert_eq!(a.is_some(), g.is_free_xy(x, y), "{context}: ({x}, {y})");
            let (Some(a), Some(b)) = (a, b) else {
                assert_eq!(a, b, "{context}: ({x}, {y})");
                continue;
            };
            assert_eq!(*there.entry(a).or_insert(b), b, "{context}: ({x}, {y})");
            assert_eq!(*back.entry(b).or_insert(a), a, "{context}: ({x}, {y})");
        }
    }
    assert_eq!(there.len() as u32, g.region_count(), "{context}: labels");
}

/// A random rectangle of `g`: mostly small, sometimes a thin wall.
fn random_rect(rng: &mut Rng, g: &Grid) -> URect {
    let (w, h) = (g.width(), g.height());
    let (x, y) = (rng.below(w), rng.below(h));
    let (rw, rh) = match rng.below(6) {
        0 => (1, 1 + rng.below(h)),
        1 => (1 + rng.below(w), 1),
        _ => (1 + rng.below(5), 1 + rng.below(5)),
    };
    URect::new(x, y, (x + rw).min(w), (y + rh).min(h))
}

#[test]
fn random_edits_match_a_fresh_build() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for (width, height, steps) in [
        (40, 30, 300),
        (64, 64, 200),
        (65, 129, 200),
        (130, 70, 200),
        (300, 200, 120),
    ] {
        for percent in [20, 45] {
            let mut g = random_grid(&mut rng, width, height, percent);
            assert_like_fresh(&g, "built");
            for step in 0..steps {
                let context = format!("{width} x {height}, {percent} %, step {step}");
                match rng.below(4) {
                    0 => {
                        let cell = UVec2::new(rng.below(width), rng.below(height));
                        g.set_free(cell, rng.below(2) == 0).unwrap();
                    }
                    1 | 2 => {
                        let rect = random_rect(&mut rng, &g);
                        g.set_rect_free(rect, rng.below(3) == 0).unwrap();
                    }
                    _ => {
                        let n = 1 + rng.below(20);
                        let edits: Vec<_> = (0..n)
                            .map(|_| (random_rect(&mut rng, &g), rng.below(2) == 0))
                            .collect();
                        g.edit(|e| {
                            for &(rect, free) in &edits {
                                e.set_rect_free(rect, free)?;
                            }
                            Ok(())
                        })
                        .unwrap();
                    }
                }
                assert_like_fresh(&g, &context);
            }
        }
    }
}

#[test]
fn random_edits_on_a_game_map_match_a_fresh_build() {
    let text = include_str!("../../data/maps/den520d.map");
    let mut g = Grid::from_movingai(text).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for step in 0..60 {
        let rect = random_rect(&mut rng, &g);
        g.set_rect_free(rect, step % 3 == 0).unwrap();
        assert_like_fresh(&g, &format!("den520d, step {step}"));
    }
}

/// A corridor three cells high along the whole width of a blocked grid,
/// crossing several tiles.
fn corridor() -> Grid {
    let mut g = Grid::new_blocked(200, 50).unwrap();
    g.set_rect_free(URect::new(0, 20, 200, 23), true).unwrap();
    assert_eq!(g.region_count(), 1);
    g
}

#[test]
fn a_wall_across_a_corridor_splits_and_merges_it() {
    let mut g = corridor();
    let (west, east) = (UVec2::new(0, 21), UVec2::new(199, 22));
    for x in [130, 64, 63, 1] {
        let wall = URect::new(x, 20, x + 1, 23);
        g.set_rect_free(wall, false).unwrap();
        assert_eq!(g.region_count(), 2, "wall at {x}");
        assert!(!g.same_region(west, east));
        assert!(g.same_region(west, UVec2::new(x - 1, 20)));
        assert!(g.same_region(east, UVec2::new(x + 1, 20)));
        assert_like_fresh(&g, &format!("wall at {x}"));
        g.set_rect_free(wall, true).unwrap();
        assert_eq!(g.region_count(), 1, "wall at {x} removed");
        assert!(g.same_region(west, east));
        assert_like_fresh(&g, &format!("wall at {x} removed"));
    }
}

#[test]
fn a_door_toggled_many_times_keeps_labels_exact() {
    let mut g = corridor();
    // A wall with a door at (100, 21); a pocket in the west half.
    g.set_rect_free(URect::new(100, 20, 101, 23), false)
        .unwrap();
    g.set_rect_free(URect::new(10, 30, 14, 34), true).unwrap();
    let door = UVec2::new(100, 21);
    let (west, east) = (UVec2::new(0, 20), UVec2::new(199, 22));
    for i in 0..100 {
        let open = i % 2 == 0;
        assert!(g.set_free(door, open).unwrap());
        assert_eq!(g.same_region(west, east), open, "toggle {i}");
        assert_eq!(g.region_count(), if open { 2 } else { 3 }, "toggle {i}");
        if i % 10 < 2 {
            assert_like_fresh(&g, &format!("toggle {i}"));
        }
    }
}

#[test]
fn cutting_a_winding_corridor_in_the_middle_splits_it() {
    // A serpentine corridor through many tiles: rows 2, 6, 10, ... joined
    // at alternate ends.
    let (w, h) = (150u32, 150u32);
    let mut g = Grid::new_blocked(w, h).unwrap();
    let mut y = 2;
    let mut east_end = true;
    while y + 4 < h {
        g.set_rect_free(URect::new(1, y, w - 1, y + 1), true)
            .unwrap();
        let x = if east_end { w - 2 } else { 1 };
        g.set_rect_free(URect::new(x, y, x + 1, y + 5), true)
            .unwrap();
        east_end = !east_end;
        y += 4;
    }
    g.set_rect_free(URect::new(1, y, w - 1, y + 1), true)
        .unwrap();
    assert_eq!(g.region_count(), 1);
    let (first, last) = (UVec2::new(1, 2), UVec2::new(w / 2, y));
    for (cut, free) in [
        (UVec2::new(70, 70), false),
        (UVec2::new(70, 70), true),
        (UVec2::new(w - 2, 36), false),
        (UVec2::new(20, 130), false),
        (UVec2::new(w - 2, 36), true),
        (UVec2::new(20, 130), true),
    ] {
        g.set_free(cut, free).unwrap();
        assert_like_fresh(&g, &format!("{cut} free: {free}"));
    }
    assert!(g.same_region(first, last));
    g.set_free(UVec2::new(70, 70), false).unwrap();
    assert!(!g.same_region(first, last));
    assert_eq!(g.region_count(), 2);
    assert_like_fresh(&g, "cut at (70, 70)");
}

/// Everything a reader of a grid can see, cell by cell and vertex by vertex.
#[derive(PartialEq)]
struct Reading {
    version: u64,
    cells: Vec<(bool, Option<RegionId>)>,
    vertices: Vec<u16>,
}

fn observe(g: &Grid) -> Reading {
    Reading {
        version: g.version(),
        cells: (0..i64::from(g.height()))
            .flat_map(|y| (0..i64::from(g.width())).map(move |x| (x, y)))
            .map(|(x, y)| (g.is_free_xy(x, y), g.region(x, y)))
            .collect(),
        vertices: (0..=i64::from(g.height()))
            .flat_map(|y| (0..=i64::from(g.width())).map(move |x| g.vertex_info(x, y)))
            .collect(),
    }
}

#[test]
fn a_clone_and_its_original_are_independent() {
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    let original = random_grid(&mut rng, 150, 140, 40);
    let seen = observe(&original);
    // Edit the clone: the original reads as before.
    let mut copy = original.clone();
    assert_eq!(copy.unshared_chunks(&original), (0, 0));
    for _ in 0..30 {
        let rect = random_rect(&mut rng, &copy);
        copy.set_rect_free(rect, rng.below(2) == 0).unwrap();
    }
    assert!(copy.version() > original.version());
    assert!(observe(&original) == seen);
    assert_like_fresh(&original, "original after edits of its clone");
    assert_like_fresh(&copy, "edited clone");
    // And the other way round.
    let mut original = original;
    let copy_seen = observe(&copy);
    let copy_of_copy = copy.clone();
    for _ in 0..30 {
        let rect = random_rect(&mut rng, &original);
        original.set_rect_free(rect, rng.below(2) == 0).unwrap();
    }
    assert!(observe(&copy) == copy_seen);
    assert!(observe(&copy_of_copy) == copy_seen);
    assert_like_fresh(&copy, "clone after edits of the original");
}

#[test]
fn an_edit_of_a_huge_shared_grid_copies_few_chunks() {
    // Open space with a small closed pocket at (1001..1003, 2001..2003) and a
    // wall with a one-cell door at (5000, 4000).
    let mut g = Grid::new(8192, 8192).unwrap();
    g.edit(|e| {
        e.set_rect_free(URect::new(1000, 2000, 1004, 2004), false)?;
        e.set_rect_free(URect::new(1001, 2001, 1003, 2003), true)?;
        e.set_rect_free(URect::new(5000, 0, 5001, 8192), false)?;
        e.set_free(UVec2::new(5000, 4000), true)
    })
    .unwrap();
    assert_eq!(g.region_count(), 2);
    let cases = [
        // A cell in open space, one on band and tile corners.
        (UVec2::new(3000, 3000), false, 2),
        (UVec2::new(4095, 4096), false, 2),
        (UVec2::new(64, 63), false, 2),
        // Shrinks the pocket, then splits it in two.
        (UVec2::new(1001, 2002), false, 2),
        (UVec2::new(1002, 2001), false, 3),
        // Merges the pocket's cell (1002, 2002) with the open space.
        (UVec2::new(1003, 2002), true, 2),
        // Closes, then opens the door: splits and merges halves of the grid.
        (UVec2::new(5000, 4000), false, 3),
        (UVec2::new(5000, 4000), true, 2),
    ];
    for (cell, free, count) in cases {
        let snapshot = g.clone();
        assert_eq!(g.unshared_chunks(&snapshot), (0, 0));
        assert!(g.set_free(cell, free).unwrap());
        assert_eq!(g.region_count(), count, "{cell}");
        let (bulky, ids) = g.unshared_chunks(&snapshot);
        // One band of rows and one of columns, one or two of the vertex
        // table (its refresh may span a band border), one tile of labels.
        assert!((3..=5).contains(&bulky), "{cell}: {bulky} chunks");
        // The id table of the tile; a split or merge of two halves of the
        // grid relabels the smaller (east) one: 3192 x 8192 cells.
        let most = if cell.x == 5000 { 1 + 50 * 128 } else { 1 };
        assert!((1..=most).contains(&ids), "{cell}: {ids} id tables");
    }
    assert!(!g.same_region(UVec2::new(1003, 2002), UVec2::new(1002, 2001)));
}
