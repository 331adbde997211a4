//! The comment's expected cost, from the forecast (`forecast`), when the repository has a demand file: base and
//! head each compiled and replayed on the same seeds, so each seed's difference is the change's alone, and the
//! range over the seeds is how much the demand's randomness moves it. Without a demand file the comment calls
//! nothing "expected" (its at-limit figure is every pool at its limit on its cheapest type, a reference).

use std::collections::BTreeSet;

use super::policy::HOURS_PER_MONTH;
use super::pools::Figures;
use crate::forecast::report::{horizon, money, Forecast, BOOK_PAGE};
use crate::forecast::summary::ClusterForecast;

/// Both sides' forecasts, on the same seeds and horizon.
#[derive(Debug, Clone)]
pub struct ForecastReview {
    pub before: Forecast,
    pub after: Forecast,
}

/// One cluster's expected change: the mean of the per-seed differences, and their range.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectedChange {
    pub cluster: String,
    pub before_usd_per_month: f64,
    pub after_usd_per_month: f64,
    pub delta_usd_per_month: f64,
    pub min_delta_usd_per_month: f64,
    pub max_delta_usd_per_month: f64,
    pub seeds: usize,
}

impl ForecastReview {
    /// Per cluster of either side: seed by seed, after − before ($/month). A cluster on one side only is compared
    /// with nothing (zero) on the other.
    pub fn changes(&self) -> Vec<ExpectedChange> {
        let find = |f: &'_ Forecast, name: &str| f.clusters.iter().find(|c| c.cluster == name).cloned();
        let names: BTreeSet<&str> = self.before.clusters.iter().chain(&self.after.clusters).map(|c| c.cluster.as_str()).collect();
        names
            .into_iter()
            .map(|name| {
                let (b, a) = (find(&self.before, name), find(&self.after, name));
                let runs = |c: &Option<ClusterForecast>| c.as_ref().map(|c| c.runs_usd_per_month.clone()).unwrap_or_default();
                let (rb, ra) = (runs(&b), runs(&a));
                let n = rb.len().max(ra.len());
                let deltas: Vec<f64> = (0..n).map(|i| ra.get(i).copied().unwrap_or(0.0) - rb.get(i).copied().unwrap_or(0.0)).collect();
                let mean = |v: &[f64]| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
                ExpectedChange {
                    cluster: name.to_string(),
                    before_usd_per_month: mean(&rb),
                    after_usd_per_month: mean(&ra),
                    delta_usd_per_month: mean(&deltas),
                    min_delta_usd_per_month: deltas.iter().copied().fold(f64::INFINITY, f64::min),
                    max_delta_usd_per_month: deltas.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    seeds: n,
                }
            })
            .collect()
    }
}

/// Whole dollars with a sign: "+$812", "-$1,204", "+$0".
fn signed(v: f64) -> String {
    // `+ 0.0` makes a rounded -0.4 (-0.0) zero.
    let rounded = v.round() + 0.0;
    let body = if rounded.abs() < 100.0 { format!("${:.0}", rounded.abs()) } else { money(rounded.abs()) };
    format!("{}{body}", if rounded < 0.0 { "-" } else { "+" })
}

impl ExpectedChange {
    /// "+$812/month expected (range over 5 seeds: +$640…+$990)".
    pub fn sentence(&self) -> String {
        let range = if self.seeds > 1 { format!(" (range over {} seeds: {}…{})", self.seeds, signed(self.min_delta_usd_per_month), signed(self.max_delta_usd_per_month)) } else { String::new() };
        format!("{}/month expected{range}", signed(self.delta_usd_per_month))
    }
}

/// The comment's section: one line per cluster, the table, and the assumptions named.
pub fn section(review: &ForecastReview) -> String {
    let changes = review.changes();
    let f = &review.after;
    let mut s = format!("\n#### Expected cost (forecast: {}, {} seeds)\n\n", horizon(f.horizon_seconds), f.seeds.len());
    for c in &changes {
        s.push_str(&format!("- `{}`: **{}**\n", c.cluster, c.sentence()));
    }
    s.push_str("\n| Cluster | Before $/month | After $/month | Change |\n|---|---|---|---|\n");
    for c in &changes {
        s.push_str(&format!("| `{}` | {} | {} | {} |\n", c.cluster, money(c.before_usd_per_month), money(c.after_usd_per_month), signed(c.delta_usd_per_month)));
    }
    s.push_str(&format!("\n<details><summary>Assumptions (<a href=\"{BOOK_PAGE}\">the forecast</a>; demand: <code>{}</code>)</summary>\n\n", f.demand));
    for a in &f.assumptions {
        s.push_str(&format!("- {a}\n"));
    }
    s.push_str("\n</details>\n");
    s
}

/// The policy's `expected` figures: each profile's forecast mean $/h, into the figures of the same side.
pub fn with_expected(figures: &mut Figures, forecast: &Forecast) {
    for c in &forecast.clusters {
        for p in &c.profiles {
            let per_hour = p.spend.usd_per_month.mean / HOURS_PER_MONTH;
            figures.entry(c.cluster.clone()).or_default().entry(p.name.clone()).or_default().expected = Some(per_hour);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forecast(clusters: &[(&str, &[f64])]) -> Forecast {
        let clusters = clusters.iter().map(|(name, runs)| ClusterForecast { cluster: name.to_string(), runs: runs.len(), runs_usd_per_month: runs.to_vec(), ..ClusterForecast::default() }).collect();
        Forecast::new("gpuplan.demand.kdl".into(), 30 * 86_400, vec![1, 2, 3], clusters)
    }

    #[test]
    fn the_expected_change_is_the_mean_of_the_seed_by_seed_differences_with_their_range() {
        let review = ForecastReview { before: forecast(&[("a", &[1000.0, 2000.0, 3000.0])]), after: forecast(&[("a", &[1640.0, 2990.0, 3806.0])]) };
        let [c] = review.changes().try_into().unwrap();
        assert_eq!((c.min_delta_usd_per_month, c.max_delta_usd_per_month), (640.0, 990.0));
        assert_eq!(c.sentence(), "+$812/month expected (range over 3 seeds: +$640…+$990)");
    }

    #[test]
    fn a_cluster_on_one_side_only_is_compared_with_nothing() {
        let review = ForecastReview { before: forecast(&[]), after: forecast(&[("new", &[50.0, 70.0])]) };
        assert_eq!(review.changes()[0].sentence(), "+$60/month expected (range over 2 seeds: +$50…+$70)");
        let gone = ForecastReview { before: forecast(&[("old", &[1234.4])]), after: forecast(&[]) };
        assert_eq!(gone.changes()[0].sentence(), "-$1,234/month expected", "one seed: no range");
    }

    #[test]
    fn the_policy_reads_each_profiles_forecast_per_hour() {
        let mut f = forecast(&[("a", &[730.0])]);
        f.clusters[0].profiles.push(crate::forecast::summary::ProfileForecast { name: "p".into(), spend: crate::forecast::summary::Spend { usd_per_month: crate::forecast::summary::Spread { mean: 730.0, min: 730.0, max: 730.0 }, ..Default::default() } });
        let mut figures = Figures::new();
        with_expected(&mut figures, &f);
        assert_eq!(figures["a"]["p"].expected, Some(1.0));
    }
}
