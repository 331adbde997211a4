//! The manual, one page per command, generated from the clap definition the parser uses plus [`tables`] (exit codes,
//! environment, examples): as man pages ([`roff`], `gpuplan man`) and as the book's command-line reference
//! ([`markdown`], `gpuplan man --format markdown`), so neither can list a flag the binary does not have.

pub mod markdown;
pub mod roff;
pub mod tables;

use clap::CommandFactory;

use super::Cli;

/// One command's page: `gpuplan`, `gpuplan compile`, `gpuplan catalog refresh`.
pub struct Page {
    /// The words after `gpuplan`: empty for gpuplan itself.
    pub words: Vec<String>,
    /// The command, built (global arguments propagated, names set).
    pub command: clap::Command,
}

impl Page {
    /// The page's name, as `--out-dir` writes it and SEE ALSO refers to it: `gpuplan-catalog-refresh`.
    pub fn name(&self) -> String {
        std::iter::once("gpuplan").chain(self.words.iter().map(String::as_str)).collect::<Vec<_>>().join("-")
    }

    /// The command line that runs it: `gpuplan catalog refresh`.
    pub fn invocation(&self) -> String {
        std::iter::once("gpuplan").chain(self.words.iter().map(String::as_str)).collect::<Vec<_>>().join(" ")
    }

    /// The key of [`tables`]: `catalog refresh`, "" for gpuplan.
    pub fn key(&self) -> String {
        self.words.join(" ")
    }

    pub fn exit_status(&self) -> &'static [(u8, &'static str)] {
        lookup(tables::EXIT_STATUS, &self.key())
    }

    pub fn examples(&self) -> &'static [(&'static str, &'static str)] {
        lookup(tables::EXAMPLES, &self.key())
    }

    /// The environment variables this command reads (every one, on gpuplan's own page).
    pub fn environment(&self) -> Vec<&'static tables::EnvVar> {
        let key = self.key();
        tables::ENVIRONMENT.iter().filter(|v| key.is_empty() || v.commands.is_empty() || v.commands.contains(&key.as_str())).collect()
    }

    /// The pages SEE ALSO names: gpuplan's (from a command's), the parent command's and the subcommands'; all of
    /// them are in `pages`.
    pub fn see_also(&self, pages: &[Page]) -> Vec<String> {
        let parent = &self.words[..self.words.len().saturating_sub(1)];
        pages
            .iter()
            .filter(|p| p.words != self.words)
            .filter(|p| p.words.is_empty() || p.words == parent || (p.words.len() == self.words.len() + 1 && p.words.starts_with(&self.words)))
            .map(Page::name)
            .collect()
    }
}

fn lookup<T: ?Sized>(table: &'static [(&'static str, &'static T)], key: &str) -> &'static T
where
    &'static T: Default,
{
    table.iter().find(|(k, _)| *k == key).map(|(_, v)| *v).unwrap_or_default()
}

/// Every command's page: gpuplan's first, then each command and its subcommands, depth first, in clap's order.
/// Hidden commands and clap's `help` have none.
pub fn pages() -> Vec<Page> {
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    let mut pages = Vec::new();
    collect(root, Vec::new(), &mut pages);
    pages
}

fn collect(command: clap::Command, words: Vec<String>, pages: &mut Vec<Page>) {
    let subcommands: Vec<clap::Command> = command.get_subcommands().filter(|s| !s.is_hide_set()).cloned().collect();
    pages.push(Page { words: words.clone(), command });
    for sub in subcommands {
        let mut words = words.clone();
        words.push(sub.get_name().to_string());
        collect(sub, words, pages);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command added to clap without its exit codes or examples fails here, naming what to add.
    #[test]
    fn every_command_has_exit_status_and_examples() {
        let missing: Vec<String> = pages()
            .iter()
            .flat_map(|p| {
                let mut missing = Vec::new();
                if p.exit_status().is_empty() {
                    missing.push(format!("`{}`: add its exit codes to EXIT_STATUS (key {:?})", p.invocation(), p.key()));
                }
                if p.examples().is_empty() {
                    missing.push(format!("`{}`: add an example to EXAMPLES (key {:?})", p.invocation(), p.key()));
                }
                missing
            })
            .collect();
        assert!(missing.is_empty(), "src/cli/manual/tables.rs lacks entries:\n{}", missing.join("\n"));
    }

    /// Every table entry is a command clap knows (a renamed or removed command leaves none behind).
    #[test]
    fn every_table_entry_is_a_command() {
        let keys: Vec<String> = pages().iter().map(Page::key).collect();
        let stale: Vec<&str> = tables::EXIT_STATUS.iter().map(|(k, _)| *k).chain(tables::EXAMPLES.iter().map(|(k, _)| *k)).filter(|k| !keys.iter().any(|c| c == k)).collect();
        let env: Vec<&str> = tables::ENVIRONMENT.iter().flat_map(|v| v.commands.iter().copied()).filter(|k| !keys.iter().any(|c| c == k)).collect();
        assert!(stale.is_empty() && env.is_empty(), "entries for commands clap does not know: {stale:?} {env:?}");
    }

    /// The gpuplan command lines of the examples, without the shell around them (a pipe, `&&`, `<(…)`, a variable).
    fn example_commands() -> Vec<Vec<String>> {
        let mut out = Vec::new();
        for (_, examples) in tables::EXAMPLES {
            for (_, line) in examples.iter() {
                for part in line.split("&&").flat_map(|p| p.split('|')) {
                    let Some(at) = part.find("gpuplan ") else { continue };
                    out.push(shell_words(part[at..].trim().trim_end_matches(')')));
                }
            }
        }
        out
    }

    /// Words as a shell splits them, for the examples' simple quoting (double quotes, no escapes).
    fn shell_words(line: &str) -> Vec<String> {
        line.split('"').enumerate().flat_map(|(i, part)| if i % 2 == 1 { vec![part.to_string()] } else { part.split_whitespace().map(str::to_string).collect() }).collect()
    }

    #[test]
    fn every_example_is_a_command_line_the_parser_accepts() {
        let commands = example_commands();
        assert!(commands.len() >= tables::EXAMPLES.len(), "{commands:?}");
        let refused: Vec<String> = commands
            .iter()
            .filter_map(|words| Cli::command().try_get_matches_from(words).err().map(|e| format!("{}: {e}", words.join(" "))))
            .collect();
        assert!(refused.is_empty(), "examples the parser refuses:\n{}", refused.join("\n"));
    }
}
