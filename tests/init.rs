//! `gpuplan init` through the binary, in empty directories: every preset in every region with a committed catalog
//! compiles and lints clean as written; an existing profile is refused unless `--force`; what it prints.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{gpuplan, stderr, stdout};

use gpuplan::profile::Preset;


/// The regions with a catalog: the built-in us-east-1 and every committed catalogs/<region>.json.
fn regions() -> Vec<String> {
    let mut regions: Vec<String> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.strip_suffix(".json").map(str::to_string))
        .collect();
    regions.sort();
    assert!(regions.contains(&"us-east-1".to_string()) && regions.len() >= 2, "{regions:?}");
    regions
}

/// An empty directory, with catalogs/<region>.json when the region is not the built-in one.
fn empty_dir(region: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    if region != "us-east-1" {
        let catalog = format!("{region}.json");
        std::fs::create_dir(dir.path().join("catalogs")).unwrap();
        std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogs").join(&catalog), dir.path().join("catalogs").join(&catalog)).unwrap();
    }
    dir
}

/// No diagnostic at all: neither an error (×) nor a lint warning (⚠); the catalog-age line is not one.
fn assert_no_diagnostic(what: &str, o: &Output) {
    let text = stderr(o);
    assert!(!text.contains('×') && !text.contains('⚠'), "{what}:\n{text}");
}

/// `init --preset {preset} --region {region}` in an empty directory, then compile, lint and explain there.
fn init_then_compile(preset: &str, region: &str) {
    let what = format!("init --preset {preset} --region {region}");
    let dir = empty_dir(region);
    let init = gpuplan(dir.path(), &["init", "--preset", preset, "--region", region, "--cluster", "c1"]);
    assert!(init.status.success(), "{what}: {}", stderr(&init));
    let compile = gpuplan(dir.path(), &["compile"]);
    assert!(compile.status.success(), "{what}, then compile:\n{}", stderr(&compile));
    assert_no_diagnostic(&format!("{what}, then compile"), &compile);
    assert!(dir.path().join("out/c1/kustomization.yaml").is_file(), "{what}: compile wrote no out/c1/");
    let lint = gpuplan(dir.path(), &["lint", "--deny-warnings"]);
    assert!(lint.status.success(), "{what}, then lint --deny-warnings:\n{}{}", stdout(&lint), stderr(&lint));
    let explain = gpuplan(dir.path(), &["explain"]);
    assert!(explain.status.success(), "{what}, then explain:\n{}", stderr(&explain));
    // The starter's region and preset are the ones asked for.
    let text = std::fs::read_dir(dir.path().join("profiles")).unwrap().map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap()).collect::<String>();
    assert!(text.contains(&format!("region \"{region}\"")) && text.contains(&format!("preset=\"{preset}\"")), "{what}:\n{text}");
}

#[test]
fn every_preset_in_every_region_compiles_and_lints_clean_as_written() {
    let regions = regions();
    // One thread per case: each is a few gpuplan processes, most of the test's time.
    std::thread::scope(|scope| {
        for region in &regions {
            for preset in Preset::NAMES {
                scope.spawn(move || init_then_compile(preset, region));
            }
        }
    });
}

#[test]
fn init_writes_the_presets_file_and_prints_the_next_commands() {
    let dir = empty_dir("us-east-1");
    let init = gpuplan(dir.path(), &["init"]);
    assert!(init.status.success(), "{}", stderr(&init));
    assert!(dir.path().join("profiles/inference.kdl").is_file());
    let out = stdout(&init);
    assert!(out.starts_with("wrote profiles/inference.kdl (preset inference-spot, cluster my-cluster in us-east-1)\n"), "{out}");
    assert!(out.contains("gpuplan compile") && out.contains("gpuplan explain inference"), "{out}");
}

#[test]
fn init_refuses_to_overwrite_an_existing_profile_without_force() {
    let dir = empty_dir("us-east-1");
    let profile = dir.path().join("profiles/training.kdl");
    std::fs::create_dir_all(profile.parent().unwrap()).unwrap();
    std::fs::write(&profile, "// mine\n").unwrap();
    let refused = gpuplan(dir.path(), &["init", "--preset", "training-on-demand"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).starts_with("error: profiles/training.kdl already exists, nothing written;"), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("--force"), "{}", stderr(&refused));
    assert_eq!(std::fs::read_to_string(&profile).unwrap(), "// mine\n");

    let forced = gpuplan(dir.path(), &["init", "--preset", "training-on-demand", "--force"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert!(std::fs::read_to_string(&profile).unwrap().contains("preset=\"training-on-demand\""));
}

#[test]
fn init_dir_writes_under_that_directory_and_says_to_cd_there() {
    let dir = empty_dir("us-east-1");
    let init = gpuplan(dir.path(), &["init", "--dir", "platform", "--name", "llm", "--cluster", "prod-gpu"]);
    assert!(init.status.success(), "{}", stderr(&init));
    let written: PathBuf = ["platform", "profiles", "llm.kdl"].iter().collect();
    assert!(dir.path().join(&written).is_file());
    assert!(stdout(&init).contains(&format!("wrote {}", written.display())) && stdout(&init).contains("cd platform"), "{}", stdout(&init));
    let compile = gpuplan(&dir.path().join("platform"), &["compile"]);
    assert!(compile.status.success(), "{}", stderr(&compile));
    assert!(dir.path().join("platform/out/prod-gpu/nodepool-llm-spot.yaml").is_file());
}

#[test]
fn init_usage_errors_are_plain_messages_with_exit_2_and_write_nothing() {
    for (args, expected) in [
        (&["init", "--region", "eu-north-1"][..], "error: no catalog for region eu-north-1"),
        (&["init", "--name", "My_Profile"][..], "error: the profile name `My_Profile` is not a valid name"),
        (&["init", "--cluster", "Prod"][..], "error: the cluster name `Prod` is not a valid name"),
        (&["init", "--preset", "inference-spto"][..], "error: invalid value 'inference-spto' for '--preset <PRESET>'"),
    ] {
        let dir = empty_dir("us-east-1");
        let o = gpuplan(dir.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).starts_with(expected), "{args:?}: {}", stderr(&o));
        assert!(!dir.path().join("profiles").exists(), "{args:?} wrote profiles/");
    }
}

/// From a subdirectory, `init` writes into the profiles directory compile reads: the repository root's `profiles/`,
/// or the one gpuplan.kdl names; a compile from the same subdirectory then finds it.
#[test]
fn init_from_a_subdirectory_writes_where_compile_reads() {
    for (config, profiles) in [(None, "profiles"), (Some("profiles \"capacity/profiles\"\n"), "capacity/profiles")] {
        let dir = tempfile::tempdir().unwrap();
        assert!(std::process::Command::new("git").args(["init", "-q"]).current_dir(dir.path()).status().unwrap().success());
        std::fs::create_dir_all(dir.path().join(profiles)).unwrap();
        std::fs::create_dir_all(dir.path().join("docs/notes")).unwrap();
        if let Some(config) = config {
            std::fs::write(dir.path().join("gpuplan.kdl"), config).unwrap();
        }
        let below = dir.path().join("docs/notes");
        let out = gpuplan(&below, &["init"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(dir.path().join(profiles).join("inference.kdl").is_file(), "{config:?}: {}", stdout(&out));
        assert!(!below.join("profiles").exists(), "{config:?}: init wrote under the subdirectory");
        let compiled = gpuplan(&below, &["compile"]);
        assert_eq!(compiled.status.code(), Some(0), "{config:?}: {}", stderr(&compiled));
        assert!(dir.path().join("out/my-cluster").is_dir(), "{config:?}: out/ at the root");
    }
}
