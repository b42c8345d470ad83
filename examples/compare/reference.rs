//! The queries handed to another implementation (`--export-queries`) and
//! that implementation's results on them, read back (`--reference`).

use std::fmt::Write as _;
use std::path::Path as FsPath;

use crate::measure::MapRecord;

/// The scenario queries of `map` as this run used them, in order: one
/// `sx sy gx gy` line each, the points passed to the planners (`3` rather
/// than `3.0`, so integers on corners). Crafted queries are not included.
pub fn export(map: &MapRecord) -> String {
    let mut s = String::new();
    for q in &map.queries {
        let _ = writeln!(s, "{} {} {} {}", q.start.x, q.start.y, q.goal.x, q.goal.y);
    }
    s
}

/// Writes [`export`] of `map` to `dir/NAME.map.queries`, returning the path.
///
/// # Errors
///
/// An unwritable file.
pub fn write_export(dir: &FsPath, map: &MapRecord) -> Result<std::path::PathBuf, String> {
    let path = dir.join(format!("{}.queries", map.file_name()));
    std::fs::write(&path, export(map))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// One map's line of a reference file.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceRow {
    /// The map's name, without `.map`.
    pub map: String,
    /// Queries the reference ran.
    pub n: usize,
    /// Its mean time per query, microseconds.
    pub mean_us: f64,
    /// Its mean open-list pops per query.
    pub mean_pops: f64,
}

/// A reference file: another implementation's results on the exported
/// queries.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// The file, as given on the command line.
    pub file: String,
    /// Its lines, in order.
    pub rows: Vec<ReferenceRow>,
    /// Its comment lines (`#` removed), in order: how it was made.
    pub notes: Vec<String>,
}

/// What a reference line looks like, for error messages.
const FORMAT: &str = "`<map file name> <n> <mean_us> <mean_pops>`";

/// Parses a reference file's text: one `NAME.map n mean_us mean_pops` line
/// per map (`NAME` alone is accepted too); blank lines and lines starting
/// with `#` are kept as notes. `file` names the file in errors.
///
/// # Errors
///
/// A line that does not have that shape, a count that is not a whole number
/// of at least 1, a mean that is not a positive finite number, a map given
/// twice, or no line at all.
pub fn parse(text: &str, file: &str) -> Result<Reference, String> {
    let mut rows: Vec<ReferenceRow> = Vec::new();
    let mut notes = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(note) = line.strip_prefix('#') {
            notes.push(note.trim().to_owned());
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let at = |what: String| format!("{file}:{}: {what}", k + 1);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let &[map, n, mean_us, mean_pops] = fields.as_slice() else {
            return Err(at(format!(
                "expected {FORMAT}, found {} field{}: {line:?}",
                fields.len(),
                if fields.len() == 1 { "" } else { "s" }
            )));
        };
        let map = map.strip_suffix(".map").unwrap_or(map);
        if map.is_empty() {
            return Err(at(format!("expected {FORMAT}, found no map name")));
        }
        let n = n
            .parse::<usize>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| at(format!("n {n:?} is not a whole number of at least 1")))?;
        let mean = |name: &str, v: &str| {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| at(format!("{name} {v:?} is not a positive number")))
        };
        let (mean_us, mean_pops) = (mean("mean_us", mean_us)?, mean("mean_pops", mean_pops)?);
        if rows.iter().any(|r| r.map == map) {
            return Err(at(format!("map {map}.map is given twice")));
        }
        rows.push(ReferenceRow {
            map: map.to_owned(),
            n,
            mean_us,
            mean_pops,
        });
    }
    if rows.is_empty() {
        return Err(format!("{file}: no results (expected {FORMAT} lines)"));
    }
    Ok(Reference {
        file: file.to_owned(),
        rows,
        notes,
    })
}

/// Reads and parses a reference file.
///
/// # Errors
///
/// An unreadable file, or any error of [`parse`].
pub fn read(path: &FsPath) -> Result<Reference, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(&text, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{Query, Run};
    use bevy_anyangle::prelude::*;

    #[test]
    fn a_reference_file_is_read() {
        let r = parse(
            "# map n mean_us mean_pops\n\narena.map 20 12.5 40\n  den520d\t20 1e2 647.25 \n",
            "ref.txt",
        )
        .expect("a valid file");
        assert_eq!(r.rows.len(), 2);
        assert_eq!(
            r.rows[1],
            ReferenceRow {
                map: "den520d".to_owned(),
                n: 20,
                mean_us: 100.0,
                mean_pops: 647.25,
            }
        );
    }

    #[test]
    fn malformed_reference_files_are_errors() {
        for (text, says) in [
            ("arena.map 20 12.5\n", "ref.txt:1: expected"),
            ("# c\narena.map 20 12.5 40 7\n", "ref.txt:2: expected"),
            ("arena.map twenty 12.5 40\n", "n \"twenty\""),
            ("arena.map 0 12.5 40\n", "n \"0\""),
            ("arena.map 20 fast 40\n", "mean_us \"fast\""),
            ("arena.map 20 12.5 NaN\n", "mean_pops \"NaN\""),
            ("arena.map 20 12.5 -1\n", "mean_pops \"-1\""),
            (
                "arena.map 20 1 1\narena 20 1 1\n",
                "ref.txt:2: map arena.map is given twice",
            ),
            (".map 20 1 1\n", "no map name"),
            ("# nothing\n\n", "no results"),
        ] {
            let e = parse(text, "ref.txt").expect_err(text);
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }

    #[test]
    fn queries_are_exported_as_the_planners_saw_them() {
        let run = Run {
            time_us: 1.0,
            expanded: None,
            popped: None,
            outcome: crate::measure::Outcome::Skipped,
        };
        let query = |s: DVec2, g: DVec2| Query {
            start: s,
            goal: g,
            runs: vec![run.clone()],
        };
        let map = MapRecord {
            name: "m".to_owned(),
            size: (8, 8),
            scenario_queries: 2,
            queries: vec![
                query(DVec2::new(1.0, 2.0), DVec2::new(7.0, 0.0)),
                query(DVec2::new(0.5, 3.5), DVec2::new(4.0, 6.0)),
            ],
            unreachable: Vec::new(),
        };
        assert_eq!(export(&map), "1 2 7 0\n0.5 3.5 4 6\n");
    }
}
