//! The run's tallies, and the two ways of printing them.

use std::fmt::Write as _;

/// What happened to one query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A path to the goal, from a valid start.
    Found,
    /// A fallback path to the closest reachable point (`--fallback`).
    Fallback,
    /// The goal is valid but not reachable from the (valid) start.
    Unreachable,
    /// The start or goal is not a valid point, or the planner failed.
    InvalidInput,
}

/// Tallies of a run.
#[derive(Debug, Default)]
pub struct Summary {
    /// Planner name.
    pub algorithm: String,
    /// Map file name (no directory).
    pub map: String,
    /// `corners` or `centres`.
    pub points: String,
    /// Map size in cells.
    pub size: (u32, u32),
    /// Queries run.
    pub queries: usize,
    /// Queries per [`Outcome`].
    pub found: usize,
    /// See [`Outcome::Fallback`].
    pub fallback: usize,
    /// See [`Outcome::Unreachable`].
    pub unreachable: usize,
    /// See [`Outcome::InvalidInput`].
    pub invalid_input: usize,
    /// Time of each `plan` call, in microseconds.
    pub times_us: Vec<f64>,
    /// Expansions of each returned path.
    pub expansions: Vec<u64>,
    /// Open-list pops of each returned path.
    pub pops: Vec<u64>,
    /// Length of each found path.
    pub lengths: Vec<f64>,
    /// Answers `--validate` rejected (`None` without `--validate`).
    pub invalid_paths: Option<usize>,
}

impl Summary {
    /// Records one query.
    pub fn add(&mut self, outcome: Outcome, time_us: f64) {
        self.queries += 1;
        self.times_us.push(time_us);
        match outcome {
            Outcome::Found => self.found += 1,
            Outcome::Fallback => self.fallback += 1,
            Outcome::Unreachable => self.unreachable += 1,
            Outcome::InvalidInput => self.invalid_input += 1,
        }
    }

    /// The derived statistics, `None` where there is nothing to average.
    fn stats(&self) -> Stats {
        let mut sorted = self.times_us.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = match n {
            0 => None,
            _ if n % 2 == 1 => Some(sorted[n / 2]),
            _ => Some(f64::midpoint(sorted[n / 2 - 1], sorted[n / 2])),
        };
        // Nearest rank: the smallest time at least 95 % of the queries stay within.
        let p95 = (n > 0).then(|| sorted[(n * 95).div_ceil(100) - 1]);
        Stats {
            mean_us: mean(self.times_us.iter().copied()),
            median_us: median,
            p95_us: p95,
            mean_expansions: mean(self.expansions.iter().map(|&e| e as f64)),
            mean_pops: mean(self.pops.iter().map(|&e| e as f64)),
            mean_length: mean(self.lengths.iter().copied()),
        }
    }

    /// The human-readable summary.
    pub fn text(&self) -> String {
        let s = self.stats();
        let opt = |v: Option<f64>, decimals: usize| {
            v.map_or("n/a".to_owned(), |v| format!("{v:.decimals$}"))
        };
        let mut out = String::new();
        let mut line = |key: &str, value: String| {
            let _ = writeln!(out, "{key:<16}{value}");
        };
        line("algorithm", self.algorithm.clone());
        line(
            "map",
            format!("{} ({} x {})", self.map, self.size.0, self.size.1),
        );
        line("points", self.points.clone());
        line("queries", self.queries.to_string());
        line("found", self.found.to_string());
        line("fallback", self.fallback.to_string());
        line("unreachable", self.unreachable.to_string());
        line("invalid_input", self.invalid_input.to_string());
        line(
            "time per query",
            format!(
                "mean {} µs, median {} µs, p95 {} µs",
                opt(s.mean_us, 2),
                opt(s.median_us, 2),
                opt(s.p95_us, 2)
            ),
        );
        line("mean expansions", opt(s.mean_expansions, 1));
        line("mean pops", opt(s.mean_pops, 1));
        line("mean length", opt(s.mean_length, 4));
        if let Some(invalid) = self.invalid_paths {
            line("invalid_paths", invalid.to_string());
        }
        out
    }

    /// The summary as one JSON object on one line.
    pub fn json(&self) -> String {
        let s = self.stats();
        let mut fields = vec![
            ("algorithm", json_string(&self.algorithm)),
            ("map", json_string(&self.map)),
            ("points", json_string(&self.points)),
            ("queries", self.queries.to_string()),
            ("found", self.found.to_string()),
            ("fallback", self.fallback.to_string()),
            ("unreachable", self.unreachable.to_string()),
            ("invalid_input", self.invalid_input.to_string()),
            ("mean_us", json_number(s.mean_us.map(round3))),
            ("median_us", json_number(s.median_us.map(round3))),
            ("p95_us", json_number(s.p95_us.map(round3))),
            ("mean_expansions", json_number(s.mean_expansions)),
            ("mean_pops", json_number(s.mean_pops)),
            ("mean_length", json_number(s.mean_length)),
        ];
        if let Some(invalid) = self.invalid_paths {
            fields.push(("invalid_paths", invalid.to_string()));
        }
        let body: Vec<String> = fields
            .into_iter()
            .map(|(k, v)| format!("\"{k}\":{v}"))
            .collect();
        format!("{{{}}}", body.join(","))
    }
}

/// Averages and percentiles, `None` when there is nothing to average.
struct Stats {
    mean_us: Option<f64>,
    median_us: Option<f64>,
    p95_us: Option<f64>,
    mean_expansions: Option<f64>,
    mean_pops: Option<f64>,
    mean_length: Option<f64>,
}

fn mean(values: impl ExactSizeIterator<Item = f64>) -> Option<f64> {
    let n = values.len();
    (n > 0).then(|| values.sum::<f64>() / n as f64)
}

/// Rounds to a thousandth (a nanosecond, for microseconds).
fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// A JSON number, or `null` for a missing or non-finite value (JSON has no
/// NaN). Rust's `{}` never uses exponent notation, so the output is always
/// a plain JSON number.
fn json_number(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v}"),
        _ => "null".to_owned(),
    }
}

/// A JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_and_json() {
        let mut s = Summary {
            algorithm: "astar".into(),
            map: "a \"b\".map".into(),
            points: "corners".into(),
            ..Summary::default()
        };
        for (i, t) in [4.0, 1.0, 3.0, 2.0].into_iter().enumerate() {
            s.add(
                if i == 0 {
                    Outcome::Unreachable
                } else {
                    Outcome::Found
                },
                t,
            );
        }
        s.expansions = vec![1, 2, 4];
        s.pops = vec![1, 1, 4];
        s.lengths = vec![0.5, 12.0, 1.0];
        let st = s.stats();
        assert_eq!(
            (st.mean_us, st.median_us, st.p95_us),
            (Some(2.5), Some(2.5), Some(4.0))
        );
        assert_eq!(
            s.json(),
            "{\"algorithm\":\"astar\",\"map\":\"a \\\"b\\\".map\",\"points\":\"corners\",\"queries\":4,\
             \"found\":3,\"fallback\":0,\"unreachable\":1,\"invalid_input\":0,\"mean_us\":2.5,\
             \"median_us\":2.5,\"p95_us\":4,\"mean_expansions\":2.3333333333333335,\"mean_pops\":2,\"mean_length\":4.5}"
        );
        s.invalid_paths = Some(0);
        assert!(s.json().ends_with(",\"invalid_paths\":0}"));
        assert!(Summary::default().json().contains("\"mean_us\":null"));
    }

    #[test]
    fn p95_is_the_nearest_rank() {
        let mut s = Summary::default();
        for t in 1..=100 {
            s.add(Outcome::Found, f64::from(t));
        }
        assert_eq!(s.stats().p95_us, Some(95.0));
        s.add(Outcome::Found, 101.0);
        assert_eq!(s.stats().p95_us, Some(96.0));
    }

    #[test]
    fn numbers_are_plain_decimal() {
        for (v, text) in [
            (0.5, "0.5"),
            (12.0, "12"),
            (1e-7, "0.0000001"),
            (512.0, "512"),
            (1e20, "100000000000000000000"),
        ] {
            assert_eq!(json_number(Some(v)), text);
        }
        assert_eq!(json_number(Some(f64::NAN)), "null");
    }
}
