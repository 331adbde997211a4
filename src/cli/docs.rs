//! What the command line says about itself: `--version` with the catalog digests and shell completions
//! (clap_complete; the man pages are [`super::manual`]'s), all generated from the same clap definition, so they list
//! exactly the subcommands and flags the binary accepts.

use std::path::Path;

use gpuplan::catalog::{Catalog, EMBEDDED_US_EAST_1};

/// `gpuplan 0.1.0` and one line per catalog the binary would compile with: the built-in us-east-1 snapshot, and
/// every `<region>.json` under `catalogs_dir` (which replaces the built-in one of the same region), with the
/// digest that `gpuplan.dev/catalog` annotations carry.
pub fn long_version(catalogs_dir: &Path) -> String {
    let mut lines = vec![env!("CARGO_PKG_VERSION").to_string()];
    if let Ok(builtin) = Catalog::from_json(EMBEDDED_US_EAST_1, Path::new("<built-in>")) {
        lines.push(format!("catalog us-east-1@{} (built in)", builtin.digest()));
    }
    let mut files: Vec<_> = gpuplan::confine::read_dir(catalogs_dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "json")).collect())
        .unwrap_or_default();
    files.sort();
    for path in files {
        let line = match gpuplan::input::read_to_string(&path).map_err(|e| e.to_string()).and_then(|t| Catalog::from_json(&t, &path).map_err(|e| e.to_string())) {
            Ok(catalog) => format!("catalog {}@{} ({})", catalog.region, catalog.digest(), path.display()),
            Err(e) => format!("catalog {}: unreadable: {e}", path.display()),
        };
        lines.push(line);
    }
    lines.join("\n")
}

/// Completion script for `shell` on stdout-bound bytes.
pub fn completions(shell: clap_complete::Shell, command: &mut clap::Command) -> Vec<u8> {
    let mut out = Vec::new();
    let name = command.get_name().to_string();
    clap_complete::generate(shell, command, name, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use crate::cli::Cli;

    /// Every text clap shows of `command` and its arguments (help, long help, possible values' help), named by where
    /// it is shown, for `command` and each subcommand below it.
    fn help_texts(command: &clap::Command, path: &str, out: &mut Vec<(String, String)>) {
        let texts = [command.get_about(), command.get_long_about(), command.get_before_help(), command.get_after_help(), command.get_after_long_help()];
        out.extend(texts.into_iter().flatten().map(|t| (path.to_string(), t.to_string())));
        for arg in command.get_arguments() {
            let at = format!("{path} {}", arg.get_id());
            out.extend([arg.get_help(), arg.get_long_help()].into_iter().flatten().map(|t| (at.clone(), t.to_string())));
            for value in arg.get_possible_values() {
                out.extend(value.get_help().map(|t| (format!("{at}={}", value.get_name()), t.to_string())));
            }
        }
        for sub in command.get_subcommands() {
            help_texts(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    fn without_help(command: &clap::Command, path: &str, out: &mut Vec<String>) {
        for arg in command.get_arguments().filter(|a| !a.is_hide_set() && a.get_help().is_none() && a.get_long_help().is_none()) {
            out.push(format!("{path} {}", arg.get_id()));
        }
        for sub in command.get_subcommands() {
            without_help(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    /// `--help`, the man pages and the book's reference list every argument with its help: none is left blank.
    #[test]
    fn every_argument_has_a_help_text() {
        let mut command = Cli::command();
        command.build();
        let mut missing = Vec::new();
        without_help(&command, "gpuplan", &mut missing);
        assert!(missing.is_empty(), "arguments without a doc comment (their help):\n{}", missing.join("\n"));
    }

    /// A doc comment on a clap field or on a value enum's variant becomes its help; rustdoc's link syntax there
    /// (`` [`Explanation`] ``, `[text](url)`, `[text][ref]`) reaches the terminal as it is. Plain backticks are fine.
    #[test]
    fn help_texts_carry_no_rustdoc_or_markdown_link_syntax() {
        let link = regex::Regex::new(r"\[`[^`\]]*`\]|\[[^\]]*\]\([^)]*\)|\[[^\]]*\]\[[^\]]*\]").unwrap();
        let mut command = Cli::command();
        command.build();
        let mut texts = Vec::new();
        help_texts(&command, "gpuplan", &mut texts);
        assert!(texts.len() > 100, "the walk found only {} help texts", texts.len());
        let leaks: Vec<String> = texts.iter().filter(|(_, text)| link.is_match(text)).map(|(at, text)| format!("{at}: {text}")).collect();
        assert!(leaks.is_empty(), "help texts with rustdoc/markdown link syntax (write plain text or `code` in the doc comment):\n{}", leaks.join("\n"));
    }
}
