//! Connected-region labelling (4-connectivity) over runs of free cells.
//!
//! Each row is cut into maximal runs of free cells (found a word at a time);
//! runs in consecutive rows that overlap in at least one column are joined in
//! a union-find. Cost: O(runs) unions plus one pass writing labels.

use super::Grid;

/// A maximal run of free cells `[x0, x1)` in one row.
#[derive(Clone, Copy)]
struct Run {
    x0: u32,
    x1: u32,
}

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let p = parent[i as usize];
        parent[i as usize] = parent[p as usize];
        i = p;
    }
    i
}

/// Appends the free runs of row `y` to `out`.
fn row_runs(grid: &Grid, y: u32, out: &mut Vec<Run>) {
    let words = grid.row_words(i64::from(y));
    let total = words.len() * 64;
    let mut bit = 1usize; // cell 0
    while bit < total {
        // next set bit at or after `bit`
        let Some(start) = next_bit(words, bit, true) else {
            break;
        };
        let end = next_bit(words, start, false).unwrap_or(total);
        out.push(Run {
            x0: (start - 1) as u32,
            x1: (end - 1) as u32,
        });
        bit = end;
    }
}

/// Index of the last bit at or before `from` equal to `set`.
pub(crate) fn prev_bit(words: &[u64], from: usize, set: bool) -> Option<usize> {
    let mut w = from / 64;
    if w >= words.len() {
        return None;
    }
    let flip = if set { 0 } else { u64::MAX };
    let mut word = (words[w] ^ flip) & (u64::MAX >> (63 - from % 64));
    loop {
        if word != 0 {
            return Some(w * 64 + 63 - word.leading_zeros() as usize);
        }
        if w == 0 {
            return None;
        }
        w -= 1;
        word = words[w] ^ flip;
    }
}

/// Index of the first bit at or after `from` equal to `set`.
pub(crate) fn next_bit(words: &[u64], from: usize, set: bool) -> Option<usize> {
    let mut w = from / 64;
    if w >= words.len() {
        return None;
    }
    let flip = if set { 0 } else { u64::MAX };
    let mut word = (words[w] ^ flip) & (u64::MAX << (from % 64));
    loop {
        if word != 0 {
            return Some(w * 64 + word.trailing_zeros() as usize);
        }
        w += 1;
        if w >= words.len() {
            return None;
        }
        word = words[w] ^ flip;
    }
}

/// Recomputes `grid.labels`; returns the number of regions.
pub(super) fn label(grid: &mut Grid) -> u32 {
    let mut runs: Vec<Run> = Vec::new();
    let mut row_start: Vec<usize> = Vec::with_capacity(grid.height as usize + 1);
    for y in 0..grid.height {
        row_start.push(runs.len());
        row_runs(grid, y, &mut runs);
    }
    row_start.push(runs.len());

    let mut parent: Vec<u32> = (0..runs.len() as u32).collect();
    for y in 1..grid.height as usize {
        let (prev, cur) = (
            row_start[y - 1]..row_start[y],
            row_start[y]..row_start[y + 1],
        );
        let (mut i, mut j) = (prev.start, cur.start);
        while i < prev.end && j < cur.end {
            let (a, b) = (runs[i], runs[j]);
            if a.x0 < b.x1 && b.x0 < a.x1 {
                let (ra, rb) = (find(&mut parent, i as u32), find(&mut parent, j as u32));
                if ra != rb {
                    parent[ra.max(rb) as usize] = ra.min(rb);
                }
            }
            if a.x1 <= b.x1 {
                i += 1;
            } else {
                j += 1;
            }
        }
    }

    // Dense labels 1..=count in order of first appearance.
    let mut label_of_root = vec![0u32; runs.len()];
    let mut count = 0u32;
    grid.labels.fill(0);
    let width = grid.width as usize;
    for y in 0..grid.height as usize {
        for (k, run) in runs
            .iter()
            .enumerate()
            .take(row_start[y + 1])
            .skip(row_start[y])
        {
            let root = find(&mut parent, k as u32) as usize;
            if label_of_root[root] == 0 {
                count += 1;
                label_of_root[root] = count;
            }
            grid.labels[y * width + run.x0 as usize..y * width + run.x1 as usize]
                .fill(label_of_root[root]);
        }
    }
    count
}
