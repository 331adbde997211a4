//! The repository config `gpuplan.kdl`: found from any subdirectory, its settings as every command's defaults (flags
//! still win), never read as a profile, and the clusters it defines shared by profiles without changing a byte of
//! what they compile to.

mod common;

use std::path::{Path, PathBuf};

use common::{gpuplan, repo, text, tree_bytes};
use gpuplan::compile::{compile_with_config, CompileOptions};
use gpuplan::layout::OutputTree;

/// A git repository holding a copy of the bundled profiles and catalogs (no out/), with `config` as its gpuplan.kdl.
fn repository(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let git = std::process::Command::new("git").args(["init", "-q"]).current_dir(dir.path()).status().unwrap();
    assert!(git.success());
    for sub in ["profiles", "catalogs"] {
        std::fs::create_dir(dir.path().join(sub)).unwrap();
        for entry in std::fs::read_dir(repo().join(sub)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                std::fs::copy(&path, dir.path().join(sub).join(path.file_name().unwrap())).unwrap();
            }
        }
    }
    std::fs::write(dir.path().join("gpuplan.kdl"), config).unwrap();
    dir
}

fn run_ok(dir: &Path, args: &[&str]) -> std::process::Output {
    let out = gpuplan(dir, args);
    assert!(out.status.success(), "gpuplan {args:?} in {}: {}", dir.display(), text(&out));
    out
}

/// The bytes of every file under `dir`, by path relative to it.
fn relative_tree(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    tree_bytes(dir).into_iter().map(|(p, b)| (p.strip_prefix(dir).unwrap().to_path_buf(), b)).collect()
}

/// From the root, from `profiles/` and from a directory two levels down, `compile` writes the same out/, which is
/// the repository's committed out/ byte for byte (provenance is repository-relative, never cwd-relative); and every
/// other command that reads the profiles (compile --check, lint, explain, diff, commit) runs from the
/// subdirectory as from the root, with the same stdout.
#[test]
fn every_command_behaves_from_a_subdirectory_as_from_the_root() {
    let dir = repository("// every setting at its default\n");
    let deep = dir.path().join("docs/notes");
    std::fs::create_dir_all(&deep).unwrap();
    let committed = relative_tree(&repo().join("out"));
    for cwd in [dir.path().to_path_buf(), dir.path().join("profiles"), deep.clone()] {
        let _ = std::fs::remove_dir_all(dir.path().join("out"));
        run_ok(&cwd, &["compile"]);
        assert!(relative_tree(&dir.path().join("out")) == committed, "out/ compiled from {} differs from the committed out/", cwd.display());
        assert!(!cwd.join("out").exists() || cwd == dir.path(), "compile from {} wrote a second out/ there", cwd.display());
    }
    let pods = repo().join("tests/fixtures/llm-server-12-replicas.yaml").display().to_string();
    for args in [&["compile", "--check"][..], &["lint"], &["explain"], &["explain", "llm-inference"], &["diff", "--exit-code"], &["simulate", "--pods", &pods]] {
        let at_root = run_ok(dir.path(), args);
        let below = run_ok(&deep, args);
        // Profile locations (`at profiles/x.kdl:29:16`) are printed as the user can open them from where they are.
        let below = String::from_utf8_lossy(&below.stdout).replace("../../profiles/", "profiles/");
        assert_eq!(String::from_utf8_lossy(&at_root.stdout), below, "gpuplan {args:?}: stdout differs from a subdirectory");
    }
    // commit from the subdirectory commits the root's out/: a NodePool file missing there comes back.
    std::fs::remove_file(dir.path().join("out/ml-prod/nodepool-training.yaml")).unwrap();
    for git in [&["add", "-A"][..], &["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base"]] {
        assert!(std::process::Command::new("git").args(git).current_dir(dir.path()).status().unwrap().success());
    }
    let mut commit = std::process::Command::new(env!("CARGO_BIN_EXE_gpuplan"));
    commit.current_dir(&deep).env("NO_COLOR", "1").env("GIT_AUTHOR_NAME", "t").env("GIT_AUTHOR_EMAIL", "t@example.com").env("GIT_COMMITTER_NAME", "t").env("GIT_COMMITTER_EMAIL", "t@example.com");
    let committed_run = commit.arg("commit").output().unwrap();
    assert!(committed_run.status.success(), "{}", text(&committed_run));
    let shown = std::process::Command::new("git").args(["show", "--stat", "--format=", "HEAD"]).current_dir(dir.path()).output().unwrap();
    assert!(String::from_utf8_lossy(&shown.stdout).contains("out/ml-prod/nodepool-training.yaml"), "{}", String::from_utf8_lossy(&shown.stdout));
}

/// A repository with no gpuplan.kdl: its root is the top of the git work tree when that holds `profiles/`, so a
/// compile from a subdirectory writes the root's out/ (and nothing where it runs), as with a config.
#[test]
fn without_a_config_the_root_is_the_git_top_holding_profiles() {
    let dir = repository("");
    std::fs::remove_file(dir.path().join("gpuplan.kdl")).unwrap();
    let committed = relative_tree(&repo().join("out"));
    run_ok(&dir.path().join("profiles"), &["compile"]);
    assert!(relative_tree(&dir.path().join("out")) == committed, "out/ compiled from profiles/ differs from the committed out/");
    assert!(!dir.path().join("profiles/out").exists(), "compile wrote an out/ inside profiles/");
    run_ok(&dir.path().join("profiles"), &["compile", "--check"]);
}

/// Every setting of gpuplan.kdl moves its default, relative to the config's directory, from any subdirectory; a
/// flag still wins, relative to where it is typed.
#[test]
fn config_settings_are_the_defaults_and_flags_win() {
    let dir = repository("profiles \"capacity/profiles\"\nout \"deploy\"\ncatalogs \"capacity/catalogs\"\nmax-catalog-age-days 36500\n");
    std::fs::create_dir(dir.path().join("capacity")).unwrap();
    for sub in ["profiles", "catalogs"] {
        std::fs::rename(dir.path().join(sub), dir.path().join("capacity").join(sub)).unwrap();
    }
    let below = dir.path().join("capacity/profiles");
    let compiled = run_ok(&below, &["compile"]);
    let stderr = String::from_utf8_lossy(&compiled.stderr);
    assert!(dir.path().join("deploy/ml-batch-west/nodepool-batch.yaml").is_file(), "{stderr}");
    assert!(!stderr.contains("days old"), "max-catalog-age-days 36500 silences the catalog-age warning: {stderr}");
    assert!(stderr.contains("wrote ../../deploy "), "paths printed relative to where the user is: {stderr}");
    // Flags beat the config: the age threshold, and an out dir relative to the working directory.
    let flagged = run_ok(&below, &["compile", "--max-catalog-age-days", "1", "--out", "here"]);
    assert!(String::from_utf8_lossy(&flagged.stderr).contains("days old"), "{}", text(&flagged));
    assert!(below.join("here/ml-prod/nodepool-training.yaml").is_file());
    // A profile path typed on the command line is relative to the working directory, not to the root.
    run_ok(&below, &["compile", "--out", "one", "notebooks.kdl"]);
    assert!(below.join("one/ml-research").is_dir() && !below.join("one/ml-prod").exists());
}

/// gpuplan.kdl (and any gpuplan.<what>.kdl) is never a profile: not in a profiles directory, not when that
/// directory is the root itself (`profiles "."`, or `gpuplan compile .`), and named on its own it is an error.
#[test]
fn the_config_is_never_read_as_a_profile() {
    let dir = repository("profiles \".\"\n");
    for entry in std::fs::read_dir(dir.path().join("profiles")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::rename(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    // A demand file (which compile checks as one) that, read as a profile, would fail: `horizon` is no profile node
    // (E0102) and it has no cluster block (E0110).
    std::fs::write(dir.path().join("gpuplan.demand.kdl"), "horizon \"30d\"\n").unwrap();
    let committed = relative_tree(&repo().join("out"));
    // The same files as the committed out/ (their contents name the profiles at the root now, not in profiles/).
    let mut trees = Vec::new();
    for args in [&["compile"][..], &["compile", "."]] {
        let _ = std::fs::remove_dir_all(dir.path().join("out"));
        run_ok(dir.path(), args);
        let tree = relative_tree(&dir.path().join("out"));
        assert!(tree.keys().eq(committed.keys()), "gpuplan {args:?}");
        trees.push(tree);
    }
    assert!(trees[0] == trees[1]);
    run_ok(dir.path(), &["compile", "--check", "./"]);
    for named in ["gpuplan.kdl", "gpuplan.demand.kdl"] {
        let refused = gpuplan(dir.path(), &["compile", "--check", named]);
        assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
        assert!(text(&refused).contains(&format!("error: {named} is not a profile")), "{}", text(&refused));
    }
}

/// A config error stops every command that reads the profiles, with the profile diagnostics' file:line:col and
/// "did you mean", exit 2, and nothing written.
#[test]
fn a_config_error_stops_every_command_at_its_line() {
    let dir = repository("out \"out\"\nmax-catalog-age 60\n");
    for args in [&["compile"][..], &["compile", "--check"], &["lint"], &["explain"], &["diff"], &["commit"]] {
        let out = gpuplan(&dir.path().join("profiles"), args);
        let shown = text(&out);
        assert_eq!(out.status.code(), Some(2), "gpuplan {args:?}: {shown}");
        assert!(shown.contains("E0102") && shown.contains("gpuplan.kdl:2:1") && shown.contains("did you mean `max-catalog-age-days`?"), "gpuplan {args:?}: {shown}");
        assert!(!dir.path().join("out").exists(), "gpuplan {args:?} wrote out/");
    }
    // What reads no profile still works, so the config's own error can be looked up.
    for args in [&["--help"][..], &["explain-error", "E0102"], &["man", "compile"], &["schema"]] {
        let out = gpuplan(&dir.path().join("profiles"), args);
        assert_eq!(out.status.code(), Some(0), "gpuplan {args:?} with a broken gpuplan.kdl: {}", text(&out));
    }
}

/// Outside any git repository only the working directory is looked at: a gpuplan.kdl in a directory above (/tmp, a
/// home directory) is not read.
#[test]
fn outside_git_a_config_above_is_not_read() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("gpuplan.kdl"), "not a setting\n").unwrap();
    let below = outer.path().join("work");
    std::fs::create_dir(&below).unwrap();
    let out = gpuplan(&below, &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let compiled = gpuplan(&below, &["compile"]);
    assert_eq!(compiled.status.code(), Some(0), "the config above was read: {}", text(&compiled));
    // In the directory itself it is read (and its error reported).
    assert_eq!(gpuplan(outer.path(), &["compile"]).status.code(), Some(2));
}

/// The config is looked for no higher than the top of the git repository: a gpuplan.kdl above it (in a home
/// directory, say) is not this repository's.
#[test]
fn the_search_stops_at_the_repository_top() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("gpuplan.kdl"), "not a setting\n").unwrap();
    let inner = repository("");
    let nested = outer.path().join("repo");
    std::fs::rename(inner.path(), &nested).unwrap();
    std::fs::remove_file(nested.join("gpuplan.kdl")).unwrap();
    run_ok(&nested, &["compile", "--check", "--out", &repo().join("out").display().to_string()]);
}

/// Every bundled profile compiles to the same bytes with its cluster block moved into gpuplan.kdl (`cluster
/// "name"` left in the profile): provenance (header, `gpuplan.dev/source`) keeps naming the profile, and the
/// cluster's values reach each object, and so its digest, the same way.
#[test]
fn a_shared_cluster_compiles_to_the_bytes_of_an_inline_one() {
    for entry in std::fs::read_dir(repo().join("profiles")).unwrap() {
        let path = entry.unwrap().path();
        let original = std::fs::read_to_string(&path).unwrap();
        let (block, name) = cluster_block(&original);
        let dir = tempfile::tempdir().unwrap();
        let profiles = dir.path().join("profiles");
        std::fs::create_dir(&profiles).unwrap();
        let profile = profiles.join(path.file_name().unwrap());
        let options = CompileOptions { profiles: vec![profiles.clone()], catalogs_dir: repo().join("catalogs"), templates_dir: None };
        std::fs::write(&profile, &original).unwrap();
        let inline = compile_with_config(&options, None).unwrap().take_output_tree();
        std::fs::write(&profile, original.replacen(&block, &format!("cluster \"{name}\""), 1)).unwrap();
        std::fs::write(dir.path().join("gpuplan.kdl"), &block).unwrap();
        let shared = compile_with_config(&options, Some(&dir.path().join("gpuplan.kdl"))).unwrap().take_output_tree();
        assert_trees_equal(&inline, &shared, &path);
    }
}

/// A profile's `cluster "name" { … }` block (to its closing brace at column 0) and the name.
fn cluster_block(profile: &str) -> (String, String) {
    let start = profile.find("\ncluster \"").expect("a cluster block") + 1;
    let end = start + profile[start..].find("\n}").expect("closed") + 2;
    let block = profile[start..end].to_string();
    let name = block.split('"').nth(1).unwrap().to_string();
    (block, name)
}

fn assert_trees_equal(a: &OutputTree, b: &OutputTree, profile: &Path) {
    assert_eq!(a.files.keys().collect::<Vec<_>>(), b.files.keys().collect::<Vec<_>>(), "{}", profile.display());
    for (path, text) in &a.files {
        assert!(b.files[path] == *text, "{}: {} differs with the cluster shared", profile.display(), path.display());
    }
}

/// Every node of the config's table parses as written in its example, and the configuration page names each.
#[test]
fn every_config_node_parses_and_is_documented() {
    let page = std::fs::read_to_string(repo().join("docs/src/configuration.md")).unwrap();
    for node in gpuplan::profile::config::CONFIG_NODES {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gpuplan.kdl");
        std::fs::write(&path, node.example).unwrap();
        let (config, diagnostics) = gpuplan::profile::config::parse_config(&path, &mut gpuplan::diagnostic::Sources::default());
        assert!(config.is_some() && diagnostics.is_empty(), "{}: {:?}", node.name, diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>());
        assert!(page.contains(&format!("`{}`", node.name)), "docs/src/configuration.md does not name `{}`", node.name);
    }
}

/// A `cluster` node that gives no cluster (no region, a shared name with a block, an unknown shared name) is one
/// diagnostic, its own: never followed by E0110 "the profile has no `cluster` block".
#[test]
fn a_failed_cluster_node_is_one_diagnostic() {
    let shared = "cluster \"ml-prod\" {\n    region \"us-east-1\"\n    zones \"us-east-1a\"\n    ami \"al2023@v20251023\"\n}\n";
    let pool = "pool \"llm\" preset=\"inference-on-demand\" {\n    gpu { name \"A10G\" }\n    max-accelerators 8\n}\n";
    let cases = [
        ("E0107", "cluster \"ml-research\" {\n    zones \"us-east-1a\"\n    ami \"al2023@v20251023\"\n}\n".to_string()),
        ("E0400", shared.to_string()),
        ("E0401", "cluster \"ml-prd\"\n".to_string()),
    ];
    for (code, cluster) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("profiles")).unwrap();
        std::fs::write(dir.path().join("gpuplan.kdl"), shared).unwrap();
        std::fs::write(dir.path().join("profiles/p.kdl"), format!("{cluster}{pool}")).unwrap();
        let out = gpuplan(dir.path(), &["compile"]);
        let shown = text(&out);
        let codes: Vec<&str> = shown.lines().filter(|l| l.len() == 5 && l.starts_with('E')).collect();
        assert_eq!(codes, [code], "{shown}");
        assert_eq!(out.status.code(), Some(2));
    }
}

/// A list setting (`profiles "a" "b"`) is the default of every multi-valued PATHS, and its first entry the default of
/// a single-valued argument that took `profiles` (adopt --into), never a list it cannot hold.
#[test]
fn a_list_setting_gives_a_single_valued_argument_its_first_entry() {
    let dir = repository("profiles \"a\" \"b\"\n");
    std::fs::create_dir_all(dir.path().join("a")).unwrap();
    std::fs::create_dir_all(dir.path().join("b")).unwrap();
    let help = String::from_utf8_lossy(&run_ok(dir.path(), &["adopt", "--help"]).stdout).into_owned();
    let into = help.lines().skip_while(|l| !l.contains("--into")).take(3).collect::<Vec<_>>().join(" ");
    assert!(into.contains("[default: a]"), "{into}");
}

/// A setting written twice is one E0441 at the second, naming the first: the last one no longer silently wins (here
/// `out "deploy"` would have been written).
#[test]
fn a_setting_written_twice_is_one_e0441_at_the_second() {
    let dir = repository("out \"out\"\nout \"deploy\"\n");
    let out = gpuplan(dir.path(), &["compile"]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(shown.contains("E0441") && shown.contains("gpuplan.kdl:2:1: `out` is written twice: it takes one value, first written at gpuplan.kdl:1:1"), "{shown}");
    assert_eq!(shown.matches("is written twice").count(), 1, "one diagnostic: {shown}");
    assert!(!dir.path().join("deploy").exists() && !dir.path().join("out").exists(), "nothing written");
}

/// With a gpuplan.kdl, `diff --base --format markdown` still compiles the base (for the workloads' costs): the config
/// at the repository's top was copied as its whole directory, which failed silently and dropped the table. From a
/// subdirectory too, where the paths start with `..`.
#[test]
fn the_markdown_diff_compiles_the_base_under_a_config() {
    let dir = repository("max-catalog-age-days 36500\n");
    run_ok(dir.path(), &["compile", "-q"]);
    for git in [&["add", "-A"][..], &["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base"]] {
        assert!(std::process::Command::new("git").args(git).current_dir(dir.path()).status().unwrap().success());
    }
    let profile = dir.path().join("profiles/llm-inference.kdl");
    std::fs::write(&profile, std::fs::read_to_string(&profile).unwrap().replacen("replicas min=2 max=12", "replicas min=2 max=20", 1)).unwrap();
    for cwd in [dir.path().to_path_buf(), dir.path().join("profiles")] {
        let out = run_ok(&cwd, &["diff", "--base", "HEAD", "--format", "markdown"]);
        let comment = String::from_utf8_lossy(&out.stdout);
        assert!(comment.contains("| Workload at max replicas |") && comment.contains("| `inference/llm-server` | 12 → 20 |"), "from {}:\n{comment}", cwd.display());
    }
}
