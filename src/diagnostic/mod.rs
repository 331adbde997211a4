//! Diagnostics that point at the user's profile text, rustc/miette style: file:line:col, the offending span,
//! what is wrong and what to do.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use miette::{Diagnostic, SourceSpan};

/// The table of error codes: summary, explanation and failing example of each.
pub mod codes;
pub use codes::{DiagnosticCode, ErrorCode, Example};
/// How a profile's path is written into generated files.
pub mod repository_paths;

/// A byte range in one of the loaded profile files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    pub file: usize,
    pub offset: usize,
    pub len: usize,
}

impl Span {
    pub fn new(file: usize, span: SourceSpan) -> Span {
        Span { file, offset: span.offset(), len: span.len() }
    }
}

/// A value from the profile together with where it was written (or, for a preset default, where the preset
/// was named).
#[derive(Debug, Clone, PartialEq)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(value: T, span: Span) -> Spanned<T> {
        Spanned { value, span }
    }
}

impl<T> std::ops::Deref for Spanned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// The profile files of one compile, so that spans can be turned back into file:line:col.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// (path as the user typed it, for diagnostics; its repository path, for generated files; the text and its lines)
    files: Vec<(PathBuf, String, Source)>,
}

impl Sources {
    /// A file as given on the command line, its repository path (see [`repository_paths::RepositoryPaths`]; resolved by the caller, which
    /// resolves many on every core) and its text.
    pub fn add(&mut self, path: &Path, source_name: String, text: String) -> usize {
        let source = Source { name: path.display().to_string(), text: Arc::new(text), lines: Arc::default(), snippet: true };
        self.files.push((path.to_path_buf(), source_name, source));
        self.files.len() - 1
    }

    /// The path as given on the command line: what diagnostics show, so the user finds the file they typed.
    pub fn path(&self, file: usize) -> &Path {
        &self.files[file].0
    }

    /// The path written into generated files (`gpuplan.dev/source`, headers): see [`repository_paths::RepositoryPaths`].
    pub fn source_name(&self, file: usize) -> &str {
        &self.files[file].1
    }

    pub fn text(&self, file: usize) -> &str {
        &self.files[file].2.text
    }

    /// "profiles/x.kdl:12:5" for a span, 1-based like rustc.
    pub fn location(&self, span: Span) -> String {
        let source = &self.files[span.file].2;
        let (line, start) = source.line_of(span.offset);
        let col = source.text[start..span.offset.min(source.text.len())].chars().count() + 1;
        format!("{}:{}:{col}", self.path(span.file).display(), line + 1)
    }

    /// The exact text a span covers.
    pub fn snippet(&self, span: Span) -> &str {
        let text = self.text(span.file);
        text.get(span.offset..(span.offset + span.len).min(text.len())).unwrap_or("")
    }

    /// Builds a diagnostic pointing at `span`.
    pub fn error(&self, span: Span, code: impl Into<DiagnosticCode>, message: impl Into<String>) -> ProfileDiagnostic {
        let mut src = self.files[span.file].2.clone();
        src.snippet = src.lines_around(span).len() <= MAX_SNIPPET_BYTES;
        ProfileDiagnostic {
            code: code.into(),
            message: message.into(),
            location: self.location(span),
            src,
            span: SourceSpan::new(span.offset.into(), span.len),
            label: String::from("here"),
            help: None,
            severity: miette::Severity::Error,
        }
    }
}

/// Longest source excerpt a diagnostic quotes: the lines its span covers, beyond which it shows only file:line:col
/// and the message (a 50 MB label value on one line is not echoed to stderr).
pub const MAX_SNIPPET_BYTES: usize = 4096;

/// A profile's text as diagnostics quote it. Lines are indexed once per file, so each of many diagnostics finds its
/// line by binary search: miette's own `SourceCode` for a string counts lines from the start of the text on every
/// diagnostic, which made printing 20,000 errors from one file quadratic (10 s).
#[derive(Debug, Clone)]
pub struct Source {
    name: String,
    text: Arc<String>,
    /// The byte offset of each line's start, computed on first use.
    lines: Arc<std::sync::OnceLock<Vec<usize>>>,
    /// Whether the diagnostic shows the source at all (see [`MAX_SNIPPET_BYTES`]).
    snippet: bool,
}

impl Source {
    /// The file's name as diagnostics show it.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn line_starts(&self) -> &[usize] {
        self.lines.get_or_init(|| std::iter::once(0).chain(self.text.match_indices('\n').map(|(i, _)| i + 1)).collect())
    }

    /// The 0-based line holding byte `offset`, and where that line starts.
    fn line_of(&self, offset: usize) -> (usize, usize) {
        let starts = self.line_starts();
        let line = starts.partition_point(|&s| s <= offset).saturating_sub(1);
        (line, starts[line])
    }

    /// The whole lines a span touches.
    fn lines_around(&self, span: Span) -> &str {
        let (_, start) = self.line_of(span.offset);
        let end = self.text[(span.offset + span.len).min(self.text.len())..].find('\n').map_or(self.text.len(), |e| span.offset + span.len + e);
        &self.text[start..end]
    }
}

impl miette::SourceCode for Source {
    /// miette's own reading of the text, started a few lines above the span instead of at the top, then moved back
    /// to the span's place in the file.
    fn read_span<'a>(&'a self, span: &SourceSpan, before: usize, after: usize) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let (line, _) = self.line_of(span.offset());
        let first = line.saturating_sub(before);
        let base = self.line_starts()[first];
        let local = SourceSpan::new((span.offset() - base).into(), span.len());
        let contents = self.text.as_bytes()[base..].read_span(&local, before, after)?;
        let data = contents.data();
        let at = SourceSpan::new((contents.span().offset() + base).into(), contents.span().len());
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            data,
            at,
            contents.line() + first,
            contents.column(),
            contents.line_count() + first,
        )))
    }
}

/// One problem in a profile. `code` is stable (an [`ErrorCode`] or a lint rule's; tests and users grep for it); `location` is
/// file:line:col.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{location}: {message}")]
pub struct ProfileDiagnostic {
    pub code: DiagnosticCode,
    pub message: String,
    pub location: String,
    pub src: Source,
    pub span: SourceSpan,
    pub label: String,
    pub help: Option<String>,
    pub severity: miette::Severity,
}

impl ProfileDiagnostic {
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn warning(mut self) -> Self {
        self.severity = miette::Severity::Warning;
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == miette::Severity::Error
    }
}

impl Diagnostic for ProfileDiagnostic {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(self.severity)
    }
    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.help.as_ref().map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.src.snippet.then_some(&self.src as &dyn miette::SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        if !self.src.snippet {
            return None;
        }
        Some(Box::new(std::iter::once(miette::LabeledSpan::new_primary_with_span(
            Some(self.label.clone()),
            self.span,
        ))))
    }
}

/// "did you mean `x`?" for a misspelt name, when one of `known` is close enough.
pub fn did_you_mean<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Option<String> {
    // The edit distance costs len(word) × len(known): a 50 MB word is no misspelling, and would take minutes.
    if word.len() > 256 {
        return None;
    }
    known
        .into_iter()
        .map(|k| (strsim::damerau_levenshtein(word, k), k))
        .filter(|(distance, k)| *distance <= 2.max(k.len() / 3))
        .min()
        .map(|(_, k)| format!("did you mean `{k}`?"))
}

/// One diagnostic per cause: the first of those that share a code, a span and a fix (help). A setting of a pool is
/// inherited by each NodePool (tier) the pool renders, and a check over NodePools raises its cause once per NodePool,
/// naming the NodePool but asking for the same fix at the same profile line: the user reads it once. Two diagnostics
/// at one line that ask for different fixes (two pools the one budget cannot pay for, each with the budget it needs)
/// are two causes and both stay. rustc's emitter deduplicates likewise, by span and message.
pub fn one_per_cause(diagnostics: Vec<ProfileDiagnostic>) -> Vec<ProfileDiagnostic> {
    let mut seen = std::collections::HashSet::new();
    diagnostics.into_iter().filter(|d| seen.insert((d.code, d.src.name().to_string(), d.span.offset(), d.span.len(), d.help.clone()))).collect()
}

/// The help for a name outside a known set: "did you mean `x`?" when one is close (by edit distance, ignoring case),
/// then the whole set ("presets: a, b, c"), so the reader sees both the likely fix and every choice.
pub fn did_you_mean_among(word: &str, known: &[&str], set: &str) -> String {
    let lower: Vec<String> = known.iter().map(|k| k.to_lowercase()).collect();
    let close = did_you_mean(&word.to_lowercase(), lower.iter().map(String::as_str))
        .and_then(|_| known.iter().zip(&lower).min_by_key(|(_, l)| strsim::damerau_levenshtein(&word.to_lowercase(), l)).map(|(k, _)| format!("did you mean `{k}`? ")));
    format!("{}{set}: {}", close.unwrap_or_default(), known.join(", "))
}

/// Renders diagnostics the way the CLI prints them (no colour, so tests and CI logs read the same).
pub fn render_plain(diagnostics: &[ProfileDiagnostic]) -> String {
    let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor());
    let mut out = String::new();
    for d in diagnostics {
        let _ = handler.render_report(&mut out, d);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod one_per_cause_tests {
    use super::*;

    /// Repeats of one cause (same code, line and fix, the NodePool named differently) are one; two fixes asked at one
    /// line are two causes; another code at the same line is another cause.
    #[test]
    fn one_per_cause_keeps_one_per_code_span_and_fix() {
        let mut sources = Sources::default();
        let file = sources.add(Path::new("p.kdl"), "p.kdl".into(), "budget usd-per-hour=20\n".into());
        let span = Span { file, offset: 7, len: 15 };
        let d = |code: ErrorCode, message: &str, help: &str| sources.error(span, code, message).help(help.to_string());
        let kept = one_per_cause(vec![
            d(ErrorCode::E0140, "pool `a-spot`", "relax it"),
            d(ErrorCode::E0140, "pool `a-on-demand`", "relax it"),
            d(ErrorCode::E0142, "pool `big`", "raise the budget to $55.14/h"),
            d(ErrorCode::E0142, "pool `mid`", "raise the budget to $82.69/h"),
        ]);
        let messages: Vec<&str> = kept.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, ["pool `a-spot`", "pool `big`", "pool `mid`"]);
    }
}
