//! action.yml's steps run as a GitHub runner runs a composite action's steps
//! (docs.github.com/en/actions/reference/workflows-and-actions/metadata-syntax, "runs for composite actions";
//! actions/runner `src/Runner.Worker/Handlers/ScriptHandler.cs` for the shell line):
//! - each step's `if:` is evaluated first (absent: `success()`), against the inputs (with their defaults), the
//!   `github` context and the outputs of the steps before it;
//! - a `run:` step's script (which holds no `${{ }}`: the harness refuses one) is written to a file and run as
//!   `bash --noprofile --norc -eo pipefail <file>` in the workspace, with the step's `env:` (its `${{ }}`
//!   evaluated), `GITHUB_ACTION_PATH` (the action's directory) and the runner's files:
//!   `GITHUB_OUTPUT` (fresh per step, read back as the step's outputs, `name=value` and `name<<DELIM` blocks),
//!   `GITHUB_STEP_SUMMARY`, `GITHUB_PATH` (its lines go in front of `PATH` for the later steps), `GITHUB_ENV`;
//! - a failed step makes `success()` false for the rest; the action fails when a step failed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::expr::{Scope, condition, interpolate};

/// What a run left behind.
#[derive(Debug)]
pub struct Run {
    /// Each step's name and outcome (`success`, `failure`, `skipped`), in order.
    pub steps: Vec<(String, &'static str)>,
    pub failed: bool,
    pub summary: String,
    /// Everything the steps printed, for the failure messages of the tests.
    pub log: String,
    /// The workflow commands (`::error …::…`, `::warning …::…`) the steps printed, as written.
    pub annotations: Vec<String>,
}

impl Run {
    pub fn outcome(&self, step: &str) -> &'static str {
        self.steps.iter().find(|(n, _)| n == step).unwrap_or_else(|| panic!("no step `{step}`: {:?}", self.steps)).1
    }
}

/// A runner for one job: its workspace (the checkout), its temp and file-command directory, the event.
pub struct Runner {
    pub workspace: PathBuf,
    pub home: PathBuf,
    /// `github` context: event_name, event (the payload), repository, …
    pub github: Value,
    /// The `with:` of the workflow's step.
    pub with: BTreeMap<String, String>,
    /// Directories put in front of `PATH` (the stand-in `gh`).
    pub path: Vec<PathBuf>,
    /// More environment for every step (the stand-in's state).
    pub env: Vec<(String, String)>,
    /// The action's own directory (`GITHUB_ACTION_PATH`, `github.action_path`): where the runner checked it out.
    pub action_path: PathBuf,
}

impl Runner {
    /// Runs every step of `action` (the parsed action.yml).
    pub fn run(&self, action: &Value) -> Run {
        let temp = self.home.join("runner-temp");
        std::fs::create_dir_all(&temp).unwrap();
        let files = |name: &str| {
            let p = self.home.join(name);
            std::fs::write(&p, "").unwrap();
            p
        };
        let (summary, github_path, github_env) = (files("step-summary.md"), files("github-path"), files("github-env"));
        let mut contexts = json!({ "github": self.github, "inputs": self.inputs(action), "steps": {}, "runner": {"os": "Linux", "arch": "X64", "temp": temp} });
        let mut run = Run { steps: Vec::new(), failed: false, summary: String::new(), log: String::new(), annotations: Vec::new() };
        for (i, step) in action["runs"]["steps"].as_array().expect("runs.steps").iter().enumerate() {
            let name = step["name"].as_str().unwrap_or("step").to_string();
            let scope = Scope { contexts: &contexts, failed: run.failed };
            if !condition(step["if"].as_str(), &scope) {
                run.steps.push((name, "skipped"));
                continue;
            }
            let output = self.home.join(format!("output-{i}"));
            std::fs::write(&output, "").unwrap();
            let mut cmd = self.command(step, &scope, &temp, i);
            cmd.env("GITHUB_OUTPUT", &output).env("GITHUB_STEP_SUMMARY", &summary).env("GITHUB_PATH", &github_path).env("GITHUB_ENV", &github_env);
            cmd.env("PATH", self.path_with(&github_path));
            for (k, v) in read_key_values(&github_env) {
                cmd.env(k, v);
            }
            let out = cmd.output().unwrap();
            let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            run.log.push_str(&format!("--- {name} (exit {:?})\n{stdout}{stderr}", out.status.code()));
            // The runner reads workflow commands on both streams.
            let lines = stdout.lines().chain(stderr.lines());
            run.annotations.extend(lines.filter(|l| l.starts_with("::error") || l.starts_with("::warning")).map(str::to_string));
            if let Some(id) = step["id"].as_str() {
                contexts["steps"][id] = json!({ "outputs": read_key_values(&output).into_iter().collect::<BTreeMap<_, _>>() });
            }
            run.failed |= !out.status.success();
            run.steps.push((name, if out.status.success() { "success" } else { "failure" }));
        }
        run.summary = std::fs::read_to_string(&summary).unwrap();
        run
    }

    /// The inputs: `with:` over the declared defaults (a default may itself be an expression, as
    /// `${{ github.token }}`).
    fn inputs(&self, action: &Value) -> Value {
        let contexts = json!({ "github": self.github });
        let scope = Scope { contexts: &contexts, failed: false };
        let declared = action["inputs"].as_object().expect("inputs");
        for name in self.with.keys() {
            assert!(declared.contains_key(name), "`with: {name}` is not an input of the action");
        }
        declared
            .iter()
            .map(|(name, spec)| {
                let value = self.with.get(name).cloned().unwrap_or_else(|| interpolate(spec["default"].as_str().unwrap_or(""), &scope));
                (name.clone(), Value::String(value))
            })
            .collect()
    }

    fn command(&self, step: &Value, scope: &Scope, temp: &Path, i: usize) -> Command {
        assert_eq!(step["shell"], "bash", "every step of the action names its shell: {step}");
        let script = temp.join(format!("step-{i}.sh"));
        let run = step["run"].as_str().expect("a run step");
        // Inside a composite action's run: script, `${{ github.action_repository }}` and its kin are empty, and an
        // input interpolated into a script is code: everything comes in through env: (tests/ci.rs checks it too).
        assert!(!run.contains("${{"), "a run: script with ${{{{ }}}}: {run}");
        std::fs::write(&script, run).unwrap();
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail"]).arg(&script).current_dir(&self.workspace);
        cmd.env_clear().env("HOME", &self.home).env("RUNNER_TEMP", temp).env("RUNNER_OS", "Linux").env("RUNNER_ARCH", "X64");
        cmd.env("GITHUB_WORKSPACE", &self.workspace).env("GITHUB_ACTIONS", "true").env("CI", "true");
        cmd.env("GITHUB_ACTION_PATH", &self.action_path);
        cmd.env("GITHUB_EVENT_NAME", self.github["event_name"].as_str().unwrap_or_default());
        cmd.env("GITHUB_SHA", self.github["sha"].as_str().unwrap_or_default());
        cmd.env("GIT_CONFIG_NOSYSTEM", "1").env("GIT_CONFIG_GLOBAL", "/dev/null");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        for (k, v) in step["env"].as_object().into_iter().flatten() {
            cmd.env(k, interpolate(v.as_str().expect("env values are strings"), scope));
        }
        cmd
    }

    fn path_with(&self, github_path: &Path) -> String {
        let added: Vec<String> = std::fs::read_to_string(github_path).unwrap().lines().rev().map(str::to_string).collect();
        let own = self.path.iter().map(|p| p.display().to_string());
        added.into_iter().chain(own).chain([std::env::var("PATH").unwrap()]).collect::<Vec<_>>().join(":")
    }
}

/// `name=value` lines and `name<<DELIMITER` … `DELIMITER` blocks (the runner's file-command format).
fn read_key_values(file: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delimiter)) = line.split_once("<<") {
            let value: Vec<&str> = lines.by_ref().take_while(|l| *l != delimiter).collect();
            out.push((name.to_string(), value.join("\n")));
        } else if let Some((name, value)) = line.split_once('=') {
            out.push((name.to_string(), value.to_string()));
        }
    }
    out
}
