//! `gpuplan init`: a commented starter profile from a preset, that compiles as written.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::builder::{PossibleValue, PossibleValuesParser};
use gpuplan::catalog::Catalog;
use gpuplan::profile::starter::{Starter, StarterOptions, default_name};
use gpuplan::profile::Preset;

use super::CliError;

#[derive(clap::Args)]
pub struct Args {
    /// The directory to write in (your platform repository): profiles/<name>.kdl goes under it. Default: the
    /// profiles directory compile reads (the repository root's, from any subdirectory, or gpuplan.kdl's `profiles`).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The preset the starter's pool uses (`gpuplan schema` says what each sets).
    #[arg(long, default_value = "inference-spot", value_parser = presets())]
    preset: String,
    /// The profile's name and file name (default: from the preset: inference, training, batch, gpu, tiered).
    #[arg(long)]
    name: Option<String>,
    /// The EKS cluster's name (the cluster block, out/<cluster>/, the discovery tag and node role).
    #[arg(long, default_value = "my-cluster")]
    cluster: String,
    /// The AWS region; its catalog gives the cluster's zones (us-east-1 is built in, others need
    /// <catalogs>/<region>.json).
    #[arg(long, default_value = "us-east-1")]
    region: String,
    /// Directory of catalog snapshots (relative to --dir when it is given).
    #[arg(long, default_value = "catalogs")]
    catalogs: PathBuf,
    /// Overwrite the profile if it exists.
    #[arg(long)]
    force: bool,
}

/// The presets, from the parser's table, each with what it makes (shown by `init --help`).
fn presets() -> PossibleValuesParser {
    PossibleValuesParser::new(Preset::NAMES.iter().map(|name| {
        let preset = Preset::parse(name).expect("every name in Preset::NAMES parses");
        PossibleValue::new(*name).help(gpuplan::profile::starter::preset_summary(preset))
    }))
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let preset = Preset::parse(&args.preset).expect("clap accepts only Preset::NAMES");
    let catalogs = args.dir.as_ref().map_or_else(|| args.catalogs.clone(), |dir| dir.join(&args.catalogs));
    let catalog = Catalog::load(&catalogs, &args.region).map_err(CliError::msg)?;
    let options = StarterOptions { preset, name: args.name.clone(), cluster: args.cluster.clone() };
    let starter = Starter::new(&options, &catalog).map_err(CliError::msg)?;
    let written = write_starter(args.dir.as_deref(), &starter, args.force)?;
    for path in &written {
        println!("wrote {} (preset {}, cluster {} in {})", path.display(), preset.as_str(), args.cluster, args.region);
    }
    let name = args.name.as_deref().unwrap_or(default_name(preset));
    println!("next:");
    if let Some(dir) = args.dir.as_ref().filter(|dir| *dir != Path::new(".")) {
        println!("  cd {}", dir.display());
    }
    println!("  gpuplan compile            # write the manifests to out/{}/", args.cluster);
    println!("  gpuplan explain {name:<10} # why these instance types, limits and costs");
    println!("  gpuplan lint               # the misconfiguration checks");
    Ok(ExitCode::SUCCESS)
}

/// Writes every file of the starter under `dir`, or none: an existing file is refused (exit 2, named) unless
/// `force`, before anything is written. Returns the paths written, as the user names them (`dir` joined). Without
/// `dir`, a profile goes into the profiles directory compile reads (found from a subdirectory as compile finds it).
fn write_starter(dir: Option<&Path>, starter: &Starter, force: bool) -> Result<Vec<PathBuf>, CliError> {
    let paths: Vec<PathBuf> = starter.files.iter().map(|file| placed(dir, &file.path)).collect();
    let existing: Vec<String> = paths.iter().filter(|path| path.exists()).map(|path| path.display().to_string()).collect();
    if !existing.is_empty() && !force {
        return Err(CliError::Message(format!(
            "{} already exists, nothing written; pass --force to overwrite it, or --name to write another profile",
            existing.join(", ")
        )));
    }
    for path in &paths {
        gpuplan::confine::check_write(path).map_err(CliError::io("write", path))?;
    }
    for (file, path) in starter.files.iter().zip(&paths) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(CliError::io("create", parent))?;
        }
        std::fs::write(path, &file.text).map_err(CliError::io("write", path))?;
    }
    Ok(paths)
}

/// Where a starter file written as `profiles/<name>.kdl` goes: under `dir` when given (`./profiles/x.kdl` reads worse
/// than the path the user will type, so `.` adds nothing), else into the profiles directory compile reads.
fn placed(dir: Option<&Path>, file: &Path) -> PathBuf {
    match dir {
        Some(dir) if dir == Path::new(".") => file.to_path_buf(),
        Some(dir) => dir.join(file),
        None => match file.strip_prefix("profiles") {
            Ok(name) => super::inputs::default_profiles_dir().join(name),
            Err(_) => file.to_path_buf(),
        },
    }
}
