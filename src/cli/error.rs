//! What a command fails with. Printed by [`super::exit_code`] (exit 2), every line that starts with `error:` in
//! red when colouring; a compile error brings the profile diagnostics that explain it, rendered first.

use std::fmt::Display;
use std::io;
use std::path::{Path, PathBuf};

use gpuplan::compile::CompileError;
use gpuplan::diagnostic::{ErrorCode, ProfileDiagnostic};
use gpuplan::emit::EmitError;

#[derive(Debug)]
pub enum CliError {
    /// A complete message, printed after `error: ` (it may run over several lines).
    Message(String),
    /// A file or directory that could not be read, written or created: `cannot {what} {path}: {source}`.
    Io { what: &'static str, path: PathBuf, source: io::Error },
    /// The profiles do not compile, or compile to an update the API server refuses.
    Compile(CompileError),
    /// out/ is not written (files there that gpuplan did not generate).
    Emit(EmitError),
    /// The demand file (`gpuplan.demand.kdl`) has errors, or names what the profiles do not define.
    Demand(Vec<ProfileDiagnostic>),
    /// An error, then an `error:` line saying what it means for this command.
    Then(Box<CliError>, String),
}

impl CliError {
    /// Any error whose text is the whole message (`error: {e}`).
    pub fn msg(e: impl Display) -> CliError {
        CliError::Message(e.to_string())
    }

    /// For `map_err`: the error of reading, writing or creating `path`.
    pub fn io(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> CliError {
        let path = path.to_path_buf();
        move |source| CliError::Io { what, path, source }
    }

    /// The text printed (before colouring its prefixes): diagnostics coloured when `color`.
    pub fn render(&self, color: bool) -> String {
        match self {
            CliError::Message(message) => format!("error: {message}"),
            CliError::Io { what, path, source } => format!("error: cannot {what} {}: {source}", path.display()),
            CliError::Compile(err) => {
                let rendered = match err {
                    CompileError::Profiles { diagnostics } => super::messages::render(diagnostics, color),
                    _ => String::new(),
                };
                format!("{rendered}error: {err}")
            }
            CliError::Emit(err) => format!("error: {err}"),
            CliError::Demand(diagnostics) => {
                let errors = diagnostics.iter().filter(|d| d.is_error()).count();
                // The file the first error is in (`--demand` may name another, a CSV beside it may be the one).
                let first = diagnostics.iter().find(|d| d.is_error()).map(|d| d.location.rsplitn(3, ':').last().unwrap_or_default().to_string());
                let file = first.filter(|f| !f.is_empty()).unwrap_or_else(|| gpuplan::forecast::demand::DEMAND_FILE.to_string());
                format!("{}error: {errors} error{} in {file}", super::messages::render(diagnostics, color), if errors == 1 { "" } else { "s" })
            }
            CliError::Then(err, line) => format!("{}\nerror: {line}", err.render(color)),
        }
    }
}

impl CliError {
    /// The error codes of the diagnostics this error prints, each once, in code order.
    pub fn error_codes(&self) -> Vec<ErrorCode> {
        let mut codes: Vec<ErrorCode> = match self {
            CliError::Compile(CompileError::Profiles { diagnostics }) | CliError::Demand(diagnostics) => {
                diagnostics.iter().filter(|d| d.severity == miette::Severity::Error).filter_map(|d| d.code.error()).collect()
            }
            CliError::Then(err, _) => err.error_codes(),
            _ => Vec::new(),
        };
        codes.sort();
        codes.dedup();
        codes
    }
}

impl From<CompileError> for CliError {
    fn from(err: CompileError) -> Self {
        CliError::Compile(err)
    }
}

impl From<EmitError> for CliError {
    fn from(err: EmitError) -> Self {
        CliError::Emit(err)
    }
}
