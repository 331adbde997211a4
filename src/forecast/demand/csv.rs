//! `csv "demand/llm.csv"`: a series exported from a Prometheus range query. Accepted: one row per sample,
//! `timestamp,value`, an optional header row (Grafana's "Export CSV" writes `"Time","Value"`; a `promtool query
//! range` result converted with `jq -r '.data.result[0].values[] | @csv'` has none), fields optionally quoted,
//! timestamps as Unix seconds (Prometheus' own, fractional allowed), Unix milliseconds (Grafana's) or RFC 3339.
//! Times count from the first row; the last value holds to the horizon. Paths are relative to the demand file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Demand, Drive, Shape};
use crate::diagnostic::{ErrorCode, ProfileDiagnostic, Sources, Span};
use crate::limits::{Limit, CSV_BYTES, CSV_ROWS};

/// Reads every CSV series of `demand` into its points, adding each file to `sources` so that a bad row is reported
/// at the CSV's own file:line. Each distinct file is read once however many series name it (one large CSV named
/// forty times is one read), the files' bytes together are bounded by [`CSV_BYTES`] (checked on the size before a
/// file is read) and the series' rows together by [`CSV_ROWS`] (counted per series: each holds its points).
pub(super) fn read_all(demand: &mut Demand, dir: &Path, sources: &mut Sources) -> Vec<ProfileDiagnostic> {
    let mut diagnostics = Vec::new();
    let mut reader = Reader { dir, read: BTreeMap::new(), bytes: 0, rows: 0 };
    for cluster in demand.clusters.values_mut() {
        let workload_series = cluster.workloads.iter_mut().flat_map(|w| match &mut w.drive {
            Drive::Replicas(s) => vec![s],
            Drive::Metric(m) => m.iter_mut().map(|m| &mut m.series).collect(),
        });
        let series: Vec<_> = workload_series.chain(cluster.queues.iter_mut().map(|q| &mut q.pattern)).collect();
        for s in series {
            if let Shape::Csv { path, points } = &mut s.shape {
                match reader.series(&path.value, path.span, sources) {
                    Ok(Some(read)) => *points = read,
                    // Refused already, at the series that named the file first.
                    Ok(None) => {}
                    Err(d) => diagnostics.push(d),
                }
            }
        }
    }
    diagnostics
}

/// The CSVs read so far (None: refused, reported once) and the bytes and rows taken.
struct Reader<'d> {
    dir: &'d Path,
    read: BTreeMap<PathBuf, Option<Vec<(u64, f64)>>>,
    bytes: u64,
    rows: u64,
}

impl Reader<'_> {
    fn series(&mut self, name: &str, at: Span, sources: &mut Sources) -> Result<Option<Vec<(u64, f64)>>, ProfileDiagnostic> {
        // The demand file is the pull request's: its CSVs stay inside the repository (`crate::confine`); a symlink
        // leading out is refused when the file is read.
        if let Err((message, help)) = crate::confine::check_written(name, self.dir) {
            return Err(sources.error(at, ErrorCode::E0440, message).help(help));
        }
        let path = self.dir.join(name);
        // Before anything looks at the file (its size below, its canonical path here): an outside file's size is
        // not for the error to give away either.
        if let Err(err) = crate::confine::check_read(&path) {
            return Err(sources.error(at, ErrorCode::E0440, format!("cannot read the CSV `{name}`: {err}")));
        }
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        let points = match self.read.get(&key) {
            Some(points) => points.clone(),
            None => {
                let read = self.file(&path, name, at, sources);
                self.read.insert(key, read.as_ref().ok().cloned());
                Some(read?)
            }
        };
        let Some(points) = points else { return Ok(None) };
        let (rows, cap) = (self.rows + points.len() as u64, over(CSV_ROWS, at, sources)?);
        if rows > cap {
            let message = format!("the CSV `{name}` brings the demand file's series to {rows} rows, more than the {cap} {}", CSV_ROWS.counts);
            return Err(sources.error(at, ErrorCode::E0451, message).help(format!("downsample the series (one row a minute is enough) or name it fewer times; {}", CSV_ROWS.how_to_raise())));
        }
        self.rows = rows;
        Ok(Some(points))
    }

    fn file(&mut self, path: &Path, name: &str, at: Span, sources: &mut Sources) -> Result<Vec<(u64, f64)>, ProfileDiagnostic> {
        let cap = over(CSV_BYTES, at, sources)?;
        let too_big = |sources: &Sources, bytes: u64| {
            let message = format!("the CSV `{name}` brings the CSVs read to {} bytes, more than the {cap} {}", bytes, CSV_BYTES.counts);
            sources.error(at, ErrorCode::E0451, message).help(format!("downsample the series; {}", CSV_BYTES.how_to_raise()))
        };
        // The size first, so that a file past the cap is refused without being read.
        if let Ok(meta) = std::fs::metadata(path)
            && self.bytes + meta.len() > cap
        {
            return Err(too_big(sources, self.bytes + meta.len()));
        }
        let text = crate::input::read_to_string(path).map_err(|err| {
            let message = format!("cannot read the CSV `{name}`: {err}");
            sources.error(at, ErrorCode::E0427, message).help("the path is relative to the demand file's directory")
        })?;
        self.bytes += text.len() as u64;
        if self.bytes > cap {
            return Err(too_big(sources, self.bytes));
        }
        let file = sources.add(path, name.to_string(), text.clone());
        parse(&text).map_err(|(offset, len, message)| {
            let help = "each row is timestamp,value: Unix seconds, Unix milliseconds or RFC 3339, then a number (a header row is allowed first)";
            sources.error(Span { file, offset, len }, ErrorCode::E0427, message).help(help)
        })
    }
}

/// The limit in force, or E0451 at the series when its variable cannot be read.
fn over(limit: Limit, at: Span, sources: &Sources) -> Result<u64, ProfileDiagnostic> {
    limit.value().map_err(|e| sources.error(at, ErrorCode::E0451, format!("the CSV limit cannot be read: {e}")).help(format!("set {} to a positive whole number, or unset it", limit.env)))
}

/// The rows as (seconds from the first row, value); on a bad row its byte offset, length and what is wrong.
pub fn parse(text: &str) -> Result<Vec<(u64, f64)>, (usize, usize, String)> {
    let mut rows: Vec<(f64, f64)> = Vec::new();
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        let row = line.trim_end_matches(['\n', '\r']);
        if row.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = row.split(',').map(|f| f.trim().trim_matches('"')).collect();
        let bad = |message: String| (start, row.len(), message);
        let [time, value] = fields[..] else {
            return Err(bad(format!("{} fields in a row of timestamp,value", fields.len())));
        };
        let Some(time) = timestamp(time) else {
            if i == 0 && rows.is_empty() && value.parse::<f64>().is_err() {
                continue; // the header
            }
            return Err(bad(format!("`{time}` is not a timestamp")));
        };
        let value: f64 = value.parse().ok().filter(|v: &f64| v.is_finite() && *v >= 0.0).ok_or_else(|| bad(format!("`{value}` is not a number ≥ 0")))?;
        if rows.last().is_some_and(|last| time < last.0) {
            return Err(bad("timestamps go backwards".to_string()));
        }
        rows.push((time, value));
    }
    let Some(first) = rows.first().map(|r| r.0) else {
        return Err((0, 0, "the CSV has no rows".to_string()));
    };
    Ok(rows.into_iter().map(|(t, v)| ((t - first).round() as u64, v)).collect())
}

/// Seconds since the epoch of a Unix-seconds, Unix-milliseconds (above 10¹¹: after 1973 in ms, the year 5138 in s)
/// or RFC 3339 timestamp.
fn timestamp(s: &str) -> Option<f64> {
    if let Ok(n) = s.parse::<f64>() {
        return (n.is_finite() && n >= 0.0).then(|| if n > 1e11 { n / 1000.0 } else { n });
    }
    let t = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()?;
    Some(t.unix_timestamp_nanos() as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The three timestamp forms, a header, quotes and CRLF all read to the same series.
    #[test]
    fn prometheus_and_grafana_exports_read_alike() {
        let want = vec![(0, 1.0), (60, 2.5), (120, 0.0)];
        for text in [
            "1700000000,1\n1700000060,2.5\n1700000120,0\n",
            "\"Time\",\"Value\"\r\n\"1700000000000\",\"1\"\r\n\"1700000060000\",\"2.5\"\r\n\"1700000120000\",\"0\"\r\n",
            "timestamp,value\n2023-11-14T22:13:20Z,1\n2023-11-14T22:14:20Z,2.5\n\n2023-11-14T22:15:20Z,0\n",
            "1700000000.0,1\n1700000060.2,2.5\n1700000119.9,0",
        ] {
            assert_eq!(parse(text), Ok(want.clone()), "{text:?}");
        }
    }

    /// A bad row is reported at its own offset, whatever is wrong with it.
    #[test]
    fn a_bad_row_is_located() {
        let text = "1700000000,1\n1700000060,x\n";
        assert_eq!(parse(text).unwrap_err().0, 13);
        for bad in ["1,2,3\n", "1700000000,1\nyesterday,2\n", "1700000060,1\n1700000000,1\n", "1700000000,-1\n", "1700000000,NaN\n", ""] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
