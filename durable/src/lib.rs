//! # Durable file writes
//!
//! Every file zeroplay must not lose or half-write (Parquet files, published models, spooled
//! games, ratings, mirrored downloads) is written the same way: under a temporary name
//! beside it, synced, renamed over the real name, and the directory synced so the rename
//! itself survives a power cut. A reader therefore sees the old file or the new one, whole,
//! and never a partial file under the real name; a failed write (a full disk) leaves no
//! temporary file behind.
//!
//! The temporary name is `<name>.tmp` ([`tmp_path`]): recovery code that removes leftovers
//! looks for that suffix.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The temporary name [`write_atomic`] writes `path` under: `<name>.tmp`, beside it.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Writes `bytes` to `path` durably: `<name>.tmp`, fsync, rename over `path`, fsync the
/// directory.
///
/// # Errors
/// The I/O failure; the temporary file is removed and `path` keeps its old contents.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = tmp_path(path);
    let written = File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    persist(&tmp, path)
}

/// Moves the finished file `tmp` (already synced by its writer) to `path` durably: rename,
/// then fsync the directory.
///
/// # Errors
/// The I/O failure; `tmp` is removed, and so is `path` if only the directory sync failed (a
/// file whose rename may not survive a crash is not left to look finished).
pub fn persist(tmp: &Path, path: &Path) -> io::Result<()> {
    if let Err(e) = std::fs::rename(tmp, path) {
        let _ = std::fs::remove_file(tmp);
        return Err(e);
    }
    if let Err(e) = sync_dir(path.parent().unwrap_or(Path::new("."))) {
        let _ = std::fs::remove_file(path);
        return Err(e);
    }
    Ok(())
}

/// Fsyncs directory `dir`, so the names created or renamed in it are on disk.
///
/// # Errors
/// The I/O failure.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_files_and_leaves_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ratings.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two, longer").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two, longer");
        assert_eq!(tmp_path(&p), d.path().join("ratings.json.tmp"));
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["ratings.json"]);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("m.bin");
        write_atomic(&p, b"old").unwrap();
        // A directory where the temporary file should go: the write fails before the rename.
        std::fs::create_dir(tmp_path(&p)).unwrap();
        assert!(write_atomic(&p, b"new").is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        // A rename into a missing directory fails and removes the temporary file.
        let tmp = d.path().join("x.tmp");
        std::fs::write(&tmp, b"x").unwrap();
        assert!(persist(&tmp, &d.path().join("missing/x")).is_err());
        assert!(!tmp.exists());
    }
}
