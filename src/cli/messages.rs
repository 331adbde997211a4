//! `--message-format`: how diagnostics reach stderr. `human` is miette's report; `github` adds a GitHub Actions
//! workflow command before each report, so the runner shows the diagnostic on the profile line it names;
//! `json` prints one JSON object per diagnostic and line instead, for tools.
//!
//! The workflow command's escaping is actions/toolkit's `packages/core/src/command.ts`: `escapeData` (the message:
//! `%`, CR, LF) and `escapeProperty` (also `:` and `,`). The runner shows at most 10 error and 10 warning
//! annotations per step (actions/toolkit `docs/problem-matchers.md`): past that, the tenth says how many more the
//! log has.

use std::sync::OnceLock;

use gpuplan::diagnostic::ProfileDiagnostic;
use miette::Severity;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum MessageFormat {
    #[default]
    Human,
    Github,
    Json,
}

static FORMAT: OnceLock<MessageFormat> = OnceLock::new();

/// Set once, from the command line, before the command runs.
pub fn set(format: MessageFormat) {
    let _ = FORMAT.set(format);
}

pub fn format() -> MessageFormat {
    *FORMAT.get().unwrap_or(&MessageFormat::Human)
}


/// GitHub's per-step limit for each of errors and warnings.
const ANNOTATIONS_PER_STEP: usize = 10;

/// `diagnostics` as the format prints them on stderr: the human reports (coloured when `color`), with a workflow
/// command before them (github), or JSON lines instead (json).
pub fn render(diagnostics: &[ProfileDiagnostic], color: bool) -> String {
    match machine_lines(diagnostics) {
        None => super::term::render(diagnostics, color),
        Some(lines) if format() == MessageFormat::Json => lines,
        Some(lines) => lines + &super::term::render(diagnostics, color),
    }
}

/// What goes before (github) or instead of (json) the human reports of `diagnostics`; None: the reports alone.
pub fn machine_lines(diagnostics: &[ProfileDiagnostic]) -> Option<String> {
    match format() {
        MessageFormat::Human => None,
        MessageFormat::Json => Some(diagnostics.iter().map(|d| json(d) + "\n").collect()),
        MessageFormat::Github => Some(github_commands(diagnostics)),
    }
}

fn github_commands(diagnostics: &[ProfileDiagnostic]) -> String {
    let mut out = String::new();
    for severity in [Severity::Error, Severity::Warning] {
        let of: Vec<&ProfileDiagnostic> = diagnostics.iter().filter(|d| level(d) == severity).collect();
        let shown = if of.len() > ANNOTATIONS_PER_STEP { ANNOTATIONS_PER_STEP - 1 } else { of.len() };
        for d in &of[..shown] {
            out.push_str(&github(d));
        }
        if of.len() > shown {
            let word = if severity == Severity::Error { "error" } else { "warning" };
            out.push_str(&format!("::{word} title=gpuplan::{} more {word}s: see the log\n", of.len() - shown));
        }
    }
    out
}

fn level(d: &ProfileDiagnostic) -> Severity {
    if d.severity == Severity::Error { Severity::Error } else { Severity::Warning }
}

/// `::error file=…,line=…,col=…,title=E0142::message` (a warning's `::warning`), the help on the next line.
pub fn github(d: &ProfileDiagnostic) -> String {
    let word = if level(d) == Severity::Error { "error" } else { "warning" };
    let (file, line, col) = position(&d.location);
    let message = match &d.help {
        Some(help) => format!("{}\nhelp: {help}", d.message),
        None => d.message.clone(),
    };
    format!(
        "::{word} file={},line={line},col={col},title={}::{}\n",
        escape_property(file),
        escape_property(&d.code.to_string()),
        escape_data(&message)
    )
}

fn json(d: &ProfileDiagnostic) -> String {
    let (file, line, col) = position(&d.location);
    serde_json::json!({
        "severity": if level(d) == Severity::Error { "error" } else { "warning" },
        "code": d.code.to_string(),
        "message": d.message,
        "help": d.help,
        "file": file,
        "line": line.parse::<u64>().ok(),
        "column": col.parse::<u64>().ok(),
    })
    .to_string()
}

/// "profiles/x.kdl:12:5" → ("profiles/x.kdl", "12", "5"); a location without a line keeps it all as the file.
fn position(location: &str) -> (&str, &str, &str) {
    let mut parts = location.rsplitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(col), Some(line), Some(file)) if line.parse::<u64>().is_ok() && col.parse::<u64>().is_ok() => (file, line, col),
        _ => (location, "1", "1"),
    }
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_is_the_toolkits() {
        assert_eq!(escape_data("100% a\r\nb: c, d"), "100%25 a%0D%0Ab: c, d");
        assert_eq!(escape_property("C:\\x,y%"), "C%3A\\x%2Cy%25");
        assert_eq!(position("profiles/a:b.kdl:12:5"), ("profiles/a:b.kdl", "12", "5"));
        assert_eq!(position("catalogs"), ("catalogs", "1", "1"));
    }
}
