//! `plot.svg`: goodput and token reuse against offered rate, one line per
//! policy (median across seeds) with a min-max band. Hand-written SVG so the
//! bytes depend only on the numbers.

use super::output::{cells, median_min_max, metric};
use super::scenario::Prepared;
use super::sweep::RunOutput;
use std::fmt::Write as _;

/// One colour per policy; the first eight are those of the reproduction
/// plot, the rest tell the comparison's baselines apart.
const COLORS: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#000000", "#aec7e8", "#98df8a", "#ff9896",
];
const PANEL_W: f64 = 420.0;
const PANEL_H: f64 = 300.0;
const MARGIN: f64 = 50.0;

/// Per policy: (rate, median, min, max) points of one metric.
fn series(p: &Prepared, runs: &[RunOutput], name: &str) -> Vec<Vec<(f64, f64, f64, f64)>> {
    let mut out = vec![Vec::new(); p.policies.len()];
    for (policy, rate, group) in cells(runs) {
        let values: Vec<f64> = group
            .iter()
            .map(|r| metric(&r.result.metrics, name))
            .collect();
        let (med, min, max) = median_min_max(&values);
        if let Some(s) = out.get_mut(policy) {
            s.push((rate, med, min, max));
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
        let top = 30.0;
        let bottom = top + PANEL_H - MARGIN;
        bottom - (v / self.y_hi.max(1e-9)).clamp(0.0, 1.0) * (bottom - top)
    }
}

fn panel(
    svg: &mut String,
    pan: &Panel,
    title: &str,
    data: &[Vec<(f64, f64, f64, f64)>],
    ticks: &[f64],
) {
    let (left, right) = (pan.x(pan.rate_lo), pan.x(pan.rate_hi));
    let (top, bottom) = (pan.y(pan.y_hi), pan.y(0.0));
    let _ = writeln!(
        svg,
        r##"<text x="{:.1}" y="20" font-size="14" text-anchor="middle">{title}</text>"##,
        (left + right) / 2.0
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
        r##"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">offered RPS</text>"##,
        (left + right) / 2.0,
        bottom + 30.0
    );
    for (i, points) in data.iter().enumerate() {
        if points.is_empty() {
            continue;
        }
        let color = COLORS[i % COLORS.len()];
        let upper = points
            .iter()
            .map(|p| format!("{:.1},{:.1}", pan.x(p.0), pan.y(p.3)));
        let lower = points
            .iter()
            .rev()
            .map(|p| format!("{:.1},{:.1}", pan.x(p.0), pan.y(p.2)));
        let band: Vec<String> = upper.chain(lower).collect();
        let _ = writeln!(
            svg,
            r##"<polygon points="{}" fill="{color}" fill-opacity="0.15" stroke="none"/>"##,
            band.join(" ")
        );
        let line: Vec<String> = points
            .iter()
            .map(|p| format!("{:.1},{:.1}", pan.x(p.0), pan.y(p.1)))
            .collect();
        let _ = writeln!(
            svg,
            r##"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"/>"##,
            line.join(" ")
        );
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
    let goodput = series(p, runs, "goodput_rps");
    let reuse = series(p, runs, "token_reuse");
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
    let legend_h = 18.0 * p.policies.len() as f64;
    let height = 30.0 + PANEL_H + 10.0 + legend_h;
    let mut svg = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{:.0}" height="{height:.0}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
"##,
        2.0 * PANEL_W
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
        y_hi: 1.0,
    };
    panel(
        &mut svg,
        &right,
        "token reuse",
        &reuse,
        &[0.0, 0.25, 0.5, 0.75, 1.0],
    );
    for (i, policy) in p.policies.iter().enumerate() {
        let y = 30.0 + PANEL_H + 14.0 + 18.0 * i as f64;
        let color = COLORS[i % COLORS.len()];
        let _ = writeln!(
            svg,
            r##"<line x1="{MARGIN}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}" stroke-width="2"/><text x="{:.1}" y="{:.1}" font-size="11">{}</text>"##,
            MARGIN + 24.0,
            MARGIN + 30.0,
            y + 4.0,
            escape(&policy.name)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

fn escape(s: &str) -> String {
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
