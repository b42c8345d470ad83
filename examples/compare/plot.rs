//! The speed-up plot, in the manner of Figure 16 of the Anya paper: speed-up
//! over A* against query difficulty (A* expansions), log-log, one series per
//! solver, one panel per map plus one for all game maps. Hand-written SVG.

use std::fmt::Write as _;

use crate::measure::{
    ANYA, ASTAR, ASTAR_PS, BASELINE, LAZY_THETA, MapRecord, POLYANYA, Query, SOLVERS,
};
use crate::report::{RunInfo, common};

/// The series drawn (A* itself is the reference line at 1): solver index,
/// colour, dash pattern.
const SERIES: [(usize, &str, &str); 5] = [
    (ANYA, "#d62728", ""),
    (POLYANYA, "#9467bd", ""),
    (LAZY_THETA, "#1f77b4", ""),
    (ASTAR_PS, "#2ca02c", ""),
    (BASELINE, "#7f7f7f", "5 3"),
];

/// Bins per decade of A* expansions.
const BINS_PER_DECADE: f64 = 4.0;

const COLUMNS: usize = 4;
const PANEL_W: f64 = 290.0;
const PANEL_H: f64 = 225.0;
const HEADER_H: f64 = 78.0;
/// Plot area inside a panel: left, top, right, bottom margins.
const MARGIN: (f64, f64, f64, f64) = (50.0, 24.0, 12.0, 40.0);

/// One point of a series: bin's mean difficulty and speed-up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Geometric mean of the bin's A* expansions.
    pub expansions: f64,
    /// Total A* time over total solver time in the bin.
    pub speedup: f64,
}

/// The binned speed-up of solver `i` over A* on `queries`.
pub fn series(queries: &[&Query], i: usize) -> Vec<Point> {
    let mut items: Vec<(f64, f64, f64)> = queries
        .iter()
        .map(|q| {
            let e = q.runs[ASTAR].expanded.unwrap_or(1).max(1) as f64;
            (e, q.runs[ASTAR].time_us, q.runs[i].time_us)
        })
        .collect();
    items.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = Vec::new();
    let mut k = 0;
    while k < items.len() {
        let bin = (items[k].0.log10() * BINS_PER_DECADE).floor();
        let mut end = k;
        while end < items.len() && (items[end].0.log10() * BINS_PER_DECADE).floor() == bin {
            end += 1;
        }
        let group = &items[k..end];
        let log_mean = group.iter().map(|g| g.0.log10()).sum::<f64>() / group.len() as f64;
        let (ta, ts) = group
            .iter()
            .fold((0.0, 0.0), |(a, s), g| (a + g.1, s + g.2));
        if ts > 0.0 && ta > 0.0 {
            out.push(Point {
                expansions: 10f64.powf(log_mean),
                speedup: ta / ts,
            });
        }
        k = end;
    }
    out
}

/// Escapes text for SVG.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A decade's tick label: 1, 10, 100, 1k, ... or 0.1, 0.01.
fn decade_label(k: i32) -> String {
    match k {
        ..0 => format!("{}", 10f64.powi(k)),
        0..=2 => format!("{}", 10i64.pow(k as u32)),
        3..=5 => format!("{}k", 10i64.pow(k as u32 - 3)),
        _ => format!("{}M", 10i64.pow(k as u32 - 6)),
    }
}

/// Decade range `[lo, hi]` (exponents) covering `values`, at least `min`.
fn decades(values: impl Iterator<Item = f64>, min: (i32, i32)) -> (i32, i32) {
    let (mut lo, mut hi) = min;
    for v in values.filter(|v| *v > 0.0 && v.is_finite()) {
        lo = lo.min(v.log10().floor() as i32);
        hi = hi.max(v.log10().ceil() as i32);
    }
    (lo, hi.max(lo + 1))
}

/// One panel's data.
struct Panel {
    title: String,
    lines: Vec<Vec<Point>>,
}

/// The whole plot.
pub fn svg(maps: &[MapRecord], info: &RunInfo) -> String {
    let mut panels = Vec::new();
    let game: Vec<&Query> = maps
        .iter()
        .filter(|m| m.is_game_map())
        .flat_map(common)
        .collect();
    let make = |title: String, qs: &[&Query]| Panel {
        title,
        lines: SERIES
            .iter()
            .map(|&(i, _, _)| {
                if qs.iter().all(|q| q.runs[i].expanded.is_some()) {
                    series(qs, i)
                } else {
                    Vec::new()
                }
            })
            .collect(),
    };
    if !game.is_empty() {
        panels.push(make(
            format!("All game maps ({} queries)", game.len()),
            &game,
        ));
    }
    for m in maps {
        let qs = common(m);
        panels.push(make(format!("{} ({})", m.name, qs.len()), &qs));
    }

    let all_points = || panels.iter().flat_map(|p| p.lines.iter().flatten());
    let (x_lo, x_hi) = decades(all_points().map(|p| p.expansions), (1, 2));
    let (y_lo, y_hi) = decades(all_points().map(|p| p.speedup), (-1, 1));

    let rows = panels.len().div_ceil(COLUMNS).max(1);
    let width = PANEL_W * COLUMNS as f64 + 20.0;
    let height = HEADER_H + PANEL_H * rows as f64 + 10.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif">"#
    );
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    let _ = writeln!(
        s,
        r#"<text x="20" y="26" font-size="17" font-weight="bold">Search-time speed-up over grid A* against query difficulty (log-log)</text>"#
    );
    let _ = writeln!(
        s,
        r##"<text x="20" y="45" font-size="11.5" fill="#444">{} run, {} points; x: nodes expanded by A*, binned by quarter decades; y: total A* time / total solver time per bin (above 1 = faster than A*).</text>"##,
        match (info.quick, info.sample) {
            (true, _) => "Quick".to_owned(),
            (false, Some(n)) => format!("Sampled ({n} queries per map)"),
            (false, None) => "Full".to_owned(),
        },
        info.points
    );
    // Legend.
    let mut lx = 20.0;
    let ly = 64.0;
    for &(i, colour, dash) in &SERIES {
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="2.5" stroke-dasharray="{dash}"/><circle cx="{}" cy="{ly}" r="3" fill="{colour}"/><text x="{}" y="{}" font-size="12.5">{}</text>"#,
            lx + 28.0,
            lx + 14.0,
            lx + 34.0,
            ly + 4.0,
            SOLVERS[i].name()
        );
        lx += 130.0;
    }
    let _ = writeln!(
        s,
        r##"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="#000" stroke-width="1.2" stroke-dasharray="2 3"/><text x="{}" y="{}" font-size="12.5">astar (= 1)</text>"##,
        lx + 28.0,
        lx + 34.0,
        ly + 4.0
    );

    let (ml, mt, mr, mb) = MARGIN;
    let (pw, ph) = (PANEL_W - ml - mr, PANEL_H - mt - mb);
    for (n, panel) in panels.iter().enumerate() {
        let ox = 10.0 + PANEL_W * (n % COLUMNS) as f64;
        let oy = HEADER_H + PANEL_H * (n / COLUMNS) as f64;
        let (x0, y0) = (ox + ml, oy + mt);
        let px = |e: f64| x0 + (e.log10() - f64::from(x_lo)) / f64::from(x_hi - x_lo) * pw;
        let py = |v: f64| y0 + ph - (v.log10() - f64::from(y_lo)) / f64::from(y_hi - y_lo) * ph;
        let _ = writeln!(s, "<g>");
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" font-size="12.5" font-weight="bold" text-anchor="middle">{}</text>"#,
            x0 + pw / 2.0,
            oy + 16.0,
            escape(&panel.title)
        );
        let _ = writeln!(
            s,
            r##"<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#333" stroke-width="1"/>"##
        );
        for k in x_lo..=x_hi {
            let x = px(10f64.powi(k));
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#333"/><text x="{x:.1}" y="{:.1}" font-size="10" text-anchor="middle">{}</text>"##,
                y0 + ph,
                y0 + ph,
                y0 + ph + 4.0,
                y0 + ph + 15.0,
                decade_label(k)
            );
        }
        for k in y_lo..=y_hi {
            let y = py(10f64.powi(k));
            let _ = writeln!(
                s,
                r##"<line x1="{x0}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><line x1="{:.1}" y1="{y:.1}" x2="{x0}" y2="{y:.1}" stroke="#333"/><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end">{}</text>"##,
                x0 + pw,
                x0 - 4.0,
                x0 - 6.0,
                y + 3.5,
                decade_label(k)
            );
        }
        let one = py(1.0);
        let _ = writeln!(
            s,
            r##"<line x1="{x0}" y1="{one:.1}" x2="{:.1}" y2="{one:.1}" stroke="#000" stroke-width="1.2" stroke-dasharray="2 3"/>"##,
            x0 + pw
        );
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="10.5" text-anchor="middle" fill="#333">A* expansions</text>"##,
            x0 + pw / 2.0,
            y0 + ph + 30.0
        );
        let _ = writeln!(
            s,
            r##"<text transform="translate({:.1} {:.1}) rotate(-90)" font-size="10.5" text-anchor="middle" fill="#333">speed-up over A*</text>"##,
            ox + 12.0,
            y0 + ph / 2.0
        );
        // Drawn last to first, so that Anya's and Polyanya's lines are on top.
        for (line, &(_, colour, dash)) in panel.lines.iter().zip(&SERIES).rev() {
            if line.is_empty() {
                continue;
            }
            let pts: Vec<String> = line
                .iter()
                .map(|p| format!("{:.1},{:.1}", px(p.expansions), py(p.speedup)))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}" stroke-linejoin="round"/>"#,
                pts.join(" ")
            );
            for p in line {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="2.6" fill="{colour}"/>"#,
                    px(p.expansions),
                    py(p.speedup)
                );
            }
        }
        let _ = writeln!(s, "</g>");
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(decade_label(-1), "0.1");
        assert_eq!(decade_label(0), "1");
        assert_eq!(decade_label(2), "100");
        assert_eq!(decade_label(4), "10k");
        assert_eq!(decade_label(6), "1M");
    }

    #[test]
    fn decade_ranges() {
        assert_eq!(decades([5.0, 250.0].into_iter(), (1, 2)), (0, 3));
        assert_eq!(decades(std::iter::empty(), (-1, 1)), (-1, 1));
        assert_eq!(decades([0.0, f64::NAN].into_iter(), (0, 0)), (0, 1));
    }

    #[test]
    fn escaping() {
        assert_eq!(escape("a<b & c>"), "a&lt;b &amp; c&gt;");
    }
}
