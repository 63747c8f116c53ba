//! Helpers shared by the integration tests that call Python tools.

#![allow(dead_code)] // each test crate uses some of these helpers

pub mod cluster;

use std::path::{Path, PathBuf};

/// How to install what a test is missing.
const SETUP: &str = "run scripts/setup-test-tools.sh (or scripts/test.sh, which runs it and then the tests)";

/// Where `scripts/setup-test-tools.sh` installs the tools: `ZEROPLAY_TOOLS`, else
/// `~/.cache/zeroplay`.
fn tools_dir() -> PathBuf {
    std::env::var_os("ZEROPLAY_TOOLS")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/zeroplay")))
        .expect("neither ZEROPLAY_TOOLS nor HOME is set")
}

/// The Python with the test tools: `ZEROPLAY_PYTHON`, else the venv that
/// `scripts/setup-test-tools.sh` creates. Panics (the test fails) with how to install it.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("ZEROPLAY_PYTHON").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        assert!(p.exists(), "ZEROPLAY_PYTHON={} does not exist; {SETUP}", p.display());
        return p;
    }
    let tools = tools_dir();
    let p = tools.join("venv/bin/python");
    assert!(
        p.exists(),
        "no Python with pyarrow for the Parquet check: ZEROPLAY_PYTHON is unset and {} does not exist; {SETUP}",
        p.display()
    );
    p
}

/// The browser tools: (the `node_modules` holding playwright-core, the Chromium binary).
/// Panics (the test fails) with how to install them.
pub fn browser() -> (PathBuf, PathBuf) {
    let tools = tools_dir();
    let modules = tools.join("node/node_modules");
    assert!(
        modules.join("playwright-core/package.json").exists(),
        "playwright-core is not installed in {}; {SETUP}",
        modules.display()
    );
    let chromium = std::env::var_os("ZEROPLAY_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/chromium".into());
    assert!(chromium.exists(), "no Chromium at {}; {SETUP}", chromium.display());
    (modules, chromium)
}

/// A command-line tool installed in the test venv's `bin/` (kubectl, kubernetes-validate,
/// check-jsonschema, hadolint). Panics (the test fails) with how to install it.
pub fn venv_tool(name: &str) -> PathBuf {
    let python = python();
    let p = python.parent().expect("the venv's bin directory").join(name);
    assert!(p.exists(), "{name} is not installed at {}; {SETUP}", p.display());
    p
}

/// The file paths `output` names (words with a `/` whose last part has a known extension, or
/// that end in `/`) that do not exist relative to `cwd`: a command's summary must not point
/// at files it did not write.
pub fn named_paths_missing(output: &str, cwd: &Path) -> Vec<String> {
    const EXT: [&str; 9] = ["safetensors", "svg", "json", "toml", "parquet", "txt", "md", "csv", "log"];
    let mut missing = Vec::new();
    for word in output.split(|c: char| c.is_whitespace() || "`'\"(),;<>=".contains(c)) {
        let w = word.trim_end_matches([':', '.', '…']);
        if !w.contains('/') || w.contains("://") || w.contains('*') || w.contains('{') {
            continue;
        }
        let last = w.rsplit('/').next().unwrap_or("");
        let known = last.rsplit_once('.').is_some_and(|(stem, ext)| !stem.is_empty() && EXT.contains(&ext));
        if !known {
            continue;
        }
        let p = if Path::new(w).is_absolute() { PathBuf::from(w) } else { cwd.join(w) };
        if !p.exists() {
            missing.push(w.to_string());
        }
    }
    missing
}
