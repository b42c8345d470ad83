//! Planner comparison: runs Anya, Lazy Theta*, A* with post-smoothing, grid
//! A* and the `pathfinding` crate's A* (the baseline people use today) on the
//! same Moving AI queries in one process, and writes `compare.md` — per map,
//! mean / median / p95 time, expansions, length against Anya's optimum,
//! unreachable and fallback answers, and the crate's targets checked on this
//! run's ratios — and `compare.svg`, the speed-up over A* against query
//! difficulty in the manner of Figure 16 of the Anya paper. With
//! `--export-queries DIR` it writes each map's scenario queries for another
//! implementation to run, and with `--reference FILE` (once or twice) it
//! compares Anya with the authors' Java Anya and Polyanya with the C++
//! Polyanya of GPPC 2023 on them. Polyanya plans on a navigation mesh built
//! once per map before any query is timed; the build is timed on its own.
//!
//! ```text
//! cargo run --release --example compare -- [--maps DIR] [--out DIR] [--quick]
//!     [--sample N] [--points corners|centres] [--only NAME,...] [--reps N]
//!     [--passes N]
//!     [--export-queries DIR] [--reference FILE]...
//! ```
//!
//! Progress goes to stderr, the table also to stdout. Exit status: 0 on
//! success, 1 for unreadable or malformed input or unwritable output, 2 for
//! bad arguments.

#[path = "compare/args.rs"]
mod args;
#[path = "compare/baseline.rs"]
mod baseline;
#[path = "compare/measure.rs"]
mod measure;
#[path = "compare/plot.rs"]
mod plot;
#[path = "compare/reference.rs"]
mod reference;
#[path = "compare/report.rs"]
mod report;
// The `scen` example's check of an answer against `SPEC.md`, reused to
// validate our planners' answers (outside the clock).
#[path = "scen/validate.rs"]
mod validate;

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use args::{Args, Command, HELP};
use report::RunInfo;

fn main() -> ExitCode {
    let args = match args::parse(std::env::args_os().skip(1)) {
        Ok(Command::Run(args)) => args,
        Ok(Command::Help) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\nRun with --help for usage.");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}

/// The command line that reproduces `args`, for the report's header.
fn command_line(args: &Args) -> String {
    let mut c = String::from("cargo run --release --example compare --");
    if args.maps.as_os_str() != "data/maps" {
        let _ = write!(c, " --maps {}", args.maps.display());
    }
    match &args.out {
        Some(out) if out.as_os_str() == "docs" => c += " --write-docs",
        Some(out) => {
            let _ = write!(c, " --out {}", out.display());
        }
        None => {}
    }
    if args.quick {
        c += " --quick";
    }
    if args.sample != args.quick.then_some(args::QUICK_SAMPLE)
        && let Some(n) = args.sample
    {
        let _ = write!(c, " --sample {n}");
    }
    if args.points != args::Points::Corners {
        let _ = write!(c, " --points {}", args.points.name());
    }
    if !args.only.is_empty() {
        let _ = write!(c, " --only {}", args.only.join(","));
    }
    if args.reps != 1 {
        let _ = write!(c, " --reps {}", args.reps);
    }
    if args.passes != 1 {
        let _ = write!(c, " --passes {}", args.passes);
    }
    if let Some(dir) = &args.export_queries {
        let _ = write!(c, " --export-queries {}", dir.display());
    }
    for file in &args.reference {
        let _ = write!(c, " --reference {}", file.display());
    }
    if c.ends_with(" --") {
        c.truncate(c.len() - 3);
    }
    c
}

fn run(args: &Args) -> Result<(), String> {
    if cfg!(debug_assertions) {
        eprintln!("warning: a debug build; timings mean little (use --release)");
    }
    let maps = measure::find_maps(&args.maps, &args.only)?;
    // Fail on a malformed reference or an unwritable output before spending
    // minutes measuring.
    let references = reference::read_all(&args.reference)?;
    for dir in [&args.out, &args.export_queries].into_iter().flatten() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let clock = Instant::now();
    let mut records = Vec::with_capacity(maps.len());
    for (k, files) in maps.iter().enumerate() {
        eprintln!("[{}/{}] {}", k + 1, maps.len(), files.map.display());
        let record = measure::measure_map(files, args)?;
        if let Some(dir) = &args.export_queries {
            let path = reference::write_export(dir, &record)?;
            eprintln!("  wrote {}", path.display());
        }
        records.push(record);
    }
    let info = RunInfo {
        command: command_line(args),
        quick: args.quick,
        sample: args.sample,
        reps: args.reps,
        passes: args.passes,
        points: args.points.name(),
        seconds: clock.elapsed().as_secs_f64(),
        references,
    };
    if let Some(dir) = &args.out {
        let md = report::markdown(&records, &info);
        let svg = plot::svg(&records, &info);
        for (name, text) in [("compare.md", &md), ("compare.svg", &svg)] {
            let path = dir.join(name);
            std::fs::write(&path, text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
    }
    let mut out = std::io::stdout().lock();
    out.write_all(report::brief(&records, &info).as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write the summary to stdout: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn args(line: &[&str]) -> Args {
        match args::parse(line.iter().map(OsString::from)) {
            Ok(Command::Run(a)) => a,
            other => panic!("not a run: {other:?}"),
        }
    }

    #[test]
    fn the_command_line_is_reproduced() {
        assert_eq!(
            command_line(&args(&[])),
            "cargo run --release --example compare"
        );
        assert_eq!(
            command_line(&args(&["--quick", "--only", "arena"])),
            "cargo run --release --example compare -- --quick --only arena"
        );
        assert_eq!(
            command_line(&args(&["--sample", "200", "--write-docs"])),
            "cargo run --release --example compare -- --write-docs --sample 200"
        );
        assert_eq!(
            command_line(&args(&[
                "--reference=ref.txt",
                "--sample",
                "20",
                "--export-queries",
                "/tmp/q"
            ])),
            "cargo run --release --example compare -- --sample 20 --export-queries /tmp/q \
             --reference ref.txt"
        );
    }

    #[test]
    fn bad_folders_are_errors_not_panics() {
        let e = run(&args(&["--maps", "/nonexistent/maps"])).expect_err("no such folder");
        assert!(e.contains("/nonexistent/maps"), "{e}");
        let e = run(&args(&["--only", "no_such_map"])).expect_err("no such map");
        assert!(e.contains("no_such_map"), "{e}");
        let e = run(&args(&["--reference", "/nonexistent/ref.txt"])).expect_err("no such file");
        assert!(e.contains("/nonexistent/ref.txt"), "{e}");
    }

    #[test]
    fn malformed_files_are_named_in_the_error() {
        let dir = std::env::temp_dir().join(format!("compare-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        let maps = dir.to_string_lossy().into_owned();
        let out = dir.join("out").to_string_lossy().into_owned();
        let write = |name: &str, text: &str| {
            std::fs::write(dir.join(name), text).expect("a temporary file");
        };
        // A map whose header promises more rows than it has.
        write("bad.map", "type octile\nheight 3\nwidth 2\nmap\n..\n");
        write("bad.map.scen", "version 1\n");
        let e = run(&args(&["--maps", &maps, "--out", &out])).expect_err("a malformed map");
        assert!(e.contains("bad.map"), "{e}");
        // A malformed reference file, refused before any measuring.
        write("bad.map", "type octile\nheight 2\nwidth 2\nmap\n..\n..\n");
        write("ref.txt", "# map n mean_us mean_pops\nbad.map 1 2.5\n");
        let reference = dir.join("ref.txt").to_string_lossy().into_owned();
        let e = run(&args(&["--maps", &maps, "--reference", &reference]))
            .expect_err("a malformed reference");
        assert!(e.contains("ref.txt:2"), "{e}");
        // A good map with a scenario query off the map.
        write("bad.map", "type octile\nheight 2\nwidth 2\nmap\n..\n..\n");
        write(
            "bad.map.scen",
            "version 1\n0\tbad.map\t2\t2\t0\t0\t5\t5\t7.07\n",
        );
        let e = run(&args(&["--maps", &maps, "--out", &out])).expect_err("a query off the map");
        assert!(e.contains("outside"), "{e}");
        // And a good one runs through, writing both files.
        write(
            "bad.map.scen",
            "version 1\n0\tbad.map\t2\t2\t0\t0\t1\t1\t1.41\n",
        );
        write("ref.txt", "bad.map 1 2.5 3\n");
        let queries = dir.join("q").to_string_lossy().into_owned();
        run(&args(&[
            "--maps",
            &maps,
            "--out",
            &out,
            "--export-queries",
            &queries,
            "--reference",
            &reference,
        ]))
        .expect("a valid tiny map");
        for f in ["compare.md", "compare.svg"] {
            assert!(dir.join("out").join(f).is_file(), "{f} written");
        }
        assert_eq!(
            std::fs::read_to_string(dir.join("q").join("bad.map.queries")).expect("exported"),
            "0 0 1 1\n"
        );
        let md = std::fs::read_to_string(dir.join("out").join("compare.md")).expect("written");
        assert!(
            md.contains("## Against the authors' implementation"),
            "{md}"
        );
        assert!(md.contains("--reference "), "{md}");
        assert!(md.contains("## Navigation meshes"), "{md}");
        // Both references at once: the Java Anya and the C++ Polyanya.
        write(
            "cpp.txt",
            "# GPPC 2023 Polyanya_MCDT (test)\n# preprocess bad.map 0.004 s\nbad.map 1 0.5 0\n",
        );
        let cpp = dir.join("cpp.txt").to_string_lossy().into_owned();
        run(&args(&[
            "--maps",
            &maps,
            "--out",
            &out,
            "--reference",
            &reference,
            "--reference",
            &cpp,
        ]))
        .expect("two references of different kinds");
        let md = std::fs::read_to_string(dir.join("out").join("compare.md")).expect("written");
        assert!(
            md.contains("## Against the authors' implementation"),
            "{md}"
        );
        assert!(
            md.contains("## Against the C++ Polyanya (GPPC 2023)"),
            "{md}"
        );
        assert!(
            md.contains("Building the mesh takes no longer than the C++ Polyanya's preprocessing"),
            "{md}"
        );
        let e = run(&args(&[
            "--maps",
            &maps,
            "--reference",
            &cpp,
            "--reference",
            &cpp,
        ]))
        .expect_err("two references of one kind");
        assert!(e.contains("both results of"), "{e}");
        std::fs::remove_dir_all(dir.join("q")).expect("the queries folder");
        // Without --out nothing is written.
        std::fs::remove_dir_all(dir.join("out")).expect("the output folder");
        let before = std::fs::read_dir(&dir).expect("the folder").count();
        run(&args(&["--maps", &maps])).expect("a valid tiny map");
        assert_eq!(std::fs::read_dir(&dir).expect("the folder").count(), before);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
