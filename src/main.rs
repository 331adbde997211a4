//! The `gpuplan` command: a thin layer over the library's stages. Exit codes: 0 ok, 1 differences found
//! (`compile --check`, `diff --exit-code`), 2 error.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gpuplan::compile::{compile, CompileError, CompileOptions};
use gpuplan::diagnostic::render_plain;

#[derive(Parser)]
#[command(name = "gpuplan", version, about = "Compile GPU capacity intent (KDL profiles) into validated Karpenter and GPU Operator manifests")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone)]
struct Inputs {
    /// Profile files or directories of *.kdl files.
    #[arg(default_value = "profiles")]
    profiles: Vec<PathBuf>,
    /// Directory of catalog snapshots (<region>.json); us-east-1 is built in.
    #[arg(long, default_value = "catalogs")]
    catalogs: PathBuf,
    /// Directory whose templates replace the built-in ones of the same name.
    #[arg(long)]
    templates: Option<PathBuf>,
}

impl Inputs {
    fn options(&self) -> CompileOptions {
        CompileOptions { profiles: self.profiles.clone(), catalogs_dir: self.catalogs.clone(), templates_dir: self.templates.clone() }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Compile profiles into out/.
    Compile {
        #[command(flatten)]
        inputs: Inputs,
        /// Output directory.
        #[arg(long, default_value = "out")]
        out: PathBuf,
    },
    /// Build or update catalog snapshots.
    #[command(subcommand)]
    Catalog(CatalogCommand),
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
        #[arg(long, default_value = "catalogs")]
        out: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(message) => {
            eprint!("{message}");
            if !message.ends_with('\n') {
                eprintln!();
            }
            ExitCode::from(2)
        }
    }
}

fn compile_error(err: CompileError) -> String {
    match err {
        CompileError::Profiles { diagnostics } => format!("{}error: {}", render_plain(&diagnostics), CompileError::Profiles { diagnostics: diagnostics.clone() }),
        other => format!("error: {other}"),
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        Command::Compile { inputs, out } => {
            let compiled = compile(&inputs.options()).map_err(compile_error)?;
            if !compiled.warnings.is_empty() {
                eprint!("{}", render_plain(&compiled.warnings));
            }
            let files = compiled.files();
            for (path, text) in &files {
                let full = out.join(path);
                std::fs::create_dir_all(full.parent().unwrap()).map_err(|e| e.to_string())?;
                std::fs::write(&full, text).map_err(|e| e.to_string())?;
            }
            eprintln!("wrote {} files to {}", files.len(), out.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Catalog(CatalogCommand::Import { region, instance_types, offerings, prices, out }) => {
            let catalog = gpuplan::import::import(&gpuplan::import::ImportInputs {
                region: region.clone(),
                instance_types,
                offerings,
                on_demand_prices: prices,
            })
            .map_err(|e| format!("error: {e}"))?;
            std::fs::create_dir_all(&out).map_err(|e| format!("error: cannot create {}: {e}", out.display()))?;
            let path = out.join(format!("{region}.json"));
            std::fs::write(&path, catalog.to_json()).map_err(|e| format!("error: cannot write {}: {e}", path.display()))?;
            let gpu = catalog.instance_types.iter().filter(|t| !t.gpus.is_empty() || t.neuron.is_some()).count();
            eprintln!("wrote {} ({} instance types, {} with accelerators, {} zones, digest {})", path.display(), catalog.instance_types.len(), gpu, catalog.zones.len(), catalog.digest());
            Ok(ExitCode::SUCCESS)
        }
    }
}
