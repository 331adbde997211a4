//! Builds a Go program under `conformance/` once per `cargo test` and caches the binary under
//! `target/conformance/`, keyed by a hash of the module's sources (go.mod, go.sum, *.go): a second `cargo test`
//! reuses it without calling `go` at all. Go's own build cache (GOCACHE) keeps a rebuild after a source change cheap.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use sha2::{Digest, Sha256};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether a missing toolchain must fail (CI) rather than skip (a laptop without Go).
pub fn required() -> bool {
    std::env::var("GPUPLAN_CONFORMANCE_REQUIRED").is_ok_and(|v| v == "1")
}

/// The path of the built program of `conformance/<module>` (package `./cmd/<cmd>`), or `None` with the reason
/// printed when Go is missing and not required.
pub fn program(module: &str, cmd: &str) -> Option<PathBuf> {
    static BUILDS: OnceLock<Mutex<()>> = OnceLock::new();
    // One build at a time: two tests building the same module would race on the output file.
    let _guard = BUILDS.get_or_init(|| Mutex::new(())).lock().unwrap_or_else(|e| e.into_inner());
    if Command::new("go").arg("version").output().is_err() {
        assert!(!required(), "GPUPLAN_CONFORMANCE_REQUIRED=1 but `go` is not on PATH: install Go 1.26 (see conformance/README.md)");
        eprintln!("skipped: no Go toolchain on PATH, so conformance/{module} cannot be built (CI sets GPUPLAN_CONFORMANCE_REQUIRED=1 and fails instead)");
        return None;
    }
    let dir = root().join("conformance").join(module);
    let out_dir = root().join("target/conformance");
    let binary = out_dir.join(format!("{module}-{cmd}-{}", sources_digest(&dir)));
    if binary.exists() {
        return Some(binary);
    }
    std::fs::create_dir_all(&out_dir).unwrap();
    let tmp = binary.with_extension("tmp");
    let status = Command::new("go")
        .current_dir(&dir)
        .args(["build", "-mod=readonly", "-trimpath", "-o"])
        .arg(&tmp)
        .arg(format!("./cmd/{cmd}"))
        .status()
        .expect("run go build");
    assert!(status.success(), "go build of conformance/{module}/cmd/{cmd} failed (see the output above)");
    std::fs::rename(&tmp, &binary).unwrap();
    Some(binary)
}

/// A hash of every file that decides the build, in path order.
fn sources_digest(dir: &Path) -> String {
    let mut files = Vec::new();
    collect(dir, &mut files);
    files.sort();
    let mut h = Sha256::new();
    for f in files {
        h.update(f.strip_prefix(dir).unwrap().to_string_lossy().as_bytes());
        h.update(std::fs::read(&f).unwrap());
    }
    format!("{:x}", h.finalize())[..16].to_string()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "go") || p.file_name().is_some_and(|n| n == "go.mod" || n == "go.sum") {
            out.push(p);
        }
    }
}
