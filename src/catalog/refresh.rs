//! `gpuplan catalog refresh`: fetch the live catalog of one or more regions and rewrite `catalogs/<region>.json`.
//!
//! Per region, five calls run concurrently (DescribeInstanceTypes, DescribeInstanceTypeOfferings by zone,
//! DescribeSpotPriceHistory, Pricing GetProducts for instance prices and for gp3 EBS prices), and regions run
//! concurrently with each other; the SDK edge is
//! [`crate::catalog::aws`]. The answers go through the same conversion as `catalog import`
//! ([`import::build_catalog`]), so both produce identical snapshots for identical inputs.
//!
//! All or nothing: catalogs are written only when every region was fetched, each one atomically (temp file in
//! the same directory, fsync, rename), so a failed or interrupted refresh leaves the previous snapshots
//! byte-identical. When only the Pricing API fails, the previous snapshot's on-demand prices are kept and
//! marked as such; without a previous snapshot that is an error. EBS prices failing keeps the previous snapshot's
//! (marked), else leaves the catalog without them (the cost bounds then use the table in `catalog::ebs`): a warning.
//!
//! This is the one place that reads a clock (for `fetched_at`); [`Clock::Fixed`] makes the output deterministic.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::catalog::aws::{self, Aws, AwsError, ClientSettings, Pricing};
pub use crate::catalog::aws::{RetrySettings, StaticCredentials};
use crate::catalog::changes::{format_usd, is_accelerated};
pub use crate::catalog::changes::{CatalogChanges, OfferingChange, PriceMove, catalog_changes};
use crate::catalog::ebs::{self, EbsPrices};
use crate::catalog::{Catalog, Source, SpotPrices};
use crate::catalog::import::{self, SOURCE_SPOT};
use crate::catalog::plausible::{self, Problem};

/// Prefix of the on-demand source description when prices were kept from the previous snapshot.
pub const KEPT_PREFIX: &str = "on-demand Linux USD/hour kept from previous snapshot";

/// Where `fetched_at` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// The wall clock.
    #[default]
    System,
    /// A fixed time (tests, reproducible snapshots).
    Fixed(SystemTime),
}

impl Clock {
    pub fn now(self) -> SystemTime {
        match self {
            Clock::System => SystemTime::now(),
            Clock::Fixed(time) => time,
        }
    }
}

/// What to refresh and how.
#[derive(Debug, Clone)]
pub struct RefreshOptions {
    /// Regions to refresh ("us-east-1"); duplicates are ignored.
    pub regions: Vec<String>,
    /// EC2 endpoint override (moto, LocalStack, a VPC endpoint); the AWS regional endpoint when `None`.
    pub endpoint_url: Option<String>,
    /// Pricing API endpoint override; the AWS Pricing API in us-east-1 when `None` (also when `endpoint_url` is
    /// set: an EC2 emulator usually has no Pricing API, and a failed Pricing call keeps the previous prices).
    pub pricing_endpoint_url: Option<String>,
    /// The catalog directory (`catalogs/`); created if missing.
    pub out_dir: PathBuf,
    /// Show a progress bar on stderr (only when stderr is a terminal).
    pub progress: bool,
    /// Explicit credentials instead of the standard chain (env, profile, SSO, IMDS).
    pub credentials: Option<StaticCredentials>,
    /// Retries (throttling, 5xx, connection errors) and timeouts.
    pub retry: RetrySettings,
    pub clock: Clock,
    /// Replace a snapshot even when the answer lost many types or whole accelerator families (see
    /// [`plausible::shrink_problems`]); an empty answer is refused anyway.
    pub accept_shrink: bool,
}

impl RefreshOptions {
    /// Defaults: the standard credential chain, AWS endpoints, 5 attempts, 30 s per attempt, 120 s per call.
    pub fn new(regions: Vec<String>, out_dir: impl Into<PathBuf>) -> RefreshOptions {
        RefreshOptions {
            regions,
            endpoint_url: None,
            pricing_endpoint_url: None,
            out_dir: out_dir.into(),
            progress: false,
            credentials: None,
            retry: RetrySettings::default(),
            clock: Clock::System,
            accept_shrink: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RefreshError {
    #[error("no region to refresh; pass --region (e.g. --region us-east-1)")]
    NoRegions,
    #[error("{region:?} is not an AWS region name (like us-east-1)")]
    InvalidRegion { region: String },
    #[error("cannot start the async runtime for the refresh: {0}")]
    Runtime(std::io::Error),
    #[error("cannot create the catalog directory {path}: {error}")]
    OutDir { path: PathBuf, error: std::io::Error },
    #[error("refresh of {region} failed, no catalog was changed: {error}")]
    Ec2 { region: String, error: Box<AwsError> },
    #[error(
        "refresh of {region} failed, no catalog was changed: the Pricing API failed ({}) and there is no previous \
         snapshot with on-demand prices at {} to keep. Is the Pricing API reachable? Pass --pricing-endpoint-url, \
         or seed {} once with `gpuplan catalog import`",
        error.summary(), path.display(), path.display()
    )]
    NoOnDemandPrices { region: String, path: PathBuf, error: Box<AwsError> },
    #[error("refresh of {region} failed, no catalog was changed: the refresh task stopped: {detail}")]
    Task { region: String, detail: String },
    #[error(
        "refresh of {region} refused, {} is unchanged: the EC2 answer does not look like the region:\n{}\n{}",
        path.display(),
        problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"),
        if problems.iter().all(Problem::acceptable) {
            "Check --endpoint-url and that the credentials can see the region; if the region really lost these types, \
             run the refresh again with --accept-shrink"
        } else {
            "Check --endpoint-url and that the credentials can see the region (--accept-shrink does not accept an empty answer)"
        }
    )]
    Implausible { region: String, path: PathBuf, problems: Vec<Problem> },
    #[error("cannot write {}: {error}; the previous catalog is unchanged", path.display())]
    Write { path: PathBuf, error: std::io::Error },
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
    Several(Vec<RefreshError>),
}

/// What a refresh did.
#[derive(Debug, Clone, Serialize)]
pub struct RefreshReport {
    /// One entry per region, in the order asked.
    pub regions: Vec<RegionReport>,
    /// Things the user should know (kept prices, estimated spot prices, unreadable previous snapshots).
    pub warnings: Vec<String>,
    /// Wall time of the whole refresh.
    pub elapsed: Duration,
}

#[derive(Debug, Clone, Serialize)]
pub struct RegionReport {
    pub region: String,
    pub path: PathBuf,
    /// False when the new snapshot is byte-identical to the previous one (the file is left alone).
    pub written: bool,
    pub instance_types: usize,
    pub zones: usize,
    pub on_demand_prices: usize,
    /// Observed (not estimated) spot prices, one per (type, zone).
    pub spot_prices: usize,
    /// True when the Pricing API failed and the previous snapshot's on-demand prices were kept.
    pub on_demand_kept: bool,
    /// What changed since the previous snapshot; `None` when there was none (a new region).
    pub changes: Option<CatalogChanges>,
    /// Wall time of each API call of the region.
    pub timings: Vec<CallTiming>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CallTiming {
    pub call: String,
    pub elapsed: Duration,
}

/// Fetches the catalogs of `opts.regions` and writes `<out_dir>/<region>.json` for each, all or nothing.
///
/// Synchronous: it builds its own tokio runtime, so call it from plain (non-async) code, not from inside a
/// tokio runtime.
pub fn refresh(opts: &RefreshOptions) -> Result<RefreshReport, RefreshError> {
    let started = Instant::now();
    let regions = checked_regions(&opts.regions)?;
    crate::confine::check_write(&opts.out_dir)
        .and_then(|()| std::fs::create_dir_all(&opts.out_dir))
        .map_err(|error| RefreshError::OutDir { path: opts.out_dir.clone(), error })?;
    let now = opts.clock.now();
    let fetched_at = aws::rfc3339(now);

    let progress = progress_bar(opts.progress, regions.len());
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(RefreshError::Runtime)?;
    let settings = ClientSettings {
        endpoint_url: opts.endpoint_url.clone(),
        pricing_endpoint_url: opts.pricing_endpoint_url.clone(),
        credentials: opts.credentials.clone(),
        retry: opts.retry.clone(),
    };
    let fetched = runtime.block_on(fetch_all(settings, &regions, now, progress.clone()));
    drop(runtime);
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }

    let mut warnings = Vec::new();
    let built = build_all(opts, &regions, fetched, &fetched_at, &mut warnings)?;
    let mut reports = Vec::new();
    for (region, path, previous, new) in built {
        reports.push(write_region(region, path, previous, new)?);
    }
    Ok(RefreshReport { regions: reports, warnings, elapsed: started.elapsed() })
}

/// The progress bar on stderr, when asked for and stderr is a terminal: one step per API call of every region.
fn progress_bar(wanted: bool, regions: usize) -> Option<ProgressBar> {
    (wanted && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new((regions * CALLS.len()) as u64);
        bar.set_style(
            ProgressStyle::with_template("{spinner} catalog refresh [{elapsed}] {bar:30} {pos}/{len} {msg}")
                .expect("the template is valid"),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    })
}

/// One region's new catalog, ready to write: the region, its snapshot path, the snapshot it replaces.
type BuiltRegion<'a> = (&'a String, PathBuf, Option<Previous>, Built);

/// Builds every catalog before writing any: all of them, or the errors of every region that failed.
fn build_all<'a>(
    opts: &RefreshOptions,
    regions: &'a [String],
    fetched: Vec<Result<RegionData, RefreshError>>,
    fetched_at: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<BuiltRegion<'a>>, RefreshError> {
    let mut errors = Vec::new();
    let mut built = Vec::new();
    for (region, result) in regions.iter().zip(fetched) {
        let path = opts.out_dir.join(format!("{region}.json"));
        let previous = read_previous(&path, warnings);
        let built_region = result
            .and_then(|data| build_region(region, data, previous.as_ref(), &path, fetched_at, warnings))
            .and_then(|new| accept(region, &path, previous.as_ref(), new, opts.accept_shrink, warnings));
        match built_region {
            Ok(new) => built.push((region, path, previous, new)),
            Err(err) => errors.push(err),
        }
    }
    match errors.len() {
        0 => Ok(built),
        1 => Err(errors.pop().expect("one error")),
        _ => Err(RefreshError::Several(errors)),
    }
}

/// Writes one region's snapshot, unless it is byte-identical to the previous one, and reports it.
fn write_region(region: &str, path: PathBuf, previous: Option<Previous>, new: Built) -> Result<RegionReport, RefreshError> {
    let text = new.catalog.to_json();
    let written = previous.as_ref().is_none_or(|p| p.text != text);
    if written {
        crate::catalog::write_atomically(&path, &text)
            .map_err(|error| RefreshError::Write { path: path.clone(), error })?;
    }
    Ok(RegionReport {
        region: region.to_string(),
        path,
        written,
        instance_types: new.catalog.instance_types.len(),
        zones: new.catalog.zones.len(),
        on_demand_prices: new.catalog.instance_types.iter().filter(|t| t.on_demand.is_some()).count(),
        spot_prices: new
            .catalog
            .instance_types
            .iter()
            .flat_map(|t| t.spot.values())
            .filter(|p| p.source == SOURCE_SPOT)
            .count(),
        on_demand_kept: new.on_demand_kept,
        changes: previous.as_ref().map(|p| catalog_changes(&p.catalog, &new.catalog)),
        timings: new.timings,
    })
}

const CALLS: [&str; 5] = [
    "DescribeInstanceTypes",
    "DescribeInstanceTypeOfferings",
    "DescribeSpotPriceHistory",
    "Pricing GetProducts",
    "Pricing GetProducts (EBS gp3)",
];

fn checked_regions(regions: &[String]) -> Result<Vec<String>, RefreshError> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for region in regions {
        let valid = !region.is_empty()
            && region.contains('-')
            && region.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !valid {
            return Err(RefreshError::InvalidRegion { region: region.clone() });
        }
        if seen.insert(region.clone()) {
            out.push(region.clone());
        }
    }
    if out.is_empty() {
        return Err(RefreshError::NoRegions);
    }
    Ok(out)
}

/// The raw answers for one region.
struct RegionData {
    infos: Vec<serde_json::Value>,
    offerings: BTreeMap<String, BTreeSet<String>>,
    spot: SpotPrices,
    on_demand: Result<BTreeMap<String, f64>, AwsError>,
    ebs: Result<EbsPrices, AwsError>,
    timings: Vec<CallTiming>,
}

async fn fetch_all(
    settings: ClientSettings,
    regions: &[String],
    now: SystemTime,
    progress: Option<ProgressBar>,
) -> Vec<Result<RegionData, RefreshError>> {
    let aws = Aws::load(settings).await;
    let pricing = aws.pricing();
    let mut tasks = tokio::task::JoinSet::new();
    for (index, region) in regions.iter().enumerate() {
        let (aws, pricing, region, progress) = (aws.clone(), pricing.clone(), region.clone(), progress.clone());
        tasks.spawn(async move {
            let result = fetch_region(&aws, &pricing, &region, now, progress.as_ref()).await;
            (index, result.map_err(|error| RefreshError::Ec2 { region, error: Box::new(error) }))
        });
    }
    let mut results: Vec<Option<Result<RegionData, RefreshError>>> = regions.iter().map(|_| None).collect();
    while let Some(joined) = tasks.join_next().await {
        if let Ok((index, result)) = joined {
            results[index] = Some(result);
        }
    }
    results
        .into_iter()
        .zip(regions)
        .map(|(result, region)| {
            result.unwrap_or_else(|| {
                Err(RefreshError::Task { region: region.clone(), detail: "the task panicked or was cancelled".into() })
            })
        })
        .collect()
}

async fn fetch_region(
    aws: &Aws,
    pricing: &Pricing,
    region: &str,
    now: SystemTime,
    progress: Option<&ProgressBar>,
) -> Result<RegionData, AwsError> {
    let ec2 = aws.ec2(region);
    let (types, offerings, spot, on_demand, ebs) = tokio::join!(
        timed(region, CALLS[0], progress, ec2.instance_types()),
        timed(region, CALLS[1], progress, ec2.zone_offerings()),
        timed(region, CALLS[2], progress, ec2.spot_prices(now)),
        timed(region, CALLS[3], progress, pricing.on_demand_prices(region)),
        timed(region, CALLS[4], progress, pricing.ebs_prices(region)),
    );
    let timings = [types.1, offerings.1, spot.1, on_demand.1, ebs.1]
        .into_iter()
        .zip(CALLS)
        .map(|(elapsed, call)| CallTiming { call: call.into(), elapsed })
        .collect();
    Ok(RegionData { infos: types.0?, offerings: offerings.0?, spot: spot.0?, on_demand: on_demand.0, ebs: ebs.0, timings })
}

async fn timed<T>(
    region: &str,
    call: &'static str,
    progress: Option<&ProgressBar>,
    fut: impl std::future::Future<Output = T>,
) -> (T, Duration) {
    let started = Instant::now();
    let out = fut.await;
    let elapsed = started.elapsed();
    if let Some(bar) = progress {
        bar.inc(1);
        bar.set_message(format!("{region}: {call} ({:.1}s)", elapsed.as_secs_f64()));
    }
    (out, elapsed)
}

/// A snapshot on disk before the refresh: its exact text (to skip identical rewrites) and its parse.
struct Previous {
    text: String,
    catalog: Catalog,
}

fn read_previous(path: &Path, warnings: &mut Vec<String>) -> Option<Previous> {
    // Through the input reader: the snapshot is the pull request's file (a link to /proc/self/environ, where refresh
    // keeps its AWS credentials, is refused), bounded.
    let text = match crate::input::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return None,
        Err(err) => {
            warnings.push(format!("cannot read the previous catalog {}: {err}; it will be replaced", path.display()));
            return None;
        }
    };
    match Catalog::from_json(&text, path) {
        Ok(catalog) => Some(Previous { text, catalog }),
        Err(err) => {
            warnings.push(format!("{err}; it will be replaced"));
            None
        }
    }
}

struct Built {
    catalog: Catalog,
    on_demand_kept: bool,
    timings: Vec<CallTiming>,
}

fn build_region(
    region: &str,
    data: RegionData,
    previous: Option<&Previous>,
    path: &Path,
    fetched_at: &str,
    warnings: &mut Vec<String>,
) -> Result<Built, RefreshError> {
    let source =
        |description: String| Source { description, fetched_at: Some(fetched_at.to_string()), estimate: false };
    let mut sources = BTreeMap::new();
    sources
        .insert(import::SOURCE_TYPES.to_string(), source(format!("EC2 DescribeInstanceTypes, {region}, live refresh")));
    sources.insert(
        import::SOURCE_OFFERINGS.to_string(),
        source(format!("EC2 DescribeInstanceTypeOfferings by availability zone, {region}, live refresh")),
    );

    let (on_demand, on_demand_source, on_demand_kept) =
        on_demand_prices(region, data.on_demand, previous, path, fetched_at, warnings)?;

    let spot_source = source(format!(
        "EC2 DescribeSpotPriceHistory, {region}, Linux/UNIX, newest and highest price per type and zone over the last {} days, live refresh",
        crate::catalog::SPOT_HISTORY_DAYS
    ));
    let answered_spot = !data.spot.newest.is_empty();
    let mut observed = data.spot;
    // Judged against the new on-demand price, else the previous snapshot's (the Price List may lack a type).
    let mut judge = previous.map(|p| on_demand_of(&p.catalog)).unwrap_or_default();
    judge.extend(on_demand.iter().map(|(name, usd)| (name.clone(), *usd)));
    plausible_spot(region, &mut observed, &judge, warnings);
    let spot = if !answered_spot {
        warnings.push(format!(
            "{region}: the spot price history was empty; spot prices are estimates (on-demand × {:.2})",
            import::SPOT_ESTIMATE_FACTOR
        ));
        None
    } else {
        // Even when every observed price was dropped: the estimates then say the history had no plausible entry.
        Some((&observed, spot_source))
    };

    let mut catalog =
        import::build_catalog(region, &data.infos, &data.offerings, &on_demand, on_demand_source, spot, sources);
    let ebs_source = source(format!(
        "AWS Price List GetProducts (AmazonEC2, {region}, volumeApiName gp3): Storage $/GB-month, System Operation \
         EBS IOPS $/IOPS-month, Provisioned Throughput $/GiBps-month ÷ 1024 = $/MiBps-month"
    ));
    ebs_prices(region, data.ebs, ebs_source, previous, path, &mut catalog, warnings);
    let missing_spot = catalog
        .instance_types
        .iter()
        .filter(|t| is_accelerated(t) && t.spot.values().any(|p| p.source == import::SOURCE_SPOT_ESTIMATE))
        .count();
    if missing_spot > 0 && !observed.newest.is_empty() {
        warnings.push(format!(
            "{region}: {missing_spot} accelerated types have no plausible spot price (history) in some zones; those prices are estimates"
        ));
    }
    Ok(Built { catalog, on_demand_kept, timings: data.timings })
}

/// The region's on-demand prices, their source, and whether they are the previous snapshot's (kept because the
/// Pricing API failed; without a previous snapshot to keep them from, the refresh fails).
fn on_demand_prices(
    region: &str,
    answer: Result<BTreeMap<String, f64>, AwsError>,
    previous: Option<&Previous>,
    path: &Path,
    fetched_at: &str,
    warnings: &mut Vec<String>,
) -> Result<(BTreeMap<String, f64>, Source, bool), RefreshError> {
    let source =
        |description: String| Source { description, fetched_at: Some(fetched_at.to_string()), estimate: false };
    Ok(match answer {
        Ok(prices) => (
            prices,
            source(format!(
                "AWS Price List GetProducts (AmazonEC2, {region}, Linux, shared tenancy, no pre-installed software, \
                 capacity status Used): on-demand USD/hour"
            )),
            false,
        ),
        Err(error) => {
            let kept = previous.and_then(|p| kept_on_demand(&p.catalog, &error));
            let Some((prices, kept_source)) = kept else {
                return Err(RefreshError::NoOnDemandPrices {
                    region: region.to_string(),
                    path: path.to_path_buf(),
                    error: Box::new(error),
                });
            };
            warnings.push(format!(
                "{region}: the Pricing API failed, kept the {} on-demand prices of the previous snapshot {}: {error}",
                prices.len(),
                path.display()
            ));
            (prices, kept_source, true)
        }
    })
}

/// The catalog's gp3 EBS prices: the Price List's answer, else the previous snapshot's (marked kept), else none
/// (the cost bounds then use the cited table in [`crate::catalog::ebs`]); a failed call is a warning, never an
/// error, as EBS prices only refine the bounds.
fn ebs_prices(
    region: &str,
    answer: Result<EbsPrices, AwsError>,
    fetched: Source,
    previous: Option<&Previous>,
    path: &Path,
    catalog: &mut Catalog,
    warnings: &mut Vec<String>,
) {
    let (prices, source) = match answer {
        Ok(prices) => (prices, fetched),
        Err(error) => {
            let kept = previous.and_then(|p| Some((p.catalog.ebs?, p.catalog.sources.get(ebs::SOURCE).cloned())));
            let Some((prices, old)) = kept else {
                warnings.push(format!(
                    "{region}: the Pricing API gave no gp3 EBS prices, the cost bounds use gpuplan's cited table: {error}"
                ));
                return;
            };
            warnings.push(format!(
                "{region}: the Pricing API gave no gp3 EBS prices, kept those of the previous snapshot {}: {error}",
                path.display()
            ));
            let original = old.as_ref().map_or("unknown source", |s| {
                s.description.split_once("; originally: ").map_or(s.description.as_str(), |(_, orig)| orig)
            });
            let source = Source {
                description: format!("{} (Pricing API: {}); originally: {original}", ebs::KEPT_PREFIX, error.summary()),
                fetched_at: old.as_ref().and_then(|s| s.fetched_at.clone()),
                estimate: old.as_ref().is_some_and(|s| s.estimate),
            };
            (prices, source)
        }
    };
    catalog.ebs = Some(prices);
    catalog.sources.insert(ebs::SOURCE.to_string(), source);
}

/// The new catalog, unless it lost what [`plausible::shrink_problems`] looks for (and `accept_shrink` does not
/// accept it): checked before anything is written, so a refused refresh leaves every snapshot byte-identical.
fn accept(
    region: &str,
    path: &Path,
    previous: Option<&Previous>,
    new: Built,
    accept_shrink: bool,
    warnings: &mut Vec<String>,
) -> Result<Built, RefreshError> {
    let problems = plausible::shrink_problems(previous.map(|p| &p.catalog), &new.catalog);
    if problems.is_empty() {
        return Ok(new);
    }
    if !accept_shrink || !problems.iter().all(Problem::acceptable) {
        return Err(RefreshError::Implausible { region: region.to_string(), path: path.to_path_buf(), problems });
    }
    for problem in problems {
        warnings.push(format!("{region}: accepted with --accept-shrink: {problem}"));
    }
    Ok(new)
}

/// Drops observed spot prices that cannot be right ([`plausible::drop_implausible_spot`]) and says so.
fn plausible_spot(region: &str, spot: &mut SpotPrices, on_demand: &BTreeMap<String, f64>, warnings: &mut Vec<String>) {
    let dropped = plausible::drop_implausible_spot(spot, on_demand);
    let Some(example) = dropped.first() else { return };
    warnings.push(format!(
        "{region}: dropped {} observed spot price(s) outside {:.0}–{:.0}% of on-demand, e.g. {} in {}: {}/h against {}/h \
         on-demand; those zones carry estimates (on-demand × {:.2}) instead",
        dropped.len(),
        plausible::SPOT_SHARE.start() * 100.0,
        plausible::SPOT_SHARE.end() * 100.0,
        example.instance_type,
        example.zone,
        exact_usd(example.spot),
        format_usd(example.on_demand),
        import::SPOT_ESTIMATE_FACTOR
    ));
}

/// Type → on-demand USD/hour of a catalog.
fn on_demand_of(catalog: &Catalog) -> BTreeMap<String, f64> {
    catalog.instance_types.iter().filter_map(|t| Some((t.name.clone(), t.on_demand.as_ref()?.usd_per_hour))).collect()
}

/// As [`format_usd`], but a price below a tenth of a cent shows its digits ("$0.00001", not "$0.000").
fn exact_usd(usd: f64) -> String {
    if usd != 0.0 && usd.abs() < 0.001 { format!("${usd}") } else { format_usd(usd) }
}

/// The previous snapshot's on-demand prices and a source that says they were kept and why.
fn kept_on_demand(previous: &Catalog, error: &AwsError) -> Option<(BTreeMap<String, f64>, Source)> {
    let prices: BTreeMap<String, f64> = previous
        .instance_types
        .iter()
        .filter_map(|t| Some((t.name.clone(), t.on_demand.as_ref()?.usd_per_hour)))
        .collect();
    if prices.is_empty() {
        return None;
    }
    let old = previous.sources.get(import::SOURCE_ON_DEMAND);
    let original = old.map_or("unknown source", |s| {
        s.description.split_once("; originally: ").map_or(s.description.as_str(), |(_, orig)| orig)
    });
    Some((
        prices,
        Source {
            description: format!(
                "{KEPT_PREFIX} (Pricing API unreachable: {}); originally: {original}",
                error.summary()
            ),
            fetched_at: old.and_then(|s| s.fetched_at.clone()),
            estimate: old.is_some_and(|s| s.estimate),
        },
    ))
}

impl fmt::Display for RefreshReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for region in &self.regions {
            writeln!(
                f,
                "{} {}: {} types, {} zones, {} on-demand prices{}, {} observed spot prices",
                if region.written { "wrote" } else { "unchanged" },
                region.path.display(),
                region.instance_types,
                region.zones,
                region.on_demand_prices,
                if region.on_demand_kept { " (kept from previous snapshot)" } else { "" },
                region.spot_prices,
            )?;
            match &region.changes {
                Some(changes) => write!(f, "{changes}")?,
                None => writeln!(f, "{}: new snapshot (no previous one to compare with)", region.region)?,
            }
        }
        for warning in &self.warnings {
            writeln!(f, "warning: {warning}")?;
        }
        writeln!(f, "refreshed {} region(s) in {:.1}s", self.regions.len(), self.elapsed.as_secs_f64())
    }
}
