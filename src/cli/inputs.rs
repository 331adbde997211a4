//! What every command that compiles reads (profiles, catalogs, templates), and the compile itself as the command
//! line runs it: warnings rendered on stderr, and a warning for a catalog older than `--max-catalog-age-days`.

use std::path::PathBuf;

use gpuplan::compile::{Compilation, CompileOptions, compile};

use super::{CliError, color, term};

#[derive(clap::Args, Clone)]
pub struct Inputs {
    #[command(flatten)]
    pub profiles: ProfilePaths,
    #[command(flatten)]
    pub data: Data,
}

/// The profiles a command reads: the same positional PATHS on every command that reads profiles (compile, diff,
/// commit, lint, explain, catalog refresh).
#[derive(clap::Args, Clone, Default)]
pub struct ProfilePaths {
    /// Profile files or directories of *.kdl files [default: profiles]
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// The PATHS, as a flag: explain and catalog refresh took them so before they were positional (scripts and
    /// older copies of the action still pass it). Hidden: PATHS is the one documented way.
    #[arg(long = "profiles", hide = true, value_name = "PATHS")]
    pub legacy_flag: Vec<PathBuf>,
}

impl ProfilePaths {
    /// The profile files and directories to compile: PATHS and `--profiles` together, else `profiles`. The one place
    /// the default is decided.
    pub fn profile_paths(&self) -> Vec<PathBuf> {
        let given: Vec<PathBuf> = self.paths.iter().chain(&self.legacy_flag).cloned().collect();
        if given.is_empty() { vec![PathBuf::from("profiles")] } else { given }
    }
}

/// Catalogs and templates (shared by every command that compiles).
#[derive(clap::Args, Clone)]
pub struct Data {
    /// Directory of catalog snapshots (<region>.json); us-east-1 is built in.
    #[arg(long, default_value = "catalogs")]
    pub catalogs: PathBuf,
    /// Directory whose templates replace the built-in ones of the same name.
    #[arg(long)]
    pub templates: Option<PathBuf>,
    /// Warn when a catalog's newest data is older than this many days.
    #[arg(long, default_value_t = 30)]
    pub max_catalog_age_days: u64,
}

impl Inputs {
    pub fn compile(&self) -> Result<Compilation, CliError> {
        self.data.compile(&self.profiles.profile_paths())
    }

    /// The profile files and directories to compile ([`ProfilePaths::profile_paths`]).
    pub fn profile_paths(&self) -> Vec<PathBuf> {
        self.profiles.profile_paths()
    }
}

impl Data {
    /// Compiles `profiles` with these catalogs and templates, printing the warnings.
    pub fn compile(&self, profiles: &[PathBuf]) -> Result<Compilation, CliError> {
        let options = CompileOptions { profiles: profiles.to_vec(), catalogs_dir: self.catalogs.clone(), templates_dir: self.templates.clone() };
        compile_printing_warnings(&options, self.max_catalog_age_days)
    }
}

/// Compiles, then prints the compilation's warnings and those of catalogs older than `max_catalog_age_days`.
pub fn compile_printing_warnings(options: &CompileOptions, max_catalog_age_days: u64) -> Result<Compilation, CliError> {
    let compiled = compile(options)?;
    print_warnings(&compiled);
    // The one place the wall clock is read: a warning on stderr, never anything in out/.
    for catalog in compiled.catalogs.values() {
        if let Some(days) = catalog.age_days(std::time::SystemTime::now()).filter(|d| *d > max_catalog_age_days) {
            eprintln!(
                "warning: the {} catalog's newest data is {days} days old ({}); run `gpuplan catalog refresh --region {}` (threshold: --max-catalog-age-days {})",
                catalog.region,
                catalog.newest_fetch().unwrap_or("?"),
                catalog.region,
                max_catalog_age_days
            );
        }
    }
    Ok(compiled)
}

fn print_warnings(compiled: &Compilation) {
    // Rendered on every core (miette lays each out over its source: ~300k instructions, 4% of a large compile), a
    // batch at a time: 10,000 profiles' warnings are 9 MB of text. A stderr that cannot be written loses the
    // warnings, not the compile.
    use rayon::prelude::*;
    let color = color();
    // Not locked across the rendering: a worker that panicked could not print its message.
    let mut stderr = std::io::BufWriter::new(std::io::stderr());
    if let Some(lines) = super::messages::machine_lines(&compiled.warnings) {
        let _ = std::io::Write::write_all(&mut stderr, lines.as_bytes());
        if super::messages::format() == super::messages::MessageFormat::Json {
            return;
        }
    }
    for batch in compiled.warnings.chunks(256) {
        let rendered: Vec<String> = batch.par_iter().map(|w| term::render(std::slice::from_ref(w), color)).collect();
        for text in rendered {
            let _ = std::io::Write::write_all(&mut stderr, text.as_bytes());
        }
    }
}
