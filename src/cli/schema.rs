//! `gpuplan schema`: the profile language reference, from the parser's own table, then the repository config's.

use std::process::ExitCode;

use gpuplan::profile::schema;

use super::CliError;

#[derive(clap::Args)]
pub struct Args {
    /// text, json (for editors and tools) or markdown.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    /// The book's reference/profile.md.
    Markdown,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    print!("{}", match args.format {
        Format::Text => {
            let mut text = schema::render_text();
            schema::render_nodes(&mut text, gpuplan::profile::config::CONFIG_NODES);
            text
        }
        Format::Json => schema::render_json(),
        Format::Markdown => schema::render_markdown(),
    });
    Ok(ExitCode::SUCCESS)
}
