//! Turning the measurements into numbers: per-solver summaries, the targets,
//! and the markdown report.

use std::fmt::Write as _;

use crate::measure::{
    ANYA, ASTAR, BASELINE, LAZY_THETA, MapRecord, Outcome, Query, Run, SOLVERS, Unreachability,
};

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
    /// Timings per query.
    pub reps: u32,
    /// `corners` or `centres`.
    pub points: &'static str,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
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
        excess_pct: mean(&excess),
        unreachable: (unreachable_us.len(), mean(&unreachable_us)),
        fallback: (fallback_us.len(), mean(&fallback_us)),
        other,
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
    /// Whether the target is met (`None`: could not be measured).
    pub met: Option<bool>,
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
    /// Met on every map where it could be measured (and measured somewhere).
    pub fn met(&self) -> bool {
        self.verdicts.iter().any(|v| v.met.is_some())
            && self.verdicts.iter().all(|v| v.met != Some(false))
    }
}

/// The four targets, checked on this run's numbers.
pub fn targets(maps: &[MapRecord]) -> Vec<Target> {
    let verdict = |m: &MapRecord,
                   value: Option<f64>,
                   fmt: &dyn Fn(f64) -> String,
                   ok: &dyn Fn(f64) -> bool| {
        Verdict {
            map: m.name.clone(),
            value: value.map_or_else(|| "n/a".to_owned(), fmt),
            met: value.map(ok),
        }
    };
    let ratio = |x: f64| format!("{x:.2}");
    let speedup = |x: f64| format!("{x:.1}x");

    let t1 = Target {
        claim: "Anya's mean time is below our grid A*'s on every game map",
        measure: "mean Anya µs / mean A* µs over the common queries (met if < 1)",
        verdicts: maps
            .iter()
            .filter(|m| m.is_game_map())
            .map(|m| verdict(m, time_ratio(&common(m), ANYA, ASTAR), &ratio, &|x| x < 1.0))
            .collect(),
    };
    let t2 = Target {
        claim: "Anya is at least 5x faster than A* on the 10 % hardest queries of every map",
        measure: "total A* µs / total Anya µs over the tenth of the common queries with the most A* expansions (met if >= 5)",
        verdicts: maps
            .iter()
            .map(|m| {
                let hard = hardest_tenth(&common(m));
                verdict(m, time_ratio(&hard, ASTAR, ANYA), &speedup, &|x| x >= 5.0)
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
                }
            })
            .collect(),
    };
    let t4 = Target {
        claim: "Unreachable goals are answered without a search",
        measure: "every crafted unreachable query is answered `Unreachable` by every planner (`FallbackPolicy::Fail`), and the slowest query takes less than A*'s median query on that map; a query's time is its median over our four planners, which answer it with the same code, so that one preempted run does not decide",
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
                }
            })
            .collect(),
    };
    vec![t1, t2, t3, t4]
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
            "| solver | mean µs | median µs | p95 µs | vs A* | mean expansions | length vs Anya | unreachable (n · µs) | fallback (n · µs) | other |\n",
        );
        s.push_str("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        for (i, solver) in SOLVERS.iter().enumerate() {
            let x = summarise(m, i);
            if !x.ran {
                let _ = writeln!(s, "| {} | not run | | | | | | | | |", solver.name());
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
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                solver.name(),
                us(x.mean_us),
                us(x.median_us),
                us(x.p95_us),
                vs,
                cell(x.mean_expanded, 0),
                excess,
                count_us(x.unreachable),
                count_us(x.fallback),
                x.other
            );
        }
        let by_kind: Vec<String> = [ANYA, BASELINE]
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

/// The whole report.
pub fn markdown(maps: &[MapRecord], info: &RunInfo) -> String {
    let mut s = String::new();
    let total: usize = maps.iter().map(|m| m.queries.len()).sum();
    let _ = writeln!(s, "# Planner comparison\n");
    let _ = writeln!(
        s,
        "Generated by `{}` — a **{}** run: {} scenario queries on {} map{} ({}), scenario cells taken as {}, each query timed {} time{} (fastest kept), {:.0} s in all.\n",
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
        info.reps,
        if info.reps == 1 { "" } else { "s" },
        info.seconds
    );
    if info.sample.is_some() {
        s.push_str(
            "Not a full run: running every query of every scenario (no `--quick` or `--sample`) \
             takes some 40 minutes on a two-core machine, most of it on `maze512-1-0`.\n\n",
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
         (8-connected grid A*) are this crate's `Planner::plan`; `pathfinding` is the \
         [`pathfinding`](https://crates.io/crates/pathfinding) crate's `astar` on the same \
         8-connected vertex grid with the same moves (a diagonal crosses a free cell, a straight \
         move has a free cell on one side, no double corner is entered) and exact \
         `a + b·√2` costs: what people use today. It needs vertices, so it runs on `corners` only.\n\
         - Times are over the queries every solver answered with a path (*common* queries); \
         `vs A*` is total time over total A* time on them (below 1 is faster).\n\
         - `length vs Anya` is the mean over those queries of `length / Anya's length − 1`. \
         Anya is optimal, so it is the reference; 8-connected A* paths are typically a few per cent longer.\n\
         - `unreachable`: queries answered \"unreachable\" with `FallbackPolicy::Fail` (the \
         crafted ones below, plus any unreachable scenario query); for `pathfinding`, `astar` \
         returning `None` after exhausting the start's component. `fallback`: the crafted \
         queries again with `FallbackPolicy::ClosestReachable`, which plans to the closest \
         reachable point. Crafted queries: goals inside obstacles, in other connected regions \
         (when the map has some) and outside the grid.\n\
         - `other`: errors, moved starts, or crafted queries that turned out reachable (should be 0).\n\n",
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

    let targets = targets(maps);
    s.push_str("## Targets\n\n| target | met? |\n|---|---|\n");
    for t in &targets {
        let _ = writeln!(
            s,
            "| {} | {} |",
            t.claim,
            if t.met() { "yes" } else { "**no**" }
        );
    }
    s.push('\n');
    for t in &targets {
        let _ = writeln!(s, "### {}\n\nMeasured as {}.\n", t.claim, t.measure);
        s.push_str("| map | measured | met? |\n|---|--:|---|\n");
        for v in &t.verdicts {
            let _ = writeln!(
                s,
                "| {} | {} | {} |",
                v.map,
                v.value,
                match v.met {
                    Some(true) => "yes",
                    Some(false) => "**no**",
                    None => "n/a",
                }
            );
        }
        s.push('\n');
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
    s.push_str("\nTargets:\n");
    for t in targets(maps) {
        let missed: Vec<&str> = t
            .verdicts
            .iter()
            .filter(|v| v.met == Some(false))
            .map(|v| v.map.as_str())
            .collect();
        let verdict = if t.met() {
            "met".to_owned()
        } else if missed.is_empty() {
            "not measured".to_owned()
        } else {
            format!("missed on {}", missed.join(", "))
        };
        let _ = writeln!(s, "- {}: {verdict}", t.claim);
    }
    if info.sample.is_some() {
        s.push_str("\n(A sample of each scenario; see --help for a full run.)\n");
    }
    s
}
