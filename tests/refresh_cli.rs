//! `gpuplan catalog refresh` end to end through the binary: a project in a tempdir (two of the repo's us-east-1
//! profiles, the committed us-east-1 catalog, an out/ written by `gpuplan compile`), refreshed against moto's EC2
//! server and the Price List replay server of tests/support, then `compile --check` / `compile`.
//!
//! No AWS can be reached: the child gets fake credentials, no AWS config files, IMDS off, every inherited AWS_*
//! and proxy variable removed, explicit 127.0.0.1 endpoints, and AWS_ENDPOINT_URL pointing at a closed port so a
//! client that lost its explicit endpoint would fail instead of calling AWS.
//!
//! Needs moto's server: `pip install 'moto[server]==5.2.1'` (python3 on PATH, or GPUPLAN_TEST_PYTHON).

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use gpuplan::catalog::Catalog;
use gpuplan::catalog::import;
use support::{HttpServer, Moto, dead_endpoint, pricing_server};
use tempfile::TempDir;

const PROFILES: [&str; 2] = ["llm-inference.kdl", "tiered-fallback.kdl"];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A project directory: profiles/, catalogs/us-east-1.json (the committed one) and out/ from `gpuplan compile`.
struct Project {
    dir: TempDir,
    /// Where AWS_ENDPOINT_URL points: nothing listens there.
    trap: String,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("profiles")).unwrap();
        std::fs::create_dir_all(dir.path().join("catalogs")).unwrap();
        for name in PROFILES {
            std::fs::copy(repo().join("profiles").join(name), dir.path().join("profiles").join(name)).unwrap();
        }
        std::fs::copy(repo().join("catalogs/us-east-1.json"), dir.path().join("catalogs/us-east-1.json")).unwrap();
        let project = Project { dir, trap: dead_endpoint() };
        let compiled = project.gpuplan(&["compile"]);
        assert_eq!(compiled.status.code(), Some(0), "initial compile: {}", stderr(&compiled));
        assert!(project.path("out/ml-prod/nodepool-llm-inference-spot.yaml").is_file());
        assert!(project.path("out/ml-vision").is_dir());
        project
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Runs the binary in the project directory with a sealed-off AWS environment.
    fn gpuplan(&self, args: &[&str]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_gpuplan"));
        command.current_dir(self.dir.path()).args(args);
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            if key.starts_with("AWS_") || key.to_ascii_lowercase().ends_with("_proxy") {
                command.env_remove(&key);
            }
        }
        let no_config = self.path("no-aws-config");
        command
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", "us-east-1")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("AWS_CONFIG_FILE", &no_config)
            .env("AWS_SHARED_CREDENTIALS_FILE", &no_config)
            .env("AWS_ENDPOINT_URL", &self.trap);
        command.output().expect("run gpuplan")
    }

    fn refresh(&self, region: &str, ec2: &str, pricing: &str) -> Output {
        self.refresh_with(region, ec2, pricing, &[])
    }

    fn refresh_with(&self, region: &str, ec2: &str, pricing: &str, extra: &[&str]) -> Output {
        let mut args = vec![
            "catalog",
            "refresh",
            "--region",
            region,
            "--endpoint-url",
            ec2,
            "--pricing-endpoint-url",
            pricing,
            "--out",
            "catalogs",
            "--profiles",
            "profiles",
            "--out-dir",
            "out",
        ];
        args.extend_from_slice(extra);
        self.gpuplan(&args)
    }

    fn catalog_bytes(&self) -> Vec<u8> {
        std::fs::read(self.path("catalogs/us-east-1.json")).unwrap()
    }

    /// Every file under out/ (relative path → bytes), directories included as empty entries.
    fn out_tree(&self) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        let mut tree = BTreeMap::new();
        walk(&self.path("out"), Path::new(""), &mut tree);
        tree
    }
}

fn walk(root: &Path, relative: &Path, tree: &mut BTreeMap<PathBuf, Option<Vec<u8>>>) {
    for entry in std::fs::read_dir(root.join(relative)).unwrap() {
        let entry = entry.unwrap();
        let relative = relative.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            tree.insert(relative.clone(), None);
            walk(root, &relative, tree);
        } else {
            tree.insert(relative.clone(), Some(std::fs::read(root.join(&relative)).unwrap()));
        }
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// An EC2 endpoint that forwards to moto and records what it forwarded (proof the calls went there).
fn recording_proxy(moto: &Moto) -> HttpServer {
    let addr = moto.addr();
    HttpServer::start(move |request| support::forward(&addr, request))
}

fn actions(server: &HttpServer) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for request in server.requests() {
        *counts.entry(request.form_param("Action").unwrap_or_default()).or_insert(0) += 1;
    }
    counts
}

// -----------------------------------------------------------------------------------------------------------------

#[test]
fn refresh_reports_catalog_and_manifest_changes_then_compile_applies_them() {
    let moto = Moto::start();
    let ec2 = recording_proxy(&moto);
    let pricing = pricing_server(vec![]);
    let project = Project::new();
    let catalog_before = project.catalog_bytes();
    let out_before = project.out_tree();

    // moto's type list has no g7 family, which the committed snapshot has: refused, exit 2, nothing changed ...
    let refused = project.refresh("us-east-1", &ec2.url, &pricing.url);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("1 accelerator family of the previous snapshot is missing: g7"), "{}", stderr(&refused));
    assert!(stdout(&refused).is_empty());
    assert_eq!(project.catalog_bytes(), catalog_before);

    // ... unless accepted.
    let started = Instant::now();
    let refreshed = project.refresh_with("us-east-1", &ec2.url, &pricing.url, &["--accept-shrink"]);
    let took = started.elapsed();
    let (out, err) = (stdout(&refreshed), stderr(&refreshed));
    println!("refresh took {:.1}s\n--- stdout\n{out}--- stderr\n{err}", took.as_secs_f64());
    assert_eq!(refreshed.status.code(), Some(0), "{err}");

    // The calls went to the local servers.
    let calls = actions(&ec2);
    for action in ["DescribeInstanceTypes", "DescribeInstanceTypeOfferings", "DescribeSpotPriceHistory"] {
        assert!(calls.get(action).is_some_and(|n| *n >= 1), "{action} not sent to moto: {calls:?}");
    }
    assert_eq!(pricing.requests().len(), 8, "the 3 recorded us-east-1 pages and the gp3 EBS page, for the refused refresh and this one");

    // The catalog was rewritten with live data.
    let catalog_after = project.catalog_bytes();
    assert_ne!(catalog_after, catalog_before, "catalogs/us-east-1.json rewritten");
    let path = project.path("catalogs/us-east-1.json");
    let catalog = Catalog::from_json(std::str::from_utf8(&catalog_after).unwrap(), &path).expect("valid catalog");
    assert!(catalog.sources[import::SOURCE_ON_DEMAND].description.starts_with("AWS Price List GetProducts"));
    assert!(catalog.sources[import::SOURCE_SPOT].description.starts_with("EC2 DescribeSpotPriceHistory"));
    let g5 = catalog.get("g5.xlarge").expect("g5.xlarge");
    assert_eq!(g5.on_demand.as_ref().map(|p| p.usd_per_hour), Some(1.006));
    assert!(g5.spot.values().all(|p| p.source == import::SOURCE_SPOT_ESTIMATE), "moto's $0.00001 spot dropped: {:?}", g5.spot);
    let previous = Catalog::from_json(std::str::from_utf8(&catalog_before).unwrap(), &path).unwrap();

    // The report: what was written, with counts that match the file.
    let on_demand = catalog.instance_types.iter().filter(|t| t.on_demand.is_some()).count();
    let spot =
        catalog.instance_types.iter().flat_map(|t| t.spot.values()).filter(|p| p.source == import::SOURCE_SPOT).count();
    let wrote = format!(
        "wrote catalogs/us-east-1.json: {} types, {} zones, {on_demand} on-demand prices, {spot} observed spot prices\n",
        catalog.instance_types.len(),
        catalog.zones.len()
    );
    assert!(out.starts_with(&wrote), "report line {wrote:?} first in:\n{out}");
    assert_eq!(catalog.zones.len(), 6, "moto's us-east-1a..f");
    assert!(spot > 0 && on_demand > 0);

    // ... then the changes against the committed snapshot, in the library's words.
    let changes = gpuplan::catalog::refresh::catalog_changes(&previous, &catalog);
    assert!(!changes.is_empty());
    assert!(out.contains(&changes.to_string()), "catalog changes in the report:\n{changes}");
    // The committed snapshot had no gp3 EBS prices; the refresh brought the Price List's.
    assert!(out.contains("  gp3 EBS $/GB-month, $/IOPS-month, $/MiBps-month: none (the cited table) → 0.08, 0.005, 0.04\n"), "{out}");
    let header = out.lines().nth(1).unwrap();
    assert!(header.starts_with("us-east-1: ") && header.contains("accelerated price moves"), "{header}");
    assert!(header.contains("types added") && out.contains("\n  added: "), "moto's type list differs: {header}");
    // moto's placeholder spot prices ($0.00001) are dropped where an on-demand price (new or previous) shows them
    // wrong: g5.xlarge keeps its estimate, and no accelerated type's price falls to zero.
    assert!(!out.contains("g5.xlarge spot"), "g5.xlarge's estimate is unchanged:\n{out}");
    assert!(!out.contains("→$0.000"), "no price falls to moto's placeholder:\n{out}");
    assert!(err.contains("us-east-1: dropped ") || out.contains("warning: us-east-1: dropped "), "the drop is said");
    assert!(out.contains("\nrefreshed 1 region(s) in "), "{out}");

    // ... and which manifests change, as the markdown semantic diff.
    let (_, impact) = out
        .split_once("manifests that change (run `gpuplan compile` or `gpuplan commit` to apply):\n")
        .expect("a manifest-impact section");
    assert!(impact.starts_with("## gpuplan: changes to out/\n"), "{impact}");
    assert!(impact.contains("### `ml-prod`") && impact.contains("### `ml-vision`"), "{impact}");
    let pool_row = impact
        .lines()
        .find(|l| l.contains("NodePool `llm-inference-spot`"))
        .unwrap_or_else(|| panic!("llm-inference-spot changes:\n{impact}"));
    // Only the catalog digest: moto's placeholder spot price no longer moves a limit.
    assert!(pool_row.contains("gpuplan.dev/catalog") && !pool_row.contains("limit"), "{pool_row}");
    assert!(!out.contains("no manifest in out changes"));
    assert!(!err.contains("does not compile"), "{err}");
    assert!(!err.contains("catalog's newest data is"), "no staleness warning right after a refresh: {err}");

    // Refresh only reports: out/ is untouched.
    assert!(project.out_tree() == out_before, "refresh must not modify out/");

    // compile --check sees out/ is stale against the new catalog; compile fixes it.
    let check = project.gpuplan(&["compile", "--check"]);
    assert_eq!(check.status.code(), Some(1), "out is stale: {}", stderr(&check));
    assert!(stdout(&check).contains("+++ b/out/ml-prod/nodepool-llm-inference-spot.yaml"), "{}", stdout(&check));
    assert!(stderr(&check).contains("out is stale: run `gpuplan compile`"), "{}", stderr(&check));
    assert!(project.out_tree() == out_before, "--check changes nothing");

    let compile = project.gpuplan(&["compile"]);
    assert_eq!(compile.status.code(), Some(0), "{}", stderr(&compile));
    assert!(project.out_tree() != out_before);
    let spot_pool = std::fs::read_to_string(project.path("out/ml-prod/nodepool-llm-inference-spot.yaml")).unwrap();
    assert!(spot_pool.contains(&format!("gpuplan.dev/catalog: us-east-1@{}", catalog.digest())), "{spot_pool}");
    // The worst case now prices the EBS volumes at the refreshed catalog's gp3 prices, and says so.
    assert!(catalog.ebs.is_some());
    assert!(spot_pool.contains("$0.0982/h at most: EBS list prices from the catalog's Price List refresh of 20"), "{spot_pool}");

    let check = project.gpuplan(&["compile", "--check"]);
    assert_eq!(check.status.code(), Some(0), "{}{}", stdout(&check), stderr(&check));
    assert!(stderr(&check).contains("out is up to date"), "{}", stderr(&check));
    assert!(took < Duration::from_secs(120), "{took:?}");

    // A region no profile uses: a new snapshot, and the other branch of the impact section.
    let out_compiled = project.out_tree();
    let east = project.catalog_bytes();
    let west = project.refresh("us-west-2", &ec2.url, &pricing.url);
    let (out, err) = (stdout(&west), stderr(&west));
    println!("--- us-west-2 stdout\n{out}--- stderr\n{err}");
    assert_eq!(west.status.code(), Some(0), "{err}");
    assert!(out.starts_with("wrote catalogs/us-west-2.json: "), "{out}");
    assert!(out.contains("\nus-west-2: new snapshot (no previous one to compare with)\n"), "{out}");
    assert!(out.ends_with("\nno manifest in out changes\n"), "{out}");
    assert!(!out.contains("manifests that change"), "{out}");
    assert!(project.path("catalogs/us-west-2.json").is_file());
    assert_eq!(project.catalog_bytes(), east, "us-east-1 was not refreshed");
    assert!(project.out_tree() == out_compiled, "out/ untouched");
    assert_eq!(project.gpuplan(&["compile", "--check"]).status.code(), Some(0));
}

/// `worst-case-usd-per-hour` and `worst-case-basis` of a compiled NodePool.
fn worst_case(project: &Project, nodepool: &str) -> (f64, String) {
    let text = std::fs::read_to_string(project.path(nodepool)).unwrap();
    // Both are one-line double-quoted annotations in gpuplan's output.
    let annotation = |key: &str| {
        let line = text.lines().find_map(|l| l.trim_start().strip_prefix(&format!("gpuplan.dev/{key}: "))).unwrap_or_else(|| panic!("{key} in {text}"));
        line.trim_matches('"').to_string()
    };
    (annotation("worst-case-usd-per-hour").parse().unwrap(), annotation("worst-case-basis"))
}

/// The gp3 prices a refresh reads from the Price List flow into the compiled worst case: the same refresh with
/// the storage price doubled ($0.08 → $0.16 per GB-month in the stand-in's us-east-1.ebs.json, nothing else
/// changed) raises llm-inference's per-node volumes (200 GiB gp3 at 10000 IOPS / 500 MiB/s) from $66 to $82 a
/// month, $0.0982/h → $0.1220/h over the 672-hour month, and its worst case by that much per node at the limit.
#[test]
fn refreshed_gp3_prices_flow_into_the_compiled_worst_case() {
    let moto = Moto::start();
    let project = Project::new();
    let spot = "out/ml-prod/nodepool-llm-inference-spot.yaml";
    let compile_after = |pricing: &HttpServer| {
        let refreshed = project.refresh_with("us-east-1", &moto.url, &pricing.url, &["--accept-shrink"]);
        assert_eq!(refreshed.status.code(), Some(0), "{}", stderr(&refreshed));
        let compiled = project.gpuplan(&["compile"]);
        assert_eq!(compiled.status.code(), Some(0), "{}", stderr(&compiled));
        worst_case(&project, spot)
    };
    let (listed, listed_basis) = compile_after(&pricing_server(vec![]));
    assert!(listed_basis.contains("(200 GiB gp3 at 10000 IOPS / 500 MiB/s, $0.0982/h at most: EBS list prices from the catalog's Price List refresh of "), "{listed_basis}");

    let pages = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(support::fixtures_dir().join("pricing")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            std::fs::copy(&path, pages.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    let ebs = pages.path().join("us-east-1.ebs.json");
    let text = std::fs::read_to_string(&ebs).unwrap();
    assert_eq!(text.matches(r#"\"USD\":\"0.0800000000\""#).count(), 1, "one storage price");
    std::fs::write(&ebs, text.replace(r#"\"USD\":\"0.0800000000\""#, r#"\"USD\":\"0.1600000000\""#)).unwrap();
    let (raised, raised_basis) = compile_after(&support::pricing_server_in(pages.path().to_path_buf(), vec![]));
    let catalog = Catalog::from_json(&String::from_utf8(project.catalog_bytes()).unwrap(), Path::new("us-east-1.json")).unwrap();
    assert_eq!(catalog.ebs.map(|p| p.gp3_per_gib_month), Some(0.16));
    assert!(raised_basis.contains("$0.1220/h at most: EBS list prices from the catalog's Price List refresh of "), "{raised_basis}");
    // Each node at the limit costs $16/672 an hour more, and the pool's limits allow 43 nodes (its drain-peak basis
    // counts them): $1.02/h more, within the two figures' rounding to cents.
    let per_node = 16.0 / 672.0;
    println!("worst case ${listed}/h → ${raised}/h: {:.2} nodes", (raised - listed) / per_node);
    assert!(((raised - listed) - 43.0 * per_node).abs() <= 0.0101, "{listed} → {raised}");
}

#[test]
fn refresh_with_ec2_down_fails_clearly_and_changes_nothing() {
    let pricing = pricing_server(vec![]);
    let project = Project::new();
    let catalog_before = project.catalog_bytes();
    let out_before = project.out_tree();
    let endpoint = dead_endpoint();

    let started = Instant::now();
    let refreshed = project.refresh("us-east-1", &endpoint, &pricing.url);
    let took = started.elapsed();
    let (out, err) = (stdout(&refreshed), stderr(&refreshed));
    println!("failed after {:.1}s\n--- stdout\n{out}--- stderr\n{err}", took.as_secs_f64());

    assert_eq!(refreshed.status.code(), Some(2), "{err}");
    assert!(out.is_empty(), "no report, no manifest impact: {out}");
    assert!(err.starts_with("error: refresh of us-east-1 failed, no catalog was changed: "), "{err}");
    assert!(err.contains(&format!("cannot connect to {endpoint}")), "names the endpoint: {err}");
    assert!(err.contains("Is the endpoint reachable?") && err.contains("--endpoint-url"), "says what to do: {err}");
    assert!(!err.contains(&project.trap), "the AWS_ENDPOINT_URL trap was never used: {err}");

    assert_eq!(project.catalog_bytes(), catalog_before, "the previous catalog is byte-identical");
    let mut catalogs: Vec<String> = std::fs::read_dir(project.path("catalogs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    catalogs.sort();
    assert_eq!(catalogs, ["us-east-1.json"], "no temp files left behind");
    assert!(project.out_tree() == out_before, "out/ untouched");
    // The default retries (5 attempts, backoff from 1 s, jitter) bound this at roughly 15 s.
    assert!(took < Duration::from_secs(30), "{took:?}");
}
