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

/// What a reference file measured, and so which of our solvers it is put
/// beside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReferenceKind {
    /// The authors' Java Anya (`scripts/reference/run.sh`): beside our `anya`.
    Anya,
    /// A C++ Polyanya entry of GPPC 2023 (`scripts/reference/gppc-polyanya.sh`):
    /// beside our `polyanya`, its preprocessing beside our mesh build.
    Polyanya,
}

impl ReferenceKind {
    /// How the report names the reference.
    pub fn title(self) -> &'static str {
        match self {
            ReferenceKind::Anya => "the authors' Java Anya",
            ReferenceKind::Polyanya => "the C++ Polyanya of GPPC 2023",
        }
    }
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
    /// Its mean open-list pops per query (0 when every query was answered
    /// without a pop, as the C++ Polyanya can).
    pub mean_pops: f64,
    /// Its preprocessing time for this map, seconds, from a
    /// `# preprocess NAME.map S s` line (`None`: not given).
    pub preprocess_s: Option<f64>,
}

/// A reference file: another implementation's results on the exported
/// queries.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// The file, as given on the command line.
    pub file: String,
    /// What it measured.
    pub kind: ReferenceKind,
    /// Its lines, in order.
    pub rows: Vec<ReferenceRow>,
    /// Its comment lines (`#` removed), in order, but for the
    /// `preprocess` lines: how it was made.
    pub notes: Vec<String>,
}

/// What a reference line looks like, for error messages.
const FORMAT: &str = "`<map file name> <n> <mean_us> <mean_pops>`";

/// Parses a reference file's text: one `NAME.map n mean_us mean_pops` line
/// per map (`NAME` alone is accepted too); blank lines are skipped, lines
/// starting with `#` are kept as notes, except `# preprocess NAME.map S s`,
/// which gives the map's preprocessing time. `file` names the file in
/// errors.
///
/// The kind of reference is read from the file: a C++ Polyanya file
/// (`gppc-polyanya.sh`) when its first `#` line starts with `GPPC` or it has
/// `preprocess` lines, else the Java Anya (`run.sh`, or a file without
/// comments, as the first version of `compare` expected).
///
/// # Errors
///
/// A line that does not have that shape, a count that is not a whole number
/// of at least 1, a mean time that is not a positive finite number, a mean
/// pop count that is negative or not finite, a map given twice, a malformed
/// `preprocess` line, or no line at all.
pub fn parse(text: &str, file: &str) -> Result<Reference, String> {
    let mut rows: Vec<ReferenceRow> = Vec::new();
    let mut notes = Vec::new();
    let mut preprocess: Vec<(String, f64)> = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.trim();
        let at = |what: String| format!("{file}:{}: {what}", k + 1);
        if let Some(note) = line.strip_prefix('#') {
            let note = note.trim();
            if let Some(rest) = note.strip_prefix("preprocess ") {
                let fields: Vec<&str> = rest.split_whitespace().collect();
                let secs = match fields.as_slice() {
                    &[map, secs, "s"] => secs
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite() && *x >= 0.0)
                        .map(|x| (map, x)),
                    _ => None,
                };
                let Some((map, secs)) = secs else {
                    return Err(at(format!(
                        "expected `# preprocess <map file name> <seconds> s`, found {line:?}"
                    )));
                };
                let map = map.strip_suffix(".map").unwrap_or(map);
                preprocess.push((map.to_owned(), secs));
            } else {
                notes.push(note.to_owned());
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
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
        let mean_us = mean_us
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x > 0.0)
            .ok_or_else(|| at(format!("mean_us {mean_us:?} is not a positive number")))?;
        let mean_pops = mean_pops
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| {
                at(format!(
                    "mean_pops {mean_pops:?} is not a number of at least 0"
                ))
            })?;
        if rows.iter().any(|r| r.map == map) {
            return Err(at(format!("map {map}.map is given twice")));
        }
        rows.push(ReferenceRow {
            map: map.to_owned(),
            n,
            mean_us,
            mean_pops,
            preprocess_s: None,
        });
    }
    if rows.is_empty() {
        return Err(format!("{file}: no results (expected {FORMAT} lines)"));
    }
    for (map, secs) in &preprocess {
        if let Some(row) = rows.iter_mut().find(|r| &r.map == map) {
            row.preprocess_s = Some(*secs);
        }
    }
    let kind = if !preprocess.is_empty() || notes.first().is_some_and(|n| n.starts_with("GPPC")) {
        ReferenceKind::Polyanya
    } else {
        ReferenceKind::Anya
    };
    Ok(Reference {
        file: file.to_owned(),
        kind,
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

/// Reads every reference file, at most one of each kind.
///
/// # Errors
///
/// Any error of [`read`], or two files of the same kind.
pub fn read_all(paths: &[std::path::PathBuf]) -> Result<Vec<Reference>, String> {
    let mut all: Vec<Reference> = Vec::new();
    for path in paths {
        let r = read(path)?;
        if let Some(other) = all.iter().find(|o| o.kind == r.kind) {
            return Err(format!(
                "{} and {} are both results of {}: give one file of each kind",
                other.file,
                r.file,
                r.kind.title()
            ));
        }
        all.push(r);
    }
    Ok(all)
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
                preprocess_s: None,
            }
        );
        assert_eq!(r.kind, ReferenceKind::Anya, "no GPPC line: the Java Anya");
    }

    fn row<'a>(r: &'a Reference, name: &str) -> Option<&'a ReferenceRow> {
        r.rows.iter().find(|row| row.map == name)
    }

    #[test]
    fn a_polyanya_reference_is_recognised() {
        let text = "# GPPC 2023 Polyanya_MCDT (gppc-dev/algorithm-archive abc), R=3\n\
                    # preprocess arena.map 0.012 s\n\
                    arena.map 20 3.5 0\n\
                    # preprocess den520d.map 0.250 s\n\
                    den520d.map 20 12.5 40.5\n";
        let r = parse(text, "mcdt.txt").expect("a valid file");
        assert_eq!(r.kind, ReferenceKind::Polyanya);
        assert_eq!(
            r.notes.len(),
            1,
            "preprocess lines are not notes: {:?}",
            r.notes
        );
        assert_eq!(row(&r, "arena").and_then(|r| r.preprocess_s), Some(0.012));
        assert_eq!(row(&r, "den520d").and_then(|r| r.preprocess_s), Some(0.25));
        assert_eq!(
            row(&r, "arena").map(|r| r.mean_pops),
            Some(0.0),
            "0 pops is allowed"
        );
        // The Java harness's first line names Polyanya's repository, not GPPC.
        let java =
            "# Java Anya reference (xiangzebo/Polyanya abc, anyangle/anya)\narena.map 20 3 4\n";
        assert_eq!(
            parse(java, "j.txt").map(|r| r.kind),
            Ok(ReferenceKind::Anya)
        );
        let e = parse("# preprocess arena.map fast s\narena.map 1 1 1\n", "p.txt")
            .expect_err("a malformed preprocess line");
        assert!(e.contains("p.txt:1"), "{e}");
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
            invalid: None,
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
            mesh: None,
        };
        assert_eq!(export(&map), "1 2 7 0\n0.5 3.5 4 6\n");
    }
}
