//! `gpuplan explain-error E0142`: an error code's entry of the error index, as `rustc --explain` prints one: the
//! summary, the explanation and the failing example (src/diagnostic/codes.rs, one table). `--all` prints the whole
//! index, the book's reference/errors.md, where each example runs in a directory of its own.

use std::process::ExitCode;

use gpuplan::diagnostic::ErrorCode;

use super::CliError;

#[derive(clap::Args)]
pub struct Args {
    /// The code, as diagnostics print it (E0142; e0142 and 0142 work too).
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    code: Option<String>,
    /// Print every code's entry: the error index as Markdown (the book's reference/errors.md).
    #[arg(long)]
    all: bool,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    match args.code {
        Some(code) => print!("{}", entry(parse(&code)?)),
        None => print!("{}", index()),
    }
    Ok(ExitCode::SUCCESS)
}

/// One code's entry: a `## E0142` heading (the index's anchor `#e0142`), the summary, the explanation, the example.
pub fn entry(code: ErrorCode) -> String {
    format!("## {code}\n\n**{}**\n\n{}\n\n### Example\n\n{}\n", code.summary(), code.explanation(), code.example_markdown())
}

/// The error index: every entry, each example's files and command moved into a directory named after its code, so
/// that the book's tests, which run a page's examples one after another in one directory, run each on its own files
/// (and expect its command to fail: `console,exit=2`).
pub fn index() -> String {
    let mut out = String::from(
        "# Error index\n\nEvery error code gpuplan's diagnostics carry: what is wrong, how to fix it, and an example that \
         fails with it. `gpuplan explain-error E0142` prints one entry. Each example runs in a directory of its own \
         (`e0142/`), as the book's tests run it.\n",
    );
    for code in ErrorCode::ALL {
        out.push('\n');
        out.push_str(&in_own_directory(&entry(*code), &code.as_str().to_lowercase()));
    }
    out
}

/// `entry` with its example's file paths under `dir/`, its commands run there, and its console block expected to
/// fail (exit 2).
pub fn in_own_directory(entry: &str, dir: &str) -> String {
    let (head, example) = entry.split_once("\n### Example\n").unwrap_or((entry, ""));
    let mut out = format!("{head}\n### Example\n");
    // An example without files (a missing profile) makes its directory itself.
    let has_files = example.lines().any(|l| l.starts_with("```") && l.trim().contains(' '));
    let enter = if has_files { format!("cd {dir}") } else { format!("mkdir {dir} && cd {dir}") };
    let mut in_block = false;
    for line in example.split_inclusive('\n') {
        let rewritten = match line.strip_prefix("```") {
            Some(info) if !in_block && info.trim() == "console" => "```console,exit=2\n".to_string(),
            Some(info) if !in_block => match info.trim().split_once(' ') {
                Some((language, path)) => format!("```{language} {dir}/{path}\n"),
                None => line.to_string(),
            },
            _ => match line.strip_prefix("$ ") {
                Some(command) if in_block => format!("$ ({enter} && {})\n", command.trim_end()),
                _ => line.to_string(),
            },
        };
        if line.starts_with("```") {
            in_block = !in_block;
        }
        out.push_str(&rewritten);
    }
    out
}

/// The code `input` names: `E0142`, `e0142`, `0142` or `142`; an unknown one is an error naming the nearest codes.
pub fn parse(input: &str) -> Result<ErrorCode, CliError> {
    let upper = input.trim().to_uppercase();
    let digits = upper.strip_prefix('E').unwrap_or(&upper);
    let normal = if !digits.is_empty() && digits.len() <= 4 && digits.bytes().all(|b| b.is_ascii_digit()) { format!("E{digits:0>4}") } else { upper.clone() };
    if let Some(code) = ErrorCode::parse(&normal) {
        return Ok(code);
    }
    // The nearest by spelling, then by number: a code one digit off gets the codes one digit away, closest first.
    let number = |code: &str| code.trim_start_matches('E').parse::<i64>().unwrap_or(0);
    let mut near: Vec<(usize, i64, &str)> =
        ErrorCode::ALL.iter().map(|c| (strsim::levenshtein(c.as_str(), &normal), (number(c.as_str()) - number(&normal)).abs(), c.as_str())).filter(|(d, _, _)| *d <= 2).collect();
    near.sort();
    let suggestions: Vec<&str> = near.iter().take(3).map(|(_, _, c)| *c).collect();
    let first = ErrorCode::ALL[0];
    let last = ErrorCode::ALL[ErrorCode::ALL.len() - 1];
    let hint = match suggestions.as_slice() {
        [] => format!("the codes run from {first} to {last}: `gpuplan explain-error --all` prints them all"),
        [one] => format!("did you mean {one}?"),
        many => format!("did you mean one of {}?", many.join(", ")),
    };
    Err(CliError::Message(format!("unknown error code `{}`; {hint}", input.trim())))
}

/// After a run's errors (human format, not `--quiet`): where the codes they carry are explained, once per run.
pub fn note(codes: &[ErrorCode]) {
    let line = match codes {
        [] => return,
        [code] => format!("note: `gpuplan explain-error {code}` explains this code"),
        [code, others @ ..] => {
            let others: Vec<&str> = others.iter().map(|c| c.as_str()).collect();
            format!("note: `gpuplan explain-error {code}` explains this code (likewise {})", others.join(", "))
        }
    };
    super::inform(line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_read_in_any_case_with_or_without_its_e() {
        let code = ErrorCode::E0142.as_str();
        for input in [code.to_string(), code.to_lowercase(), "0142".into(), "142".into(), format!(" {code} ")] {
            assert_eq!(parse(&input).ok(), Some(ErrorCode::E0142), "{input}");
        }
    }

    #[test]
    fn an_unknown_code_names_the_nearest_known_ones() {
        // Lower case: src/ names no code outside the table (tests/error_codes.rs).
        let CliError::Message(message) = parse("e0144").unwrap_err() else { panic!() };
        assert!(message.starts_with("unknown error code `e0144`; did you mean one of E0143, E0142, E0141?"), "{message}");
        let CliError::Message(message) = parse("nonsense").unwrap_err() else { panic!() };
        assert!(message.contains("the codes run from E0001 to"), "{message}");
    }

    #[test]
    fn an_example_without_files_makes_its_directory() {
        let book = in_own_directory(&entry(ErrorCode::E0001), "e0001");
        assert!(book.contains("$ (mkdir e0001 && cd e0001 && gpuplan compile profiles/ml.kdl)\n"), "{book}");
    }

    #[test]
    fn the_index_runs_each_example_in_the_directory_of_its_code() {
        let book = in_own_directory(&entry(ErrorCode::E0142), "e0142");
        assert!(book.contains("```kdl e0142/profiles/ml.kdl\n"), "{book}");
        assert!(book.contains("```console,exit=2\n$ (cd e0142 && gpuplan compile)\nE0142\n"), "{book}");
        assert!(book.starts_with("## E0142\n\n**a limit is too small for one node**\n"), "{book}");
    }
}
