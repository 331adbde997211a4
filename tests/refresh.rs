//! `catalog refresh` against real API servers: moto's EC2 server (started per test, killed on drop) and a local
//! server replaying recorded-shape Pricing GetProducts responses (tests/fixtures/pricing). Every client gets an
//! explicit 127.0.0.1 endpoint and fake credentials: no test can reach AWS.
//!
//! Needs moto's server: `pip install 'moto[server]==5.2.1'` (python3 on PATH, or GPUPLAN_TEST_PYTHON).

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant, UNIX_EPOCH};

use gpuplan::catalog::aws::{AwsError, GpThreePrices, parse_ebs_product, parse_price_list_product};
use gpuplan::catalog::ebs::{self, EbsPrices};
use gpuplan::catalog::{CapacityType, Catalog, Gpu, InstanceType, Price, Source};
use gpuplan::catalog::import;
use gpuplan::catalog::refresh::{
    CatalogChanges, Clock, KEPT_PREFIX, RefreshError, RefreshOptions, RetrySettings, catalog_changes, refresh,
};
use gpuplan::catalog::plausible::Problem;
use serde_json::Value;
use support::{
    HttpServer, Moto, Response, SilentServer, dead_endpoint, fake_credentials, faulty_proxy, pricing_server,
};

/// 2026-08-20T10:13:20Z
const FIXED_SECS: u64 = 1_787_220_800;
const FIXED_RFC3339: &str = "2026-08-20T10:13:20Z";

fn at(secs: u64) -> Clock {
    Clock::Fixed(UNIX_EPOCH + Duration::from_secs(secs))
}

fn options(dir: &Path, regions: &[&str], ec2: &str, pricing: &str) -> RefreshOptions {
    let mut opts = RefreshOptions::new(regions.iter().map(|r| r.to_string()).collect(), dir);
    opts.endpoint_url = Some(ec2.to_string());
    opts.pricing_endpoint_url = Some(pricing.to_string());
    opts.credentials = Some(fake_credentials());
    opts.retry = RetrySettings {
        max_attempts: 5,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(100),
        attempt_timeout: Duration::from_secs(60),
        operation_timeout: Duration::from_secs(120),
        connect_timeout: Duration::from_secs(2),
    };
    opts.clock = at(FIXED_SECS);
    opts
}

fn load(dir: &Path, region: &str) -> Catalog {
    let path = dir.join(format!("{region}.json"));
    Catalog::from_json(&std::fs::read_to_string(&path).expect("catalog written"), &path).expect("valid catalog")
}

/// A small valid previous snapshot.
fn seed_catalog(dir: &Path, region: &str) -> Vec<u8> {
    let catalog = Catalog {
        format: gpuplan::catalog::FORMAT,
        region: region.to_string(),
        zones: vec![format!("{region}a")],
        sources: BTreeMap::from([(
            import::SOURCE_ON_DEMAND.to_string(),
            Source { description: "seed".into(), fetched_at: Some("2026-01-01T00:00:00Z".into()), estimate: false },
        )]),
        instance_types: vec![],
        ebs: None,
    };
    let bytes = catalog.to_json().into_bytes();
    std::fs::write(dir.join(format!("{region}.json")), &bytes).unwrap();
    bytes
}

fn dir_entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

fn actions(server: &HttpServer, action: &str) -> usize {
    server.requests().iter().filter(|r| r.form_param("Action").as_deref() == Some(action)).count()
}

fn recorded_prices(region: &str) -> BTreeMap<String, f64> {
    let mut prices = BTreeMap::new();
    for page in 1.. {
        let path = support::fixtures_dir().join(format!("pricing/{region}.page{page}.json"));
        let Ok(text) = std::fs::read_to_string(path) else { break };
        let body: Value = serde_json::from_str(&text).unwrap();
        for product in body["PriceList"].as_array().unwrap() {
            let (name, usd) = parse_price_list_product(product.as_str().unwrap()).unwrap().unwrap();
            prices.insert(name, usd);
        }
    }
    prices
}

// -----------------------------------------------------------------------------------------------------------------

#[test]
fn two_region_refresh_matches_moto_and_the_price_list() {
    let moto = Moto::start();
    let pricing = pricing_server(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path(), &["us-east-1", "us-west-2"], &moto.url, &pricing.url);

    let started = Instant::now();
    let report = refresh(&opts).expect("refresh against moto");
    let wall = started.elapsed();
    println!("two-region refresh (us-east-1 + us-west-2) against moto: {:.2}s", wall.as_secs_f64());
    println!("{report}");
    for region in &report.regions {
        for timing in &region.timings {
            println!("  {} {}: {:.2}s", region.region, timing.call, timing.elapsed.as_secs_f64());
        }
    }

    let moto_types = support::moto_resource("instance_types.json.gz");
    let moto_names: BTreeSet<String> = moto_types.as_object().unwrap().keys().cloned().collect();
    assert_eq!(report.regions.len(), 2);
    // moto's $0.00001/h spot prices are implausible against on-demand: dropped, and said once per region.
    for region in ["us-east-1", "us-west-2"] {
        let dropped = report.warnings.iter().find(|w| w.starts_with(&format!("{region}: dropped "))).expect("said");
        assert!(dropped.contains("observed spot price(s) outside 5–100% of on-demand") && dropped.contains(": $0.00001/h against $"), "{dropped}");
    }
    assert!(report.warnings.iter().all(|w| w.contains("plausible spot price") || w.contains(" dropped ")), "{:?}", report.warnings);
    for region in ["us-east-1", "us-west-2"] {
        let catalog = load(dir.path(), region);
        assert_eq!(catalog.region, region);

        // Types: everything moto serves.
        let names: BTreeSet<String> = catalog.instance_types.iter().map(|t| t.name.clone()).collect();
        assert_eq!(names, moto_names, "{region}: instance types");
        // Not only the accelerated ones: CPU pools (issue 19 item 3) select among the general-purpose types too.
        let cpu_only = catalog.instance_types.iter().filter(|t| t.gpus.is_empty() && t.neuron.is_none()).count();
        assert!(cpu_only > catalog.instance_types.len() / 2 && catalog.get("m5.large").is_some(), "{region}: {cpu_only} CPU-only types");

        // Zones and offerings: moto's availability-zone offerings of the region.
        let offerings = support::moto_resource(&format!("instance_type_offerings/availability-zone/{region}.json.gz"));
        let mut expected: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for o in offerings.as_array().unwrap() {
            expected
                .entry(o["InstanceType"].as_str().unwrap().to_string())
                .or_default()
                .insert(o["Location"].as_str().unwrap().to_string());
        }
        let zones: BTreeSet<String> = expected.values().flatten().cloned().collect();
        assert_eq!(catalog.zones, zones.iter().cloned().collect::<Vec<_>>(), "{region}: zones");
        for t in &catalog.instance_types {
            let want: Vec<String> = expected.get(&t.name).map(|z| z.iter().cloned().collect()).unwrap_or_default();
            assert_eq!(t.zones, want, "{region}: zones of {}", t.name);
        }

        // Provenance: every live source carries the (injected) fetch time.
        for id in [import::SOURCE_TYPES, import::SOURCE_OFFERINGS, import::SOURCE_ON_DEMAND, import::SOURCE_SPOT] {
            let source = &catalog.sources[id];
            assert_eq!(source.fetched_at.as_deref(), Some(FIXED_RFC3339), "{region}: {id}");
            assert!(!source.estimate);
        }

        // g5.xlarge: one A10G with 22888 MiB, the recorded on-demand price, moto's spot price in every zone.
        let g5 = catalog.get("g5.xlarge").expect("g5.xlarge");
        assert_eq!(
            g5.gpus,
            vec![Gpu {
                name: "A10G".into(),
                manufacturer: "NVIDIA".into(),
                count: 1,
                memory_mib: 22888,
                partition_size: 1.0
            }]
        );
        assert_eq!((g5.vcpu, g5.memory_mib), (4, 16384));
        assert_eq!(g5.on_demand, Some(Price { usd_per_hour: 1.006, source: import::SOURCE_ON_DEMAND.into() }));
        assert_eq!(g5.spot.keys().cloned().collect::<Vec<_>>(), g5.zones);
        // moto's spot price ($0.00001/h) is dropped: every zone carries the labelled estimate, and no observed max.
        assert!(g5.spot.values().all(|p| p.source == import::SOURCE_SPOT_ESTIMATE && p.usd_per_hour > 0.05 * 1.006));
        assert!(g5.spot_max.is_empty(), "{:?}", g5.spot_max);
        let report = report.regions.iter().find(|r| r.region == region).unwrap();
        assert!(report.written && !report.on_demand_kept);
        assert!(report.changes.is_none(), "no previous snapshot to compare with");
        assert_eq!(report.on_demand_prices, recorded_prices(region).len());
    }

    let east = load(dir.path(), "us-east-1");
    assert_eq!(east.zones, ["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1e", "us-east-1f"]);
    // g6f.large reports a fractional GPU: it must come through as such.
    let g6f = east.get("g6f.large").expect("g6f.large");
    assert!(g6f.has_partial_gpus(), "{:?}", g6f.gpus);
    // Neuron devices come through DescribeInstanceTypes too.
    let inf2 = east.get("inf2.xlarge").expect("inf2.xlarge");
    assert_eq!(inf2.neuron.as_ref().map(|n| (n.count, n.cores_per_device)), Some((1, 2)));

    // The gp3 EBS prices of each region, from the Price List's answer (tests/fixtures/pricing/<region>.ebs.json):
    // $0.08/GB-month, $0.005/IOPS-month, and throughput's $40.96/GiBps-month as $0.04/MiBps-month.
    for catalog in [&east, &load(dir.path(), "us-west-2")] {
        assert_eq!(catalog.ebs, Some(fixture_ebs()), "{}", catalog.region);
        let source = &catalog.sources[ebs::SOURCE];
        assert!(source.description.starts_with("AWS Price List GetProducts (AmazonEC2, us-"), "{}", source.description);
        assert_eq!(source.fetched_at.as_deref(), Some(FIXED_RFC3339));
    }

    // Pricing: all pages of us-east-1, one of us-west-2, each with the Linux/shared/no-software/Used filters; and
    // one gp3 EBS request per region.
    let requests = pricing.requests();
    assert_eq!(requests.len(), 6, "3 pages for us-east-1 + 1 for us-west-2 + the EBS page of each");
    let mut ebs_requests = 0;
    for request in &requests {
        let body = request.json();
        assert_eq!(body["ServiceCode"], "AmazonEC2");
        let filters: BTreeMap<String, String> = body["Filters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["Field"].as_str().unwrap().to_string(), f["Value"].as_str().unwrap().to_string()))
            .collect();
        if filters.get("volumeApiName").is_some_and(|v| v == "gp3") {
            ebs_requests += 1;
            assert!(filters.contains_key("regionCode") && !filters.contains_key("operatingSystem"), "{filters:?}");
            continue;
        }
        for (field, value) in
            [("operatingSystem", "Linux"), ("tenancy", "Shared"), ("preInstalledSw", "NA"), ("capacitystatus", "Used")]
        {
            assert_eq!(filters.get(field).map(String::as_str), Some(value), "{field}");
        }
        assert!(filters.contains_key("regionCode"));
    }
    assert_eq!(ebs_requests, 2);
}

/// The gp3 prices of tests/fixtures/pricing/*.ebs.json, as the catalog keeps them (throughput per MiB/s-month).
fn fixture_ebs() -> EbsPrices {
    EbsPrices { gp3_per_gib_month: 0.08, gp3_per_iops_month: 0.005, gp3_per_mibps_month: 40.96 / 1024.0 }
}

/// Refresh and import share one conversion: the SDK's answers serialized back to DescribeInstanceTypes JSON give
/// exactly the catalog `import::build_catalog` makes from moto's own JSON. And a second refresh of unchanged
/// data rewrites nothing and reports no change.
#[test]
fn refresh_equals_import_of_the_same_data_and_is_deterministic() {
    let moto = Moto::start();
    let pricing = pricing_server(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path(), &["us-east-1"], &moto.url, &pricing.url);
    refresh(&opts).expect("first refresh");
    let refreshed = load(dir.path(), "us-east-1");
    let first_bytes = std::fs::read(dir.path().join("us-east-1.json")).unwrap();

    let infos = import::instance_type_infos(&support::moto_resource("instance_types.json.gz")).unwrap();
    let offerings = import::offerings_from_json(&support::moto_resource(
        "instance_type_offerings/availability-zone/us-east-1.json.gz",
    ))
    .unwrap();
    let spot: BTreeMap<String, BTreeMap<String, f64>> = offerings
        .iter()
        .map(|(name, zones)| (name.clone(), zones.iter().map(|z| (z.clone(), 0.00001)).collect()))
        .collect();
    // As the refresh does: moto's placeholder spot prices are dropped where an on-demand price shows them wrong.
    let mut spot = gpuplan::catalog::SpotPrices { highest: spot.clone(), newest: spot };
    gpuplan::catalog::plausible::drop_implausible_spot(&mut spot, &recorded_prices("us-east-1"));
    let mut sources = refreshed.sources.clone();
    let od_source = sources.remove(import::SOURCE_ON_DEMAND).unwrap();
    let spot_source = sources.remove(import::SOURCE_SPOT).unwrap();
    let imported = import::build_catalog(
        "us-east-1",
        &infos,
        &offerings,
        &recorded_prices("us-east-1"),
        od_source,
        Some((&spot, spot_source)),
        sources,
    );
    // import has no Price List to read EBS prices from: the refresh alone adds them (and their source, compared
    // above through `sources`).
    assert_eq!(refreshed.ebs, Some(fixture_ebs()));
    let imported = Catalog { ebs: refreshed.ebs, ..imported };
    for (a, b) in refreshed.instance_types.iter().zip(&imported.instance_types) {
        assert_eq!(a, b, "refresh and import disagree on {}", a.name);
    }
    assert_eq!(refreshed, imported);

    let again = refresh(&opts).expect("second refresh");
    assert!(!again.regions[0].written, "identical data must not rewrite the file");
    let changes = again.regions[0].changes.as_ref().expect("compared with the first snapshot");
    assert!(changes.is_empty(), "{changes}");
    assert_eq!(changes.to_string(), "us-east-1: no changes\n");
    assert_eq!(std::fs::read(dir.path().join("us-east-1.json")).unwrap(), first_bytes);
}

#[test]
fn ec2_down_fails_clearly_and_keeps_the_previous_catalog() {
    let pricing = pricing_server(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let before = seed_catalog(dir.path(), "us-east-1");
    let endpoint = dead_endpoint();
    let opts = options(dir.path(), &["us-east-1"], &endpoint, &pricing.url);

    let err = refresh(&opts).expect_err("nothing listens there");
    let message = err.to_string();
    println!("{message}");
    assert!(
        matches!(&err, RefreshError::Ec2 { error, .. } if matches!(**error, AwsError::Unreachable { .. })),
        "{err:?}"
    );
    assert!(message.contains("cannot connect to") && message.contains(&endpoint), "{message}");
    assert!(message.contains("--endpoint-url") && message.contains("no catalog was changed"), "{message}");
    assert_eq!(std::fs::read(dir.path().join("us-east-1.json")).unwrap(), before);
    assert_eq!(dir_entries(dir.path()), ["us-east-1.json"], "no temp files left behind");
}

#[test]
fn slow_ec2_times_out_clearly_and_keeps_the_previous_catalog() {
    let pricing = pricing_server(vec![]);
    let silent = SilentServer::start();
    let dir = tempfile::tempdir().unwrap();
    let before = seed_catalog(dir.path(), "us-east-1");
    let mut opts = options(dir.path(), &["us-east-1"], &silent.url, &pricing.url);
    opts.retry.max_attempts = 2;
    opts.retry.attempt_timeout = Duration::from_millis(500);
    opts.retry.operation_timeout = Duration::from_secs(2);

    let started = Instant::now();
    let err = refresh(&opts).expect_err("the server never answers");
    let took = started.elapsed();
    let message = err.to_string();
    println!("after {:.1}s: {message}", took.as_secs_f64());
    assert!(matches!(&err, RefreshError::Ec2 { error, .. } if matches!(**error, AwsError::Timeout { .. })), "{err:?}");
    assert!(message.contains("did not answer in time"), "{message}");
    assert!(took < Duration::from_secs(10), "the operation timeout bounds the wait ({took:?})");
    assert_eq!(std::fs::read(dir.path().join("us-east-1.json")).unwrap(), before);
    assert_eq!(dir_entries(dir.path()), ["us-east-1.json"]);
}

#[test]
fn http_500s_are_retried_until_success() {
    let moto = Moto::start();
    let proxy = faulty_proxy(
        moto.addr(),
        vec![
            Response::ec2_error(500, "InternalError", "An internal error has occurred"),
            Response::ec2_error(503, "Unavailable", "The server is overloaded"),
        ],
    );
    let pricing = pricing_server(vec![Response::json_error(500, "InternalErrorException", "boom")]);
    let dir = tempfile::tempdir().unwrap();
    let report = refresh(&options(dir.path(), &["us-east-1"], &proxy.url, &pricing.url)).expect("retries succeed");
    for action in ["DescribeInstanceTypes", "DescribeInstanceTypeOfferings", "DescribeSpotPriceHistory"] {
        assert_eq!(actions(&proxy, action), 3, "{action}: two failures, then success");
    }
    assert_eq!(pricing.requests().len(), 5, "one failure + 3 pages + the EBS page");
    assert!(!report.regions[0].on_demand_kept);
    assert_eq!(load(dir.path(), "us-east-1").ebs, Some(fixture_ebs()), "the failed call was retried, whichever it was");
    assert_eq!(load(dir.path(), "us-east-1").get("g5.xlarge").unwrap().on_demand.as_ref().unwrap().usd_per_hour, 1.006);
}

#[test]
fn throttling_is_retried_until_success() {
    let moto = Moto::start();
    let proxy = faulty_proxy(
        moto.addr(),
        vec![
            Response::ec2_error(503, "RequestLimitExceeded", "Request limit exceeded."),
            Response::ec2_error(400, "Throttling", "Rate exceeded"),
        ],
    );
    let pricing = pricing_server(vec![Response::json_error(400, "ThrottlingException", "Rate exceeded")]);
    let dir = tempfile::tempdir().unwrap();
    let report = refresh(&options(dir.path(), &["us-east-1"], &proxy.url, &pricing.url)).expect("retries succeed");
    for action in ["DescribeInstanceTypes", "DescribeInstanceTypeOfferings", "DescribeSpotPriceHistory"] {
        assert_eq!(actions(&proxy, action), 3, "{action}: two throttles, then success");
    }
    assert_eq!(pricing.requests().len(), 5);
    assert!(
        report.warnings.iter().all(|w| w.contains("observed spot price(s) outside") || w.contains("no plausible spot price")),
        "only about moto's spot prices: {:?}",
        report.warnings
    );
}

#[test]
fn ec2_errors_that_persist_fail_with_the_code_and_leave_every_catalog_alone() {
    // us-west-2 is always refused (not retryable): nothing is written, not even the us-east-1 that succeeded.
    let moto = Moto::start();
    let moto_addr = moto.addr();
    let proxy = HttpServer::start(move |request| {
        if request.header("authorization").is_some_and(|a| a.contains("/us-west-2/")) {
            Response::ec2_error(403, "UnauthorizedOperation", "You are not authorized to perform this operation.")
        } else {
            support::forward(&moto_addr, request)
        }
    });
    let pricing = pricing_server(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let before = seed_catalog(dir.path(), "us-east-1");
    let err =
        refresh(&options(dir.path(), &["us-east-1", "us-west-2"], &proxy.url, &pricing.url)).expect_err("refused");
    let message = err.to_string();
    println!("{message}");
    assert!(message.contains("us-west-2") && message.contains("UnauthorizedOperation"), "{message}");
    assert!(message.contains("ec2:DescribeInstanceTypes"), "says which permissions are needed: {message}");
    assert_eq!(std::fs::read(dir.path().join("us-east-1.json")).unwrap(), before);
    assert_eq!(dir_entries(dir.path()), ["us-east-1.json"]);
}

#[test]
fn pricing_down_keeps_the_previous_on_demand_prices_and_says_so() {
    let moto = Moto::start();
    let pricing = pricing_server(vec![]);
    let dir = tempfile::tempdir().unwrap();
    refresh(&options(dir.path(), &["us-east-1"], &moto.url, &pricing.url)).expect("first refresh");
    let first = load(dir.path(), "us-east-1");

    let mut opts = options(dir.path(), &["us-east-1"], &moto.url, &dead_endpoint());
    opts.clock = at(FIXED_SECS + 86_400);
    let report = refresh(&opts).expect("EC2 is up; on-demand prices are kept");
    let region = &report.regions[0];
    assert!(region.on_demand_kept && region.written);
    assert!(
        report.warnings.iter().any(|w| w.contains("Pricing API failed") && w.contains("kept")),
        "{:?}",
        report.warnings
    );

    let second = load(dir.path(), "us-east-1");
    let source = &second.sources[import::SOURCE_ON_DEMAND];
    println!("{}", source.description);
    assert!(source.description.starts_with(KEPT_PREFIX), "{}", source.description);
    assert!(source.description.contains("Pricing API unreachable: cannot connect"), "{}", source.description);
    assert!(source.description.contains("originally: AWS Price List GetProducts"), "{}", source.description);
    assert_eq!(source.fetched_at.as_deref(), Some(FIXED_RFC3339), "the prices are as old as they were");
    assert_eq!(second.sources[import::SOURCE_TYPES].fetched_at.as_deref(), Some("2026-08-21T10:13:20Z"));
    for (a, b) in first.instance_types.iter().zip(&second.instance_types) {
        assert_eq!(a.on_demand, b.on_demand, "{}", a.name);
    }
    let changes = region.changes.as_ref().unwrap();
    assert!(changes.price_moves.is_empty() && changes.added.is_empty(), "{changes}");
    // The gp3 EBS prices are kept the same way, and the cost bounds say they are.
    assert_eq!(second.ebs, first.ebs);
    assert!(report.warnings.iter().any(|w| w.contains("no gp3 EBS prices, kept those of the previous snapshot")), "{:?}", report.warnings);
    let ebs_source = &second.sources[ebs::SOURCE];
    assert!(ebs_source.description.starts_with(ebs::KEPT_PREFIX), "{}", ebs_source.description);
    assert!(ebs_source.description.contains("originally: AWS Price List GetProducts (AmazonEC2, us-east-1, volumeApiName gp3)"), "{}", ebs_source.description);
    assert_eq!(ebs_source.fetched_at.as_deref(), Some(FIXED_RFC3339));
    assert_eq!(
        ebs::catalog_prices(&second),
        (fixture_ebs(), ebs::PriceBasis::Catalog { fetched_at: Some(FIXED_RFC3339.into()), kept: true })
    );

    // Kept twice: the note does not nest.
    refresh(&opts).expect("still down");
    let third = load(dir.path(), "us-east-1");
    assert_eq!(third.sources[import::SOURCE_ON_DEMAND].description.matches(KEPT_PREFIX).count(), 1);
    assert_eq!(third.sources[ebs::SOURCE].description.matches(ebs::KEPT_PREFIX).count(), 1);
}

/// A Price List that answers instance prices but no gp3 EBS prices, with no previous snapshot to keep them from:
/// the refresh still writes the catalog, without an `ebs` section, says so, and the cost bounds use the table.
#[test]
fn no_ebs_prices_and_no_previous_snapshot_leaves_the_cited_table_and_says_so() {
    let moto = Moto::start();
    let pages = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(support::fixtures_dir().join("pricing")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") && !path.to_string_lossy().ends_with(".ebs.json") {
            std::fs::copy(&path, pages.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    let pricing = support::pricing_server_in(pages.path().to_path_buf(), vec![]);
    let dir = tempfile::tempdir().unwrap();
    let report = refresh(&options(dir.path(), &["us-east-1"], &moto.url, &pricing.url)).expect("instance prices came");
    assert!(
        report.warnings.iter().any(|w| w.contains("no gp3 EBS prices, the cost bounds use gpuplan's cited table") && w.contains("no recorded page us-east-1.ebs.json")),
        "{:?}",
        report.warnings
    );
    let catalog = load(dir.path(), "us-east-1");
    assert_eq!((catalog.ebs, catalog.sources.get(ebs::SOURCE)), (None, None));
    assert_eq!(ebs::catalog_prices(&catalog), (ebs::prices("us-east-1").0, ebs::PriceBasis::Table));
}

/// The Price List's gp3 products (attribute names and units as infracost internal/resources/aws/ebs_volume.go
/// filters them: productFamily "Storage" / "System Operation" with group "EBS IOPS" / "Provisioned Throughput",
/// volumeApiName gp3, throughput priced per "GiBps-mo"): each lands in its slot, throughput converted to MiB/s.
#[test]
fn gp3_products_parse_like_the_real_format() {
    let page: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(support::fixtures_dir().join("pricing/us-east-1.ebs.json")).unwrap()).unwrap();
    let mut found = GpThreePrices::default();
    for product in page["PriceList"].as_array().unwrap() {
        parse_ebs_product(product.as_str().unwrap(), &mut found).unwrap();
    }
    assert_eq!(found.complete(), Ok(fixture_ebs()));

    let throughput = page["PriceList"][2].as_str().unwrap();
    assert!(throughput.contains(r#""unit":"GiBps-mo""#) && throughput.contains(r#""USD":"40.9600000000""#));
    // Priced per MiB/s instead: taken as it is. Any other unit is refused rather than guessed.
    let mut per_mib = GpThreePrices::default();
    parse_ebs_product(&throughput.replace("GiBps-mo", "MiBps-Mo").replace("40.9600000000", "0.0400000000"), &mut per_mib).unwrap();
    assert_eq!(per_mib.per_mibps_month, Some(0.04));
    let err = parse_ebs_product(&throughput.replace("GiBps-mo", "Gbps-hrs"), &mut GpThreePrices::default()).unwrap_err();
    assert!(err.contains("Gbps-hrs"), "{err}");
    // A product of another volume type or family is no gp3 price; an answer without all three is an error.
    let mut none = GpThreePrices::default();
    parse_ebs_product(&page["PriceList"][0].as_str().unwrap().replace(r#""volumeApiName":"gp3""#, r#""volumeApiName":"gp2""#), &mut none).unwrap();
    assert_eq!(none.complete().unwrap_err(), "the answer has no gp3 storage, IOPS, throughput price");
}

#[test]
fn pricing_down_without_a_previous_snapshot_fails_clearly() {
    let moto = Moto::start();
    let dir = tempfile::tempdir().unwrap();
    let err = refresh(&options(dir.path(), &["us-east-1"], &moto.url, &dead_endpoint())).expect_err("no prices at all");
    let message = err.to_string();
    println!("{message}");
    assert!(matches!(err, RefreshError::NoOnDemandPrices { .. }), "{err:?}");
    assert!(
        message.contains("no previous snapshot with on-demand prices") && message.contains("--pricing-endpoint-url"),
        "{message}"
    );
    assert!(dir_entries(dir.path()).is_empty(), "nothing written");
}

#[test]
fn options_are_checked_before_any_call() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path(), &[], &dead_endpoint(), &dead_endpoint());
    assert!(matches!(refresh(&opts), Err(RefreshError::NoRegions)));
    let opts = options(dir.path(), &["../etc"], &dead_endpoint(), &dead_endpoint());
    assert!(matches!(refresh(&opts), Err(RefreshError::InvalidRegion { .. })));
}

// -----------------------------------------------------------------------------------------------------------------
// The change summary

fn gpu_type(name: &str, on_demand: Option<f64>, spot: &[(&str, f64, &str)], zones: &[&str]) -> InstanceType {
    InstanceType {
        name: name.into(),
        category: "g".into(),
        family: name.split('.').next().unwrap().into(),
        generation: 5,
        size: name.split('.').nth(1).unwrap().into(),
        vcpu: 4,
        memory_mib: 16384,
        arch: vec![gpuplan::catalog::Arch::Amd64],
        current_generation: true,
        bare_metal: false,
        efa: false,
        local_nvme_gb: None,
        gpus: vec![Gpu {
            name: "A10G".into(),
            manufacturer: "NVIDIA".into(),
            count: 1,
            memory_mib: 22888,
            partition_size: 1.0,
        }],
        neuron: None,
        capacity_types: vec![CapacityType::Spot, CapacityType::OnDemand],
        zones: zones.iter().map(|z| z.to_string()).collect(),
        on_demand: on_demand.map(|usd| Price { usd_per_hour: usd, source: import::SOURCE_ON_DEMAND.into() }),
        spot: spot
            .iter()
            .map(|(zone, usd, source)| (zone.to_string(), Price { usd_per_hour: *usd, source: source.to_string() }))
            .collect(),
        spot_max: BTreeMap::new(),
    }
}

fn catalog(zones: &[&str], types: Vec<InstanceType>) -> Catalog {
    let source = |estimate| Source { description: "test".into(), fetched_at: None, estimate };
    Catalog {
        format: gpuplan::catalog::FORMAT,
        region: "us-east-1".into(),
        zones: zones.iter().map(|z| z.to_string()).collect(),
        sources: BTreeMap::from([
            (import::SOURCE_ON_DEMAND.into(), source(false)),
            (import::SOURCE_SPOT.into(), source(false)),
            (import::SOURCE_SPOT_ESTIMATE.into(), source(true)),
        ]),
        instance_types: types,
        ebs: None,
    }
}

#[test]
fn catalog_changes_speak_a_reviewers_language() {
    let mut m5 = gpu_type("m5.large", Some(0.096), &[], &["us-east-1a"]);
    m5.gpus.clear();
    let mut m5_new = m5.clone();
    m5_new.on_demand.as_mut().unwrap().usd_per_hour = 0.1; // not accelerated: no price line
    let old = catalog(
        &["us-east-1a", "us-east-1b"],
        vec![
            gpu_type(
                "g5.xlarge",
                Some(1.006),
                &[("us-east-1a", 0.4024, import::SOURCE_SPOT_ESTIMATE)],
                &["us-east-1a", "us-east-1b"],
            ),
            m5,
            gpu_type("p3.2xlarge", Some(3.06), &[], &["us-east-1a"]),
        ],
    );
    let new = catalog(
        &["us-east-1a", "us-east-1c"],
        vec![
            gpu_type(
                "g5.xlarge",
                Some(1.1),
                &[("us-east-1a", 0.3801, import::SOURCE_SPOT)],
                &["us-east-1a", "us-east-1c"],
            ),
            gpu_type("g6e.xlarge", Some(1.861), &[], &["us-east-1a"]),
            m5_new,
        ],
    );
    let changes = catalog_changes(&old, &new);
    assert_eq!(changes.added, ["g6e.xlarge"]);
    assert_eq!(changes.removed, ["p3.2xlarge"]);
    assert_eq!(changes.zones_added, ["us-east-1c"]);
    assert_eq!(changes.zones_removed, ["us-east-1b"]);
    assert_eq!(changes.price_moves.len(), 2);
    assert_eq!(changes.price_moves[0].to_string(), "g5.xlarge on-demand $1.006→$1.100 (+9.3%)");
    assert_eq!(changes.price_moves[1].to_string(), "g5.xlarge spot us-east-1a $0.4024 (estimate)→$0.3801 (-5.5%)");
    assert_eq!(changes.offerings.len(), 1);
    assert_eq!(changes.offerings[0].to_string(), "g5.xlarge zones +us-east-1c -us-east-1b");
    let text = changes.to_string();
    println!("{text}");
    assert_eq!(
        text,
        "us-east-1: 1 type added, 1 removed, 2 accelerated price moves, 1 offering change\n\
         \x20 added: g6e.xlarge\n\
         \x20 removed: p3.2xlarge\n\
         \x20 zones: +us-east-1c -us-east-1b\n\
         \x20 g5.xlarge on-demand $1.006→$1.100 (+9.3%)\n\
         \x20 g5.xlarge spot us-east-1a $0.4024 (estimate)→$0.3801 (-5.5%)\n\
         \x20 g5.xlarge zones +us-east-1c -us-east-1b\n"
    );
    let json = serde_json::to_value(&changes).unwrap();
    assert_eq!(json["price_moves"][0]["capacity_type"], "on-demand");
    assert_eq!(json["price_moves"][0]["old"], 1.006);
    assert!(json["price_moves"][0].get("zone").is_none());
    assert!(catalog_changes(&new, &new).is_empty());
    assert_eq!(CatalogChanges::default().to_string(), ": no changes\n");
}

#[test]
fn price_list_products_parse_like_the_real_format() {
    // A recorded product: the OnDemand term's USD price; the Reserved term is ignored.
    let page: Value = serde_json::from_str(
        &std::fs::read_to_string(support::fixtures_dir().join("pricing/us-east-1.page1.json")).unwrap(),
    )
    .unwrap();
    let first = page["PriceList"][0].as_str().unwrap();
    let (name, usd) = parse_price_list_product(first).unwrap().unwrap();
    assert_eq!(recorded_prices("us-east-1")[&name], usd);
    assert!(first.contains("\"Reserved\""));

    let product = |operation: &str, usd: &str| {
        serde_json::json!({
            "product": {"attributes": {"instanceType": "g5.xlarge", "operation": operation}},
            "terms": {"OnDemand": {"A.B": {"priceDimensions": {"A.B.C": {"unit": "Hrs", "pricePerUnit": {"USD": usd}}}}}}
        })
        .to_string()
    };
    assert_eq!(
        parse_price_list_product(&product("RunInstances", "1.0060000000")),
        Ok(Some(("g5.xlarge".into(), 1.006)))
    );
    assert_eq!(parse_price_list_product(&product("RunInstances:0002", "2.0")), Ok(None), "not plain Linux");
    assert_eq!(parse_price_list_product(&product("RunInstances", "0.0000000000")), Ok(None), "zero is no price");
    assert!(parse_price_list_product(&product("RunInstances", "n/a")).is_err());
    assert!(parse_price_list_product("{not json").is_err());
    assert_eq!(parse_price_list_product(r#"{"product":{"attributes":{}},"terms":{}}"#), Ok(None), "not an instance");
    assert_eq!(gpuplan::catalog::aws::rfc3339(UNIX_EPOCH + Duration::from_secs(FIXED_SECS)), FIXED_RFC3339);
}

// -----------------------------------------------------------------------------------------------------------------
// Refusing an answer that does not look like the region (issue 21)

fn sha256(path: &Path) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(std::fs::read(path).unwrap()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The committed us-east-1 snapshot (1,395 types) as the previous one.
fn committed_snapshot(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("us-east-1.json");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs/us-east-1.json"), &path).unwrap();
    path
}

/// A misbehaving EC2 endpoint: valid, empty DescribeInstanceTypes / Offerings / SpotPriceHistory pages.
fn empty_ec2() -> HttpServer {
    HttpServer::start(|request| {
        let action = request.form_param("Action").unwrap_or_default();
        let set = match action.as_str() {
            "DescribeInstanceTypes" => "instanceTypeSet",
            "DescribeInstanceTypeOfferings" => "instanceTypeOfferingSet",
            "DescribeSpotPriceHistory" => "spotPriceHistorySet",
            _ => return Response::ec2_error(400, "InvalidAction", "not served here"),
        };
        Response::new(
            200,
            "text/xml;charset=UTF-8",
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<{action}Response xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">\
                 <requestId>empty</requestId><{set}/></{action}Response>"
            ),
        )
    })
}

#[test]
fn empty_ec2_answer_is_refused_even_with_accept_shrink_and_the_catalog_stays_byte_identical() {
    let ec2 = empty_ec2();
    let pricing = pricing_server(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let path = committed_snapshot(dir.path());
    let before = sha256(&path);
    for accept_shrink in [false, true] {
        let mut opts = options(dir.path(), &["us-east-1"], &ec2.url, &pricing.url);
        opts.accept_shrink = accept_shrink;
        let err = refresh(&opts).expect_err("an empty answer is never a region");
        let message = err.to_string();
        assert!(matches!(&err, RefreshError::Implausible { problems, .. } if problems == &[Problem::Empty]), "{message}");
        assert!(message.starts_with("refresh of us-east-1 refused, "), "{message}");
        assert!(message.contains("no instance types at all") && message.contains("--endpoint-url"), "{message}");
        assert_eq!(sha256(&path), before, "accept_shrink={accept_shrink}: the snapshot is byte-identical");
        assert_eq!(dir_entries(dir.path()), ["us-east-1.json"], "no temp file left");
    }
    assert!(actions(&ec2, "DescribeInstanceTypes") >= 1, "the calls went to the empty server");
}

#[test]
fn answer_missing_a_gpu_family_of_the_previous_snapshot_is_refused_unless_accept_shrink() {
    // moto's type list (1,263 types) has no g7 family; the committed snapshot has g7.
    let moto = Moto::start();
    let pricing = pricing_server(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let path = committed_snapshot(dir.path());
    let before = sha256(&path);

    let err = refresh(&options(dir.path(), &["us-east-1"], &moto.url, &pricing.url)).expect_err("g7 is missing");
    let message = err.to_string();
    println!("{message}");
    assert!(
        matches!(&err, RefreshError::Implausible { problems, .. } if problems == &[Problem::FamiliesMissing(vec!["g7".into()])]),
        "{message}"
    );
    assert!(message.contains("1 accelerator family of the previous snapshot is missing: g7"), "{message}");
    assert!(message.contains("--accept-shrink"), "says how to accept a real loss: {message}");
    assert_eq!(sha256(&path), before, "the snapshot is byte-identical");

    let mut opts = options(dir.path(), &["us-east-1"], &moto.url, &pricing.url);
    opts.accept_shrink = true;
    let report = refresh(&opts).expect("accepted with accept_shrink");
    assert!(report.regions[0].written);
    assert!(report.warnings.iter().any(|w| w.contains("accepted with --accept-shrink") && w.contains("g7")), "{:?}", report.warnings);
    assert!(load(dir.path(), "us-east-1").get("g7e.2xlarge").is_some());
}
