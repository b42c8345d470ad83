//! The bundled Moving AI maps (`data/maps/`): every map and scenario file
//! parses (checked against a plain reading of the files), sampled scenario
//! queries give valid paths, and on `arena` Lazy Theta* is compared with the
//! reference optimum.
//!
//! Scenario cells become points as `SPEC.md`, "Scenario runs", says:
//! corners `(x, y)` (GPPC) or centres `(x + 1/2, y + 1/2)`.
//!
//! The parsers also take headers in any order, tab-separated scenarios and
//! ASCII pictures, and give a grid or a typed error, never a panic, on
//! mangled input.

mod common;

use std::path::{Path as FsPath, PathBuf};

use bevy_anyangle::grid::MapParseErrorKind;
use bevy_anyangle::prelude::*;
use common::{Expect, Reference, close};

/// Every bundled map with its size, as `data/maps/README.md` lists them.
const MAPS: [(&str, u32, u32); 13] = [
    ("arena", 49, 49),
    ("lak303d", 194, 194),
    ("den520d", 256, 257),
    ("brc202d", 530, 481),
    ("lt_backalley_n", 130, 130),
    ("AR0011SR", 512, 512),
    ("BigGameHunters", 512, 512),
    ("random512-10-0", 512, 512),
    ("random512-20-0", 512, 512),
    ("random512-40-0", 512, 512),
    ("maze512-1-0", 512, 512),
    ("8room_000", 512, 512),
    ("Berlin_0_256", 256, 256),
];

fn maps_dir() -> PathBuf {
    FsPath::new(env!("CARGO_MANIFEST_DIR")).join("data/maps")
}

fn read(name: &str) -> String {
    let path = maps_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn load(name: &str) -> (Grid, Scenario) {
    let grid = Grid::from_movingai(&read(&format!("{name}.map")))
        .unwrap_or_else(|e| panic!("{name}.map: {e}"));
    let scen = Scenario::parse(&read(&format!("{name}.map.scen")))
        .unwrap_or_else(|e| panic!("{name}.map.scen: {e}"));
    (grid, scen)
}

/// A plain reading of a `.map` file: the rows after the `map` line, `.`,
/// `G` and `S` free.
fn plain_rows(text: &str) -> Vec<Vec<bool>> {
    text.lines()
        .map(|l| l.trim_end_matches('\r'))
        .skip_while(|l| l.trim() != "map")
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| l.bytes().map(|c| matches!(c, b'.' | b'G' | b'S')).collect())
        .collect()
}

#[test]
fn every_bundled_map_parses_cell_for_cell() {
    let on_disk = std::fs::read_dir(maps_dir())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "map")
        })
        .count();
    assert_eq!(
        on_disk,
        MAPS.len(),
        "every .map in data/maps is listed here"
    );
    for (name, width, height) in MAPS {
        let text = read(&format!("{name}.map"));
        let grid = Grid::from_movingai(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((grid.width(), grid.height()), (width, height), "{name}");
        let rows = plain_rows(&text);
        assert_eq!(rows.len(), height as usize, "{name}");
        for (y, row) in rows.iter().enumerate() {
            assert_eq!(row.len(), width as usize, "{name} row {y}");
            for (x, &free) in row.iter().enumerate() {
                assert_eq!(
                    grid.is_free_xy(x as i64, y as i64),
                    free,
                    "{name} cell ({x}, {y})"
                );
            }
        }
    }
}

#[test]
fn every_scenario_file_parses_and_fits_its_map() {
    for (name, width, height) in MAPS {
        let (grid, scen) = load(name);
        let text = read(&format!("{name}.map.scen"));
        let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
        assert_eq!(
            scen.entries.len(),
            lines - 1,
            "{name}: one entry per line after `version`"
        );
        assert!(!scen.entries.is_empty(), "{name}");
        let r = Reference::new(&grid);
        for (i, e) in scen.entries.iter().enumerate() {
            assert_eq!(
                (e.map_width, e.map_height),
                (width, height),
                "{name} entry {i}"
            );
            for cell in [e.start, e.goal] {
                assert!(grid.is_free(cell), "{name} entry {i}: {cell} is blocked");
            }
            assert_eq!(
                r.region_of_cell(i64::from(e.start.x), i64::from(e.start.y)),
                r.region_of_cell(i64::from(e.goal.x), i64::from(e.goal.y)),
                "{name} entry {i}: scenario queries are solvable"
            );
            assert!(e.octile_length >= 0.0);
        }
    }
}

/// A scenario cell as a query point.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Corners,
    Centres,
}

fn point(cell: UVec2, mode: Mode) -> DVec2 {
    let c = cell.as_dvec2();
    match mode {
        Mode::Corners => c,
        Mode::Centres => c + DVec2::splat(0.5),
    }
}

/// Plans `samples` queries spread over the whole scenario (all buckets), in
/// both modes, and validates every path. Returns how many were checked.
fn sample_map(name: &str, samples: usize, algorithm: Algorithm) -> usize {
    let (grid, scen) = load(name);
    let r = Reference::new(&grid);
    let mut planner = Planner::new();
    let options = PlanOptions::with_algorithm(algorithm);
    let n = scen.entries.len();
    let mut checked = 0;
    for k in 0..samples {
        // Evenly spread, last entry included: the longest queries come last.
        let e = &scen.entries[(k * (n - 1)) / (samples - 1).max(1)];
        for mode in [Mode::Corners, Mode::Centres] {
            let (s, t) = (point(e.start, mode), point(e.goal, mode));
            let result = planner.plan(&grid, s, t, &options);
            let path = result
                .as_ref()
                .unwrap_or_else(|err| panic!("{name} {algorithm} {mode:?} {s} -> {t}: {err}"));
            if let Err(err) = r.validate(s, t, path, Expect::for_algorithm(algorithm)) {
                panic!(
                    "{name} {algorithm} {mode:?} {s} -> {t}: {err}\nwaypoints {:?}",
                    path.waypoints
                );
            }
            assert!(!path.is_fallback(), "{name}: scenario goals are reachable");
            checked += 1;
        }
    }
    checked
}

#[test]
fn scenario_samples_give_valid_lazy_theta_paths_on_every_map() {
    let checked: usize = MAPS
        .iter()
        .map(|(name, ..)| sample_map(name, 6, Algorithm::LazyTheta))
        .sum();
    assert_eq!(checked, MAPS.len() * 12);
}

#[test]
fn scenario_samples_give_valid_astar_paths_on_every_map() {
    let checked: usize = MAPS
        .iter()
        .map(|(name, ..)| sample_map(name, 6, Algorithm::AStar))
        .sum();
    assert_eq!(checked, MAPS.len() * 12);
}

#[test]
fn scenario_samples_give_valid_anya_paths_on_every_map() {
    let checked: usize = MAPS
        .iter()
        .map(|(name, ..)| sample_map(name, 4, Algorithm::Anya))
        .sum();
    assert_eq!(checked, MAPS.len() * 8);
}

/// Every `arena` query in both modes against the reference optimum (the
/// corner visibility graph is built once and reused). Returns
/// (queries, mean relative excess).
fn arena_against_reference(algorithm: Algorithm) -> (usize, f64) {
    let (grid, scen) = load("arena");
    let r = Reference::new(&grid);
    let mut planner = Planner::new();
    let options = PlanOptions::with_algorithm(algorithm);
    let (mut count, mut excess) = (0, 0.0);
    for e in &scen.entries {
        for mode in [Mode::Corners, Mode::Centres] {
            let (s, t) = (point(e.start, mode), point(e.goal, mode));
            let result = planner.plan(&grid, s, t, &options);
            let fail = |msg: String| {
                panic!(
                    "{}",
                    r.report(&format!("arena {algorithm} {mode:?}: {msg}"), s, t, &result)
                )
            };
            let Ok(path) = &result else {
                fail("no path".into())
            };
            if let Err(err) = r.validate(s, t, path, Expect::for_algorithm(algorithm)) {
                fail(err);
            }
            let opt = r.optimum(s, t).expect("scenario goals are reachable");
            if let Mode::Centres = mode {
                // The scenario's length is an 8-connected path between the
                // centres, which is a valid any-angle path (rounded to 5
                // decimals in the file).
                assert!(
                    opt <= e.octile_length + 1e-4,
                    "reference {opt} above the octile length {}",
                    e.octile_length
                );
            }
            if path.length < opt && !close(path.length, opt) {
                fail(format!(
                    "shorter ({}) than the optimum ({opt})",
                    path.length
                ));
            }
            if algorithm == Algorithm::Anya && !close(path.length, opt) {
                fail(format!("length {} but the optimum is {opt}", path.length));
            }
            excess += (path.length - opt) / opt.max(1e-300);
            count += 1;
        }
    }
    (count, excess / count as f64)
}

#[test]
fn lazy_theta_is_within_one_and_a_half_percent_of_optimal_on_arena() {
    let (count, mean_excess) = arena_against_reference(Algorithm::LazyTheta);
    if std::env::var_os("ANYANGLE_TEST_STATS").is_some() {
        eprintln!(
            "arena lazy-theta: {count} queries, mean excess {:.4} %",
            mean_excess * 100.0
        );
    }
    assert!(count >= 300, "{count}");
    assert!(
        mean_excess <= 0.015,
        "mean excess {:.3} % over {count} queries",
        mean_excess * 100.0
    );
}

#[test]
fn anya_is_optimal_on_arena() {
    let (count, _) = arena_against_reference(Algorithm::Anya);
    assert!(count >= 300, "{count}");
}

#[test]
fn header_fields_in_any_order_and_crlf() {
    let g =
        Grid::from_movingai("width 3\r\ntype octile\r\nheight 2\r\nmap\r\n.@T\r\nGS.\r\n").unwrap();
    assert_eq!((g.width(), g.height()), (3, 2));
    assert!(g.is_free_xy(0, 0) && !g.is_free_xy(1, 0) && !g.is_free_xy(2, 0));
    assert!(g.is_free_xy(0, 1) && g.is_free_xy(1, 1) && g.is_free_xy(2, 1));
}

#[test]
fn tab_separated_scenarios_allow_spaces_in_map_names() {
    let s = Scenario::parse("version 1\n3\tmy map.map\t4\t4\t0\t1\t3\t2\t3.4\n").unwrap();
    assert_eq!(s.entries[0].map, "my map.map");
    assert_eq!(s.entries[0].bucket, 3);
    // Space-separated lines still parse, and a bad field is pointed at.
    let e = Scenario::parse("version 1\n0 m.map 4 4 0 x 3 2 3.4\n").unwrap_err();
    assert_eq!((e.line, e.column), (2, 15));
    let e = Scenario::parse("version 1\n0\tm.map\t4\t4\t0\t9\t3\t2\t3.4\n").unwrap_err();
    assert!(matches!(e.kind, MapParseErrorKind::PointOutside { .. }));
    assert_eq!(e.column, 13, "the start's x field");
}

/// Mangled versions of a valid map and scenario (bytes dropped, repeated
/// or replaced) give a grid or a typed error, never a panic.
#[test]
fn mangled_input_never_panics() {
    let map = "type octile\nheight 3\nwidth 4\nmap\n.@..\n..T.\n....\n";
    let scen = "version 1\n0\tm.map\t4\t3\t0\t0\t3\t2\t3.8\n";
    let mut seed = 0x853C_49E6_748F_EA9Bu64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let alphabet = b"0123456789 \t\n\r.@-x";
    for _ in 0..20_000 {
        for text in [map, scen] {
            let mut bytes = text.as_bytes().to_vec();
            for _ in 0..=next(4) {
                let i = next(bytes.len());
                match next(3) {
                    0 => {
                        bytes.remove(i);
                    }
                    1 => bytes.insert(i, bytes[i]),
                    _ => bytes[i] = alphabet[next(alphabet.len())],
                }
                if bytes.is_empty() {
                    break;
                }
            }
            let text = String::from_utf8_lossy(&bytes);
            let _ = Grid::from_movingai(&text);
            let _ = Grid::from_ascii(&text);
            let _ = Scenario::parse(&text);
        }
    }
}

#[test]
fn ascii_rows_must_match() {
    let e = Grid::from_ascii("...\n..").unwrap_err();
    assert_eq!(e.line, 2);
    assert_eq!(
        Grid::from_ascii("  \n ").unwrap_err().kind,
        MapParseErrorKind::Empty
    );
}
