//! `csv "demand/llm.csv"`: a series exported from a Prometheus range query. Accepted: one row per sample,
//! `timestamp,value`, an optional header row (Grafana's "Export CSV" writes `"Time","Value"`; a `promtool query
//! range` result converted with `jq -r '.data.result[0].values[] | @csv'` has none), fields optionally quoted,
//! timestamps as Unix seconds (Prometheus' own, fractional allowed), Unix milliseconds (Grafana's) or RFC 3339.
//! Times count from the first row; the last value holds to the horizon. Paths are relative to the demand file.

use std::path::Path;

use super::{Demand, Drive, Shape};
use crate::diagnostic::{ErrorCode, ProfileDiagnostic, Sources, Span};

/// Reads every CSV series of `demand` into its points, adding each file to `sources` so that a bad row is reported
/// at the CSV's own file:line.
pub(super) fn read_all(demand: &mut Demand, dir: &Path, sources: &mut Sources) -> Vec<ProfileDiagnostic> {
    let mut diagnostics = Vec::new();
    for cluster in demand.clusters.values_mut() {
        let workload_series = cluster.workloads.iter_mut().flat_map(|w| match &mut w.drive {
            Drive::Replicas(s) => vec![s],
            Drive::Metric(m) => m.iter_mut().map(|m| &mut m.series).collect(),
        });
        let series: Vec<_> = workload_series.chain(cluster.queues.iter_mut().map(|q| &mut q.pattern)).collect();
        for s in series {
            if let Shape::Csv { path, points } = &mut s.shape {
                match read(dir, &path.value, path.span, sources) {
                    Ok(read) => *points = read,
                    Err(d) => diagnostics.push(d),
                }
            }
        }
    }
    diagnostics
}

fn read(dir: &Path, name: &str, at: Span, sources: &mut Sources) -> Result<Vec<(u64, f64)>, ProfileDiagnostic> {
    // The demand file is the pull request's: its CSVs stay inside the repository (`crate::confine`); a symlink
    // leading out is refused when the file is read.
    if let Err((message, help)) = crate::confine::check_written(name, dir) {
        return Err(sources.error(at, ErrorCode::E0440, message).help(help));
    }
    let path = dir.join(name);
    let text = crate::input::read_to_string(&path).map_err(|err| {
        let message = format!("cannot read the CSV `{name}`: {err}");
        sources.error(at, ErrorCode::E0427, message).help("the path is relative to the demand file's directory")
    })?;
    let file = sources.add(&path, name.to_string(), text.clone());
    parse(&text).map_err(|(offset, len, message)| {
        let help = "each row is timestamp,value: Unix seconds, Unix milliseconds or RFC 3339, then a number (a header row is allowed first)";
        sources.error(Span { file, offset, len }, ErrorCode::E0427, message).help(help)
    })
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
