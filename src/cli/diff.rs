//! `gpuplan diff`: what compile would change in out/, optionally with the pods whose placement changes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gpuplan::emit::diff::policy::{Level, Policy, Rule};
use gpuplan::emit::diff::pools::figures;
use gpuplan::compile::{Compilation, CompileOptions};
use gpuplan::emit::diff::{ReviewContext, WorkloadAt, WorkloadRow};
use gpuplan::emit::{self, diff::DiffFormat, gitops};
use gpuplan::layout::OutputTree;
use gpuplan::simulate::placement_diff::placement_changes;

use super::inputs::Inputs;
use super::CliError;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// The out/ to compare with (the committed one at --base).
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Compare with out/ as this git revision holds it (a pull request's base: a sha, `origin/main`), read from git
    /// objects, instead of the work tree's out/. Whether the work tree's out/ is current is said apart.
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// unified (a patch), markdown (the pull-request comment) or json.
    #[arg(long, value_enum, default_value_t = Format::Unified)]
    format: Format,
    /// Exit 1 when there are differences.
    #[arg(long)]
    exit_code: bool,
    /// Deny the change (exit 3) when RULE holds in any cluster or profile: over-budget, estimated-prices,
    /// nodepool-removed, drift (any running node replaced), stuck-drift (a drift that cannot finish), drift.nodes > N, drift.share > P%, or <worst-case|drain-peak|at-limit|expected>.increase > <N%|$N/h|$N/month> (expected: the
    /// forecast, with a demand file). Repeatable.
    /// `nodepool-removed` and `stuck-drift` are always deny rules (see --allow-removal, --allow-stuck-drift).
    #[arg(long, value_name = "RULE")]
    fail_on: Vec<Rule>,
    /// Warn (in the comment and on stderr) when RULE holds; same rules as --fail-on. Repeatable.
    #[arg(long, value_name = "RULE")]
    warn_on: Vec<Rule>,
    /// Allow the removal of this NodePool (NAME or CLUSTER/NAME): removing one deletes all its nodes at once.
    #[arg(long, value_name = "NODEPOOL")]
    allow_removal: Vec<String>,
    /// Allow a drift of this NodePool (NAME or CLUSTER/NAME) that cannot finish: its pods fit no NodePool after the
    /// change, or a static NodePool's node limit leaves no room (`stuck-drift`, always a deny rule otherwise).
    #[arg(long, value_name = "NODEPOOL")]
    allow_stuck_drift: Vec<String>,
    /// What runs now, for the drift roll's node count: the JSON of `kubectl get nodeclaims -o json` (`kubectl
    /// --context CTX get nodeclaims -o json > nodeclaims.json`), as CLUSTER=FILE, or FILE when out/ holds one
    /// cluster. Without it the roll counts the most nodes the limits allow. Repeatable, one per cluster.
    #[arg(long, value_name = "[CLUSTER=]FILE")]
    cluster_state: Vec<String>,
    /// Also simulate these pods (Pod/Deployment/StatefulSet/ReplicaSet/Job YAML) on out/ and on the new output,
    /// and list every pod whose placement changes, with the $/h change (see `gpuplan simulate`).
    #[arg(long, num_args = 1..)]
    pods: Vec<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Unified,
    Markdown,
    Json,
}

impl From<Format> for DiffFormat {
    fn from(format: Format) -> Self {
        match format {
            Format::Unified => DiffFormat::Unified,
            Format::Markdown => DiffFormat::Markdown,
            Format::Json => DiffFormat::Json,
        }
    }
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let Args { inputs, out, base, format, exit_code, fail_on, warn_on, allow_removal, allow_stuck_drift, cluster_state, pods } = args;
    let mut compiled = inputs.compile()?;
    let needs_forecast = fail_on.iter().chain(&warn_on).any(Rule::needs_forecast);
    let demand = super::forecast::repository_demand()?;
    refuse_expected_without_forecast(needs_forecast, demand.is_some(), base.is_some())?;
    // The base's profiles compiled, for the comment's workloads and the forecast; a base that cannot be compiled
    // gives neither, rather than every workload shown as new.
    let base_compiled = match &base {
        Some(rev) if matches!(format, Format::Markdown) || needs_forecast => compile_at(&inputs, rev)?,
        _ => None,
    };
    // Before the output tree is taken: the workloads are simulated on the compiled objects.
    let workloads = match (&base_compiled, format) {
        (Some(before), Format::Markdown) => workload_rows(Some(before), &compiled),
        _ => Vec::new(),
    };
    let forecast = match (&base_compiled, &demand) {
        (Some(before), Some((shown, demand))) => Some(forecast_review(before, &compiled, shown, demand)?),
        _ => None,
    };
    // A policy on `expected` with no forecast to judge (the base does not compile) would pass silently.
    if needs_forecast && forecast.is_none() {
        let rev = base.as_deref().unwrap_or_default();
        return Err(CliError::msg(format!("a policy on `expected` needs the base's forecast, but the base ({rev}) does not compile: fix the base or drop the rule")));
    }
    let tree = compiled.take_output_tree();
    let current = match &base {
        Some(rev) => gitops::out_at_revision(Path::new("."), &out, rev).map_err(CliError::msg)?,
        None => emit::read_tree(&out).map_err(CliError::io("read", &out))?,
    };
    let stale = base.is_some() && !emit::is_current(&out, &tree).map_err(CliError::io("read", &out))?;
    if stale {
        super::inform(format!("warning: {}", stale_message(&out)));
    }
    emit::transition::refuse(&out, &current, &tree, &compiled.profiles, &compiled.sources)?;
    let placement = if pods.is_empty() { None } else { Some(placement_changes(&current, &tree, &pods, &inputs.data.catalogs).map_err(CliError::msg)?) };
    // Said on stderr whatever the format: a reviewer reading the patch or the JSON still sees it.
    for removed in emit::diff::removed_node_pools(&current, &tree) {
        super::inform(format!("warning: removes {removed}: {}", emit::diff::REMOVAL_WARNING));
    }
    let placement = placement.as_deref().map(|changes| (changes, pods.as_slice()));
    let (mut figures_before, mut figures_after) = (figures(&current), figures(&tree));
    if let Some(review) = &forecast {
        gpuplan::emit::diff::forecast::with_expected(&mut figures_before, &review.before);
        gpuplan::emit::diff::forecast::with_expected(&mut figures_after, &review.after);
    }
    // What merging does to the running nodes, judged on the head's catalogs (Karpenter's drift rules).
    let running = running(&cluster_state, &tree)?;
    let drift = gpuplan::emit::diff::drift_review::pool_drifts(&current, &tree, &|region: &str| compiled.simulation_catalog(region), &running);
    if matches!(format, Format::Unified) {
        // A patch has no place for it: said on stderr, as a removal is.
        for d in drift.iter().filter(|d| d.drifts()) {
            super::inform(format!("note: NodePool {}/{}: {}", d.cluster, d.nodepool, d.sentence()));
        }
    }
    let verdict = Policy { fail_on, warn_on, allow_removal, allow_stuck_drift }.evaluate(&current, &tree, &figures_before, &figures_after, &drift);
    for f in &verdict.findings {
        let line = format!("policy `{}`, {}: {}", f.rule, f.scope, f.why);
        if f.level == Level::Deny { eprintln!("error: {line}") } else { super::inform(format!("warning: {line}")) }
    }
    let review = ReviewContext { verdict: Some(&verdict), footer: Some(footer(&compiled, &tree, comment_clock()?)), workloads, forecast, drift: Some(drift) };
    let rendered = emit::placement::render_with_placement(&current, &tree, format.into(), placement, &review).map_err(CliError::msg)?;
    match format {
        Format::Markdown if stale => print!("> [!CAUTION]\n> {}\n\n{rendered}", stale_message(&out)),
        _ => print!("{rendered}"),
    }
    Ok(if verdict.denied() {
        ExitCode::from(DENIED)
    } else if exit_code && current != tree {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The NodeClaims of `--cluster-state` by cluster, and the merge's time (the comment's clock).
fn running(states: &[String], tree: &OutputTree) -> Result<gpuplan::emit::diff::drift_review::Running, CliError> {
    let clusters: std::collections::BTreeSet<String> = tree.files.keys().filter_map(|p| p.components().next()).map(|c| c.as_os_str().to_string_lossy().into_owned()).filter(|c| !c.contains('.')).collect();
    let mut running = gpuplan::emit::diff::drift_review::Running { merge_unix: comment_clock()?.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64), ..Default::default() };
    for state in states {
        let (cluster, file) = match state.split_once('=') {
            Some((c, f)) => (c.to_owned(), f),
            None if clusters.len() == 1 => (clusters.iter().next().cloned().unwrap_or_default(), state.as_str()),
            None => return Err(CliError::msg(format!("--cluster-state {state}: out/ holds {} clusters ({}); name the one it is: --cluster-state CLUSTER={state}", clusters.len(), clusters.iter().cloned().collect::<Vec<_>>().join(", ")))),
        };
        if !clusters.contains(&cluster) {
            return Err(CliError::msg(format!("--cluster-state {state}: out/ has no cluster `{cluster}` (it has {})", clusters.iter().cloned().collect::<Vec<_>>().join(", "))));
        }
        let text = gpuplan::input::read_to_string(Path::new(file)).map_err(|e| CliError::msg(format!("--cluster-state {file}: {e}")))?;
        let claims = gpuplan::emit::diff::drift_review::nodeclaims(&text).map_err(|e| CliError::msg(format!("--cluster-state {file}: {e}")))?;
        running.nodeclaims.insert(cluster, claims);
    }
    Ok(running)
}

/// `expected.increase` is on the forecast, which needs the demand file and a base to compile: without them the rule
/// would judge a figure nobody has, so it is refused (exit 2) rather than passed.
fn refuse_expected_without_forecast(needs_forecast: bool, demand: bool, base: bool) -> Result<(), CliError> {
    match (needs_forecast, demand, base) {
        (true, false, _) => Err(CliError::msg(format!(
            "a policy on `expected` needs the forecast, and there is no demand file ({}): nothing is expected without one; write it (see the book's forecast page, docs/src/forecast.md), or use `at-limit.increase` (every pool at its limit on its cheapest type)",
            gpuplan::forecast::demand::DEMAND_FILE
        ))),
        (true, true, false) => Err(CliError::msg("a policy on `expected` compares the forecasts of the base and this change: pass --base REV")),
        _ => Ok(()),
    }
}

/// The base and the head forecast on the same seeds (the demand file's), under the head's demand file: the
/// difference is the change's, not the demand's. The base's demand check is not run: a name the base does not
/// have yet is skipped by the draw.
fn forecast_review(before: &Compilation, after: &Compilation, shown: &str, demand: &gpuplan::forecast::demand::Demand) -> Result<gpuplan::emit::diff::forecast::ForecastReview, CliError> {
    use gpuplan::forecast::run::{forecast, Options};
    let opts = Options::default();
    // The names, then the work the replays ask for against the limits (before either is drawn).
    let problems = gpuplan::forecast::run::check_demand(after, demand, &opts);
    if problems.iter().any(|d| d.is_error()) {
        return Err(CliError::Demand(problems));
    }
    let (b, a) = rayon::join(|| forecast(before, demand, shown, &opts), || forecast(after, demand, shown, &opts));
    let after = a.map_err(CliError::msg)?;
    // A base that compiles none of the demand's clusters (the change adds them) is compared with nothing: its
    // forecast has no cluster, as a cluster the base lacks is shown new.
    let before = match b {
        Err(gpuplan::forecast::run::ForecastError::NoCluster) => gpuplan::forecast::report::Forecast { clusters: Vec::new(), ..after.clone() },
        other => other.map_err(CliError::msg)?,
    };
    Ok(gpuplan::emit::diff::forecast::ForecastReview { before, after })
}

/// The head's committed out/ is not what its profiles compile to: the diff (from the base) is still right, but the
/// commit is not what Argo CD or Flux would apply.
fn stale_message(out: &Path) -> String {
    format!(
        "{}/ in this checkout is not what its profiles compile to (a stale pull request); the changes shown are from the base's {0}/ to what the profiles compile to: run `gpuplan compile` and commit {0}/",
        out.display()
    )
}

/// The comment's clock: `SOURCE_DATE_EPOCH` when set (the reproducible-builds convention, so a snapshot does not
/// depend on the day), else the command line's clock (`GPUPLAN_NOW` or the wall clock).
fn comment_clock() -> Result<std::time::SystemTime, CliError> {
    match std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|s| s.parse::<u64>().ok()) {
        Some(s) => Ok(std::time::UNIX_EPOCH + std::time::Duration::from_secs(s)),
        None => super::inputs::now(),
    }
}

/// The exit code of a change a `--fail-on` rule denies (1 stays "differences found", 2 an error).
pub const DENIED: u8 = 3;

/// The comment's footer: how many of the instance types the NodePools admit are priced from observed prices and
/// how many from estimates, which NodePools' at-limit costs use estimated spot prices, and each catalog's data date
/// and age at `now`.
fn footer(compiled: &Compilation, tree: &OutputTree, now: std::time::SystemTime) -> String {
    let types = priced_types(compiled);
    let count = |f: fn(&(bool, Option<bool>)) -> bool| types.values().filter(|e| f(e)).count();
    let mut s = format!(
        "Prices of the {} instance types the NodePools admit: on-demand (the worst case's) observed for {}, estimated for {}; spot observed for {}, estimated for {}, none for {}.",
        types.len(),
        count(|e| !e.0),
        count(|e| e.0),
        count(|e| e.1 == Some(false)),
        count(|e| e.1 == Some(true)),
        count(|e| e.1.is_none())
    );
    let pools: Vec<(String, bool)> = figures(tree).values().flat_map(|p| p.values()).flat_map(|p| p.pools.iter()).map(|(n, p)| (n.clone(), p.estimated_prices)).collect();
    let estimated: Vec<&str> = pools.iter().filter(|(_, e)| *e).map(|(n, _)| n.as_str()).collect();
    if !estimated.is_empty() {
        s.push_str(&format!(" At-limit costs from estimated spot prices: {}.", estimated.join(", ")));
    }
    for c in compiled.catalogs.values() {
        match (c.newest_fetch(), c.age_days(now)) {
            (Some(date), Some(days)) => s.push_str(&format!(" Catalog {}: data of {}, {days} days old.", c.region, date.get(..10).unwrap_or(date))),
            _ => s.push_str(&format!(" Catalog {}: no fetch date.", c.region)),
        }
    }
    s
}

/// Every (region, type) a NodePool admits, and whether its on-demand price, and any of its spot prices (None: it has
/// none), is an estimate rather than an observed price.
fn priced_types(compiled: &Compilation) -> BTreeMap<(String, String), (bool, Option<bool>)> {
    let mut out = BTreeMap::new();
    for cluster in &compiled.plan.clusters {
        let Some(catalog) = compiled.catalogs.get(&cluster.region) else { continue };
        for candidate in cluster.pools.iter().flat_map(|p| p.candidates.iter()) {
            let Some(it) = catalog.get(&candidate.name) else { continue };
            let on_demand = it.on_demand.as_ref().is_none_or(|p| catalog.is_estimate(p));
            let spot = (!it.spot.is_empty()).then(|| it.spot.values().any(|p| catalog.is_estimate(p)));
            out.insert((cluster.region.clone(), candidate.name.clone()), (on_demand, spot));
        }
    }
    out
}


/// The profiles, catalogs, templates and gpuplan.kdl as revision `rev` holds them, compiled by this binary in a
/// temporary directory: the "before" of the workloads' costs, which out/ cannot give. None when they do not compile
/// there (or a path has no place in the repository); an error when git cannot give them or they pass a limit on what
/// is read from git (`GPUPLAN_MAX_BASE_OUT_BYTES`), which a comment without its "before" would hide.
fn compile_at(inputs: &Inputs, rev: &str) -> Result<Option<Compilation>, CliError> {
    let dir = tempfile::tempdir().map_err(CliError::msg)?;
    // gpuplan's own directory, outside the repository, holding only what it writes from git objects.
    gpuplan::confine::allow_scratch(dir.path()).map_err(CliError::msg)?;
    let copy = |path: &Path| -> Result<Option<PathBuf>, CliError> { copy_at_revision(path, rev, dir.path()) };
    let mut profiles = Vec::new();
    for path in inputs.profile_paths() {
        let Some(copied) = copy(&path)? else { return Ok(None) };
        profiles.push(copied);
    }
    let Some(catalogs_dir) = copy(&inputs.data.catalogs)? else { return Ok(None) };
    // The base's own templates: the head's (the pull request's) would render the base's objects otherwise. A
    // directory outside the repository (typed on the command line) has no revision: it serves both.
    let templates_dir = match &inputs.data.templates {
        Some(path) => Some(copy(path)?.unwrap_or_else(|| path.clone())),
        None => None,
    };
    // The clusters the profiles share, as the revision defines them (a config outside the repository, as is).
    let config = match super::inputs::config_path() {
        Some(path) => Some(copy(path)?.unwrap_or_else(|| path.to_path_buf())),
        None => None,
    };
    let options = CompileOptions { profiles, catalogs_dir, templates_dir };
    Ok(gpuplan::compile::compile_with_config(&options, config.as_deref()).ok())
}

/// Writes `path` (a file, or a directory's files) as revision `rev` holds it below `scratch`, at its place in the
/// repository (from any subdirectory: `../profiles`, `../gpuplan.kdl`); returns where. None for a path outside the
/// repository, which has no revision.
fn copy_at_revision(path: &Path, rev: &str, scratch: &Path) -> Result<Option<PathBuf>, CliError> {
    let Some(rel) = gpuplan::confine::relative_to_root(path) else { return Ok(None) };
    let target = scratch.join(rel);
    // A file is read alone: its directory may be the whole repository (`gpuplan.kdl` at its top).
    let files: Vec<(PathBuf, String)> = if path.is_file() {
        match gitops::file_at_revision(Path::new("."), path, rev).map_err(CliError::msg)? {
            Some(text) => vec![(target.clone(), text)],
            None => Vec::new(),
        }
    } else {
        gitops::out_at_revision(Path::new("."), path, rev).map_err(CliError::msg)?.files.into_iter().map(|(rel, text)| (target.join(rel), text)).collect()
    };
    for (file, text) in files {
        // Tree entry names come from git objects, which libgit2 does not vet: a `..` or an absolute name in a crafted
        // base would write outside the scratch directory.
        let plain = file.strip_prefix(scratch).is_ok_and(|rel| rel.components().all(|c| matches!(c, std::path::Component::Normal(_))));
        if !plain {
            return Err(CliError::msg(format!("{}: the base ({rev}) holds a path that is not a plain relative one", file.display())));
        }
        let parent = file.parent().unwrap_or(scratch);
        std::fs::create_dir_all(parent).and_then(|()| std::fs::write(&file, text)).map_err(CliError::msg)?;
    }
    Ok(Some(target))
}

/// Each workload at max replicas in `before` (the base) and `after`, by cluster, profile and name.
fn workload_rows(before: Option<&Compilation>, after: &Compilation) -> Vec<WorkloadRow> {
    let placements = |c: &Compilation| -> BTreeMap<(String, String, String), WorkloadAt> {
        c.plan
            .clusters
            .iter()
            .flat_map(|cluster| gpuplan::report::explain::workload_placements(c, cluster).into_iter().map(move |w| (cluster.name.clone(), w)))
            .map(|(cluster, w)| ((cluster, w.profile, format!("{}/{}", w.namespace, w.name)), WorkloadAt { replicas: w.replicas, usd_per_hour: gpuplan::emit::diff::pools::cents(w.usd_per_hour), pending: w.pending }))
            .collect()
    };
    let (b, a) = (before.map(placements).unwrap_or_default(), placements(after));
    let keys: std::collections::BTreeSet<&(String, String, String)> = b.keys().chain(a.keys()).collect();
    keys.into_iter()
        .map(|k| WorkloadRow { cluster: k.0.clone(), profile: k.1.clone(), workload: k.2.clone(), before: b.get(k).copied(), after: a.get(k).copied() })
        .collect()
}
