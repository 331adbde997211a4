//! How a workload's replicas scale: the HPA gpuplan writes ([`HpaPlan`]), at the pace its kind of work allows
//! ([`ScalingStyle`]; KEDA's HPA gets the same pace).

/// How fast the HPA may move, by the kind of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalingStyle {
    /// Serving: scale up at once (no stabilization, +100% or +4 pods a minute, whichever is more) and down
    /// slowly (10 minutes of stabilization, then one pod or 10% every 2 minutes, whichever is less): a GPU
    /// pod takes minutes to come back (node launch, image pull, model load).
    Inference,
    /// Training/batch, only when asked: both directions slow, so that a short lull never kills a worker.
    Training,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HpaPlan {
    pub min: u32,
    pub max: u32,
    pub metric: String,
    /// The target as the profile wrote it (percent)…
    pub target_utilization: u32,
    /// …and as the HPA's `averageValue`, in the metric's unit (`"70"`, or `"700m"` for a ratio).
    pub target_quantity: String,
    pub style: ScalingStyle,
}
