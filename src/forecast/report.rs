//! A [`Forecast`] as a reader gets it: an aligned table, markdown (for a pull request or a wiki), or JSON (its shape:
//! docs/forecast.schema.json, checked by tests/forecast.rs).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::summary::{ClusterForecast, Spend, Spread};
use crate::layout::write_table;

/// The JSON format's version; a reader refuses another.
pub const VERSION: u32 = 1;

/// Where the assumptions are stated at length (the book page, in the repository).
pub const BOOK_PAGE: &str = "docs/src/forecast.md";

/// The assumptions every figure rests on, in the words the outputs print.
pub const ASSUMPTIONS: [&str; 4] = [
    "demand as the demand file states it (replicas, metrics, Job arrivals, start-up delays, interruptions, shortages), drawn per seed",
    "Karpenter v1.14 provisioning and disruption as the engine models them (see the book page for what it does not cover)",
    "the catalog's prices, billed per second from launch to termination; spot at the zone's price, estimated where marked ~",
    "a workload's cost is its share of its NodePools' spend by the accelerators its running pods request",
];

/// Every cluster's forecast of one run of `gpuplan forecast`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Forecast {
    pub version: u32,
    /// The demand file, as given or found.
    pub demand: String,
    pub horizon_seconds: u64,
    pub seeds: Vec<u64>,
    pub assumptions: Vec<String>,
    pub clusters: Vec<ClusterForecast>,
}

impl Forecast {
    pub fn new(demand: String, horizon_seconds: u64, seeds: Vec<u64>, clusters: Vec<ClusterForecast>) -> Forecast {
        Forecast { version: VERSION, demand, horizon_seconds, seeds, assumptions: ASSUMPTIONS.iter().map(|a| a.to_string()).collect(), clusters }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Markdown,
    Json,
}

pub fn render(f: &Forecast, format: Format) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(f).expect("a forecast serializes") + "\n",
        Format::Table => table(f),
        Format::Markdown => markdown(f),
    }
}

/// "$1,234" for whole dollars, "$12.34" below $100 (an hour's or a small pool's figure keeps its cents).
pub fn money(v: f64) -> String {
    if v.abs() < 100.0 {
        return format!("${v:.2}");
    }
    let whole = format!("{:.0}", v.abs());
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{}${grouped}", if v < 0.0 { "-" } else { "" })
}

/// The range over the seeds ("$640…$990"), or "–" when every seed gave the same.
pub fn range(s: &Spread, show: impl Fn(f64) -> String) -> String {
    if s.varies() { format!("{}…{}", show(s.min), show(s.max)) } else { "–".to_string() }
}

fn hours(v: f64) -> String {
    format!("{v:.1}")
}

/// "30 days", "36 hours".
pub fn horizon(seconds: u64) -> String {
    let plural = |n: f64, unit: &str| format!("{n:.0} {unit}{}", if n == 1.0 { "" } else { "s" });
    if seconds.is_multiple_of(86_400) { plural((seconds / 86_400) as f64, "day") } else { plural(seconds as f64 / 3600.0, "hour") }
}

fn headline(c: &ClusterForecast) -> String {
    let seeds: Vec<String> = c.seeds.iter().map(u64::to_string).collect();
    format!(
        "{}: {} replayed, {} run{} (seed{} {}){}",
        c.cluster,
        horizon(c.horizon_seconds),
        c.runs,
        if c.runs == 1 { "" } else { "s" },
        if seeds.len() == 1 { "" } else { "s" },
        seeds.join(", "),
        if c.price_estimate { "; ~ = from estimated spot prices" } else { "" }
    )
}

/// One row of the spend table: the scope's name, then its figures.
fn spend_row(name: String, s: &Spend, estimate: bool) -> Vec<String> {
    let mark = if estimate { "~" } else { "" };
    vec![
        name,
        format!("{mark}{}", money(s.usd_per_day.mean)),
        format!("{mark}{}", money(s.usd_per_month.mean)),
        range(&s.usd_per_month, money),
        money(s.p50_usd_per_hour.mean),
        money(s.p95_usd_per_hour.mean),
        money(s.bound_usd_per_hour),
        s.budget_usd_per_hour.map_or("–".into(), money),
        s.hours_over_budget.map_or("–".into(), |h| if h.varies() { format!("{}…{}", h.min, h.max) } else { format!("{}", h.mean) }),
    ]
}

const SPEND_HEADERS: [&str; 9] = ["", "$/day", "$/month", "range $/month", "p50 $/h", "p95 $/h", "bound $/h", "budget $/h", "hours over budget"];

/// The scopes of a cluster in reading order: the cluster, then each profile followed by its NodePools.
fn spend_rows(c: &ClusterForecast, indent: &str) -> Vec<Vec<String>> {
    let mut rows = vec![spend_row(format!("cluster {}", c.cluster), &c.spend, c.price_estimate)];
    for p in &c.profiles {
        let pools: Vec<_> = c.pools.iter().filter(|pool| pool.profile == p.name).collect();
        rows.push(spend_row(format!("{indent}profile {}", p.name), &p.spend, pools.iter().any(|pool| pool.price_estimate)));
        rows.extend(pools.iter().map(|pool| spend_row(format!("{indent}{indent}nodepool {}", pool.name), &pool.spend, pool.price_estimate)));
    }
    rows
}

fn workload_rows(c: &ClusterForecast) -> Vec<Vec<String>> {
    c.workloads
        .iter()
        .map(|w| vec![format!("{} {}", w.kind, w.name), money(w.usd_per_month.mean), range(&w.usd_per_month, money), hours(w.running_pod_hours.mean), format!("{:.0}", w.pending_pod_minutes.mean)])
        .collect()
}

const WORKLOAD_HEADERS: [&str; 5] = ["", "$/month", "range $/month", "running pod-hours", "pending pod-minutes"];

fn node_hour_rows(c: &ClusterForecast) -> Vec<Vec<String>> {
    c.spend.node_hours.iter().map(|n| vec![n.instance_type.clone(), n.capacity_type.clone(), hours(n.hours.mean), range(&n.hours, hours)]).collect()
}

const NODE_HOUR_HEADERS: [&str; 4] = ["instance type", "capacity", "node-hours", "range"];

fn table(f: &Forecast) -> String {
    let mut out = String::new();
    for c in &f.clusters {
        let _ = writeln!(out, "{}\n", headline(c));
        write_table(&mut out, "  ", &SPEND_HEADERS, &[false, true, true, true, true, true, true, true, true], &spend_rows(c, "  "));
        if !c.workloads.is_empty() {
            out.push('\n');
            write_table(&mut out, "  ", &WORKLOAD_HEADERS, &[false, true, true, true, true], &workload_rows(c));
        }
        if !c.spend.node_hours.is_empty() {
            out.push('\n');
            write_table(&mut out, "  ", &NODE_HOUR_HEADERS, &[false, false, true, true], &node_hour_rows(c));
        }
        let _ = writeln!(out, "\n  pending pod-minutes: {:.0} (range {})\n", c.pending_pod_minutes.mean, range(&c.pending_pod_minutes, |v| format!("{v:.0}")));
    }
    let _ = writeln!(out, "assumptions ({BOOK_PAGE}):");
    for a in &f.assumptions {
        let _ = writeln!(out, "  - {a}");
    }
    out
}

fn markdown_table(out: &mut String, headers: &[&str], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", headers.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(headers.len()));
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out.push('\n');
}

fn markdown(f: &Forecast) -> String {
    let mut out = String::from("## Forecast\n\n");
    for c in &f.clusters {
        let _ = writeln!(out, "### {}\n", headline(c).replacen(&c.cluster, &format!("`{}`", c.cluster), 1));
        markdown_table(&mut out, &SPEND_HEADERS, &spend_rows(c, "&nbsp;&nbsp;"));
        if !c.workloads.is_empty() {
            markdown_table(&mut out, &WORKLOAD_HEADERS, &workload_rows(c));
        }
        if !c.spend.node_hours.is_empty() {
            markdown_table(&mut out, &NODE_HOUR_HEADERS, &node_hour_rows(c));
        }
        let _ = writeln!(out, "Pending pod-minutes: {:.0} (range {}).\n", c.pending_pod_minutes.mean, range(&c.pending_pod_minutes, |v| format!("{v:.0}")));
    }
    let _ = writeln!(out, "<details><summary>Assumptions (<a href=\"{BOOK_PAGE}\">the forecast</a>)</summary>\n");
    for a in &f.assumptions {
        let _ = writeln!(out, "- {a}");
    }
    out.push_str("\n</details>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_groups_thousands_and_keeps_cents_below_a_hundred() {
        assert_eq!(money(12.345), "$12.35");
        assert_eq!(money(1234567.4), "$1,234,567");
        assert_eq!(money(-812.0), "-$812");
        assert_eq!(money(100.0), "$100");
    }

    #[test]
    fn a_range_is_shown_only_when_the_seeds_disagree() {
        assert_eq!(range(&Spread { mean: 2.0, min: 1.0, max: 3.0 }, money), "$1.00…$3.00");
        assert_eq!(range(&Spread { mean: 2.0, min: 2.0, max: 2.0 }, money), "–");
    }

    #[test]
    fn horizon_reads_in_days_when_whole() {
        assert_eq!(horizon(30 * 86_400), "30 days");
        assert_eq!(horizon(86_400), "1 day");
        assert_eq!(horizon(36 * 3600), "36 hours");
        assert_eq!(horizon(3600), "1 hour");
    }
}
