//! `parse`: bytes (as lossy UTF-8) through [`Grid::from_movingai`],
//! [`Grid::from_ascii`] and [`Scenario::parse`]. None may panic; what they
//! accept must match what the text says, read again here the plain way, and
//! must survive being written out and parsed again.
//!
//! The first byte picks a frame for the rest: none, a valid Moving AI header
//! of a small size, or a scenario's `version 1` line (so that the fuzzer
//! reaches map rows and scenario lines quickly).

use core::fmt::Write as _;

use bevy_anyangle::grid::{Grid, Scenario};

/// The lines of `text`, broken at `\n`, `\r\n` or a lone `\r`; a break at
/// the very end starts no further line.
fn lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        match rest.find(['\n', '\r']) {
            None => {
                out.push(rest);
                break;
            }
            Some(i) => {
                out.push(&rest[..i]);
                let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = &rest[i + skip..];
            }
        }
    }
    out
}

fn passable(c: char) -> bool {
    matches!(c, '.' | 'G' | 'S')
}

/// Asserts that `grid` is `rows` (each character a cell).
fn assert_cells(grid: &Grid, rows: &[&str], what: &str) {
    assert_eq!(grid.height() as usize, rows.len(), "{what}: height");
    for (y, row) in rows.iter().enumerate() {
        assert_eq!(
            grid.width() as usize,
            row.chars().count(),
            "{what}: width of row {y}"
        );
        for (x, c) in row.chars().enumerate() {
            assert_eq!(
                grid.is_free_xy(x as i64, y as i64),
                passable(c),
                "{what}: cell ({x}, {y}) is {c:?}"
            );
        }
    }
}

/// The grid as a Moving AI map, then parsed back (also as a picture).
fn round_trip(grid: &Grid) {
    let mut picture = String::new();
    for y in 0..i64::from(grid.height()) {
        for x in 0..i64::from(grid.width()) {
            picture.push(if grid.is_free_xy(x, y) { '.' } else { '@' });
        }
        picture.push('\n');
    }
    let map = format!(
        "type octile\nheight {}\nwidth {}\nmap\n{picture}",
        grid.height(),
        grid.width()
    );
    let again = Grid::from_movingai(&map).expect("a written map parses");
    assert!(again == *grid, "the written map reads back differently");
    let again = Grid::from_ascii(&picture).expect("a written picture parses");
    assert!(again == *grid, "the written picture reads back differently");
}

/// A map `from_movingai` accepted: its header's size, its rows' cells.
fn check_map(text: &str, grid: &Grid) {
    let all = lines(text);
    let (mut width, mut height) = (None, None);
    let mut body = None;
    for (i, line) in all.iter().enumerate() {
        let mut words = line.split_whitespace();
        let Some(key) = words.next() else { continue };
        let value = words.next();
        match key.to_ascii_lowercase().as_str() {
            "width" => width = value.and_then(|v| v.parse::<u32>().ok()),
            "height" => height = value.and_then(|v| v.parse::<u32>().ok()),
            "map" => {
                body = Some(i + 1);
                break;
            }
            _ => {}
        }
    }
    let (Some(w), Some(h), Some(body)) = (width, height, body) else {
        panic!("an accepted map without width, height or map line: {text:?}");
    };
    assert_eq!(
        (grid.width(), grid.height()),
        (w, h),
        "size against the header"
    );
    let rows = &all[body..body + h as usize];
    assert_cells(grid, rows, "map");
    assert!(
        all[body + h as usize..].iter().all(|l| l.trim().is_empty()),
        "an accepted map with content after its rows"
    );
    round_trip(grid);
}

/// A picture `from_ascii` accepted: its non-blank lines, trimmed.
fn check_picture(text: &str, grid: &Grid) {
    let rows: Vec<&str> = lines(text)
        .into_iter()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_cells(grid, &rows, "picture");
    round_trip(grid);
}

/// A scenario `Scenario::parse` accepted: one entry per non-blank line after
/// the version line, and the same entries once written with tabs and read
/// again.
fn check_scenario(text: &str, scenario: &Scenario) {
    let all = lines(text);
    let version = all
        .iter()
        .position(|l| !l.trim().is_empty())
        .expect("an accepted scenario has a version line");
    let queries = all[version + 1..]
        .iter()
        .filter(|l| !l.trim().is_empty())
        .count();
    assert_eq!(scenario.entries.len(), queries, "one entry per line");
    let mut written = String::from("version 1\n");
    for e in &scenario.entries {
        let _ = writeln!(
            written,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:?}",
            e.bucket,
            e.map,
            e.map_width,
            e.map_height,
            e.start.x,
            e.start.y,
            e.goal.x,
            e.goal.y,
            e.octile_length
        );
    }
    let again = Scenario::parse(&written)
        .unwrap_or_else(|e| panic!("a written scenario does not parse: {e}\n{written}"));
    assert_eq!(
        again, *scenario,
        "the written scenario reads back differently"
    );
}

/// Runs the `parse` check on one input.
///
/// # Panics
///
/// When a parser panics, or accepts a text that does not say what it built.
pub fn check(data: &[u8]) {
    let (frame, rest) = match data.split_first() {
        Some((&m, rest)) => (m, rest),
        None => (0, data),
    };
    let body = String::from_utf8_lossy(rest);
    let text = match frame % 3 {
        1 => {
            let (w, h) = (1 + (frame / 3) % 9, 1 + (frame / 27) % 9);
            format!("type octile\nheight {h}\nwidth {w}\nmap\n{body}")
        }
        2 => format!("version 1\n{body}"),
        _ => body.into_owned(),
    };
    if let Ok(grid) = Grid::from_movingai(&text) {
        check_map(&text, &grid);
    }
    if let Ok(grid) = Grid::from_ascii(&text) {
        check_picture(&text, &grid);
    }
    if let Ok(scenario) = Scenario::parse(&text) {
        check_scenario(&text, &scenario);
    }
}
