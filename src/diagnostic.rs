//! Diagnostics that point at the user's profile text, rustc/miette style: file:line:col, the offending span,
//! what is wrong and what to do.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use miette::{Diagnostic, NamedSource, SourceSpan};

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
    /// (path as the user typed it, for diagnostics; its repository path, for generated files; the text)
    files: Vec<(PathBuf, String, Arc<String>)>,
}

impl Sources {
    /// A file as given on the command line, its [`repository_path`] (resolved by the caller, which resolves many on
    /// every core) and its text.
    pub fn add(&mut self, path: &Path, source_name: String, text: String) -> usize {
        self.files.push((path.to_path_buf(), source_name, Arc::new(text)));
        self.files.len() - 1
    }

    /// The path as given on the command line: what diagnostics show, so the user finds the file they typed.
    pub fn path(&self, file: usize) -> &Path {
        &self.files[file].0
    }

    /// The path written into generated files (`gpuplan.dev/source`, headers): see [`repository_path`].
    pub fn source_name(&self, file: usize) -> &str {
        &self.files[file].1
    }

    pub fn text(&self, file: usize) -> &str {
        &self.files[file].2
    }

    /// "profiles/x.kdl:12:5" for a span, 1-based like rustc.
    pub fn location(&self, span: Span) -> String {
        let text = self.text(span.file);
        let before = &text[..span.offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!("{}:{line}:{col}", self.path(span.file).display())
    }

    /// The exact text a span covers.
    pub fn snippet(&self, span: Span) -> &str {
        let text = self.text(span.file);
        text.get(span.offset..(span.offset + span.len).min(text.len())).unwrap_or("")
    }

    fn named_source(&self, file: usize) -> NamedSource<Arc<String>> {
        NamedSource::new(self.path(file).display().to_string(), self.files[file].2.clone())
    }

    /// Builds a diagnostic pointing at `span`.
    pub fn error(&self, span: Span, code: &'static str, message: impl Into<String>) -> ProfileDiagnostic {
        ProfileDiagnostic {
            code,
            message: message.into(),
            location: self.location(span),
            src: self.named_source(span.file),
            span: SourceSpan::new(span.offset.into(), span.len),
            label: String::from("here"),
            help: None,
            severity: miette::Severity::Error,
        }
    }
}

/// A profile's path as it appears in generated files: relative to the root of the git repository holding it
/// (or, outside any repository, to the working directory), with `.` and `..` resolved and `/` separators.
/// `profiles/x.kdl`, `./profiles/x.kdl` and `/home/me/repo/profiles/x.kdl` all give `profiles/x.kdl`, so out/
/// is byte-identical however the path was typed and wherever the repository is checked out.
pub fn repository_path(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    // Symlinks resolved when the file exists (a checkout under a symlinked home must not change the output).
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| lexically_normal(&cwd.join(path)));
    let root = absolute.ancestors().skip(1).find(|dir| dir.join(".git").exists()).map(Path::to_path_buf);
    let base = root.or_else(|| std::fs::canonicalize(&cwd).ok().filter(|c| absolute.starts_with(c)));
    let relative = base.as_deref().and_then(|b| absolute.strip_prefix(b).ok()).unwrap_or(&absolute);
    let parts: Vec<String> = relative
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if relative.is_absolute() { format!("/{}", parts.join("/")) } else { parts.join("/") }
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// One problem in a profile. `code` is stable (tests and users grep for it); `location` is file:line:col.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{location}: {message}")]
pub struct ProfileDiagnostic {
    pub code: &'static str,
    pub message: String,
    pub location: String,
    pub src: NamedSource<Arc<String>>,
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
        Some(&self.src)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        Some(Box::new(std::iter::once(miette::LabeledSpan::new_primary_with_span(
            Some(self.label.clone()),
            self.span,
        ))))
    }
}

/// "did you mean `x`?" for a misspelt name, when one of `known` is close enough.
pub fn did_you_mean<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Option<String> {
    known
        .into_iter()
        .map(|k| (strsim::damerau_levenshtein(word, k), k))
        .filter(|(distance, k)| *distance <= 2.max(k.len() / 3))
        .min()
        .map(|(_, k)| format!("did you mean `{k}`?"))
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
