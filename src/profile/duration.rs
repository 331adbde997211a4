//! Durations as Karpenter and KEDA read them: Go-style `1h30m` (hours, minutes and seconds; no days), checked
//! once here (E0121) for every setting that takes one, and written back the same way in help texts.

use super::parser::Parser;
use crate::diagnostic::ErrorCode;
use crate::diagnostic::Spanned;

impl Parser<'_> {
    /// Karpenter durations: `^([0-9]+(s|m|h))+$`, or `Never` where allowed.
    pub(super) fn duration(&mut self, v: Spanned<String>, never_ok: bool) -> Option<Spanned<String>> {
        if (never_ok && v.as_str() == "Never") || duration_minutes(&v).is_some() {
            return Some(v);
        }
        let help = if never_ok {
            "write a Go duration in s, m and h (e.g. \"30m\", \"720h\", \"1h30m\") or \"Never\"; days are not a unit (\"7d\" → \"168h\")"
        } else {
            "write a Go duration in s, m and h, e.g. \"30m\", \"4h\", \"1h30m\"; days are not a unit (\"7d\" → \"168h\")"
        };
        self.error(v.span, ErrorCode::E0121, format!("`{}` is not a duration", v.value), help);
        None
    }
}

/// Minutes in a Go-style duration made of h/m/s parts ("1h30m"); None if malformed. Seconds round down.
pub fn duration_minutes(s: &str) -> Option<u32> {
    total_seconds(s).map(|s| (s / 60) as u32)
}

/// Seconds in a Go-style duration made of h/m/s parts ("1h30m"); None if malformed or beyond u32.
pub fn duration_seconds(s: &str) -> Option<u32> {
    total_seconds(s).and_then(|s| u32::try_from(s).ok())
}

fn total_seconds(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut total_seconds: u64 = 0;
    let mut number = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            number.push(c);
        } else {
            let n: u64 = number.parse().ok()?;
            number.clear();
            total_seconds += n * match c {
                'h' => 3600,
                'm' => 60,
                's' => 1,
                _ => return None,
            };
        }
    }
    number.is_empty().then_some(total_seconds)
}

/// Seconds as the profile writes a duration: 900 → `15m`, 5400 → `1h30m`, 45 → `45s`.
pub fn format_seconds(seconds: u32) -> String {
    let (h, m, s) = (seconds / 3600, seconds % 3600 / 60, seconds % 60);
    let mut out = String::new();
    for (n, unit) in [(h, 'h'), (m, 'm'), (s, 's')] {
        if n > 0 {
            out.push_str(&format!("{n}{unit}"));
        }
    }
    if out.is_empty() {
        out.push_str("0s");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_follow_karpenter_pattern() {
        assert_eq!(duration_minutes("1h30m"), Some(90));
        assert_eq!(duration_minutes("720h"), Some(720 * 60));
        assert_eq!(duration_minutes("7d"), None);
        assert_eq!(duration_minutes("10"), None);
        assert_eq!(duration_minutes(""), None);
    }
}
