//! The demand file, `gpuplan.demand.kdl` at the repository root: what the clusters' workloads and queues ask for
//! over time, how long a node takes to start, how often spot capacity is reclaimed and when capacity runs short.
//! Everything in it is an input of the forecast's draw (`draw::trace`), and everything it leaves out takes a default
//! that is an assumption, stated as one in `docs/src/reference/demand.md`.
//!
//! It is KDL v2 read by the profile walk's own [`Parser`] (the same file:line:col diagnostics, the same E0102–E0107
//! for unknown nodes, properties and values), in three steps:
//! 1. [`parse`]: the file's syntax and values into a [`Demand`] (E0424 durations and times, E0425 rates, E0426 a
//!    series with two shapes, E0428 a minimum above its maximum);
//! 2. the CSV series it names are read (E0427, at the CSV's own file:line);
//! 3. [`check`]: the names against one compile's clusters, workloads, queues, pools and instance types (E0420–E0423,
//!    E0429, E0430, each with did-you-mean), after which `draw::trace` can take any of its clusters.
//!
//! Files beside the profiles that are not profiles are `gpuplan.<what>.kdl` (`profile::config::is_repository_file`),
//! so the profile walk never reads this one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kdl::KdlNode;

use crate::diagnostic::{ErrorCode, ProfileDiagnostic, Sources, Span, Spanned};
use crate::profile::parser::{args, prop, Parser};

pub mod budget;
pub mod check;
pub mod csv;
mod series;
mod time;

pub use check::check;
pub use series::{Daily, Series, Shape, WEEKDAYS};
pub use time::{parse_duration, parse_rate_per_day, parse_time};

/// The demand file's name, at the repository root (beside `gpuplan.kdl`).
pub const DEMAND_FILE: &str = "gpuplan.demand.kdl";

/// The horizon when the file names none: one month of 30 days, what `$/month` figures mean.
pub const DEFAULT_HORIZON_SECONDS: u64 = 30 * 86_400;

/// Seeds a range is drawn over when the file names none.
pub const DEFAULT_SEEDS: u32 = 5;

/// Spot interruptions per node when the file names no rate: AWS Spot Advisor's lowest "frequency of interruption"
/// bucket, "<5%" of a type's instances interrupted per month (aws.amazon.com/ec2/spot/instance-advisor). An
/// assumption: no interruption data exists offline, and a type's bucket changes month to month.
pub const DEFAULT_SPOT_RATE_PER_DAY: f64 = 0.05 / 30.0;

/// The share of a type×zone's spot nodes one interruption event reclaims when the file names none: uniform between
/// these, mean 30%. An assumption: published spot traces show reclaims arriving in bursts within one pool (type ×
/// zone), not one node at a time, and no public figure of the burst's size exists.
pub const DEFAULT_SPOT_SHARE: (f64, f64) = (0.1, 0.5);

/// Each part of the start-up delay when the file names none (their sum is `trace::DEFAULT_STARTUP_SECONDS`).
pub const DEFAULT_STARTUP_PART_SECONDS: u64 = 60;

/// What the demand file says, every name with its span in the file (for [`check`]'s diagnostics).
#[derive(Debug, Clone)]
pub struct Demand {
    pub horizon_seconds: u64,
    pub seed: u64,
    /// How many seeds (`seed`, `seed + 1`, …) a range is drawn over.
    pub seeds: u32,
    /// The weekday of second 0 (0 = Monday … 6 = Sunday): where weekly patterns start.
    pub start_weekday: u8,
    /// Where `horizon` and `seeds` are written (None: the default), for the limits' diagnostics (`budget`).
    pub horizon_span: Option<Span>,
    pub seeds_span: Option<Span>,
    pub clusters: BTreeMap<String, ClusterDemand>,
    /// The demand file and the CSVs it read, for diagnostics that point into them.
    pub sources: Sources,
}

/// One `cluster "name" { … }` of the demand file.
#[derive(Debug, Clone)]
pub struct ClusterDemand {
    pub name: Spanned<String>,
    /// The weekday of second 0, as [`Demand::start_weekday`] (copied so one cluster's demand draws on its own).
    pub start_weekday: u8,
    pub workloads: Vec<WorkloadDemand>,
    pub queues: Vec<QueueDemand>,
    pub startup: Vec<Startup>,
    pub spot: Spot,
    pub shortages: Vec<ShortageRule>,
    pub drifts: Vec<DriftRule>,
}

/// A `workload "name"` (or `"namespace/name"`) of the profile: its replicas over time, or the metric its autoscaler
/// reads.
#[derive(Debug, Clone)]
pub struct WorkloadDemand {
    pub name: Spanned<String>,
    pub drive: Drive,
}

/// What moves a workload.
#[derive(Debug, Clone)]
pub enum Drive {
    /// The replicas themselves (a workload without an autoscaler, or one whose replica history is known).
    Replicas(Series),
    /// The total value of the metric the HPA or KEDA reads (summed over the pods, as a Prometheus `sum(…)` gives
    /// it), per KEDA trigger (`None`: the HPA's metric, or the ScaledObject's first trigger).
    Metric(Vec<MetricSeries>),
}

#[derive(Debug, Clone)]
pub struct MetricSeries {
    pub trigger: Option<Spanned<String>>,
    pub series: Series,
}

/// A `queue "name"`: Jobs submitted to its LocalQueue.
#[derive(Debug, Clone)]
pub struct QueueDemand {
    pub name: Spanned<String>,
    /// Mean Jobs per hour (a Poisson process), before `pattern`.
    pub per_hour: f64,
    /// Where `per-hour` is written, for the event limit's diagnostic.
    pub rate_span: Option<Span>,
    /// A multiplier of the rate over the day and the week (constant 1 when none is written).
    pub pattern: Series,
    /// Pods per Job (None: 1).
    pub pods: Option<Spanned<u32>>,
    /// Accelerators per pod (None: the queue's pool's largest node).
    pub gpus_per_pod: Option<Spanned<u32>>,
    pub duration: JobDuration,
}

/// How long a Job's pods run once all of them run.
#[derive(Debug, Clone, PartialEq)]
pub enum JobDuration {
    Fixed(u64),
    /// Log-normal with this median and 90th percentile, clamped to `[min, max]`.
    LogNormal { median: u64, p90: u64, min: u64, max: u64 },
}

/// When the file names no duration: one hour. An assumption.
pub const DEFAULT_JOB_SECONDS: u64 = 3_600;

/// `startup pool="…"` or `startup nodepool="…"`: seconds from launch to a Ready node taking pods.
#[derive(Debug, Clone)]
pub struct Startup {
    /// A profile pool (all its NodePools) or one NodePool.
    pub target: Spanned<String>,
    pub seconds: u64,
}

/// The spot interruption model.
#[derive(Debug, Clone)]
pub struct Spot {
    /// Expected fraction of a type×zone's spot nodes reclaimed per day.
    pub rate_per_day: f64,
    /// The share of the type×zone's nodes one event reclaims: uniform in `[min, max]`.
    pub share: (f64, f64),
    /// Where `rate` is written (None: the default rate).
    pub rate_span: Option<Span>,
    /// Per type (`g5.xlarge`) or family (`g5`), the most specific first when drawn.
    pub overrides: Vec<SpotOverride>,
}

impl Default for Spot {
    fn default() -> Self {
        Spot { rate_per_day: DEFAULT_SPOT_RATE_PER_DAY, share: DEFAULT_SPOT_SHARE, rate_span: None, overrides: Vec::new() }
    }
}

#[derive(Debug, Clone)]
pub struct SpotOverride {
    /// `type` (an instance type) or `family` (its family: the part before the dot).
    pub family: bool,
    pub name: Spanned<String>,
    pub rate_per_day: f64,
    pub rate_span: Span,
}

impl Spot {
    /// The rate for one instance type: its own override, else its family's, else the default.
    pub fn rate_for(&self, instance_type: &str) -> f64 {
        let family = instance_type.split('.').next().unwrap_or(instance_type);
        let own = self.overrides.iter().find(|o| !o.family && o.name.value == instance_type);
        let of_family = self.overrides.iter().find(|o| o.family && o.name.value == family);
        own.or(of_family).map_or(self.rate_per_day, |o| o.rate_per_day)
    }
}

/// `shortage`: no capacity for an offering, at a stated time or at a rate.
#[derive(Debug, Clone)]
pub struct ShortageRule {
    pub instance_type: Spanned<String>,
    /// None: every zone of the cluster, one rule each.
    pub zone: Option<Spanned<String>>,
    /// `spot` or `on-demand` (None: both).
    pub capacity_type: Option<Spanned<String>>,
    pub when: ShortageWhen,
    /// Where the rate (`per-month=…`) is written, when it has one.
    pub rate_span: Option<Span>,
    pub for_seconds: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ShortageWhen {
    At(u64),
    /// Starts per day, a Poisson process.
    Rate(f64),
}

/// `drift nodepool="…" at="day 10"`: the NodePool's nodes drift then (an AMI or NodeClass change).
#[derive(Debug, Clone)]
pub struct DriftRule {
    /// A NodePool or a profile pool (all its NodePools).
    pub nodepool: Spanned<String>,
    pub at: u64,
}

/// The demand file's nodes, for did-you-mean.
const TOP_NODES: &[&str] = &["horizon", "seed", "seeds", "start", "cluster"];
const CLUSTER_NODES: &[&str] = &["workload", "queue", "startup", "spot", "shortage", "drift"];

/// `gpuplan.demand.kdl` in `root` (the repository root, where `gpuplan.kdl` is): None when there is none.
pub fn load(root: &Path) -> Result<Option<Demand>, Vec<ProfileDiagnostic>> {
    let path = root.join(DEMAND_FILE);
    if !path.is_file() {
        return Ok(None);
    }
    let shown = if root == Path::new(".") || root.as_os_str().is_empty() { PathBuf::from(DEMAND_FILE) } else { path.clone() };
    match crate::input::read_to_string(&path) {
        Ok(text) => parse(&shown, &text).map(Some),
        Err(err) => {
            let mut sources = Sources::default();
            let file = sources.add(&shown, DEMAND_FILE.to_string(), String::new());
            let d = sources.error(Span { file, offset: 0, len: 0 }, ErrorCode::E0001, format!("cannot read {DEMAND_FILE}: {err}"));
            Err(vec![d.help("check the file's permissions")])
        }
    }
}

/// The demand file at `path` (as diagnostics show it; CSVs are read relative to its directory) with this text.
pub fn parse(path: &Path, text: &str) -> Result<Demand, Vec<ProfileDiagnostic>> {
    let mut sources = Sources::default();
    let name = path.file_name().map_or_else(|| DEMAND_FILE.to_string(), |n| n.to_string_lossy().into_owned());
    let file = sources.add(path, name, text.to_string());
    let (demand, mut diagnostics) = {
        let mut parser = Parser::new(&sources, file);
        let demand = parser.read_document().map(|doc| parser.demand(&doc));
        (demand, parser.diagnostics)
    };
    let Some(mut demand) = demand else { return Err(diagnostics) };
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    diagnostics.extend(csv::read_all(&mut demand, &dir, &mut sources));
    diagnostics.extend(budget::rates(&demand, &sources));
    if diagnostics.iter().any(ProfileDiagnostic::is_error) {
        return Err(crate::diagnostic::one_per_cause(diagnostics));
    }
    demand.sources = sources;
    Ok(demand)
}

impl Parser<'_> {
    fn demand(&mut self, doc: &kdl::KdlDocument) -> Demand {
        let mut demand = Demand { horizon_seconds: DEFAULT_HORIZON_SECONDS, seed: 1, seeds: DEFAULT_SEEDS, start_weekday: 0, horizon_span: None, seeds_span: None, clusters: BTreeMap::new(), sources: Sources::default() };
        let mut clusters = Vec::new();
        let mut seen = crate::profile::config::Seen::new();
        for node in doc.nodes() {
            if self.repeated(node, &mut seen, &["horizon", "seed", "seeds", "start"]) {
                continue;
            }
            let name = node.name().value();
            if name != "cluster" {
                self.no_children(node);
            }
            match name {
                "horizon" => {
                    if let Some(v) = self.single_string(node) {
                        demand.horizon_span = Some(v.span);
                        if let Some(h) = self.duration_value(&v) {
                            demand.horizon_seconds = h.max(1);
                        }
                    }
                }
                "seed" => {
                    self.check_entries(node, &[], 1);
                    if let Some(s) = args(node).next().and_then(|e| self.expect_integer(e, "`seed`", 0, i128::from(u64::MAX))) {
                        demand.seed = s.value as u64;
                    }
                }
                "seeds" => {
                    let seeds = self.bounded_u32(node, "`seeds`", 1..=1000);
                    demand.seeds_span = seeds.as_ref().map(|s| s.span);
                    demand.seeds = seeds.map_or(DEFAULT_SEEDS, |s| s.value);
                }
                "start" => {
                    if let Some(day) = self.single_string(node) {
                        let days: Vec<(&str, u8)> = WEEKDAYS.iter().enumerate().map(|(i, d)| (*d, i as u8)).collect();
                        let help = "write the weekday of the horizon's first second: mon, tue, wed, thu, fri, sat or sun";
                        demand.start_weekday = self.keyword(&day, "weekday", &days, help).map_or(0, |d| d.value);
                    }
                }
                "cluster" => clusters.push(node),
                _ => self.unknown_node(node, TOP_NODES, DEMAND_FILE),
            }
        }
        for node in clusters {
            if let Some(cluster) = self.demand_cluster(node, demand.start_weekday) {
                if demand.clusters.contains_key(&cluster.name.value) {
                    let message = format!("cluster `{}` appears twice in {DEMAND_FILE}", cluster.name.value);
                    self.error(cluster.name.span, ErrorCode::E0420, message, "keep one `cluster` block per cluster");
                } else {
                    demand.clusters.insert(cluster.name.value.clone(), cluster);
                }
            }
        }
        demand
    }

    fn demand_cluster(&mut self, node: &KdlNode, start_weekday: u8) -> Option<ClusterDemand> {
        let name = self.single_string(node)?;
        let mut cluster = ClusterDemand { name, start_weekday, workloads: Vec::new(), queues: Vec::new(), startup: Vec::new(), spot: Spot::default(), shortages: Vec::new(), drifts: Vec::new() };
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            match child.name().value() {
                "workload" => cluster.workloads.extend(self.workload_demand(child)),
                "queue" => cluster.queues.extend(self.queue_demand(child)),
                "startup" => cluster.startup.extend(self.startup(child)),
                "spot" => cluster.spot = self.spot(child),
                "shortage" => cluster.shortages.extend(self.shortage(child)),
                "drift" => cluster.drifts.extend(self.drift(child)),
                _ => self.unknown_node(child, CLUSTER_NODES, "a demand `cluster` block"),
            }
        }
        Some(cluster)
    }

    /// `workload "name" { replicas { … } }` or `{ metric { … } }` (one or more `metric trigger="…"`).
    fn workload_demand(&mut self, node: &KdlNode) -> Option<WorkloadDemand> {
        let name = self.block_name(node)?;
        let mut replicas: Option<(Series, Span)> = None;
        let mut metrics = Vec::new();
        // A series written but refused has its own diagnostic: the workload is not also "without a series".
        let mut refused = false;
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            let span = self.span(child.name().span());
            match child.name().value() {
                "replicas" => {
                    if replicas.is_some() {
                        self.error(span, ErrorCode::E0426, "a second `replicas` series for one workload", "keep one `replicas { … }`");
                    } else if let Some(series) = self.series_node(child, &[]) {
                        replicas = Some((series, span));
                    } else {
                        refused = true;
                    }
                }
                "metric" => {
                    let trigger = prop(child, "trigger").and_then(|e| self.expect_string(e, "`trigger`"));
                    match self.series_node(child, &["trigger"]) {
                        Some(series) => metrics.push((MetricSeries { trigger, series }, span)),
                        None => refused = true,
                    }
                }
                _ => self.unknown_node(child, &["replicas", "metric"], "a demand `workload` block"),
            }
        }
        match (replicas, metrics.is_empty()) {
            (Some((_, span)), false) => {
                let message = format!("workload `{}` names both its replicas and its metric", name.value);
                let help = "keep `replicas { … }` (the replica count is known) or `metric { … }` (the autoscaler decides from the metric), not both";
                self.error(span, ErrorCode::E0426, message, help);
                None
            }
            (Some((series, _)), true) => Some(WorkloadDemand { name, drive: Drive::Replicas(series) }),
            (None, false) => Some(WorkloadDemand { name, drive: Drive::Metric(metrics.into_iter().map(|(m, _)| m).collect()) }),
            (None, true) if refused => None,
            (None, true) => {
                let help = "add replicas { daily trough=2 peak=8 from=\"09:00\" to=\"18:00\" } or metric { … }";
                self.error(self.span(node.name().span()), ErrorCode::E0107, format!("workload `{}` has no `replicas` or `metric` series", name.value), help);
                None
            }
        }
    }

    /// `queue "name" { arrivals per-hour=… { daily …; weekly … }; pods 2; gpus-per-pod 8; duration … }`.
    fn queue_demand(&mut self, node: &KdlNode) -> Option<QueueDemand> {
        let name = self.block_name(node)?;
        let mut queue = QueueDemand { name, per_hour: 0.0, rate_span: None, pattern: Series::constant(1.0), pods: None, gpus_per_pod: None, duration: JobDuration::Fixed(DEFAULT_JOB_SECONDS) };
        let mut arrivals = false;
        for child in node.children().map(|c| c.nodes()).unwrap_or_default() {
            match child.name().value() {
                "arrivals" => {
                    arrivals = true;
                    let entry = prop(child, "per-hour");
                    let rate = entry.and_then(|e| self.expect_number(e, "`per-hour`"));
                    // Without a rate the queue would silently get no Job at all (a rate ≤ 0 is E0106 already).
                    if entry.is_none() {
                        self.error(self.span(child.span()), ErrorCode::E0107, "`arrivals` needs `per-hour`", "write the mean number of Jobs per hour, e.g. `arrivals per-hour=0.5`");
                    }
                    queue.rate_span = rate.as_ref().map(|r| r.span);
                    queue.per_hour = rate.map_or(0.0, |r| r.value);
                    if child.children().is_some() {
                        if let Some(pattern) = self.series_node(child, &["per-hour"]) {
                            queue.pattern = pattern;
                        }
                    } else {
                        self.check_entries(child, &["per-hour"], 0);
                    }
                }
                "pods" => queue.pods = self.bounded_u32(child, "`pods`", 1..=10_000),
                "gpus-per-pod" => queue.gpus_per_pod = self.bounded_u32(child, "`gpus-per-pod`", 1..=64),
                "duration" => {
                    self.no_children(child);
                    if let Some(d) = self.job_duration(child) {
                        queue.duration = d;
                    }
                }
                _ => self.unknown_node(child, &["arrivals", "pods", "gpus-per-pod", "duration"], "a demand `queue` block"),
            }
        }
        if !arrivals {
            let help = "add arrivals per-hour=0.5 (Jobs per hour, on average)";
            self.error(self.span(node.name().span()), ErrorCode::E0107, format!("queue `{}` has no `arrivals`", queue.name.value), help);
            return None;
        }
        Some(queue)
    }

    /// `duration "2h"`, or `duration median="3h" p90="6h" min="30m" max="8h"` (log-normal, bounded).
    fn job_duration(&mut self, node: &KdlNode) -> Option<JobDuration> {
        self.check_entries(node, &["median", "p90", "min", "max"], 1);
        if let Some(fixed) = args(node).next() {
            let v = self.expect_string(fixed, "`duration`")?;
            return self.duration_value(&v).map(JobDuration::Fixed);
        }
        let read = |p: &mut Self, key: &str| prop(node, key).and_then(|e| p.expect_string(e, &format!("`{key}`"))).map(|v| (p.duration_value(&v), v.span));
        let (Some((median, _)), Some((p90, p90_span))) = (read(self, "median"), read(self, "p90")) else {
            let help = "write duration \"2h\" (fixed) or duration median=\"3h\" p90=\"6h\" (log-normal)";
            self.error(self.span(node.span()), ErrorCode::E0107, "`duration` needs a value, or `median` and `p90`", help);
            return None;
        };
        let (median, p90) = (median?, p90?);
        let min = read(self, "min").map(|(v, s)| (v.unwrap_or(0), s));
        let max = read(self, "max").map(|(v, s)| (v.unwrap_or(u64::MAX), s));
        if p90 < median {
            self.error(p90_span, ErrorCode::E0428, format!("p90 ({p90} s) is below the median ({median} s)"), "a 90th percentile is at least the median: raise p90 or lower median");
            return None;
        }
        if let (Some((lo, _)), Some((hi, hi_span))) = (min, max)
            && lo > hi
        {
            self.error(hi_span, ErrorCode::E0428, format!("max ({hi} s) is below min ({lo} s)"), "swap them, or raise max");
            return None;
        }
        Some(JobDuration::LogNormal { median: median.max(1), p90: p90.max(1), min: min.map_or(60, |m| m.0), max: max.map_or(7 * 86_400, |m| m.0) })
    }

    /// The name argument of a `workload`/`queue` block.
    fn block_name(&mut self, node: &KdlNode) -> Option<Spanned<String>> {
        self.check_entries(node, &[], 1);
        match args(node).next() {
            Some(e) => self.expect_string(e, &format!("`{}`'s name", node.name().value())),
            None => {
                let what = node.name().value();
                self.error(self.span(node.span()), ErrorCode::E0107, format!("`{what}` needs the name the profile gives it"), format!("write {what} \"name\" {{ … }}"));
                None
            }
        }
    }

    /// A duration string's seconds, or E0424 at it.
    pub(crate) fn duration_value(&mut self, v: &Spanned<String>) -> Option<u64> {
        match parse_duration(&v.value) {
            Some(s) => Some(s),
            None => {
                let help = "write a number with a unit, d h m or s, e.g. \"30d\", \"6h\", \"90s\", \"1h30m\"";
                self.error(v.span, ErrorCode::E0424, format!("`{}` is not a duration", crate::input::excerpt(&v.value)), help);
                None
            }
        }
    }

    /// A time in the horizon (`"day 3 14:00"`, `"14:00"`, `"2d6h"`), or E0424 at it.
    pub(crate) fn time_value(&mut self, v: &Spanned<String>) -> Option<u64> {
        match parse_time(&v.value) {
            Some(s) => Some(s),
            None => {
                let help = "write \"day N HH:MM\" (day 1 is the horizon's first day), \"HH:MM\" (on day 1), or an offset such as \"2d6h\"";
                self.error(v.span, ErrorCode::E0424, format!("`{}` is not a time", crate::input::excerpt(&v.value)), help);
                None
            }
        }
    }

    /// A rate string (`"5%/month"`) as a fraction per day, or E0425 at it.
    pub(crate) fn rate_value(&mut self, v: &Spanned<String>) -> Option<f64> {
        match parse_rate_per_day(&v.value) {
            Some(r) => Some(r),
            None => {
                let help = "write a percentage per day, week or month, e.g. \"5%/month\", \"1%/day\"";
                self.error(v.span, ErrorCode::E0425, format!("`{}` is not a rate", crate::input::excerpt(&v.value)), help);
                None
            }
        }
    }
}

mod cluster_nodes;

#[cfg(test)]
mod tests;
