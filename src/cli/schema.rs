//! `gpuplan schema`: the profile language reference, from the parser's own table.

use std::process::ExitCode;

use gpuplan::profile::schema;

use super::CliError;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    print!("{}", match args.format {
        Format::Text => schema::render_text(),
        Format::Json => schema::render_json(),
    });
    Ok(ExitCode::SUCCESS)
}
