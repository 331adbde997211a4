//! `gpuplan lint`: the misconfiguration checks, on the compiled objects and optionally on objects read from a
//! running cluster.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use gpuplan::compile::Compilation;
use gpuplan::report::lint::{lint_on, with_cluster_objects};

use super::inputs::Inputs;
use super::{CliError, color};

#[derive(clap::Args)]
pub struct Args {
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
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let compiled = args.inputs.compile()?;
    // The findings are what lint is for: --quiet hid them with the compile's other warnings, so they are shown here.
    if super::quiet() && !compiled.warnings.is_empty() {
        eprint!("{}", super::messages::render(&compiled.warnings, color()));
    }
    let count = compiled.warnings.len() + lint_cluster_objects(&compiled, &args.manifests, args.cluster)?;
    super::inform(format!("{count} finding{}", if count == 1 { "" } else { "s" }));
    Ok(if args.deny_warnings && count > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// `lint --manifests`: the findings on the compiled objects of one cluster together with objects read from it, those
/// the compile did not already print; how many.
fn lint_cluster_objects(compiled: &Compilation, manifests: &[PathBuf], cluster: Option<String>) -> Result<usize, CliError> {
    if manifests.is_empty() {
        return Ok(0);
    }
    let cluster = which_cluster(compiled, cluster)?;
    let objects = with_cluster_objects(&cluster, compiled.manifests(), manifests).map_err(CliError::msg)?;
    let printed: BTreeSet<(&str, &str, &str)> = compiled.warnings.iter().map(|w| (w.code.as_str(), w.message.as_str(), w.location.as_str())).collect();
    let new: Vec<_> = lint_on(compiled, &objects).into_iter().filter(|d| !printed.contains(&(d.code.as_str(), d.message.as_str(), d.location.as_str()))).collect();
    if !new.is_empty() {
        eprint!("{}", super::messages::render(&new, color()));
    }
    Ok(new.len())
}

/// The cluster `--manifests` come from: `--cluster`, or the only one the profiles define.
fn which_cluster(compiled: &Compilation, cluster: Option<String>) -> Result<String, CliError> {
    let names: Vec<&str> = compiled.plan.clusters.iter().map(|c| c.name.as_str()).collect();
    match (cluster, names.as_slice()) {
        (Some(c), _) if names.contains(&c.as_str()) => Ok(c),
        (Some(c), _) => Err(CliError::Message(format!("--cluster {c}: the profiles define cluster(s) {}", names.join(", ")))),
        (None, [only]) => Ok(only.to_string()),
        (None, _) => Err(CliError::Message(format!("--manifests needs --cluster: the profiles define clusters {}", names.join(", ")))),
    }
}
