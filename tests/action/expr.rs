//! GitHub Actions expressions (`if:` and `${{ … }}`), the part of the language action.yml uses, evaluated as the
//! runner does (docs.github.com/en/actions/reference/workflows-and-actions/expressions):
//! - literals: `'single-quoted'` strings (`''` is a quote), numbers, `true`, `false`, `null`;
//! - context paths: `inputs.x`, `github.event.pull_request.number`, `steps.<id>.outputs.<name>`, `runner.os`, `env.X`;
//! - operators `!`, `==`, `!=`, `&&`, `||`, parentheses. `&&` and `||` return an operand, not a boolean
//!   (`github.action_repository || 'gpuplan/gpuplan'`); `==` compares strings ignoring case, and values of different
//!   types as numbers;
//! - the status functions `success()`, `failure()`, `always()`, `cancelled()`.
//!
//! Anything else panics: a test must not pass because the harness misread the action.

use serde_json::Value;

/// What an expression reads: the contexts, and whether a step before this one failed.
pub struct Scope<'a> {
    pub contexts: &'a Value,
    pub failed: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Str(String),
    Num(f64),
    Ident(String),
    Op(&'static str),
}

fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => panic!("unterminated string in `{text}`"),
                    Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                        s.push('\'');
                        i += 2;
                    }
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some(&c) => {
                        s.push(c);
                        i += 1;
                    }
                }
            }
            out.push(Token::Str(s));
        } else if let Some(op) = ["==", "!=", "&&", "||"].into_iter().find(|op| chars[i..].starts_with(&op.chars().collect::<Vec<_>>())) {
            out.push(Token::Op(op));
            i += 2;
        } else if let Some(op) = ["!", "(", ")"].into_iter().find(|op| op.starts_with(c)) {
            out.push(Token::Op(op));
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            out.push(Token::Num(chars[start..i].iter().collect::<String>().parse().unwrap()));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || "_-.".contains(chars[i])) {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else {
            panic!("the harness does not know `{c}` in `{text}`");
        }
    }
    out
}

struct Parser<'s, 'a> {
    tokens: Vec<Token>,
    at: usize,
    scope: &'s Scope<'a>,
    text: &'s str,
}

impl Parser<'_, '_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn eat(&mut self, op: &str) -> bool {
        let hit = matches!(self.peek(), Some(Token::Op(o)) if *o == op);
        self.at += usize::from(hit);
        hit
    }

    fn or(&mut self) -> Value {
        let mut left = self.and();
        while self.eat("||") {
            let right = self.and();
            left = if truthy(&left) { left } else { right };
        }
        left
    }

    fn and(&mut self) -> Value {
        let mut left = self.equality();
        while self.eat("&&") {
            let right = self.equality();
            left = if truthy(&left) { right } else { left };
        }
        left
    }

    fn equality(&mut self) -> Value {
        let left = self.unary();
        if self.eat("==") {
            return Value::Bool(equal(&left, &self.unary()));
        }
        if self.eat("!=") {
            return Value::Bool(!equal(&left, &self.unary()));
        }
        left
    }

    fn unary(&mut self) -> Value {
        if self.eat("!") {
            return Value::Bool(!truthy(&self.unary()));
        }
        if self.eat("(") {
            let v = self.or();
            assert!(self.eat(")"), "missing `)` in `{}`", self.text);
            return v;
        }
        let token = self.tokens.get(self.at).cloned().unwrap_or_else(|| panic!("`{}` ends early", self.text));
        self.at += 1;
        match token {
            Token::Str(s) => Value::String(s),
            Token::Num(n) => serde_json::json!(n),
            Token::Ident(name) => self.name(&name),
            Token::Op(op) => panic!("unexpected `{op}` in `{}`", self.text),
        }
    }

    fn name(&mut self, name: &str) -> Value {
        if self.eat("(") {
            assert!(self.eat(")"), "the harness knows only the status functions, not `{name}(…)` in `{}`", self.text);
            return Value::Bool(match name {
                "success" => !self.scope.failed,
                "failure" => self.scope.failed,
                "always" => true,
                "cancelled" => false,
                _ => panic!("unknown function `{name}` in `{}`", self.text),
            });
        }
        match name {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "null" => Value::Null,
            _ => name.split('.').fold(self.scope.contexts.clone(), |v, key| v.get(key).cloned().unwrap_or(Value::Null)),
        }
    }
}

/// The value of `text`, an expression without `${{ }}`.
pub fn evaluate(text: &str, scope: &Scope) -> Value {
    let mut p = Parser { tokens: tokens(text), at: 0, scope, text };
    let v = p.or();
    assert!(p.at == p.tokens.len(), "the harness could not read all of `{text}`");
    v
}

/// An `if:` condition: an expression with or without `${{ }}`; an absent one is `success()`.
pub fn condition(text: Option<&str>, scope: &Scope) -> bool {
    let text = text.unwrap_or("success()").trim();
    let inner = text.strip_prefix("${{").and_then(|t| t.strip_suffix("}}")).unwrap_or(text);
    // The runner's rule: a condition that calls no status function is `success() && (…)`.
    let status = ["success()", "failure()", "always()", "cancelled()"].iter().any(|f| inner.contains(f));
    (status || !scope.failed) && truthy(&evaluate(inner, scope))
}

/// `text` with every `${{ … }}` replaced by its value as a string.
pub fn interpolate(text: &str, scope: &Scope) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").unwrap_or_else(|| panic!("unterminated `${{{{` in {text}")) + start;
        out.push_str(&to_string(&evaluate(&rest[start + 3..end], scope)));
        rest = &rest[end + 2..];
    }
    out + rest
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

fn to_string(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => format!("{}", n.as_f64().unwrap() as i64),
        other => other.to_string(),
    }
}

fn number(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().unwrap(),
        Value::String(s) if s.trim().is_empty() => 0.0,
        Value::String(s) => s.trim().parse().unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.eq_ignore_ascii_case(y),
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        _ => number(a) == number(b),
    }
}

#[test]
fn expressions_evaluate_as_the_runner_does() {
    let contexts = serde_json::json!({
        "inputs": {"comment": "true", "base": ""},
        "github": {"event_name": "pull_request", "event": {"pull_request": {"number": 7}}},
        "steps": {"check": {"outputs": {"stale": "true"}}},
    });
    let ok = Scope { contexts: &contexts, failed: false };
    let failed = Scope { contexts: &contexts, failed: true };
    assert!(condition(Some("inputs.comment == 'true' && github.event_name == 'pull_request'"), &ok));
    assert!(condition(Some("inputs.base != '' || github.event_name == 'PULL_REQUEST'"), &ok), "strings compare ignoring case");
    assert!(!condition(Some("steps.check.outputs.stale == 'true'"), &failed), "no status function: success() && …");
    assert!(condition(Some("always() && steps.check.outputs.stale == 'true'"), &failed));
    assert!(condition(None, &ok) && !condition(None, &failed));
    assert!(condition(Some("${{ !(inputs.base != '') }}"), &ok));
    assert_eq!(interpolate("pr ${{ github.event.pull_request.number }}: ${{ github.repo || 'it''s' }}", &ok), "pr 7: it's");
    assert_eq!(evaluate("steps.none.outputs.x", &ok), Value::Null);
}
