//! What every command that compiles reads (profiles, catalogs, templates), and the compile itself as the command
//! line runs it: warnings rendered on stderr, and a warning for a catalog older than `--max-catalog-age-days`.
//! Where the defaults come from: the repository config `gpuplan.kdl`, found from any subdirectory
//! ([`with_repository_defaults`]).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use gpuplan::compile::{Compilation, CompileOptions, compile_with_config};
use gpuplan::profile::config::{parse_config, Config, CONFIG_FILE};

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
        if !given.is_empty() {
            return given;
        }
        // PATHS has no clap default (it and `--profiles` are one list): the repository config's is applied here.
        default_profiles()
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
    /// Warn when a catalog's newest data is older than this many days (counted to GPUPLAN_NOW, an RFC 3339 time,
    /// when set, else to the wall clock).
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

/// The repository config this run found (set by [`with_repository_defaults`]): its shared clusters are compiled
/// with the profiles.
static CONFIG_PATH: OnceLock<Option<PathBuf>> = OnceLock::new();

/// The profile paths the repository config names (relative to the working directory), for PATHS left empty.
static DEFAULT_PROFILES: OnceLock<Vec<String>> = OnceLock::new();

/// The profile paths compile reads when given none: the repository's (from any subdirectory), else `profiles`.
fn default_profiles() -> Vec<PathBuf> {
    DEFAULT_PROFILES.get().map_or_else(|| vec![PathBuf::from("profiles")], |configured| configured.iter().map(PathBuf::from).collect())
}

/// The first of [`default_profiles`]: where `init` writes.
pub fn default_profiles_dir() -> PathBuf {
    default_profiles().swap_remove(0)
}

/// The repository root this run found (set by [`with_repository_defaults`]), relative to the working directory:
/// where the files that are not profiles live (`gpuplan.demand.kdl`). The working directory outside a repository.
static ROOT: OnceLock<PathBuf> = OnceLock::new();

/// The repository root, as a path relative to the working directory (`.` at the root, `..` one level below).
pub fn repository_root() -> PathBuf {
    ROOT.get().cloned().unwrap_or_else(|| PathBuf::from("."))
}

/// The repository config this run found, if any.
pub fn config_path() -> Option<&'static Path> {
    CONFIG_PATH.get().and_then(Option::as_deref)
}

/// The repository root for `dir` and its config: the nearest ancestor holding a `gpuplan.kdl`; else the top of the
/// git work tree when it holds a `profiles/` directory (a repository that never needed a config still works from
/// any subdirectory). Never above the top of the git repository holding `dir`: a config in a directory above it,
/// such as the home directory, is not this repository's. Outside any git repository only `dir` itself is looked at,
/// so a stray `gpuplan.kdl` in /tmp or the home directory never takes over a run below it.
pub fn find_root(dir: &Path) -> Option<(PathBuf, Option<PathBuf>)> {
    let top = gpuplan::confine::git_top(dir);
    for ancestor in dir.ancestors().take(if top.is_some() { usize::MAX } else { 1 }) {
        let candidate = ancestor.join(CONFIG_FILE);
        if candidate.is_file() {
            return Some((ancestor.to_path_buf(), Some(candidate)));
        }
        if Some(ancestor) == top {
            return ancestor.join("profiles").is_dir().then(|| (ancestor.to_path_buf(), None));
        }
    }
    None
}

/// The command line with its defaults resolved for this repository: flags > environment > `gpuplan.kdl` > built-in.
/// When the repository root ([`find_root`]) is found from the working directory, each default that names a repository path (every
/// argument whose built-in default is `profiles`, `out` or `catalogs`, in any command) becomes the config's setting or
/// the built-in one, relative to the config's directory and written relative to the working directory (`../out` from
/// `profiles/`), so a run from any subdirectory reads and writes what a run from the root does; likewise `--templates`
/// and `--max-catalog-age-days`. Paths typed on the command line stay relative to the working directory. Outside a
/// repository root, nothing changes: paths are relative to the working directory, as they always were. Rewriting clap's
/// defaults (rather than each command's values) keeps every command's arguments as they are and `--help` true.
pub fn with_repository_defaults(command: clap::Command) -> Result<clap::Command, CliError> {
    let cwd = std::env::current_dir().map_err(CliError::io("read", Path::new(".")))?;
    let Some((root, found)) = find_root(&cwd) else {
        let _ = CONFIG_PATH.set(None);
        return Ok(command);
    };
    // The root is an ancestor of the working directory: one `..` per level between them.
    let depth = cwd.components().count() - root.components().count();
    let _ = ROOT.set(if depth == 0 { PathBuf::from(".") } else { std::iter::repeat_n("..", depth).collect() });
    let from_root = |written: &str| -> String {
        if Path::new(written).is_absolute() || depth == 0 {
            return written.to_string();
        }
        let mut relative: PathBuf = std::iter::repeat_n("..", depth).collect();
        relative.push(written.trim_start_matches("./"));
        relative.display().to_string()
    };
    let config = match found {
        Some(_) => {
            // Named as the user can reach it from here, as the profiles' diagnostics name theirs.
            let path = PathBuf::from(from_root(CONFIG_FILE));
            let _ = CONFIG_PATH.set(Some(path.clone()));
            let mut sources = gpuplan::diagnostic::Sources::default();
            // A config with errors leaves the built-in defaults: `--help`, `man` and `explain-error` (to read about
            // the config's own error) still work, and every command that compiles reports the errors at their lines.
            let Some(config) = parse_config(&path, &mut sources).0 else { return Ok(command) };
            config
        }
        None => {
            let _ = CONFIG_PATH.set(None);
            Config::default()
        }
    };
    let setting = |value: &Option<gpuplan::diagnostic::Spanned<String>>, builtin: &str| from_root(value.as_ref().map_or(builtin, |v| v.value.as_str()));
    let profiles: Vec<String> = if config.profiles.is_empty() { vec![from_root("profiles")] } else { config.profiles.iter().map(|p| from_root(&p.value)).collect() };
    let _ = DEFAULT_PROFILES.set(profiles.clone());
    let defaults = RepositoryDefaults {
        by_builtin: vec![("profiles", profiles), ("out", vec![setting(&config.out, "out")]), ("catalogs", vec![setting(&config.catalogs, "catalogs")])],
        by_id: by_id(&config, &from_root),
    };
    Ok(defaults.apply(command))
}

/// The settings without a built-in path default, by argument id: `--templates`, `--max-catalog-age-days`.
fn by_id(config: &Config, from_root: &dyn Fn(&str) -> String) -> Vec<(&'static str, String)> {
    let mut settings = Vec::new();
    if let Some(templates) = &config.templates {
        settings.push(("templates", from_root(&templates.value)));
    }
    if let Some(days) = &config.max_catalog_age_days {
        settings.push(("max_catalog_age_days", days.value.to_string()));
    }
    settings
}

/// New defaults for clap's arguments: by the built-in default they replace, and by argument id.
struct RepositoryDefaults {
    by_builtin: Vec<(&'static str, Vec<String>)>,
    by_id: Vec<(&'static str, String)>,
}

impl RepositoryDefaults {
    /// `command` and its subcommands, at any depth, with the new defaults.
    fn apply(&self, mut command: clap::Command) -> clap::Command {
        let mut changes: Vec<(clap::Id, Vec<String>)> = Vec::new();
        for arg in command.get_arguments() {
            let builtin: Vec<&str> = arg.get_default_values().iter().filter_map(|v| v.to_str()).collect();
            let replaced = self.by_id.iter().find(|(id, _)| arg.get_id() == id).map(|(_, v)| vec![v.clone()]);
            let replaced = replaced.or_else(|| self.by_builtin.iter().find(|(b, _)| builtin == [*b]).map(|(_, v)| v.clone()));
            // A single-valued argument (adopt --into) takes the first of a list setting (`profiles "a" "b"`).
            let multiple = matches!(arg.get_action(), clap::ArgAction::Append) || arg.get_num_args().is_some_and(|n| n.max_values() > 1);
            let replaced = replaced.map(|values| if multiple { values } else { values.into_iter().take(1).collect() });
            changes.extend(replaced.map(|values| (arg.get_id().clone(), values)));
        }
        for (id, values) in changes {
            // Clap keeps 'static defaults; this runs once per process.
            let values: Vec<&'static str> = values.into_iter().map(|v| &*Box::leak(v.into_boxed_str())).collect();
            command = command.mut_arg(id, |arg| arg.default_values(values));
        }
        let names: Vec<String> = command.get_subcommands().map(|s| s.get_name().to_string()).collect();
        for name in names {
            command = command.mut_subcommand(name, |sub| self.apply(sub));
        }
        command
    }
}

/// Compiles, then prints the compilation's warnings and those of catalogs older than `max_catalog_age_days`.
pub fn compile_printing_warnings(options: &CompileOptions, max_catalog_age_days: u64) -> Result<Compilation, CliError> {
    let now = now()?;
    let compiled = compile_with_config(options, config_path())?;
    print_warnings(&compiled);
    // The clock only ever reaches a warning on stderr, never anything in out/.
    for catalog in compiled.catalogs.values() {
        if let Some(days) = catalog.age_days(now).filter(|d| *d > max_catalog_age_days) {
            super::inform(format!(
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

/// The environment variable that fixes the wall clock (RFC 3339, `2026-11-27T00:00:00Z`).
pub const NOW_ENV: &str = "GPUPLAN_NOW";

/// The wall clock, or `GPUPLAN_NOW` when set: the docs' examples and the tests fix it so that the catalog-age
/// warning and the pull-request comment's catalog age do not depend on the day they run. A value that is not
/// RFC 3339 is a usage error rather than silently the wall clock.
pub fn now() -> Result<std::time::SystemTime, CliError> {
    let Some(value) = std::env::var_os(NOW_ENV) else { return Ok(std::time::SystemTime::now()) };
    let value = value.to_string_lossy();
    time::OffsetDateTime::parse(&value, &time::format_description::well_known::Rfc3339)
        .map(std::time::SystemTime::from)
        .map_err(|e| CliError::msg(format!("{NOW_ENV}={value:?} is not an RFC 3339 time such as 2026-11-27T00:00:00Z: {e}")))
}

fn print_warnings(compiled: &Compilation) {
    // Rendered on every core (miette lays each out over its source: ~300k instructions, 4% of a large compile), a
    // batch at a time: 10,000 profiles' warnings are 9 MB of text. A stderr that cannot be written loses the
    // warnings, not the compile.
    use rayon::prelude::*;
    let color = color();
    // Not locked across the rendering: a worker that panicked could not print its message.
    let mut stderr = std::io::BufWriter::new(std::io::stderr());
    // The machine lines (GitHub annotations, JSON) are CI's output, not chatter: -q keeps them, without the reports.
    if let Some(lines) = super::messages::machine_lines(&compiled.warnings) {
        let _ = std::io::Write::write_all(&mut stderr, lines.as_bytes());
        if super::messages::format() == super::messages::MessageFormat::Json || super::quiet() {
            return;
        }
    }
    if super::quiet() {
        return;
    }
    for batch in compiled.warnings.chunks(256) {
        let rendered: Vec<String> = batch.par_iter().map(|w| term::render(std::slice::from_ref(w), color)).collect();
        for text in rendered {
            let _ = std::io::Write::write_all(&mut stderr, text.as_bytes());
        }
    }
}
