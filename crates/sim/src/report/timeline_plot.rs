//! `backends.svg`: `backends.csv` drawn, so a fault and the recovery
//! after it can be seen at a glance. One panel per (policy, rate) cell
//! (rows: policies, columns: rates), of the cell's first seed: each
//! backend's completions per second over time, bin by bin. Backends that
//! a fault touches are coloured (and named in the legend), a strip under
//! the panel marks the bins where they are removed, slowed or silent,
//! and every other backend is a thin grey line. Hand-written SVG, like
//! `plot.svg`, so the bytes depend only on the numbers.

use crate::kernel::time::US_PER_S;
use crate::measure::metrics::BIN_US;
use crate::measure::timeline::Cell;
use crate::report::plot::{escape, tick_step, COLORS};
use crate::scenario::Prepared;
use crate::sweep::RunOutput;
use std::fmt::Write as _;

const PANEL_W: f64 = 360.0;
const PANEL_H: f64 = 200.0;
/// Left margin (tick labels), and the room under a plot area.
const LEFT: f64 = 46.0;
const BELOW: f64 = 44.0;
const TOP: f64 = 34.0;

/// Whether a fault changes backend `c`'s state in this bin.
fn faulted(c: &Cell) -> bool {
    !c.registered || c.stats_out_us > 0 || c.slow_factor != 1.0
}

pub fn svg(p: &Prepared, runs: &[RunOutput]) -> String {
    let rates = &p.file.rates_rps;
    let first_seed = p.file.seeds.first().copied();
    // The cells' first seeds, in run order.
    let shown: Vec<&RunOutput> = runs
        .iter()
        .filter(|r| Some(r.key.seed) == first_seed && !r.result.timeline.cells.is_empty())
        .collect();
    let members = &p.settings.topology.members;
    let mut touched: Vec<usize> = (0..members.len())
        .filter(|&m| {
            shown.iter().any(|r| {
                r.result
                    .timeline
                    .bins()
                    .any(|bin| bin.get(m).is_some_and(faulted))
            })
        })
        .collect();
    touched.truncate(COLORS.len());
    let bin_s = (BIN_US / US_PER_S) as f64;
    let y_max = shown
        .iter()
        .flat_map(|r| r.result.timeline.cells.iter())
        .map(|c| c.completed as f64 / bin_s)
        .fold(1.0, f64::max);
    let step = tick_step(y_max);
    let y_hi = (y_max / step).ceil().max(1.0) * step;
    let t_hi = shown
        .iter()
        .map(|r| r.result.timeline.bins().count())
        .max()
        .unwrap_or(0) as f64
        * bin_s;
    let cols = rates.len().max(1);
    let rows = p.policies.len().max(1);
    let legend_h = 18.0 * (touched.len() + 1) as f64 + 10.0;
    // Wide enough for the title and the legend with a single column.
    let width = (cols as f64 * PANEL_W + 20.0).max(760.0);
    let height = TOP + rows as f64 * PANEL_H + legend_h;
    let mut svg = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
"##
    );
    let _ = writeln!(
        svg,
        r##"<text x="{:.1}" y="20" font-size="14" font-weight="bold" text-anchor="middle" class="title">{}: completions per second of each backend, seed {}, {} mode</text>"##,
        width / 2.0,
        escape(&p.file.name),
        first_seed.map_or(String::new(), |s| s.to_string()),
        p.settings.mode.name(),
    );
    for r in &shown {
        let Some(col) = rates.iter().position(|&x| x == r.key.rate_rps) else {
            continue;
        };
        let (x0, y0) = (col as f64 * PANEL_W, TOP + r.key.policy as f64 * PANEL_H);
        let (left, right) = (x0 + LEFT, x0 + PANEL_W - 10.0);
        let (top, bottom) = (y0 + 22.0, y0 + PANEL_H - BELOW);
        let x = |t: f64| left + t / t_hi.max(1e-9) * (right - left);
        let y = |v: f64| bottom - (v / y_hi).clamp(0.0, 1.0) * (bottom - top);
        let _ = writeln!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle" class="panel-title">{} at {} RPS</text>"##,
            (left + right) / 2.0,
            y0 + 14.0,
            escape(&p.policies[r.key.policy].name),
            r.key.rate_rps
        );
        let _ = writeln!(
            svg,
            r##"<rect x="{left:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#444"/>"##,
            right - left,
            bottom - top
        );
        let mut v = 0.0;
        while v <= y_hi + 1e-9 {
            let _ = writeln!(
                svg,
                r##"<line x1="{left:.1}" y1="{yv:.1}" x2="{right:.1}" y2="{yv:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" font-size="9" text-anchor="end">{v}</text>"##,
                left - 3.0,
                y(v) + 3.0,
                yv = y(v)
            );
            v += step;
        }
        let mut t = 0.0;
        let t_step = tick_step(t_hi).max(bin_s);
        while t <= t_hi + 1e-9 {
            let _ = writeln!(
                svg,
                r##"<text x="{:.1}" y="{:.1}" font-size="9" text-anchor="middle">{t}</text>"##,
                x(t),
                bottom + 11.0
            );
            t += t_step;
        }
        let _ = writeln!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle" class="x-axis">time (s)</text>"##,
            (left + right) / 2.0,
            bottom + 34.0
        );
        let line = |m: usize| -> String {
            r.result
                .timeline
                .bins()
                .enumerate()
                .filter_map(|(b, bin)| {
                    let c = bin.get(m)?;
                    let mid = (b as f64 + 0.5) * bin_s;
                    Some(format!(
                        "{:.1},{:.1}",
                        x(mid),
                        y(c.completed as f64 / bin_s)
                    ))
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        for m in (0..members.len()).filter(|m| !touched.contains(m)) {
            let _ = writeln!(
                svg,
                r##"<polyline points="{}" fill="none" stroke="#bbb" stroke-width="1" class="backend"/>"##,
                line(m)
            );
        }
        for (i, &m) in touched.iter().enumerate() {
            let color = COLORS[i];
            let _ = writeln!(
                svg,
                r##"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2" class="faulted"/>"##,
                line(m)
            );
            // The bins where a fault holds it, as a strip under the axis.
            for (b, bin) in r.result.timeline.bins().enumerate() {
                if bin.get(m).is_some_and(faulted) {
                    let _ = writeln!(
                        svg,
                        r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="3" fill="{color}" class="fault-state"/>"##,
                        x(b as f64 * bin_s),
                        bottom + 14.0 + 4.0 * i as f64,
                        x(bin_s) - x(0.0)
                    );
                }
            }
        }
    }
    let ly = TOP + rows as f64 * PANEL_H + 6.0;
    for (i, &m) in touched.iter().enumerate() {
        let y = ly + 18.0 * i as f64;
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{}" stroke-width="2"/><text x="{:.1}" y="{:.1}" font-size="11" class="legend">{} (strip: the bins where a fault holds it)</text>"##,
            LEFT + 24.0,
            COLORS[i],
            LEFT + 30.0,
            y + 4.0,
            escape(&members[m].id)
        );
    }
    let _ = writeln!(
        svg,
        r##"<text x="{LEFT}" y="{:.1}" font-size="10" fill="#444">Grey: every other backend. Completions per second in each 10 s bin, from backends.csv.</text>"##,
        ly + 18.0 * touched.len() as f64 + 4.0
    );
    svg.push_str("</svg>\n");
    svg
}
