//! `gpuplan man`: the man pages (roff), generated from the same clap definition as the parser (see
//! [`super::manual`]): gpuplan(1), `gpuplan man compile` gpuplan-compile(1), `--out-dir` every page;
//! `--format markdown` the book's command-line reference.

use std::path::PathBuf;
use std::process::ExitCode;

use super::manual::{self, Page};
use super::CliError;

#[derive(clap::Args)]
pub struct Args {
    /// The command whose page to print (`compile`, `catalog refresh`); none: gpuplan(1).
    command: Vec<String>,
    /// Write every page into this directory instead (gpuplan.1, gpuplan-compile.1, gpuplan-catalog-refresh.1, …).
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    out_dir: Option<PathBuf>,
    /// roff (a man page) or markdown (every page as one document: the book's reference/cli.md).
    #[arg(long, value_enum, default_value_t = Format::Roff, conflicts_with_all = ["command", "out_dir"])]
    format: Format,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Roff,
    Markdown,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let pages = manual::pages();
    if args.format == Format::Markdown {
        print!("{}", manual::markdown::render(&pages));
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(dir) = args.out_dir {
        std::fs::create_dir_all(&dir).map_err(CliError::io("create", &dir))?;
        for page in &pages {
            let path = dir.join(format!("{}.1", page.name()));
            std::fs::write(&path, manual::roff::render(page, &pages).map_err(CliError::msg)?).map_err(CliError::io("write", &path))?;
        }
        super::inform(format!("wrote {} man pages into {}", pages.len(), dir.display()));
        return Ok(ExitCode::SUCCESS);
    }
    let page = pages.iter().find(|p| p.words == args.command).ok_or_else(|| unknown(&args.command, &pages))?;
    std::io::Write::write_all(&mut std::io::stdout(), &manual::roff::render(page, &pages).map_err(CliError::msg)?).map_err(CliError::msg)?;
    Ok(ExitCode::SUCCESS)
}

fn unknown(words: &[String], pages: &[Page]) -> CliError {
    let known: Vec<String> = pages.iter().filter(|p| !p.words.is_empty()).map(Page::key).collect();
    let asked = words.join(" ");
    let hint = gpuplan::diagnostic::did_you_mean(&asked, known.iter().map(String::as_str)).map(|h| format!("{h} ")).unwrap_or_default();
    CliError::Message(format!("no man page for `{asked}`; {hint}the commands are: {}", known.join(", ")))
}
