use super::*;
use crate::forecast::scaler::Behavior;

#[test]
fn a_pods_metric_within_tolerance_keeps_the_replicas() {
    let r = |total: i64| Reading { kind: MetricKind::Pods, total_milli: total, target_milli: 70_000 };
    assert_eq!(metric_replicas(r(4 * 75_000), 4), 4, "7% above target: within the 0.1 tolerance");
    assert_eq!(metric_replicas(r(4 * 80_000), 4), 5, "ceil(4 × 80/70)");
    assert_eq!(metric_replicas(r(4 * 30_000), 4), 2);
}

#[test]
fn behavior_defaults_scale_down_after_the_window() {
    let b = Behavior::defaults();
    let mut s = HpaState::default();
    let low = [Reading { kind: MetricKind::Pods, total_milli: 0, target_milli: 1000 }];
    let mut current = 10;
    for t in (0..=300).step_by(15) {
        current = s.sync(t, current, 1, 10, &low, &b);
        if t < 300 {
            assert_eq!(current, 10, "t={t}: the 300 s window holds the initial recommendation");
        }
    }
    assert_eq!(current, 1);
}
