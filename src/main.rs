//! The `gpuplan` command: a thin layer over the library's stages. Exit codes: 0 ok, 1 differences or findings
//! (`compile --check`, `diff --exit-code`, `lint --deny-warnings`), 2 error, 3 a `diff --fail-on` policy denies the
//! change.
//!
//! Each command is a file of [`cli`] holding its arguments and a short `run`; this file only parses the command
//! line, hands each command to its `run`, and turns the result into the exit code.

#![deny(clippy::too_many_lines)]

mod bounded_memory;
mod cli;

use std::process::ExitCode;

use cli::Command;

fn main() -> ExitCode {
    if let Err(err) = bounded_memory::install() {
        eprintln!("error: {err}");
        return ExitCode::from(2);
    }
    let cli = cli::parse();
    let result = match cli.command {
        Command::Init(args) => cli::init::run(args),
        Command::Compile(args) => cli::compile::run(args),
        Command::Diff(args) => cli::diff::run(args),
        Command::Commit(args) => cli::commit::run(args),
        Command::Lint(args) => cli::lint::run(args),
        Command::Explain(args) => cli::explain::run(args),
        Command::Simulate(args) => cli::simulate::run(args),
        Command::Forecast(args) => cli::forecast::run(args),
        Command::Catalog(command) => cli::catalog::run(command),
        Command::Completions(args) => cli::completions::run(args),
        Command::Man(args) => cli::man::run(args),
        Command::Schema(args) => cli::schema::run(args),
        Command::Adopt(args) => cli::adopt::run(args),
        Command::ExplainError(args) => cli::explain_error::run(args),
    };
    cli::exit_code(result)
}
