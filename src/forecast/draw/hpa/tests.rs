//! The HPA port against the cases of Kubernetes v1.37.2 `pkg/controller/podautoscaler/horizontal_test.go` that it
//! covers (each test names the upstream test; the cases keep upstream's names) and the replica calculator's.

use super::*;
use crate::forecast::scaler::{Behavior, Policy, Rules, Select};

/// `generateScalingRules(pods, podsPeriod, percent, percentPeriod, stabilizationWindow)`.
fn rules(pods: i32, pods_period: u32, percent: i32, percent_period: u32, window: u32) -> Rules {
    let mut policies = Vec::new();
    if pods != 0 {
        policies.push(Policy { pods: true, value: pods, period_seconds: pods_period });
    }
    if percent != 0 {
        policies.push(Policy { pods: false, value: percent, period_seconds: percent_period });
    }
    Rules { stabilization_seconds: window, select: Select::Max, policies }
}

/// `generateEventsUniformDistribution(raw, period)`: each event at the middle of its share of the last `period`
/// seconds (the offset truncated to whole seconds, as `time.Duration(float64)` truncates).
fn uniform(raw: &[i32], period: i64, now: i64) -> Vec<ScaleEvent> {
    let segment = period as f64 / raw.len() as f64;
    raw.iter().enumerate().map(|(i, &change)| ScaleEvent { change, at: now - (period as f64 - segment * (i + 1) as f64 + segment / 2.0) as i64, outdated: false }).collect()
}

/// Upstream `TestScalingWithRules` (`convertDesiredReplicasWithBehaviorRate`), case by case; `None` rules are
/// autoscaling/v2's defaults (`GenerateHPAScaleUpRules`/`GenerateHPAScaleDownRules`).
#[test]
fn test_scaling_with_rules() {
    type Case<'a> = (&'a str, &'a [i32], &'a [i32], i32, i32, Option<Rules>, Option<Rules>, i32, i32, i32);
    let cases: Vec<Case> = vec![
        ("prenormalized desired replicas within range", &[], &[], 3, 8, None, None, 5, 7, 7),
        ("prenormalized desired replicas < minReplicas", &[], &[], 2, 8, None, None, 3, 1, 2),
        ("prenormalized desired replicas within range when minReplicas is 0", &[], &[], 0, 10, None, None, 1, 0, 0),
        ("maxReplicas is the limit because maxReplicas < scaleUpLimit", &[], &[], 1, 10, None, None, 20, 1000, 10),
        ("desired replica count is more than the maximum replica count", &[], &[], 100, 150, None, None, 100, 1000, 150),
        ("scaleUpLimit is the limit because scaleUpLimit < maxReplicas with user policies", &[], &[], 1, 2000, Some(rules(0, 0, 1, 60, 0)), None, 3, 1000, 4),
        ("scaleUp with default behavior", &[], &[], 1, 1000, None, None, 10, 50, 20),
        ("scaleUp with pods policy larger than percent policy", &[], &[], 1, 1000, Some(rules(100, 60, 100, 60, 0)), None, 10, 500, 110),
        ("scaleUp with percent policy larger than pods policy", &[], &[], 1, 1000, Some(rules(2, 60, 100, 60, 0)), None, 10, 500, 20),
        ("scaleUp with spec MaxReplicas limitation with large pod policy", &[], &[], 1, 1000, Some(rules(100, 60, 0, 0, 0)), None, 10, 50, 50),
        ("scaleUp with pod policy limitation", &[], &[], 1, 1000, Some(rules(30, 60, 0, 0, 0)), None, 10, 50, 40),
        ("scaleUp with percent policy limitation", &[], &[], 1, 1000, Some(rules(0, 0, 200, 60, 0)), None, 10, 50, 30),
        ("scaleDown with percent policy larger than pod policy", &[], &[], 1, 1000, None, Some(rules(20, 60, 1, 60, 300)), 100, 2, 80),
        ("scaleDown with pod policy larger than percent policy", &[], &[], 1, 1000, None, Some(rules(2, 60, 1, 60, 300)), 100, 2, 98),
        ("scaleDown with spec MinReplicas limitation with large pod policy", &[], &[], 1, 1000, None, Some(rules(100, 60, 0, 0, 300)), 10, 0, 1),
        ("scaleDown with spec MinReplicas limitation with large percent policy", &[], &[], 5, 1000, None, Some(rules(0, 0, 100, 60, 300)), 10, 2, 5),
        ("scaleDown with pod policy limitation", &[], &[], 1, 1000, None, Some(rules(5, 60, 0, 0, 300)), 10, 2, 5),
        ("scaleDown with percent policy limitation", &[], &[], 1, 1000, None, Some(rules(0, 0, 50, 60, 300)), 10, 5, 5),
        ("scaleUp with spec MaxReplicas limitation with large pod policy and events", &[1, 5, 9], &[], 1, 200, Some(rules(300, 60, 0, 0, 0)), None, 100, 500, 200),
        ("scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale up events", &[1, 5, 9], &[], 1, 1000, Some(rules(5, 120, 0, 0, 0)), None, 100, 500, 100),
        ("scaleUp with pod policy and previous scale up events", &[1, 5, 9], &[], 1, 1000, Some(rules(150, 120, 0, 0, 0)), None, 100, 500, 235),
        ("scaleUp with percent policy and previous scale up events", &[1, 5, 9], &[], 1, 1000, Some(rules(0, 0, 200, 120, 0)), None, 100, 500, 255),
        ("scaleUp with percent policy and previous scale up and down events", &[4], &[2], 1, 1000, Some(rules(0, 0, 300, 300, 0)), None, 6, 24, 16),
        ("scaleDown with default policy and previous events", &[], &[1, 5, 9], 1, 1000, None, None, 10, 5, 5),
        ("scaleDown with spec MinReplicas=nil limitation with large pod policy and previous events", &[], &[1, 5, 9], 1, 1000, None, Some(rules(115, 120, 0, 0, 300)), 100, 0, 1),
        ("scaleDown with spec MinReplicas limitation with large pod policy and previous events", &[], &[1, 5, 9], 5, 1000, None, Some(rules(130, 120, 0, 0, 300)), 100, 0, 5),
        ("scaleDown with pod policy limitation and previous events", &[], &[1, 5, 9], 1, 1000, None, Some(rules(5, 120, 0, 0, 300)), 100, 2, 100),
        ("scaleDown with percent policy limitation and previous events", &[], &[2, 4, 6], 1, 1000, None, Some(rules(0, 0, 50, 120, 300)), 100, 0, 56),
        ("scaleDown with percent policy and previous scale up and down events", &[2], &[4], 1, 1000, None, Some(rules(0, 0, 50, 180, 0)), 10, 1, 6),
        ("scaleDown with previous events preventing further scale down", &[], &[10, 10, 10], 1, 1000, None, Some(rules(0, 0, 10, 120, 300)), 100, 0, 100),
    ];
    let now = 10_000;
    for (name, up, down, min, max, up_rules, down_rules, current, desired, want) in cases {
        let d = Behavior::defaults();
        let behavior = Behavior { scale_up: up_rules.unwrap_or(d.scale_up), scale_down: down_rules.unwrap_or(d.scale_down) };
        let state = HpaState { recommendations: Vec::new(), up_events: uniform(up, 120, now), down_events: uniform(down, 120, now) };
        assert_eq!(state.limit_rate(now, current, desired, min, max, &behavior), want, "{name}");
    }
}

/// Upstream `TestCalculateScaleUpLimitWithScalingRules` and `TestCalculateScaleDownLimitWithBehaviors`: the `Min`
/// select policy picks the smallest change.
#[test]
fn test_calculate_limits_with_the_min_policy() {
    let mut r = rules(2, 60, 50, 60, 300);
    r.select = Select::Min;
    assert_eq!(scale_up_limit(0, 1, &[], &[], &r), 2);
    assert_eq!(scale_down_limit(0, 5, &[], &[], &r), 3);
    r.select = Select::Disabled;
    assert_eq!((scale_up_limit(0, 1, &[], &[], &r), scale_down_limit(0, 5, &[], &[], &r)), (1, 5), "Disabled: no change");
}

/// Upstream `TestNormalizeDesiredReplicasWithBehavior` (`stabilizeRecommendationWithBehaviors`): the result and the
/// recommendations kept, the newest replacing the last one older than both windows.
#[test]
fn test_normalize_desired_replicas_with_behavior() {
    let now = 100_000;
    type Case<'a> = (&'a str, &'a [(i32, i64)], i32, i32, i32, &'a [i32], u32, u32);
    let cases: Vec<Case> = vec![
        ("empty recommendations for scaling down", &[], 100, 5, 5, &[5], 0, 0),
        ("simple scale down stabilization", &[(4, -120), (5, -60)], 100, 3, 5, &[4, 5, 3], 0, 180),
        ("simple scale up stabilization", &[(4, -120), (5, -60)], 1, 7, 4, &[4, 5, 7], 300, 0),
        ("no scale down stabilization", &[(1, -120), (2, -60)], 100, 3, 3, &[1, 2, 3], 300, 0),
        ("no scale up stabilization", &[(4, -120), (5, -60)], 1, 3, 3, &[4, 5, 3], 0, 300),
        ("no scale down stabilization, reuse recommendation element", &[(10, -600), (9, -540)], 100, 3, 3, &[10, 3], 0, 0),
        ("no scale up stabilization, reuse recommendation element", &[(10, -600), (9, -540)], 1, 100, 100, &[10, 100], 0, 0),
        ("scale down stabilization, reuse one of obsolete recommendation element", &[(10, -600), (4, -60), (5, -120), (9, -540)], 100, 3, 5, &[10, 4, 5, 3], 0, 180),
    ];
    for (name, recs, current, desired, want, kept, up_window, down_window) in cases {
        let mut behavior = Behavior::defaults();
        behavior.scale_up.stabilization_seconds = up_window;
        behavior.scale_down.stabilization_seconds = down_window;
        let mut state = HpaState { recommendations: recs.iter().map(|&(r, ago)| (r, now + ago)).collect(), ..HpaState::default() };
        assert_eq!(state.stabilize(now, current, desired, &behavior), want, "{name}");
        assert_eq!(state.recommendations.iter().map(|r| r.0).collect::<Vec<_>>(), kept, "{name}");
    }
}

/// The replica calculator: a Pods metric within the 0.1 tolerance keeps the replicas, else ceil(ratio × ready);
/// an External metric asks ceil(total / target) (`replica_calculator_test.go`'s `TestReplicaCalcScaleUpCM`,
/// `TestReplicaCalcToleranceCM`, `TestReplicaCalcScaleUpCMExternal` and their scale-down twins, as formulas).
#[test]
fn the_replica_calculator_follows_the_ratio_outside_the_tolerance() {
    let pods = |total: i64| Reading { kind: MetricKind::Pods, total_milli: total, target_milli: 70_000 };
    assert_eq!(metric_replicas(pods(4 * 75_000), 4), 4, "7% above target: within the tolerance");
    assert_eq!(metric_replicas(pods(4 * 77_000), 4), 4, "exactly 1.1: within (inclusive)");
    assert_eq!(metric_replicas(pods(4 * 80_000), 4), 5, "ceil(4 × 80/70)");
    assert_eq!(metric_replicas(pods(4 * 30_000), 4), 2, "ceil(4 × 30/70)");
    let external = |total: i64| Reading { kind: MetricKind::External, total_milli: total, target_milli: 20_000 };
    assert_eq!(metric_replicas(external(85_000), 3), 5, "ceil(85/20)");
    assert_eq!(metric_replicas(external(62_000), 3), 3, "62/(20×3) = 1.03");
    assert_eq!(metric_replicas(external(0), 3), 0);
}

/// autoscaling/v2's defaults without a behavior: nothing leaves before the 300 s window has passed, then 100% per
/// 15 s (`TestScaleDownStabilizeInitialSize`'s situation, run through `sync`).
#[test]
fn the_default_behavior_scales_down_after_its_window() {
    let b = Behavior::defaults();
    let mut s = HpaState::default();
    let low = [Reading { kind: MetricKind::Pods, total_milli: 0, target_milli: 1000 }];
    let mut current = 10;
    for t in (0..=300).step_by(15) {
        current = s.sync(t, current, 1, 10, &low, &b);
        if t < 300 {
            assert_eq!(current, 10, "t={t}: the window holds the initial recommendation");
        }
    }
    assert_eq!(current, 1);
}
