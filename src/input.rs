//! Bounded reading of user inputs (profiles, catalogs, pods and manifests YAML, templates, CRDs): a leaf module every
//! stage that opens a file the user named goes through, so a hostile pull request cannot hang or exhaust CI.
//!
//! - Every path is confined to the repository first ([`crate::confine::check_read`]: a symlink or path that leads
//!   outside it is refused before anything is opened).
//! - Only regular files are read. git carries symlinks, so `profiles/x.kdl -> /dev/zero` arrives in a pull request;
//!   a FIFO would block the `open` itself. The type is checked on the metadata *after* following symlinks, before
//!   the file is opened.
//! - A read stops at a cap ([`max_input_bytes`], 64 MiB unless `GPUPLAN_MAX_INPUT_BYTES` says otherwise), reading at
//!   most one byte past it, so even a file that grows while it is read is bounded.
//! - [`read_to_string`] reads text only: UTF-8 without control characters other than tab, line feed, vertical tab,
//!   form feed and carriage return. Diagnostics print excerpts of the sources they point into, so a binary file
//!   (`/proc/self/environ` is NUL-separated UTF-8) or terminal escapes never reach a log or a comment.
//! - [`excerpt`] shortens a value quoted in a message (a 50 MB label value is not echoed whole to stderr).
//! - [`nesting_depth`] finds the first `{` nested deeper than a limit in KDL text, so that neither parser recurses
//!   past the stack (see `profile::parse_profile`).
//!
//! Errors are `std::io::Error`s with the reason in words, so every caller's existing "cannot read PATH: …" message
//! names the path and the cause.

use std::io::{self, Read};
use std::path::Path;

/// The default cap on one input file: far above any real profile, catalog (the largest region's snapshot is a few
/// MiB) or pods file, far below what a CI runner has.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 64 << 20;

/// The environment variable that changes the cap, in bytes.
pub const MAX_INPUT_BYTES_ENV: &str = "GPUPLAN_MAX_INPUT_BYTES";

/// The cap on one input file: `GPUPLAN_MAX_INPUT_BYTES` when set, else 64 MiB.
pub fn max_input_bytes() -> io::Result<u64> {
    env_limit(MAX_INPUT_BYTES_ENV, DEFAULT_MAX_INPUT_BYTES)
}

/// A positive integer limit from the environment, or its default when the variable is unset. A value that is not a
/// positive integer is an error rather than silently the default: whoever set it meant something.
pub fn env_limit(var: &str, default: u64) -> io::Result<u64> {
    match std::env::var(var) {
        Err(_) => Ok(default),
        Ok(text) => text.trim().replace('_', "").parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("{var}={} is not a positive whole number", excerpt(&text)))
        }),
    }
}

/// Reads a whole UTF-8 file the user named, bounded (see the module doc).
pub fn read_to_string(path: &Path) -> io::Result<String> {
    let bytes = read(path)?;
    let text = String::from_utf8(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))?;
    require_text(&text)?;
    Ok(text)
}

/// Refuses text holding a control character other than tab, line feed, vertical tab, form feed and carriage return
/// (see the module doc): the error names its byte offset and code, never the text around it.
pub fn require_text(text: &str) -> io::Result<()> {
    match text.bytes().position(|b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r')) || b == 0x7f) {
        None => Ok(()),
        Some(at) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("is not text: control character 0x{:02x} at byte {at}; gpuplan reads only UTF-8 text (and prints no excerpt of this file)", text.as_bytes()[at]),
        )),
    }
}

/// Reads a whole file the user named, bounded (see the module doc).
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    crate::confine::check_read(path)?;
    let cap = max_input_bytes()?;
    require_regular_file(path)?;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    // One byte past the cap tells "exactly at the cap" from "over it" without trusting the size in the metadata,
    // which a growing file outruns.
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than the {} input cap: split the file, or raise {MAX_INPUT_BYTES_ENV}", human_bytes(cap)),
        ));
    }
    Ok(bytes)
}

/// Refuses anything but a regular file (after following symlinks), without opening it: opening a FIFO blocks until
/// a writer appears, and a device such as /dev/zero never ends.
pub fn require_regular_file(path: &Path) -> io::Result<()> {
    let file_type = std::fs::metadata(path)?.file_type();
    if file_type.is_file() {
        return Ok(());
    }
    Err(io::Error::new(io::ErrorKind::InvalidInput, format!("is {}, not a regular file: gpuplan reads only regular files", describe(file_type))))
}

fn describe(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() { "a directory" } else { "not a file" }
}

/// `64 MiB`, `1.5 KiB`, `12 bytes`.
pub fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} bytes"),
    }
}

/// How many characters of a quoted value a message shows.
pub const EXCERPT_CHARS: usize = 80;

/// A value as a message quotes it: whole when short, else its first 80 characters and its length
/// (`aaaa…aaa… (52428800 bytes)`).
pub fn excerpt(value: &str) -> std::borrow::Cow<'_, str> {
    match value.char_indices().nth(EXCERPT_CHARS) {
        None => std::borrow::Cow::Borrowed(value),
        Some((end, _)) => std::borrow::Cow::Owned(format!("{}… ({} bytes)", &value[..end], value.len())),
    }
}

/// The byte offset of the first `{` in KDL `text` that opens a block nested deeper than `limit`, if any.
///
/// Both KDL parsers (profile/fast_kdl.rs and kdl-rs) and the profile walk recurse once per `{ … }`, so a document
/// nested 1,500 deep overflows the stack. Two loops decide, and either one refusing is enough:
/// - [`lexical_depth`] skips what can hold a brace without opening a block (KDL v2, https://kdl.dev/spec/: quoted,
///   multi-line and raw strings; `//` and nested `/* */` comments), so `"}}}"` cannot hide real blocks;
/// - a count of every brace, strings and comments included, at twice the limit, so a malformed string that kdl-rs's
///   error recovery reads differently (the fuzz suite found one: a newline inside a quoted string) cannot hide them
///   either. It refuses a valid profile only if a string or comment holds dozens of unmatched `{`.
///
/// kdl-rs also recurses once per part of a `/* */` comment (its `commented_block` grammar rule: each nested comment,
/// lone `*` or `/`, and run of other characters is one level; 800 parts overflow a 2 MiB stack in a debug build), so a
/// block comment of more than [`MAX_COMMENT_PARTS`] parts is refused too (found by the fuzz suite).
pub fn nesting_depth(text: &str, limit: usize) -> Option<(usize, TooDeep)> {
    let naive = brace_depth(text.as_bytes(), limit.saturating_mul(2)).map(|at| (at, TooDeep::Blocks));
    match (lexical_depth(text, limit), naive) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// What [`nesting_depth`] found too deep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TooDeep {
    Blocks,
    Comment,
}

/// The most parts a `/* */` comment may have (see [`nesting_depth`]).
pub const MAX_COMMENT_PARTS: usize = 100;

/// The first `{` deeper than `limit`, counting every brace.
fn brace_depth(b: &[u8], limit: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'{' => {
                depth += 1;
                if depth > limit {
                    return Some(i);
                }
            }
            b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// The first `{` deeper than `limit` outside strings and comments.
fn lexical_depth(text: &str, limit: usize) -> Option<(usize, TooDeep)> {
    let b = text.as_bytes();
    let (mut i, mut depth) = (0, 0usize);
    while i < b.len() {
        match b[i] {
            b'{' => {
                depth += 1;
                if depth > limit {
                    return Some((i, TooDeep::Blocks));
                }
                i += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => i = skip_until(b, i + 2, b"\n"),
            b'/' if b.get(i + 1) == Some(&b'-') => match skip_slashdashes(b, i) {
                Ok(end) => i = end,
                Err(()) => return Some((i, TooDeep::Comment)),
            },
            b'/' if b.get(i + 1) == Some(&b'*') => match skip_block_comment(b, i + 2) {
                Ok(end) => i = end,
                Err(()) => return Some((i, TooDeep::Comment)),
            },
            b'"' => i = skip_quoted(b, i),
            b'#' if matches!(b.get(i + 1), Some(b'"' | b'#')) => i = skip_raw(b, i),
            _ => i += 1,
        }
    }
    None
}

/// Past the first `end` at or after `from` (the end of the text when there is none).
fn skip_until(b: &[u8], from: usize, end: &[u8]) -> usize {
    b[from.min(b.len())..].windows(end.len()).position(|w| w == end).map_or(b.len(), |p| from + p + end.len())
}

/// Past a run of `/-` (slashdashes) with only blanks between them: Err when it has more than [`MAX_COMMENT_PARTS`],
/// since kdl-rs recurses once per slashdash of a run (found by the fuzz suite: 200 of them overflowed the stack).
fn skip_slashdashes(b: &[u8], mut from: usize) -> Result<usize, ()> {
    let mut parts = 0;
    while b[from..].starts_with(b"/-") {
        parts += 1;
        if parts > MAX_COMMENT_PARTS {
            return Err(());
        }
        from += 2;
        from += b[from..].iter().take_while(|c| c.is_ascii_whitespace()).count();
    }
    Ok(from)
}

/// Past a `/* … */` comment whose body starts at `from`; comments nest in KDL. Err when it has more than
/// [`MAX_COMMENT_PARTS`] parts as kdl-rs's grammar splits it.
fn skip_block_comment(b: &[u8], mut from: usize) -> Result<usize, ()> {
    let (mut open, mut parts) = (1, 0);
    while from < b.len() && open > 0 {
        parts += 1;
        if parts > MAX_COMMENT_PARTS {
            return Err(());
        }
        match (b[from], b.get(from + 1)) {
            (b'/', Some(b'*')) => (open, from) = (open + 1, from + 2),
            (b'*', Some(b'/')) => (open, from) = (open - 1, from + 2),
            (b'*' | b'/', _) => from += 1,
            // A run of anything else is one part.
            _ => from += b[from..].iter().position(|&c| c == b'*' || c == b'/').unwrap_or(b.len() - from),
        }
    }
    Ok(from)
}

/// Past a quoted string starting at `start` (`"…"` with backslash escapes, or a `"""` multi-line string). A
/// single-line string also ends at a newline, which it cannot hold: kdl-rs reports the error and reads on from there.
fn skip_quoted(b: &[u8], start: usize) -> usize {
    if b[start..].starts_with(b"\"\"\"") {
        let mut i = start + 3;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 2,
                b'"' if b[i..].starts_with(b"\"\"\"") => return i + 3,
                _ => i += 1,
            }
        }
        return b.len();
    }
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            b'\n' | b'\r' => return i,
            _ => i += 1,
        }
    }
    b.len()
}

/// Past a raw string `#"…"#` / `##"""…"""##` starting at `start`: no escapes; it ends at a quote followed by as many
/// `#` as opened it.
fn skip_raw(b: &[u8], start: usize) -> usize {
    let hashes = b[start..].iter().take_while(|&&c| c == b'#').count();
    let open = start + hashes;
    if b.get(open) != Some(&b'"') {
        return open;
    }
    let multi_line = b[open..].starts_with(b"\"\"\"");
    let mut close = if multi_line { b"\"\"\"".to_vec() } else { vec![b'"'] };
    close.extend(std::iter::repeat_n(b'#', hashes));
    let end = skip_until(b, open + if multi_line { 3 } else { 1 }, &close);
    // A single-line raw string cannot hold a newline either (see `skip_quoted`).
    match b[open..end].iter().position(|&c| c == b'\n' || c == b'\r') {
        Some(newline) if !multi_line => open + newline,
        _ => end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_counted_outside_strings_and_comments() {
        assert_eq!(lexical_depth("a { b { c } }", 2), None);
        assert_eq!(lexical_depth("a { b { c { d } } }", 2), Some((10, TooDeep::Blocks)));
        assert_eq!(lexical_depth(r#"a "{{{{" { b }"#, 1), None);
        assert_eq!(lexical_depth("a /* { /* { */ { */ { b } // {{{{\n", 1), None);
        assert_eq!(lexical_depth(r##"a #"{{"\"# { b }"##, 1), None);
        assert_eq!(lexical_depth("a \"\"\"\n{{{\n\"\"\" { b }", 1), None);
        assert_eq!(nesting_depth(&"a {".repeat(1500), 64), Some((64 * 3 + 2, TooDeep::Blocks)));
        // A newline ends a malformed single-line string: the braces after it count.
        assert_eq!(nesting_depth(&format!("a \"x\n{}", "{".repeat(40)), 32), Some((5 + 32, TooDeep::Blocks)));
        // Unmatched braces in strings are tolerated up to twice the limit.
        assert_eq!(nesting_depth(&format!("a \"{}\" {{ b }}", "{".repeat(40)), 32), None);
        assert!(nesting_depth(&format!("a \"{}\"", "{".repeat(70)), 32).is_some());
        // Block comments: nested or split into many parts (found by the fuzz suite).
        assert_eq!(nesting_depth(&format!("a /*{}", "/*".repeat(300)), 32), Some((2, TooDeep::Comment)));
        assert_eq!(nesting_depth(&format!("a /*{}*/", "*x".repeat(300)), 32), Some((2, TooDeep::Comment)));
        assert_eq!(nesting_depth("a /* https://kdl.dev/spec/ */ b", 32), None);
        assert_eq!(nesting_depth(&format!("a {}b", "/-".repeat(199)), 32), Some((2, TooDeep::Comment)));
        assert_eq!(nesting_depth("a /-b /-c", 32), None);
    }

    #[test]
    fn long_values_are_shortened_with_their_length() {
        assert_eq!(excerpt("short"), "short");
        let long = "é".repeat(100);
        assert_eq!(excerpt(&long), format!("{}… (200 bytes)", "é".repeat(80)));
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(64 << 20), "64 MiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(12), "12 bytes");
    }
}
