//! The spool: every finished game on local disk until the coordinator acknowledges it.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

use prost::Message;
use tonic::Code;
use tracing::{debug, error, warn};
use zeroplay_proto::v1 as pb;

use crate::*;

/// Writes a submission to the spool durably (`<id>.pb.tmp`, fsync, rename, fsync the directory).
pub(crate) fn spool(dir: &Path, req: &pb::SubmitGameRequest) -> std::io::Result<PathBuf> {
    let id = req.game.as_ref().map_or("unknown", |g| g.game_id.as_str());
    let path = dir.join(format!("{id}.pb"));
    // A partial file (a full disk) is removed: it would only take the room the next try needs.
    durable::write_atomic(&path, &req.encode_to_vec())?;
    Ok(path)
}

/// Removes `*.pb.tmp` files: spool writes cut short by a crash (a kill mid-write). Such a
/// game was never submitted, so its lease expires and its position is played again; the
/// partial file is of no use and would hold disk space for ever.
pub(crate) fn remove_partial_spool_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for p in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if p.to_str().is_some_and(|s| s.ends_with(".pb.tmp")) {
            match std::fs::remove_file(&p) {
                Ok(()) => warn!(file = %p.display(), "removed a spool file an earlier run left half-written"),
                Err(e) => warn!(file = %p.display(), error = %e, "cannot remove a half-written spool file"),
            }
        }
    }
}

pub(crate) fn spooled(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pb"))
        .collect();
    v.sort();
    Ok(v)
}

/// Submits one spooled game until it is acknowledged, refused, or the deadline passes.
/// Returns true when the file is settled (deleted or moved aside).
pub(crate) async fn submit_file(
    client: &mut Client,
    state: &State,
    path: &Path,
    deadline: Option<Instant>,
) -> bool {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            error!(file = %path.display(), error = %e, "cannot read spooled game");
            return false;
        }
    };
    let mut req = match pb::SubmitGameRequest::decode(bytes.as_slice()) {
        Ok(r) => r,
        Err(e) => {
            error!(file = %path.display(), error = %e, "spooled file is not a game; moved to rejected/");
            let _ = std::fs::rename(
                path,
                state.cfg.spool_dir.join("rejected").join(path.file_name().unwrap_or_default()),
            );
            return true;
        }
    };
    let mut attempt = 0;
    loop {
        req.worker_id = state.id();
        match client.submit_game(req.clone()).await {
            Ok(_) => {
                debug!(file = %path.display(), "game acknowledged");
                break;
            }
            Err(s) if s.code() == Code::AlreadyExists => break,
            Err(s)
                if matches!(s.code(), Code::InvalidArgument | Code::ResourceExhausted | Code::OutOfRange) =>
            {
                error!(file = %path.display(), error = %s.message(), "coordinator refused the game; moved to rejected/");
                let _ = std::fs::rename(
                    path,
                    state.cfg.spool_dir.join("rejected").join(path.file_name().unwrap_or_default()),
                );
                return true;
            }
            Err(s) => {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return false;
                }
                let wait = backoff(&state.cfg, attempt);
                warn!(error = %s.message(), retry_in = ?wait, "submission failed; the game stays spooled");
                tokio::time::sleep(wait).await;
                attempt += 1;
            }
        }
    }
    if let Err(e) = std::fs::remove_file(path) {
        warn!(file = %path.display(), error = %e, "cannot remove acknowledged game from the spool");
    }
    state.submitted.fetch_add(1, Ordering::Relaxed);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_written_spool_files_are_removed_and_finished_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("rejected")).unwrap();
        for name in ["a.pb", "b.pb.tmp", "rejected/c.pb"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        remove_partial_spool_files(dir.path());
        assert!(!dir.path().join("b.pb.tmp").exists());
        assert!(dir.path().join("a.pb").exists() && dir.path().join("rejected/c.pb").exists());
        assert_eq!(spooled(dir.path()).unwrap(), vec![dir.path().join("a.pb")]);
    }
}
