//! The event-driven replay against the 10 s polling loop over generated traces: the same timelines.

use proptest::prelude::*;
use serde_json::json;

use super::{objects, pod, pool, trace, replicas};
use crate::forecast::engine::{replay_objects, Mode};
use crate::forecast::trace::Event;

/// Two NodePools of different policies (WhenEmptyOrUnderutilized with a 10% budget, Balanced with a 1-minute
/// consolidateAfter, expireAfter and a scheduled budget) and three workloads.
fn cluster() -> Vec<serde_json::Value> {
    let a = pool("a", &["m5.large", "m5.xlarge", "m5.2xlarge"], &["on-demand", "spot"], "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 0s\n", "");
    let b = pool("b", &["c5.large", "c5.xlarge", "c5.2xlarge"], &["on-demand"], "    consolidationPolicy: Balanced\n    consolidateAfter: 1m\n    budgets:\n    - nodes: \"1\"\n    - nodes: \"0\"\n      schedule: \"0 2 * * *\"\n      duration: 2h\n", "      expireAfter: 3h\n");
    objects(&[a, b])
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        8 => (0u64..3 * 3600, 0usize..3, 0u32..7).prop_map(|(at, w, n)| replicas(at, ["web", "api", "batch"][w], n)),
        1 => (0u64..3 * 3600, 0usize..3, 1u32..4).prop_map(|(at, t, share)| Event::Interruption { at, instance_type: ["m5.large", "m5.xlarge", "m5.2xlarge"][t].into(), zone: "us-east-1a".into(), share: f64::from(share) / 4.0 }),
        1 => (0u64..3 * 3600, 1u64..3600).prop_map(|(at, len)| Event::Shortage { at, until: at + len, instance_type: "m5.large".into(), zone: "us-east-1a".into(), capacity_type: "spot".into() }),
    ]
}

fn cases() -> u32 {
    std::env::var("GPUPLAN_FORECAST_POLLING_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(6)
}

proptest! {
    // Six cases in the default run (~4 s in a debug build: the polling loop schedules every 10 s);
    // GPUPLAN_FORECAST_POLLING_CASES=N runs more.
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    /// controller.go's 10 s polling against the event-driven run (engine.rs: why a poll where nothing changed finds
    /// nothing): three hours, up to 15 events.
    #[test]
    fn event_driven_replay_equals_polling(mut events in proptest::collection::vec(event(), 1..16)) {
        events.sort_by_key(Event::at);
        let workloads = [("web", pod("web", 700, "a", json!({}))), ("api", pod("api", 1500, "b", json!({}))), ("batch", pod("batch", 3000, "a", json!({})))];
        let t = trace(3 * 3600, &workloads, events);
        let objects = cluster();
        let event = replay_objects(super::catalog(), &objects, &t, Mode::EventDriven);
        let polling = replay_objects(super::catalog(), &objects, &t, Mode::Polling);
        prop_assert_eq!(event, polling);
    }
}
