//! `gpuplan forecast`: what the clusters will cost under the demand the demand file describes, replayed over days
//! through Karpenter's provisioning and disruption, per cluster, profile, NodePool and workload.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gpuplan::forecast::demand::{self, Demand, DEMAND_FILE};
use gpuplan::forecast::report::{self, Format as ReportFormat};
use gpuplan::forecast::run::{forecast, Options};

use super::inputs::Inputs;
use super::CliError;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// The demand file [default: gpuplan.demand.kdl at the repository root].
    #[arg(long, value_name = "FILE")]
    demand: Option<PathBuf>,
    /// Forecast this cluster only [default: every cluster the demand file names].
    #[arg(long, value_name = "CLUSTER")]
    cluster: Option<String>,
    /// The first seed [default: the demand file's `seed`, else 1]; the runs use SEED, SEED+1, ….
    #[arg(long)]
    seed: Option<u64>,
    /// How many seeds the mean and the range are over [default: the demand file's `seeds`, else 5].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    seeds: Option<u32>,
    /// How long each run is: 30d, 36h, 1d12h [default: the demand file's `horizon`, else 30d].
    #[arg(long, value_name = "DURATION", value_parser = horizon)]
    horizon: Option<u64>,
    /// table, markdown (a pull request, a wiki) or json (docs/forecast.schema.json).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also write the picture (SVG): spend per hour against the budget and the bound, nodes per NodePool.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Table,
    Markdown,
    Json,
}

impl From<Format> for ReportFormat {
    fn from(format: Format) -> Self {
        match format {
            Format::Table => ReportFormat::Table,
            Format::Markdown => ReportFormat::Markdown,
            Format::Json => ReportFormat::Json,
        }
    }
}

fn horizon(text: &str) -> Result<u64, String> {
    demand::parse_duration(text).filter(|s| *s >= 3600).ok_or_else(|| format!("`{text}` is not a horizon of an hour or more: write 30d, 36h or 1d12h"))
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let Args { inputs, demand, cluster, seed, seeds, horizon, format, svg } = args;
    let compiled = inputs.compile()?;
    let (shown, demand) = read_demand(demand.as_deref())?;
    let opts = Options { cluster, seed, seeds, horizon_seconds: horizon };
    // The names, and the work this run asks for against the limits (`forecast::budget`), before anything is drawn.
    let problems = gpuplan::forecast::run::check_demand(&compiled, &demand, &opts);
    if problems.iter().any(|d| d.is_error()) {
        return Err(CliError::Demand(problems));
    }
    let forecast = forecast(&compiled, &demand, &shown, &opts).map_err(CliError::msg)?;
    print!("{}", report::render(&forecast, format.into()));
    if let Some(path) = svg {
        gpuplan::confine::check_write(&path).map_err(CliError::io("write", &path))?;
        std::fs::write(&path, gpuplan::forecast::picture::svg(&forecast)).map_err(CliError::io("write", &path))?;
        super::inform(format!("wrote {}", path.display()));
    }
    Ok(ExitCode::SUCCESS)
}

/// The demand file `--demand` names, else the repository's; without either, an error that says what to write.
fn read_demand(given: Option<&Path>) -> Result<(String, Demand), CliError> {
    if let Some(path) = given {
        let text = gpuplan::input::read_to_string(path).map_err(CliError::io("read", path))?;
        return Ok((path.display().to_string(), demand::parse(path, &text).map_err(CliError::Demand)?));
    }
    repository_demand()?.ok_or_else(|| {
        CliError::msg(format!(
            "no demand file: write {} at the repository root (what the workloads and queues ask for over time; \
             see `gpuplan forecast --help` and the book's forecast page, docs/src/forecast.md), or pass --demand FILE",
            demand_path().display()
        ))
    })
}

/// Where the repository's demand file is, as the working directory reaches it.
fn demand_path() -> PathBuf {
    let root = super::inputs::repository_root();
    if root == Path::new(".") { PathBuf::from(DEMAND_FILE) } else { root.join(DEMAND_FILE) }
}

/// The repository's demand file (`gpuplan.demand.kdl` at its root) and its path as shown, if it has one.
pub fn repository_demand() -> Result<Option<(String, Demand)>, CliError> {
    let found = demand::load(&super::inputs::repository_root()).map_err(CliError::Demand)?;
    Ok(found.map(|d| (demand_path().display().to_string(), d)))
}
