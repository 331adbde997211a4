//! The pages as one Markdown document, the book's command-line reference (docs/src/reference/cli.md): a section per
//! command with what clap knows (usage, about, arguments, defaults, possible values) and the tables' exit codes,
//! environment and examples. Written here rather than with clap-markdown, which renders clap's part alone and
//! nothing of the tables.

use gpuplan::profile::schema::markdown_text;

use super::Page;

pub fn render(pages: &[Page]) -> String {
    let mut out = String::from(
        "# Command-line reference\n\nEvery command, its arguments and defaults, the environment it reads, its exit codes \
         and examples. `gpuplan man COMMAND` prints the same as a man page; `gpuplan COMMAND --help` prints the \
         arguments. The options of `gpuplan` itself (`--color`, `--quiet`, …) work with every command.\n",
    );
    for page in pages {
        out.push_str(&section(page, pages));
    }
    out
}

fn section(page: &Page, pages: &[Page]) -> String {
    let mut command = page.command.clone();
    let usage = command.render_usage().to_string();
    let about = command.get_long_about().or(command.get_about()).map(|a| a.to_string()).unwrap_or_default();
    let mut out = format!("\n## {}\n\n{}\n\nUsage: `{}`\n", page.invocation(), markdown_text(&about), usage.trim().trim_start_matches("Usage: "));
    // A command's page lists its own arguments; the global ones are gpuplan's.
    let (positional, options): (Vec<&clap::Arg>, Vec<&clap::Arg>) =
        command.get_arguments().filter(|a| !a.is_hide_set() && (page.words.is_empty() || !a.is_global_set())).partition(|a| a.is_positional());
    list(&mut out, "Arguments", positional.into_iter().map(argument).collect());
    list(&mut out, "Options", options.into_iter().map(argument).collect());
    let subcommands = command.get_subcommands().filter(|s| !s.is_hide_set());
    let subcommands = subcommands.map(|s| format!("[`{} {}`](#{}-{}): {}", page.invocation(), s.get_name(), page.name(), s.get_name(), markdown_text(&s.get_about().map(|a| a.to_string()).unwrap_or_default()))).collect();
    list(&mut out, "Commands", subcommands);
    list(&mut out, "Exit status", page.exit_status().iter().map(|(code, meaning)| format!("`{code}`: {}", markdown_text(meaning))).collect());
    list(&mut out, "Environment", page.environment().iter().map(|v| format!("`{}`: {}", v.name, markdown_text(v.doc))).collect());
    list(&mut out, "Examples", page.examples().iter().map(|(what, line)| format!("{}: `{line}`", markdown_text(what))).collect());
    let see_also: Vec<String> = page.see_also(pages).iter().map(|name| format!("[{}](#{name})", name.replace('-', " "))).collect();
    out.push_str(&format!("\nSee also: {}.\n", see_also.join(", ")));
    out
}

/// `**Title**` and a bulleted list, when there is something to list.
fn list(out: &mut String, title: &str, items: Vec<String>) {
    if items.is_empty() {
        return;
    }
    out.push_str(&format!("\n**{title}**\n\n"));
    for item in items {
        out.push_str(&format!("- {item}\n"));
    }
}

/// One argument: how it is written, its help, its default and its possible values.
fn argument(arg: &clap::Arg) -> String {
    let help = arg.get_long_help().or(arg.get_help()).map(|h| h.to_string()).unwrap_or_default();
    let mut item = format!("`{}`", written(arg));
    if !help.is_empty() {
        // clap drops a one-sentence help's full stop; the default and values follow as sentences.
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        let stop = if help.ends_with('.') { "" } else { "." };
        item.push_str(&format!(": {}{stop}", markdown_text(&help)));
    }
    let defaults: Vec<String> = arg.get_default_values().iter().map(|v| format!("`{}`", v.to_string_lossy())).collect();
    if !defaults.is_empty() && arg.get_action().takes_values() {
        item.push_str(&format!(" Default: {}.", defaults.join(", ")));
    }
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| match v.get_help() {
            Some(help) => format!("`{}` ({})", v.get_name(), markdown_text(&help.to_string())),
            None => format!("`{}`", v.get_name()),
        })
        .collect();
    if !values.is_empty() && arg.get_action().takes_values() {
        item.push_str(&format!(" Values: {}.", values.join(", ")));
    }
    item
}

/// `-q, --quiet`, `--out <OUT>`, `[PROFILES]...`.
fn written(arg: &clap::Arg) -> String {
    let names: Vec<String> = arg.get_value_names().map(|n| n.iter().map(|n| n.to_string()).collect()).unwrap_or_else(|| vec![arg.get_id().to_string().to_uppercase()]);
    let many = if arg.get_num_args().is_some_and(|n| n.max_values() > 1) { "..." } else { "" };
    if arg.is_positional() {
        let (open, close) = if arg.is_required_set() { ("<", ">") } else { ("[", "]") };
        return format!("{open}{}{close}{many}", names.join(" "));
    }
    let flags: Vec<String> = arg.get_short().map(|s| format!("-{s}")).into_iter().chain(arg.get_long().map(|l| format!("--{l}"))).collect();
    let mut written = flags.join(", ");
    if arg.get_action().takes_values() {
        written.push_str(&format!(" <{}>{many}", names.join("> <")));
    }
    written
}
