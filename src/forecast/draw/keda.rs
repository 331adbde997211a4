//! A KEDA ScaledObject over time, after KEDA v2.20 `pkg/scaling/executor/scale_scaledobjects.go`
//! (`RequestScale`): every `pollingInterval` the scalers are asked whether they are active (a trigger's value above
//! its `activationThreshold`); at 0 replicas an active scaler scales the target to max(minReplicaCount, 1)
//! (`scaleFromZeroOrIdle`); with every scaler inactive for `cooldownPeriod` since the last active poll, it scales to
//! 0 (`scaleToZeroOrIdle`). Between 1 and maxReplicaCount the HPA KEDA creates decides, on one External metric per
//! trigger with the trigger's `threshold` as its AverageValue target ([`super::hpa`]).
//!
//! Unproven: no upstream test drives KEDA over time, and the conformance harness has no KEDA oracle.

use rand::rngs::ChaCha8Rng;

use super::hpa::{HpaState, MetricKind, Reading, SYNC_SECONDS};
use super::workload::Sampled;
use crate::forecast::demand::MetricSeries;
use crate::forecast::scaler::Keda;

/// Calls `set(t, replicas)` at every poll and HPA sync over the horizon.
pub fn replicas(k: &Keda, metrics: &[MetricSeries], rng: &mut ChaCha8Rng, horizon: u64, start_weekday: u8, set: &mut dyn FnMut(u64, u32)) {
    // Per trigger, its series: the one naming it, or for the first trigger an unnamed one.
    let mut series: Vec<Option<Sampled>> = k
        .triggers
        .iter()
        .enumerate()
        .map(|(i, t)| metrics.iter().find(|m| m.trigger.as_ref().is_some_and(|n| n.value == t.name) || (i == 0 && m.trigger.is_none())).map(|m| Sampled::new(&m.series, start_weekday)))
        .collect();
    let mut values = |t: u64, rng: &mut ChaCha8Rng| -> Vec<f64> { series.iter_mut().map(|s| s.as_mut().map_or(0.0, |s| s.at(t, rng))).collect() };
    let active = |v: &[f64]| k.triggers.iter().zip(v).any(|(t, v)| *v > t.activation);
    let readings = |v: &[f64]| -> Vec<Reading> {
        k.triggers.iter().zip(v).map(|(t, v)| Reading { kind: MetricKind::External, total_milli: (v * 1000.0) as i64, target_milli: ((t.threshold * 1000.0) as i64).max(1) }).collect()
    };
    let (hpa_min, max) = (k.min.max(1) as i32, k.max as i32);
    let polling = k.polling_seconds.max(1);
    let first = values(0, rng);
    let mut current: i32 = if active(&first) || k.min > 0 {
        let wanted = readings(&first).iter().map(|r| (r.total_milli as f64 / r.target_milli as f64).ceil() as i32).max().unwrap_or(1);
        wanted.clamp(hpa_min, max)
    } else {
        0
    };
    set(0, current as u32);
    let mut last_active = 0u64;
    let mut hpa = HpaState::default();
    let step = gcd(polling, SYNC_SECONDS);
    for t in (step..horizon).step_by(step as usize) {
        let v = values(t, rng);
        if t % polling == 0 {
            if active(&v) {
                last_active = t;
                if current == 0 {
                    current = hpa_min;
                }
            } else if current > 0 && k.min == 0 && t >= last_active + k.cooldown_seconds {
                current = 0;
            }
        }
        if t % SYNC_SECONDS == 0 && current > 0 {
            current = hpa.sync(t as i64, current, hpa_min, max, &readings(&v), &k.behavior);
        }
        set(t, current as u32);
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}
