//! `gpuplan catalog`: build ([`import`]) or update ([`refresh`]) the catalog snapshots, and browse them ([`list`],
//! [`show`]).

pub mod import;
pub mod list;
pub mod refresh;
pub mod show;

use std::path::PathBuf;
use std::process::ExitCode;

use gpuplan::catalog::query::Quote;
use gpuplan::catalog::Catalog;

use super::CliError;

#[derive(clap::Subcommand)]
pub enum Command {
    /// List the GPU and Neuron instance types of a region, cheapest first, with filters: `catalog list --gpu-memory-min
    /// 40GiB` answers "which GPUs have at least 40 GiB and what do they cost?".
    List(list::Args),
    /// Everything the catalog knows about one instance type: accelerators, memory, EFA, zones, prices per zone.
    Show(show::Args),
    /// Import DescribeInstanceTypes JSON, zone offerings and an on-demand price table into catalogs/<region>.json.
    Import(import::Args),
    /// Refresh catalogs/<region>.json from the EC2 API (DescribeInstanceTypes, offerings, spot price history) and the
    /// AWS Price List, with the standard AWS credential chain; then show which manifests the new prices change.
    Refresh(refresh::Args),
}

pub fn run(command: Command) -> Result<ExitCode, CliError> {
    match command {
        Command::List(args) => list::run(args),
        Command::Show(args) => show::run(args),
        Command::Import(args) => import::run(args),
        Command::Refresh(args) => refresh::run(args),
    }
}

/// Which catalog `list` and `show` read.
#[derive(clap::Args)]
pub struct CatalogSource {
    /// The region whose catalog to read: us-east-1 is built in, another needs <catalogs>/<region>.json.
    #[arg(long, default_value = "us-east-1")]
    region: String,
    /// Directory of catalog snapshots (<region>.json).
    #[arg(long, default_value = "catalogs")]
    catalogs: PathBuf,
}

impl CatalogSource {
    fn load(&self) -> Result<Catalog, CliError> {
        Catalog::load(&self.catalogs, &self.region).map_err(CliError::msg)
    }
}

/// USD with 4 decimals, as the price tables have them.
fn usd(v: f64) -> String {
    format!("{v:.4}")
}

/// MiB as GiB with one decimal ("22.4 GiB"), or whole ("16 GiB").
fn gib(mib: u64) -> String {
    if mib.is_multiple_of(1024) { format!("{} GiB", mib / 1024) } else { format!("{:.1} GiB", mib as f64 / 1024.0) }
}

/// One line per estimated source among these quotes: `* <its description>`, so a reader knows which figures were
/// not observed.
fn estimate_notes<'q>(catalog: &Catalog, quotes: impl IntoIterator<Item = &'q Quote>) -> Vec<String> {
    let mut ids: Vec<&str> = quotes.into_iter().filter(|q| q.estimate).map(|q| q.source.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.iter().map(|id| format!("* estimated ({id}): {}", catalog.sources.get(*id).map_or("", |s| s.description.as_str()))).collect()
}
