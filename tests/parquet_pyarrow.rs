//! An independent reader of the Parquet files: `zeroplay local` writes a run, and pyarrow
//! (`scripts/check_parquet.py`) checks the documented schema, metadata and row invariants.
//!
//! The Python comes from `ZEROPLAY_PYTHON`, else the venv that `scripts/setup-test-tools.sh`
//! creates (`${ZEROPLAY_TOOLS:-$HOME/.cache/zeroplay}/venv/bin/python`). Without one the test
//! fails, telling how to install it: it never passes silently.

mod common;

use std::path::{Path, PathBuf};

use common::python;
use std::process::{Command, Output};

fn text(out: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn check(python: &Path, files: &[PathBuf]) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check_parquet.py");
    Command::new(python).arg(script).args(files).output().expect("run the Python check")
}

#[test]
fn local_run_files_pass_the_pyarrow_schema_and_row_checks() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let name = format!("pyarrow-{}", std::process::id());
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_zeroplay"))
        .args(["local", "--name", &name, "--games", "8", "--sims", "30"])
        .current_dir(dir.path())
        .env("RUST_LOG", "warn")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "zeroplay local failed\n{}", text(&out));

    let games = dir.path().join("runs").join(&name).join("games");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&games).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(
        files.iter().all(|p| p.extension().is_some_and(|x| x == "parquet")),
        "only finished Parquet files expected: {files:?}"
    );
    assert!(!files.is_empty(), "no Parquet files in {}", games.display());

    let out = check(&python, &files);
    assert!(out.status.success(), "pyarrow check failed\n{}", text(&out));
    let summary = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let checked: u64 = summary
        .split_whitespace()
        .find_map(|w| w.strip_prefix("games="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no games=N in the summary: {summary}"));
    assert!(checked >= 8, "{checked} games checked, 8 asked for: {summary}");

    // The checker is not vacuous: a gap in a game's plies and a wrong column type are caught.
    let tampered = dir.path().join("tampered.parquet");
    let mutilated = dir.path().join("mutilated.parquet");
    let edit = "import sys, pyarrow as pa, pyarrow.parquet as pq\n\
                t = pq.read_table(sys.argv[1])\n\
                pq.write_table(t.slice(1), sys.argv[2])\n\
                i = t.schema.get_field_index('ply')\n\
                pq.write_table(t.set_column(i, 'ply', t.column('ply').cast(pa.int64())), sys.argv[3])\n";
    let out = Command::new(&python)
        .args(["-c", edit])
        .arg(&files[0])
        .arg(&tampered)
        .arg(&mutilated)
        .output()
        .unwrap();
    assert!(out.status.success(), "cannot write the tampered copies\n{}", text(&out));
    for (file, expect) in [(&tampered, "plies are not 0.."), (&mutilated, "column ply has type int64")] {
        let out = check(&python, std::slice::from_ref(file));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{} should fail the check\n{}", file.display(), text(&out));
        assert!(err.contains(expect), "{} should report {expect:?}\n{}", file.display(), text(&out));
    }
    eprintln!("{summary} ({:.1} s)", started.elapsed().as_secs_f64());
}
