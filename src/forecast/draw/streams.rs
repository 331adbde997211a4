//! Random streams keyed per entity. Each stream is ChaCha8 (`rand`'s `ChaCha8Rng`, from the `chacha20` crate, whose
//! output for a seed is fixed across versions: the reason to pin it rather than `StdRng`, whose algorithm may change)
//! seeded from SHA-256(seed, entity key), so one entity's draws depend on nothing but the seed and its own key.

use rand::rngs::ChaCha8Rng;
use rand::SeedableRng;
use sha2::{Digest, Sha256};

/// The stream of entity `key` (`workload/<ns>/<name>`, `queue/<ns>/<name>`, `spot/<type>/<zone>`, `shortage/<i>`)
/// under `seed`.
pub fn stream(seed: u64, key: &str) -> ChaCha8Rng {
    let mut hash = Sha256::new();
    hash.update(seed.to_le_bytes());
    hash.update(key.as_bytes());
    ChaCha8Rng::from_seed(hash.finalize().into())
}

/// A multiplicative noise factor with mean 1 and log-standard-deviation `sigma`: exp(σZ − σ²/2).
pub fn noise_factor(rng: &mut ChaCha8Rng, sigma: f64) -> f64 {
    if sigma <= 0.0 {
        return 1.0;
    }
    let z: f64 = rand::RngExt::sample(rng, rand_distr::StandardNormal);
    (sigma * z - sigma * sigma / 2.0).exp()
}
