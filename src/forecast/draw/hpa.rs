//! The HorizontalPodAutoscaler controller, ported from Kubernetes v1.37.2 `pkg/controller/podautoscaler`
//! (`horizontal.go`, `replica_calculator.go`, `metrics/utilization.go`): one [`HpaState::sync`] is one
//! `reconcileAutoscaler` at a 15 s sync (`--horizontal-pod-autoscaler-sync-period`), with the default 0.1 tolerance,
//! on a workload whose pods all report the metric (no missing or unready pods: see `draw`'s doc).

use crate::forecast::scaler::{Behavior, Rules, Select};

/// `--horizontal-pod-autoscaler-sync-period`'s default.
pub const SYNC_SECONDS: u64 = 15;

/// `--horizontal-pod-autoscaler-tolerance`'s default, both ways (`Tolerances{0.1, 0.1}`).
pub const TOLERANCE: f64 = 0.1;

/// How a metric's value becomes a replica count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MetricKind {
    /// A `Pods` metric: each pod reports its share of `total` (`calcPlainMetricReplicas`).
    Pods,
    /// An `External` metric with an AverageValue target, as KEDA's HPA reads a trigger
    /// (`GetExternalPerPodMetricReplicas`).
    External,
}

/// One metric's reading at a sync: its total over the workload (milli-units) and its target per pod.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub kind: MetricKind,
    pub total_milli: i64,
    pub target_milli: i64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct ScaleEvent {
    change: i32,
    at: i64,
    outdated: bool,
}

/// What the controller remembers of one HPA between syncs: `recommendations`, `scaleUpEvents`, `scaleDownEvents`.
#[derive(Debug, Clone, Default)]
pub struct HpaState {
    recommendations: Vec<(i32, i64)>,
    up_events: Vec<ScaleEvent>,
    down_events: Vec<ScaleEvent>,
}

/// The replicas one metric asks for (`replica_calculator.go`). Pods: every one of `current` pods reports
/// `total/current` (`GetMetricUsageRatio` averages with integer division); External: the sum against the target
/// per pod.
pub fn metric_replicas(r: Reading, current: i32) -> i32 {
    let within = |ratio: f64| (1.0 - TOLERANCE) <= ratio && ratio <= (1.0 + TOLERANCE);
    match r.kind {
        MetricKind::Pods => {
            let per_pod = r.total_milli / i64::from(current);
            let ratio = per_pod as f64 / r.target_milli as f64;
            if within(ratio) { current } else { (ratio * f64::from(current)).ceil() as i32 }
        }
        MetricKind::External => {
            let ratio = r.total_milli as f64 / (r.target_milli as f64 * f64::from(current));
            if within(ratio) { current } else { (r.total_milli as f64 / r.target_milli as f64).ceil().min(f64::from(i32::MAX)) as i32 }
        }
    }
}

impl HpaState {
    /// One `reconcileAutoscaler` at second `now` with `current` replicas (> 0: an HPA at 0 is disabled) and the
    /// metrics' readings: the replicas it sets.
    pub fn sync(&mut self, now: i64, current: i32, min: i32, max: i32, readings: &[Reading], behavior: &Behavior) -> i32 {
        if self.recommendations.is_empty() {
            self.recommendations.push((current, now)); // recordInitialRecommendation
        }
        let desired = if current > max {
            max
        } else if current < min {
            min
        } else {
            let proposed = readings.iter().map(|r| metric_replicas(*r, current)).max().unwrap_or(current);
            self.normalize(now, current, proposed, min, max, behavior)
        };
        if desired != current {
            self.store_scale_event(now, behavior, current, desired);
        }
        desired
    }

    /// `normalizeDesiredReplicasWithBehaviors`: stabilise, then limit the rate.
    fn normalize(&mut self, now: i64, current: i32, desired: i32, min: i32, max: i32, behavior: &Behavior) -> i32 {
        let stabilized = self.stabilize(now, current, desired, behavior);
        self.limit_rate(now, current, stabilized, min, max, behavior)
    }

    /// `stabilizeRecommendationWithBehaviors`: the lowest recommendation of the scale-up window and the highest of
    /// the scale-down window bound the result; the new recommendation replaces one older than both windows.
    fn stabilize(&mut self, now: i64, current: i32, desired: i32, behavior: &Behavior) -> i32 {
        let up_cutoff = now - i64::from(behavior.scale_up.stabilization_seconds);
        let down_cutoff = now - i64::from(behavior.scale_down.stabilization_seconds);
        let (mut up, mut down) = (desired, desired);
        let mut old = None;
        for (i, &(rec, at)) in self.recommendations.iter().enumerate() {
            if at > up_cutoff {
                up = up.min(rec);
            }
            if at > down_cutoff {
                down = down.max(rec);
            }
            if at < up_cutoff && at < down_cutoff {
                old = Some(i);
            }
        }
        let recommendation = current.max(up).min(down);
        match old {
            Some(i) => self.recommendations[i] = (desired, now),
            None => self.recommendations.push((desired, now)),
        }
        recommendation
    }

    /// `convertDesiredReplicasWithBehaviorRate`.
    fn limit_rate(&self, now: i64, current: i32, desired: i32, min: i32, max: i32, behavior: &Behavior) -> i32 {
        if desired > current {
            let limit = scale_up_limit(now, current, &self.up_events, &self.down_events, &behavior.scale_up).max(current);
            desired.min(max.min(limit))
        } else if desired < current {
            let limit = scale_down_limit(now, current, &self.up_events, &self.down_events, &behavior.scale_down).min(current);
            desired.max(min.max(limit))
        } else {
            desired
        }
    }

    /// `storeScaleEvent`: events older than the direction's longest policy period are outdated, and the last of
    /// them is replaced by the new one.
    fn store_scale_event(&mut self, now: i64, behavior: &Behavior, prev: i32, new: i32) {
        let (events, rules, change) = if new > prev { (&mut self.up_events, &behavior.scale_up, new - prev) } else { (&mut self.down_events, &behavior.scale_down, prev - new) };
        let cutoff = now - i64::from(rules.policies.iter().map(|p| p.period_seconds).max().unwrap_or(0));
        for e in events.iter_mut() {
            if e.at < cutoff {
                e.outdated = true;
            }
        }
        let event = ScaleEvent { change, at: now, outdated: false };
        match events.iter().rposition(|e| e.outdated) {
            Some(i) => events[i] = event,
            None => events.push(event),
        }
    }
}

/// `getReplicasChangePerPeriod`.
fn change_in_period(now: i64, period: u32, events: &[ScaleEvent]) -> i32 {
    let cutoff = now - i64::from(period);
    events.iter().filter(|e| e.at > cutoff).map(|e| e.change).sum()
}

/// `calculateScaleUpLimitWithScalingRules`.
fn scale_up_limit(now: i64, current: i32, up: &[ScaleEvent], down: &[ScaleEvent], rules: &Rules) -> i32 {
    let pick: fn(i32, i32) -> i32 = match rules.select {
        Select::Disabled => return current,
        Select::Min => i32::min,
        Select::Max => i32::max,
    };
    let mut result = if rules.select == Select::Min { i32::MAX } else { i32::MIN };
    for p in &rules.policies {
        let start = current - change_in_period(now, p.period_seconds, up) + change_in_period(now, p.period_seconds, down);
        let proposed = if p.pods { start + p.value } else { (f64::from(start) * (1.0 + f64::from(p.value) / 100.0)).ceil() as i32 };
        result = pick(result, proposed);
    }
    result
}

/// `calculateScaleDownLimitWithBehaviors`.
fn scale_down_limit(now: i64, current: i32, up: &[ScaleEvent], down: &[ScaleEvent], rules: &Rules) -> i32 {
    let pick: fn(i32, i32) -> i32 = match rules.select {
        Select::Disabled => return current,
        Select::Min => i32::max,
        Select::Max => i32::min,
    };
    let mut result = if rules.select == Select::Min { i32::MIN } else { i32::MAX };
    for p in &rules.policies {
        let start = current - change_in_period(now, p.period_seconds, up) + change_in_period(now, p.period_seconds, down);
        let proposed = if p.pods { start - p.value } else { (f64::from(start) * (1.0 - f64::from(p.value) / 100.0)) as i32 };
        result = pick(result, proposed);
    }
    result
}

#[cfg(test)]
mod tests;
