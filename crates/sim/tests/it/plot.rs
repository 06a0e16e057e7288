//! plot.svg's structure (docs/simulator.md, "Command line and outputs"):
//! the title, the panels' titles and units, the axis, one series per
//! policy in each panel, one colour per policy, and a hollow marker for
//! every transient cell.

use super::support::small;
use routex_sim::{report::output, report::plot, sweep};

fn count(svg: &str, needle: &str) -> usize {
    svg.matches(needle).count()
}

#[test]
fn the_plot_has_a_title_units_one_series_per_policy_and_transient_markers() {
    let mut p = small();
    p.set_window(5.0, 10.0);
    let runs = sweep::sweep(&p, 1, &mut |_, _| {});
    let svg = plot::svg(&p, &runs);
    assert!(svg.contains(
        r#"class="title">small-two-region: faithful mode, seeds 1, 5 s warm-up + 10 s window</text>"#
    ));
    assert!(svg.contains(r#"class="panel-title">goodput (RPS)</text>"#));
    assert!(svg.contains(r#"class="panel-title">token reuse (%)</text>"#));
    assert_eq!(
        count(&svg, r#"class="x-axis">offered rate (RPS)</text>"#),
        2
    );
    // Two panels x three policies.
    assert_eq!(count(&svg, r#"class="series""#), 6);
    assert_eq!(count(&svg, r#"class="legend""#), 3);
    // A marker per cell and panel; hollow exactly for the transient cells.
    let cells = output::cells(&runs);
    let transient = cells
        .iter()
        .filter(|(_, _, g)| !output::cell_is_steady(g))
        .count();
    assert!(
        transient > 0,
        "the 20 RPS cells of this fleet are transient"
    );
    assert_eq!(count(&svg, r#"class="transient""#), 2 * transient);
    assert_eq!(
        count(&svg, r#"class="steady""#),
        2 * (cells.len() - transient)
    );
    // One colour per policy, none repeated.
    let mut colours: Vec<&str> = svg
        .lines()
        .filter(|l| l.contains(r#"class="series""#))
        .filter_map(|l| l.split("stroke=\"").nth(1))
        .filter_map(|s| s.split('"').next())
        .collect();
    colours.truncate(3);
    colours.sort_unstable();
    colours.dedup();
    assert_eq!(colours.len(), 3);
    // Reuse is in percent: its axis ends at 100.
    assert!(svg.contains(">100</text>"));
    // Nothing is drawn past the right edge: the width leaves room for the
    // last rate label (centred at the panel's right end).
    let width: f64 = svg
        .split("width=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .and_then(|s| s.parse().ok())
        .expect("width");
    for x in svg
        .split(" x=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
    {
        let x: f64 = x.parse().expect("x");
        assert!(x + 12.0 <= width, "text at {x} in a {width} wide plot");
    }
}
