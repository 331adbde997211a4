//! `gpuplan catalog refresh`: snapshots from the EC2 and Price List APIs, then which manifests they change.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gpuplan::catalog::refresh::{Clock, RefreshOptions, refresh};
use gpuplan::emit::refresh::{OutImpact, impact, recompile_options};

use crate::cli::inputs::{ProfilePaths, compile_printing_warnings, now};
use crate::cli::lock::writer_lock;
use crate::cli::{CliError, color};

#[derive(clap::Args)]
pub struct Args {
    /// Region to refresh (repeat for several; they run concurrently).
    #[arg(long = "region", required = true)]
    regions: Vec<String>,
    /// EC2 endpoint (e.g. a VPC endpoint, or moto's server for testing).
    #[arg(long)]
    endpoint_url: Option<String>,
    /// Pricing API endpoint (default: the AWS Price List API in us-east-1).
    #[arg(long)]
    pricing_endpoint_url: Option<String>,
    /// Directory the snapshots are written to (<region>.json).
    #[arg(long, default_value = "catalogs")]
    out: PathBuf,
    /// Profiles whose output to compare against out/ after the refresh.
    #[command(flatten)]
    profiles: ProfilePaths,
    /// The out/ to compare with.
    #[arg(long = "out-dir", default_value = "out")]
    out_dir: PathBuf,
    /// Replace the snapshot even though the answer has far fewer types than it (or than a real region has), or
    /// lacks accelerator families it had: for a region that really lost them. An empty answer is refused anyway.
    #[arg(long)]
    accept_shrink: bool,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let Args { regions, endpoint_url, pricing_endpoint_url, out, profiles, out_dir, accept_shrink } = args;
    let _lock = writer_lock(&out_dir)?;
    let mut options = RefreshOptions::new(regions, &out);
    options.endpoint_url = endpoint_url;
    options.pricing_endpoint_url = pricing_endpoint_url;
    options.progress = !crate::cli::quiet();
    options.accept_shrink = accept_shrink;
    // The same clock as the catalog-age warning's: a fixed GPUPLAN_NOW dates the snapshot with it.
    options.clock = Clock::Fixed(now()?);
    let report = refresh(&options).map_err(CliError::msg)?;
    print!("{report}");
    show_impact(&profiles.profile_paths(), &out, &out_dir)?;
    Ok(ExitCode::SUCCESS)
}

/// Which manifests the refreshed catalog changes (only when the profiles are here and compile).
fn show_impact(profiles: &[PathBuf], catalogs: &Path, out_dir: &Path) -> Result<(), CliError> {
    let Some(options) = recompile_options(profiles, catalogs) else { return Ok(()) };
    let compiled = match compile_printing_warnings(&options, u64::MAX) {
        Ok(compiled) => compiled,
        Err(error) => {
            eprintln!("the refreshed catalog does not compile the profiles:\n{}", error.render(color()));
            return Ok(());
        }
    };
    match impact(out_dir, &compiled.output_tree()).map_err(CliError::io("read", out_dir))? {
        OutImpact::Unchanged => println!("no manifest in {} changes", out_dir.display()),
        OutImpact::Changes { markdown } => {
            println!("manifests that change (run `gpuplan compile` or `gpuplan commit` to apply):");
            print!("{markdown}");
        }
    }
    Ok(())
}
