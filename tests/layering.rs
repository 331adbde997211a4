//! The library's stages import one way, and no source file grows past what a reader holds at once.
//!
//! `gpuplan::LAYERS` (src/lib.rs) declares the stages from the bottom up. These tests read every module of the
//! library the way rustc finds them (from src/lib.rs, following `mod` declarations and `#[path]`), parse each file
//! with `syn`, and collect every path that names a module of the crate: `use` trees (`crate::`, `super::`,
//! `self::` and child modules), paths written inline in code and types (`crate::ops::render::TEMPLATES`), and
//! `crate::`/`super::` paths inside macro arguments. Items under `#[cfg(test)]` are left out: a test may read
//! any stage. Until the stages become crates (as ripgrep's are: `crates/searcher` cannot name `crates/core`),
//! this is what keeps the direction a failure rather than a convention.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::visit::Visit;

/// A module of the library: its path under `crate` and the file that holds it.
#[derive(Debug, Clone)]
struct Module {
    path: Vec<String>,
    file: PathBuf,
}

/// Every non-test module of the library, by path, found from src/lib.rs as rustc finds them.
struct Crate {
    modules: BTreeMap<Vec<String>, Module>,
    /// Source files reached only through `#[cfg(test)]` modules.
    test_files: BTreeSet<PathBuf>,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn parse(file: &Path) -> syn::File {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Meta>().is_ok_and(|m| m.path().is_ident("test"))
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find(|a| a.path().is_ident("path")).and_then(|a| match &a.meta {
        syn::Meta::NameValue(nv) => match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

impl Crate {
    fn read() -> Crate {
        let mut krate = Crate { modules: BTreeMap::new(), test_files: BTreeSet::new() };
        let lib = src().join("lib.rs");
        krate.add_file(vec![], lib, src(), false);
        krate
    }

    /// Adds the module held by `file` and, recursively, the modules it declares. `dir` is where its children's
    /// files are (the Rust reference, "Module source filenames").
    fn add_file(&mut self, path: Vec<String>, file: PathBuf, dir: PathBuf, in_test: bool) {
        if in_test {
            self.test_files.insert(file.clone());
        } else {
            self.modules.insert(path.clone(), Module { path: path.clone(), file: file.clone() });
        }
        let ast = parse(&file);
        self.add_items(&path, &ast.items, &file, &dir, in_test);
    }

    fn add_items(&mut self, path: &[String], items: &[syn::Item], file: &Path, dir: &Path, in_test: bool) {
        for item in items {
            let syn::Item::Mod(m) = item else { continue };
            let in_test = in_test || is_cfg_test(&m.attrs);
            let name = m.ident.to_string();
            let mut child = path.to_vec();
            child.push(name.clone());
            let file_dir = file.parent().expect("a file has a directory");
            match &m.content {
                Some((_, inner)) => {
                    // An inline module: its items are in this file; its own `mod x;` children are in dir/name/.
                    if !in_test {
                        self.modules.insert(child.clone(), Module { path: child.clone(), file: file.to_path_buf() });
                    }
                    self.add_items(&child, inner, file, &dir.join(&name), in_test);
                }
                None => {
                    let (child_file, child_dir) = match path_attr(&m.attrs) {
                        Some(p) => {
                            let f = file_dir.join(p);
                            let d = f.with_extension("");
                            (f, d)
                        }
                        None if dir.join(format!("{name}.rs")).exists() => (dir.join(format!("{name}.rs")), dir.join(&name)),
                        None => (dir.join(&name).join("mod.rs"), dir.join(&name)),
                    };
                    self.add_file(child, child_file, child_dir, in_test);
                }
            }
        }
    }

    /// The module a path names: the longest prefix of `segments` that is a module of the crate.
    fn resolve(&self, segments: &[String]) -> Option<&Module> {
        (1..=segments.len()).rev().find_map(|n| self.modules.get(&segments[..n]))
    }

    /// Files of the library, each with the modules (paths) it holds.
    fn files(&self) -> BTreeMap<PathBuf, Vec<Vec<String>>> {
        let mut files: BTreeMap<PathBuf, Vec<Vec<String>>> = BTreeMap::new();
        for m in self.modules.values() {
            files.entry(m.file.clone()).or_default().push(m.path.clone());
        }
        files
    }
}

/// One import of one file: the path as written and the module it resolves to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Import {
    from_module: Vec<String>,
    written: String,
    to_module: Vec<String>,
    to_file: PathBuf,
}

/// Collects the crate paths one file names, outside `#[cfg(test)]` items.
struct Imports<'a> {
    krate: &'a Crate,
    /// The module being walked (inline modules push onto it).
    module: Vec<String>,
    found: Vec<Import>,
}

impl Imports<'_> {
    /// Resolves a path written in `self.module` (its first segment `crate`, `super`, `self`, or a child module of
    /// the current module, as edition 2018+ `use` paths allow) and records it if it names a module of the crate.
    fn record(&mut self, segments: Vec<String>, is_use: bool) {
        let mut absolute = self.module.clone();
        let mut rest = segments.as_slice();
        match rest.first().map(String::as_str) {
            Some("crate") => {
                absolute.clear();
                rest = &rest[1..];
            }
            Some("super") | Some("self") => {
                while let Some(first) = rest.first() {
                    match first.as_str() {
                        "super" => {
                            absolute.pop();
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
            }
            Some(first) if is_use || segments.len() > 1 => {
                let mut child = self.module.clone();
                child.push(first.to_string());
                if !self.krate.modules.contains_key(&child) {
                    return;
                }
            }
            _ => return,
        }
        absolute.extend(rest.iter().cloned());
        if let Some(target) = self.krate.resolve(&absolute) {
            self.found.push(Import {
                from_module: self.module.clone(),
                written: segments.join("::"),
                to_module: target.path.clone(),
                to_file: target.file.clone(),
            });
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                if n.ident != "self" {
                    path.push(n.ident.to_string());
                }
                self.record(path, true);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                path.push(r.ident.to_string());
                self.record(path, true);
            }
            syn::UseTree::Glob(_) => self.record(prefix.clone(), true),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(prefix, t)),
        }
    }

    /// `crate::a::b` and `super::a` sequences inside macro arguments (`format!`, `assert!`, `vec!` …), which syn
    /// leaves as tokens.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(id) if id == "crate" || id == "super" => {
                    let (segments, next) = path_tokens(&trees, i);
                    if segments.len() > 1 {
                        self.record(segments, false);
                    }
                    i = next;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// The `a::b::c` path starting at `trees[start]`, and the index after it.
fn path_tokens(trees: &[TokenTree], start: usize) -> (Vec<String>, usize) {
    let mut segments = Vec::new();
    let mut i = start;
    while let Some(TokenTree::Ident(id)) = trees.get(i) {
        segments.push(id.to_string());
        let colons = matches!((trees.get(i + 1), trees.get(i + 2)), (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':');
        if !colons {
            return (segments, i + 1);
        }
        i += 3;
    }
    (segments, i)
}

impl<'ast> Visit<'ast> for Imports<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Static(s) => &s.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Type(t) => &t.attrs,
            syn::Item::Trait(t) => &t.attrs,
            syn::Item::Macro(m) => &m.attrs,
            _ => &[],
        };
        if is_cfg_test(attrs) {
            return;
        }
        match item {
            syn::Item::Use(u) => self.use_tree(&mut Vec::new(), &u.tree),
            syn::Item::Mod(m) => {
                // A `mod x;` declaration is not an import; an inline module's items are walked in its own path.
                if let Some((_, items)) = &m.content {
                    self.module.push(m.ident.to_string());
                    items.iter().for_each(|i| self.visit_item(i));
                    self.module.pop();
                }
            }
            _ => syn::visit::visit_item(self, item),
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_cfg_test(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_stmt(&mut self, stmt: &'ast syn::Stmt) {
        if let syn::Stmt::Item(syn::Item::Use(u)) = stmt {
            self.use_tree(&mut Vec::new(), &u.tree);
            return;
        }
        syn::visit::visit_stmt(self, stmt);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        // `crate::`/`super::`/`self::` paths, and paths through a child module (`fast_emit::emit(value)`);
        // `record` leaves out everything else (std, other crates, locals).
        if segments.len() > 1 || matches!(segments.first().map(String::as_str), Some("crate" | "super" | "self")) {
            self.record(segments, false);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
}

/// Every import of every library file, keyed by file.
fn imports(krate: &Crate) -> BTreeMap<PathBuf, Vec<Import>> {
    let mut all = BTreeMap::new();
    for (file, modules) in krate.files() {
        // The outermost module the file holds (its inline modules are walked from there).
        let module = modules.iter().min_by_key(|m| m.len()).expect("a file holds a module").clone();
        let mut visitor = Imports { krate, module, found: Vec::new() };
        visitor.visit_file(&parse(&file));
        visitor.found.sort();
        visitor.found.dedup();
        all.insert(file, visitor.found);
    }
    all
}

fn stage(module: &[String]) -> &str {
    module.first().map_or("lib", String::as_str)
}

fn rel(file: &Path) -> String {
    file.strip_prefix(src()).unwrap_or(file).display().to_string()
}

/// The layer of each stage: its index in `gpuplan::LAYERS`, bottom first.
fn layers() -> BTreeMap<&'static str, usize> {
    gpuplan::LAYERS.iter().enumerate().flat_map(|(i, stages)| stages.iter().map(move |s| (*s, i))).collect()
}

#[test]
fn every_stage_of_the_library_has_a_declared_layer() {
    let krate = Crate::read();
    let declared = layers();
    let stages: BTreeSet<&str> = krate.modules.keys().filter(|p| p.len() == 1).map(|p| p[0].as_str()).collect();
    let undeclared: Vec<&&str> = stages.iter().filter(|s| !declared.contains_key(**s)).collect();
    assert!(undeclared.is_empty(), "modules of src/lib.rs missing from gpuplan::LAYERS (place each in the order): {undeclared:?}");
    let missing: Vec<&&str> = declared.keys().filter(|s| !stages.contains(**s) && **s != "cli").collect();
    assert!(missing.is_empty(), "gpuplan::LAYERS names stages that src/lib.rs does not declare: {missing:?}");
}

#[test]
fn stages_import_only_the_stages_below_them() {
    let krate = Crate::read();
    let layer = layers();
    let mut wrong = Vec::new();
    for (file, found) in imports(&krate) {
        for import in found {
            let (from, to) = (stage(&import.from_module), stage(&import.to_module));
            if from == to || from == "lib" {
                continue;
            }
            let (Some(&lf), Some(&lt)) = (layer.get(from), layer.get(to)) else { continue };
            if lt >= lf {
                wrong.push(format!(
                    "{}: `{}` is stage `{to}` (layer {lt}), imported from stage `{from}` (layer {lf})",
                    rel(&file),
                    import.written
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layer order of src/lib.rs (a stage may import only the stages below it):\n{}", wrong.join("\n"));
}

#[test]
fn no_source_files_import_each_other_in_a_circle() {
    let krate = Crate::read();
    // A module's use of its own descendants (a mod.rs calling the parts it declares) is composition, not counted;
    // a child's `super::` use of its parent's shared items is. So a circle here is among siblings, or through
    // a parent that a descendant's item reaches back into.
    let edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = imports(&krate)
        .into_iter()
        .map(|(file, found)| {
            let targets = found
                .into_iter()
                .filter(|i| !i.to_module.starts_with(&i.from_module))
                .map(|i| i.to_file)
                .filter(|t| *t != file)
                .collect();
            (file, targets)
        })
        .collect();
    let circles: Vec<String> = strongly_connected(&edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| c.iter().map(|f| rel(f)).collect::<Vec<_>>().join(", "))
        .collect();
    assert!(circles.is_empty(), "files that import each other in a circle (move the shared item down):\n{}", circles.join("\n"));
}

/// Tarjan's strongly connected components, iteratively (files are few; clarity over speed).
fn strongly_connected(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct State<'a> {
        edges: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        components: Vec<Vec<PathBuf>>,
    }
    fn connect<'a>(s: &mut State<'a>, v: &'a PathBuf) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                connect(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            component.sort();
            s.components.push(component);
        }
    }
    let mut s = State { edges, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), on_stack: BTreeSet::new(), components: Vec::new() };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            connect(&mut s, v);
        }
    }
    s.components
}

/// Lines of a file a reader has to read: all of them less its `#[cfg(test)]` items.
fn lines_without_tests(file: &Path) -> usize {
    let text = std::fs::read_to_string(file).expect("readable");
    let ast = parse(file);
    let test_lines: usize = ast
        .items
        .iter()
        .filter(|item| match item {
            syn::Item::Mod(m) => is_cfg_test(&m.attrs),
            syn::Item::Fn(f) => is_cfg_test(&f.attrs),
            syn::Item::Use(u) => is_cfg_test(&u.attrs),
            _ => false,
        })
        .map(|item| {
            let span = item.span();
            span.end().line - span.start().line + 1
        })
        .sum();
    text.lines().count() - test_lines
}

/// The longest file a reader is asked to hold (main.rs and src/cli/ included; test modules apart).
const MAX_FILE_LINES: usize = 800;

#[test]
fn no_source_file_is_over_800_lines() {
    let krate = Crate::read();
    let mut files: BTreeSet<PathBuf> = krate.files().into_keys().collect();
    files.insert(src().join("main.rs"));
    let cli = src().join("cli");
    if let Ok(entries) = std::fs::read_dir(&cli) {
        files.extend(entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "rs")));
    }
    let long: Vec<String> = files
        .iter()
        .map(|f| (lines_without_tests(f), f))
        .filter(|(n, _)| *n > MAX_FILE_LINES)
        .map(|(n, f)| format!("{}: {n} lines", rel(f)))
        .collect();
    assert!(long.is_empty(), "source files over {MAX_FILE_LINES} lines (test modules apart); split them by meaning:\n{}", long.join("\n"));
}

/// The binary is the command line and nothing else: allocator, parse, one line per command, exit code.
#[test]
fn main_rs_is_at_most_60_lines() {
    let lines = std::fs::read_to_string(src().join("main.rs")).expect("readable").lines().count();
    assert!(lines <= 60, "src/main.rs has {lines} lines; each command's code belongs in src/cli/<command>.rs");
}

/// The checker finds what it is meant to find: an upward `use`, an inline path, a path inside a macro, a
/// `super::` circle — on a crate written for the purpose, so that a quiet result above means something.
#[test]
fn the_import_reader_sees_use_lines_inline_paths_and_macro_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("low")).unwrap();
    std::fs::write(root.join("lib.rs"), "pub mod low;\npub mod high;\n").unwrap();
    std::fs::write(root.join("low/mod.rs"), "mod a;\nmod b;\npub fn f() { let _ = crate::high::X; }\n").unwrap();
    std::fs::write(root.join("low/a.rs"), "use super::b::B;\npub struct A;\n").unwrap();
    std::fs::write(root.join("low/b.rs"), "pub struct B;\nfn g() { println!(\"{}\", super::a::A); }\n#[cfg(test)]\nmod tests { use crate::high::Y; }\n").unwrap();
    std::fs::write(root.join("high.rs"), "use crate::low::f;\npub const X: u8 = 1;\n").unwrap();
    let mut krate = Crate { modules: BTreeMap::new(), test_files: BTreeSet::new() };
    krate.add_file(vec![], root.join("lib.rs"), root.to_path_buf(), false);
    let found: Vec<(String, String)> = {
        let mut all = Vec::new();
        for (file, modules) in krate.files() {
            let module = modules.iter().min_by_key(|m| m.len()).unwrap().clone();
            let mut v = Imports { krate: &krate, module, found: Vec::new() };
            v.visit_file(&parse(&file));
            all.extend(v.found.into_iter().map(|i| (file.file_name().unwrap().to_string_lossy().into_owned(), i.written)));
        }
        all.sort();
        all
    };
    let expected: Vec<(String, String)> = [
        ("a.rs", "super::b::B"),
        ("b.rs", "super::a::A"),
        ("high.rs", "crate::low::f"),
        ("mod.rs", "crate::high::X"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(found, expected, "the test module's `use crate::high::Y` is left out, everything else is seen");
}
