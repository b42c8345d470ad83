//! Turning the measurements into numbers: per-solver summaries, the targets,
//! and the markdown report.

use std::fmt::Write as _;

use crate::measure::{
    ANYA, ASTAR, BASELINE, GAME_MAPS, LAZY_THETA, MapRecord, MeshFigures, Outcome, POLYANYA, Query,
    Run, SOLVERS, Solver, Unreachability,
};
use crate::reference::{Reference, ReferenceKind, ReferenceRow};

/// Relative tolerance for "the same length".
const SAME_LENGTH: f64 = 1e-9;

/// How the run was made, for the report's header.
#[derive(Clone, Debug)]
pub struct RunInfo {
    /// The command line that reproduces the run.
    pub command: String,
    /// `--quick`.
    pub quick: bool,
    /// Queries per map (`None`: all).
    pub sample: Option<usize>,
    /// Timings per query in a pass.
    pub reps: u32,
    /// Passes over each map's queries.
    pub passes: u32,
    /// `corners` or `centres`.
    pub points: &'static str,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
    /// Other implementations' results (`--reference`): at most one of
    /// each kind.
    pub references: Vec<Reference>,
}

impl RunInfo {
    /// How often each query was timed: "3 runs", or "3 runs in each of 2
    /// passes over the map's queries".
    pub fn timings(&self) -> String {
        let runs = format!("{} run{}", self.reps, if self.reps == 1 { "" } else { "s" });
        if self.passes == 1 {
            runs
        } else {
            format!(
                "{runs} in each of {} passes over the map's queries",
                self.passes
            )
        }
    }

    /// The reference of `kind`, if one was given.
    pub fn reference(&self, kind: ReferenceKind) -> Option<&Reference> {
        self.references.iter().find(|r| r.kind == kind)
    }
}

/// Mean of a slice (`None` when empty).
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The `q` quantile (0..=1) of a slice, nearest rank (`None` when empty).
pub fn quantile(xs: &[f64], q: f64) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    Some(v[rank - 1])
}

/// Whether a solver took part in a query (the baseline skips non-vertex
/// points).
fn ran(run: &Run) -> bool {
    run.outcome != Outcome::Skipped
}

/// The queries every solver that ran answered with a path to the goal: the
/// common ground on which times and lengths are compared.
pub fn common(map: &MapRecord) -> Vec<&Query> {
    map.queries
        .iter()
        .filter(|q| q.runs.iter().all(|r| !ran(r) || r.found_length().is_some()))
        .collect()
}

/// One solver's numbers on one map.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Whether the solver ran at all.
    pub ran: bool,
    /// Mean time, microseconds.
    pub mean_us: Option<f64>,
    /// Median time.
    pub median_us: Option<f64>,
    /// 95th percentile time.
    pub p95_us: Option<f64>,
    /// Mean expansions.
    pub mean_expanded: Option<f64>,
    /// Mean open-list pops.
    pub mean_popped: Option<f64>,
    /// Mean over the common queries of `length / Anya's length - 1`, in %.
    pub excess_pct: Option<f64>,
    /// Queries (scenario and crafted) answered "unreachable" with
    /// `FallbackPolicy::Fail`, and their mean time.
    pub unreachable: (usize, Option<f64>),
    /// Crafted queries answered with a fallback path, and their mean time.
    pub fallback: (usize, Option<f64>),
    /// Answers that were neither (errors, moved starts, crafted queries
    /// answered as reachable).
    pub other: usize,
    /// Answers (scenario and crafted, both policies) that the validator
    /// rejected.
    pub invalid: usize,
}

/// Summarises solver `i` on `map`.
pub fn summarise(map: &MapRecord, i: usize) -> Summary {
    let common = common(map);
    let times: Vec<f64> = common.iter().map(|q| q.runs[i].time_us).collect();
    let expanded: Vec<f64> = common
        .iter()
        .filter_map(|q| q.runs[i].expanded)
        .map(|e| e as f64)
        .collect();
    let popped: Vec<f64> = common
        .iter()
        .filter_map(|q| q.runs[i].popped)
        .map(|e| e as f64)
        .collect();
    let excess: Vec<f64> = common
        .iter()
        .filter_map(|q| {
            let reference = q.runs[ANYA].found_length()?;
            let l = q.runs[i].found_length()?;
            (reference > 0.0).then(|| (l / reference - 1.0) * 100.0)
        })
        .collect();
    let mut unreachable_us = Vec::new();
    let mut fallback_us = Vec::new();
    let mut other = 0;
    let invalid = map
        .queries
        .iter()
        .map(|q| &q.runs[i])
        .chain(
            map.unreachable
                .iter()
                .flat_map(|u| [&u.fail[i], &u.fallback[i]]),
        )
        .filter(|r| r.invalid.is_some())
        .count();
    let all_ran = map.queries.iter().all(|q| ran(&q.runs[i]));
    for q in &map.queries {
        match q.runs[i].outcome {
            Outcome::Found { .. } | Outcome::Skipped => {}
            Outcome::Unreachable => unreachable_us.push(q.runs[i].time_us),
            _ => other += 1,
        }
    }
    for u in &map.unreachable {
        match u.fail[i].outcome {
            Outcome::Unreachable => unreachable_us.push(u.fail[i].time_us),
            Outcome::Skipped => {}
            _ => other += 1,
        }
        match u.fallback[i].outcome {
            Outcome::Fallback { .. } => fallback_us.push(u.fallback[i].time_us),
            Outcome::Skipped => {}
            _ => other += 1,
        }
    }
    Summary {
        ran: all_ran && !map.queries.is_empty(),
        mean_us: mean(&times),
        median_us: quantile(&times, 0.5),
        p95_us: quantile(&times, 0.95),
        mean_expanded: (expanded.len() == times.len())
            .then(|| mean(&expanded))
            .flatten(),
        mean_popped: (popped.len() == times.len())
            .then(|| mean(&popped))
            .flatten(),
        excess_pct: mean(&excess),
        unreachable: (unreachable_us.len(), mean(&unreachable_us)),
        fallback: (fallback_us.len(), mean(&fallback_us)),
        other,
        invalid,
    }
}

/// A number for a table cell, `n/a` when absent.
fn cell(x: Option<f64>, decimals: usize) -> String {
    match x {
        Some(v) => format!("{v:.decimals$}"),
        None => "n/a".to_owned(),
    }
}

/// Microseconds with a precision that suits their size.
fn us(x: Option<f64>) -> String {
    match x {
        Some(v) if v < 10.0 => format!("{v:.2}"),
        Some(v) if v < 1000.0 => format!("{v:.1}"),
        other => cell(other, 0),
    }
}

/// `n · mean µs`, or `0`.
fn count_us((n, t): (usize, Option<f64>)) -> String {
    if n == 0 {
        "0".to_owned()
    } else {
        format!("{n} · {} µs", us(t))
    }
}

/// The hardest tenth (at least one) of the common queries by A* expansions.
pub fn hardest_tenth<'a>(common: &[&'a Query]) -> Vec<&'a Query> {
    let mut v: Vec<&Query> = common.to_vec();
    v.sort_by_key(|q| std::cmp::Reverse(q.runs[ASTAR].expanded.unwrap_or(0)));
    let k = v.len().div_ceil(10);
    v.truncate(k);
    v
}

/// `sum of solver a's times / sum of solver b's times` over `queries`.
pub fn time_ratio(queries: &[&Query], a: usize, b: usize) -> Option<f64> {
    let ta: f64 = queries.iter().map(|q| q.runs[a].time_us).sum();
    let tb: f64 = queries.iter().map(|q| q.runs[b].time_us).sum();
    (!queries.is_empty() && tb > 0.0).then(|| ta / tb)
}

/// Whether solver `i` found a path shorter than Anya's on `q` (Anya is
/// optimal, so it should never happen).
fn beats_anya(q: &Query, i: usize) -> bool {
    match (q.runs[i].found_length(), q.runs[ANYA].found_length()) {
        (Some(l), Some(a)) => l < a * (1.0 - SAME_LENGTH) - SAME_LENGTH,
        _ => false,
    }
}

/// The common queries on which solver `i` beat Anya.
fn shorter_than_anya(map: &MapRecord, i: usize) -> Vec<&Query> {
    common(map)
        .into_iter()
        .filter(|q| beats_anya(q, i))
        .collect()
}

/// The baseline against our A*: (queries compared, disagreements, largest
/// relative difference).
fn baseline_agreement(map: &MapRecord) -> (usize, usize, f64) {
    let mut compared = 0;
    let mut differ = 0;
    let mut worst = 0.0f64;
    for q in &map.queries {
        let (a, b) = (&q.runs[ASTAR], &q.runs[BASELINE]);
        if !ran(b) {
            continue;
        }
        compared += 1;
        match (a.found_length(), b.found_length()) {
            (Some(x), Some(y)) => {
                let rel = (x - y).abs() / x.max(1.0);
                worst = worst.max(rel);
                if rel > SAME_LENGTH {
                    differ += 1;
                }
            }
            (None, None) => {}
            _ => differ += 1,
        }
    }
    (compared, differ, worst)
}

/// One target's verdict on one map.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// The map.
    pub map: String,
    /// The measured value, formatted.
    pub value: String,
    /// Whether the target is met (`None`: could not be measured, or not
    /// judged on this map).
    pub met: Option<bool>,
    /// Whether the target speaks about this map (shown for comparison
    /// otherwise).
    pub judged: bool,
}

impl Verdict {
    /// The `met?` cell.
    fn met_cell(&self) -> &'static str {
        match (self.judged, self.met) {
            (false, _) => "not judged",
            (true, Some(true)) => "PASS",
            (true, Some(false)) => "**FAIL**",
            (true, None) => "n/a",
        }
    }
}

/// A target and its verdicts.
#[derive(Clone, Debug)]
pub struct Target {
    /// What is promised.
    pub claim: &'static str,
    /// How it is measured.
    pub measure: &'static str,
    /// Per map.
    pub verdicts: Vec<Verdict>,
}

impl Target {
    /// Met on every judged map where it could be measured (and measured
    /// somewhere).
    pub fn met(&self) -> bool {
        self.status() == Some(true)
    }

    /// `None` when measured on no judged map, else whether it is met on
    /// every judged map where it was measured.
    pub fn status(&self) -> Option<bool> {
        let judged = || self.verdicts.iter().filter(|v| v.judged);
        judged()
            .any(|v| v.met.is_some())
            .then(|| judged().all(|v| v.met != Some(false)))
    }
}

/// Whether the map named `name` is a game map or the maze, the maps the
/// speed targets against A* and the reference are judged on.
fn game_or_maze(name: &str) -> bool {
    GAME_MAPS.contains(&name) || name.starts_with("maze")
}

/// The targets, checked on this run's numbers: seven always, two more with
/// each reference.
pub fn targets(maps: &[MapRecord], references: &[Reference]) -> Vec<Target> {
    let verdict = |m: &MapRecord,
                   value: Option<f64>,
                   fmt: &dyn Fn(f64) -> String,
                   ok: &dyn Fn(f64) -> bool| {
        Verdict {
            map: m.name.clone(),
            value: value.map_or_else(|| "n/a".to_owned(), fmt),
            met: value.map(ok),
            judged: true,
        }
    };
    let not_judged = |v: Verdict| Verdict {
        met: None,
        judged: false,
        ..v
    };
    let ratio = |x: f64| format!("{x:.2}");
    let speedup = |x: f64| format!("{x:.1}x");

    let t1 = Target {
        claim: "Anya's mean time is at most 0.2x grid A*'s on every game map and at most 0.5x on the maze",
        measure: "mean Anya µs / mean A* µs over the common queries (met if <= 0.2 on a game map, <= 0.5 on the maze; the other maps are shown but not judged)",
        verdicts: maps
            .iter()
            .map(|m| {
                let bound = if m.is_game_map() {
                    0.2
                } else if m.is_maze() {
                    0.5
                } else {
                    f64::NAN
                };
                let v = verdict(m, time_ratio(&common(m), ANYA, ASTAR), &ratio, &|x| {
                    x <= bound
                });
                if bound.is_nan() { not_judged(v) } else { v }
            })
            .collect(),
    };
    let t2 = Target {
        claim: "Anya is at least 5x faster than A* on the 10 % hardest queries of every game map",
        measure: "total A* µs / total Anya µs over the tenth of the common queries with the most A* expansions (met if >= 5; judged on game maps only, the others are shown but not judged)",
        verdicts: maps
            .iter()
            .map(|m| {
                let hard = hardest_tenth(&common(m));
                let v = verdict(m, time_ratio(&hard, ASTAR, ANYA), &speedup, &|x| x >= 5.0);
                if m.is_game_map() { v } else { not_judged(v) }
            })
            .collect(),
    };
    let t_random = Target {
        claim: "On the random512 maps Anya is no slower than A*",
        measure: "mean Anya µs / mean A* µs over the common queries of each random map (met if <= 1)",
        verdicts: maps
            .iter()
            .filter(|m| m.is_random())
            .map(|m| {
                verdict(m, time_ratio(&common(m), ANYA, ASTAR), &ratio, &|x| {
                    x <= 1.0
                })
            })
            .collect(),
    };
    let t3 = Target {
        claim: "Lazy Theta*'s mean length is within 1 % of Anya's, and its mean time at most 1.5x A*'s",
        measure: "mean length excess over Anya (met if <= 1 %) and mean Lazy Theta* µs / mean A* µs (met if <= 1.5)",
        verdicts: maps
            .iter()
            .map(|m| {
                let s = summarise(m, LAZY_THETA);
                let r = time_ratio(&common(m), LAZY_THETA, ASTAR);
                let value = format!(
                    "{} % · {}",
                    cell(s.excess_pct, 3),
                    r.map_or_else(|| "n/a".to_owned(), ratio)
                );
                let met = match (s.excess_pct, r) {
                    (Some(e), Some(r)) => Some(e <= 1.0 && r <= 1.5),
                    _ => None,
                };
                Verdict {
                    map: m.name.clone(),
                    value,
                    met,
                    judged: true,
                }
            })
            .collect(),
    };
    let t4 = Target {
        claim: "Unreachable goals are answered without a search",
        measure: "every crafted unreachable query is answered `Unreachable` by every planner (`FallbackPolicy::Fail`), and the slowest query takes less than A*'s median query on that map; a query's time is its median over our planners (every solver but `pathfinding`), which answer it with the same code, so that one preempted run does not decide",
        verdicts: maps
            .iter()
            .map(|m| {
                let ours: Vec<usize> = (0..SOLVERS.len()).filter(|&i| i != BASELINE).collect();
                let all_unreachable = !m.unreachable.is_empty()
                    && m.unreachable.iter().all(|u| {
                        ours.iter()
                            .all(|&i| u.fail[i].outcome == Outcome::Unreachable)
                    });
                let slowest = m
                    .unreachable
                    .iter()
                    .filter_map(|u| {
                        let times: Vec<f64> = ours.iter().map(|&i| u.fail[i].time_us).collect();
                        quantile(&times, 0.5)
                    })
                    .fold(0.0f64, f64::max);
                let median = summarise(m, ASTAR).median_us;
                Verdict {
                    map: m.name.clone(),
                    value: format!(
                        "{} queries · slowest {} µs · A* median {} µs",
                        m.unreachable.len(),
                        us(Some(slowest)),
                        us(median)
                    ),
                    met: median.map(|med| all_unreachable && slowest < med),
                    judged: true,
                }
            })
            .collect(),
    };
    let mut all = vec![t1, t2, t_random, t3, t4];
    all.push(Target {
        claim: "Polyanya is exact: on every query its answer is Anya's, never longer, never shorter, and valid",
        measure: "Polyanya's answer beside Anya's on every scenario query and every crafted one (both fallback policies): `longer` / `shorter` count paths (or fallback paths) whose length differs from Anya's by more than 1e-9 relative (absolute below length 1), `other outcome` answers of another kind (a path against \"unreachable\"), `invalid` answers the validator of `scen --validate` rejects; met if all four are 0",
        verdicts: maps
            .iter()
            .map(|m| {
                let e = exactness(m);
                Verdict {
                    map: m.name.clone(),
                    value: e.cell(),
                    met: (e.compared > 0).then(|| e.is_exact()),
                    judged: true,
                }
            })
            .collect(),
    });
    all.push(Target {
        claim: "Polyanya's mean time is at most 0.5x Anya's on the maps of at least 256 x 256 cells, the random and room maps aside",
        measure: "mean Polyanya µs / mean Anya µs over the common queries (met if <= 0.5; judged on the maps with both sides at least 256 cells but `random*` and `8room*`, of the bundled maps den520d, brc202d, AR0011SR, BigGameHunters, the city map Berlin_0_256 and the maze maze512-1-0; the others are shown but not judged)",
        verdicts: maps
            .iter()
            .map(|m| {
                let v = verdict(m, time_ratio(&common(m), POLYANYA, ANYA), &ratio, &|x| {
                    x <= 0.5
                });
                if polyanya_judged(m) { v } else { not_judged(v) }
            })
            .collect(),
    });
    for reference in references {
        let rows = against_reference(maps, reference);
        let judge = |c: &Comparison, value: Option<f64>, fmt: &dyn Fn(f64) -> String| Verdict {
            map: c.row.map.clone(),
            value: match (value, c.ours.is_some(), c.same_queries()) {
                (Some(x), ..) => fmt(x),
                (None, false, _) => "not in this run".to_owned(),
                (None, true, false) => "n/a (different queries)".to_owned(),
                (None, true, true) => "n/a".to_owned(),
            },
            met: None,
            judged: true,
        };
        match reference.kind {
            ReferenceKind::Anya => {
                all.push(Target {
                    claim: "Anya pops no more nodes than the Java reference (mean per query)",
                    measure: "Anya's mean pops / the Java reference's mean pops, on every map of the reference file (met if <= 1)",
                    verdicts: rows
                        .iter()
                        .map(|c| {
                            let r = c.pops_ratio();
                            Verdict {
                                met: r.map(|x| x <= 1.0),
                                ..judge(c, r, &ratio)
                            }
                        })
                        .collect(),
                });
                all.push(Target {
                    claim: "Anya is at least 5x faster than the Java reference on game maps and on the maze",
                    measure: "the Java reference's mean µs / Anya's mean µs (met if >= 5; judged on game maps and the maze, the other maps of the reference file are shown but not judged)",
                    verdicts: rows
                        .iter()
                        .map(|c| {
                            let r = c.time_ratio().map(|x| 1.0 / x);
                            let v = Verdict {
                                met: r.map(|x| x >= 5.0),
                                ..judge(c, r, &speedup)
                            };
                            if game_or_maze(&c.row.map) { v } else { not_judged(v) }
                        })
                        .collect(),
                });
            }
            ReferenceKind::Polyanya => {
                all.push(Target {
                    claim: "Polyanya is faster than the C++ Polyanya of GPPC 2023 on every map",
                    measure: "our Polyanya's mean µs / the C++ entry's mean µs on the same queries, on every map of the reference file (met if < 1)",
                    verdicts: rows
                        .iter()
                        .map(|c| {
                            let r = c.time_ratio();
                            Verdict {
                                met: r.map(|x| x < 1.0),
                                ..judge(c, r, &ratio)
                            }
                        })
                        .collect(),
                });
                all.push(Target {
                    claim: "Building the mesh takes no longer than the C++ Polyanya's preprocessing on every map",
                    measure: "our fastest `NavMesh::build` of the map / the C++ entry's preprocessing (`PreprocessMap` and `PrepareForSearch`, one run), on every map of the reference file (met if <= 1)",
                    verdicts: rows
                        .iter()
                        .map(|c| {
                            let build = c.mesh.as_ref().map(|m| m.build_s);
                            let value = match (build, c.row.preprocess_s) {
                                (Some(b), Some(p)) => format!(
                                    "{} ms / {} ms = {}",
                                    ms(b),
                                    ms(p),
                                    if p > 0.0 { format!("{:.2}", b / p) } else { "n/a".to_owned() }
                                ),
                                (None, _) => "not in this run".to_owned(),
                                (Some(_), None) => "n/a (no preprocess line)".to_owned(),
                            };
                            Verdict {
                                map: c.row.map.clone(),
                                value,
                                met: build.zip(c.row.preprocess_s).map(|(b, p)| b <= p),
                                judged: true,
                            }
                        })
                        .collect(),
                });
            }
        }
    }
    all
}

/// Whether the target "Polyanya at most 0.5x Anya" is judged on `m`: both
/// sides at least 256 cells, not a random or room map.
fn polyanya_judged(m: &MapRecord) -> bool {
    m.size.0 >= 256 && m.size.1 >= 256 && !m.is_random() && !m.name.starts_with("8room")
}

/// Seconds as milliseconds with a precision that suits their size.
fn ms(secs: f64) -> String {
    us(Some(secs * 1e3))
}

/// The length of a path to the goal or to a fallback point.
fn any_length(o: &Outcome) -> Option<f64> {
    match *o {
        Outcome::Found { length } | Outcome::Fallback { length } => Some(length),
        _ => None,
    }
}

/// Polyanya's answers against Anya's on one map.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Exactness {
    /// Answer pairs compared: scenario queries, crafted ones with both
    /// policies.
    pub compared: usize,
    /// Polyanya's path longer than Anya's (more than [`SAME_LENGTH`]
    /// relative).
    pub longer: usize,
    /// Polyanya's path shorter than Anya's.
    pub shorter: usize,
    /// Answers of different kinds (a path against "unreachable", ...).
    pub other_outcome: usize,
    /// Polyanya's answers the validator rejected.
    pub invalid: usize,
    /// The largest relative length difference where both found a path.
    pub largest_gap: f64,
}

impl Exactness {
    /// Whether Polyanya matched Anya everywhere.
    pub fn is_exact(&self) -> bool {
        self.longer == 0 && self.shorter == 0 && self.other_outcome == 0 && self.invalid == 0
    }

    /// The target's `measured` cell.
    fn cell(&self) -> String {
        format!(
            "{} answers · {} longer · {} shorter · {} other outcome · {} invalid · largest gap {:.1e}",
            self.compared,
            self.longer,
            self.shorter,
            self.other_outcome,
            self.invalid,
            self.largest_gap
        )
    }
}

/// Compares Polyanya's answers with Anya's on `map`.
pub fn exactness(map: &MapRecord) -> Exactness {
    let pairs = map
        .queries
        .iter()
        .map(|q| (&q.runs[ANYA], &q.runs[POLYANYA]))
        .chain(map.unreachable.iter().flat_map(|u| {
            [
                (&u.fail[ANYA], &u.fail[POLYANYA]),
                (&u.fallback[ANYA], &u.fallback[POLYANYA]),
            ]
        }));
    let mut e = Exactness::default();
    for (a, p) in pairs {
        e.compared += 1;
        if p.invalid.is_some() {
            e.invalid += 1;
        }
        let same_kind = std::mem::discriminant(&a.outcome) == std::mem::discriminant(&p.outcome);
        match (any_length(&a.outcome), any_length(&p.outcome)) {
            (Some(la), Some(lp)) if same_kind => {
                let tolerance = SAME_LENGTH * la.max(1.0);
                if lp - la > tolerance {
                    e.longer += 1;
                } else if la - lp > tolerance {
                    e.shorter += 1;
                }
                e.largest_gap = e.largest_gap.max((lp - la).abs() / la.max(1.0));
            }
            _ if same_kind && !matches!(a.outcome, Outcome::Failed(_)) => {}
            _ => e.other_outcome += 1,
        }
    }
    e
}

/// One solver's figures on one map for the comparison with a reference:
/// over every scenario query of the run that the solver answered with a
/// path.
#[derive(Clone, Debug)]
pub struct SolverFigures {
    /// Scenario queries run (and exported).
    pub exported: usize,
    /// Those the solver answered with a path.
    pub found: usize,
    /// Mean time on those, µs.
    pub mean_us: Option<f64>,
    /// Mean open-list pops.
    pub mean_pops: Option<f64>,
    /// Mean expand calls.
    pub mean_expanded: Option<f64>,
}

/// Solver `i`'s [`SolverFigures`] on `m`.
fn solver_figures(m: &MapRecord, i: usize) -> SolverFigures {
    let found: Vec<&Run> = m
        .queries
        .iter()
        .map(|q| &q.runs[i])
        .filter(|r| r.found_length().is_some())
        .collect();
    let of = |f: &dyn Fn(&Run) -> Option<f64>| {
        let xs: Vec<f64> = found.iter().filter_map(|r| f(r)).collect();
        (xs.len() == found.len()).then(|| mean(&xs)).flatten()
    };
    SolverFigures {
        exported: m.queries.len(),
        found: found.len(),
        mean_us: of(&|r| Some(r.time_us)),
        mean_pops: of(&|r| r.popped.map(|p| p as f64)),
        mean_expanded: of(&|r| r.expanded.map(|e| e as f64)),
    }
}

/// The solver a reference is put beside.
pub fn compared_solver(kind: ReferenceKind) -> usize {
    match kind {
        ReferenceKind::Anya => ANYA,
        ReferenceKind::Polyanya => POLYANYA,
    }
}

/// One line of the reference file beside our figures on that map.
#[derive(Clone, Debug)]
pub struct Comparison<'a> {
    /// The reference's line.
    pub row: &'a ReferenceRow,
    /// The compared solver's figures ([`compared_solver`]; `None`: the map
    /// is not in this run).
    pub ours: Option<SolverFigures>,
    /// Anya's figures, for a Polyanya reference (`None` otherwise, or when
    /// the map is not in this run).
    pub anya: Option<SolverFigures>,
    /// The map's mesh (`None`: the map is not in this run).
    pub mesh: Option<MeshFigures>,
}

impl Comparison<'_> {
    /// Whether the reference ran as many queries as this run exported.
    pub fn same_queries(&self) -> bool {
        self.ours.as_ref().is_some_and(|a| a.exported == self.row.n)
    }

    /// Our mean time over the reference's, on the same queries (below 1:
    /// ours is faster).
    pub fn time_ratio(&self) -> Option<f64> {
        let a = self.ours.as_ref()?.mean_us?;
        (self.same_queries() && self.row.mean_us > 0.0).then(|| a / self.row.mean_us)
    }

    /// Anya's mean time over the reference's, on the same queries.
    pub fn anya_time_ratio(&self) -> Option<f64> {
        let a = self.anya.as_ref()?.mean_us?;
        (self.same_queries() && self.row.mean_us > 0.0).then(|| a / self.row.mean_us)
    }

    /// Our mean pops over the reference's, on the same queries.
    pub fn pops_ratio(&self) -> Option<f64> {
        let a = self.ours.as_ref()?.mean_pops?;
        (self.same_queries() && self.row.mean_pops > 0.0).then(|| a / self.row.mean_pops)
    }

    /// The `queries` cell: the count, or why the sets differ.
    fn queries_cell(&self, solver: &str) -> String {
        match &self.ours {
            None => format!("not in this run (reference: {})", self.row.n),
            Some(a) if a.exported != self.row.n => format!(
                "**{} in the reference, {} exported: not compared**",
                self.row.n, a.exported
            ),
            Some(a) if a.found != a.exported => {
                format!("{} ({} answered by {solver})", a.exported, a.found)
            }
            Some(a) => a.exported.to_string(),
        }
    }
}

/// Each line of `reference`, in its order, beside our figures on that map.
pub fn against_reference<'a>(maps: &[MapRecord], reference: &'a Reference) -> Vec<Comparison<'a>> {
    let i = compared_solver(reference.kind);
    reference
        .rows
        .iter()
        .map(|row| {
            let m = maps.iter().find(|m| m.name == row.map);
            Comparison {
                row,
                ours: m.map(|m| solver_figures(m, i)),
                anya: m.filter(|_| i != ANYA).map(|m| solver_figures(m, ANYA)),
                mesh: m.and_then(|m| m.mesh.clone()),
            }
        })
        .collect()
}

/// The cells of the comparison table, one row per reference line (the
/// header first).
fn reference_cells(maps: &[MapRecord], reference: &Reference) -> Vec<Vec<String>> {
    let strings = |xs: &[&str]| xs.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
    let ratio = |x: Option<f64>| x.map_or_else(|| "n/a".to_owned(), |x| format!("{x:.2}"));
    match reference.kind {
        ReferenceKind::Anya => {
            let mut rows = vec![strings(&[
                "map",
                "queries",
                "Anya mean µs",
                "Anya mean pops",
                "Anya mean expand calls",
                "reference mean µs",
                "reference mean pops",
                "reference µs / Anya µs",
                "Anya pops / reference pops",
            ])];
            for c in against_reference(maps, reference) {
                let a = c.ours.as_ref();
                rows.push(vec![
                    c.row.map.clone(),
                    c.queries_cell("Anya"),
                    us(a.and_then(|a| a.mean_us)),
                    cell(a.and_then(|a| a.mean_pops), 1),
                    cell(a.and_then(|a| a.mean_expanded), 1),
                    us(Some(c.row.mean_us)),
                    cell(Some(c.row.mean_pops), 1),
                    cell(c.time_ratio().map(|x| 1.0 / x), 2),
                    cell(c.pops_ratio(), 2),
                ]);
            }
            rows
        }
        ReferenceKind::Polyanya => {
            let mut rows = vec![strings(&[
                "map",
                "queries",
                "Polyanya µs",
                "Anya µs",
                "C++ µs",
                "Polyanya / C++",
                "Anya / C++",
                "Polyanya pops",
                "C++ pops",
                "mesh build ms",
                "C++ preprocess ms",
                "build / preprocess",
                "polygons",
                "mesh bytes / free cell",
            ])];
            for c in against_reference(maps, reference) {
                let p = c.ours.as_ref();
                let mesh = c.mesh.as_ref();
                let build = mesh.map(|m| m.build_s);
                rows.push(vec![
                    c.row.map.clone(),
                    c.queries_cell("Polyanya"),
                    us(p.and_then(|p| p.mean_us)),
                    us(c.anya.as_ref().and_then(|a| a.mean_us)),
                    us(Some(c.row.mean_us)),
                    ratio(c.time_ratio()),
                    ratio(c.anya_time_ratio()),
                    cell(p.and_then(|p| p.mean_pops), 1),
                    cell(Some(c.row.mean_pops), 1),
                    build.map_or_else(|| "n/a".to_owned(), ms),
                    c.row.preprocess_s.map_or_else(|| "n/a".to_owned(), ms),
                    ratio(
                        build
                            .zip(c.row.preprocess_s)
                            .filter(|&(_, p)| p > 0.0)
                            .map(|(b, p)| b / p),
                    ),
                    mesh.map_or_else(|| "n/a".to_owned(), |m| m.polygons.to_string()),
                    cell(mesh.and_then(MeshFigures::bytes_per_free_cell), 1),
                ]);
            }
            rows
        }
    }
}

/// A markdown table of `cells` (the header first; the first column left,
/// the others right).
fn markdown_table(cells: &[Vec<String>]) -> String {
    let mut s = String::new();
    for (k, row) in cells.iter().enumerate() {
        let _ = writeln!(s, "| {} |", row.join(" | "));
        if k == 0 {
            let _ = writeln!(s, "|---|{}", "--:|".repeat(row.len() - 1));
        }
    }
    s
}

/// The section comparing one of our planners with a reference.
fn reference_section(maps: &[MapRecord], info: &RunInfo, reference: &Reference) -> String {
    let mut s = String::new();
    let reps = info.timings();
    match reference.kind {
        ReferenceKind::Anya => {
            s.push_str("## Against the authors' implementation\n\n");
            let _ = writeln!(
                s,
                "The authors' Java implementation of Anya against this crate's `anya`, on the same \
                 queries: each map's scenario queries of this run, exported with `--export-queries` \
                 (`NAME.map.queries`, one `sx sy gx gy` line per query, the points given to the \
                 planners). Anya's figures are over every scenario query of the map in this run that \
                 it answered with a path (not only the common queries of the other tables), a query's \
                 time the fastest of {reps}; `pops` are open-list pops, stale entries and the goal \
                 included; `expand calls` count each in-place intermediate-pruning step too. The \
                 reference's figures are read from `{}`, one line per map: the queries it ran, its \
                 mean µs and mean pops per query. The reference was run with \
                 `scripts/reference/run.sh` on the queries this run exported (`--export-queries`); see \
                 that script for its JVM flags and warm-up. Its searches each start by clearing a \
                 hash table of 65,535 buckets (some 9 µs on the development machine), which dominates \
                 its time on the shortest queries. The reference ran in another process, at another \
                 time than this run, so its ratios carry the noise between runs too.\n",
                reference.file,
            );
        }
        ReferenceKind::Polyanya => {
            s.push_str("## Against the C++ Polyanya (GPPC 2023)\n\n");
            let _ = writeln!(
                s,
                "A C++ Polyanya, an entry of the 2023 Grid-Based Path Planning Competition \
                 (any-angle track), against this crate's `polyanya` and `anya`, on the same \
                 queries: each map's scenario queries of this run, exported with \
                 `--export-queries`. Our figures are over every scenario query of the map that the \
                 planner answered with a path, a query's time the fastest of {reps}; `polyanya` \
                 runs `Planner::plan_on_mesh` on the map's mesh, built before any query was timed. \
                 The entry's figures are read from `{}`, written by \
                 `scripts/reference/gppc-polyanya.sh` (see `scripts/reference/README.md`): its \
                 mean µs per query (the fastest of its own repetitions, `GetPath` only, after an \
                 untimed pass over the queries), its mean pops (`SearchInstance::nodes_popped`: \
                 Polyanya's nodes are intervals on mesh edges, so they count other work than \
                 Anya's pops), and its preprocessing of the map (`PreprocessMap`: grid to \
                 polygons, constrained Delaunay triangulation, merging, its files written; then \
                 `PrepareForSearch`: the merged mesh read back; one run). `mesh build ms` is our \
                 fastest `NavMesh::build` of the map (see [Navigation meshes](#navigation-meshes)). \
                 Ratios below 1: ours is faster. The entry ran in another process, at \
                 another time than this run, so its ratios carry the noise between runs too: on the \
                 shared two-core development machine two runs of the entry minutes apart differed by \
                 up to a third on a map.\n",
                reference.file,
            );
        }
    }
    for note in reference.notes.iter().filter(|n| !n.is_empty()) {
        let _ = writeln!(s, "> {note}\n");
    }
    s.push_str(&markdown_table(&reference_cells(maps, reference)));
    let comparisons = against_reference(maps, reference);
    if comparisons
        .iter()
        .any(|c| c.ours.is_some() && !c.same_queries())
    {
        s.push_str(
            "\nWhere the reference ran another number of queries than this run exported, the \
             two ran different query sets and are not compared (rerun the reference on this \
             run's `--export-queries` files).\n",
        );
    }
    s.push('\n');
    s
}

/// The cells of the mesh table, one row per map (the header first).
fn mesh_cells(maps: &[MapRecord]) -> Vec<Vec<String>> {
    let mut rows = vec![
        [
            "map",
            "free cells",
            "polygons",
            "free cells / polygon",
            "mesh KiB",
            "bytes / free cell",
            "build ms (fastest)",
            "first build ms",
            "builds",
        ]
        .iter()
        .map(|x| (*x).to_owned())
        .collect::<Vec<_>>(),
    ];
    for m in maps {
        let Some(f) = &m.mesh else {
            continue;
        };
        rows.push(vec![
            m.name.clone(),
            f.free_cells.to_string(),
            f.polygons.to_string(),
            if f.polygons > 0 {
                format!("{:.1}", f.free_cells as f64 / f.polygons as f64)
            } else {
                "n/a".to_owned()
            },
            format!("{:.0}", f.bytes as f64 / 1024.0),
            cell(f.bytes_per_free_cell(), 1),
            ms(f.build_s),
            ms(f.first_build_s),
            f.builds.to_string(),
        ]);
    }
    rows
}

/// The section on Polyanya's meshes.
fn mesh_section(maps: &[MapRecord]) -> String {
    let mut s = String::from("## Navigation meshes\n\n");
    s.push_str(
        "`polyanya` plans on a `NavMesh` of the map (`NavMesh::build`: the free space cut in \
         groups of 512 x 512 cells, each triangulated and merged into convex polygons; each \
         group is also built as its chunks of 64 x 64 cells, kept aside for the first edit \
         there, which the build's time and memory include). It is \
         built once per map before any query is timed, so the build is never inside a query's \
         time; it is timed on its own here: at least 3 builds (up to 10 while they take under \
         half a second in all), the fastest kept, the first (cold) one shown too. `mesh KiB` is \
         `NavMesh::memory_bytes` (polygons and point-location tables, not the grid), and \
         `bytes / free cell` divides it by `Grid::free_count`. `Planner::plan` with \
         `Algorithm::Polyanya` builds such a mesh itself on its first query of a grid (and \
         syncs it to edits afterwards), so that first query costs a build.\n\n",
    );
    s.push_str(&markdown_table(&mesh_cells(maps)));
    s.push('\n');
    s
}

/// The per-map tables: one row per solver.
pub fn map_tables(maps: &[MapRecord]) -> String {
    let mut s = String::new();
    for m in maps {
        let common = common(m);
        let kinds = |k: Unreachability| m.unreachable.iter().filter(|u| u.kind == k).count();
        let _ = writeln!(
            s,
            "### {} ({} x {}{})\n",
            m.name,
            m.size.0,
            m.size.1,
            if m.is_game_map() { ", game map" } else { "" }
        );
        let _ = writeln!(
            s,
            "{} of {} scenario queries run, {} answered by every solver; {} crafted unreachable queries ({} goals in obstacles, {} in other regions, {} outside the grid).\n",
            m.queries.len(),
            m.scenario_queries,
            common.len(),
            m.unreachable.len(),
            kinds(Unreachability::Obstacle),
            kinds(Unreachability::OtherRegion),
            kinds(Unreachability::Outside),
        );
        s.push_str(
            "| solver | mean µs | median µs | p95 µs | vs A* | mean expansions | mean pops | length vs Anya | unreachable (n · µs) | fallback (n · µs) | other | invalid |\n",
        );
        s.push_str("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        for (i, solver) in SOLVERS.iter().enumerate() {
            let x = summarise(m, i);
            if !x.ran {
                let _ = writeln!(s, "| {} | not run | | | | | | | | | | |", solver.name());
                continue;
            }
            let vs = time_ratio(&common, i, ASTAR)
                .map_or_else(|| "n/a".to_owned(), |r| format!("{r:.2}"));
            let excess = match x.excess_pct {
                Some(e) if i == ANYA => format!("{e:+.3} % (ref.)"),
                Some(e) => format!("{e:+.3} %"),
                None => "n/a".to_owned(),
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                solver.name(),
                us(x.mean_us),
                us(x.median_us),
                us(x.p95_us),
                vs,
                cell(x.mean_expanded, 0),
                cell(x.mean_popped, 0),
                excess,
                count_us(x.unreachable),
                count_us(x.fallback),
                x.other,
                if matches!(solver, Solver::Ours(_)) {
                    x.invalid.to_string()
                } else {
                    "n/a".to_owned()
                }
            );
        }
        let by_kind: Vec<String> = [ANYA, POLYANYA, BASELINE]
            .into_iter()
            .filter_map(|i| {
                let parts: Vec<String> = [
                    (Unreachability::Obstacle, "in obstacles"),
                    (Unreachability::OtherRegion, "in other regions"),
                    (Unreachability::Outside, "outside"),
                ]
                .into_iter()
                .filter_map(|(kind, label)| {
                    let t: Vec<f64> = m
                        .unreachable
                        .iter()
                        .filter(|u| u.kind == kind && u.fail[i].outcome == Outcome::Unreachable)
                        .map(|u| u.fail[i].time_us)
                        .collect();
                    Some(format!("{label} {} µs", us(mean(&t)))).filter(|_| !t.is_empty())
                })
                .collect();
                (!parts.is_empty())
                    .then(|| format!("`{}`: {}", SOLVERS[i].name(), parts.join(", ")))
            })
            .collect();
        if !by_kind.is_empty() {
            let _ = writeln!(
                s,
                "\nUnreachable answers by kind of goal (mean µs) — {}.",
                by_kind.join("; ")
            );
        }
        let (compared, differ, worst) = baseline_agreement(m);
        if compared > 0 {
            let _ = writeln!(
                s,
                "\n`pathfinding` vs our A*: lengths {} on {compared} queries{}.",
                if differ == 0 { "agree" } else { "**differ**" },
                if differ == 0 {
                    String::new()
                } else {
                    format!(" ({differ} differ, largest relative gap {worst:.2e})")
                }
            );
        }
        let shorter: Vec<String> = (0..SOLVERS.len())
            .filter(|&i| i != ANYA)
            .filter_map(|i| {
                let q = shorter_than_anya(m, i);
                let first = q.first()?;
                Some(format!(
                    "{} on {} (e.g. ({}, {}) -> ({}, {}): {:.6} against {:.6})",
                    SOLVERS[i].name(),
                    q.len(),
                    first.start.x,
                    first.start.y,
                    first.goal.x,
                    first.goal.y,
                    first.runs[i].found_length().unwrap_or(f64::NAN),
                    first.runs[ANYA].found_length().unwrap_or(f64::NAN),
                ))
            })
            .collect();
        if !shorter.is_empty() {
            let _ = writeln!(
                s,
                "\n**Anya is not optimal here:** shorter paths than Anya's from {}.",
                shorter.join(", ")
            );
        }
        s.push('\n');
    }
    s
}

/// `cells` as aligned plain text (the header first; the first column
/// left-aligned, the others right-aligned; markdown emphasis removed).
fn plain_table(cells: &[Vec<String>]) -> String {
    let cells: Vec<Vec<String>> = cells
        .iter()
        .map(|r| r.iter().map(|c| c.replace("**", "")).collect())
        .collect();
    let Some(first) = cells.first() else {
        return String::new();
    };
    let widths: Vec<usize> = (0..first.len())
        .map(|j| {
            cells
                .iter()
                .map(|r| r.get(j).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for row in &cells {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(j, (c, &w))| {
                if j == 0 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        let _ = writeln!(s, "{}", line.join("  ").trim_end());
    }
    s
}

/// The whole report.
pub fn markdown(maps: &[MapRecord], info: &RunInfo) -> String {
    let mut s = String::new();
    let total: usize = maps.iter().map(|m| m.queries.len()).sum();
    let _ = writeln!(s, "# Planner comparison\n");
    let _ = writeln!(
        s,
        "Generated by `{}` — a **{}** run: {} scenario queries on {} map{} ({}), scenario cells taken as {}, each query's time the fastest of {}, {:.0} s in all.\n",
        info.command,
        match (info.quick, info.sample) {
            (true, _) => "quick",
            (false, Some(_)) => "sampled",
            (false, None) => "full",
        },
        total,
        maps.len(),
        if maps.len() == 1 { "" } else { "s" },
        match info.sample {
            Some(n) => format!(
                "at most {n} queries per map, spread evenly over the scenario's difficulty buckets"
            ),
            None => "every query of every scenario".to_owned(),
        },
        info.points,
        info.timings(),
        info.seconds
    );
    if info.sample.is_some() {
        s.push_str(
            "Not a full run: running every query of every scenario (no `--quick` or `--sample`) \
             takes about an hour on a two-core machine, most of it on `maze512-1-0`.\n\n",
        );
    }
    s.push_str(
        "Every solver runs every query in one process, one after the other, starting with a \
         different solver each time; each planner's memory is sized (`Planner::reserve`) and \
         warmed up on a few untimed queries first. The machine is shared and noisy: read the \
         **ratios** within this run (the `vs A*` column, the speed-ups), not the absolute \
         microseconds.\n\n",
    );
    s.push_str(
        "- Solvers: `anya`, `lazy-theta`, `astar-ps` (A* with post-smoothing) and `astar` \
         (8-connected grid A*) are this crate's `Planner::plan`; `polyanya` is \
         `Planner::plan_on_mesh` on the map's `NavMesh`, built once per map before any query is \
         timed (the build is timed on its own: [Navigation meshes](#navigation-meshes)); \
         `pathfinding` is the \
         [`pathfinding`](https://crates.io/crates/pathfinding) crate's `astar` on the same \
         8-connected vertex grid with the same moves (a diagonal crosses a free cell, a straight \
         move has a free cell on one side, no double corner is entered) and exact \
         `a + b·√2` costs: what people use today. It needs vertices, so it runs on `corners` only.\n\
         - Times are over the queries every solver answered with a path (*common* queries); \
         `vs A*` is total time over total A* time on them (below 1 is faster).\n\
         - `mean expansions` counts expand calls (for `anya`, each in-place \
         intermediate-pruning step too; for `pathfinding`, calls of its successor function); \
         `mean pops` counts open-list pops, stale entries and the goal included (`pathfinding` \
         does not report them). Both are means over the common queries.\n\
         - `length vs Anya` is the mean over those queries of `length / Anya's length − 1`. \
         Anya is optimal, so it is the reference; 8-connected A* paths are typically a few per cent longer.\n\
         - `unreachable`: queries answered \"unreachable\" with `FallbackPolicy::Fail` (the \
         crafted ones below, plus any unreachable scenario query); for `pathfinding`, `astar` \
         returning `None` after exhausting the start's component. `fallback`: the crafted \
         queries again with `FallbackPolicy::ClosestReachable`, which plans to the closest \
         reachable point. Crafted queries: goals inside obstacles, in other connected regions \
         (when the map has some) and outside the grid.\n\
         - `other`: errors, moved starts, or crafted queries that turned out reachable (should be 0).\n\
         - `invalid`: answers of our planners (scenario and crafted queries, both fallback \
         policies) that break `SPEC.md` as `scen --validate` checks it (its validator, run on \
         each answer outside the clock: the path starts and ends where it should, every segment \
         passes `los::line_of_sight`, double corners are respected, the length adds up; an \
         unreachable goal is unreachable by a flood fill and the closest point is the closest).\n\n",
    );

    let not_optimal: usize = maps
        .iter()
        .map(|m| {
            common(m)
                .iter()
                .filter(|q| (0..SOLVERS.len()).any(|i| beats_anya(q, i)))
                .count()
        })
        .sum();
    if not_optimal > 0 {
        let _ = writeln!(
            s,
            "> **Warning: Anya is not optimal in this run.** On {not_optimal} queries another solver \
             returned a shorter path than Anya (see the per-map notes), so the Anya build measured \
             here is not (yet) the optimal planner: its time and length figures, and every target \
             about it, describe that build only. Lengths are still given relative to it.\n"
        );
    }

    let targets = targets(maps, &info.references);
    s.push_str("## Targets\n\n| target | verdict |\n|---|---|\n");
    for t in &targets {
        let _ = writeln!(
            s,
            "| {} | {} |",
            t.claim,
            match t.status() {
                Some(true) => "PASS",
                Some(false) => "**FAIL**",
                None => "not measured",
            }
        );
    }
    s.push('\n');
    for t in &targets {
        let _ = writeln!(s, "### {}\n\nMeasured as {}.\n", t.claim, t.measure);
        s.push_str("| map | measured | verdict |\n|---|--:|---|\n");
        for v in &t.verdicts {
            let _ = writeln!(s, "| {} | {} | {} |", v.map, v.value, v.met_cell());
        }
        s.push('\n');
    }
    s.push_str(&mesh_section(maps));
    for kind in [ReferenceKind::Polyanya, ReferenceKind::Anya] {
        if let Some(reference) = info.reference(kind) {
            s.push_str(&reference_section(maps, info, reference));
        }
    }

    s.push_str(PLUGIN_SECTION);
    s.push_str(
        "## Speed-up against query difficulty\n\n![Speed-up over A* against A* expansions, \
         log-log, one panel per map](compare.svg)\n\nAs in Figure 16 of the Anya paper \
         (Harabor et al., JAIR 2016): queries are sorted by the number of nodes our A* expands, \
         grouped in bins of a quarter decade, and each point is a bin's total A* time over the \
         solver's total time (above 1: faster than A*).\n\n",
    );
    s.push_str("## Per map\n\n");
    s.push_str(&map_tables(maps));
    s
}

/// Where the plugin's own figures live (they need an app and frames, not
/// single queries).
const PLUGIN_SECTION: &str = "## The plugin at game scale\n\nThe figures here are the planners \
alone. How close the Bevy plugin comes to them (from spawning 1,000 to 50,000 agents to every \
agent having a path, frames paced at 60 fps, beside the raw planner's bound on the same queries \
in the same run; the main-thread cost of frames with edits) is measured by \
`cargo bench --bench plugin` and recorded in [`plugin-bench.md`](plugin-bench.md).\n\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics() {
        assert_eq!(mean(&[]), None);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        let xs: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(quantile(&xs, 0.5), Some(10.0));
        assert_eq!(quantile(&xs, 0.95), Some(19.0));
        assert_eq!(quantile(&xs, 1.0), Some(20.0));
        assert_eq!(quantile(&[4.0], 0.95), Some(4.0));
    }

    #[test]
    fn cells() {
        assert_eq!(us(Some(1.234)), "1.23");
        assert_eq!(us(Some(123.45)), "123.5");
        assert_eq!(us(Some(12345.6)), "12346");
        assert_eq!(us(None), "n/a");
        assert_eq!(count_us((0, None)), "0");
        assert_eq!(count_us((3, Some(2.0))), "3 · 2.00 µs");
    }

    fn run(outcome: Outcome) -> Run {
        Run {
            time_us: 1.0,
            expanded: Some(1),
            popped: Some(1),
            outcome,
            invalid: None,
        }
    }

    /// A map with one query per pair of Anya's and Polyanya's outcomes
    /// (the other solvers find a path of length 1).
    fn map_of(pairs: &[(Outcome, Outcome)]) -> MapRecord {
        let queries = pairs
            .iter()
            .map(|(a, p)| {
                let mut runs = vec![run(Outcome::Found { length: 1.0 }); SOLVERS.len()];
                runs[ANYA] = run(a.clone());
                runs[POLYANYA] = run(p.clone());
                Query {
                    start: bevy_anyangle::prelude::DVec2::ZERO,
                    goal: bevy_anyangle::prelude::DVec2::ONE,
                    runs,
                }
            })
            .collect();
        MapRecord {
            name: "m".to_owned(),
            size: (256, 256),
            scenario_queries: pairs.len(),
            queries,
            unreachable: Vec::new(),
            mesh: None,
        }
    }

    #[test]
    fn exactness_counts_every_difference() {
        let found = |length| Outcome::Found { length };
        let same = map_of(&[
            (found(10.0), found(10.0 * (1.0 + 1e-12))),
            (Outcome::Unreachable, Outcome::Unreachable),
        ]);
        let e = exactness(&same);
        assert!(e.is_exact(), "{e:?}");
        assert_eq!(e.compared, 2);
        let off = map_of(&[
            (found(10.0), found(10.0 * (1.0 + 1e-8))),
            (found(10.0), found(10.0 * (1.0 - 1e-8))),
            (found(10.0), Outcome::Unreachable),
            (
                Outcome::Fallback { length: 3.0 },
                Outcome::Found { length: 3.0 },
            ),
        ]);
        let e = exactness(&off);
        assert_eq!(
            (e.longer, e.shorter, e.other_outcome, e.invalid),
            (1, 1, 2, 0),
            "{e:?}"
        );
        assert!(!e.is_exact());
        let mut invalid = same;
        invalid.queries[0].runs[POLYANYA].invalid = Some("a wall".to_owned());
        assert_eq!(exactness(&invalid).invalid, 1);
    }

    #[test]
    fn polyanya_is_judged_on_large_maps_but_random_and_rooms() {
        let named = |name: &str, size| MapRecord {
            name: name.to_owned(),
            size,
            ..map_of(&[])
        };
        assert!(polyanya_judged(&named("den520d", (256, 257))));
        assert!(polyanya_judged(&named("maze512-1-0", (512, 512))));
        assert!(!polyanya_judged(&named("lak303d", (194, 194))));
        assert!(!polyanya_judged(&named("random512-10-0", (512, 512))));
        assert!(!polyanya_judged(&named("8room_000", (512, 512))));
    }
}

/// The short report printed to stdout: per map the mean time of each solver
/// (and its ratio to grid A*), then each target, met or not.
pub fn brief(maps: &[MapRecord], info: &RunInfo) -> String {
    let mut s = String::new();
    let total: usize = maps.iter().map(|m| m.queries.len()).sum();
    let _ = writeln!(
        s,
        "{total} queries on {} maps in {:.0} s. Mean µs per query over the queries every solver answered (× A*'s time):\n",
        maps.len(),
        info.seconds
    );
    let width = maps.iter().map(|m| m.name.len()).max().unwrap_or(3).max(3);
    let _ = write!(s, "{:width$}", "map");
    for solver in SOLVERS {
        let _ = write!(s, "  {:>20}", solver.name());
    }
    s.push('\n');
    for m in maps {
        let common = common(m);
        let _ = write!(s, "{:width$}", m.name);
        for i in 0..SOLVERS.len() {
            let x = summarise(m, i);
            let cell = match (x.ran, x.mean_us, time_ratio(&common, i, ASTAR)) {
                (true, Some(t), Some(r)) => format!("{t:.1} (×{r:.2})"),
                (true, Some(t), None) => format!("{t:.1}"),
                (true, None, _) => "n/a".to_owned(),
                (false, ..) => "not run".to_owned(),
            };
            let _ = write!(s, "  {cell:>20}");
        }
        s.push('\n');
    }
    s.push_str("\nPolyanya's meshes (built before timing, never inside a query's time):\n\n");
    s.push_str(&plain_table(&mesh_cells(maps)));
    for kind in [ReferenceKind::Polyanya, ReferenceKind::Anya] {
        let Some(reference) = info.reference(kind) else {
            continue;
        };
        let _ = writeln!(
            s,
            "\nAgainst {} ({}; our figures over every scenario query answered; ratios below 1: ours faster):\n",
            kind.title(),
            reference.file
        );
        s.push_str(&plain_table(&reference_cells(maps, reference)));
    }
    s.push_str("\nTargets:\n");
    for t in targets(maps, &info.references) {
        let missed: Vec<&str> = t
            .verdicts
            .iter()
            .filter(|v| v.met == Some(false))
            .map(|v| v.map.as_str())
            .collect();
        let verdict = if t.met() {
            "PASS".to_owned()
        } else if t.status().is_none() {
            "not measured".to_owned()
        } else {
            format!("FAIL on {}", missed.join(", "))
        };
        let _ = writeln!(s, "- {}: {verdict}", t.claim);
    }
    if info.sample.is_some() {
        s.push_str("\n(A sample of each scenario; see --help for a full run.)\n");
    }
    s
}
