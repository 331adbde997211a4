//! YAML input: multi-document files and directories, with the line each document starts on so that a bad input is
//! reported as `file:line`; Kubernetes quantities; resource lists.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// One YAML document of an input file.
#[derive(Debug, Clone)]
pub struct Doc<'v> {
    pub path: PathBuf,
    /// 1-based line of the document's first line.
    pub line: usize,
    pub text: String,
    /// Parsed from `text`, or borrowed from an object already parsed (compile's generated objects: copying every
    /// NodePool and EC2NodeClass of a cluster just to read it was most of building the simulator's input).
    pub value: Cow<'v, Value>,
}

/// The value at a path of object keys: `Value::pointer` for keys that need no escaping and hold no array index,
/// without parsing and allocating the path on every call (every generated NodePool is read this way per cluster).
pub fn field<'v>(value: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

impl Doc<'_> {
    /// `file:line` of the first line in this document that mentions `needle` (the document start otherwise): where a
    /// semantic error points.
    pub fn at(&self, needle: &str) -> String {
        let offset = self.text.lines().position(|l| !needle.is_empty() && l.contains(needle)).unwrap_or(0);
        format!("{}:{}", self.path.display(), self.line + offset)
    }

    pub fn kind(&self) -> &str {
        self.value.get("kind").and_then(Value::as_str).unwrap_or("")
    }

    pub fn api_version(&self) -> &str {
        self.value.get("apiVersion").and_then(Value::as_str).unwrap_or("")
    }
}

/// A bad input: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub location: String,
    pub message: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

pub fn err(location: String, message: impl Into<String>) -> InputError {
    InputError { location, message: message.into() }
}

/// Files named by the paths: a file as is, a directory's *.yaml / *.yml files recursively, sorted.
pub fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut out = Vec::new();
    for path in paths {
        collect(path, &mut out).map_err(|e| err(path.display().to_string(), format!("cannot read: {e}")))?;
    }
    Ok(out)
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if !path.is_dir() {
        std::fs::metadata(path)?;
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = crate::confine::read_dir(path)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for entry in entries {
        let yaml = entry.extension().is_some_and(|e| e == "yaml" || e == "yml");
        if entry.is_dir() || yaml {
            collect(&entry, out)?;
        }
    }
    Ok(())
}

/// Reads every document of every file (empty documents skipped).
pub fn read_docs(paths: &[PathBuf]) -> Result<Vec<Doc<'static>>, InputError> {
    let mut docs = Vec::new();
    for path in files(paths)? {
        let text = crate::input::read_to_string(&path).map_err(|e| err(path.display().to_string(), format!("cannot read: {e}")))?;
        docs.extend(parse_docs(&path, &text)?);
    }
    Ok(docs)
}

/// Splits on `---` lines and parses each document.
pub fn parse_docs(path: &Path, text: &str) -> Result<Vec<Doc<'static>>, InputError> {
    let mut docs = Vec::new();
    let mut start = 1;
    let mut current = String::new();
    let flush = |start: usize, body: &str, docs: &mut Vec<Doc<'static>>| -> Result<(), InputError> {
        if body.lines().all(|l| l.trim().is_empty() || l.trim_start().starts_with('#')) {
            return Ok(());
        }
        let value: Value = serde_saphyr::from_str(body).map_err(|e| {
            let line = e.location().map_or(0, |l| l.line() as usize).saturating_sub(1);
            let first = e.to_string().lines().next().unwrap_or("invalid YAML").to_string();
            let column = e.location().map_or(0, |l| l.column() as usize);
            let message = duplicate_key(path, start, body, line, column, &first).unwrap_or_else(|| format!("invalid YAML: {first}"));
            err(format!("{}:{}", path.display(), start + line), message)
        })?;
        if !value.is_null() {
            docs.push(Doc { path: path.to_path_buf(), line: start, text: body.to_string(), value: Cow::Owned(value) });
        }
        Ok(())
    };
    for (i, line) in text.lines().enumerate() {
        if line.trim_end() == "---" || line.starts_with("--- ") {
            flush(start, &current, &mut docs)?;
            current.clear();
            start = i + 2;
            continue;
        }
        current.push_str(line);
        current.push('\n');
    }
    flush(start, &current, &mut docs)?;
    Ok(docs)
}

/// The message for a key written twice in one mapping (the parser's error names the second, at `line` of `body`,
/// 0-based, and `column`, 1-based): both lines, and what the API server does with it. YAML 1.2 forbids it ("each of
/// the keys is unique", 3.2.1.1); the API server refuses the object under kubectl's default `--validate=strict`
/// ("duplicate field"), and under `warn` or `ignore` keeps the last one: k8s.io/apimachinery
/// `pkg/apis/meta/v1/types.go` `CreateOptions.FieldValidation` ("Warn: … will only persist the last of any duplicate
/// fields", "Ignore: … will ignore all but the last duplicate field that the decoder encounters"). None for another error.
fn duplicate_key(path: &Path, start: usize, body: &str, line: usize, column: usize, error: &str) -> Option<String> {
    let key = error.split("duplicate mapping key: ").nth(1)?.split(',').next()?.trim().to_string();
    let lines: Vec<&str> = body.lines().collect();
    // The key's column of a line (after its indentation and any `- ` item markers), and whether it opens an item.
    let key_column = |l: &str| {
        let rest = l.trim_start_matches([' ', '-']);
        (l.len() - rest.len(), l.trim_start().starts_with("- "))
    };
    let target = column.saturating_sub(1);
    let mut first = None;
    for i in (0..line.min(lines.len())).rev() {
        let text = lines[i];
        if text.trim().is_empty() || text.trim_start().starts_with('#') {
            continue;
        }
        let (col, item) = key_column(text);
        let rest = &text[col..];
        if col == target && [format!("{key}:"), format!("\"{key}\":"), format!("'{key}':")].iter().any(|k| rest.starts_with(k.as_str())) {
            first = Some(i);
            break;
        }
        if col < target || item && col == target {
            break;
        }
    }
    let file = path.display();
    let second = start + line;
    let both = match first {
        Some(i) => format!("{file}:{} and {file}:{second}", start + i),
        None => format!("{file}:{second} and earlier in the same mapping"),
    };
    Some(format!(
        "`{key}` is written twice in one mapping ({both}): YAML allows a key once; the API server refuses the object under kubectl's default --validate=strict (\"duplicate field\"), and under --validate=warn or ignore keeps only the last one ({file}:{second}), dropping the first without a word: delete the one you do not mean"
    ))
}

/// The field `path` (dotted, as messages name it) of `value`, which must be a list when present: `path must be a
/// list` at the line that names its last key otherwise (`containers: "x"` used to read as no containers).
pub fn list<'v>(doc: &Doc, value: Option<&'v Value>, path: &str) -> Result<&'v [Value], InputError> {
    match value {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(other) => Err(wrong_type(doc, path, "a list", other)),
    }
}

/// The field `path` of `value`, which must be a map when present (see [`list`]).
pub fn map<'v>(doc: &Doc, value: Option<&'v Value>, path: &str) -> Result<Option<&'v serde_json::Map<String, Value>>, InputError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(other) => Err(wrong_type(doc, path, "a map", other)),
    }
}

/// The field `path` of `value`, which must be a string when present (see [`list`]).
pub fn string<'v>(doc: &Doc, value: Option<&'v Value>, path: &str) -> Result<Option<&'v str>, InputError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(wrong_type(doc, path, "a string", other)),
    }
}

/// The field `path` of `value`, which must be an integer in `range` when present (see [`list`]): a NodePool
/// `weight: "heavy"` used to read as 0.
pub fn integer(doc: &Doc, value: Option<&Value>, path: &str, range: std::ops::RangeInclusive<i64>) -> Result<Option<i64>, InputError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_i64().filter(|n| range.contains(n)) {
            Some(n) => Ok(Some(n)),
            None => Err(wrong_type(doc, path, &format!("an integer from {} to {}", range.start(), range.end()), v)),
        },
    }
}

/// `file:line: path must be KIND, not VALUE`, at the first line naming the path's last key.
pub fn wrong_type(doc: &Doc, path: &str, kind: &str, value: &Value) -> InputError {
    let key = path.rsplit('.').next().unwrap_or(path);
    let shown = value.to_string();
    err(doc.at(&format!("{key}:")), format!("{path} must be {kind}, not {}", crate::input::excerpt(&shown)))
}

/// A Kubernetes quantity in thousandths of its unit ("500m" → 500, "1Gi" → 1073741824000), rounded up to the nearest
/// milli as `Quantity.MilliValue` rounds. None when malformed (see [`nano`]).
pub fn milli(quantity: &str) -> Option<i128> {
    let n = nano(quantity)?;
    let magnitude = (n.abs() + 999_999) / 1_000_000;
    Some(if n < 0 { -magnitude } else { magnitude })
}

/// A Kubernetes quantity in billionths of its unit, as the API server reads and stores it: k8s.io/apimachinery
/// `pkg/api/resource/quantity.go` `ParseQuantity` and its grammar, `<signedNumber><suffix>` where the number is
/// `1`, `1.5`, `1.` or `.5` with an optional `+`/`-`, and the suffix is binary (`Ki Mi Gi Ti Pi Ei`), decimal
/// (`n u m "" k M G T P E`) or an exponent (`e`/`E` and a signed integer: `1e3`, `1E-3`). A non-zero value is rounded
/// up (in magnitude) to the nearest nano, as `ParseQuantity` does ("if you want some resources, you should get some
/// resources"). Surrounding spaces are trimmed, as `Quantity.UnmarshalJSON` trims them. None when malformed, and for
/// magnitudes beyond about 10^29 (no resource gpuplan reads comes near).
pub fn nano(quantity: &str) -> Option<i128> {
    let q = quantity.trim();
    let (negative, rest) = match q.as_bytes().first() {
        Some(b'-') => (true, &q[1..]),
        Some(b'+') => (false, &q[1..]),
        _ => (false, q),
    };
    let split = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(split);
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if int.is_empty() && frac.is_empty() || frac.contains('.') {
        return None;
    }
    // The value is number × 2^binary × 10^decimal.
    let (binary, decimal): (u32, i64) = match suffix {
        "" => (0, 0),
        "n" => (0, -9),
        "u" => (0, -6),
        "m" => (0, -3),
        "k" => (0, 3),
        "M" => (0, 6),
        "G" => (0, 9),
        "T" => (0, 12),
        "P" => (0, 15),
        "E" => (0, 18),
        "Ki" => (10, 0),
        "Mi" => (20, 0),
        "Gi" => (30, 0),
        "Ti" => (40, 0),
        "Pi" => (50, 0),
        "Ei" => (60, 0),
        s if s.len() > 1 && s.starts_with(['e', 'E']) => {
            let exponent = &s[1..];
            let digits = exponent.trim_start_matches(['+', '-']);
            if digits.is_empty() || exponent.len() - digits.len() > 1 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (0, exponent.parse::<i64>().ok().filter(|e| e.abs() <= 1000)?)
        }
        _ => return None,
    };
    let frac = frac.trim_end_matches('0');
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let mantissa: i128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    let mantissa = mantissa.checked_mul(1_i128 << binary)?;
    let scale = decimal + 9 - frac.len() as i64;
    let magnitude = if scale >= 0 {
        mantissa.checked_mul(10_i128.checked_pow(u32::try_from(scale).ok()?)?)?
    } else if -scale > 38 {
        i128::from(mantissa > 0)
    } else {
        let den = 10_i128.pow((-scale) as u32);
        mantissa / den + i128::from(mantissa % den != 0)
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// A resource list in milli-units, keyed by resource name.
pub type Resources = BTreeMap<String, i128>;

/// Parses a `{resource: quantity}` map; Err names the offending entry.
pub fn resources(value: Option<&Value>) -> Result<Resources, String> {
    let mut out = Resources::new();
    let map = match value {
        None | Some(Value::Null) => return Ok(out),
        Some(Value::Object(map)) => map,
        Some(other) => return Err(format!("a resource list must be a map of quantities, not {}", crate::input::excerpt(&other.to_string()))),
    };
    for (name, q) in map {
        let text = match q {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            other => return Err(format!("{name}: {other} is not a quantity")),
        };
        out.insert(name.clone(), milli(&text).ok_or_else(|| format!("{name}: {text:?} is not a Kubernetes quantity"))?);
    }
    Ok(out)
}

/// A quantity in readable form for reports: cpu in cores, bytes in Gi, else a plain number.
pub fn show(resource: &str, milli: i128) -> String {
    let units = milli as f64 / 1000.0;
    if resource == "memory" || resource.ends_with("storage") {
        let gi = units / (1024.0 * 1024.0 * 1024.0);
        return format!("{}Gi", trim(gi));
    }
    trim(units)
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// resources.Fits: every request within allocatable (a missing resource is zero), and no allocatable value negative
/// (such a type fits nothing, not even a NodeClaim that requests nothing, as a static replica's launch).
pub fn fits(requests: &Resources, allocatable: &Resources) -> bool {
    allocatable_usable(allocatable) && requests.iter().all(|(k, v)| *v <= 0 || allocatable.get(k).is_some_and(|a| v <= a))
}

/// sigs.k8s.io/karpenter v1.14.1 pkg/utils/resources `Fits`: "If any of the total resource values are negative then
/// the resource will never fit".
pub fn allocatable_usable(allocatable: &Resources) -> bool {
    allocatable.values().all(|v| *v >= 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Kubernetes apimachinery resource.Quantity: suffixes and round-up to milli.
    #[test]
    fn quantities() {
        assert_eq!(milli("500m"), Some(500));
        assert_eq!(milli("2"), Some(2000));
        assert_eq!(milli("1.5"), Some(1500));
        assert_eq!(milli("1Gi"), Some(1_073_741_824_000));
        assert_eq!(milli("1k"), Some(1_000_000));
        assert_eq!(milli("1e3"), Some(1_000_000));
        assert_eq!(milli("0.0001"), Some(1));
        assert_eq!(milli("abc"), None);
        assert_eq!(milli("1Zi"), None);
    }

    // k8s.io/apimachinery pkg/api/resource/quantity.go: every form of its grammar, and what it refuses.
    #[test]
    fn every_form_the_api_server_accepts_reads_as_it_does() {
        let gi = 1024_i128.pow(3);
        for (text, value) in [
            ("1k", 1_000_000_000_000),
            ("1000m", 1_000_000_000),
            ("1e3", 1_000_000_000_000),
            ("1E3", 1_000_000_000_000),
            ("1e+3", 1_000_000_000_000),
            ("1e-3", 1_000_000),
            ("500Gi", 500 * gi * 1_000_000_000),
            ("0.5", 500_000_000),
            (".5", 500_000_000),
            ("1.", 1_000_000_000),
            ("+1", 1_000_000_000),
            ("-1", -1_000_000_000),
            ("1.5k", 1_500_000_000_000),
            ("100M", 100_000_000_000_000_000),
            ("2P", 2_000_000_000_000_000_000_000_000),
            ("1E", 1_000_000_000_000_000_000_000_000_000),
            ("1Ei", (1_i128 << 60) * 1_000_000_000),
            ("5n", 5),
            ("5u", 5_000),
            ("0.1n", 1),
            ("1.0000000001", 1_000_000_001),
            ("0", 0),
            (" 2 ", 2_000_000_000),
        ] {
            assert_eq!(nano(text), Some(value), "{text}");
        }
        for bad in ["", ".", "+", "1e", "1.5.0", "1K", "1ki", "1 k", "1e1.5", "1e--3", "k", "0x10", "1Mi2", "1e3k"] {
            assert_eq!(nano(bad), None, "{bad:?}");
        }
        assert_eq!(milli("1u"), Some(1));
        assert_eq!(milli("-1500u"), Some(-2));
    }

    // k8s.io/apimachinery pkg/apis/meta/v1/types.go CreateOptions.FieldValidation: Strict refuses duplicate fields,
    // Warn and Ignore keep the last.
    #[test]
    fn a_duplicate_key_names_both_lines_and_the_value_the_api_server_keeps() {
        let text = "kind: NodePool\nspec:\n  limits:\n    cpu: 100\n  # again\n  limits:\n    cpu: 1k\n";
        let e = parse_docs(Path::new("f.yaml"), &format!("a: 1\n---\n{text}")).unwrap_err();
        assert_eq!(e.location, "f.yaml:8");
        assert!(e.message.starts_with("`limits` is written twice in one mapping (f.yaml:5 and f.yaml:8)"), "{e}");
        assert!(e.message.contains("keeps only the last one (f.yaml:8)") && e.message.contains("--validate=strict"), "{e}");
        // A Deployment's container with two `resources:` (items of a list: the first item's keys are another mapping).
        let deployment = "spec:\n  containers:\n  - name: a\n    resources: {}\n  - name: b\n    resources: {}\n    resources: {limits: {cpu: 1}}\n";
        let e = parse_docs(Path::new("d.yaml"), deployment).unwrap_err();
        assert!(e.message.starts_with("`resources` is written twice in one mapping (d.yaml:6 and d.yaml:7)"), "{e}");
    }

    #[test]
    fn documents_carry_their_start_line() {
        let docs = parse_docs(Path::new("f.yaml"), "a: 1\n---\n# c\nb: 2\n").unwrap();
        assert_eq!(docs.iter().map(|d| d.line).collect::<Vec<_>>(), vec![1, 3]);
        let e = parse_docs(Path::new("f.yaml"), "a: 1\n---\nb: [\n").unwrap_err();
        assert!(e.location.starts_with("f.yaml:"), "{e}");
    }
}
