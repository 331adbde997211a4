//! The demand file's reading: every node into its value, the defaults, and one diagnostic per cause.

use std::path::{Path, PathBuf};

use super::*;

fn read(text: &str) -> Result<Demand, Vec<String>> {
    parse(Path::new("gpuplan.demand.kdl"), text).map_err(|ds| ds.iter().map(|d| format!("{} {}", d.code, d.message)).collect())
}

fn codes(text: &str) -> Vec<Option<ErrorCode>> {
    parse(Path::new("gpuplan.demand.kdl"), text).err().unwrap_or_default().iter().map(|d| d.code.error()).collect()
}

/// An empty file is every default: 30 days, seed 1 over 5 seeds, starting on a Monday, no clusters.
#[test]
fn an_empty_demand_file_is_the_stated_defaults() {
    let d = read("").unwrap();
    assert_eq!((d.horizon_seconds, d.seed, d.seeds, d.start_weekday), (DEFAULT_HORIZON_SECONDS, 1, DEFAULT_SEEDS, 0));
    assert!(d.clusters.is_empty());
    assert_eq!(DEFAULT_STARTUP_PART_SECONDS * 3, crate::forecast::trace::DEFAULT_STARTUP_SECONDS, "the parts add up to the trace's default");
}

/// Every node of the language, read into the value it means.
#[test]
fn every_node_reads_into_its_value() {
    let d = read(
        r#"
        horizon "7d"; seed 42; seeds 3; start "sat"
        cluster "c" {
            workload "web" { replicas { daily trough=1 peak=5 from="08:00" to="20:00" ramp="0s"; weekly weekend=0.5 fri=0.8; noise 0.2 } }
            workload "ns/api" { metric trigger="queue" { point at="day 1 00:00" value=10; point at="day 2" value=0 } }
            workload "fixed" { replicas 3 }
            queue "train" {
                arrivals per-hour=0.5 { weekly weekend=0 }
                pods 2; gpus-per-pod 8
                duration median="3h" p90="6h" min="1h" max="8h"
            }
            queue "short" { arrivals per-hour=4; duration "20m" }
            startup pool="training" boot="2m" add-ons="1m"
            startup nodepool="training-spot" total="15m"
            spot rate="10%/month" share-min=0.2 share-max=0.4 { family "g6" rate="1%/day"; type "g5.xlarge" rate="2%/day" }
            shortage type="p5.48xlarge" zone="us-east-1a" capacity-type="on-demand" at="day 3 14:00" for="6h"
            shortage type="g5.xlarge" per-week=7 for="1h"
            drift nodepool="training" at="day 10"
        }
        "#,
    )
    .unwrap();
    assert_eq!((d.horizon_seconds, d.seed, d.seeds, d.start_weekday), (7 * 86_400, 42, 3, 5));
    let c = &d.clusters["c"];
    let Drive::Replicas(web) = &c.workloads[0].drive else { panic!() };
    assert_eq!(web.shape, Shape::Daily(Daily { trough: 1.0, peak: 5.0, from: 8 * 3_600, to: 20 * 3_600, ramp: 0 }));
    assert_eq!(web.weekly, [1.0, 1.0, 1.0, 1.0, 0.8, 0.5, 0.5]);
    assert_eq!(web.noise, 0.2);
    let Drive::Metric(api) = &c.workloads[1].drive else { panic!() };
    assert_eq!(api[0].trigger.as_ref().map(|t| t.value.as_str()), Some("queue"));
    assert_eq!(api[0].series.shape, Shape::Points(vec![(0, 10.0), (86_400, 0.0)]));
    let Drive::Replicas(fixed) = &c.workloads[2].drive else { panic!() };
    assert_eq!(fixed.shape, Shape::Constant(3.0));
    let train = &c.queues[0];
    assert_eq!((train.per_hour, train.pods.as_ref().map(|p| p.value), train.gpus_per_pod.as_ref().map(|g| g.value)), (0.5, Some(2), Some(8)));
    assert_eq!(train.pattern.weekly[5..], [0.0, 0.0]);
    assert_eq!(train.duration, JobDuration::LogNormal { median: 3 * 3_600, p90: 6 * 3_600, min: 3_600, max: 8 * 3_600 });
    assert_eq!(c.queues[1].duration, JobDuration::Fixed(1_200));
    assert_eq!(c.startup.iter().map(|s| (s.target.value.as_str(), s.seconds)).collect::<Vec<_>>(), [("training", 240), ("training-spot", 900)]);
    assert!((c.spot.rate_per_day - 0.1 / 30.0).abs() < 1e-12);
    assert_eq!(c.spot.share, (0.2, 0.4));
    assert_eq!((c.spot.rate_for("g5.xlarge"), c.spot.rate_for("g6.2xlarge"), c.spot.rate_for("g5.2xlarge")), (0.02, 0.01, c.spot.rate_per_day));
    assert_eq!(c.shortages[0].when, ShortageWhen::At(2 * 86_400 + 14 * 3_600));
    assert_eq!(c.shortages[1].when, ShortageWhen::Rate(1.0));
    assert_eq!((c.drifts[0].nodepool.value.as_str(), c.drifts[0].at), ("training", 9 * 86_400));
}

/// Each kind of mistake is its code, once, and nothing else (a refused series is not also a missing one).
#[test]
fn each_mistake_is_one_diagnostic_of_its_code() {
    let cases = [
        (r#"horizon "30 days""#, ErrorCode::E0424),
        (r#"cluster "c" { shortage type="x" at="tomorrow" for="1h" }"#, ErrorCode::E0424),
        (r#"cluster "c" { workload "w" { replicas { daily trough=1 peak=2 from="9am" } } }"#, ErrorCode::E0424),
        (r#"cluster "c" { spot rate="5%" }"#, ErrorCode::E0425),
        (r#"cluster "c" { workload "w" { replicas 2; metric { constant 3 } } }"#, ErrorCode::E0426),
        (r#"cluster "c" { workload "w" { replicas { constant 1; daily trough=1 peak=2 } } }"#, ErrorCode::E0426),
        (r#"cluster "c" { workload "w" { metric { csv "no/such.csv" } } }"#, ErrorCode::E0427),
        (r#"cluster "c" { workload "w" { replicas { daily trough=3 peak=2 } } }"#, ErrorCode::E0428),
        (r#"cluster "c" { queue "q" { arrivals per-hour=1; duration median="2h" p90="1h" } }"#, ErrorCode::E0428),
        (r#"cluster "c" { spot share-min=0.5 share-max=0.2 }"#, ErrorCode::E0428),
        (r#"cluster "c" { workload "w" { } }"#, ErrorCode::E0107),
        (r#"cluster "c" { queue "q" { pods 2 } }"#, ErrorCode::E0107),
        (r#"cluster "c" { queue "q" { arrivals } }"#, ErrorCode::E0107),
        (r#"cluster "c" { queue "q" { arrivals per-hour=0 } }"#, ErrorCode::E0106),
        (r#"cluster "c" { queue "q" { arrivals per-hour=-2 } }"#, ErrorCode::E0106),
        (r#"cluster "c" { shortage type="x" for="1h" }"#, ErrorCode::E0107),
        (r#"cluster "c" { wokload "w" { replicas 1 } }"#, ErrorCode::E0102),
        (r#"cluster "c" { }; cluster "c" { }"#, ErrorCode::E0420),
        (r#"horizon 30"#, ErrorCode::E0105),
        (r#"cluster "c" { spot share-max=2 }"#, ErrorCode::E0106),
    ];
    for (text, code) in cases {
        assert_eq!(codes(text), [Some(code)], "{text}");
    }
}

/// A CSV is read relative to the demand file, and a bad row is located in the CSV itself.
#[test]
fn a_csv_series_is_read_beside_the_demand_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("demand")).unwrap();
    std::fs::write(dir.path().join("demand/llm.csv"), "\"Time\",\"Value\"\n1700000000000,3\n1700000300000,5\n").unwrap();
    let text = r#"cluster "c" { workload "w" { metric { csv "demand/llm.csv" } } }"#;
    std::fs::write(dir.path().join(DEMAND_FILE), text).unwrap();
    let d = load(dir.path()).unwrap().unwrap();
    let Drive::Metric(m) = &d.clusters["c"].workloads[0].drive else { panic!() };
    assert_eq!(m[0].series.at(299, 0), 3.0);
    assert_eq!(m[0].series.at(300, 0), 5.0);
    std::fs::write(dir.path().join("demand/llm.csv"), "1700000000,3\n1700000300,five\n").unwrap();
    let err = load(dir.path()).unwrap_err();
    assert_eq!(err.len(), 1);
    assert!(err[0].location.ends_with("llm.csv:2:1"), "{}", err[0].location);
    assert!(load(&dir.path().join("demand")).unwrap().is_none(), "no demand file there");
}

/// `gpuplan.demand.kdl` beside profiles is never read as one (the #33 rule), and naming it as a profile is refused.
#[test]
fn the_demand_file_is_not_a_profile() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(DEMAND_FILE), "horizon \"30d\"\n").unwrap();
    std::fs::write(dir.path().join("ml.kdl"), "").unwrap();
    let files = crate::compile::profile_files(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(files, [dir.path().join("ml.kdl")]);
    assert!(crate::compile::profile_files(&[PathBuf::from(DEMAND_FILE)]).is_err());
}

/// A top-level setting written twice is one E0441 at the second, naming the first (the last silently won before).
#[test]
fn a_setting_written_twice_is_one_e0441_at_the_second() {
    for twice in ["horizon \"7d\"\nhorizon \"30d\"\n", "seed 1\nseed 2\n", "seeds 3\nseeds 4\n", "start \"mon\"\nstart \"sat\"\n"] {
        let errors = read(twice).unwrap_err();
        assert_eq!(errors.len(), 1, "{twice}: {errors:?}");
        let name = twice.split(' ').next().unwrap();
        assert_eq!(errors[0], format!("E0441 `{name}` is written twice: it takes one value, first written at gpuplan.demand.kdl:1:1"), "{twice}");
    }
}
