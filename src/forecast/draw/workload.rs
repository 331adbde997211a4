//! A workload's replicas over the horizon, as `Event::Replicas` on every change.

use rand::rngs::ChaCha8Rng;

use super::hpa::{self, HpaState, MetricKind, Reading};
use super::keda;
use super::streams::noise_factor;
use crate::forecast::demand::{Drive, Series};
use crate::forecast::scaler::Scaler;
use crate::forecast::trace::Event;
use crate::solve::ops::workload::WorkloadPlan;

/// The step of a replicas series (and of its noise): one minute, a Prometheus range query's usual step.
pub const REPLICAS_STEP_SECONDS: u64 = 60;

/// A series sampled in time order with its noise drawn afresh each minute from the workload's stream.
pub struct Sampled<'s> {
    series: &'s Series,
    start_weekday: u8,
    minute: Option<u64>,
    factor: f64,
}

impl<'s> Sampled<'s> {
    pub fn new(series: &'s Series, start_weekday: u8) -> Sampled<'s> {
        Sampled { series, start_weekday, minute: None, factor: 1.0 }
    }

    /// The value at `t` (non-decreasing across calls).
    pub fn at(&mut self, t: u64, rng: &mut ChaCha8Rng) -> f64 {
        if self.series.noise > 0.0 && self.minute != Some(t / 60) {
            self.minute = Some(t / 60);
            self.factor = noise_factor(rng, self.series.noise);
        }
        self.series.at(t, self.start_weekday) * self.factor
    }
}

/// The workload's `Replicas` events: from the demand's replicas, from its autoscaler on the demand's metric, or its
/// minimum throughout when the demand does not name it.
pub fn replicas(key: &str, w: &WorkloadPlan, scaler: &Scaler, drive: Option<&Drive>, rng: &mut ChaCha8Rng, horizon: u64, start_weekday: u8) -> Vec<Event> {
    let mut out = Changes { key, last: None, events: Vec::new() };
    match (drive, scaler) {
        (None, _) => out.set(0, w.replicas_min),
        (Some(Drive::Replicas(series)), _) => {
            let mut s = Sampled::new(series, start_weekday);
            for t in (0..horizon).step_by(REPLICAS_STEP_SECONDS as usize) {
                let v = s.at(t, rng).round().clamp(f64::from(w.replicas_min), f64::from(w.replicas_max));
                out.set(t, v as u32);
            }
        }
        (Some(Drive::Metric(metrics)), Scaler::Hpa(h)) => {
            let series = metrics.iter().find(|m| m.trigger.is_none()).or(metrics.first()).map(|m| &m.series);
            let mut s = series.map(|s| Sampled::new(s, start_weekday));
            let target = h.targets_milli.first().copied().unwrap_or(1000).max(1);
            let mut read = |t: u64, rng: &mut ChaCha8Rng| vec![Reading { kind: MetricKind::Pods, total_milli: s.as_mut().map_or(0.0, |s| s.at(t, rng) * 1000.0) as i64, target_milli: target }];
            let (min, max) = (h.min.max(1) as i32, h.max as i32);
            let first = read(0, rng)[0];
            let mut current = ((first.total_milli as f64 / target as f64).ceil() as i32).clamp(min, max);
            out.set(0, current as u32);
            let mut state = HpaState::default();
            for t in (hpa::SYNC_SECONDS..horizon).step_by(hpa::SYNC_SECONDS as usize) {
                let readings = read(t, rng);
                current = state.sync(t as i64, current, min, max, &readings, &h.behavior);
                out.set(t, current as u32);
            }
        }
        (Some(Drive::Metric(metrics)), Scaler::Keda(k)) => keda::replicas(k, metrics, rng, horizon, start_weekday, &mut |t, r| out.set(t, r)),
        (Some(Drive::Metric(_)), Scaler::Fixed) => out.set(0, w.replicas_min),
    }
    out.events
}

/// `Replicas` events on change only.
pub(super) struct Changes<'k> {
    key: &'k str,
    last: Option<u32>,
    events: Vec<Event>,
}

impl Changes<'_> {
    pub(super) fn set(&mut self, at: u64, replicas: u32) {
        if self.last != Some(replicas) {
            self.last = Some(replicas);
            self.events.push(Event::Replicas { at, workload: self.key.to_string(), replicas });
        }
    }
}
