//! ARCHITECTURE.md's structural invariants, checked on the sources: no two modules of a crate
//! import each other, one `GameKind` in the workspace, per-game switches go through
//! `engine::with_game!`, and no source file grows past the size where it starts mixing jobs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every crate's source root, by crate directory.
const ROOTS: &[&str] = &[
    "src",
    "engine/src",
    "proto/src",
    "coordinator/src",
    "client/src",
    "worker/src",
    "durable/src",
    "modelfile/src",
    "model/src",
    "trainer/src",
    "server/src",
    "telemetry/src",
    "storage/src",
    "net/src",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A file's code without comments and without its unit-test module (tests may use anything).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The module path of `file` under `src` (`a/b.rs` and `a/b/mod.rs` are `a::b`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts.join("::")
}

/// Module paths named in `code` as `crate::a::b`, `use crate::{a, b}` or `super::x`.
fn named_paths(module: &str, code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + 7..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                out.insert(part.trim().split("::").next().unwrap_or("").to_string());
            }
        } else {
            let end = rest.find(|c: char| !ident(c)).unwrap_or(rest.len());
            out.insert(rest[..end].trim_end_matches(':').to_string());
        }
    }
    let parent: Vec<&str> = module.split("::").collect();
    for (i, _) in code.match_indices("super::") {
        let rest = &code[i + 7..];
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        let mut p: Vec<&str> = parent[..parent.len().saturating_sub(1)].to_vec();
        p.push(&rest[..end]);
        out.insert(p.join("::"));
    }
    out
}

#[test]
fn no_two_modules_import_each_other() {
    let mut cycles = Vec::new();
    for r in ROOTS {
        let src = root().join(r);
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let modules: BTreeMap<String, PathBuf> =
            files.iter().map(|f| (module_of(&src, f), f.clone())).collect();
        let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (m, f) in &modules {
            for path in named_paths(m, &code(f)) {
                // The longest known module the path starts with.
                let segs: Vec<&str> = path.split("::").collect();
                let target =
                    (1..=segs.len()).rev().map(|k| segs[..k].join("::")).find(|c| modules.contains_key(c));
                if let Some(t) = target
                    && t != *m
                    && !m.starts_with(&format!("{t}::"))
                {
                    let t = modules.get_key_value(&t).unwrap().0.as_str();
                    edges.entry(m.as_str()).or_default().insert(t);
                }
            }
        }
        for (a, targets) in &edges {
            for b in targets {
                if a < b && edges.get(b).is_some_and(|t| t.contains(a)) {
                    cycles.push(format!("{r}: {a} <-> {b}"));
                }
            }
        }
    }
    assert!(cycles.is_empty(), "modules that import each other:\n{}", cycles.join("\n"));
}

#[test]
fn one_game_registry_and_one_dispatch() {
    let mut enums = Vec::new();
    let mut name_switches = Vec::new();
    for r in ROOTS {
        let mut files = Vec::new();
        rust_files(&root().join(r), &mut files);
        for f in files {
            let c = code(&f);
            if c.contains("enum GameKind") || c.contains("enum GameName") {
                enums.push(f.display().to_string());
            }
            // A switch on game names instead of `with_game!` (and its silent fallbacks).
            for pat in [
                "::NAME =>",
                "if k == BattleNumber::NAME",
                "if g == BattleNumber::NAME",
                "== \"banqi\"",
                "== \"trigolden\"",
            ] {
                if c.contains(pat) {
                    name_switches.push(format!("{}: {pat}", f.display()));
                }
            }
        }
    }
    assert_eq!(enums, [root().join("engine/src/kind.rs").display().to_string()], "one GameKind, in engine");
    assert!(name_switches.is_empty(), "per-game switches outside with_game!:\n{}", name_switches.join("\n"));
}

#[test]
fn every_listener_is_guarded() {
    // A bare listener has no caps or timeouts (issue 24): serving goes through zeroplay-net.
    let mut bare = Vec::new();
    for r in ROOTS {
        let mut files = Vec::new();
        rust_files(&root().join(r), &mut files);
        for f in files {
            let c = code(&f);
            for pat in ["axum::serve(", "TcpIncoming", ".serve_with_shutdown(", ".serve(addr"] {
                if c.contains(pat) {
                    bare.push(format!("{}: {pat}", f.display()));
                }
            }
        }
    }
    assert!(bare.is_empty(), "listeners served without zeroplay_net:\n{}", bare.join("\n"));
}

#[test]
fn no_source_file_grows_past_700_lines_of_code() {
    // The rules of one game are one job however long they are.
    let one_job =
        ["engine/src/battlenumber/mod.rs", "engine/src/trigolden/mod.rs", "engine/src/banqi/mod.rs"];
    let mut long = Vec::new();
    for r in ROOTS {
        let mut files = Vec::new();
        rust_files(&root().join(r), &mut files);
        for f in files {
            let rel = f.strip_prefix(root()).unwrap().to_string_lossy().into_owned();
            if one_job.contains(&rel.as_str()) || rel.ends_with("tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            let lines =
                text.find("#[cfg(test)]\nmod tests").map_or(text.as_str(), |i| &text[..i]).lines().count();
            if lines > 700 {
                long.push(format!("{rel}: {lines} lines before its tests"));
            }
        }
    }
    assert!(long.is_empty(), "split these by job:\n{}", long.join("\n"));
}

#[test]
fn the_crate_table_in_architecture_md_is_the_real_dependency_graph() {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--no-deps", "--offline", "--format-version", "1"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let ours: BTreeSet<&str> = packages.iter().map(|p| p["name"].as_str().unwrap()).collect();
    let short = |n: &str| n.strip_prefix("zeroplay-").unwrap_or(n).to_string();
    let real: BTreeMap<String, BTreeSet<String>> = packages
        .iter()
        .filter(|p| p["name"] != "zeroplay")
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null() && ours.contains(d["name"].as_str().unwrap()))
                .map(|d| short(d["name"].as_str().unwrap()))
                .collect();
            (short(p["name"].as_str().unwrap()), deps)
        })
        .collect();

    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut table: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in doc.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let names = |cell: &str| -> Vec<String> {
            cell.split(',')
                .filter_map(|c| c.trim().strip_prefix('`')?.strip_suffix('`').map(str::to_string))
                .collect()
        };
        for krate in names(cells[0]) {
            table.insert(krate, names(cells[1]).into_iter().collect());
        }
    }
    assert_eq!(table, real, "ARCHITECTURE.md's crate table differs from Cargo.toml's dependencies");
}
