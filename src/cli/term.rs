//! Colour on the terminal: `--color auto|always|never` and the `NO_COLOR` convention (https://no-color.org:
//! "when present and not an empty string, prevents the addition of ANSI color"). An explicit `--color always`
//! wins over `NO_COLOR`, as the convention allows ("user-level configuration files and per-instance
//! command-line arguments should override"); `auto` colours only a terminal.

use std::io::IsTerminal;

use gpuplan::diagnostic::ProfileDiagnostic;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// Whether to colour, given the flag, the value of `NO_COLOR` and whether stderr is a terminal.
pub fn use_color(choice: ColorChoice, no_color_env: Option<&str>, is_terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => is_terminal && no_color_env.is_none_or(str::is_empty),
    }
}

/// The decision for this process: the flag, the environment, and stderr (where diagnostics go).
pub fn use_color_here(choice: ColorChoice) -> bool {
    use_color(choice, std::env::var("NO_COLOR").ok().as_deref(), std::io::stderr().is_terminal())
}

/// The same choice for clap's own help and error output.
pub fn clap_color(color: bool) -> clap::ColorChoice {
    if color { clap::ColorChoice::Always } else { clap::ColorChoice::Never }
}

/// Diagnostics as the CLI prints them: miette's unicode theme, coloured or not.
pub fn render(diagnostics: &[ProfileDiagnostic], color: bool) -> String {
    if !color {
        return gpuplan::diagnostic::render_plain(diagnostics);
    }
    let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode());
    let mut out = String::new();
    for d in diagnostics {
        let _ = handler.render_report(&mut out, d);
        out.push('\n');
    }
    out
}

/// `error:` / `warning:` prefixes of plain messages, in red / yellow when colouring.
pub fn paint_prefixes(message: &str, color: bool) -> String {
    if !color {
        return message.to_string();
    }
    message
        .lines()
        .map(|line| {
            if let Some(rest) = line.strip_prefix("error:") {
                format!("\x1b[1;31merror:\x1b[0m{rest}")
            } else if let Some(rest) = line.strip_prefix("warning:") {
                format!("\x1b[1;33mwarning:\x1b[0m{rest}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + if message.ends_with('\n') { "\n" } else { "" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_disables_auto_but_not_always() {
        assert!(use_color(ColorChoice::Auto, None, true));
        assert!(use_color(ColorChoice::Auto, Some(""), true), "an empty NO_COLOR is ignored (no-color.org)");
        assert!(!use_color(ColorChoice::Auto, Some("1"), true));
        assert!(!use_color(ColorChoice::Auto, None, false), "auto never colours a pipe");
        assert!(use_color(ColorChoice::Always, Some("1"), false));
        assert!(!use_color(ColorChoice::Never, None, true));
    }

    #[test]
    fn prefixes_are_painted_only_when_colouring() {
        assert_eq!(paint_prefixes("error: x\nwarning: y\n", false), "error: x\nwarning: y\n");
        assert_eq!(paint_prefixes("error: x", true), "\x1b[1;31merror:\x1b[0m x");
    }
}
