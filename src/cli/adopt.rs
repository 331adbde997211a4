//! `gpuplan adopt`: profiles written from existing NodePool / EC2NodeClass YAML, compiled, and a report of what
//! compiling them changes (types, limits, $/h, and where probe or given pods land).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gpuplan::adopt::{self, placeholders, report, verify};
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
    /// Directory of catalog snapshots (<region>.json); us-east-1 is built in.
    #[arg(long, default_value = "catalogs")]
    catalogs: PathBuf,
    /// How the report is printed: table, markdown or json.
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
    /// Fill a placeholder of the inputs with a value; repeat for each. NAME is what is written between the
    /// placeholder's delimiters, surrounding spaces (and Helm's `-` trim markers) trimmed: `$CLUSTER_NAME`,
    /// `${CLUSTER_NAME}`, `<<CLUSTER_NAME>>` → CLUSTER_NAME; Terraform `${module.eks.cluster_name}` →
    /// module.eks.cluster_name, `${join(",", var.azs)}` → 'join(",", var.azs)'; Helm `{{ .Values.clusterName }}` →
    /// .Values.clusterName (the delimiters may be written too: '${var.region}=us-east-1'). NAME ends at the first `=`
    /// outside quotes and brackets; every place with that name is filled. A shell's `$VAR`/`${VAR}` in
    /// spec.userData is the script's own and is left alone (Terraform's and Helm's there are filled), and
    /// placeholders in YAML comments need no value. Adopt stops, writing nothing, while a placeholder has no value
    /// (each is listed at file:line:col) or the input holds a Helm control structure or Terraform directive (render
    /// the template first). `NAME=@FILE` takes the value from FILE; a value of several lines continues at the
    /// placeholder's column (as Terraform's `indent` and Helm's `nindent` place a block).
    #[arg(long, value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// What the capacity reservation (ODCR or Capacity Block) of a reserved NodePool holds, when its EC2NodeClass
    /// selects it by id or tags and the NodePool does not say (adopt asks for it by name): NODEPOOL=INSTANCES, or by
    /// NodePool or reservation id with its instance type, ID=TYPExCOUNT (`×` too, e.g. cr-0123456789abcdef0=p5.48xlarge×2);
    /// repeat for each.
    #[arg(long = "reservation", value_name = "NODEPOOL|ID=[TYPEx]COUNT")]
    reservations: Vec<String>,
    /// Let gpuplan choose the types (its `best-value` selection: only the pool's accelerator kind, types within
    /// price-ratio-max of the cheapest $/accelerator-hour, minValues 2 on a spot pool's families) instead of keeping
    /// exactly the types each original admits; the report lists what that changes and its $/h.
    #[arg(long)]
    optimize: bool,
    /// Files or directories holding the EC2NodeClasses (or Auto Mode NodeClasses) of NodePools given without theirs
    /// (only classes are read from them). Without them such a NodePool is adopted with a placeholder cluster block and
    /// verified against a stand-in class, which the report names.
    #[arg(long, value_name = "PATH", num_args = 1..)]
    classes: Vec<PathBuf>,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let Args { paths, into, cluster, region, catalogs, format, verify, accept_changes, set, reservations, optimize, classes } = args;
    let set = set.iter().map(|s| set_value(s)).collect::<Result<_, _>>()?;
    let reservations = reservations.iter().map(|s| adopt::parse_reservation(s)).collect::<Result<_, _>>().map_err(|e| CliError::Message(format!("--reservation {e}")))?;
    let options = adopt::AdoptOptions { paths, cluster, region, catalogs_dir: catalogs.clone(), set, reservations, optimize, classes };
    let adoption = adopt::adopt(&options).map_err(CliError::msg)?;
    // Read before anything is written: a bad pod file stops adopt with nothing written.
    let originals = verify::read(&adoption.texts, &adoption.class_texts, &verify).map_err(CliError::msg)?;
    for warning in &adoption.warnings {
        super::inform(term::paint_prefixes(&warning.to_string(), color()));
    }
    // A failed compile or verification takes the written files back: a failed adopt leaves `into` as it was.
    let written = adopt::write::Written::new(&into, &adoption.files).map_err(|(e, path)| CliError::io("write", &path)(e))?;
    let compiled = compile_adopted(written.paths(), catalogs, &into)?;
    let mut report = report::report(&adoption, &compiled);
    let mut verification = verify::verify(&adoption, &compiled, &report.pools, &originals).map_err(CliError::msg)?;
    written.keep();
    verification.accepted = accept_changes;
    let changed = (verification.changed > 0 || verification.fields_unexplained > 0) && !accept_changes;
    report.verification = Some(verification);
    print!("{}", report::render(&report, format));
    Ok(if changed { ExitCode::from(verify::EXIT_PLACEMENT_CHANGED) } else { ExitCode::SUCCESS })
}

/// One `--set NAME=VALUE`; `NAME=@FILE` takes the value from FILE (a block of YAML a template inserts).
fn set_value(arg: &str) -> Result<(String, String), CliError> {
    let (name, value) = placeholders::parse_set(arg).map_err(|e| CliError::Message(format!("--set {e}")))?;
    match value.strip_prefix('@') {
        Some(file) => Ok((name, std::fs::read_to_string(file).map_err(CliError::io("read", Path::new(file)))?)),
        None => Ok((name, value)),
    }
}

/// Compiled quietly: the report lists the adopted profiles' lint findings under each NodePool.
fn compile_adopted(profiles: Vec<PathBuf>, catalogs_dir: PathBuf, into: &Path) -> Result<Compilation, CliError> {
    let options = CompileOptions { profiles, catalogs_dir, templates_dir: None };
    compile(&options).map_err(|e| {
        let what = format!("the adopted profiles do not compile, so adopt took back what it wrote into {} (the errors above show the lines; report it as a gpuplan bug)", into.display());
        CliError::Then(Box::new(CliError::Compile(e)), what)
    })
}
