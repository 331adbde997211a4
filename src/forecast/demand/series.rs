//! A value over time: a daily pattern, explicit points, a CSV, or a constant; times a weekly factor; with seeded
//! multiplicative noise. Workloads' replicas and metrics and queues' arrival-rate multipliers are all one.

use kdl::KdlNode;

use super::time::time_of_day;
use crate::diagnostic::{ErrorCode, Span, Spanned};
use crate::profile::parser::{args, prop, Parser};

/// The weekdays as the file spells them, Monday first (the index `Demand::start_weekday` counts).
pub const WEEKDAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// The ramp of a `daily` pattern when the file names none: two hours from trough to peak (and back).
pub const DEFAULT_RAMP_SECONDS: u64 = 2 * 3_600;

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub shape: Shape,
    /// A factor per weekday, Monday first (1 when not written).
    pub weekly: [f64; 7],
    /// σ of the log of a multiplicative factor with mean 1, drawn afresh every minute (0: none).
    pub noise: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Constant(f64),
    Daily(Daily),
    /// (second, value), sorted: each value holds until the next point, the first also before it.
    Points(Vec<(u64, f64)>),
    /// A CSV's rows as points, read after the walk (`csv::read_all`); `points` is empty until then.
    Csv { path: Spanned<String>, points: Vec<(u64, f64)> },
}

/// `daily trough=2 peak=10 from="09:00" to="18:00" ramp="2h"`: `peak` over `[from, to)` every day (wrapping
/// midnight when `from` > `to`), `trough` otherwise, linear ramps of `ramp` seconds before `from` and after `to`
/// (`ramp="0s"`: stepped).
#[derive(Debug, Clone, PartialEq)]
pub struct Daily {
    pub trough: f64,
    pub peak: f64,
    pub from: u64,
    pub to: u64,
    pub ramp: u64,
}

const DAY: u64 = 86_400;

impl Daily {
    fn at(&self, t: u64) -> f64 {
        let tod = t % DAY;
        let inside = if self.from <= self.to { (self.from..self.to).contains(&tod) } else { tod >= self.from || tod < self.to };
        if inside {
            return self.peak;
        }
        let until_from = (self.from + DAY - tod) % DAY;
        let since_to = (tod + DAY - self.to) % DAY;
        let ramp = |d: u64| if self.ramp > 0 && d < self.ramp { 1.0 - d as f64 / self.ramp as f64 } else { 0.0 };
        self.trough + (self.peak - self.trough) * ramp(until_from).max(ramp(since_to))
    }
}

impl Series {
    pub fn constant(value: f64) -> Series {
        Series { shape: Shape::Constant(value), weekly: [1.0; 7], noise: 0.0 }
    }

    /// The value at second `t` before noise, the horizon starting on weekday `start_weekday`.
    pub fn at(&self, t: u64, start_weekday: u8) -> f64 {
        let base = match &self.shape {
            Shape::Constant(v) => *v,
            Shape::Daily(d) => d.at(t),
            Shape::Points(points) | Shape::Csv { points, .. } => held(points, t),
        };
        base * self.weekly[(usize::from(start_weekday) + (t / DAY) as usize) % 7]
    }

    /// An upper bound of [`Series::at`] over all time (for drawing a Poisson process by thinning).
    pub fn max(&self) -> f64 {
        let base = match &self.shape {
            Shape::Constant(v) => *v,
            Shape::Daily(d) => d.peak.max(d.trough),
            Shape::Points(points) | Shape::Csv { points, .. } => points.iter().map(|p| p.1).fold(0.0, f64::max),
        };
        base * self.weekly.iter().copied().fold(0.0, f64::max)
    }
}

/// The value of the last point at or before `t` (the first point's before it; 0 with none).
fn held(points: &[(u64, f64)], t: u64) -> f64 {
    let i = points.partition_point(|p| p.0 <= t);
    points.get(i.saturating_sub(1)).map_or(0.0, |p| p.1)
}

const SERIES_NODES: &[&str] = &["constant", "daily", "point", "csv", "weekly", "noise"];

impl Parser<'_> {
    /// A series node (`replicas`, `metric`, `arrivals`): `replicas 4` (a constant), or a block of one shape
    /// (`constant`, `daily`, `point`s, `csv`) and optional `weekly` and `noise`. `props` are the node's own.
    pub(crate) fn series_node(&mut self, node: &KdlNode, props: &[&str]) -> Option<Series> {
        self.check_entries(node, props, 1);
        let constant = args(node).next().and_then(|e| self.expect_non_negative(e, &format!("`{}`", node.name().value())));
        let mut series = Series::constant(constant.unwrap_or(0.0));
        let mut shape: Option<Span> = constant.is_some().then(|| self.span(node.name().span()));
        let mut points = Vec::new();
        let children = node.children().map(|c| c.nodes()).unwrap_or_default();
        if children.is_empty() && constant.is_none() {
            let what = node.name().value();
            self.error(self.span(node.span()), ErrorCode::E0107, format!("`{what}` needs a value or a block"), format!("write {what} 4, or {what} {{ daily trough=1 peak=4 from=\"09:00\" to=\"18:00\" }}"));
            return None;
        }
        for child in children {
            let name = child.name().value();
            let span = self.span(child.name().span());
            if name != "csv" {
                self.no_children(child);
            }
            if matches!(name, "constant" | "daily" | "point" | "csv") {
                if let Some(first) = shape.filter(|_| !(name == "point" && !points.is_empty())) {
                    let message = format!("a series has two shapes: `{name}` here and another at {}", self.sources.location(first));
                    self.error(span, ErrorCode::E0426, message, "keep one of replicas 4 / constant, daily, point…, csv; weekly and noise apply to it");
                    continue;
                }
                shape = Some(span);
            }
            match name {
                "constant" => {
                    self.check_entries(child, &[], 1);
                    series.shape = Shape::Constant(args(child).next().and_then(|e| self.expect_non_negative(e, "`constant`")).unwrap_or(0.0));
                }
                "daily" => series.shape = Shape::Daily(self.daily(child)?),
                "point" => points.extend(self.point(child)),
                "csv" => series.shape = Shape::Csv { path: self.single_string(child)?, points: Vec::new() },
                "weekly" => series.weekly = self.weekly(child),
                "noise" => {
                    self.check_entries(child, &[], 1);
                    series.noise = args(child).next().and_then(|e| self.expect_non_negative(e, "`noise`")).unwrap_or(0.0).min(2.0);
                }
                _ => self.unknown_node(child, SERIES_NODES, &format!("a `{}` series", node.name().value())),
            }
        }
        if !points.is_empty() {
            points.sort_by_key(|p| p.0);
            series.shape = Shape::Points(points);
        }
        Some(series)
    }

    fn daily(&mut self, node: &KdlNode) -> Option<Daily> {
        self.check_entries(node, &["trough", "peak", "from", "to", "ramp"], 0);
        let number = |p: &mut Self, key: &str| prop(node, key).and_then(|e| p.expect_non_negative_spanned(e, &format!("`{key}`")));
        let clock = |p: &mut Self, key: &str, default: u64| match prop(node, key).and_then(|e| p.expect_string(e, &format!("`{key}`"))) {
            None => Some(default),
            Some(v) => time_of_day(&v).or_else(|| {
                p.error(v.span, ErrorCode::E0424, format!("`{}` is not a time of day", crate::input::excerpt(&v.value)), "write HH:MM, e.g. \"09:00\"");
                None
            }),
        };
        let (trough, peak) = (number(self, "trough"), number(self, "peak"));
        let (from, to) = (clock(self, "from", 9 * 3_600), clock(self, "to", 18 * 3_600));
        let ramp = match prop(node, "ramp").and_then(|e| self.expect_string(e, "`ramp`")) {
            Some(v) => self.duration_value(&v)?,
            None => DEFAULT_RAMP_SECONDS,
        };
        let (Some(trough), Some(peak)) = (trough, peak) else {
            if prop(node, "trough").is_none() || prop(node, "peak").is_none() {
                self.error(self.span(node.name().span()), ErrorCode::E0107, "`daily` needs `trough` and `peak`", "write daily trough=2 peak=10 from=\"09:00\" to=\"18:00\"");
            }
            return None;
        };
        if trough.value > peak.value {
            self.error(trough.span, ErrorCode::E0428, format!("trough ({}) is above peak ({})", trough.value, peak.value), "the trough is the day's lowest value: swap them");
            return None;
        }
        Some(Daily { trough: trough.value, peak: peak.value, from: from?, to: to?, ramp })
    }

    fn point(&mut self, node: &KdlNode) -> Option<(u64, f64)> {
        self.check_entries(node, &["at", "value"], 0);
        let at = prop(node, "at").and_then(|e| self.expect_string(e, "`at`"));
        let value = prop(node, "value").and_then(|e| self.expect_non_negative(e, "`value`"));
        if prop(node, "at").is_none() || prop(node, "value").is_none() {
            self.error(self.span(node.name().span()), ErrorCode::E0107, "`point` needs `at` and `value`", "write point at=\"day 1 09:00\" value=4");
            return None;
        }
        Some((self.time_value(&at?)?, value?))
    }

    /// `weekly weekend=0.5`, `weekly sat=0.6 sun=0.3`, `weekdays=…`: a factor per day, 1 when not written.
    fn weekly(&mut self, node: &KdlNode) -> [f64; 7] {
        let mut keys: Vec<&str> = WEEKDAYS.to_vec();
        keys.extend(["weekdays", "weekend"]);
        self.check_entries(node, &keys, 0);
        let mut factors = [1.0; 7];
        for (key, days) in [("weekdays", 0..5), ("weekend", 5..7)] {
            if let Some(f) = prop(node, key).and_then(|e| self.expect_non_negative(e, &format!("`{key}`"))) {
                factors[days].fill(f);
            }
        }
        for (i, day) in WEEKDAYS.iter().enumerate() {
            if let Some(f) = prop(node, day).and_then(|e| self.expect_non_negative(e, &format!("`{day}`"))) {
                factors[i] = f;
            }
        }
        factors
    }

    fn expect_non_negative(&mut self, entry: &kdl::KdlEntry, what: &str) -> Option<f64> {
        self.expect_non_negative_spanned(entry, what).map(|v| v.value)
    }

    /// A number ≥ 0 (`expect_number` refuses 0, which a trough or a weekend factor may well be).
    fn expect_non_negative_spanned(&mut self, entry: &kdl::KdlEntry, what: &str) -> Option<Spanned<f64>> {
        let span = self.span(entry.span());
        match entry.value() {
            kdl::KdlValue::Integer(0) => Some(Spanned::new(0.0, span)),
            kdl::KdlValue::Float(f) if *f == 0.0 => Some(Spanned::new(0.0, span)),
            _ => self.expect_number(entry, what),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Peak inside the window, trough far from it, linear in the ramps on both sides, and the window may wrap
    /// midnight.
    #[test]
    fn a_daily_pattern_ramps_linearly_into_and_out_of_its_window() {
        let d = Daily { trough: 2.0, peak: 10.0, from: 9 * 3_600, to: 18 * 3_600, ramp: 2 * 3_600 };
        let at = |h: f64| d.at((h * 3_600.0) as u64);
        assert_eq!(at(3.0), 2.0);
        assert_eq!(at(7.0), 2.0);
        assert_eq!(at(8.0), 6.0);
        assert_eq!(at(9.0), 10.0);
        assert_eq!(at(17.5), 10.0);
        assert_eq!(at(19.0), 6.0);
        assert_eq!(at(20.0), 2.0);
        assert_eq!(d.at(86_400 + 9 * 3_600), 10.0, "every day");
        let night = Daily { trough: 0.0, peak: 4.0, from: 22 * 3_600, to: 2 * 3_600, ramp: 0 };
        assert_eq!(night.at(23 * 3_600), 4.0);
        assert_eq!(night.at(3_600), 4.0);
        assert_eq!(night.at(2 * 3_600), 0.0, "stepped: the window is half-open");
        assert_eq!(night.at(12 * 3_600), 0.0);
    }

    /// Points hold until the next one; the weekly factor multiplies by the weekday counted from the start day.
    #[test]
    fn points_hold_and_the_week_multiplies() {
        let mut s = Series { shape: Shape::Points(vec![(3_600, 4.0), (7_200, 1.0)]), weekly: [1.0; 7], noise: 0.0 };
        assert_eq!(s.at(0, 0), 4.0);
        assert_eq!(s.at(5_000, 0), 4.0);
        assert_eq!(s.at(7_200, 0), 1.0);
        s.weekly[5] = 0.5;
        assert_eq!(s.at(5 * 86_400 + 7_200, 0), 0.5, "day 6 from a Monday is a Saturday");
        assert_eq!(s.at(7_200, 5), 0.5, "a horizon starting on Saturday");
        assert_eq!(s.max(), 4.0);
    }
}
