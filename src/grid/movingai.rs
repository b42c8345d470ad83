//! Moving AI benchmark formats (`.map`, `.scen`) and ASCII pictures.
//!
//! Formats as documented by the Moving AI Lab (N. Sturtevant, "Benchmarks for
//! Grid-Based Pathfinding", IEEE TCIAIG 4(2), 2012). For any-angle work, `.`,
//! `G` and `S` are passable and every other character is blocked.

use bevy_math::UVec2;
use thiserror::Error;

use super::{BitPlane, Grid, GridError, MAX_DIMENSION, check_dimensions};

/// A malformed map, picture or scenario file, with the place at fault.
///
/// Lines end at `\n`, `\r\n` or a lone `\r`; columns count characters, not
/// bytes.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("line {line}, column {column}: {kind}")]
pub struct MapParseError {
    /// 1-based line number (the line after the last one for a premature end).
    pub line: usize,
    /// 1-based column (in characters) where the fault starts; 1 when the
    /// whole line, or a missing one, is at fault.
    pub column: usize,
    /// What is wrong there.
    pub kind: MapParseErrorKind,
}

/// What is wrong in a [`MapParseError`].
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MapParseErrorKind {
    /// The input has no content.
    #[error("the input is empty")]
    Empty,
    /// A header line is not `type ...`, `height N`, `width N` or `map`.
    #[error("unexpected header line {0:?}")]
    BadHeader(String),
    /// A header field is missing before `map`.
    #[error("the header has no `{0}` line")]
    MissingField(&'static str),
    /// A header field is given twice.
    #[error("the header gives `{0}` twice")]
    DuplicateField(&'static str),
    /// A number could not be read.
    #[error("{field} is not a valid number: {text:?}")]
    BadNumber {
        /// Which field.
        field: &'static str,
        /// The text found.
        text: String,
    },
    /// The declared size is zero or too large.
    #[error("size {width} x {height} is out of range (1..={max} each way)", max = MAX_DIMENSION)]
    BadSize {
        /// Declared or found width.
        width: u64,
        /// Declared or found height.
        height: u64,
    },
    /// The map is too large for the memory that can be allocated (see
    /// [`Grid::bytes_needed`]).
    #[error("the map needs about {bytes} bytes, more than can be allocated")]
    TooLarge {
        /// The memory it needs.
        bytes: u64,
    },
    /// A map row has the wrong number of characters (each character is a
    /// cell, whatever its UTF-8 length).
    #[error("row has {found} cells, expected {expected}")]
    RowLength {
        /// Expected width.
        expected: usize,
        /// Characters found.
        found: usize,
    },
    /// Fewer rows than declared.
    #[error("the map ends after {found} rows, expected {expected}")]
    MissingRows {
        /// Declared height.
        expected: usize,
        /// Rows found.
        found: usize,
    },
    /// Non-empty lines after the last row.
    #[error("unexpected content after the last map row")]
    TrailingContent,
    /// The scenario's first line is not `version 1` or `version 1.0`.
    #[error("expected `version 1` or `version 1.0`, found {0:?}")]
    BadVersion(String),
    /// A scenario line does not have the nine fields.
    #[error("expected 9 fields, found {0}")]
    FieldCount(usize),
    /// A scenario point lies outside the map size the line declares.
    #[error("point ({x}, {y}) lies outside the {width} x {height} map")]
    PointOutside {
        /// Column.
        x: u32,
        /// Row.
        y: u32,
        /// Declared width.
        width: u32,
        /// Declared height.
        height: u32,
    },
}

fn err(line: usize, kind: MapParseErrorKind) -> MapParseError {
    err_at(line, 1, kind)
}

fn err_at(line: usize, column: usize, kind: MapParseErrorKind) -> MapParseError {
    MapParseError { line, column, kind }
}

/// The 1-based character column where `part`, a slice of `line`, starts.
fn column_of(line: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize).saturating_sub(line.as_ptr() as usize);
    line.get(..offset)
        .map_or(1, |before| before.chars().count() + 1)
}

fn is_passable(c: u8) -> bool {
    matches!(c, b'.' | b'G' | b'S')
}

/// The lines of `text`, numbered from 1, broken at `\n`, `\r\n` or a lone
/// `\r`; a break at the very end ends the last line without starting
/// another.
fn numbered_lines(text: &str) -> Vec<(usize, &str)> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push((lines.len() + 1, &text[start..i]));
                i += 1;
                start = i;
            }
            b'\r' => {
                lines.push((lines.len() + 1, &text[start..i]));
                i += if bytes.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                start = i;
            }
            _ => i += 1,
        }
    }
    if start < bytes.len() {
        lines.push((lines.len() + 1, &text[start..]));
    }
    lines
}

/// Builds a grid from rows of passability characters, one cell per
/// character.
fn grid_from_rows<'a>(
    rows: impl ExactSizeIterator<Item = (usize, &'a str)>,
    width: usize,
) -> Result<Grid, MapParseError> {
    let height = rows.len();
    check_dimensions(width as u32, height as u32).map_err(|e| match e {
        GridError::OutOfMemory { bytes, .. } => err(1, MapParseErrorKind::TooLarge { bytes }),
        _ => err(
            1,
            MapParseErrorKind::BadSize {
                width: width as u64,
                height: height as u64,
            },
        ),
    })?;
    let mut cells = BitPlane::new(height as u32, width as u32);
    for (y, (line, row)) in rows.enumerate() {
        let found = if row.is_ascii() {
            row.len()
        } else {
            row.chars().count()
        };
        if found != width {
            return Err(err_at(
                line,
                found.min(width) + 1,
                MapParseErrorKind::RowLength {
                    expected: width,
                    found,
                },
            ));
        }
        if row.is_ascii() {
            let row = row.as_bytes();
            let mut x = 0;
            while x < width {
                if is_passable(row[x]) {
                    let start = x;
                    while x < width && is_passable(row[x]) {
                        x += 1;
                    }
                    cells.set_range(y as u32, start as u32, x as u32, true);
                } else {
                    x += 1;
                }
            }
        } else {
            for (x, c) in row.chars().enumerate() {
                if c.is_ascii() && is_passable(c as u8) {
                    cells.set_range(y as u32, x as u32, x as u32 + 1, true);
                }
            }
        }
    }
    Ok(Grid::from_rows(width as u32, height as u32, cells))
}

fn check_size(line: usize, width: u64, height: u64) -> Result<(), MapParseError> {
    let max = u64::from(MAX_DIMENSION);
    if width == 0 || height == 0 || width > max || height > max {
        return Err(err(line, MapParseErrorKind::BadSize { width, height }));
    }
    Ok(())
}

pub(super) fn parse_ascii(picture: &str) -> Result<Grid, MapParseError> {
    let (width, rows) = ascii_rows(picture)?;
    grid_from_rows(rows.into_iter(), width)
}

/// A map's width and its rows, each with its 1-based line number.
pub(crate) type MapRows<'a> = (usize, Vec<(usize, &'a str)>);

/// The width and the numbered rows of an ASCII picture (see
/// [`Grid::from_ascii`]), its size checked (not its rows' lengths).
pub(crate) fn ascii_rows(picture: &str) -> Result<MapRows<'_>, MapParseError> {
    let rows: Vec<(usize, &str)> = numbered_lines(picture)
        .into_iter()
        .map(|(n, l)| (n, l.trim()))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    let Some(&(first_line, first)) = rows.first() else {
        return Err(err(1, MapParseErrorKind::Empty));
    };
    let width = first.chars().count();
    check_size(first_line, width as u64, rows.len() as u64)?;
    Ok((width, rows))
}

pub(super) fn parse_map(text: &str) -> Result<Grid, MapParseError> {
    let (width, rows) = map_rows(text)?;
    grid_from_rows(rows.into_iter(), width)
}

/// The width and the numbered rows of a Moving AI `.map` file, its header
/// checked.
pub(crate) fn map_rows(text: &str) -> Result<MapRows<'_>, MapParseError> {
    let mut lines = numbered_lines(text).into_iter();
    let (mut width, mut height) = (None, None);
    let mut saw_type = false;
    let mut last_line = 0;
    loop {
        let Some((n, line)) = lines.next() else {
            return Err(if text.trim().is_empty() {
                err(1, MapParseErrorKind::Empty)
            } else {
                err(last_line + 1, MapParseErrorKind::MissingField("map"))
            });
        };
        last_line = n;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let mut parts = t.split_whitespace();
        let key = parts.next().unwrap_or_default();
        let value = parts.next();
        let extra = parts.next();
        let column = column_of(line, t);
        let number = |field: &'static str, seen: Option<u64>| -> Result<u64, MapParseError> {
            if seen.is_some() {
                return Err(err_at(n, column, MapParseErrorKind::DuplicateField(field)));
            }
            if let Some(extra) = extra {
                return Err(err_at(
                    n,
                    column_of(line, extra),
                    MapParseErrorKind::BadHeader(t.to_owned()),
                ));
            }
            let text = value.unwrap_or_default();
            text.parse::<u64>().map_err(|_| {
                err_at(
                    n,
                    value.map_or(column + key.chars().count(), |v| column_of(line, v)),
                    MapParseErrorKind::BadNumber {
                        field,
                        text: text.to_owned(),
                    },
                )
            })
        };
        match key.to_ascii_lowercase().as_str() {
            "type" => saw_type = true,
            "height" => height = Some(number("height", height)?),
            "width" => width = Some(number("width", width)?),
            "map" if value.is_none() => break,
            _ => {
                return Err(err_at(
                    n,
                    column,
                    MapParseErrorKind::BadHeader(t.to_owned()),
                ));
            }
        }
    }
    let _ = saw_type; // `type` is informative only (always `octile` in practice).
    let width = width.ok_or_else(|| err(last_line, MapParseErrorKind::MissingField("width")))?;
    let height = height.ok_or_else(|| err(last_line, MapParseErrorKind::MissingField("height")))?;
    check_size(last_line, width, height)?;
    let (width, height) = (width as usize, height as usize);

    let mut rows = Vec::with_capacity(height);
    for (n, line) in lines.by_ref() {
        if rows.len() == height {
            let rest = line.trim();
            if !rest.is_empty() {
                return Err(err_at(
                    n,
                    column_of(line, rest),
                    MapParseErrorKind::TrailingContent,
                ));
            }
            continue;
        }
        rows.push((n, line));
    }
    if rows.len() < height {
        let end = rows.last().map_or(last_line + 1, |r| r.0 + 1);
        return Err(err(
            end,
            MapParseErrorKind::MissingRows {
                expected: height,
                found: rows.len(),
            },
        ));
    }
    Ok((width, rows))
}

/// Checks that `row` (on line `line`) has `width` cells (characters).
pub(crate) fn check_row(line: usize, row: &str, width: usize) -> Result<(), MapParseError> {
    let found = if row.is_ascii() {
        row.len()
    } else {
        row.chars().count()
    };
    if found == width {
        Ok(())
    } else {
        Err(err_at(
            line,
            found.min(width) + 1,
            MapParseErrorKind::RowLength {
                expected: width,
                found,
            },
        ))
    }
}

/// One query of a Moving AI scenario file.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioEntry {
    /// The difficulty bucket.
    pub bucket: u32,
    /// The map file name as written in the scenario.
    pub map: String,
    /// The map width the scenario declares.
    pub map_width: u32,
    /// The map height the scenario declares.
    pub map_height: u32,
    /// Start cell.
    pub start: UVec2,
    /// Goal cell.
    pub goal: UVec2,
    /// The 8-connected optimum without corner cutting: an upper bound on the
    /// any-angle optimum, not the any-angle optimum itself.
    pub octile_length: f64,
}

/// A parsed Moving AI `.scen` file.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Scenario {
    /// The queries, in file order.
    pub entries: Vec<ScenarioEntry>,
}

impl Scenario {
    /// Parses a `.scen` file: `version 1` or `version 1.0`, then one query
    /// per line. Fields are separated by tabs when the line has any (so a
    /// map name may hold spaces), else by spaces.
    ///
    /// # Errors
    ///
    /// A [`MapParseError`] naming the offending line.
    pub fn parse(text: &str) -> Result<Self, MapParseError> {
        let mut lines = numbered_lines(text).into_iter();
        let version = loop {
            match lines.next() {
                None => return Err(err(1, MapParseErrorKind::Empty)),
                Some((_, l)) if l.trim().is_empty() => {}
                Some((n, l)) => break (n, l.trim()),
            }
        };
        let mut words = version.1.split_whitespace();
        if words.next() != Some("version")
            || !matches!(words.next(), Some("1" | "1.0"))
            || words.next().is_some()
        {
            return Err(err(
                version.0,
                MapParseErrorKind::BadVersion(version.1.to_owned()),
            ));
        }
        let mut entries = Vec::new();
        for (n, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = if line.contains('\t') {
                line.split('\t')
                    .map(|f| f.trim_matches(' '))
                    .filter(|f| !f.is_empty())
                    .collect()
            } else {
                line.split(' ').filter(|f| !f.is_empty()).collect()
            };
            if fields.len() != 9 {
                return Err(err(n, MapParseErrorKind::FieldCount(fields.len())));
            }
            let int = |k: usize, field: &'static str| -> Result<u32, MapParseError> {
                fields[k].parse::<u32>().map_err(|_| {
                    err_at(
                        n,
                        column_of(line, fields[k]),
                        MapParseErrorKind::BadNumber {
                            field,
                            text: fields[k].to_owned(),
                        },
                    )
                })
            };
            let (map_width, map_height) = (int(2, "map width")?, int(3, "map height")?);
            let start = UVec2::new(int(4, "start x")?, int(5, "start y")?);
            let goal = UVec2::new(int(6, "goal x")?, int(7, "goal y")?);
            for (p, k) in [(start, 4), (goal, 6)] {
                if p.x >= map_width || p.y >= map_height {
                    return Err(err_at(
                        n,
                        column_of(line, fields[k]),
                        MapParseErrorKind::PointOutside {
                            x: p.x,
                            y: p.y,
                            width: map_width,
                            height: map_height,
                        },
                    ));
                }
            }
            let octile_length = fields[8]
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    err_at(
                        n,
                        column_of(line, fields[8]),
                        MapParseErrorKind::BadNumber {
                            field: "optimal length",
                            text: fields[8].to_owned(),
                        },
                    )
                })?;
            entries.push(ScenarioEntry {
                bucket: int(0, "bucket")?,
                map: fields[1].to_owned(),
                map_width,
                map_height,
                start,
                goal,
                octile_length,
            });
        }
        Ok(Scenario { entries })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_maps_name_the_line() {
        let e = Grid::from_movingai("type octile\nheight 2\nwidth 3\nmap\n...\n..\n").unwrap_err();
        assert_eq!(
            e,
            err_at(
                6,
                3,
                MapParseErrorKind::RowLength {
                    expected: 3,
                    found: 2
                }
            )
        );
        let e = Grid::from_movingai("type octile\nheight x\nwidth 3\nmap\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 8));
        let e = Grid::from_movingai("type octile\nheight 3\nwidth 3\nmap\n...\n").unwrap_err();
        assert!(matches!(
            e.kind,
            MapParseErrorKind::MissingRows {
                expected: 3,
                found: 1
            }
        ));
        let e = Grid::from_movingai("type octile\nheight 1\nmap\n.\n").unwrap_err();
        assert_eq!(e.kind, MapParseErrorKind::MissingField("width"));
        let e = Grid::from_movingai("type octile\nheight 0\nwidth 3\nmap\n").unwrap_err();
        assert!(matches!(e.kind, MapParseErrorKind::BadSize { .. }));
        let e = Grid::from_movingai("type octile\nheight 1\nwidth 1\nmap\n.\n.\n").unwrap_err();
        assert_eq!(e, err_at(6, 1, MapParseErrorKind::TrailingContent));
        assert_eq!(
            Grid::from_movingai("").unwrap_err().kind,
            MapParseErrorKind::Empty
        );
        assert!(Grid::from_movingai("\u{0}\u{ff}").is_err());
    }

    #[test]
    fn cells_are_characters_not_bytes() {
        let map = |row: &str| format!("type octile\nheight 1\nwidth 3\nmap\n{row}\n");
        // Two characters (three bytes) in a three-wide map: one cell short.
        let e = Grid::from_movingai(&map("é.")).unwrap_err();
        assert_eq!(
            e,
            err_at(
                5,
                3,
                MapParseErrorKind::RowLength {
                    expected: 3,
                    found: 2
                }
            )
        );
        // Three characters: three cells, the last one blocked.
        let g = Grid::from_movingai(&map("..é")).unwrap();
        assert!(g.is_free_xy(0, 0) && g.is_free_xy(1, 0) && !g.is_free_xy(2, 0));
        let e = Grid::from_movingai(&map("..é.")).unwrap_err();
        assert_eq!((e.line, e.column), (5, 4));
        // A picture: the first row sets the width in characters.
        let g = Grid::from_ascii("é.\n..").unwrap();
        assert_eq!((g.width(), g.height()), (2, 2));
        assert!(!g.is_free_xy(0, 0) && g.is_free_xy(1, 0));
        let e = Grid::from_ascii("é.\n...").unwrap_err();
        assert_eq!((e.line, e.column), (2, 3));
    }

    #[test]
    fn headers_say_each_field_once() {
        let e =
            Grid::from_movingai("type octile\nheight 1\nheight 1\nwidth 1\nmap\n.\n").unwrap_err();
        assert_eq!(e, err_at(3, 1, MapParseErrorKind::DuplicateField("height")));
        let e = Grid::from_movingai("type octile\nheight 2 3\nwidth 1\nmap\n.\n.\n").unwrap_err();
        assert_eq!(
            e,
            err_at(2, 10, MapParseErrorKind::BadHeader("height 2 3".into()))
        );
        let e = Grid::from_movingai("type octile\n  width  x\nheight 1\nmap\n.\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 10));
    }

    #[test]
    fn every_line_ending_works() {
        for eol in ["\n", "\r\n", "\r"] {
            let text = ["type octile", "height 2", "width 2", "map", ".@", ".."].join(eol) + eol;
            let g = Grid::from_movingai(&text).unwrap_or_else(|e| panic!("{eol:?}: {e}"));
            assert!(g.is_free_xy(0, 0) && !g.is_free_xy(1, 0) && g.is_free_xy(1, 1));
            let g = Grid::from_ascii(&[".@", ".."].join(eol)).unwrap();
            assert_eq!((g.width(), g.height()), (2, 2));
            let scen = ["version 1", "0\tm.map\t2\t2\t0\t0\t1\t1\t1.41"].join(eol);
            assert_eq!(Scenario::parse(&scen).unwrap().entries.len(), 1, "{eol:?}");
        }
        // An empty line among the rows is a row, not a skipped line: the
        // second row is empty, so the third is one too many.
        let e = Grid::from_movingai("type octile\rheight 2\rwidth 2\rmap\r..\r\r..\r").unwrap_err();
        assert_eq!(e, err_at(7, 1, MapParseErrorKind::TrailingContent));
    }

    #[test]
    fn scenarios_with_tabs_or_spaces() {
        let s = Scenario::parse(
            "version 1.0\n0\tm.map\t4\t4\t0\t1\t3\t3\t4.24264069\n1 m.map 4 4 1 1 2 2 1.41\n",
        )
        .unwrap();
        assert_eq!(s.entries.len(), 2);
        assert_eq!(s.entries[0].start, UVec2::new(0, 1));
        assert_eq!(s.entries[1].goal, UVec2::new(2, 2));
        let e = Scenario::parse("version 2\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = Scenario::parse("version 1\n0 m.map 4 4 0 1 3\n").unwrap_err();
        assert_eq!(e, err(2, MapParseErrorKind::FieldCount(7)));
        let e = Scenario::parse("version 1\n0 m.map 4 4 0 9 3 3 1.0\n").unwrap_err();
        assert!(matches!(e.kind, MapParseErrorKind::PointOutside { .. }));
    }
}
