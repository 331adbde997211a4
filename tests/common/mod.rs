//! Helpers shared by the lint/explain/property tests: profiles written to a tempdir and compiled.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use gpuplan::compile::{compile, Compilation, CompileError, CompileOptions};
use gpuplan::diagnostic::ProfileDiagnostic;
use serde_json::Value;
use tempfile::TempDir;

/// The cluster block of the error and static-pool tests' profiles (two zones of us-east-1, a pinned AL2023 AMI).
pub const ML_PROD_CLUSTER: &str = r#"
cluster "ml-prod" {
    region "us-east-1"
    zones "us-east-1a" "us-east-1b"
    ami "al2023@v20251023"
}
"#;

/// Every file below `dir` with its bytes: what a test compares to prove a failed command left a tree as it was.
pub fn tree_bytes(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// Runs the `gpuplan` binary in `dir`, without colour (the adopt, adopt_corpus, adopt_verify and auto_mode tests).
pub fn gpuplan(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gpuplan")).current_dir(dir).env("NO_COLOR", "1").args(args).output().unwrap()
}

/// A command's stdout, as text.
pub fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A command's stderr, as text.
pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A command's stdout then stderr, for assertion messages.
pub fn text(o: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A profile with the usual cluster block; `body` is everything after it.
pub fn profile(name: &str, priority: u32, ami: &str, body: &str) -> String {
    format!(
        "profile \"{name}\" priority={priority}\ncluster \"ml\" {{\n    region \"us-east-1\"\n    zones \"us-east-1a\" \"us-east-1b\" \"us-east-1c\"\n    ami \"{ami}\"\n}}\n{body}"
    )
}

pub struct Compiled {
    pub dir: TempDir,
    pub result: Result<Compilation, CompileError>,
    /// The rendered objects, once a test edits them (as a `--templates` override would render them).
    pub edited: Option<Vec<gpuplan::render::Manifest>>,
}

impl Compiled {
    pub fn ok(&self) -> &Compilation {
        match &self.result {
            Ok(c) => c,
            Err(CompileError::Profiles { diagnostics }) => panic!("compile failed:\n{}", gpuplan::diagnostic::render_plain(diagnostics)),
            Err(e) => panic!("compile failed: {e}"),
        }
    }

    pub fn ok_mut(&mut self) -> &mut Compilation {
        self.ok();
        self.result.as_mut().unwrap()
    }

    /// The lint findings on the rendered objects, as edited by `object_mut` if they were.
    pub fn lint(&self) -> Vec<ProfileDiagnostic> {
        match &self.edited {
            Some(manifests) => gpuplan::report::lint::lint_on(self.ok(), manifests),
            None => gpuplan::report::lint::lint(self.ok()),
        }
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join("profiles").join(file)
    }

    /// "dir/profiles/<file>:line:col" of the first occurrence of `needle` in that profile.
    pub fn loc(&self, file: &str, needle: &str) -> String {
        let path = self.path(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let offset = text.find(needle).unwrap_or_else(|| panic!("`{needle}` not in {file}"));
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().unwrap().chars().count() + 1;
        format!("{}:{line}:{col}", path.display())
    }
}

/// Writes `(file name, text)` profiles to a tempdir (and templates, if any) and compiles them.
pub fn compile_profiles(profiles: &[(&str, String)], templates: &[(&str, String)]) -> Compiled {
    let dir = tempfile::tempdir().unwrap();
    let pdir = dir.path().join("profiles");
    std::fs::create_dir_all(&pdir).unwrap();
    for (name, text) in profiles {
        std::fs::write(pdir.join(name), text).unwrap();
    }
    let templates_dir = if templates.is_empty() {
        None
    } else {
        let t = dir.path().join("templates");
        std::fs::create_dir_all(&t).unwrap();
        for (name, text) in templates {
            std::fs::write(t.join(name), text).unwrap();
        }
        Some(t)
    };
    let result = compile(&CompileOptions { profiles: vec![pdir], catalogs_dir: repo().join("catalogs"), templates_dir });
    Compiled { dir, result, edited: None }
}

pub fn compile_one(text: String) -> Compiled {
    compile_profiles(&[("p.kdl", text)], &[])
}

/// The rendered object of a kind and name, to edit before `Compiled::lint`.
pub fn object_mut<'c>(c: &'c mut Compiled, kind: &str, name: &str) -> &'c mut Value {
    if c.edited.is_none() {
        c.edited = Some(c.ok().manifests());
    }
    &mut c
        .edited
        .as_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m.kind() == kind && m.object["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
        .object
}

pub fn with_code<'d>(diagnostics: &'d [ProfileDiagnostic], code: &str) -> Vec<&'d ProfileDiagnostic> {
    diagnostics.iter().filter(|d| d.code == code).collect()
}

pub fn templates_path() -> &'static Path {
    Path::new("templates")
}

/// Compiles `profile` (as profiles/p.kdl), adopts the output, compiles the adopted profiles and asserts the second
/// out/ equals the first byte for byte (the round trip of issue 19 item 5). Returns the adopted profile's text.
#[allow(dead_code)]
pub fn assert_round_trip(profile: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("profiles")).unwrap();
    std::fs::write(dir.path().join("profiles/p.kdl"), profile).unwrap();
    let catalogs = repo().join("catalogs");
    let catalogs = catalogs.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = gpuplan(dir.path(), args);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
    };
    run(&["compile", "--catalogs", catalogs]);
    std::fs::rename(dir.path().join("out"), dir.path().join("before")).unwrap();
    std::fs::remove_dir_all(dir.path().join("profiles")).unwrap();
    run(&["adopt", "before", "--into", "profiles", "--catalogs", catalogs]);
    let adopted = std::fs::read_to_string(dir.path().join("profiles/p.kdl")).unwrap();
    run(&["compile", "--catalogs", catalogs]);
    let before = gpuplan::emit::read_tree(&dir.path().join("before")).unwrap();
    let after = gpuplan::emit::read_tree(&dir.path().join("out")).unwrap();
    assert_eq!(before.files.keys().collect::<Vec<_>>(), after.files.keys().collect::<Vec<_>>());
    for (path, text) in &before.files {
        assert_eq!(&after.files[path], text, "{}", path.display());
    }
    adopted
}
