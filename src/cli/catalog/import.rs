//! `gpuplan catalog import`: a snapshot from exported EC2 JSON and a price table, refused when it looks truncated.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gpuplan::catalog::import::{ImportInputs, import};
use gpuplan::catalog::{self, Catalog};

use crate::cli::CliError;

#[derive(clap::Args)]
pub struct Args {
    /// The region the input files describe (the snapshot is <out>/<region>.json).
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
    /// Directory the snapshot is written to.
    #[arg(long, default_value = "catalogs")]
    out: PathBuf,
    /// Replace the snapshot even when the input has far fewer types than it, or lacks accelerator families it has
    /// (the same checks as `catalog refresh`; an input with no type at all is refused anyway).
    #[arg(long)]
    accept_shrink: bool,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let Args { region, instance_types, offerings, prices, price_region, out, accept_shrink } = args;
    let inputs = ImportInputs { region: region.clone(), instance_types, offerings, on_demand_prices: prices, price_region };
    let catalog = import(&inputs).map_err(CliError::msg)?;
    let path = out.join(format!("{region}.json"));
    check_import_shrink(&region, &path, &catalog, accept_shrink)?;
    catalog::write_atomically(&path, &catalog.to_json()).map_err(CliError::io("write", &path))?;
    let accelerated = catalog.instance_types.iter().filter(|t| !t.gpus.is_empty() || t.neuron.is_some()).count();
    crate::cli::inform(format!(
        "wrote {} ({} instance types, {accelerated} with accelerators, {} zones, digest {})",
        path.display(),
        catalog.instance_types.len(),
        catalog.zones.len(),
        catalog.digest()
    ));
    Ok(ExitCode::SUCCESS)
}

/// `catalog import` refuses what `catalog refresh` refuses ([`gpuplan::catalog::plausible::shrink_problems`]): an input
/// that lost most of the snapshot's types or whole accelerator families is more likely a truncated export than a
/// region that changed, and replacing the snapshot would silently narrow every pool. The snapshot on disk is the
/// previous one (an unreadable one is replaced: import is how a snapshot is repaired).
fn check_import_shrink(region: &str, path: &Path, new: &Catalog, accept_shrink: bool) -> Result<(), CliError> {
    use gpuplan::catalog::plausible::{Problem, shrink_problems};
    let previous = gpuplan::input::read_to_string(path).ok().and_then(|text| Catalog::from_json(&text, path).ok());
    let problems = shrink_problems(previous.as_ref(), new);
    if problems.is_empty() {
        return Ok(());
    }
    let listed: String = problems.iter().map(|p| format!("\n  - {p}")).collect();
    if accept_shrink && problems.iter().all(Problem::acceptable) {
        crate::cli::inform(format!("warning: {region}: accepted with --accept-shrink:{listed}"));
        return Ok(());
    }
    let what_to_do = if problems.iter().all(Problem::acceptable) {
        "Check that the input files are complete exports of the region; if the region really lost these types, run the import again with --accept-shrink"
    } else {
        "Check the --instance-types file (--accept-shrink does not accept an input with no instance type)"
    };
    Err(CliError::Message(format!("import of {region} refused, {} is unchanged: the input does not look like the region:{listed}\n{what_to_do}", path.display())))
}
