//! The demand file's durations (`"30d"`, `"1h30m"`), times in the horizon (`"day 3 14:00"`) and rates
//! (`"5%/month"`). Unlike Karpenter's Go durations (`profile::duration`) these take days: a horizon is days long.

/// Seconds in a duration made of `<n>d`, `<n>h`, `<n>m`, `<n>s` parts in that order, each at most once (`"30d"`,
/// `"2d12h"`, `"90s"`, `"0s"`). None when malformed or beyond ten years.
pub fn parse_duration(s: &str) -> Option<u64> {
    let mut total: u64 = 0;
    let mut number = String::new();
    let mut last_unit = 0;
    for c in s.trim().chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let (rank, scale) = match c {
            'd' => (1, 86_400),
            'h' => (2, 3_600),
            'm' => (3, 60),
            's' => (4, 1),
            _ => return None,
        };
        if number.is_empty() || rank <= last_unit {
            return None;
        }
        total = total.checked_add(number.parse::<u64>().ok()?.checked_mul(scale)?)?;
        number.clear();
        last_unit = rank;
    }
    (number.is_empty() && last_unit > 0 && total <= 3_650 * 86_400).then_some(total)
}

/// Seconds after midnight of `"HH:MM"` (00:00 to 24:00).
pub fn time_of_day(s: &str) -> Option<u64> {
    let (h, m) = s.trim().split_once(':')?;
    let (h, m): (u64, u64) = (h.parse().ok()?, m.parse().ok()?);
    (h <= 24 && m < 60 && h * 3_600 + m * 60 <= 86_400 && m.to_string().len() <= 2).then_some(h * 3_600 + m * 60)
}

/// Seconds from the horizon's start of a time: `"day N HH:MM"` or `"day N"` (day 1 is the first), `"HH:MM"` (on
/// day 1), or an offset written as a duration (`"2d6h"`).
pub fn parse_time(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(rest) = s.strip_prefix("day ") {
        let mut parts = rest.split_whitespace();
        let day: u64 = parts.next()?.parse().ok().filter(|d| *d >= 1)?;
        let clock = parts.next().map_or(Some(0), time_of_day)?;
        return parts.next().is_none().then_some((day - 1) * 86_400 + clock);
    }
    if s.contains(':') {
        return time_of_day(s);
    }
    parse_duration(s)
}

/// A rate written `"<p>%/day"`, `"/week"` or `"/month"` (30 days) as a fraction per day.
pub fn parse_rate_per_day(s: &str) -> Option<f64> {
    let (pct, per) = s.trim().split_once("%/")?;
    let pct: f64 = pct.trim().parse().ok().filter(|p: &f64| p.is_finite() && *p >= 0.0 && *p <= 100.0)?;
    let days = match per.trim() {
        "day" => 1.0,
        "week" => 7.0,
        "month" => 30.0,
        _ => return None,
    };
    Some(pct / 100.0 / days)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every unit alone and combined, in order; out of order, repeated, unitless or unknown units are refused.
    #[test]
    fn durations_take_days_hours_minutes_seconds_in_order() {
        for (s, want) in [("30d", 2_592_000), ("2d12h", 216_000), ("1h30m", 5_400), ("90s", 90), ("0s", 0), ("1d1h1m1s", 90_061)] {
            assert_eq!(parse_duration(s), Some(want), "{s}");
        }
        for bad in ["", "30", "h", "1m1h", "1h1h", "1w", "-1h", "1.5h", "99999d"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn times_are_day_clock_or_offset() {
        for (s, want) in [("day 1", 0), ("day 3 14:00", 2 * 86_400 + 14 * 3_600), ("09:30", 34_200), ("2d6h", 194_400), ("day 2 24:00", 2 * 86_400)] {
            assert_eq!(parse_time(s), Some(want), "{s}");
        }
        for bad in ["day 0", "day x", "25:00", "9:75", "day 1 10:00 x", "tomorrow"] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn rates_are_percentages_per_period() {
        assert_eq!(parse_rate_per_day("3%/day"), Some(0.03));
        assert!((parse_rate_per_day("5%/month").unwrap() - 0.05 / 30.0).abs() < 1e-15);
        assert!((parse_rate_per_day("7%/week").unwrap() - 0.01).abs() < 1e-15);
        for bad in ["5%", "5/month", "five%/day", "5%/year", "101%/day", "-1%/day"] {
            assert_eq!(parse_rate_per_day(bad), None, "{bad}");
        }
    }
}
