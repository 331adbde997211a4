//! What the command line says about itself: `--version` with the catalog digests, shell completions
//! (clap_complete) and a man page (clap_mangen), all generated from the same clap definition, so they list
//! exactly the subcommands and flags the binary accepts.

use std::path::Path;

use gpuplan::catalog::{Catalog, EMBEDDED_US_EAST_1};

/// `gpuplan 0.1.0` and one line per catalog the binary would compile with: the built-in us-east-1 snapshot, and
/// every `<region>.json` under `catalogs_dir` (which replaces the built-in one of the same region), with the
/// digest that `gpuplan.dev/catalog` annotations carry.
pub fn long_version(catalogs_dir: &Path) -> String {
    let mut lines = vec![env!("CARGO_PKG_VERSION").to_string()];
    if let Ok(builtin) = Catalog::from_json(EMBEDDED_US_EAST_1, Path::new("<built-in>")) {
        lines.push(format!("catalog us-east-1@{} (built in)", builtin.digest()));
    }
    let mut files: Vec<_> = std::fs::read_dir(catalogs_dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "json")).collect())
        .unwrap_or_default();
    files.sort();
    for path in files {
        let line = match gpuplan::input::read_to_string(&path).map_err(|e| e.to_string()).and_then(|t| Catalog::from_json(&t, &path).map_err(|e| e.to_string())) {
            Ok(catalog) => format!("catalog {}@{} ({})", catalog.region, catalog.digest(), path.display()),
            Err(e) => format!("catalog {}: unreadable: {e}", path.display()),
        };
        lines.push(line);
    }
    lines.join("\n")
}

/// Completion script for `shell` on stdout-bound bytes.
pub fn completions(shell: clap_complete::Shell, command: &mut clap::Command) -> Vec<u8> {
    let mut out = Vec::new();
    let name = command.get_name().to_string();
    clap_complete::generate(shell, command, name, &mut out);
    out
}

/// The man page (roff) for the whole command, subcommands included as sections.
pub fn man_page(command: clap::Command) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command).render(&mut out)?;
    Ok(out)
}
