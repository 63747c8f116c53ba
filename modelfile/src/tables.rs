//! Banqi's endgame tables kept on disk between processes: a [`TableStore`] over a directory.
//!
//! One file per material (`<piece codes in hex>.tb`) in a directory named after the tables'
//! [`TABLE_VERSION`], so tables of an older analysis are never read. The engine checks every
//! file it is handed (magic, version, material, length, CRC-32) and rebuilds and overwrites
//! one that fails; files are written to a temporary name and renamed, so a crash leaves either
//! the old file or the new one, never half of one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine::banqi::tablebase::{TABLE_VERSION, TableStore};

/// The environment variable that chooses the directory (`off`: keep no tables on disk).
pub const TABLES_ENV: &str = "ZEROPLAY_TABLES";

/// A [`TableStore`] over a directory.
#[derive(Clone, Debug)]
pub struct DirStore {
    dir: PathBuf,
}

impl DirStore {
    /// Tables of this build's [`TABLE_VERSION`] under `root` (`root/banqi-v<N>/`); the directory
    /// is made when the first table is saved.
    pub fn new(root: &Path) -> DirStore {
        DirStore { dir: root.join(format!("banqi-v{TABLE_VERSION}")) }
    }

    /// The directory the files are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, material: &[u8]) -> PathBuf {
        let name: String = material.iter().map(|c| format!("{c:x}")).collect();
        self.dir.join(format!("{name}.tb"))
    }
}

impl TableStore for DirStore {
    fn load(&self, material: &[u8]) -> Option<Vec<u8>> {
        std::fs::read(self.path(material)).ok()
    }

    fn save(&self, material: &[u8], bytes: &[u8]) {
        let path = self.path(material);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let written = std::fs::create_dir_all(&self.dir)
            .and_then(|()| std::fs::write(&tmp, bytes))
            .and_then(|()| std::fs::rename(&tmp, &path));
        if written.is_err() {
            // A cache that cannot be written is only slower: the table stays in memory.
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// The store programs use unless told otherwise: the directory in `$ZEROPLAY_TABLES`, or
/// `$XDG_CACHE_HOME/zeroplay/tables`, or `$HOME/.cache/zeroplay/tables`; `None` when
/// `ZEROPLAY_TABLES=off` or no directory is known.
pub fn default_store() -> Option<Arc<dyn TableStore>> {
    let root = match std::env::var_os(TABLES_ENV) {
        Some(v) if v == "off" => return None,
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?
            .join("zeroplay")
            .join("tables"),
    };
    Some(Arc::new(DirStore::new(&root)))
}

#[cfg(test)]
mod tests {
    use engine::banqi::Banqi;
    use engine::banqi::tablebase::Tablebase;

    use super::*;

    #[test]
    fn a_second_process_loads_what_the_first_saved_and_a_damaged_file_is_rebuilt() {
        let tmp = tempfile::tempdir().unwrap();
        let store: Arc<dyn TableStore> = Arc::new(DirStore::new(tmp.path()));
        // King and pawn against advisor and pawn: one 4-piece table and its smaller ones.
        let pos = Banqi::from_position_string("8/8/Gs4aS/8 r - 0 1").unwrap();
        let mut first = Tablebase::with_store(store.clone());
        let built = first.prepare(&pos, 4, None);
        assert!(built > 1);
        let dir = tmp.path().join(format!("banqi-v{TABLE_VERSION}"));
        let files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(files.len(), built, "{files:?}");
        assert!(files.iter().all(|f| f.extension().unwrap() == "tb"), "no temporary file left");

        let mut second = Tablebase::with_store(store.clone());
        assert_eq!(second.prepare(&pos, 4, None), built);
        assert_eq!(second.loaded(), built);
        assert_eq!(second.probe(&pos), first.probe(&pos));

        // Cut the largest file short: the next process rebuilds it and writes it whole again.
        let big = files.iter().max_by_key(|f| std::fs::metadata(f).unwrap().len()).unwrap();
        let whole = std::fs::read(big).unwrap();
        std::fs::write(big, &whole[..whole.len() / 2]).unwrap();
        let mut third = Tablebase::with_store(store);
        assert_eq!(third.prepare(&pos, 4, None), built);
        assert_eq!(third.loaded(), built - 1);
        assert_eq!(std::fs::read(big).unwrap(), whole);
    }
}
