//! The layer check: every `crate::` path in `src/` (a `use`, a path in code, a serde
//! attribute naming a function) points to a folder below its own in the layer table of
//! `docs/ARCHITECTURE.md`, so no folder-level import loop can form. The check reads the
//! source text, so code behind every cargo feature (`standard`, `scale`, `sentence`) is
//! checked whatever this build enabled. Comment lines are skipped (a doc link is not an
//! import).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layer table: the lines of the fenced block tagged `layers` in ARCHITECTURE.md,
/// lowest first, each a set of folders (or single-file modules) that may import only the
/// lines above it.
fn layers(architecture: &str) -> Vec<Vec<String>> {
    let block = architecture
        .split("```layers\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/ARCHITECTURE.md holds a ```layers block");
    block
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .collect()
}

/// Names the crate root re-exports (`pub use memory::{Memory, …}` in lib.rs), with the
/// module each comes from: `crate::Memory` is an import of `memory`.
fn root_exports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for stmt in lib.split(';') {
        let stmt = stmt.trim();
        let Some(path) = stmt.strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = path.split_once("::") else {
            continue;
        };
        for name in names
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|n| !n.is_empty())
        {
            out.insert(name.to_owned(), module.to_owned());
        }
    }
    out
}

/// The top-level modules a file's code names through `crate::` (comment lines skipped).
fn imports(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in code.match_indices("crate::") {
        // `hypermem::crate::` cannot occur; skip `$crate::` of macros.
        if code[..i].ends_with('$') {
            continue;
        }
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a::b, C, d::{e, f}}`: the first segment of each top-level item.
            let mut depth = 0;
            let mut start = true;
            let mut token = String::new();
            for c in group.chars() {
                if start && (c.is_alphanumeric() || c == '_') {
                    token.push(c);
                    continue;
                }
                if !token.is_empty() {
                    out.insert(std::mem::take(&mut token));
                    start = false;
                }
                match c {
                    '{' => {
                        depth += 1;
                        start = false;
                    }
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    _ => {}
                }
            }
            if !token.is_empty() {
                out.insert(token);
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// The top-level module of a file under `src/` (`recall` for `src/recall/plan.rs`,
/// `eval` for `src/eval.rs`); `None` for the crate root and the binaries.
fn module_of(relative: &Path) -> Option<String> {
    let mut parts = relative.components();
    let first = parts.next()?.as_os_str().to_str()?.to_owned();
    let module = match parts.next() {
        Some(_) => first,
        None => first.strip_suffix(".rs")?.to_owned(),
    };
    (module != "lib" && module != "bin").then_some(module)
}

/// Every import against the table, as "file: module → target (why)", and every module
/// the table does not place.
fn violations(files: &[(PathBuf, String)], lib: &str, table: &[Vec<String>]) -> Vec<String> {
    let level: BTreeMap<&str, usize> = table
        .iter()
        .enumerate()
        .flat_map(|(i, line)| line.iter().map(move |m| (m.as_str(), i)))
        .collect();
    let exports = root_exports(lib);
    let modules: BTreeSet<String> = files.iter().filter_map(|(p, _)| module_of(p)).collect();
    let mut out = Vec::new();
    for m in &modules {
        if !level.contains_key(m.as_str()) {
            out.push(format!("module `{m}` is not in the layer table"));
        }
    }
    for (path, code) in files {
        let Some(from) = module_of(path) else {
            continue;
        };
        let Some(&from_level) = level.get(from.as_str()) else {
            continue;
        };
        for name in imports(code) {
            let target = if modules.contains(&name) {
                name.clone()
            } else if let Some(m) = exports.get(&name) {
                m.clone()
            } else {
                continue;
            };
            if target == from {
                continue;
            }
            match level.get(target.as_str()) {
                Some(&to) if to < from_level => {}
                Some(&to) => out.push(format!(
                    "{}: `{from}` (layer {from_level}) imports `{target}` (layer {to}){}",
                    path.display(),
                    if to == from_level {
                        ", on the same layer"
                    } else {
                        ", above it"
                    }
                )),
                None => {}
            }
        }
    }
    out
}

/// Every `.rs` file under `dir`, with its path relative to `root`.
fn sources(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let code = std::fs::read_to_string(&path).expect("a source file is UTF-8");
            out.push((
                path.strip_prefix(root).expect("under src").to_path_buf(),
                code,
            ));
        }
    }
}

struct Tree {
    files: Vec<(PathBuf, String)>,
    lib: String,
    table: Vec<Vec<String>>,
}

fn tree() -> Tree {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut files = Vec::new();
    sources(&src, &src, &mut files);
    files.sort();
    let architecture = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md"))
        .expect("docs/ARCHITECTURE.md is readable");
    Tree {
        lib: std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs"),
        table: layers(&architecture),
        files,
    }
}

#[test]
fn every_import_points_down_the_layer_table() {
    let t = tree();
    assert!(t.files.len() > 50, "the source tree was found");
    assert!(t.table.len() > 5, "the layer table was found");
    let found = violations(&t.files, &t.lib, &t.table);
    assert!(
        found.is_empty(),
        "imports against docs/ARCHITECTURE.md's layer table:\n{}",
        found.join("\n")
    );
}

/// The violations of the tree with `code` appended to `file` (a path under `src/`).
fn violations_with(file: &str, code: &str) -> Vec<String> {
    let mut t = tree();
    let (_, text) = t
        .files
        .iter_mut()
        .find(|(p, _)| p == Path::new(file))
        .unwrap_or_else(|| panic!("src/{file}"));
    text.push_str(code);
    violations(&t.files, &t.lib, &t.table)
}

#[test]
fn an_injected_upward_import_is_caught() {
    let found = violations_with(
        "text/mod.rs",
        "\nfn upward() -> Option<crate::Memory> { None }\n",
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("`text`") && found[0].contains("`memory`") && found[0].contains("above"),
        "{found:?}"
    );
    // A grouped import of a module above, behind a feature, is caught too (and the module
    // below in the same group is not).
    let found = violations_with(
        "ledger/mod.rs",
        "\n#[cfg(feature = \"scale\")]\nuse crate::{clock, store::{self, Exact}};\n",
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("imports `store`"), "{found:?}");
    // A module on the same line of the table.
    let found = violations_with("api/mod.rs", "\nuse crate::eval::EvalArgs;\n");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("on the same layer"), "{found:?}");
    // A comment naming a module above is not an import.
    let found = violations_with(
        "text/mod.rs",
        "\n/// See [`crate::memory`] and crate::api.\n    // crate::eval\n",
    );
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_module_the_table_does_not_place_is_reported() {
    let mut t = tree();
    t.files.push((
        PathBuf::from("newfolder/mod.rs"),
        "pub fn f() {}".to_owned(),
    ));
    let found = violations(&t.files, &t.lib, &t.table);
    assert_eq!(found, vec!["module `newfolder` is not in the layer table"]);
}

#[test]
fn the_write_path_never_enters_recall() {
    let t = tree();
    let observe = t
        .files
        .iter()
        .find(|(p, _)| p == Path::new("memory/observe.rs"))
        .expect("src/memory/observe.rs");
    assert!(
        !imports(&observe.1).contains("recall"),
        "memory/observe.rs imports recall"
    );
    // Nor does the lexical index it writes.
    let index: Vec<_> = t
        .files
        .iter()
        .filter(|(p, _)| p.starts_with("index"))
        .collect();
    assert!(!index.is_empty());
    for (p, code) in index {
        assert!(
            !imports(code).contains("recall"),
            "{} imports recall",
            p.display()
        );
    }
}

/// Whether `code` writes SQL or names the SQLite driver (comment lines skipped).
fn speaks_sql(code: &str) -> bool {
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .any(|l| {
            l.contains("rusqlite")
                || [
                    "\"SELECT ",
                    "\"INSERT ",
                    "\"UPDATE ",
                    "\"DELETE ",
                    "\"CREATE ",
                ]
                .iter()
                .any(|k| l.contains(k))
        })
}

#[test]
fn sql_stays_behind_the_ledger_boundary() {
    let t = tree();
    let speaking: Vec<String> = t
        .files
        .iter()
        .filter(|(p, code)| !p.starts_with("ledger") && speaks_sql(code))
        .map(|(p, _)| p.to_string_lossy().replace('\\', "/"))
        .collect();
    assert!(
        speaking.is_empty(),
        "SQL outside src/ledger/ (move it behind the ledger boundary): {speaking:?}"
    );
    // The check sees a statement and the driver, and skips comments.
    assert!(speaks_sql("let s = \"SELECT 1\";"));
    assert!(speaks_sql("use rusqlite::params;"));
    assert!(!speaks_sql("// \"SELECT 1\" in a comment"));
}
