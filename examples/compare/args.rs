//! The command line of `compare`, parsed by hand (no argument-parsing
//! dependency).

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

use bevy_anyangle::prelude::*;

/// What `--help` prints.
pub const HELP: &str = "\
Runs every planner on the same Moving AI queries in one process and prints a
summary: each map's mean time per planner and the crate's performance targets.
With --out (or --write-docs) it also writes the full report: a markdown table
(compare.md) and a speed-up plot (compare.svg).

Usage:
  cargo run --release --example compare -- [OPTIONS]

Options:
  --maps DIR        folder of NAME.map files, each with NAME.map.scen beside it
                    (default: data/maps)
  --out DIR         write compare.md and compare.svg into DIR (created if
                    missing); without it no file is written
  --write-docs      the same as --out docs: regenerate the committed report
  --quick           a sample of 40 queries per map instead of every query
                    (well under a minute; the full run takes about an hour)
  --sample N        N queries per map, spread over the difficulty buckets
                    (default: all, or 40 with --quick)
  --points KIND     scenario cells become `corners` (default, the cell's top-left
                    vertex, as GPPC does) or `centres` (x + 0.5, y + 0.5); the
                    pathfinding-crate baseline runs on corners only
  --only NAMES      only these maps (comma-separated names without .map)
  --reps N          time each query N times and keep the fastest (default: 1)
  --passes N        time every query of a map again in N - 1 more passes over
                    them (each of --reps timings) and keep each query's fastest
                    over all passes: a slow spell of a shared machine then
                    rarely spoils all of a query's timings (default: 1)
  --export-queries DIR
                    write DIR/NAME.map.queries per map (created if missing):
                    the scenario queries this run uses, in order, one
                    `sx sy gx gy` line each, the points passed to the planners
                    (integers with --points corners); no crafted queries
  --reference FILE  another implementation's results on the exported
                    queries: one `NAME.map n mean_us mean_pops` line per map
                    (blank lines and `#` comments ignored). May be given
                    twice, once per kind; the kind is read from the file:
                    - scripts/reference/gppc-polyanya.sh output (its first
                      `#` line starts with `GPPC`, and `# preprocess NAME.map
                      S s` lines give the preprocessing): the C++ Polyanya,
                      put beside our Polyanya (time, and its preprocessing
                      beside our mesh build); adds a section and two targets
                    - anything else (scripts/reference/run.sh output, or a
                      file without comments): the authors' Java Anya, put
                      beside our Anya; adds a section and two targets
  -h, --help        print this help

Progress goes to stderr, the summary to stdout.
Exit status: 0 on success, 1 for unreadable or malformed input or unwritable
output, 2 for bad arguments.
";

/// Queries per map with `--quick`.
pub const QUICK_SAMPLE: usize = 40;

/// How scenario cells become points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Points {
    /// Cell `(x, y)` becomes the vertex `(x, y)`.
    Corners,
    /// Cell `(x, y)` becomes `(x + 0.5, y + 0.5)`.
    Centres,
}

impl Points {
    /// The name used on the command line and in the report.
    pub fn name(self) -> &'static str {
        match self {
            Points::Corners => "corners",
            Points::Centres => "centres",
        }
    }

    /// The point standing for a scenario cell.
    pub fn of(self, cell: UVec2) -> DVec2 {
        match self {
            Points::Corners => cell.as_dvec2(),
            Points::Centres => cell.as_dvec2() + DVec2::splat(0.5),
        }
    }
}

/// A parsed command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Args {
    /// Folder of maps and scenarios.
    pub maps: PathBuf,
    /// Where to write the report (`None`: nowhere, a summary only).
    pub out: Option<PathBuf>,
    /// `--quick` was given.
    pub quick: bool,
    /// Queries per map (`None`: all).
    pub sample: Option<usize>,
    /// Corners or centres.
    pub points: Points,
    /// Map names to keep (all when empty).
    pub only: Vec<String>,
    /// Timings per query (the fastest is kept).
    pub reps: u32,
    /// Passes over each map's queries (`reps` timings each; the fastest
    /// over all is kept).
    pub passes: u32,
    /// Where to write each map's scenario queries (`None`: nowhere).
    pub export_queries: Option<PathBuf>,
    /// Reference results to compare with (`--reference`, in order; at most
    /// one of each kind, checked when they are read).
    pub reference: Vec<PathBuf>,
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    /// Run the comparison.
    Run(Args),
    /// Print [`HELP`].
    Help,
}

/// A command line that cannot be run.
#[derive(Debug, PartialEq, Eq)]
pub enum ArgError {
    /// Not an option `compare` knows.
    Unknown(String),
    /// An option without its value.
    MissingValue(&'static str),
    /// An option given twice.
    Repeated(&'static str),
    /// A flag given a value.
    UnexpectedValue(&'static str),
    /// A value that does not fit its option.
    BadValue {
        /// The option.
        option: &'static str,
        /// What was given.
        value: String,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// An argument that is not valid Unicode.
    NotUnicode(OsString),
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgError::Unknown(a) => write!(f, "unknown argument {a:?}"),
            ArgError::MissingValue(o) => write!(f, "{o} needs a value"),
            ArgError::Repeated(o) => write!(f, "{o} is given twice"),
            ArgError::UnexpectedValue(o) => write!(f, "{o} takes no value"),
            ArgError::BadValue {
                option,
                value,
                expected,
            } => write!(f, "{option} {value:?}: expected {expected}"),
            ArgError::NotUnicode(a) => write!(f, "argument {} is not valid Unicode", a.display()),
        }
    }
}

/// Stores `value` in an empty slot; a filled one means the option repeats.
fn once<T>(slot: &mut Option<T>, option: &'static str, value: T) -> Result<(), ArgError> {
    match slot {
        Some(_) => Err(ArgError::Repeated(option)),
        None => {
            *slot = Some(value);
            Ok(())
        }
    }
}

/// Parses the arguments after the program name; `--help` anywhere wins.
/// Values follow their option as the next argument or after `=`.
pub fn parse(raw: impl IntoIterator<Item = OsString>) -> Result<Command, ArgError> {
    let raw = raw
        .into_iter()
        .map(|a| a.into_string().map_err(ArgError::NotUnicode))
        .collect::<Result<Vec<_>, _>>()?;
    if raw.iter().any(|a| a == "-h" || a == "--help") {
        return Ok(Command::Help);
    }
    let (mut maps, mut out, mut quick, mut points, mut only, mut reps, mut sample) =
        (None, None, None, None, None, None, None);
    let mut export_queries = None;
    let mut passes = None;
    let mut reference = Vec::new();
    let mut rest = raw.into_iter();
    while let Some(arg) = rest.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        if name == "--quick" {
            if inline.is_some() {
                return Err(ArgError::UnexpectedValue("--quick"));
            }
            once(&mut quick, "--quick", true)?;
            continue;
        }
        if name == "--write-docs" {
            if inline.is_some() {
                return Err(ArgError::UnexpectedValue("--write-docs"));
            }
            once(&mut out, "--out", PathBuf::from("docs"))?;
            continue;
        }
        let option: &'static str = match name.as_str() {
            "--maps" => "--maps",
            "--out" => "--out",
            "--points" => "--points",
            "--only" => "--only",
            "--reps" => "--reps",
            "--passes" => "--passes",
            "--sample" => "--sample",
            "--export-queries" => "--export-queries",
            "--reference" => "--reference",
            _ => return Err(ArgError::Unknown(arg)),
        };
        let value = match inline {
            Some(v) => v,
            None => rest.next().ok_or(ArgError::MissingValue(option))?,
        };
        if value.is_empty() {
            return Err(ArgError::MissingValue(option));
        }
        let bad = |expected| ArgError::BadValue {
            option,
            value: value.clone(),
            expected,
        };
        match option {
            "--maps" => once(&mut maps, option, PathBuf::from(&value))?,
            "--out" => once(&mut out, option, PathBuf::from(&value))?,
            "--export-queries" => once(&mut export_queries, option, PathBuf::from(&value))?,
            "--reference" => reference.push(PathBuf::from(&value)),
            "--points" => {
                let p = match value.as_str() {
                    "corners" => Points::Corners,
                    "centres" | "centers" => Points::Centres,
                    _ => return Err(bad("corners or centres")),
                };
                once(&mut points, option, p)?;
            }
            "--only" => {
                let names: Vec<String> = value
                    .split(',')
                    .map(|n| n.trim().trim_end_matches(".map").to_owned())
                    .filter(|n| !n.is_empty())
                    .collect();
                if names.is_empty() {
                    return Err(bad("comma-separated map names"));
                }
                once(&mut only, option, names)?;
            }
            "--sample" => {
                let n = value
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| bad("a whole number of at least 1"))?;
                once(&mut sample, option, n)?;
            }
            _ => {
                let n = value
                    .parse::<u32>()
                    .ok()
                    .filter(|&n| (1..=1000).contains(&n))
                    .ok_or_else(|| bad("a whole number from 1 to 1000"))?;
                once(
                    if option == "--passes" {
                        &mut passes
                    } else {
                        &mut reps
                    },
                    option,
                    n,
                )?;
            }
        }
    }
    let quick = quick.unwrap_or(false);
    Ok(Command::Run(Args {
        maps: maps.unwrap_or_else(|| PathBuf::from("data/maps")),
        out,
        quick,
        sample: sample.or(quick.then_some(QUICK_SAMPLE)),
        points: points.unwrap_or(Points::Corners),
        only: only.unwrap_or_default(),
        reps: reps.unwrap_or(1),
        passes: passes.unwrap_or(1),
        export_queries,
        reference,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Command, ArgError> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn defaults() {
        let Ok(Command::Run(a)) = run(&[]) else {
            panic!("no arguments is a valid run");
        };
        assert_eq!(a.maps, PathBuf::from("data/maps"));
        assert_eq!(a.out, None, "writes nothing unless asked");
        assert!(!a.quick);
        assert_eq!(a.points, Points::Corners);
        assert!(a.only.is_empty());
        assert_eq!(a.reps, 1);
        assert_eq!(a.passes, 1);
        assert_eq!(a.sample, None);
        assert_eq!(a.export_queries, None);
        assert!(a.reference.is_empty());
    }

    #[test]
    fn every_option() {
        let Ok(Command::Run(a)) = run(&[
            "--maps",
            "m",
            "--out=o",
            "--quick",
            "--points",
            "centers",
            "--only",
            "arena.map, den520d",
            "--export-queries",
            "q",
            "--reference=r.txt",
        ]) else {
            panic!("a valid command line");
        };
        assert_eq!(
            (a.maps, a.out),
            (PathBuf::from("m"), Some(PathBuf::from("o")))
        );
        assert!(a.quick);
        assert_eq!(a.sample, Some(QUICK_SAMPLE));
        assert_eq!(a.points, Points::Centres);
        assert_eq!(a.only, ["arena", "den520d"]);
        assert_eq!(a.export_queries, Some(PathBuf::from("q")));
        assert_eq!(a.reference, [PathBuf::from("r.txt")]);
    }

    #[test]
    fn reps_and_passes_are_separate() {
        let Ok(Command::Run(a)) = run(&["--reps", "3", "--passes=2"]) else {
            panic!("a valid command line");
        };
        assert_eq!((a.reps, a.passes), (3, 2));
        assert!(matches!(
            run(&["--passes", "0"]),
            Err(ArgError::BadValue { .. })
        ));
        assert_eq!(
            run(&["--passes", "2", "--passes", "3"]),
            Err(ArgError::Repeated("--passes"))
        );
    }

    #[test]
    fn write_docs_is_out_docs() {
        let Ok(Command::Run(a)) = run(&["--write-docs"]) else {
            panic!("a valid command line");
        };
        assert_eq!(a.out, Some(PathBuf::from("docs")));
    }

    #[test]
    fn mistakes_are_named() {
        assert_eq!(run(&["--map", "x"]), Err(ArgError::Unknown("--map".into())));
        assert_eq!(run(&["--out"]), Err(ArgError::MissingValue("--out")));
        assert_eq!(
            run(&["--quick", "--quick"]),
            Err(ArgError::Repeated("--quick"))
        );
        assert_eq!(
            run(&["--quick=1"]),
            Err(ArgError::UnexpectedValue("--quick"))
        );
        assert!(matches!(
            run(&["--reps", "0"]),
            Err(ArgError::BadValue { .. })
        ));
        assert!(matches!(
            run(&["--points", "middle"]),
            Err(ArgError::BadValue { .. })
        ));
        assert_eq!(run(&["x", "--help"]), Ok(Command::Help));
        assert_eq!(
            run(&["--reference"]),
            Err(ArgError::MissingValue("--reference"))
        );
        let Ok(Command::Run(a)) = run(&["--reference", "java.txt", "--reference=cpp.txt"]) else {
            panic!("--reference may be given twice");
        };
        assert_eq!(
            a.reference,
            [PathBuf::from("java.txt"), PathBuf::from("cpp.txt")]
        );
        assert_eq!(
            run(&["--export-queries", "a", "--export-queries=b"]),
            Err(ArgError::Repeated("--export-queries"))
        );
        assert_eq!(
            run(&["--write-docs", "--out", "x"]),
            Err(ArgError::Repeated("--out"))
        );
    }

    #[test]
    fn points() {
        let c = UVec2::new(3, 4);
        assert_eq!(Points::Corners.of(c), DVec2::new(3.0, 4.0));
        assert_eq!(Points::Centres.of(c), DVec2::new(3.5, 4.5));
    }
}
