//! The grid through its public API: sizes and their limits, cells and
//! points outside it, edits and the edit log, regions and double corners.

use bevy_anyangle::grid::{EditKind, Grid, GridError, MAX_DIMENSION};
use bevy_math::{DVec2, URect, UVec2};

/// Points far beyond the `i64` range of cells (a game's position of
/// 3e38) are outside the grid, not an overflow.
#[test]
fn points_far_outside_are_not_traversable_and_do_not_overflow() {
    let g = Grid::new(4, 4).unwrap();
    for p in [
        bevy_math::DVec2::new(-3e38, 0.0),
        bevy_math::DVec2::new(0.5, -3e38),
        bevy_math::DVec2::new(3e38, 3e38),
    ] {
        assert!(!g.is_point_traversable(p), "{p}");
    }
}

#[test]
fn cells_far_outside_are_errors_not_overflows() {
    let mut g = Grid::new(4, 4).unwrap();
    let far = UVec2::new(u32::MAX, 0);
    let outside = GridError::OutOfBounds {
        x: u32::MAX,
        y: 0,
        width: 4,
        height: 4,
    };
    assert_eq!(g.set_free(far, false), Err(outside.clone()));
    assert_eq!(g.edit(|e| e.set_free(far, false)), Err(outside));
    assert!(matches!(
        g.set_free(UVec2::new(3, u32::MAX), false),
        Err(GridError::OutOfBounds { y: u32::MAX, .. })
    ));
    assert!(
        g.set_rect_free(URect::new(0, 0, u32::MAX, 1), false)
            .is_err()
    );
    // An inverted rectangle holds no cell: nothing changes.
    let inverted = URect {
        min: UVec2::new(3, 3),
        max: UVec2::new(1, 1),
    };
    assert_eq!(g.set_rect_free(inverted, false), Ok(false));
    assert_eq!((g.free_count(), g.version()), (16, 0));
}

#[test]
fn the_largest_grid_needs_gigabytes() {
    let most = Grid::bytes_needed(MAX_DIMENSION, MAX_DIMENSION);
    assert!(most > 4 << 30, "{most}");
    assert!(Grid::bytes_needed(1, 1) < 64);
}

/// Under a 4 GiB address-space limit the largest grid is a typed error,
/// not an abort. The test runs itself again under `ulimit -v`.
#[test]
#[cfg(target_os = "linux")]
fn a_grid_beyond_the_memory_limit_is_an_error() {
    const LIMITED: &str = "ANYANGLE_TEST_MEMORY_LIMITED";
    if std::env::var_os(LIMITED).is_some() {
        let e = Grid::new(MAX_DIMENSION, MAX_DIMENSION).unwrap_err();
        assert!(matches!(e, GridError::OutOfMemory { .. }), "{e:?}");
        // A grid that fits still builds.
        assert!(Grid::new(4096, 4096).is_ok());
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" --exact a_grid_beyond_the_memory_limit_is_an_error --test-threads 1")
        .arg(exe)
        .env(LIMITED, "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("1 passed"), "{text}");
}

#[test]
fn bad_sizes_are_errors() {
    assert!(matches!(Grid::new(0, 3), Err(GridError::BadSize { .. })));
    assert!(matches!(
        Grid::new(3, MAX_DIMENSION + 1),
        Err(GridError::BadSize { .. })
    ));
}

#[test]
fn wide_rows_span_words() {
    let mut g = Grid::new(130, 3).unwrap();
    assert_eq!(g.free_count(), 390);
    assert!(g.is_free_xy(129, 2) && !g.is_free_xy(130, 2) && !g.is_free_xy(-1, 0));
    g.set_rect_free(URect::new(60, 1, 70, 2), false).unwrap();
    for x in 0..130 {
        assert_eq!(g.is_free_xy(x, 1), !(60..70).contains(&x), "x = {x}");
    }
    assert_eq!(g.version(), 1);
    assert!(!g.set_rect_free(URect::new(60, 1, 70, 2), false).unwrap());
    assert_eq!(g.version(), 1, "no-op edits do not bump the version");
}

#[test]
fn edits_keep_regions_current() {
    let mut g = Grid::new(5, 5).unwrap();
    assert_eq!(g.region_count(), 1);
    g.set_rect_free(URect::new(2, 0, 3, 5), false).unwrap();
    assert_eq!(g.region_count(), 2);
    assert!(!g.same_region(UVec2::new(0, 0), UVec2::new(4, 4)));
    g.set_free(UVec2::new(2, 4), true).unwrap();
    assert_eq!(g.region_count(), 1);
    assert!(g.same_region(UVec2::new(0, 0), UVec2::new(4, 4)));
    let edits: Vec<_> = g.edits_since(0).copied().collect();
    assert_eq!(edits.len(), 2);
    assert_eq!(edits[1].kind, EditKind::Freed);
    assert_eq!(edits[1].rect, URect::new(2, 4, 3, 5));
}

#[test]
fn a_batch_of_many_small_edits_is_logged_edit_by_edit() {
    let mut g = Grid::new(300, 300).unwrap();
    g.edit(|e| {
        for i in 0..2000 {
            e.set_free(UVec2::new(i % 300, i / 300 * 7), false)?;
        }
        Ok(())
    })
    .unwrap();
    let edits: Vec<_> = g.edits_since(0).copied().collect();
    assert_eq!(edits.len(), 2000);
    assert!(
        edits
            .iter()
            .all(|e| e.kind == EditKind::Blocked && e.rect.size() == UVec2::ONE)
    );
    assert_eq!(edits[1999].version, 2000);
}

#[test]
fn out_of_bounds_edit_is_an_error() {
    let mut g = Grid::new(4, 4).unwrap();
    assert!(matches!(
        g.set_free(UVec2::new(4, 0), false),
        Err(GridError::OutOfBounds { .. })
    ));
}

#[test]
fn diagonal_contact_does_not_connect() {
    let g = Grid::from_ascii(".#\n#.").unwrap();
    assert_eq!(g.region_count(), 2);
    assert!(g.is_double_corner(1, 1));
    assert!(!g.is_double_corner(0, 0));
}

#[test]
fn points_on_lines_use_either_cell() {
    let g = Grid::from_ascii(".#\n##").unwrap();
    assert!(g.is_point_traversable(DVec2::new(1.0, 0.5)));
    assert!(g.is_point_traversable(DVec2::new(1.0, 1.0)));
    assert!(!g.is_point_traversable(DVec2::new(1.5, 0.5)));
    assert!(!g.is_point_traversable(DVec2::new(f64::NAN, 0.5)));
}
