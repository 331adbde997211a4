//! The forecast as a picture (SVG): per cluster, the spend per hour (the mean over the runs, their range as a band)
//! against the budget and the bound, and the nodes of each NodePool over time, stacked.
//!
//! Written by hand rather than with a plotting crate: two kinds of chart (a line with a band, stacked areas) are a
//! page of code, while `plotters` with only its SVG backend still brings its own text layout and would add a crate
//! and its build to every CI run (which is at 27.5 of its 30 minutes). The bytes depend on the forecast alone: every
//! coordinate is printed with one decimal, nothing reads the clock or a font.

use std::fmt::Write as _;

use super::report::{horizon, money, Forecast};
use super::summary::ClusterForecast;

const WIDTH: f64 = 960.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 210.0;
const CHART: f64 = 180.0;
const GAP: f64 = 56.0;
/// A cluster's panel: title, the spend chart, the nodes chart and their axes.
const PANEL: f64 = 40.0 + CHART + GAP + CHART + 40.0;
/// Colours for the NodePools (Okabe–Ito, readable by colour-blind readers), in the NodePools' name order.
const PALETTE: [&str; 8] = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];

/// One SVG with a panel per cluster.
pub fn svg(f: &Forecast) -> String {
    let height = 24.0 + PANEL * f.clusters.len().max(1) as f64;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    for (i, c) in f.clusters.iter().enumerate() {
        panel(&mut out, c, 12.0 + PANEL * i as f64);
    }
    out.push_str("</svg>\n");
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A "nice" axis maximum and step (1, 2 or 5 times a power of ten) for values up to `max`.
fn axis(max: f64) -> (f64, f64) {
    let max = if max > 0.0 { max } else { 1.0 };
    let raw = max / 4.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|s| *s >= raw).unwrap_or(10.0 * magnitude);
    ((max / step).ceil() * step, step)
}

/// Maps an hour and a value to the chart whose top is `top`.
struct Frame {
    top: f64,
    hours: f64,
    max: f64,
}

impl Frame {
    fn x(&self, hour: f64) -> f64 {
        LEFT + (WIDTH - LEFT - RIGHT) * hour / self.hours.max(1.0)
    }

    fn y(&self, v: f64) -> f64 {
        self.top + CHART - CHART * (v / self.max).clamp(0.0, 1.0)
    }

    /// Axes, horizontal grid lines with their labels (`label` formats a value), and the time ticks (days, or every
    /// six hours under three days).
    fn axes(&self, out: &mut String, step: f64, label: impl Fn(f64) -> String) {
        let mut v = 0.0;
        while v <= self.max + 1e-9 {
            let y = self.y(v);
            let _ = writeln!(out, r##"<line x1="{LEFT:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e0e0e0"/>"##, self.x(self.hours));
            let _ = writeln!(out, r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#, LEFT - 6.0, y + 4.0, escape(&label(v)));
            v += step;
        }
        let (tick, name) = if self.hours > 72.0 { (24.0 * (self.hours / 24.0 / 10.0).ceil().max(1.0), "day") } else { (6.0, "h") };
        let mut h = 0.0;
        while h <= self.hours + 1e-9 {
            let x = self.x(h);
            let text = if name == "day" { format!("day {:.0}", h / 24.0) } else { format!("{h:.0} h") };
            let _ = writeln!(out, r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#808080"/>"##, self.top + CHART, self.top + CHART + 4.0);
            let _ = writeln!(out, r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{text}</text>"#, self.top + CHART + 16.0);
            h += tick;
        }
        let _ = writeln!(out, r##"<polyline points="{LEFT:.1},{:.1} {LEFT:.1},{:.1} {:.1},{:.1}" fill="none" stroke="#404040"/>"##, self.top, self.top + CHART, self.x(self.hours), self.top + CHART);
    }
}

fn points(frame: &Frame, values: impl Iterator<Item = (f64, f64)>) -> String {
    values.map(|(h, v)| format!("{:.1},{:.1}", frame.x(h), frame.y(v))).collect::<Vec<_>>().join(" ")
}

/// A step line through an hourly series: each hour's value held over the hour.
fn steps(series: &[f64]) -> Vec<(f64, f64)> {
    series.iter().enumerate().flat_map(|(h, v)| [(h as f64, *v), (h as f64 + 1.0, *v)]).collect()
}

fn panel(out: &mut String, c: &ClusterForecast, top: f64) {
    let _ = writeln!(
        out,
        r#"<text x="{LEFT:.1}" y="{:.1}" font-size="15" font-weight="bold">{}: spend per hour and nodes, {} ({} run{})</text>"#,
        top + 16.0,
        escape(&c.cluster),
        horizon(c.horizon_seconds),
        c.runs,
        if c.runs == 1 { "" } else { "s" }
    );
    spend_chart(out, c, top + 40.0);
    nodes_chart(out, c, top + 40.0 + CHART + GAP);
}

/// A horizontal reference line with its label at the right.
fn reference(out: &mut String, frame: &Frame, value: f64, colour: &str, dash: &str, text: &str) {
    let y = frame.y(value);
    let _ = writeln!(out, r#"<line x1="{LEFT:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="{dash}"/>"#, frame.x(frame.hours));
    let _ = writeln!(out, r#"<text x="{:.1}" y="{:.1}" fill="{colour}">{}</text>"#, frame.x(frame.hours) + 6.0, y + 4.0, escape(text));
}

fn spend_chart(out: &mut String, c: &ClusterForecast, top: f64) {
    let series = &c.series.usd;
    let hours = series.len() as f64;
    let spend_max = series.iter().map(|s| s.max).fold(0.0, f64::max);
    let budget = c.spend.budget_usd_per_hour;
    let bound = c.spend.bound_usd_per_hour;
    // The bound is drawn when it is within twice what else is on the chart; far above, it would flatten the spend
    // into a line along the axis, so it is named at the top instead.
    let seen = spend_max.max(budget.unwrap_or(0.0));
    let bound_on_scale = bound <= 2.0 * seen || seen == 0.0;
    let (max, step) = axis(if bound_on_scale { seen.max(bound) } else { seen } * 1.05);
    let frame = Frame { top, hours, max };
    frame.axes(out, step, |v| format!("{}/h", money(v)));
    let upper: Vec<f64> = series.iter().map(|s| s.max).collect();
    let lower: Vec<f64> = series.iter().map(|s| s.min).collect();
    let band: Vec<(f64, f64)> = steps(&upper).into_iter().chain(steps(&lower).into_iter().rev()).collect();
    if c.runs > 1 {
        let _ = writeln!(out, r##"<polygon points="{}" fill="#0072B2" fill-opacity="0.2" stroke="none"/>"##, points(&frame, band.into_iter()));
    }
    let mean: Vec<f64> = series.iter().map(|s| s.mean).collect();
    let _ = writeln!(out, r##"<polyline points="{}" fill="none" stroke="#0072B2" stroke-width="1.5"/>"##, points(&frame, steps(&mean).into_iter()));
    if let Some(b) = budget {
        reference(out, &frame, b, "#D55E00", "6 3", &format!("budget {}/h", money(b)));
    }
    if bound_on_scale {
        reference(out, &frame, bound, "#404040", "2 3", &format!("worst case {}/h", money(bound)));
    } else {
        let _ = writeln!(out, r##"<text x="{:.1}" y="{:.1}" fill="#404040">worst case {}/h ↑ (off the scale)</text>"##, frame.x(hours) + 6.0, top + 4.0, money(bound));
    }
    let legend = if c.runs > 1 { "spend per hour: the mean over the runs, their range shaded" } else { "spend per hour" };
    let _ = writeln!(out, r##"<text x="{:.1}" y="{:.1}" fill="#0072B2">{legend}</text>"##, LEFT + 8.0, top + 14.0);
}

fn nodes_chart(out: &mut String, c: &ClusterForecast, top: f64) {
    let pools: Vec<(&String, &Vec<f64>)> = c.series.nodes.iter().collect();
    let hours = pools.iter().map(|(_, s)| s.len()).max().unwrap_or(0);
    // Each pool's band sits on the ones before it: stacked[i] is the sum of the first i pools.
    let mut stacked = vec![vec![0.0; hours]];
    for (_, series) in &pools {
        let below = stacked.last().expect("starts with the axis");
        let top: Vec<f64> = below.iter().enumerate().map(|(h, b)| b + series.get(h).copied().unwrap_or(0.0)).collect();
        stacked.push(top);
    }
    let (max, step) = axis(stacked.last().map_or(0.0, |s| s.iter().copied().fold(0.0, f64::max)) * 1.05);
    let frame = Frame { top, hours: hours as f64, max };
    frame.axes(out, step, |v| format!("{v:.0}"));
    for (i, (pool, _)) in pools.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let area: Vec<(f64, f64)> = steps(&stacked[i + 1]).into_iter().chain(steps(&stacked[i]).into_iter().rev()).collect();
        let _ = writeln!(out, r#"<polygon points="{}" fill="{colour}" fill-opacity="0.75" stroke="none"><title>{}</title></polygon>"#, points(&frame, area.into_iter()), escape(pool));
        let y = top + 14.0 * i as f64 + 4.0;
        let x = frame.x(frame.hours) + 6.0;
        let _ = writeln!(out, r#"<rect x="{x:.1}" y="{:.1}" width="10" height="10" fill="{colour}"/><text x="{:.1}" y="{:.1}">{}</text>"#, y - 9.0, x + 14.0, y, escape(pool));
    }
    let _ = writeln!(out, r##"<text x="{:.1}" y="{:.1}" fill="#404040">nodes per NodePool (stacked; the mean over the runs)</text>"##, LEFT + 8.0, top + 14.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_maximum_is_a_round_multiple_of_a_1_2_5_step() {
        assert_eq!(axis(93.0), (100.0, 50.0));
        assert_eq!(axis(7.0), (8.0, 2.0));
        let (max, step) = axis(0.0);
        assert!((max - 1.0).abs() < 1e-12 && (step - 0.5).abs() < 1e-12, "an empty chart still has an axis");
    }
}
