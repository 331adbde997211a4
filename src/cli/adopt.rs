//! `gpuplan adopt`: profiles written from existing NodePool / EC2NodeClass YAML, compiled, and a report of what
//! compiling them changes (types, limits, $/h, and where probe or given pods land).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gpuplan::adopt::{self, Adoption, placeholders, report, verify};
use gpuplan::compile::{Compilation, CompileOptions, compile};

use super::{CliError, color, term};

#[derive(clap::Args)]
pub struct Args {
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
    format: report::ReportFormat,
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
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let Args { paths, into, cluster, region, catalogs, format, verify, accept_changes, set, reservations } = args;
    let set = set.iter().map(|s| placeholders::parse_set(s)).collect::<Result<_, _>>().map_err(|e| CliError::Message(format!("--set {e}")))?;
    let reservations = reservations.iter().map(|s| adopt::parse_reservation(s)).collect::<Result<_, _>>().map_err(|e| CliError::Message(format!("--reservation {e}")))?;
    let options = adopt::AdoptOptions { paths, cluster, region, catalogs_dir: catalogs.clone(), set, reservations };
    let adoption = adopt::adopt(&options).map_err(CliError::msg)?;
    // Read before anything is written: a bad pod file stops adopt with nothing written.
    let originals = verify::read(&adoption.texts, &verify).map_err(CliError::msg)?;
    for warning in &adoption.warnings {
        eprintln!("{}", term::paint_prefixes(&warning.to_string(), color()));
    }
    let written = write_profiles(&into, &adoption)?;
    let compiled = compile_adopted(written, catalogs, &into)?;
    let mut report = report::report(&adoption, &compiled);
    let mut verification = verify::verify(&adoption, &compiled, &report.pools, &originals).map_err(CliError::msg)?;
    verification.accepted = accept_changes;
    let changed = verification.changed > 0 && !accept_changes;
    report.verification = Some(verification);
    print!("{}", report::render(&report, format));
    Ok(if changed { ExitCode::from(verify::EXIT_PLACEMENT_CHANGED) } else { ExitCode::SUCCESS })
}

/// Writes the adopted profiles into `into` (replacing files of the same name); their paths.
fn write_profiles(into: &Path, adoption: &Adoption) -> Result<Vec<PathBuf>, CliError> {
    std::fs::create_dir_all(into).map_err(CliError::io("create", into))?;
    let mut written = Vec::new();
    for (name, text) in &adoption.files {
        let path = into.join(name);
        std::fs::write(&path, text).map_err(CliError::io("write", &path))?;
        written.push(path);
    }
    eprintln!("wrote {}", written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "));
    Ok(written)
}

/// Compiled quietly: the report lists the adopted profiles' lint findings under each NodePool.
fn compile_adopted(profiles: Vec<PathBuf>, catalogs_dir: PathBuf, into: &Path) -> Result<Compilation, CliError> {
    let options = CompileOptions { profiles, catalogs_dir, templates_dir: None };
    compile(&options).map_err(|e| {
        let what = format!("the adopted profiles in {} do not compile (edit them, or report a gpuplan bug)", into.display());
        CliError::Then(Box::new(CliError::Compile(e)), what)
    })
}
