//! A demand series read in time order, its noise drawn from the entity's own stream.

use rand::rngs::ChaCha8Rng;

use super::streams::noise_factor;
use crate::forecast::demand::Series;

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
