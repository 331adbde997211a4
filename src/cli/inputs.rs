//! What every command that compiles reads (profiles, catalogs, templates), and the compile itself as the command
//! line runs it: warnings rendered on stderr, and a warning for a catalog older than `--max-catalog-age-days`.

use std::path::PathBuf;

use gpuplan::compile::{Compilation, CompileOptions, compile};

use super::{CliError, color, term};

#[derive(clap::Args, Clone)]
pub struct Inputs {
    /// Profile files or directories of *.kdl files.
    #[arg(default_value = "profiles")]
    pub profiles: Vec<PathBuf>,
    #[command(flatten)]
    pub data: Data,
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
        self.data.compile(&self.profiles)
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
            super::messages::notice(&format!(
                "warning: the {} catalog's newest data is {days} days old ({}); run `gpuplan catalog refresh --region {}` (threshold: --max-catalog-age-days {})",
                catalog.region,
                catalog.newest_fetch().unwrap_or("?"),
                catalog.region,
                max_catalog_age_days
            ));
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
