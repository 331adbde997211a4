//! Fast path for parsing profile files into `kdl` crate types.
//!
//! `kdl::KdlDocument::parse` (kdl-rs 6.7.1, vendor/kdl; a winnow parser with error recovery and
//! format preservation) costs about 5,000 CPU instructions per input byte: roughly
//! 180 µs for a 350-byte profile, 17% of a whole `gpuplan` compile. Profiles use a
//! small, regular subset of KDL v2, so this module parses that subset directly.
//!
//! Contract: [`parse`] returns `Some(doc)` only for text that kdl-rs also accepts,
//! and then `doc` equals kdl-rs's document in everything the profile reader
//! looks at: node order, names and name spans, node spans, entries (order, property
//! key names, values, spans) and children documents (nodes and spans). Formatting
//! (reprs, whitespace, comments) is not reproduced. For anything outside the subset,
//! or anything malformed, it returns `None` and the caller falls back to kdl-rs,
//! which produces the usual values and diagnostics.
//!
//! Subset: bare-identifier (ASCII) and quoted-string node names; arguments and
//! `key=value` properties (bare or quoted keys, optional spaces around `=`);
//! values that are single-line quoted strings (escapes `\n \r \t \\ \" \b \f \s
//! \u{hex}`), decimal integers and floats, `#true` `#false` `#null`, and bare
//! ASCII identifier strings; `{ … }` children; `;`, `\n`, `\r\n`, `\r`; spaces and
//! tabs; `//` and nested `/* */` comments. Everything else (slashdash, line
//! continuations, type annotations, raw and multi-line strings, hex/octal/binary,
//! `#inf`/`#nan`, signed or dotted identifiers, BOM, Unicode whitespace/newlines,
//! non-ASCII identifiers) makes it bail out.
//!
//! Span rules (mirroring kdl-rs `v2_parser.rs`): an identifier's span covers its
//! token (quotes included); an entry's span runs from its first token (the key for
//! a property) to the end of its value; a node's span runs from its name to just
//! before its terminator, so it includes trailing spaces and `/* */` comments and
//! the children block; a document's span runs from its first node (after leading
//! blank lines and comments) to the end of its last node's span, or is empty at
//! the position after the leading blank space when there are no nodes.

use std::borrow::Cow;

use kdl::{KdlDocument, KdlEntry, KdlIdentifier, KdlNode, KdlValue};

/// Deepest `{ … }` nesting handled here; deeper documents go to kdl-rs.
const MAX_DEPTH: usize = 64;

/// Parses `text` if it is in the supported subset of KDL v2; `None` means "use
/// `kdl::KdlDocument::parse`" (unsupported syntax or malformed input).
pub fn parse(text: &str) -> Option<KdlDocument> {
    let mut p = Parser {
        src: text,
        b: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    let doc = p.nodes()?;
    (p.pos == p.b.len()).then_some(doc)
}

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    depth: usize,
}

/// Bytes allowed in a bare identifier: printable ASCII except KDL's reserved
/// punctuation (`\ / ( ) { } [ ] ; " # =`).
fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_graphic()
        && !matches!(
            c,
            b'\\' | b'/' | b'(' | b')' | b'{' | b'}' | b'[' | b']' | b';' | b'"' | b'#' | b'='
        )
}

/// Characters kdl-rs rejects inside a single-line quoted string, plus DEL (which
/// kdl-rs accepts but the KDL spec does not; we leave that case to kdl-rs).
fn is_bad_string_char(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{A}'..='\u{1F}' | '\u{7F}' | '\u{85}'
        | '\u{200E}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        | '\u{FEFF}')
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.b.get(self.pos + ahead).copied()
    }

    /// `nodes := line-space* (node terminator line-space*)*`, stopping before `}` or
    /// at the end of input. The span runs from the first node to the end of the last.
    fn nodes(&mut self) -> Option<KdlDocument> {
        self.line_space()?;
        let (start, mut end) = (self.pos, self.pos);
        let mut doc = KdlDocument::new();
        while !matches!(self.peek(), None | Some(b'}')) {
            let node = self.node()?;
            end = self.pos;
            doc.nodes_mut().push(node);
            if !self.terminator()? {
                break;
            }
            self.line_space()?;
        }
        doc.set_span(start..end);
        Some(doc)
    }

    /// One node: name, entries, optional children, trailing node space. The
    /// terminator is left for [`Parser::terminator`].
    fn node(&mut self) -> Option<KdlNode> {
        let start = self.pos;
        let mut node = KdlNode::new(self.string_ident()?);
        loop {
            let spaced = self.node_space()?;
            match (self.peek(), self.peek_at(1)) {
                (None | Some(b';' | b'\n' | b'\r' | b'}'), _) | (Some(b'/'), Some(b'/')) => break,
                (Some(b'{'), _) if spaced => {
                    node.set_children(self.children()?);
                    self.node_space()?;
                    break;
                }
                _ if spaced => node.entries_mut().push(self.entry()?),
                _ => return None,
            }
        }
        node.set_span(start..self.pos);
        Some(node)
    }

    /// `{ nodes }`; the caller has checked that the next byte is `{`.
    fn children(&mut self) -> Option<KdlDocument> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        self.pos += 1;
        let doc = self.nodes()?;
        if self.peek() != Some(b'}') {
            return None;
        }
        self.pos += 1;
        self.depth -= 1;
        Some(doc)
    }

    /// Consumes a node terminator (`;`, newline, `//` comment): `Some(true)`.
    /// At end of input or `}`: `Some(false)`. Anything else: `None`.
    fn terminator(&mut self) -> Option<bool> {
        match self.peek() {
            None | Some(b'}') => return Some(false),
            Some(b';' | b'\n' | b'\r') => self.newline_or_semicolon(),
            Some(b'/') if self.peek_at(1) == Some(b'/') => self.line_comment()?,
            _ => return None,
        }
        Some(true)
    }

    fn newline_or_semicolon(&mut self) {
        let crlf = self.peek() == Some(b'\r') && self.peek_at(1) == Some(b'\n');
        self.pos += 1 + usize::from(crlf);
    }

    /// `line-space*`: spaces, tabs, newlines and comments between nodes.
    fn line_space(&mut self) -> Option<()> {
        loop {
            match (self.peek(), self.peek_at(1)) {
                (Some(b' ' | b'\t'), _) => self.pos += 1,
                (Some(b'\n' | b'\r'), _) => self.newline_or_semicolon(),
                (Some(b'/'), Some(b'/')) => self.line_comment()?,
                (Some(b'/'), Some(b'*')) => self.block_comment()?,
                _ => return Some(()),
            }
        }
    }

    /// `node-space*` (spaces, tabs, `/* */`); returns whether anything was consumed.
    fn node_space(&mut self) -> Option<bool> {
        let start = self.pos;
        loop {
            match (self.peek(), self.peek_at(1)) {
                (Some(b' ' | b'\t'), _) => self.pos += 1,
                (Some(b'/'), Some(b'*')) => self.block_comment()?,
                _ => return Some(self.pos > start),
            }
        }
    }

    /// `// …` up to and including the newline (or end of input). Bails on the
    /// newline characters we do not handle (VT, FF, NEL, LS, PS).
    fn line_comment(&mut self) -> Option<()> {
        self.pos += 2;
        while let Some(c) = self.peek() {
            match c {
                b'\n' | b'\r' => {
                    self.newline_or_semicolon();
                    return Some(());
                }
                0x0B | 0x0C => return None,
                0xC2 if self.peek_at(1) == Some(0x85) => return None,
                0xE2 if self.peek_at(1) == Some(0x80)
                    && matches!(self.peek_at(2), Some(0xA8 | 0xA9)) =>
                {
                    return None;
                }
                _ => self.pos += 1,
            }
        }
        Some(())
    }

    /// `/* … */` with nesting; `None` if unterminated.
    fn block_comment(&mut self) -> Option<()> {
        self.pos += 2;
        let mut depth = 1;
        while depth > 0 {
            let step = match (self.peek()?, self.peek_at(1)) {
                (b'*', Some(b'/')) => -1,
                (b'/', Some(b'*')) => 1,
                _ => 0,
            };
            depth += step;
            self.pos += if step == 0 { 1 } else { 2 };
        }
        Some(())
    }

    /// An argument or a property. Strings (bare or quoted) followed by optional
    /// node space and `=` are property keys; the entry span starts at the key.
    fn entry(&mut self) -> Option<KdlEntry> {
        let start = self.pos;
        let mut entry = if self.peek()? == b'"' || self.at_ident_start() {
            let key = self.string()?;
            let after_key = self.pos;
            self.node_space()?;
            if self.peek() == Some(b'=') {
                self.pos += 1;
                self.node_space()?;
                let mut name = KdlIdentifier::from(key);
                name.set_span(start..after_key);
                KdlEntry::new_prop(name, self.value()?)
            } else {
                self.pos = after_key;
                KdlEntry::new(key)
            }
        } else {
            KdlEntry::new(self.value()?)
        };
        entry.set_span(start..self.pos);
        Some(entry)
    }

    /// A value: quoted or bare string, decimal number, `#true`/`#false`/`#null`.
    fn value(&mut self) -> Option<KdlValue> {
        match self.peek()? {
            b'"' => self.quoted().map(KdlValue::String),
            b'#' => self.keyword(),
            b'0'..=b'9' | b'+' | b'-' => self.number(),
            _ => self.bare_ident().map(|s| KdlValue::String(s.to_string())),
        }
    }

    fn keyword(&mut self) -> Option<KdlValue> {
        let rest = &self.b[self.pos + 1..];
        let (value, len) = if rest.starts_with(b"true") {
            (KdlValue::Bool(true), 4)
        } else if rest.starts_with(b"false") {
            (KdlValue::Bool(false), 5)
        } else if rest.starts_with(b"null") {
            (KdlValue::Null, 4)
        } else {
            return None;
        };
        self.pos += 1 + len;
        Some(value)
    }

    /// `sign? digits ('.' digits)? ([eE] sign? digits)?`; floats if it has a
    /// fraction or an exponent, as in kdl-rs (which also parses with `str::parse`).
    fn number(&mut self) -> Option<KdlValue> {
        let start = self.pos;
        if matches!(self.peek(), Some(b'+' | b'-')) {
            self.pos += 1;
        }
        self.digits()?;
        let mut float = false;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            self.digits()?;
            float = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            self.digits()?;
            float = true;
        }
        let raw = &self.src[start..self.pos];
        let text = if raw.contains('_') {
            raw.replace('_', "").into()
        } else {
            Cow::Borrowed(raw)
        };
        if float {
            text.parse().ok().map(KdlValue::Float)
        } else {
            text.parse().ok().map(KdlValue::Integer)
        }
    }

    /// `digit (digit | '_')*`. kdl-rs parses every digit run as an `i128`, so runs
    /// that might not fit are left to it.
    fn digits(&mut self) -> Option<()> {
        if !self.peek()?.is_ascii_digit() {
            return None;
        }
        let (start, mut count) = (self.pos, 0);
        while let Some(c @ (b'0'..=b'9' | b'_')) = self.peek() {
            count += usize::from(c != b'_');
            self.pos += 1;
        }
        (count <= 38 && self.pos > start).then_some(())
    }

    /// A node name: quoted string or bare identifier, with its span.
    fn string_ident(&mut self) -> Option<KdlIdentifier> {
        let start = self.pos;
        let mut ident = KdlIdentifier::from(self.string()?);
        ident.set_span(start..self.pos);
        Some(ident)
    }

    /// A quoted string or a bare identifier.
    fn string(&mut self) -> Option<String> {
        if self.peek()? == b'"' {
            self.quoted()
        } else {
            self.bare_ident().map(str::to_string)
        }
    }

    /// Whether the next byte can start a bare identifier we accept (not a digit,
    /// sign or dot, which kdl-rs treats as numbers or signed/dotted identifiers).
    fn at_ident_start(&self) -> bool {
        self.peek()
            .is_some_and(|c| is_ident_byte(c) && !matches!(c, b'0'..=b'9' | b'+' | b'-' | b'.'))
    }

    /// An ASCII bare identifier. Bails if it runs into non-ASCII (which kdl-rs
    /// might accept as identifier characters) or is a bare keyword.
    fn bare_ident(&mut self) -> Option<&str> {
        if !self.at_ident_start() {
            return None;
        }
        let start = self.pos;
        while self.peek().is_some_and(is_ident_byte) {
            self.pos += 1;
        }
        let word = &self.src[start..self.pos];
        let reserved = matches!(word, "true" | "false" | "null" | "inf" | "nan");
        (!reserved && self.peek().is_none_or(|c| c.is_ascii())).then_some(word)
    }

    /// A single-line `"…"` string; bails on `"""`, newlines, disallowed characters
    /// and whitespace escapes.
    fn quoted(&mut self) -> Option<String> {
        if self.b[self.pos..].starts_with(b"\"\"\"") {
            return None;
        }
        self.pos += 1;
        let mut out = String::new();
        loop {
            let rest = &self.b[self.pos..];
            let plain = rest
                .iter()
                .position(|&c| c == b'"' || c == b'\\' || !(0x20..0x7F).contains(&c))?;
            out.push_str(&self.src[self.pos..self.pos + plain]);
            self.pos += plain;
            let c = self.src[self.pos..].chars().next()?;
            match c {
                '"' => {
                    self.pos += 1;
                    return Some(out);
                }
                '\\' => out.push(self.escape()?),
                c if is_bad_string_char(c) => return None,
                c => {
                    out.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
    }

    /// `\` followed by `" \ b f n r t s` or `u{1-6 hex digits}`.
    fn escape(&mut self) -> Option<char> {
        let c = match self.peek_at(1)? {
            b'"' => '"',
            b'\\' => '\\',
            b'b' => '\u{8}',
            b'f' => '\u{C}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b's' => ' ',
            b'u' => return self.unicode_escape(),
            _ => return None,
        };
        self.pos += 2;
        Some(c)
    }

    fn unicode_escape(&mut self) -> Option<char> {
        let rest = self.b.get(self.pos + 2..)?;
        let hex = rest
            .iter()
            .skip(1)
            .take_while(|c| c.is_ascii_hexdigit())
            .count();
        if rest.first() != Some(&b'{')
            || !(1..=6).contains(&hex)
            || rest.get(1 + hex) != Some(&b'}')
        {
            return None;
        }
        let digits = &self.src[self.pos + 3..self.pos + 3 + hex];
        let c = char::from_u32(u32::from_str_radix(digits, 16).ok()?)?;
        self.pos += 4 + hex;
        Some(c)
    }
}

#[cfg(test)]
mod tests;
