//! `plot.svg`: goodput (RPS) and token reuse (%) against offered rate, in
//! the table's units, one line per policy (median across seeds) with a
//! min-max band over the steady cells; a transient cell is a hollow marker
//! and never part of a band. A title names the scenario, the mode and the
//! seeds. Hand-written SVG so the bytes depend only on the numbers.

use crate::report::output::{cell_is_steady, cells, median_min_max, metric};
use crate::scenario::Prepared;
use crate::sweep::RunOutput;
use std::fmt::Write as _;

/// One colour per policy: Paul Tol's "muted" qualitative palette (nine
/// colours distinguishable with the common colour-vision deficiencies),
/// then black and two of his "vibrant" colours; policies from the tenth on
/// are also dashed, so no two policies share both colour and line style.
pub(crate) const COLORS: &[&str] = &[
    "#332288", "#CC6677", "#117733", "#88CCEE", "#882255", "#44AA99", "#999933", "#AA4499",
    "#DDCC77", "#000000", "#EE7733", "#0077BB",
];
const PANEL_W: f64 = 420.0;
const PANEL_H: f64 = 300.0;
const MARGIN: f64 = 50.0;
/// Room for the title above the panels.
const TOP: f64 = 28.0;
/// Room on the right for the last rate label.
const RIGHT_PAD: f64 = 30.0;

fn dash(i: usize) -> &'static str {
    if i >= 9 {
        r#" stroke-dasharray="6 3""#
    } else {
        ""
    }
}

/// One cell of a series: rate, median, min, max, steady.
type Point = (f64, f64, f64, f64, bool);

/// Per policy: the cells of one metric, scaled by `scale`.
fn series(p: &Prepared, runs: &[RunOutput], name: &str, scale: f64) -> Vec<Vec<Point>> {
    let mut out = vec![Vec::new(); p.policies.len()];
    for (policy, rate, group) in cells(runs) {
        let values: Vec<f64> = group
            .iter()
            .map(|r| metric(&r.result.metrics, name) * scale)
            .collect();
        let (med, min, max) = median_min_max(&values);
        if let Some(s) = out.get_mut(policy) {
            s.push((rate, med, min, max, cell_is_steady(&group)));
        }
    }
    out
}

struct Panel {
    x0: f64,
    rate_lo: f64,
    rate_hi: f64,
    y_hi: f64,
}

impl Panel {
    fn x(&self, rate: f64) -> f64 {
        let span = (self.rate_hi - self.rate_lo).max(1e-9);
        self.x0 + MARGIN + (rate - self.rate_lo) / span * (PANEL_W - MARGIN - 10.0)
    }
    fn y(&self, v: f64) -> f64 {
        let top = 30.0 + TOP;
        let bottom = top + PANEL_H - MARGIN;
        bottom - (v / self.y_hi.max(1e-9)).clamp(0.0, 1.0) * (bottom - top)
    }
}

fn panel(svg: &mut String, pan: &Panel, title: &str, data: &[Vec<Point>], ticks: &[f64]) {
    let (left, right) = (pan.x(pan.rate_lo), pan.x(pan.rate_hi));
    let (top, bottom) = (pan.y(pan.y_hi), pan.y(0.0));
    let _ = writeln!(
        svg,
        r##"<text x="{:.1}" y="{:.0}" font-size="13" text-anchor="middle" class="panel-title">{title}</text>"##,
        (left + right) / 2.0,
        TOP + 20.0
    );
    let _ = writeln!(
        svg,
        r##"<rect x="{left:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#444"/>"##,
        right - left,
        bottom - top
    );
    for &t in ticks {
        let y = pan.y(t);
        let _ = writeln!(
            svg,
            r##"<line x1="{left:.1}" y1="{y:.1}" x2="{right:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end">{t}</text>"##,
            left - 4.0,
            y + 3.0
        );
    }
    let rates: Vec<f64> = data.iter().flatten().map(|p| p.0).collect();
    let mut rates_sorted = rates.clone();
    rates_sorted.sort_by(f64::total_cmp);
    rates_sorted.dedup();
    for r in rates_sorted {
        let x = pan.x(r);
        // A trace's rates are speed-ups x its native rate: one decimal.
        let label = if r.fract() == 0.0 {
            format!("{r}")
        } else {
            format!("{r:.1}")
        };
        let _ = writeln!(
            svg,
            r##"<text x="{x:.1}" y="{:.1}" font-size="10" text-anchor="middle">{label}</text>"##,
            bottom + 14.0
        );
    }
    let _ = writeln!(
        svg,
        r##"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle" class="x-axis">offered rate (RPS)</text>"##,
        (left + right) / 2.0,
        bottom + 30.0
    );
    for (i, points) in data.iter().enumerate() {
        if points.is_empty() {
            continue;
        }
        let color = COLORS[i % COLORS.len()];
        // The seed spread as a band over each run of consecutive steady
        // cells (a lone steady cell gets a vertical bar).
        for run in points.split(|p| !p.4).filter(|r| !r.is_empty()) {
            if run.len() == 1 {
                let p = run[0];
                let _ = writeln!(
                    svg,
                    r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{color}" stroke-opacity="0.4" stroke-width="6" class="band"/>"##,
                    pan.y(p.3),
                    pan.y(p.2),
                    x = pan.x(p.0)
                );
                continue;
            }
            let upper = run
                .iter()
                .map(|p| format!("{:.1},{:.1}", pan.x(p.0), pan.y(p.3)));
            let lower = run
                .iter()
                .rev()
                .map(|p| format!("{:.1},{:.1}", pan.x(p.0), pan.y(p.2)));
            let band: Vec<String> = upper.chain(lower).collect();
            let _ = writeln!(
                svg,
                r##"<polygon points="{}" fill="{color}" fill-opacity="0.18" stroke="none" class="band"/>"##,
                band.join(" ")
            );
        }
        let line: Vec<String> = points
            .iter()
            .map(|p| format!("{:.1},{:.1}", pan.x(p.0), pan.y(p.1)))
            .collect();
        let _ = writeln!(
            svg,
            r##"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"{} class="series"/>"##,
            line.join(" "),
            dash(i)
        );
        for p in points {
            let fill = if p.4 { color } else { "white" };
            let _ = writeln!(
                svg,
                r##"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{fill}" stroke="{color}" stroke-width="1.5" class="{}"/>"##,
                pan.x(p.0),
                pan.y(p.1),
                if p.4 { "steady" } else { "transient" }
            );
        }
    }
}

/// The goodput axis's tick step: the smallest 1, 2 or 5 x 10^k giving at
/// most 7 steps up to `max` (50 for the reproduction's 200-350 RPS), so a
/// plot has at most 9 ticks whatever the rates.
pub fn tick_step(max: f64) -> f64 {
    if !(max.is_finite() && max > 0.0) {
        return 1.0;
    }
    let raw = max / 7.0;
    let mut step = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if step * m >= raw {
            step *= m;
            break;
        }
    }
    step
}

pub fn svg(p: &Prepared, runs: &[RunOutput]) -> String {
    let goodput = series(p, runs, "goodput_rps", 1.0);
    let reuse = series(p, runs, "token_reuse", 100.0);
    let rates = &p.file.rates_rps;
    let rate_lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let rate_hi = rates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (rate_lo, rate_hi) = if rate_lo.is_finite() {
        (rate_lo, rate_hi)
    } else {
        (0.0, 1.0)
    };
    let g_max = goodput
        .iter()
        .flatten()
        .map(|p| p.3)
        .fold(rate_hi, f64::max);
    let step = tick_step(g_max);
    let g_hi = (g_max / step).ceil().max(1.0) * step;
    let g_ticks: Vec<f64> = (0..=(g_hi / step) as u32)
        .map(|i| f64::from(i) * step)
        .collect();
    let legend_h = 18.0 * p.policies.len().div_ceil(2) as f64 + 22.0;
    let height = 30.0 + TOP + PANEL_H + 10.0 + legend_h;
    let width = 2.0 * PANEL_W + RIGHT_PAD;
    let mut svg = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
"##
    );
    let seeds: Vec<String> = p.file.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(
        svg,
        r##"<text x="{:.1}" y="20" font-size="14" font-weight="bold" text-anchor="middle" class="title">{}: {} mode, seeds {}, {} s warm-up + {} s window</text>"##,
        width / 2.0,
        escape(&p.file.name),
        p.settings.mode.name(),
        seeds.join(", "),
        p.file.warmup_s,
        p.file.measure_s
    );
    let left = Panel {
        x0: 0.0,
        rate_lo,
        rate_hi,
        y_hi: g_hi,
    };
    panel(&mut svg, &left, "goodput (RPS)", &goodput, &g_ticks);
    let right = Panel {
        x0: PANEL_W,
        rate_lo,
        rate_hi,
        y_hi: 100.0,
    };
    panel(
        &mut svg,
        &right,
        "token reuse (%)",
        &reuse,
        &[0.0, 25.0, 50.0, 75.0, 100.0],
    );
    // The legend in two columns, then what the marks mean.
    let rows = p.policies.len().div_ceil(2);
    for (i, policy) in p.policies.iter().enumerate() {
        let (col, row) = (i / rows.max(1), i % rows.max(1));
        let x = MARGIN + col as f64 * PANEL_W;
        let y = 30.0 + TOP + PANEL_H + 14.0 + 18.0 * row as f64;
        let color = COLORS[i % COLORS.len()];
        let _ = writeln!(
            svg,
            r##"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}" stroke-width="2"{}/><text x="{:.1}" y="{:.1}" font-size="11" class="legend">{}</text>"##,
            x + 24.0,
            dash(i),
            x + 30.0,
            y + 4.0,
            escape(&policy.name)
        );
    }
    let _ = writeln!(
        svg,
        r##"<text x="{MARGIN}" y="{:.1}" font-size="10" fill="#444">Lines: median over seeds; shaded: the seeds' min-max over steady cells; hollow marker: a transient cell (not a capacity).</text>"##,
        30.0 + TOP + PANEL_H + 14.0 + 18.0 * rows as f64 + 6.0
    );
    svg.push_str("</svg>\n");
    svg
}

/// `s` as SVG text.
pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::tick_step;

    #[test]
    fn tick_steps_are_round_and_few() {
        assert_eq!(tick_step(320.0), 50.0);
        assert_eq!(tick_step(350.0), 50.0);
        assert_eq!(tick_step(3.4), 0.5);
        assert_eq!(tick_step(1e12), 200_000_000_000.0);
        assert_eq!(tick_step(f64::INFINITY), 1.0);
        assert_eq!(tick_step(0.0), 1.0);
        for max in [0.01, 1.0, 7.0, 99.0, 123.0, 1e6, 3.3e9] {
            let step = tick_step(max);
            let ticks = (max / step).ceil() + 1.0;
            assert!(ticks <= 9.0, "{max}: {ticks}");
        }
    }
}
