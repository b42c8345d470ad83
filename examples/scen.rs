//! Scenario runner: plans every query of a Moving AI scenario file with one
//! [`Planner`] (whose memory is reused from query to query), times each
//! `plan` call, and prints a summary — found paths, fallbacks, unreachable
//! goals, invalid inputs, time per query, expansions, open-list pops and
//! mean length — as
//! text or as one JSON object. It can also write the path file of `SPEC.md`
//! and re-check every answer independently.
//!
//! ```text
//! cargo run --release --example scen -- --map data/maps/arena.map \
//!     --scen data/maps/arena.map.scen --algorithm lazy-theta \
//!     [--points corners|centres] [--limit N] [--paths OUT] [--fallback] [--validate] [--json]
//! ```
//!
//! # What is counted
//!
//! Every query falls in exactly one class:
//!
//! - `found`: a path from the start to the goal;
//! - `fallback`: with `--fallback`, a path to the closest reachable point of
//!   an unreachable goal;
//! - `unreachable`: without `--fallback`, a valid goal that the (valid) start
//!   cannot reach;
//! - `invalid_input`: the start or goal is not a valid point (inside an
//!   obstacle, outside the map, or on a double corner whose south-east cell is
//!   blocked; the planner moves an invalid start and reports
//!   `start_moved_from`), or the planner failed with another error (printed
//!   on stderr).
//!
//! Times are taken around `plan` only, for every query; `mean_expansions`
//! and `mean_pops` average the queries that returned a path, `mean_length` the `found` ones.
//! A statistic with nothing to average is `n/a` in text and `null` in JSON.
//!
//! # Path file
//!
//! One line per query, `sx sy gx gy | x0 y0 ... xk yk`, where `(sx, sy)` and
//! `(gx, gy)` are the query's points (corners or centres) and the waypoints
//! follow, all in plain decimal grid coordinates. A query with no path is
//! written `sx sy gx gy | unreachable`. A fallback path ends at the closest
//! reachable point, not at `(gx, gy)`. An `invalid_input` query is written as
//! the path actually planned, if any, so its first point shows where the start
//! was moved to; otherwise as `unreachable`.
//!
//! # Exit status
//!
//! 0 on success, 1 for an unreadable or malformed file, 2 for bad arguments,
//! 3 if `--validate` rejected an answer.

#[path = "scen/args.rs"]
mod args;
#[path = "scen/report.rs"]
mod report;
#[path = "scen/validate.rs"]
mod validate;

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path as FsPath;
use std::process::ExitCode;
use std::time::Instant;

use bevy_anyangle::prelude::*;

use args::{Args, Command, USAGE};
use report::{Outcome, Summary};
use validate::Validator;

/// How many problems of one kind are printed in full before they are only
/// counted.
const MAX_REPORTS: usize = 10;

/// Why the run stopped.
enum Failure {
    /// Unreadable or malformed input, or an unwritable output.
    Io(String),
    /// `--validate` rejected some answers (already reported).
    Invalid,
}

fn main() -> ExitCode {
    let args = match args::parse(std::env::args_os().skip(1)) {
        Ok(Command::Run(args)) => args,
        Ok(Command::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\nRun with --help for usage.");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Io(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
        Err(Failure::Invalid) => ExitCode::from(3),
    }
}

/// Reads a whole text file, with messages that name it.
fn read_text(path: &FsPath) -> Result<String, Failure> {
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::Io(format!("cannot read {}: {e}", path.display())))?;
    String::from_utf8(bytes).map_err(|e| {
        Failure::Io(format!(
            "{}: not a text file (invalid UTF-8 at byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// The last component of a path (`maps/dao/arena.map` -> `arena.map`).
fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// One path-file line.
fn path_line(start: DVec2, goal: DVec2, waypoints: Option<&[DVec2]>) -> String {
    let mut line = format!("{} {} {} {} |", start.x, start.y, goal.x, goal.y);
    match waypoints {
        Some(points) => {
            for p in points {
                let _ = write!(line, " {} {}", p.x, p.y);
            }
        }
        None => line.push_str(" unreachable"),
    }
    line
}

/// Prints a warning about query `index` (0-based), up to [`MAX_REPORTS`]
/// per `count`er.
fn report(count: &mut usize, kind: &str, index: usize, start: DVec2, goal: DVec2, why: &str) {
    *count += 1;
    if *count <= MAX_REPORTS {
        eprintln!(
            "{kind}: query {} ({} {} -> {} {}): {why}",
            index + 1,
            start.x,
            start.y,
            goal.x,
            goal.y
        );
    } else if *count == MAX_REPORTS + 1 {
        eprintln!("{kind}: (further ones are only counted)");
    }
}

fn run(args: &Args) -> Result<(), Failure> {
    let map_text = read_text(&args.map)?;
    let grid = Grid::from_movingai(&map_text)
        .map_err(|e| Failure::Io(format!("{}: {e}", args.map.display())))?;
    let scen_text = read_text(&args.scen)?;
    let scenario = Scenario::parse(&scen_text)
        .map_err(|e| Failure::Io(format!("{}: {e}", args.scen.display())))?;
    let map_name = args.map.file_name().map_or_else(
        || args.map.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );

    let entries = &scenario.entries[..args.limit.unwrap_or(usize::MAX).min(scenario.entries.len())];
    if let Some((i, e)) = entries
        .iter()
        .enumerate()
        .find(|(_, e)| file_name(&e.map) != map_name)
    {
        eprintln!(
            "warning: query {} of {} is for map {:?}, not {map_name:?}",
            i + 1,
            args.scen.display(),
            e.map
        );
    }
    if let Some((i, e)) = entries
        .iter()
        .enumerate()
        .find(|(_, e)| UVec2::new(e.map_width, e.map_height) != grid.size())
    {
        eprintln!(
            "warning: query {} of {} declares a {} x {} map; {map_name} is {} x {}",
            i + 1,
            args.scen.display(),
            e.map_width,
            e.map_height,
            grid.width(),
            grid.height()
        );
    }

    let mut paths_out = match &args.paths {
        Some(p) => Some(BufWriter::new(File::create(p).map_err(|e| {
            Failure::Io(format!("cannot create {}: {e}", p.display()))
        })?)),
        None => None,
    };
    let write_error = |e: std::io::Error| {
        let p = args.paths.as_deref().unwrap_or(FsPath::new("-"));
        Failure::Io(format!("cannot write {}: {e}", p.display()))
    };

    let validator = Validator::new(&grid);
    let options = PlanOptions {
        fallback: if args.fallback {
            FallbackPolicy::ClosestReachable
        } else {
            FallbackPolicy::Fail
        },
        ..PlanOptions::with_algorithm(args.algorithm)
    };
    let mut planner = Planner::new();
    // Allocate the search memory (and Polyanya's mesh) before the clock
    // starts.
    planner.reserve(&grid);
    if args.algorithm == Algorithm::Polyanya {
        planner.prepare_mesh(&grid);
    }
    let mut summary = Summary {
        algorithm: args.algorithm.name().to_owned(),
        map: map_name,
        points: args.points.name().to_owned(),
        size: (grid.width(), grid.height()),
        ..Summary::default()
    };
    let (mut errors, mut invalid) = (0, 0);

    for (index, entry) in entries.iter().enumerate() {
        let (start, goal) = (args.points.of(entry.start), args.points.of(entry.goal));
        let clock = Instant::now();
        let result = planner.plan(&grid, start, goal, &options);
        let time_us = clock.elapsed().as_secs_f64() * 1e6;

        let ends_valid = validator.is_valid_point(start) && validator.is_valid_point(goal);
        let outcome = match &result {
            Ok(path) if path.start_moved_from.is_some() || !ends_valid => Outcome::InvalidInput,
            Ok(path) if path.is_fallback() => Outcome::Fallback,
            Ok(_) => Outcome::Found,
            Err(PlanError::Unreachable { .. }) if ends_valid => Outcome::Unreachable,
            Err(PlanError::Unreachable { .. }) => Outcome::InvalidInput,
            Err(e) => {
                report(
                    &mut errors,
                    "planner error",
                    index,
                    start,
                    goal,
                    &e.to_string(),
                );
                Outcome::InvalidInput
            }
        };
        summary.add(outcome, time_us);
        if let Ok(path) = &result {
            summary.expansions.push(path.stats.expanded);
            summary.pops.push(path.stats.popped);
            if outcome == Outcome::Found {
                summary.lengths.push(path.length);
            }
        }

        if args.validate {
            let problem = match &result {
                Ok(path) => validator.check_path(start, goal, path),
                Err(PlanError::Unreachable { closest }) => {
                    validator.check_unreachable(start, goal, *closest)
                }
                Err(e) => Some(format!("no path: {e}")),
            };
            if let Some(why) = problem {
                report(&mut invalid, "invalid", index, start, goal, &why);
            }
        }

        if let Some(out) = paths_out.as_mut() {
            let waypoints = result.as_ref().ok().map(|p| p.waypoints.as_slice());
            writeln!(out, "{}", path_line(start, goal, waypoints)).map_err(write_error)?;
        }
    }
    if let Some(mut out) = paths_out {
        out.flush().map_err(write_error)?;
    }

    if args.validate {
        summary.invalid_paths = Some(invalid);
    }
    let text = if args.json {
        summary.json() + "\n"
    } else {
        summary.text()
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| Failure::Io(format!("cannot write the summary: {e}")))?;
    if invalid > 0 {
        eprintln!("{invalid} invalid answer(s)");
        return Err(Failure::Invalid);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_lines_are_plain_decimal() {
        let (s, g) = (DVec2::new(0.5, 12.0), DVec2::new(3.0, 4.25));
        let points = [s, DVec2::new(1.0, 10.0), g];
        assert_eq!(
            path_line(s, g, Some(&points)),
            "0.5 12 3 4.25 | 0.5 12 1 10 3 4.25"
        );
        assert_eq!(path_line(s, g, None), "0.5 12 3 4.25 | unreachable");
    }

    #[test]
    fn file_names() {
        assert_eq!(file_name("maps/dao/arena.map"), "arena.map");
        assert_eq!(file_name("arena.map"), "arena.map");
    }
}
