//! ARCHITECTURE.md's structural invariants, checked on the sources: no module import cycles,
//! one `GameKind` in the workspace, per-game switches go through `engine::with_game!`, games
//! are named only in their folders (and the places listed with why), and no source file grows
//! past the size where it starts mixing jobs.

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

/// A file's code without comments and without its unit-test module (tests may use anything):
/// a `tests.rs` file is a unit-test module of its own (`#[cfg(test)] mod tests;`), so none.
fn code(path: &Path) -> String {
    if path.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
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

/// The modules of one crate and which of them each names (`crate::…`, `super::…`), and each
/// parent module's edge to its children (it declares and re-exports them). A child naming its
/// own parent is no edge (it is part of it), so a cycle is one through another module.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeMap<String, PathBuf> = files.iter().map(|f| (module_of(src, f), f.clone())).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> =
        modules.keys().map(|m| (m.clone(), BTreeSet::new())).collect();
    for m in modules.keys() {
        if let Some((parent, _)) = m.rsplit_once("::")
            && let Some(e) = edges.get_mut(parent)
        {
            e.insert(m.clone());
        }
    }
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
                edges.get_mut(m).unwrap().insert(t);
            }
        }
    }
    edges
}

/// The strongly connected components of more than one module (Tarjan's algorithm): each is a
/// set of modules that reach each other, i.e. one or more import cycles of any length.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a str) {
        let i = w.index.len();
        w.index.insert(v, i);
        w.low.insert(v, i);
        w.stack.push(v);
        w.on_stack.insert(v);
        for t in w.edges.get(v).into_iter().flatten() {
            let t = t.as_str();
            if !w.index.contains_key(t) {
                visit(w, t);
                let lt = w.low[t];
                let lv = w.low.get_mut(v).unwrap();
                *lv = (*lv).min(lt);
            } else if w.on_stack.contains(t) {
                let it = w.index[t];
                let lv = w.low.get_mut(v).unwrap();
                *lv = (*lv).min(it);
            }
        }
        if w.low[v] == w.index[v] {
            let mut component = Vec::new();
            while let Some(x) = w.stack.pop() {
                w.on_stack.remove(x);
                component.push(x.to_string());
                if x == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                w.out.push(component);
            }
        }
    }
    let mut w = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !w.index.contains_key(v.as_str()) {
            visit(&mut w, v);
        }
    }
    w.out
}

#[test]
fn the_cycle_finder_finds_cycles_of_any_length() {
    let graph = |pairs: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    assert!(cycles(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
    assert_eq!(cycles(&graph(&[("a", "b"), ("b", "a")])), vec![vec!["a", "b"]]);
    let six = graph(&[("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "f"), ("f", "a"), ("x", "a")]);
    assert_eq!(cycles(&six), vec![vec!["a", "b", "c", "d", "e", "f"]]);
}

/// Cycles known and not yet broken, each with the work that breaks it. The list may only
/// shrink: a cycle not listed fails, and so does a listed one that is gone (strike it).
const KNOWN_CYCLES: &[(&str, &str)] = &[];

#[test]
fn no_module_import_cycles_of_any_length() {
    let mut found = Vec::new();
    for r in ROOTS {
        for component in cycles(&module_graph(&root().join(r))) {
            found.push(format!("{r}: {}", component.join(", ")));
        }
    }
    let new: Vec<&String> = found.iter().filter(|c| !KNOWN_CYCLES.iter().any(|(k, _)| k == c)).collect();
    assert!(new.is_empty(), "modules that reach each other through imports:\n{new:#?}");
    let gone: Vec<&str> =
        KNOWN_CYCLES.iter().map(|(k, _)| *k).filter(|k| !found.iter().any(|c| c == k)).collect();
    assert!(gone.is_empty(), "these known cycles are broken now: strike them from KNOWN_CYCLES: {gone:?}");
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

/// Where a game is still named (its `GameKind` variant or its name in quotes) outside
/// `kind.rs` and the game folders, with the exact count and why. Everything else a host needs
/// of a game comes from its pack (`engine::pack`), so a new per-game switch anywhere fails
/// here; a site made generic fails too, until its line is struck or lowered.
const GAME_NAMED: &[(&str, usize, &str)] = &[
    ("src/uci_cmd.rs", 1, "the match protocol is Banqi's"),
    ("src/cli.rs", 1, "`uci` plays Banqi by default"),
    ("src/play_cmd.rs", 1, "terminal play is Battle Number's"),
    ("src/bench_cmd/mod.rs", 1, "the self-play benchmark measures Battle Number"),
    ("src/bench_cmd/ingest.rs", 1, "the ingest benchmark measures Battle Number"),
    (
        "server/src/config.rs",
        6,
        "old per-game keys and [options.battlenumber], read with a deprecation warning",
    ),
];

#[test]
fn games_are_named_only_in_their_folders_and_the_listed_places() {
    let variants = ["GameKind::BattleNumber", "GameKind::TriGolden", "GameKind::Banqi"];
    let names = ["\"battlenumber\"", "\"trigolden\"", "\"banqi\""];
    let games =
        ["engine/src/battlenumber/", "engine/src/trigolden/", "engine/src/banqi/", "engine/src/kind.rs"];
    let mut found = BTreeMap::new();
    for r in ROOTS {
        let mut files = Vec::new();
        rust_files(&root().join(r), &mut files);
        for f in files {
            let rel = f.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
            if games.iter().any(|g| rel.starts_with(g)) {
                continue;
            }
            let n = code(&f).lines().filter(|l| variants.iter().chain(&names).any(|p| l.contains(p))).count();
            if n > 0 {
                found.insert(rel, n);
            }
        }
    }
    let listed: BTreeMap<String, usize> = GAME_NAMED.iter().map(|(f, n, _)| (f.to_string(), *n)).collect();
    let diff: Vec<String> = found
        .iter()
        .filter(|(f, n)| listed.get(*f) != Some(n))
        .map(|(f, n)| format!("{f}: {n} lines (listed: {:?})", listed.get(f)))
        .chain(listed.iter().filter(|(f, _)| !found.contains_key(*f)).map(|(f, _)| format!("{f}: none now")))
        .collect();
    assert!(
        diff.is_empty(),
        "a game named outside its folder: take it from its pack (engine::pack), or list it in \
         GAME_NAMED with why:\n{}",
        diff.join("\n")
    );
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

#[test]
fn architecture_md_states_the_wire_protocol_the_code_speaks() {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let stated = doc
        .split("`PROTOCOL` (")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .and_then(|n| n.parse::<u32>().ok());
    assert_eq!(stated, Some(zeroplay_proto::PROTOCOL), "ARCHITECTURE.md's `PROTOCOL` (N) is not the code's");
}

/// Each crate's library name and source root.
const LIBS: &[(&str, &str)] = &[
    ("engine", "engine/src"),
    ("zeroplay_proto", "proto/src"),
    ("zeroplay_coordinator", "coordinator/src"),
    ("zeroplay_client", "client/src"),
    ("zeroplay_worker", "worker/src"),
    ("durable", "durable/src"),
    ("modelfile", "modelfile/src"),
    ("model", "model/src"),
    ("trainer", "trainer/src"),
    ("zeroplay_server", "server/src"),
    ("zeroplay_telemetry", "telemetry/src"),
    ("zeroplay_storage", "storage/src"),
    ("zeroplay_net", "net/src"),
];

/// A crate's source files with their code, read once for every name looked up in them.
fn crate_code(src: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .map(|f| {
            let text = code(&f);
            (f, text)
        })
        .collect()
}

/// Whether `name` is a module, or an item defined or re-exported (`pub use`), in the crate
/// whose files are `files` (from [`crate_code`]).
fn defines(files: &[(PathBuf, String)], name: &str) -> bool {
    let word = |text: &str, at: usize| {
        !text[at + name.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    };
    files.iter().any(|(f, text)| {
        if f.file_stem().is_some_and(|s| s == name) || f.parent().is_some_and(|d| d.ends_with(name)) {
            return true;
        }
        let defined =
            ["fn ", "struct ", "enum ", "trait ", "type ", "const ", "static ", "mod ", "macro_rules! "]
                .iter()
                .any(|kw| {
                    text.match_indices(&format!("{kw}{name}"))
                        .any(|(i, m)| word(text, i + m.len() - name.len()))
                });
        let reexported = text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("pub use ") && l.match_indices(name).any(|(i, _)| word(l, i))
        });
        defined || reexported
    })
}

#[test]
fn every_code_path_architecture_md_names_exists() {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut missing = Vec::new();
    let mut crates: std::collections::HashMap<&str, Vec<(PathBuf, String)>> =
        std::collections::HashMap::new();
    for span in doc.split('`').skip(1).step_by(2) {
        let Some((krate, rest)) = span.split_once("::") else { continue };
        let Some((_, src)) = LIBS.iter().find(|(lib, _)| *lib == krate) else { continue };
        // Every segment of the path: modules and the item (a trailing `()` or `!` dropped).
        for seg in rest.split("::") {
            let seg = seg.trim_end_matches("()").trim_end_matches('!');
            if seg.is_empty() || !seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let files = crates.entry(*src).or_insert_with(|| crate_code(&root().join(src)));
            if !defines(files, seg) {
                missing.push(format!("`{span}`: no `{seg}` in {src}"));
            }
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md names code that is not there:\n{}", missing.join("\n"));
    // The check itself: a name that is not there is found.
    assert!(
        !defines(&crate_code(&root().join("worker/src")), "ModelSlots"),
        "the worker only uses the client's"
    );
    assert!(defines(&crate_code(&root().join("client/src")), "ModelSlots"));
}
