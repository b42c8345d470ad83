//! Command-line arguments, parsed by hand (the crate takes no argument-parsing
//! dependency).

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

use bevy_anyangle::prelude::*;

/// The text `--help` prints.
pub const USAGE: &str = "\
Runs the queries of a Moving AI scenario with one planner and prints a summary.

Usage:
  cargo run --release --example scen -- --map FILE --scen FILE --algorithm NAME [OPTIONS]

Required:
  --map FILE           the Moving AI .map file
  --scen FILE          the Moving AI .scen file of that map
  --algorithm NAME     lazy-theta, anya, astar, astar-ps or polyanya

Options:
  --points KIND        how scenario cells become points: `corners` (default, the
                       cell's top-left vertex (x, y), as GPPC does) or `centres`
                       ((x + 0.5, y + 0.5); `centers` is accepted too)
  --limit N            run only the first N queries
  --paths OUT          write the path file of SPEC.md to OUT (`-` for stdout)
  --fallback           plan fallback paths to the closest reachable point for
                       unreachable goals (default: report them as unreachable)
  --validate           re-check every answer independently (line of sight,
                       endpoints, length, reachability) and report invalid_paths
  --json               print the summary as one JSON object instead of text
  -h, --help           print this help

Exit status: 0 on success, 1 for unreadable or malformed files, 2 for bad
arguments, 3 if --validate found an invalid answer.
";

/// How scenario cells become points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Points {
    /// Cell `(x, y)` becomes the vertex `(x, y)`, its top-left corner (GPPC).
    Corners,
    /// Cell `(x, y)` becomes `(x + 0.5, y + 0.5)`, its centre.
    Centres,
}

impl Points {
    /// The name used on the command line and in summaries.
    pub fn name(self) -> &'static str {
        match self {
            Points::Corners => "corners",
            Points::Centres => "centres",
        }
    }

    /// The point a scenario cell stands for.
    pub fn of(self, cell: UVec2) -> DVec2 {
        let corner = cell.as_dvec2();
        match self {
            Points::Corners => corner,
            Points::Centres => corner + DVec2::splat(0.5),
        }
    }
}

/// What the user asked for.
#[derive(Clone, Debug)]
pub struct Args {
    /// The `.map` file.
    pub map: PathBuf,
    /// The `.scen` file.
    pub scen: PathBuf,
    /// The planner.
    pub algorithm: Algorithm,
    /// Corners or centres.
    pub points: Points,
    /// Run only this many queries.
    pub limit: Option<usize>,
    /// Where to write the path file (`-` is stdout).
    pub paths: Option<PathBuf>,
    /// Plan fallback paths instead of reporting unreachable goals.
    pub fallback: bool,
    /// Re-check every answer.
    pub validate: bool,
    /// Print JSON instead of text.
    pub json: bool,
}

/// What the command line asked for: a run, or the help text.
#[derive(Debug)]
pub enum Command {
    /// Run the scenario.
    Run(Args),
    /// Print [`USAGE`] and exit successfully.
    Help,
}

/// A command line that cannot be run.
#[derive(Debug, PartialEq, Eq)]
pub enum ArgError {
    /// An argument that is not an option we know.
    Unknown(String),
    /// An option that needs a value came last.
    MissingValue(&'static str),
    /// An option given twice.
    Repeated(&'static str),
    /// A flag given a value (`--json=yes`).
    UnexpectedValue(&'static str),
    /// A value that is not valid for its option.
    BadValue {
        /// The option.
        option: &'static str,
        /// The value given.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A required option is absent.
    Required(&'static str),
    /// An argument that is not valid Unicode.
    NotUnicode(OsString),
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgError::Unknown(a) => write!(f, "unknown argument {a:?}"),
            ArgError::MissingValue(o) => write!(f, "{o} needs a value"),
            ArgError::Repeated(o) => write!(f, "{o} is given more than once"),
            ArgError::UnexpectedValue(o) => write!(f, "{o} takes no value"),
            ArgError::BadValue {
                option,
                value,
                expected,
            } => {
                write!(f, "{option} {value:?}: expected {expected}")
            }
            ArgError::Required(o) => write!(f, "{o} is required"),
            ArgError::NotUnicode(a) => write!(f, "argument {} is not valid Unicode", a.display()),
        }
    }
}

/// The options that take a value, and the flags.
const VALUED: [&str; 6] = [
    "--map",
    "--scen",
    "--algorithm",
    "--points",
    "--limit",
    "--paths",
];
const FLAGS: [&str; 3] = ["--fallback", "--validate", "--json"];

/// Sets `slot` once; a second time is an error.
fn set_once<T>(slot: &mut Option<T>, option: &'static str, value: T) -> Result<(), ArgError> {
    if slot.is_some() {
        return Err(ArgError::Repeated(option));
    }
    *slot = Some(value);
    Ok(())
}

/// Parses the arguments after the program name. `--help` anywhere wins.
///
/// Options take their value as the next argument or after `=`
/// (`--limit 10`, `--limit=10`).
pub fn parse(raw: impl IntoIterator<Item = OsString>) -> Result<Command, ArgError> {
    let raw: Vec<String> = raw
        .into_iter()
        .map(|a| a.into_string().map_err(ArgError::NotUnicode))
        .collect::<Result<_, _>>()?;
    if raw.iter().any(|a| a == "--help" || a == "-h") {
        return Ok(Command::Help);
    }

    let (mut map, mut scen, mut algorithm, mut points, mut limit, mut paths) =
        (None, None, None, None, None, None);
    let (mut fallback, mut validate, mut json) = (None, None, None);
    let mut args = raw.into_iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        if let Some(&flag) = FLAGS.iter().find(|&&f| f == name) {
            if inline.is_some() {
                return Err(ArgError::UnexpectedValue(flag));
            }
            let slot = match flag {
                "--fallback" => &mut fallback,
                "--validate" => &mut validate,
                _ => &mut json,
            };
            set_once(slot, flag, true)?;
            continue;
        }
        let Some(&option) = VALUED.iter().find(|&&o| o == name) else {
            return Err(ArgError::Unknown(arg));
        };
        let value = match inline {
            Some(v) => v,
            None => args.next().ok_or(ArgError::MissingValue(option))?,
        };
        if value.is_empty() {
            return Err(ArgError::MissingValue(option));
        }
        match option {
            "--map" => set_once(&mut map, option, PathBuf::from(value))?,
            "--scen" => set_once(&mut scen, option, PathBuf::from(value))?,
            "--paths" => set_once(&mut paths, option, PathBuf::from(value))?,
            "--algorithm" => {
                let a = value.parse::<Algorithm>().map_err(|_| ArgError::BadValue {
                    option,
                    value: value.clone(),
                    expected: "lazy-theta, anya, astar, astar-ps or polyanya",
                })?;
                set_once(&mut algorithm, option, a)?;
            }
            "--points" => {
                let p = match value.as_str() {
                    "corners" => Points::Corners,
                    "centres" | "centers" => Points::Centres,
                    _ => {
                        return Err(ArgError::BadValue {
                            option,
                            value,
                            expected: "corners or centres",
                        });
                    }
                };
                set_once(&mut points, option, p)?;
            }
            _ => {
                let n = value.parse::<usize>().map_err(|_| ArgError::BadValue {
                    option,
                    value: value.clone(),
                    expected: "a non-negative whole number",
                })?;
                set_once(&mut limit, option, n)?;
            }
        }
    }

    Ok(Command::Run(Args {
        map: map.ok_or(ArgError::Required("--map"))?,
        scen: scen.ok_or(ArgError::Required("--scen"))?,
        algorithm: algorithm.ok_or(ArgError::Required("--algorithm"))?,
        points: points.unwrap_or(Points::Corners),
        limit,
        paths,
        fallback: fallback.unwrap_or(false),
        validate: validate.unwrap_or(false),
        json: json.unwrap_or(false),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Command, ArgError> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn defaults_and_both_value_forms() {
        let Ok(Command::Run(a)) =
            parse_strs(&["--map", "m.map", "--scen=m.scen", "--algorithm", "astar-ps"])
        else {
            panic!("should parse");
        };
        assert_eq!(a.algorithm, Algorithm::AStarSmoothed);
        assert_eq!(a.points, Points::Corners);
        assert_eq!(
            (a.limit, a.fallback, a.validate, a.json),
            (None, false, false, false)
        );
        let Ok(Command::Run(a)) = parse_strs(&[
            "--json",
            "--map",
            "m",
            "--scen",
            "s",
            "--algorithm",
            "anya",
            "--points",
            "centers",
            "--limit=5",
            "--fallback",
            "--validate",
            "--paths",
            "out",
        ]) else {
            panic!("should parse");
        };
        assert_eq!(a.points, Points::Centres);
        assert_eq!(a.limit, Some(5));
        assert!(a.fallback && a.validate && a.json);
        assert_eq!(a.paths, Some(PathBuf::from("out")));
    }

    #[test]
    fn errors() {
        assert!(matches!(
            parse_strs(&["--map", "m", "--help"]),
            Ok(Command::Help)
        ));
        assert_eq!(
            parse_strs(&["--map", "m", "--scen", "s"]).unwrap_err(),
            ArgError::Required("--algorithm")
        );
        assert_eq!(
            parse_strs(&["--map"]).unwrap_err(),
            ArgError::MissingValue("--map")
        );
        assert_eq!(
            parse_strs(&["--map="]).unwrap_err(),
            ArgError::MissingValue("--map")
        );
        assert_eq!(
            parse_strs(&["--json", "--json"]).unwrap_err(),
            ArgError::Repeated("--json")
        );
        assert_eq!(
            parse_strs(&["--json=yes"]).unwrap_err(),
            ArgError::UnexpectedValue("--json")
        );
        assert_eq!(
            parse_strs(&["map.map"]).unwrap_err(),
            ArgError::Unknown("map.map".into())
        );
        assert!(matches!(
            parse_strs(&["--limit", "x"]),
            Err(ArgError::BadValue {
                option: "--limit",
                ..
            })
        ));
        assert!(matches!(
            parse_strs(&["--algorithm", "dijkstra"]),
            Err(ArgError::BadValue { .. })
        ));
        assert!(matches!(
            parse_strs(&["--points", "middle"]),
            Err(ArgError::BadValue { .. })
        ));
    }

    #[test]
    fn points() {
        assert_eq!(Points::Corners.of(UVec2::new(3, 4)), DVec2::new(3.0, 4.0));
        assert_eq!(Points::Centres.of(UVec2::new(3, 4)), DVec2::new(3.5, 4.5));
    }
}
