//! A small backtracking regular-expression engine, for the Kubernetes CEL library's `find` and
//! `findAll`, which the `cel` crate does not provide.
//!
//! Why not the `regex` crate: it is not a direct dependency of gpuplan (only a transitive one), and
//! the validate stage must not add dependencies. The CRDs' rules use simple patterns
//! (`^([^/]+)`, `^[^@]+`), so a compact engine with Perl/RE2 leftmost-first semantics is enough:
//! literals, `.`, classes (`[a-z]`, `[^/]`, `\d \w \s` and their negations outside classes),
//! anchors `^ $`, groups `( )` and `(?: )`, alternation `|`, and the quantifiers `* + ? {n} {n,}
//! {n,m}` (greedy, or lazy with a trailing `?`). Anything else (flags, `\b`, Unicode classes,
//! backreferences) is rejected with an error, so a rule using it is reported, never silently
//! passed.

#[derive(Debug, Clone)]
enum Node {
    Char(char),
    Any,
    Class {
        ranges: Vec<(char, char)>,
        negated: bool,
    },
    Start,
    End,
    Alt(Vec<Vec<Node>>),
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
        greedy: bool,
    },
}

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Regex {
    alts: Vec<Vec<Node>>,
}

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    pattern: &'a str,
}

impl Parser<'_> {
    fn err(&self, what: &str) -> String {
        format!(
            "unsupported or invalid regex {:?} at offset {}: {what}",
            self.pattern, self.pos
        )
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn parse_alt(&mut self) -> Result<Vec<Vec<Node>>, String> {
        let mut alts = vec![self.parse_seq()?];
        while self.peek() == Some('|') {
            self.pos += 1;
            alts.push(self.parse_seq()?);
        }
        Ok(alts)
    }

    fn parse_seq(&mut self) -> Result<Vec<Node>, String> {
        let mut seq = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.parse_atom()?;
            let atom = self.parse_quantifier(atom)?;
            seq.push(atom);
        }
        Ok(seq)
    }

    fn parse_quantifier(&mut self, atom: Node) -> Result<Node, String> {
        let (min, max) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => {
                let rest: String = self.chars[self.pos + 1..].iter().collect();
                let Some(close) = rest.find('}') else {
                    return Ok(atom);
                };
                let body = &rest[..close];
                let parse = |s: &str| {
                    s.trim()
                        .parse::<u32>()
                        .map_err(|_| self.err("bad repetition"))
                };
                let (min, max) = match body.split_once(',') {
                    None => {
                        let n = parse(body)?;
                        (n, Some(n))
                    }
                    Some((a, "")) => (parse(a)?, None),
                    Some((a, b)) => (parse(a)?, Some(parse(b)?)),
                };
                self.pos += body.chars().count() + 1; // the body and '}', '{' below
                (min, max)
            }
            _ => return Ok(atom),
        };
        self.pos += 1;
        if matches!(atom, Node::Start | Node::End) {
            return Err(self.err("quantified anchor"));
        }
        let greedy = if self.peek() == Some('?') {
            self.pos += 1;
            false
        } else {
            true
        };
        if matches!(self.peek(), Some('*' | '+' | '?' | '{')) {
            return Err(self.err("nested quantifier"));
        }
        Ok(Node::Repeat {
            node: Box::new(atom),
            min,
            max,
            greedy,
        })
    }

    fn parse_atom(&mut self) -> Result<Node, String> {
        let c = self.peek().ok_or_else(|| self.err("unexpected end"))?;
        self.pos += 1;
        Ok(match c {
            '(' => {
                if self.peek() == Some('?') {
                    if self.chars.get(self.pos + 1) == Some(&':') {
                        self.pos += 2;
                    } else {
                        return Err(self.err("group flags"));
                    }
                }
                let alts = self.parse_alt()?;
                if self.peek() != Some(')') {
                    return Err(self.err("missing )"));
                }
                self.pos += 1;
                Node::Alt(alts)
            }
            '[' => self.parse_class()?,
            '.' => Node::Any,
            '^' => Node::Start,
            '$' => Node::End,
            '*' | '+' | '?' => return Err(self.err("quantifier without operand")),
            '\\' => self.parse_escape(false)?,
            c => Node::Char(c),
        })
    }

    /// After a backslash. In a class only single characters and positive classes are allowed.
    fn parse_escape(&mut self, in_class: bool) -> Result<Node, String> {
        let c = self.peek().ok_or_else(|| self.err("trailing backslash"))?;
        self.pos += 1;
        let class = |ranges: Vec<(char, char)>, negated: bool| Node::Class { ranges, negated };
        let digit = vec![('0', '9')];
        let word = vec![('0', '9'), ('A', 'Z'), ('a', 'z'), ('_', '_')];
        let space = vec![('\t', '\n'), ('\x0C', '\r'), (' ', ' ')];
        Ok(match c {
            'd' => class(digit, false),
            'w' => class(word, false),
            's' => class(space, false),
            'D' | 'W' | 'S' if !in_class => class(
                match c {
                    'D' => digit,
                    'W' => word,
                    _ => space,
                },
                true,
            ),
            'n' => Node::Char('\n'),
            't' => Node::Char('\t'),
            'r' => Node::Char('\r'),
            'f' => Node::Char('\x0C'),
            'v' => Node::Char('\x0B'),
            c if c.is_ascii_punctuation() => Node::Char(c),
            _ => return Err(self.err("escape sequence")),
        })
    }

    fn parse_class(&mut self) -> Result<Node, String> {
        let negated = self.peek() == Some('^');
        if negated {
            self.pos += 1;
        }
        let mut ranges = Vec::new();
        let mut first = true;
        loop {
            let c = self.peek().ok_or_else(|| self.err("missing ]"))?;
            if c == ']' && !first {
                self.pos += 1;
                break;
            }
            first = false;
            if c == '[' && self.chars.get(self.pos + 1) == Some(&':') {
                return Err(self.err("POSIX class"));
            }
            self.pos += 1;
            let lo = if c == '\\' {
                match self.parse_escape(true)? {
                    Node::Char(c) => c,
                    Node::Class { ranges: r, .. } => {
                        ranges.extend(r);
                        continue;
                    }
                    _ => unreachable!(),
                }
            } else {
                c
            };
            if self.peek() == Some('-') && self.chars.get(self.pos + 1).is_some_and(|&n| n != ']') {
                self.pos += 1;
                let mut hi = self.peek().ok_or_else(|| self.err("missing ]"))?;
                self.pos += 1;
                if hi == '\\' {
                    match self.parse_escape(true)? {
                        Node::Char(c) => hi = c,
                        _ => return Err(self.err("class as range end")),
                    }
                }
                if hi < lo {
                    return Err(self.err("inverted range"));
                }
                ranges.push((lo, hi));
            } else {
                ranges.push((lo, lo));
            }
        }
        Ok(Node::Class { ranges, negated })
    }
}

impl Regex {
    pub fn new(pattern: &str) -> Result<Regex, String> {
        let mut p = Parser {
            chars: pattern.chars().collect(),
            pos: 0,
            pattern,
        };
        let alts = p.parse_alt()?;
        if p.pos != p.chars.len() {
            return Err(p.err("unbalanced )"));
        }
        Ok(Regex { alts })
    }

    /// The leftmost-first match at or after `from` (char offsets), as (start, end).
    fn search(&self, input: &[char], from: usize) -> Option<(usize, usize)> {
        let top = [Node::Alt(self.alts.clone())];
        for start in from..=input.len() {
            let mut end = None;
            if matches_seq(&top, input, start, &mut |p| {
                end = Some(p);
                true
            }) {
                return end.map(|e| (start, e));
            }
        }
        None
    }

    /// Kubernetes CEL `find`: the first match, or "" when there is none.
    pub fn find(&self, s: &str) -> String {
        let input: Vec<char> = s.chars().collect();
        match self.search(&input, 0) {
            Some((a, b)) => input[a..b].iter().collect(),
            None => String::new(),
        }
    }

    /// Kubernetes CEL `findAll` (Go's `FindAllString`): successive non-overlapping matches, empty
    /// matches right after a previous match ignored; at most `limit` of them when `limit >= 0`.
    pub fn find_all(&self, s: &str, limit: i64) -> Vec<String> {
        let input: Vec<char> = s.chars().collect();
        let mut out = Vec::new();
        let mut pos = 0;
        let mut prev_end: Option<usize> = None;
        while pos <= input.len() {
            if limit >= 0 && out.len() as i64 >= limit {
                break;
            }
            let Some((a, b)) = self.search(&input, pos) else {
                break;
            };
            if a == b && prev_end == Some(a) {
                pos = a + 1;
                continue;
            }
            out.push(input[a..b].iter().collect());
            prev_end = Some(b);
            pos = if b > a { b } else { b + 1 };
        }
        out
    }
}

fn class_matches(ranges: &[(char, char)], negated: bool, c: char) -> bool {
    ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != negated
}

/// Matches `seq` at `pos`, calling `k` with each end position in priority order until it accepts.
fn matches_seq(seq: &[Node], input: &[char], pos: usize, k: &mut dyn FnMut(usize) -> bool) -> bool {
    let Some((first, rest)) = seq.split_first() else {
        return k(pos);
    };
    match first {
        Node::Char(c) => input.get(pos) == Some(c) && matches_seq(rest, input, pos + 1, k),
        Node::Any => {
            input.get(pos).is_some_and(|&c| c != '\n') && matches_seq(rest, input, pos + 1, k)
        }
        Node::Class { ranges, negated } => {
            input
                .get(pos)
                .is_some_and(|&c| class_matches(ranges, *negated, c))
                && matches_seq(rest, input, pos + 1, k)
        }
        Node::Start => pos == 0 && matches_seq(rest, input, pos, k),
        Node::End => pos == input.len() && matches_seq(rest, input, pos, k),
        Node::Alt(alts) => alts
            .iter()
            .any(|alt| matches_seq(alt, input, pos, &mut |p| matches_seq(rest, input, p, k))),
        Node::Repeat {
            node,
            min,
            max,
            greedy,
        } => repeat(node, *min, *max, *greedy, 0, rest, input, pos, k),
    }
}

#[allow(clippy::too_many_arguments)]
fn repeat(
    node: &Node,
    min: u32,
    max: Option<u32>,
    greedy: bool,
    count: u32,
    rest: &[Node],
    input: &[char],
    pos: usize,
    k: &mut dyn FnMut(usize) -> bool,
) -> bool {
    let can_more = max.is_none_or(|m| count < m);
    let more = |k: &mut dyn FnMut(usize) -> bool| {
        can_more
            && matches_seq(std::slice::from_ref(node), input, pos, &mut |p| {
                // An iteration that consumed nothing past the minimum would loop forever.
                if p == pos && count >= min {
                    return false;
                }
                repeat(node, min, max, greedy, count + 1, rest, input, p, k)
            })
    };
    if greedy {
        more(k) || (count >= min && matches_seq(rest, input, pos, k))
    } else {
        (count >= min && matches_seq(rest, input, pos, k)) || more(k)
    }
}

#[cfg(test)]
mod tests {
    use super::Regex;

    fn find(re: &str, s: &str) -> String {
        Regex::new(re).unwrap().find(s)
    }

    #[test]
    fn validate_regex_find() {
        assert_eq!(find("^([^/]+)", "karpenter.sh/nodepool"), "karpenter.sh");
        assert_eq!(find("^[^@]+", "al2023@v20251023"), "al2023");
        assert_eq!(find("[0-9]+", "abc 123 45"), "123");
        assert_eq!(find("[0-9]+", "abc"), "");
        assert_eq!(find("a|ab", "ab"), "a");
        assert_eq!(find("a+?", "aaa"), "a");
        assert_eq!(find("(?:ab){2,}", "xababab"), "ababab");
        assert_eq!(find("x{2}", "xxx"), "xx");
        assert_eq!(find("\\d+\\.\\d*$", "v1.25"), "1.25");
        assert_eq!(find("(a*)*b", "aaab"), "aaab");
        assert_eq!(find("^$", ""), "");
        assert_eq!(
            Regex::new("[0-9]*").unwrap().find_all("a12b3", -1),
            vec!["", "12", "3"]
        );
        assert_eq!(
            Regex::new("[a-c]").unwrap().find_all("abcabc", 2),
            vec!["a", "b"]
        );
        assert!(Regex::new("(?i)a").is_err());
        assert!(Regex::new("\\bfoo").is_err());
        assert!(Regex::new("(a").is_err());
        assert!(Regex::new("a)").is_err());
    }
}
