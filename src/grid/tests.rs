//! Unit tests of the grid: the vertex table after edits, and the edit log
//! when it is full.

use super::*;

/// Regression: refreshing the move table after an edit cleared the
/// moves of the vertices just outside the refreshed area, so searches
/// near an edit found no path.
#[test]
fn edits_leave_the_same_move_table_as_a_fresh_build() {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n) as u32
    };
    let mut g = Grid::new(40, 30).unwrap();
    for _ in 0..200 {
        let (x, y) = (next(40), next(30));
        let (w, h) = (1 + next(4).min(39 - x), 1 + next(4).min(29 - y));
        g.set_rect_free(URect::new(x, y, x + w, y + h), next(3) == 0)
            .unwrap();
        // Built in one go from a picture: no incremental refresh.
        let picture: String = (0..30)
            .map(|cy| {
                let row: String = (0..40)
                    .map(|cx| if g.is_free_xy(cx, cy) { '.' } else { '#' })
                    .collect();
                row + "\n"
            })
            .collect();
        let fresh = Grid::from_ascii(&picture).unwrap();
        assert_eq!(g.vertex_info, fresh.vertex_info);
        assert_eq!(g.cols, fresh.cols);
        assert_eq!(g.region_count(), fresh.region_count());
    }
}

#[test]
fn a_full_edit_log_merges_into_one_covering_edit() {
    let mut g = Grid::new(256, 257).unwrap();
    let n = EDIT_LOG_CAPACITY as u32;
    g.edit(|e| {
        for i in 0..n {
            e.set_free(UVec2::new(i % 256, i / 256), false)?;
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(g.edits_since(0).count(), EDIT_LOG_CAPACITY);
    g.set_free(UVec2::new(3, 0), true).unwrap();
    let edits: Vec<_> = g.edits_since(0).copied().collect();
    assert_eq!(edits.len(), 1);
    assert_eq!(edits[0].rect, URect::new(0, 0, 256, 256));
    assert_eq!(edits[0].kind, EditKind::Mixed);
    assert_eq!(edits[0].version, g.version());
}
