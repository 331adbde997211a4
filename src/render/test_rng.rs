//! The generator behind the render fast paths' generated tests (fast_yaml, fast_emit): splitmix64, deterministic
//! for a seed, so a failing run repeats with the same `{prefix}_SEED`.

pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub(crate) fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub(crate) fn pick<T: Copy>(&mut self, items: impl AsRef<[T]>) -> T {
        let items = items.as_ref();
        items[self.below(items.len())]
    }
}

/// A test's generator and case count: `{prefix}_SEED` (default 0x5EED, mixed with the test's own `salt`) and
/// `{prefix}_CASES` (default 3,000).
pub(crate) fn settings(prefix: &str, salt: u64) -> (Rng, usize) {
    let var = |name: String| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    (Rng(var(format!("{prefix}_SEED")).unwrap_or(0x5EED) ^ salt), var(format!("{prefix}_CASES")).unwrap_or(3_000) as usize)
}
