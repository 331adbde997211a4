//! The command line: one file per command, each holding its clap `Args` and a short `run` that calls the
//! library's stages and prints what they return. Nothing here decides what gpuplan generates; the library never
//! imports this module (it lives in the binary crate, as ripgrep's `crates/core` does), and what it needs from
//! here, such as the colour choice, is passed down as a value.
//!
//! Shared by the commands: [`inputs`] (profiles, catalogs, templates, and the compile that prints its warnings),
//! [`lock`] (the one-writer lock of out/), [`error`] (what a command fails with, printed after `error:`),
//! [`term`] (colour), [`docs`] (`--version`, completions) and [`manual`] (man pages and the command-line reference).

pub mod adopt;
pub mod catalog;
pub mod commit;
pub mod compile;
pub mod completions;
pub mod diff;
pub mod docs;
pub mod error;
pub mod explain;
pub mod explain_error;
pub mod forecast;
pub mod init;
pub mod inputs;
pub mod lint;
pub mod lock;
pub mod man;
pub mod manual;
pub mod messages;
pub mod schema;
pub mod simulate;
pub mod term;

use std::path::Path;
use std::process::ExitCode;
use std::sync::OnceLock;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

pub use error::CliError;
use term::ColorChoice;

#[derive(Parser)]
#[command(name = "gpuplan", version, about = "Compile GPU capacity intent (KDL profiles) into validated Karpenter and GPU Operator manifests")]
pub struct Cli {
    /// Colour diagnostics and help: auto (a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_enum, global = true, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// Seconds a writer (compile, commit, catalog refresh) waits for another one writing the same out/ before it
    /// gives up with exit 2 (default: GPUPLAN_LOCK_TIMEOUT, else 60).
    #[arg(long, global = true, value_name = "SECONDS")]
    lock_timeout: Option<u64>,
    /// How diagnostics are printed on stderr: human; github (a GitHub Actions annotation before each, shown on the
    /// profile line it names); json (one object per line instead).
    #[arg(long, value_enum, global = true, default_value_t = messages::MessageFormat::Human)]
    message_format: messages::MessageFormat,
    /// Print only errors and what the command is for (its stdout; lint's findings): no warnings (the catalog-age
    /// warning included), notes, progress or status lines such as `wrote out`. Exit codes are unchanged.
    #[arg(short, long, global = true)]
    quiet: bool,
    /// The repository root: every path gpuplan reads or writes stays inside it (default: the top of the git work
    /// tree holding the working directory, else the working directory). Paths in gpuplan.kdl and the demand file
    /// must stay inside it; a path typed on the command line may name a directory outside it (a shared catalog
    /// directory), and what is under that directory must stay under it.
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<std::path::PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Write a commented starter profile (profiles/<name>.kdl) from a preset, that compiles as written.
    Init(init::Args),
    /// Compile profiles into out/ (or, with --check, exit 1 and print the diff if out/ is stale).
    Compile(compile::Args),
    /// Show what compile would change in out/.
    Diff(diff::Args),
    /// Compile, then commit exactly the changed files under out/ (and changed catalog snapshots) in one commit.
    Commit(commit::Args),
    /// Run the misconfiguration checks (also run by compile, as warnings).
    Lint(lint::Args),
    /// Explain the plan: candidates ranked by price, what each constraint removed, limits, weights, costs.
    Explain(explain::Args),
    /// Simulate Karpenter's provisioning: where would these pods go, on these NodePools, at what cost.
    Simulate(simulate::Args),
    /// Forecast what the clusters will cost under the demand file's demand: replayed over days through Karpenter's
    /// provisioning and disruption, per cluster, profile, NodePool and workload.
    Forecast(forecast::Args),
    /// Browse the catalog (list, show), or build or update its snapshots (import, refresh).
    #[command(subcommand)]
    Catalog(catalog::Command),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions(completions::Args),
    /// Print a man page (roff) on stdout: `gpuplan man compile` is gpuplan-compile(1); `--out-dir` writes them all.
    Man(man::Args),
    /// Print the profile language reference: every node and property with types, defaults and docs (the
    /// parser's own table).
    Schema(schema::Args),
    /// Write profiles expressing existing NodePool / EC2NodeClass YAML, and report what compiling them changes.
    Adopt(adopt::Args),
    /// Explain an error code (E0142): what is wrong, how to fix it, and a failing example.
    ExplainError(explain_error::Args),
}

/// Whether this process colours its stderr (decided once from --color, NO_COLOR and the terminal).
static COLOR: OnceLock<bool> = OnceLock::new();

/// The colour decision [`parse`] made.
pub fn color() -> bool {
    *COLOR.get().unwrap_or(&false)
}

/// `--quiet`, set once before the command runs.
static QUIET: OnceLock<bool> = OnceLock::new();

/// Whether only errors and the command's own output are printed (`--quiet`).
pub fn quiet() -> bool {
    *QUIET.get().unwrap_or(&false)
}

/// A warning, note, progress or status line on stderr, unless `--quiet`.
pub fn inform(line: impl std::fmt::Display) {
    if !quiet() {
        eprintln!("{line}");
    }
}

/// `--lock-timeout`, set once before the command runs.
static LOCK_TIMEOUT: OnceLock<Option<u64>> = OnceLock::new();

/// The command line, parsed (clap exits on `--help`, `--version` and usage errors), with the colour decided.
pub fn parse() -> Cli {
    // --color decides clap's own colours too, so it is read before clap parses (NO_COLOR likewise).
    let flag = std::env::args_os().find_map(|a| a.to_str().and_then(|a| a.strip_prefix("--color=")).map(str::to_string));
    let choice = match flag.as_deref() {
        Some("always") => ColorChoice::Always,
        Some("never") => ColorChoice::Never,
        _ => ColorChoice::Auto,
    };
    let color = term::use_color_here(choice);
    let mut command = Cli::command().color(term::clap_color(color));
    // Before anything is read, the repository config included.
    confine().unwrap_or_else(|error| {
        let _ = exit_code(Err(error));
        std::process::exit(2)
    });
    command = inputs::with_repository_defaults(command).unwrap_or_else(|error| {
        let _ = exit_code(Err(error));
        std::process::exit(2)
    });
    // The catalog digests are computed only when asked for: reading and hashing every catalog costs more than the
    // rest of a small compile. Clap wants a 'static str, and this runs at most once per process.
    if std::env::args_os().skip(1).any(|a| a == "--version") {
        command = command.long_version(&*Box::leak(docs::long_version(Path::new("catalogs")).into_boxed_str()));
    }
    let cli = Cli::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    let _ = COLOR.set(term::use_color_here(cli.color));
    let _ = LOCK_TIMEOUT.set(cli.lock_timeout);
    let _ = QUIET.set(cli.quiet);
    messages::set(cli.message_format);
    cli
}

/// Installs the confinement ([`gpuplan::confine`]): the root from `--root` (read before clap parses, since the
/// repository config is read to decide clap's defaults), the command line's words as what it may name outside.
fn confine() -> Result<(), CliError> {
    let words: Vec<String> = std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    let explicit = words.iter().enumerate().find_map(|(i, w)| match w.strip_prefix("--root") {
        Some("") => words.get(i + 1).cloned(),
        Some(v) => v.strip_prefix('=').map(str::to_string),
        None => None,
    });
    let cwd = std::env::current_dir().map_err(CliError::io("read", Path::new(".")))?;
    let root = gpuplan::confine::find_root(&cwd, explicit.as_deref().map(Path::new));
    gpuplan::confine::install(&root, words).map_err(CliError::io("read", &root))?;
    Ok(())
}

/// The process's exit code: the command's, or 2 after printing its error (`error:` in red when colouring).
pub fn exit_code(result: Result<ExitCode, CliError>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(error) => {
            let message = error.render(color());
            eprint!("{}", term::paint_prefixes(&message, color()));
            if !message.ends_with('\n') {
                eprintln!();
            }
            if messages::format() == messages::MessageFormat::Human {
                explain_error::note(&error.error_codes());
            }
            ExitCode::from(2)
        }
    }
}
