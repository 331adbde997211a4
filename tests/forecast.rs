//! `gpuplan forecast` on the examples and their demand file (gpuplan.demand.kdl): every format, the JSON's documented
//! shape, determinism, the picture, the book's picture kept current, and the command's errors. Runs are short (a few
//! hours of two clusters with few nodes) so the file stays within seconds; the book's picture is regenerated only
//! with GPUPLAN_FORECAST_EXAMPLES=1 (or GPUPLAN_BLESS=1), as it replays a week.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use common::{repo, text};
use gpuplan::compile::{compile, Compilation, CompileOptions};
use gpuplan::forecast::demand::{self, Demand};
use gpuplan::forecast::report::{render, Forecast, Format};
use gpuplan::forecast::run::{forecast, seeds, ForecastError, Options};

fn examples() -> &'static Compilation {
    static C: OnceLock<Compilation> = OnceLock::new();
    C.get_or_init(|| compile(&CompileOptions { profiles: vec![repo().join("profiles")], catalogs_dir: repo().join("catalogs"), templates_dir: None }).expect("the examples compile"))
}

fn demand() -> &'static Demand {
    static D: OnceLock<Demand> = OnceLock::new();
    D.get_or_init(|| demand::load(&repo()).expect("the examples' demand file parses").expect("the examples ship gpuplan.demand.kdl"))
}

/// A short forecast of one cluster: two seeds over `hours`.
fn short(cluster: &str, hours: u64) -> Forecast {
    let opts = Options { cluster: Some(cluster.into()), seed: None, seeds: Some(2), horizon_seconds: Some(hours * 3600) };
    forecast(examples(), demand(), "gpuplan.demand.kdl", &opts).unwrap()
}

/// ml-research (workloads and queues, no budget) and ml-batch-west (a budget, no workload) together.
fn both() -> &'static Forecast {
    static F: OnceLock<Forecast> = OnceLock::new();
    F.get_or_init(|| {
        let mut f = short("ml-research", 3);
        f.clusters.extend(short("ml-batch-west", 3).clusters);
        f
    })
}

#[test]
fn the_examples_demand_file_passes_its_check_against_the_examples() {
    let problems = demand::check(demand(), examples());
    assert!(problems.is_empty(), "{problems:?}");
}

/// The JSON's shape is docs/forecast.schema.json, with and without a budget.
#[test]
fn json_matches_the_documented_schema_and_reads_back() {
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(repo().join("docs/forecast.schema.json")).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let text = render(both(), Format::Json);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let errors: Vec<String> = validator.iter_errors(&value).map(|e| format!("{} at {}", e, e.instance_path())).take(10).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let budgets: Vec<bool> = both().clusters.iter().map(|c| c.spend.budget_usd_per_hour.is_some()).collect();
    assert_eq!(budgets, [false, true], "one cluster of each kind");
    assert_eq!(&serde_json::from_str::<Forecast>(&text).unwrap(), both(), "the JSON reads back as the forecast");
}

#[test]
fn the_table_names_every_scope_and_the_assumptions() {
    let t = render(both(), Format::Table);
    assert!(t.starts_with("ml-research: 3 hours replayed, 2 runs (seeds 1, 2)\n"), "{t}");
    for pool in examples().plan.clusters.iter().filter(|c| c.name == "ml-research").flat_map(|c| &c.pools) {
        assert!(t.contains(&format!("nodepool {}", pool.name)), "{} missing:\n{t}", pool.name);
    }
    for line in ["cluster ml-batch-west", "profile notebooks", "workload notebooks/jupyter", "queue evaluation/evaluation", "assumptions (docs/src/forecast.md):"] {
        assert!(t.contains(line), "{line} missing:\n{t}");
    }
}

#[test]
fn markdown_is_a_table_per_cluster_with_the_assumptions_folded() {
    let m = render(both(), Format::Markdown);
    assert!(m.starts_with("## Forecast\n\n### `ml-research`: 3 hours replayed"), "{m}");
    assert_eq!(m.matches("|  | $/day | $/month |").count(), 2, "one spend table per cluster:\n{m}");
    assert!(m.contains("<details><summary>Assumptions") && m.ends_with("</details>\n"), "{m}");
}

/// Same inputs and seeds, same bytes: the runs go in parallel, their results in (cluster, seed) order.
#[test]
fn the_same_seeds_give_the_same_bytes() {
    let again = short("ml-research", 3);
    assert_eq!(render(&again, Format::Json), render(&short("ml-research", 3), Format::Json));
    assert_eq!(gpuplan::forecast::picture::svg(&again), gpuplan::forecast::picture::svg(&short("ml-research", 3)));
}

#[test]
fn the_seeds_are_the_first_and_the_ones_after_it() {
    let opts = Options { seed: Some(41), seeds: Some(3), ..Options::default() };
    assert_eq!(seeds(demand(), &opts), [41, 42, 43]);
    assert_eq!(seeds(demand(), &Options::default()).len(), demand().seeds as usize, "the demand file's count");
}

#[test]
fn a_cluster_the_demand_file_does_not_name_is_an_error_naming_those_it_does() {
    let opts = Options { cluster: Some("ml-nope".into()), ..Options::default() };
    let err = forecast(examples(), demand(), "gpuplan.demand.kdl", &opts).unwrap_err();
    assert!(matches!(&err, ForecastError::UnknownCluster { named, .. } if named.contains(&"ml-prod".to_string())), "{err}");
}

/// A panel per cluster; each NodePool that ran a node is a stacked area with its name; a budget is a line.
#[test]
fn the_picture_draws_spend_against_budget_and_bound_and_nodes_per_pool() {
    let svg = gpuplan::forecast::picture::svg(both());
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"") && svg.ends_with("</svg>\n"));
    assert_eq!(svg.matches("spend per hour and nodes").count(), 2);
    for pool in both().clusters.iter().flat_map(|c| c.series.nodes.keys()) {
        assert!(svg.contains(&format!("<title>{pool}</title>")), "{pool}");
    }
    assert!(svg.contains("budget $40.00/h"), "ml-batch-west's budget");
    assert!(svg.contains("worst case $"), "the bound, drawn or named");
}

/// The book's picture (docs/src/forecast/examples.svg) is the picture of the committed forecast
/// (docs/src/forecast/examples.json); with GPUPLAN_FORECAST_EXAMPLES=1 that forecast is replayed again and must be
/// what the examples forecast today. GPUPLAN_BLESS=1 writes both.
#[test]
fn the_books_picture_is_current() {
    let dir = repo().join("docs/src/forecast");
    let bless = std::env::var_os("GPUPLAN_BLESS").is_some();
    let replay = bless || std::env::var_os("GPUPLAN_FORECAST_EXAMPLES").is_some();
    if bless {
        let current = book_forecast();
        std::fs::write(dir.join("examples.json"), render(&current, Format::Json)).unwrap();
        std::fs::write(dir.join("examples.svg"), gpuplan::forecast::picture::svg(&current)).unwrap();
        return;
    }
    let committed: Forecast = serde_json::from_str(&std::fs::read_to_string(dir.join("examples.json")).unwrap()).unwrap();
    let current = if replay { book_forecast() } else { committed.clone() };
    let svg = gpuplan::forecast::picture::svg(&current);
    assert!(current == committed, "docs/src/forecast/examples.json is stale: GPUPLAN_BLESS=1 cargo test --locked --test forecast the_books_picture_is_current");
    assert!(std::fs::read_to_string(dir.join("examples.svg")).unwrap() == svg, "docs/src/forecast/examples.svg is stale: GPUPLAN_BLESS=1 cargo test --locked --test forecast the_books_picture_is_current");
}

/// What the book shows: ml-prod over a week (a weekend included) on three seeds, as
/// `gpuplan forecast --cluster ml-prod --horizon 7d --seeds 3 --format json` prints it.
fn book_forecast() -> Forecast {
    let opts = Options { cluster: Some("ml-prod".into()), seed: None, seeds: Some(3), horizon_seconds: Some(7 * 86_400) };
    forecast(examples(), demand(), "gpuplan.demand.kdl", &opts).unwrap()
}

fn gpuplan(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gpuplan")).args(args).current_dir(dir).env("NO_COLOR", "1").env("GPUPLAN_NOW", "2026-11-27T00:00:00Z").output().unwrap()
}

/// A repository with the example profiles and catalogs, and no demand file.
fn repository_without_demand() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::create_dir(dir.path().join("profiles")).unwrap();
    std::fs::copy(repo().join("profiles/batch-west.kdl"), dir.path().join("profiles/batch-west.kdl")).unwrap();
    std::fs::create_dir(dir.path().join("catalogs")).unwrap();
    for region in ["us-east-1", "us-west-2"] {
        std::fs::copy(repo().join(format!("catalogs/{region}.json")), dir.path().join(format!("catalogs/{region}.json"))).unwrap();
    }
    dir
}

#[test]
fn without_a_demand_file_the_command_says_which_file_to_write_and_exits_2() {
    let dir = repository_without_demand();
    let out = gpuplan(dir.path(), &["forecast"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no demand file: write gpuplan.demand.kdl at the repository root") && err.contains("gpuplan forecast --help") && err.contains("docs/src/forecast.md"), "{err}");
}

#[test]
fn the_command_reads_demand_from_a_file_and_writes_the_picture_quietly() {
    let dir = repository_without_demand();
    std::fs::write(dir.path().join("demand.kdl"), "horizon \"2h\"\nseeds 2\ncluster \"ml-batch-west\" {\n    spot rate=\"8%/month\"\n}\n").unwrap();
    let out = gpuplan(dir.path(), &["forecast", "-q", "--demand", "demand.kdl", "--svg", "f.svg"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(out.stderr.is_empty(), "-q prints no status line: {}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("ml-batch-west: 2 hours replayed, 2 runs (seeds 1, 2)"), "{stdout}");
    assert!(std::fs::read_to_string(dir.path().join("f.svg")).unwrap().contains("ml-batch-west: spend per hour and nodes"));
}
