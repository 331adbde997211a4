//! Everything stays inside the repository (docs/src/reliability.md; the rule is `src/confine.rs`): each way a pull
//! request could make gpuplan read or write outside the checkout (issue 42's six reads and three writes, and the
//! catalogs and templates), tried on the binary. The target outside holds a canary; each test asserts the run exits
//! 2 with the confinement error, that the canary is in neither stdout nor stderr, and that nothing outside changed.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};


/// What the file outside the repository holds: a run that printed any of it would leak it to the log.
const CANARY: &str = "CANARY-5b1f0e-do-not-print";

const PROFILE: &str = r#"cluster "ml-prod" {
    region "us-east-1"
    zones "us-east-1a" "us-east-1b"
    ami "al2023@v20251023"
}
pool "llm" preset="inference-on-demand" {
    gpu { name "A10G"; per-node max=1 }
    max-accelerators 8
}
workload "llm-server" namespace="inference" pool="llm" {
    selector "app" "llm-server"
    replicas min=1 max=4
    autoscale gpu-utilization=70
}
"#;

/// A git repository `repo/` holding one profile (compiled into its out/), beside a directory `outside/` whose files
/// hold the canary.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let setup = Setup { dir };
        std::fs::create_dir_all(setup.repo().join("profiles")).unwrap();
        std::fs::create_dir_all(setup.outside()).unwrap();
        assert!(Command::new("git").args(["init", "-q"]).current_dir(setup.repo()).status().unwrap().success());
        std::fs::write(setup.repo().join("profiles/ml.kdl"), PROFILE).unwrap();
        for name in ["secret.kdl", "secret.csv", "secret.yaml", "us-east-1.json", "nodepool.yaml.j2"] {
            std::fs::write(setup.outside().join(name), format!("root:x:0:0:{CANARY}:/root:/bin/bash\n")).unwrap();
        }
        let compiled = setup.gpuplan(&["compile"]);
        assert_eq!(compiled.status.code(), Some(0), "{}", text(&compiled));
        setup
    }

    fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    fn outside(&self) -> PathBuf {
        self.dir.path().join("outside")
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.repo().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn link(&self, rel: &str, target: &Path) {
        let _ = std::fs::remove_file(self.repo().join(rel));
        std::os::unix::fs::symlink(target, self.repo().join(rel)).unwrap();
    }

    fn gpuplan(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_gpuplan"))
            .current_dir(self.repo())
            .env("NO_COLOR", "1")
            .env("GPUPLAN_NOW", "2026-11-27T00:00:00Z")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .args(args)
            .output()
            .unwrap()
    }

    /// Runs `args` in the repository and asserts the refusal: exit 2, `expected` in stderr, the canary printed
    /// nowhere, nothing outside the repository (its parent directory included) created or changed.
    fn refused(&self, args: &[&str], expected: &str) -> String {
        let outside_before = tree_bytes(self.outside());
        let parent_before = names(self.dir.path());
        let run = self.gpuplan(args);
        let (stdout, stderr) = (String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
        assert_eq!(run.status.code(), Some(2), "gpuplan {args:?}:\n{stdout}{stderr}");
        assert!(stderr.contains(expected), "gpuplan {args:?}: expected {expected:?} in:\n{stderr}");
        assert!(!stdout.contains(CANARY) && !stderr.contains(CANARY), "gpuplan {args:?} printed the file outside:\n{stdout}{stderr}");
        assert_eq!(tree_bytes(self.outside()), outside_before, "gpuplan {args:?} changed a file outside the repository");
        assert_eq!(names(self.dir.path()), parent_before, "gpuplan {args:?} created something beside the repository");
        stderr.into_owned()
    }
}

fn tree_bytes(dir: PathBuf) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    common::tree_bytes(&dir)
}

/// The entries of `dir`, hidden ones (a `.gpuplan.lock`) included.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

fn text(o: &Output) -> String {
    common::text(o)
}

const SYMLINK: &str = "is a symbolic link that leads outside the repository";

// --- reads ------------------------------------------------------------------------------------------------------

#[test]
fn a_profile_symlinked_outside_is_refused_naming_the_link() {
    let s = Setup::new();
    s.link("profiles/zz.kdl", &s.outside().join("secret.kdl"));
    let stderr = s.refused(&["compile", "--check"], &format!("profiles/zz.kdl {SYMLINK}"));
    assert!(!stderr.contains("secret.kdl"), "the link's target is not named: {stderr}");
}

#[test]
fn a_symlink_in_out_is_reported_as_a_link_and_its_target_never_read() {
    let s = Setup::new();
    s.link("out/ml-prod/zz.yaml", &s.outside().join("secret.yaml"));
    let stderr = s.refused(&["compile", "--check"], "out/ml-prod/zz.yaml is a symbolic link: gpuplan writes only files and directories in out/");
    assert!(!stderr.contains("secret.yaml"), "the link's target is not named: {stderr}");
}

#[test]
fn a_config_profiles_path_outside_is_e0440() {
    let s = Setup::new();
    s.write("gpuplan.kdl", &format!("profiles \"{}\"\n", s.outside().display()));
    s.refused(&["compile", "--check"], "E0440");
    s.write("gpuplan.kdl", "profiles \"../outside\"\n");
    s.refused(&["compile", "--check"], "gpuplan.kdl:1:10: `../outside` leads outside the repository");
}

#[test]
fn a_config_out_path_outside_is_e0440_under_check() {
    let s = Setup::new();
    std::fs::create_dir_all(s.outside().join("out/ml-prod")).unwrap();
    std::fs::write(s.outside().join("out/ml-prod/nodepool-llm.yaml"), CANARY).unwrap();
    s.write("gpuplan.kdl", &format!("out \"{}\"\n", s.outside().join("out").display()));
    s.refused(&["compile", "--check"], "gpuplan.kdl:1:5: `");
}

#[test]
fn a_config_catalogs_path_outside_is_e0440() {
    let s = Setup::new();
    s.write("gpuplan.kdl", "catalogs \"../outside\"\n");
    s.refused(&["compile", "--check"], "E0440");
}

#[test]
fn a_catalog_symlinked_outside_is_refused_naming_the_link() {
    let s = Setup::new();
    s.link("catalogs", &s.outside());
    s.refused(&["compile", "--check"], &format!("catalogs {SYMLINK}"));
}

#[test]
fn a_config_templates_path_outside_is_e0440() {
    let s = Setup::new();
    s.write("gpuplan.kdl", "templates \"../outside\"\n");
    s.refused(&["compile", "--check"], "E0440");
}

#[test]
fn a_template_symlinked_outside_is_refused_naming_the_link() {
    let s = Setup::new();
    std::fs::create_dir_all(s.repo().join("templates")).unwrap();
    s.link("templates/nodepool.yaml.j2", &s.outside().join("nodepool.yaml.j2"));
    s.refused(&["compile", "--check", "--templates", "templates"], &format!("templates/nodepool.yaml.j2 {SYMLINK}"));
}

fn demand(csv: &str) -> String {
    format!("cluster \"ml-prod\" {{\n    workload \"llm-server\" {{\n        metric {{ csv \"{csv}\" }}\n    }}\n}}\n")
}

#[test]
fn a_demand_csv_at_an_absolute_path_is_e0440() {
    let s = Setup::new();
    s.write("gpuplan.demand.kdl", &demand(&s.outside().join("secret.csv").display().to_string()));
    s.refused(&["compile", "--check"], "gpuplan.demand.kdl:3:22: `");
    s.refused(&["forecast", "--horizon", "1d"], "E0440");
}

#[test]
fn a_demand_csv_past_the_root_is_e0440() {
    let s = Setup::new();
    s.write("gpuplan.demand.kdl", &demand("../outside/secret.csv"));
    s.refused(&["compile", "--check"], "`../outside/secret.csv` leads outside the repository");
}

#[test]
fn a_demand_csv_symlinked_outside_is_refused_naming_the_link() {
    let s = Setup::new();
    s.write("gpuplan.demand.kdl", &demand("demand/llm.csv"));
    std::fs::create_dir_all(s.repo().join("demand")).unwrap();
    s.link("demand/llm.csv", &s.outside().join("secret.csv"));
    s.refused(&["compile", "--check"], &format!("demand/llm.csv {SYMLINK}"));
}

/// `/proc/self/environ` is UTF-8 separated by NULs: a file with control characters is not text, and no excerpt of
/// it is printed.
#[test]
fn a_profile_that_is_not_text_is_refused_without_an_excerpt() {
    let s = Setup::new();
    s.write("profiles/zz.kdl", &format!("PATH=/bin\0TOKEN={CANARY}\0"));
    s.refused(&["compile", "--check"], "is not text: control character 0x00 at byte 9");
}

// --- a symlink, then `..` ------------------------------------------------------------------------------------------
// The kernel resolves `l/..` from where `l` leads (path_resolution(7): "..", in a directory reached through a
// symbolic link, is that directory's parent, not the link's), so with `l -> .` the path `l/../outside` is the root's
// parent's `outside`, though applying `..` to the text keeps it inside. Each is refused as the kernel walks it.

/// `l -> .` in the repository: the link every case below climbs out through.
fn link_to_the_root(s: &Setup) {
    s.link("l", Path::new("."));
}

#[test]
fn a_config_profiles_path_through_a_link_and_dotdot_is_refused() {
    let s = Setup::new();
    link_to_the_root(&s);
    s.write("gpuplan.kdl", "profiles \"l/../outside\"\n");
    s.refused(&["compile", "--check"], "l/../outside is outside the repository");
}

#[test]
fn a_demand_csv_through_a_link_and_dotdot_is_refused() {
    let s = Setup::new();
    link_to_the_root(&s);
    s.write("gpuplan.demand.kdl", &demand("l/../outside/secret.csv"));
    s.refused(&["forecast", "--horizon", "1d"], "is outside the repository");
}

#[test]
fn a_config_out_through_a_link_and_dotdot_writes_nothing_there() {
    let s = Setup::new();
    link_to_the_root(&s);
    s.write("gpuplan.kdl", "out \"l/../x\"\n");
    s.refused(&["compile"], "is outside the repository");
    assert!(!s.dir.path().join("x").exists());
}

#[test]
fn a_catalogs_path_through_a_link_and_dotdot_is_refused() {
    let s = Setup::new();
    link_to_the_root(&s);
    s.write("gpuplan.kdl", "catalogs \"l/../outside\"\n");
    s.refused(&["compile", "--check"], "is outside the repository");
}

// --- the git directory ----------------------------------------------------------------------------------------------
// .git/ is the checkout's, not the pull request's: actions/checkout persists the job's token in .git/config
// (`http.https://github.com/.extraheader`) unless `persist-credentials: false`.

/// Puts a credential line holding the canary into the repository's .git/config.
fn persist_a_credential(s: &Setup) {
    let config = s.repo().join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!("[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic {CANARY}\n"));
    std::fs::write(config, text).unwrap();
}

const GIT_DIR: &str = "a git directory (.git)";

#[test]
fn a_profile_symlinked_into_the_git_directory_is_refused() {
    let s = Setup::new();
    persist_a_credential(&s);
    s.link("profiles/zz.kdl", Path::new("../.git/config"));
    s.refused(&["compile", "--check"], &format!("profiles/zz.kdl is a symbolic link that leads into {GIT_DIR}"));
}

#[test]
fn a_config_profiles_path_in_the_git_directory_is_refused() {
    let s = Setup::new();
    persist_a_credential(&s);
    // A profile there: without the rule it would be read, and its canary printed as a KDL error.
    std::fs::write(s.repo().join(".git/zz.kdl"), format!("{CANARY}\n")).unwrap();
    s.write("gpuplan.kdl", "profiles \".git\"\n");
    s.refused(&["compile", "--check"], &format!("is in {GIT_DIR}"));
}

/// A second repository checked out inside the work tree (`actions/checkout` with `path: tools`) keeps its own token
/// in `tools/.git/config`: a `.git` at any depth is refused, and in any case (`.GIT` is `.git` on macOS).
#[test]
fn a_nested_or_differently_cased_git_directory_is_refused() {
    let s = Setup::new();
    for dir in ["tools/.git", "vendor/.GIT"] {
        std::fs::create_dir_all(s.repo().join(dir)).unwrap();
        std::fs::write(s.repo().join(dir).join("config"), format!("[http]\n\textraheader = AUTHORIZATION: basic {CANARY}\n")).unwrap();
        s.write("gpuplan.demand.kdl", &demand(&format!("{dir}/config")));
        s.refused(&["forecast", "--horizon", "1d"], &format!("is in {GIT_DIR}"));
    }
    std::fs::remove_file(s.repo().join("gpuplan.demand.kdl")).unwrap();
    s.link("profiles/zz.kdl", Path::new("../tools/.git/config"));
    s.refused(&["compile", "--check"], &format!("profiles/zz.kdl is a symbolic link that leads into {GIT_DIR}"));
}

#[test]
fn a_demand_csv_in_the_git_directory_is_refused() {
    let s = Setup::new();
    persist_a_credential(&s);
    s.write("gpuplan.demand.kdl", &demand(".git/config"));
    s.refused(&["forecast", "--horizon", "1d"], &format!("is in {GIT_DIR}"));
}

#[test]
fn a_config_out_in_the_git_directory_writes_nothing_there() {
    let s = Setup::new();
    let before = tree_bytes(s.repo().join(".git"));
    s.write("gpuplan.kdl", "out \".git/hooks\"\n");
    s.refused(&["compile"], &format!("is in {GIT_DIR}"));
    assert_eq!(tree_bytes(s.repo().join(".git")), before, "nothing written into .git");
}

// --- writes -----------------------------------------------------------------------------------------------------

#[test]
fn a_config_out_past_the_root_writes_nothing_there() {
    let s = Setup::new();
    s.write("gpuplan.kdl", "out \"../x\"\n");
    s.refused(&["compile"], "gpuplan.kdl:1:5: `../x` leads outside the repository");
    assert!(!s.dir.path().join("x").exists());
}

#[test]
fn an_out_symlinked_to_an_outside_directory_is_not_written_through() {
    let s = Setup::new();
    std::fs::remove_dir_all(s.repo().join("out")).unwrap();
    s.link("out", &s.outside());
    s.refused(&["compile"], &format!("out {SYMLINK}"));
}

#[test]
fn a_refused_commit_creates_no_lock_outside() {
    let s = Setup::new();
    s.write("gpuplan.kdl", "out \"../x\"\n");
    s.refused(&["commit"], "E0440");
    assert!(!s.dir.path().join(".gpuplan.lock").exists());
}

#[test]
fn a_lock_symlinked_outside_is_not_written_through() {
    let s = Setup::new();
    s.link(".gpuplan.lock", &s.outside().join("secret.kdl"));
    s.refused(&["compile"], &format!(".gpuplan.lock {SYMLINK}"));
}

// --- what stays allowed -------------------------------------------------------------------------------------------

/// A path typed on the command line is the caller's (a scratch or shared directory): allowed outside the root.
#[test]
fn a_path_typed_on_the_command_line_may_be_outside() {
    let s = Setup::new();
    let elsewhere = s.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("ml.kdl"), PROFILE).unwrap();
    let out = elsewhere.join("out");
    let run = s.gpuplan(&["compile", elsewhere.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    assert!(out.join("ml-prod").is_dir());
}

/// What is under a typed path stays under it: a symlink there leading elsewhere is refused.
#[test]
fn a_symlink_under_a_typed_outside_path_is_refused() {
    let s = Setup::new();
    let elsewhere = s.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("ml.kdl"), PROFILE).unwrap();
    std::os::unix::fs::symlink(s.outside().join("secret.kdl"), elsewhere.join("zz.kdl")).unwrap();
    let run = s.gpuplan(&["compile", "--check", elsewhere.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(SYMLINK) && !stderr.contains(CANARY), "{stderr}");
}

/// `--root` moves the root: the repository's own out/ is outside a root set to its profiles.
#[test]
fn root_flag_sets_the_root() {
    let s = Setup::new();
    s.refused(&["--root", "profiles", "compile", "--check"], "is outside the repository");
}
