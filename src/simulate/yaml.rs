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
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
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
            err(format!("{}:{}", path.display(), start + line), format!("invalid YAML: {first}"))
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

/// A Kubernetes quantity in thousandths of its unit ("500m" → 500, "1Gi" → 1073741824000). None when malformed.
pub fn milli(quantity: &str) -> Option<i128> {
    let q = quantity.trim();
    let split = q.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-')).unwrap_or(q.len());
    let (number, suffix) = q.split_at(split);
    let (scale_num, scale_den): (i128, i128) = match suffix {
        "" => (1000, 1),
        "m" => (1, 1),
        "k" => (1_000_000, 1),
        "M" => (1_000_000_000, 1),
        "G" => (1_000_000_000_000, 1),
        "T" => (1_000_000_000_000_000, 1),
        "Ki" => (1024 * 1000, 1),
        "Mi" => (1024 * 1024 * 1000, 1),
        "Gi" => (1024 * 1024 * 1024 * 1000, 1),
        "Ti" => (1024_i128.pow(4) * 1000, 1),
        "Pi" => (1024_i128.pow(5) * 1000, 1),
        s if s.starts_with(['e', 'E']) => (1000 * 10_i128.checked_pow(s[1..].parse::<u32>().ok()?)?, 1),
        _ => return None,
    };
    let negative = number.starts_with('-');
    let digits = number.trim_start_matches(['+', '-']);
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.is_empty() && frac.is_empty() || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) || frac.len() > 9 {
        return None;
    }
    let den = 10_i128.pow(frac.len() as u32) * scale_den;
    let whole: i128 = format!("{int}{frac}").parse().ok()?;
    // Kubernetes rounds a quantity up to the nearest milli.
    let value = (whole * scale_num + den - 1) / den;
    Some(if negative { -value } else { value })
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

    #[test]
    fn documents_carry_their_start_line() {
        let docs = parse_docs(Path::new("f.yaml"), "a: 1\n---\n# c\nb: 2\n").unwrap();
        assert_eq!(docs.iter().map(|d| d.line).collect::<Vec<_>>(), vec![1, 3]);
        let e = parse_docs(Path::new("f.yaml"), "a: 1\n---\nb: [\n").unwrap_err();
        assert!(e.location.starts_with("f.yaml:"), "{e}");
    }
}
