//! `gpuplan catalog`: build ([`import`]) or update ([`refresh`]) the catalog snapshots.

pub mod import;
pub mod refresh;

use std::process::ExitCode;

use super::CliError;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Import DescribeInstanceTypes JSON, zone offerings and an on-demand price table into catalogs/<region>.json.
    Import(import::Args),
    /// Refresh catalogs/<region>.json from the EC2 API (DescribeInstanceTypes, offerings, spot price history) and the
    /// AWS Price List, with the standard AWS credential chain; then show which manifests the new prices change.
    Refresh(refresh::Args),
}

pub fn run(command: Command) -> Result<ExitCode, CliError> {
    match command {
        Command::Import(args) => import::run(args),
        Command::Refresh(args) => refresh::run(args),
    }
}
