//! A model upload (PublishModel) received into a file, not into memory (issue 24: three
//! uploads buffered in memory peaked at 3.4 GB). Chunks go to a hidden file in the models
//! directory as they arrive, hashed on the way; the caller checks the file and renames it
//! into place, or drops the [`Upload`], which removes it.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;
use tokio_stream::{Stream, StreamExt};
use zeroplay_proto::v1 as pb;

use crate::error::CoordError;

/// Largest model file accepted.
pub const MAX_MODEL_BYTES: u64 = 1 << 30;

/// A received upload: its metadata (the first chunk's, without data) and its bytes in `path`.
#[derive(Debug)]
pub struct Upload {
    /// The metadata every chunk repeated.
    pub meta: pb::PublishModelChunk,
    /// The file holding the bytes (synced); removed on drop unless [`Upload::persist`]ed.
    pub path: PathBuf,
    /// The bytes' SHA-256, lowercase hex.
    pub sha256: String,
    /// Bytes received.
    pub size: u64,
    kept: bool,
}

impl Upload {
    /// Moves the file to `to` durably (rename, then the directory synced).
    ///
    /// # Errors
    /// The I/O failure (the file is removed).
    pub fn persist(mut self, to: &Path) -> std::io::Result<()> {
        self.kept = true;
        durable::persist(&self.path, to)
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Receives `stream` into a new hidden file in `dir`, checking that the chunks agree on the
/// metadata and that no more than the announced size (nor [`MAX_MODEL_BYTES`]) arrives.
///
/// # Errors
/// [`CoordError::Oversized`], [`CoordError::InvalidArgument`] for a bad upload, the
/// stream's own status as [`CoordError::Unavailable`], or a file error.
pub async fn receive(
    mut stream: impl Stream<Item = Result<pb::PublishModelChunk, tonic::Status>> + Unpin,
    dir: &Path,
) -> Result<Upload, CoordError> {
    let io = |e: std::io::Error| CoordError::Unavailable(format!("model upload file: {e}"));
    tokio::fs::create_dir_all(dir).await.map_err(io)?;
    let path = dir.join(format!(".upload-{:032x}.part", rand::random::<u128>()));
    let file = tokio::fs::File::create(&path).await.map_err(io)?;
    // From here the file is the Upload's: any early return removes it.
    let mut up =
        Upload { meta: pb::PublishModelChunk::default(), path, sha256: String::new(), size: 0, kept: false };
    // Chunks are large (the clients send 256 kB): each is written as it arrives, unbuffered,
    // so memory holds one chunk per upload.
    let mut file = file;
    let mut hash = Sha256::new();
    let mut first = true;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|s| match s.code() {
            // A chunk that does not decode is the uploader's fault.
            tonic::Code::InvalidArgument => CoordError::InvalidArgument(s.message().to_string()),
            // Below the minimum transfer rate (zeroplay_net::grpc_body_deadline).
            tonic::Code::DeadlineExceeded => CoordError::TooSlow(s.message().to_string()),
            _ => CoordError::Unavailable(format!("upload interrupted: {}", s.message())),
        })?;
        if chunk.total_size > MAX_MODEL_BYTES {
            return Err(CoordError::Oversized(format!(
                "model of {} bytes (limit {MAX_MODEL_BYTES})",
                chunk.total_size
            )));
        }
        if first {
            up.meta = pb::PublishModelChunk { data: Vec::new(), ..chunk.clone() };
            first = false;
        } else if up.meta.sha256 != chunk.sha256
            || up.meta.total_size != chunk.total_size
            || up.meta.game_kind != chunk.game_kind
            || up.meta.gate != chunk.gate
        {
            return Err(CoordError::InvalidArgument("chunks disagree on the model's metadata".into()));
        }
        up.size += chunk.data.len() as u64;
        if up.size > up.meta.total_size {
            return Err(CoordError::InvalidArgument("more data than total_size".into()));
        }
        hash.update(&chunk.data);
        file.write_all(&chunk.data).await.map_err(io)?;
    }
    if first {
        return Err(CoordError::InvalidArgument("empty upload".into()));
    }
    file.flush().await.map_err(io)?;
    file.sync_all().await.map_err(io)?;
    up.sha256 = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(up)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(data: &[u8], total: u64) -> Result<pb::PublishModelChunk, tonic::Status> {
        Ok(pb::PublishModelChunk {
            game_kind: "battlenumber".into(),
            total_size: total,
            sha256: "x".into(),
            data: data.to_vec(),
            ..Default::default()
        })
    }

    fn files(dir: &Path) -> usize {
        std::fs::read_dir(dir).map_or(0, |d| d.count())
    }

    #[tokio::test]
    async fn an_upload_lands_in_a_file_and_a_bad_one_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let up =
            receive(tokio_stream::iter(vec![chunk(b"abc", 6), chunk(b"def", 6)]), dir.path()).await.unwrap();
        assert_eq!(std::fs::read(&up.path).unwrap(), b"abcdef");
        let hex: String = Sha256::digest(b"abcdef").iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!((up.size, &up.sha256), (6, &hex));
        let to = dir.path().join("model.bin");
        up.persist(&to).unwrap();
        assert_eq!(std::fs::read(&to).unwrap(), b"abcdef");
        assert_eq!(files(dir.path()), 1);

        let dir = tempfile::tempdir().unwrap();
        let bad = [
            vec![chunk(b"abcd", 3)],
            vec![chunk(b"a", 2), chunk(b"b", 3)],
            vec![chunk(b"", MAX_MODEL_BYTES + 1)],
            vec![chunk(b"a", 2), Err(tonic::Status::cancelled("gone"))],
            vec![],
        ];
        for chunks in bad {
            assert!(receive(tokio_stream::iter(chunks), dir.path()).await.is_err());
        }
        let up = receive(tokio_stream::iter(vec![chunk(b"ab", 2)]), dir.path()).await.unwrap();
        drop(up);
        assert_eq!(files(dir.path()), 0, "refused and dropped uploads leave no file");
    }
}
