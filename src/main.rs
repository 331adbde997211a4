//! The `gpuplan` command: a thin layer over the library's stages. Exit codes: 0 ok, 1 differences or findings
//! (`compile --check`, `diff --exit-code`, `lint --deny-warnings`), 2 error.

// See Cargo.toml: faster than glibc's malloc on both cores, same peak memory.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use gpuplan::adopt::term::{self, ColorChoice};
use gpuplan::compile::{compile, Compilation, CompileError, CompileOptions};
use gpuplan::emit::diff::{render_diff, DiffFormat};
use gpuplan::report::explain::{explain, ExplainFormat};
use gpuplan::emit::{self, HeaderStatus};

#[derive(Parser)]
#[command(name = "gpuplan", version, about = "Compile GPU capacity intent (KDL profiles) into validated Karpenter and GPU Operator manifests")]
struct Cli {
    /// Colour diagnostics and help: auto (a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_enum, global = true, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// Seconds a writer (compile, commit, catalog refresh) waits for another one writing the same out/ before it
    /// gives up with exit 2 (default: GPUPLAN_LOCK_TIMEOUT, else 60).
    #[arg(long, global = true, value_name = "SECONDS")]
    lock_timeout: Option<u64>,
    #[command(subcommand)]
    command: Command,
}

/// Whether this process colours its stderr (decided once from --color, NO_COLOR and the terminal).
static COLOR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

fn color() -> bool {
    *COLOR.get().unwrap_or(&false)
}

/// `--lock-timeout`, set once before the command runs.
static LOCK_TIMEOUT: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();

/// The one-writer lock of `out` (see `emit::lock`), saying what a killed writer left and this one cleaned up.
fn writer_lock(out: &Path) -> Result<emit::lock::WriterLock, String> {
    let timeout = emit::lock::timeout(LOCK_TIMEOUT.get().copied().flatten()).map_err(|e| format!("error: {e}"))?;
    let lock = emit::lock::acquire(out, timeout, |message| eprintln!("{message}")).map_err(|e| format!("error: {e}"))?;
    if let Some(backup) = &lock.stale.restored {
        eprintln!("restored {} from {} (an interrupted gpuplan left it there)", out.display(), backup.display());
    }
    for dir in &lock.stale.removed {
        eprintln!("removed {} (left by an interrupted gpuplan)", dir.display());
    }
    Ok(lock)
}

#[derive(clap::Args, Clone)]
struct Inputs {
    /// Profile files or directories of *.kdl files.
    #[arg(default_value = "profiles")]
    profiles: Vec<PathBuf>,
    #[command(flatten)]
    data: Data,
}

/// Catalogs and templates (shared by every command that compiles).
#[derive(clap::Args, Clone)]
struct Data {
    /// Directory of catalog snapshots (<region>.json); us-east-1 is built in.
    #[arg(long, default_value = "catalogs")]
    catalogs: PathBuf,
    /// Directory whose templates replace the built-in ones of the same name.
    #[arg(long)]
    templates: Option<PathBuf>,
    /// Warn when a catalog's newest data is older than this many days.
    #[arg(long, default_value_t = 30)]
    max_catalog_age_days: u64,
}

impl Inputs {
    fn compile(&self) -> Result<Compilation, String> {
        compile_with(&self.profiles, &self.data)
    }
}

/// `lint --manifests`: the findings on the compiled objects of one cluster together with objects read from it, those
/// the compile did not already print; how many.
fn lint_cluster_objects(compiled: &Compilation, manifests: &[PathBuf], cluster: Option<String>) -> Result<usize, String> {
    if manifests.is_empty() {
        return Ok(0);
    }
    let names: Vec<&str> = compiled.plan.clusters.iter().map(|c| c.name.as_str()).collect();
    let cluster = match (cluster, names.as_slice()) {
        (Some(c), _) if names.contains(&c.as_str()) => c,
        (Some(c), _) => return Err(format!("error: --cluster {c}: the profiles define cluster(s) {}", names.join(", "))),
        (None, [only]) => only.to_string(),
        (None, _) => return Err(format!("error: --manifests needs --cluster: the profiles define clusters {}", names.join(", "))),
    };
    let objects = gpuplan::report::lint::with_cluster_objects(&cluster, compiled.manifests(), manifests).map_err(|e| format!("error: {e}"))?;
    let printed: std::collections::BTreeSet<(&str, &str, &str)> = compiled.warnings.iter().map(|w| (w.code.as_str(), w.message.as_str(), w.location.as_str())).collect();
    let new: Vec<_> = gpuplan::report::lint::lint_on(compiled, &objects).into_iter().filter(|d| !printed.contains(&(d.code.as_str(), d.message.as_str(), d.location.as_str()))).collect();
    if !new.is_empty() {
        eprint!("{}", term::render(&new, color()));
    }
    Ok(new.len())
}

fn compile_with(profiles: &[PathBuf], data: &Data) -> Result<Compilation, String> {
    let options = CompileOptions { profiles: profiles.to_vec(), catalogs_dir: data.catalogs.clone(), templates_dir: data.templates.clone() };
    let compiled = compile(&options).map_err(compile_error)?;
    // Rendered on every core (miette lays each out over its source: ~300k instructions, 4% of a large compile), a
    // batch at a time: 10,000 profiles' warnings are 9 MB of text. A stderr that cannot be written loses the
    // warnings, not the compile.
    use rayon::prelude::*;
    let color = color();
    // Not locked across the rendering: a worker that panicked could not print its message.
    let mut stderr = std::io::BufWriter::new(std::io::stderr());
    for batch in compiled.warnings.chunks(256) {
        let rendered: Vec<String> = batch.par_iter().map(|w| term::render(std::slice::from_ref(w), color)).collect();
        for text in rendered {
            let _ = std::io::Write::write_all(&mut stderr, text.as_bytes());
        }
    }
    drop(stderr);
    // The one place the wall clock is read: a warning on stderr, never anything in out/.
    for catalog in compiled.catalogs.values() {
        if let Some(days) = catalog.age_days(std::time::SystemTime::now()).filter(|d| *d > data.max_catalog_age_days) {
            eprintln!(
                "warning: the {} catalog's newest data is {days} days old ({}); run `gpuplan catalog refresh --region {}` (threshold: --max-catalog-age-days {})",
                catalog.region,
                catalog.newest_fetch().unwrap_or("?"),
                catalog.region,
                data.max_catalog_age_days
            );
        }
    }
    Ok(compiled)
}

#[derive(Subcommand)]
enum Command {
    /// Compile profiles into out/ (or, with --check, exit 1 and print the diff if out/ is stale).
    Compile {
        #[command(flatten)]
        inputs: Inputs,
        /// Output directory.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Change nothing; exit 1 and print a unified diff when out/ differs from what compile would write.
        #[arg(long)]
        check: bool,
        /// Replace files in out/ that have no gpuplan header (compile refuses to delete them otherwise).
        #[arg(long)]
        force: bool,
    },
    /// Show what compile would change in out/.
    Diff {
        #[command(flatten)]
        inputs: Inputs,
        #[arg(long, default_value = "out")]
        out: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Unified)]
        format: Format,
        /// Exit 1 when there are differences.
        #[arg(long)]
        exit_code: bool,
        /// Also simulate these pods (Pod/Deployment/StatefulSet/ReplicaSet/Job YAML) on out/ and on the new output,
        /// and list every pod whose placement changes, with the $/h change (see `gpuplan simulate`).
        #[arg(long, num_args = 1..)]
        pods: Vec<PathBuf>,
    },
    /// Compile, then commit exactly the changed files under out/ (and changed catalog snapshots) in one commit.
    Commit {
        #[command(flatten)]
        inputs: Inputs,
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Commit message (default: a summary of the semantic diff).
        #[arg(short, long)]
        message: Option<String>,
        /// Commit on this branch (created from HEAD if missing) without touching the work tree.
        #[arg(long)]
        branch: Option<String>,
        /// Overwrite files in out/ that were edited by hand.
        #[arg(long)]
        force: bool,
        /// Commit a change that removes NodePools (refused otherwise: deleting a NodePool deletes its nodes at once,
        /// without disruption budgets).
        #[arg(long)]
        allow_removal: bool,
    },
    /// Run the misconfiguration checks (also run by compile, as warnings).
    Lint {
        #[command(flatten)]
        inputs: Inputs,
        /// Exit 1 when there are findings.
        #[arg(long)]
        deny_warnings: bool,
        /// YAML read from the running cluster (e.g. `kubectl get hpa,scaledobjects,pdb -A -o yaml`), files or
        /// directories: linted together with the compiled objects of `--cluster` (an HPA beside a ScaledObject: GP024).
        #[arg(long, num_args = 1..)]
        manifests: Vec<PathBuf>,
        /// The cluster `--manifests` come from (needed when the profiles define more than one).
        #[arg(long)]
        cluster: Option<String>,
    },
    /// Explain the plan: candidates ranked by price, what each constraint removed, limits, weights, costs.
    Explain {
        /// Only this profile.
        profile: Option<String>,
        /// Profile files or directories.
        #[arg(long = "profiles", default_value = "profiles")]
        profiles: Vec<PathBuf>,
        #[command(flatten)]
        data: Data,
        #[arg(long, value_enum, default_value_t)]
        format: ExplainFormat,
    },
    /// Simulate Karpenter's provisioning: where would these pods go, on these NodePools, at what cost.
    Simulate {
        /// Manifest files or directories (NodePool, EC2NodeClass, EKS Auto Mode NodeClass, NodeOverlay; Kueue v1beta2
        /// ResourceFlavor, ClusterQueue, LocalQueue, WorkloadPriorityClass, PriorityClass and Namespace for queued pods;
        /// other kinds are ignored).
        #[arg(long, num_args = 1.., default_value = "out")]
        manifests: Vec<PathBuf>,
        /// Pod, Deployment, StatefulSet, ReplicaSet or Job YAML files or directories (DaemonSets there count as
        /// --daemonsets). Objects labelled kueue.x-k8s.io/queue-name run only if Kueue admits them.
        #[arg(long, num_args = 1.., required = true)]
        pods: Vec<PathBuf>,
        /// DaemonSet YAML files or directories: the requests of those that would run on a node are taken from it
        /// before pods fit, as Karpenter does. The DaemonSets of the add-ons the manifests configure (GPU Operator,
        /// Neuron and EFA device plugins, as their charts create them) are counted too unless given here.
        #[arg(long, num_args = 1..)]
        daemonsets: Vec<PathBuf>,
        /// Do not count the add-ons' DaemonSets that are not given as input.
        #[arg(long)]
        no_add_on_daemonsets: bool,
        /// Catalog region (default: the manifests' gpuplan.dev/catalog annotation, else us-east-1).
        #[arg(long)]
        region: Option<String>,
        /// TYPE:ZONE:CAPACITY with no capacity for the whole run (each part may be * or a glob such as g5.*).
        #[arg(long)]
        unavailable: Vec<gpuplan::simulate::Unavailable>,
        #[arg(long, default_value = "catalogs")]
        catalogs: PathBuf,
        #[arg(long, value_enum, default_value_t)]
        format: gpuplan::simulate::Format,
        /// Exit 1 when any pod stays pending.
        #[arg(long)]
        exit_code: bool,
    },
    /// Build or update catalog snapshots.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout: `gpuplan man > gpuplan.1`.
    Man,
    /// Print the profile language reference: every node and property with types, defaults and docs (the
    /// parser's own table).
    Schema {
        #[arg(long, value_enum, default_value_t = SchemaFormat::Text)]
        format: SchemaFormat,
    },
    /// Write profiles expressing existing NodePool / EC2NodeClass YAML, and report what compiling them changes.
    Adopt {
        /// YAML files or directories (other kinds are listed as skipped).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Directory the profiles are written to (<profile>.kdl; existing files of the same name are replaced).
        #[arg(long, default_value = "profiles")]
        into: PathBuf,
        /// Cluster name for the profiles (default: gpuplan's gpuplan.dev/cluster tag, else the discovery tag).
        #[arg(long)]
        cluster: Option<String>,
        /// Region whose catalog prices the report (default: from the NodePools' zones).
        #[arg(long)]
        region: Option<String>,
        #[arg(long, default_value = "catalogs")]
        catalogs: PathBuf,
        #[arg(long, value_enum, default_value_t)]
        format: gpuplan::adopt::report::ReportFormat,
        /// Pods, Deployments, StatefulSets or Jobs (files or directories) to simulate on the original manifests and on
        /// the adopted profiles' output (default: one probe pod per original NodePool, requesting its accelerator,
        /// tolerating its taints and selecting its labels).
        #[arg(long = "verify", value_name = "PODS", num_args = 1..)]
        verify: Vec<PathBuf>,
        /// Exit 0 even when a pod's placement changes (NodePool, instance type, capacity type, or pending); without it
        /// adopt exits 1 then, after writing the profiles and the report.
        #[arg(long)]
        accept_changes: bool,
        /// Fill a placeholder of the inputs (`$NAME`, `${NAME}` or `<<NAME>>`) with a value; repeat for each. Adopt
        /// stops, writing nothing, while a placeholder has no value.
        #[arg(long, value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// How many instances the capacity reservation of a reserved NodePool holds, when its EC2NodeClass selects the
        /// reservation by id or tags and no limit says (adopt asks for it by name); repeat for each.
        #[arg(long = "reservation", value_name = "NODEPOOL=INSTANCES")]
        reservations: Vec<String>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SchemaFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Unified,
    Markdown,
    Json,
}

#[derive(Subcommand)]
enum CatalogCommand {
    /// Import DescribeInstanceTypes JSON, zone offerings and an on-demand price table into catalogs/<region>.json.
    Import {
        #[arg(long, default_value = "us-east-1")]
        region: String,
        /// DescribeInstanceTypes output (object keyed by type, {"InstanceTypes": [...]}, or an array).
        #[arg(long)]
        instance_types: PathBuf,
        /// DescribeInstanceTypeOfferings output with location type availability-zone.
        #[arg(long)]
        offerings: PathBuf,
        /// On-demand price table ({"regions": {"<region>": {"<type>": usd}}} or {"<type>": usd}).
        #[arg(long)]
        prices: PathBuf,
        /// Use this region's prices from the table (marked as estimates) when it has none for --region.
        #[arg(long)]
        price_region: Option<String>,
        #[arg(long, default_value = "catalogs")]
        out: PathBuf,
        /// Replace the snapshot even when the input has far fewer types than it, or lacks accelerator families it has
        /// (the same checks as `catalog refresh`; an input with no type at all is refused anyway).
        #[arg(long)]
        accept_shrink: bool,
    },
    /// Refresh catalogs/<region>.json from the EC2 API (DescribeInstanceTypes, offerings, spot price history) and the
    /// AWS Price List, with the standard AWS credential chain; then show which manifests the new prices change.
    Refresh {
        /// Region to refresh (repeat for several; they run concurrently).
        #[arg(long = "region", required = true)]
        regions: Vec<String>,
        /// EC2 endpoint (e.g. a VPC endpoint, or moto's server for testing).
        #[arg(long)]
        endpoint_url: Option<String>,
        /// Pricing API endpoint (default: the AWS Price List API in us-east-1).
        #[arg(long)]
        pricing_endpoint_url: Option<String>,
        #[arg(long, default_value = "catalogs")]
        out: PathBuf,
        /// Profiles whose output to compare against out/ after the refresh.
        #[arg(long = "profiles", default_value = "profiles")]
        profiles: Vec<PathBuf>,
        /// The out/ to compare with.
        #[arg(long = "out-dir", default_value = "out")]
        out_dir: PathBuf,
        /// Replace the snapshot even though the answer has far fewer types than it (or than a real region has), or
        /// lacks accelerator families it had: for a region that really lost them. An empty answer is refused anyway.
        #[arg(long)]
        accept_shrink: bool,
    },
}

/// `catalog import` refuses what `catalog refresh` refuses ([`gpuplan::catalog::plausible::shrink_problems`]): an input
/// that lost most of the snapshot's types or whole accelerator families is more likely a truncated export than a
/// region that changed, and replacing the snapshot would silently narrow every pool. The snapshot on disk is the
/// previous one (an unreadable one is replaced: import is how a snapshot is repaired).
fn check_import_shrink(region: &str, path: &Path, new: &gpuplan::catalog::Catalog, accept_shrink: bool) -> Result<(), String> {
    use gpuplan::catalog::plausible::{shrink_problems, Problem};
    let previous = std::fs::read_to_string(path).ok().and_then(|text| gpuplan::catalog::Catalog::from_json(&text, path).ok());
    let problems = shrink_problems(previous.as_ref(), new);
    if problems.is_empty() {
        return Ok(());
    }
    let listed: String = problems.iter().map(|p| format!("\n  - {p}")).collect();
    if accept_shrink && problems.iter().all(Problem::acceptable) {
        eprintln!("warning: {region}: accepted with --accept-shrink:{listed}");
        return Ok(());
    }
    let what_to_do = if problems.iter().all(Problem::acceptable) {
        "Check that the input files are complete exports of the region; if the region really lost these types, run the import again with --accept-shrink"
    } else {
        "Check the --instance-types file (--accept-shrink does not accept an input with no instance type)"
    };
    Err(format!("error: import of {region} refused, {} is unchanged: the input does not look like the region:{listed}\n{what_to_do}", path.display()))
}

fn main() -> ExitCode {
    // --color decides clap's own colours too, so it is read before clap parses (NO_COLOR likewise).
    let flag = std::env::args_os().find_map(|a| a.to_str().and_then(|a| a.strip_prefix("--color=")).map(str::to_string));
    let choice = match flag.as_deref() {
        Some("always") => ColorChoice::Always,
        Some("never") => ColorChoice::Never,
        _ => ColorChoice::Auto,
    };
    let color = term::use_color_here(choice);
    let mut command = Cli::command().color(term::clap_color(color));
    // The catalog digests are computed only when asked for: reading and hashing every catalog costs more than the
    // rest of a small compile. Clap wants a 'static str, and this runs at most once per process.
    if std::env::args_os().skip(1).any(|a| a == "--version") {
        command = command.long_version(&*Box::leak(gpuplan::adopt::cli_docs::long_version(Path::new("catalogs")).into_boxed_str()));
    }
    let cli = Cli::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    let color = term::use_color_here(cli.color);
    let _ = COLOR.set(color);
    let _ = LOCK_TIMEOUT.set(cli.lock_timeout);
    match run(cli) {
        Ok(code) => code,
        Err(message) => {
            eprint!("{}", term::paint_prefixes(&message, color));
            if !message.ends_with('\n') {
                eprintln!();
            }
            ExitCode::from(2)
        }
    }
}

fn compile_error(err: CompileError) -> String {
    let rendered = match &err {
        CompileError::Profiles { diagnostics } => term::render(diagnostics, color()),
        _ => String::new(),
    };
    format!("{rendered}error: {err}")
}

fn io_error(what: &str, path: &Path) -> impl FnOnce(std::io::Error) -> String {
    let path = path.display().to_string();
    let what = what.to_string();
    move |e| format!("error: cannot {what} {path}: {e}")
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        Command::Completions { shell } => {
            let script = gpuplan::adopt::cli_docs::completions(shell, &mut Cli::command());
            std::io::Write::write_all(&mut std::io::stdout(), &script).map_err(|e| format!("error: {e}"))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Adopt { paths, into, cluster, region, catalogs, format, verify, accept_changes, set, reservations } => {
            let set = set.iter().map(|s| gpuplan::adopt::placeholders::parse_set(s)).collect::<Result<_, _>>().map_err(|e| format!("error: --set {e}"))?;
            let reservations = reservations.iter().map(|s| gpuplan::adopt::parse_reservation(s)).collect::<Result<_, _>>().map_err(|e| format!("error: --reservation {e}"))?;
            let options = gpuplan::adopt::AdoptOptions { paths, cluster, region, catalogs_dir: catalogs.clone(), set, reservations };
            let adoption = gpuplan::adopt::adopt(&options).map_err(|e| format!("error: {e}"))?;
            // Read before anything is written: a bad pod file stops adopt with nothing written.
            let originals = gpuplan::adopt::verify::read(&adoption.texts, &verify).map_err(|e| format!("error: {e}"))?;
            for warning in &adoption.warnings {
                eprintln!("{}", term::paint_prefixes(&warning.to_string(), color()));
            }
            std::fs::create_dir_all(&into).map_err(io_error("create", &into))?;
            let mut written = Vec::new();
            for (name, text) in &adoption.files {
                let path = into.join(name);
                std::fs::write(&path, text).map_err(io_error("write", &path))?;
                written.push(path);
            }
            eprintln!("wrote {}", written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "));
            // Compiled quietly: the report lists the adopted profiles' lint findings under each NodePool.
            let options = CompileOptions { profiles: written, catalogs_dir: catalogs, templates_dir: None };
            let compiled = compile(&options)
                .map_err(compile_error)
                .map_err(|e| format!("{e}\nerror: the adopted profiles in {} do not compile (edit them, or report a gpuplan bug)", into.display()))?;
            let mut report = gpuplan::adopt::report::report(&adoption, &compiled);
            let mut verification = gpuplan::adopt::verify::verify(&adoption, &compiled, &report.pools, &originals).map_err(|e| format!("error: {e}"))?;
            verification.accepted = accept_changes;
            let changed = verification.changed > 0 && !accept_changes;
            report.verification = Some(verification);
            print!("{}", gpuplan::adopt::report::render(&report, format));
            Ok(if changed { ExitCode::from(gpuplan::adopt::verify::EXIT_PLACEMENT_CHANGED) } else { ExitCode::SUCCESS })
        }
        Command::Schema { format } => {
            use gpuplan::profile::schema;
            print!("{}", match format {
                SchemaFormat::Text => schema::render_text(),
                SchemaFormat::Json => schema::render_json(),
            });
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            let page = gpuplan::adopt::cli_docs::man_page(Cli::command()).map_err(|e| format!("error: {e}"))?;
            std::io::Write::write_all(&mut std::io::stdout(), &page).map_err(|e| format!("error: {e}"))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Compile { inputs, out, check, force } => {
            // Held until the process ends; `--check` only reads.
            let _lock = if check { None } else { Some(writer_lock(&out)?) };
            // Never dropped: the process ends with this command and the OS reclaims the compilation and both trees at
            // once, where dropping them would free hundreds of thousands of values one by one.
            let mut compiled = std::mem::ManuallyDrop::new(inputs.compile()?);
            let tree = std::mem::ManuallyDrop::new(compiled.take_output_tree());
            // Compared file by file first: a current out/ (the common case in CI, for `compile` as for `--check`) is
            // never read into memory whole, and there is nothing to write.
            if emit::is_current(&out, &tree).map_err(io_error("read", &out))? {
                if check {
                    eprintln!("{} is up to date ({} files)", out.display(), tree.files.len());
                } else {
                    eprintln!("wrote {} ({} files, 0 changed)", out.display(), tree.files.len());
                }
                return Ok(ExitCode::SUCCESS);
            }
            let current = std::mem::ManuallyDrop::new(emit::read_tree(&out).map_err(io_error("read", &out))?);
            // Before anything is printed or written: an update the API server refuses is an error, not a diff.
            emit::transition::refuse(&out, &current, &tree, &compiled.profiles, &compiled.sources).map_err(compile_error)?;
            if check {
                print!("{}", gpuplan::emit::diff::render_unified(&current, &tree, &out.display().to_string()));
                eprintln!("{} is stale: run `gpuplan compile` and commit the result", out.display());
                return Ok(ExitCode::from(1));
            }
            // out/ is generated, but a file without our header was put there by someone: don't delete it silently.
            let foreign: Vec<String> = emit::hand_edits(&current)
                .into_iter()
                .filter(|e| e.status == HeaderStatus::NotGenerated && !tree.files.contains_key(&e.path))
                .map(|e| out.join(&e.path).display().to_string())
                .collect();
            if !foreign.is_empty() && !force {
                return Err(format!(
                    "error: {} holds files gpuplan did not generate, which compile would delete:\n  {}\nmove them out of {}, or pass --force",
                    out.display(),
                    foreign.join("\n  "),
                    out.display()
                ));
            }
            let changed = emit::changes(&current, &tree).len();
            emit::write_tree(&out, &tree).map_err(io_error("write", &out))?;
            eprintln!("wrote {} ({} files, {changed} changed)", out.display(), tree.files.len());
            Ok(ExitCode::SUCCESS)
        }
        Command::Diff { inputs, out, format, exit_code, pods } => {
            let mut compiled = inputs.compile()?;
            let tree = compiled.take_output_tree();
            let current = emit::read_tree(&out).map_err(io_error("read", &out))?;
            emit::transition::refuse(&out, &current, &tree, &compiled.profiles, &compiled.sources).map_err(compile_error)?;
            let placement = if pods.is_empty() {
                None
            } else {
                Some(gpuplan::simulate::placement_diff::placement_changes(&current, &tree, &pods, &inputs.data.catalogs).map_err(|e| format!("error: {e}"))?)
            };
            // Said on stderr whatever the format: a reviewer reading the patch or the JSON still sees it.
            for removed in gpuplan::emit::diff::removed_node_pools(&current, &tree) {
                eprintln!("warning: removes {removed}: {}", gpuplan::emit::diff::REMOVAL_WARNING);
            }
            let diff_format = match format {
                Format::Unified => DiffFormat::Unified,
                Format::Markdown => DiffFormat::Markdown,
                Format::Json => DiffFormat::Json,
            };
            match (&placement, format) {
                // JSON stays one document: the object changes and the placement changes side by side.
                (Some(changes), Format::Json) => {
                    let objects: serde_json::Value = serde_json::from_str(&render_diff(&current, &tree, diff_format)).map_err(|e| format!("error: {e}"))?;
                    let both = serde_json::json!({ "objects": objects, "placement": changes });
                    println!("{}", serde_json::to_string_pretty(&both).map_err(|e| format!("error: {e}"))?);
                }
                (Some(changes), _) => {
                    print!("{}", render_diff(&current, &tree, diff_format));
                    print!("{}", gpuplan::simulate::placement_diff::render(changes, &pods));
                }
                (None, _) => print!("{}", render_diff(&current, &tree, diff_format)),
            }
            Ok(if exit_code && current != tree { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
        Command::Commit { inputs, out, message, branch, force, allow_removal } => {
            let _lock = writer_lock(&out)?;
            let mut compiled = inputs.compile()?;
            let repo = std::env::current_dir().map_err(|e| format!("error: {e}"))?;
            // The snapshots this output was computed from, and tracked ones a refresh changed; nothing else.
            let regions: Vec<&str> = compiled.catalogs.keys().map(String::as_str).collect();
            let extra_paths = gpuplan::emit::gitops::catalog_snapshots(&repo, &inputs.data.catalogs, &regions);
            let tree = compiled.take_output_tree();
            // Against the out/ of the commit this one goes on: what the GitOps tool syncs from.
            let base = gpuplan::emit::gitops::base_out(&repo, &out, branch.as_deref()).map_err(|e| format!("error: {e}"))?;
            emit::transition::refuse(&out, &base, &tree, &compiled.profiles, &compiled.sources).map_err(compile_error)?;
            let options = gpuplan::emit::gitops::CommitOptions { message, branch, force, allow_removal, extra_paths };
            match gpuplan::emit::gitops::commit(&repo, &out, &tree, &options).map_err(|e| format!("error: {e}"))? {
                gpuplan::emit::gitops::CommitOutcome::NothingToCommit => eprintln!("nothing to commit: {} is up to date", out.display()),
                gpuplan::emit::gitops::CommitOutcome::Committed { id, files, message, reference, .. } => {
                    println!("{message}");
                    eprintln!("committed {} on {reference} ({} files)", &id[..12.min(id.len())], files.len());
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Lint { inputs, deny_warnings, manifests, cluster } => {
            let compiled = inputs.compile()?;
            let count = compiled.warnings.len() + lint_cluster_objects(&compiled, &manifests, cluster)?;
            eprintln!("{count} finding{}", if count == 1 { "" } else { "s" });
            Ok(if deny_warnings && count > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
        Command::Explain { profile, profiles, data, format } => {
            let compiled = compile_with(&profiles, &data)?;
            print!("{}", explain(&compiled, profile.as_deref(), format).map_err(|e| format!("error: {e}"))?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Simulate { manifests, pods, daemonsets, no_add_on_daemonsets, region, unavailable, catalogs, format, exit_code } => {
            let options = gpuplan::simulate::Options { manifests, pods, region, catalogs_dir: catalogs, unavailable, daemonsets, add_on_daemonsets: !no_add_on_daemonsets };
            let report = gpuplan::simulate::simulate(&options).map_err(|e| format!("error: {e}"))?;
            print!("{}", gpuplan::simulate::report::render(&report, format));
            Ok(if exit_code && !report.pending.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
        Command::Catalog(CatalogCommand::Refresh { regions, endpoint_url, pricing_endpoint_url, out, profiles, out_dir, accept_shrink }) => {
            let _lock = writer_lock(&out_dir)?;
            let mut options = gpuplan::catalog::refresh::RefreshOptions::new(regions, &out);
            options.endpoint_url = endpoint_url;
            options.pricing_endpoint_url = pricing_endpoint_url;
            options.progress = true;
            options.accept_shrink = accept_shrink;
            let report = gpuplan::catalog::refresh::refresh(&options).map_err(|e| format!("error: {e}"))?;
            print!("{report}");
            // Which manifests the refreshed catalog changes (only when the profiles are here and compile).
            if profiles.iter().all(|p| p.exists()) {
                let data = Data { catalogs: out.clone(), templates: None, max_catalog_age_days: u64::MAX };
                match compile_with(&profiles, &data) {
                    Ok(compiled) => {
                        let current = emit::read_tree(&out_dir).map_err(io_error("read", &out_dir))?;
                        let tree = compiled.output_tree();
                        if current == tree {
                            println!("no manifest in {} changes", out_dir.display());
                        } else {
                            println!("manifests that change (run `gpuplan compile` or `gpuplan commit` to apply):");
                            print!("{}", render_diff(&current, &tree, DiffFormat::Markdown));
                        }
                    }
                    Err(message) => eprintln!("the refreshed catalog does not compile the profiles:\n{message}"),
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Catalog(CatalogCommand::Import { region, instance_types, offerings, prices, price_region, out, accept_shrink }) => {
            let catalog = gpuplan::catalog::import::import(&gpuplan::catalog::import::ImportInputs {
                region: region.clone(),
                instance_types,
                offerings,
                on_demand_prices: prices,
                price_region,
            })
            .map_err(|e| format!("error: {e}"))?;
            let path = out.join(format!("{region}.json"));
            check_import_shrink(&region, &path, &catalog, accept_shrink)?;
            gpuplan::catalog::write_atomically(&path, &catalog.to_json()).map_err(io_error("write", &path))?;
            let accelerated = catalog.instance_types.iter().filter(|t| !t.gpus.is_empty() || t.neuron.is_some()).count();
            eprintln!(
                "wrote {} ({} instance types, {accelerated} with accelerators, {} zones, digest {})",
                path.display(),
                catalog.instance_types.len(),
                catalog.zones.len(),
                catalog.digest()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
