//! S3-compatible object storage for zeroplay.
//!
//! Local disk stays the working copy: the coordinator writes each Parquet file to its data
//! directory first (atomically, as before), and the trainer reads Parquet files from a local
//! directory. With a `[storage]` section in their configs, a [`Syncer`] thread mirrors
//! directories between local disk and a bucket:
//!
//! - the coordinator **pushes** `games/*.parquet` and its published `models/`;
//! - the trainer **pulls** `games/` into its data directory and **pushes** its models,
//!   ratings and plot.
//!
//! So a bucket takes the place of the shared (ReadWriteMany) volume between coordinator and
//! trainer, and keeps every game and model after the machines are gone. The mirror is
//! idempotent and restart-safe: each pass compares names, sizes and modification times, so a
//! file missed by a crash, a network cut or a full bucket is sent on a later pass, and a
//! download appears in the local directory only once it is complete (written to a dot-file,
//! synced, then renamed).
//!
//! Credentials come from the environment ([`Credentials::from_env`]: `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, optionally `AWS_SESSION_TOKEN`), never from a config file, so
//! resolved configs saved next to a run hold no secret.
//!
//! TLS uses rustls with the *ring* provider, the one tonic's gRPC already uses: one crypto
//! provider in the process (see [`install_crypto_provider`]).

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::StreamExt;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as ObjectPath;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig};
use serde::{Deserialize, Serialize};
use tracing::{info, warn};

/// Where and how to reach the object store (`[storage]` in the coordinator's and the
/// trainer's configs).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct StorageConfig {
    /// The bucket and key prefix: `s3://BUCKET` or `s3://BUCKET/PREFIX`.
    pub url: String,
    /// Endpoint of an S3-compatible server (MinIO, Ceph, Garage, moto…), e.g.
    /// `http://minio:9000`. Empty: Amazon S3 itself, from the region.
    pub endpoint: String,
    /// Region (S3-compatible servers mostly ignore it, but it is part of the signature).
    pub region: String,
    /// Allow a plain-HTTP endpoint. Only on a trusted network: keys are not sent, but
    /// requests are signed and the data travels in the clear.
    pub allow_http: bool,
    /// Milliseconds between mirror passes.
    pub sync_ms: u64,
    /// Timeout of one request, in milliseconds.
    pub timeout_ms: u64,
    /// Retries of a failed request (with exponential backoff) before a pass gives up on a
    /// file; the next pass tries again.
    pub max_retries: usize,
}

impl Default for StorageConfig {
    fn default() -> Self {
        StorageConfig {
            url: String::new(),
            endpoint: String::new(),
            region: "us-east-1".into(),
            allow_http: false,
            sync_ms: 5_000,
            timeout_ms: 30_000,
            max_retries: 3,
        }
    }
}

impl StorageConfig {
    /// Checks the fields; returns the bucket and the key prefix.
    ///
    /// # Errors
    /// [`StorageError::Config`] naming the field and what is wrong.
    pub fn validate(&self) -> Result<(String, String), StorageError> {
        let bad = |m: String| Err(StorageError::Config(m));
        let url = match url::Url::parse(&self.url) {
            Ok(u) => u,
            Err(e) => return bad(format!("storage.url {:?}: {e} (expected s3://BUCKET/PREFIX)", self.url)),
        };
        if url.scheme() != "s3" {
            return bad(format!(
                "storage.url {:?}: the scheme must be s3:// (an S3-compatible store)",
                self.url
            ));
        }
        let bucket = url.host_str().unwrap_or_default().to_string();
        if bucket.is_empty() {
            return bad(format!("storage.url {:?}: no bucket name", self.url));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return bad(format!("storage.url {:?}: a query or fragment has no meaning here", self.url));
        }
        // (The URL parser has already resolved any `.` and `..` segments.)
        let prefix = url.path().trim_matches('/').to_string();
        if !self.endpoint.is_empty() {
            match url::Url::parse(&self.endpoint) {
                Ok(e) if e.scheme() == "https" => {}
                Ok(e) if e.scheme() == "http" && self.allow_http => {}
                Ok(e) if e.scheme() == "http" => {
                    return bad(format!(
                        "storage.endpoint {:?} is plain HTTP; set storage.allow_http = true to allow it (trusted networks only)",
                        self.endpoint
                    ));
                }
                Ok(_) => {
                    return bad(format!("storage.endpoint {:?}: must be http:// or https://", self.endpoint));
                }
                Err(e) => return bad(format!("storage.endpoint {:?}: {e}", self.endpoint)),
            }
        }
        if self.region.is_empty() {
            return bad("storage.region is empty".into());
        }
        if self.sync_ms == 0 || self.timeout_ms == 0 {
            return bad("storage.sync_ms and storage.timeout_ms must be positive".into());
        }
        Ok((bucket, prefix))
    }
}

/// Access keys (from the environment in the binaries, so they never sit in a config file).
#[derive(Clone, Default)]
pub struct Credentials {
    /// `AWS_ACCESS_KEY_ID`.
    pub access_key_id: String,
    /// `AWS_SECRET_ACCESS_KEY`.
    pub secret_access_key: String,
    /// `AWS_SESSION_TOKEN`, for temporary credentials.
    pub session_token: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials").field("access_key_id", &self.access_key_id).finish_non_exhaustive()
    }
}

impl Credentials {
    /// Reads `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`. `None`
    /// when the key pair is not set: the store then falls back to the usual AWS chain
    /// (web identity, instance metadata), which is what a pod with an IAM role wants.
    pub fn from_env() -> Option<Credentials> {
        let get = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Some(Credentials {
            access_key_id: get("AWS_ACCESS_KEY_ID")?,
            secret_access_key: get("AWS_SECRET_ACCESS_KEY")?,
            session_token: get("AWS_SESSION_TOKEN"),
        })
    }
}

/// What went wrong talking to the object store.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The `[storage]` section is invalid.
    #[error("invalid storage config: {0}")]
    Config(String),
    /// A request failed (after its retries).
    #[error("{op} {key}: {source}")]
    Request {
        /// What was being done (`list`, `upload`, `download`).
        op: &'static str,
        /// The object key or prefix.
        key: String,
        /// The store's error.
        source: object_store::Error,
    },
    /// A local file could not be read or written.
    #[error("{path}: {source}")]
    Local {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// Installs rustls' *ring* provider as the process default, once. reqwest is built without a
/// provider of its own (so that no second one, aws-lc-rs, is compiled in) and uses this one.
pub fn install_crypto_provider() {
    // Err means a provider is already installed, which is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// One object in a listing.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteFile {
    /// The name below the listed directory.
    pub name: String,
    /// Bytes.
    pub size: u64,
    /// Last modification, whole seconds since the Unix epoch (S3 keeps seconds).
    pub modified_secs: i64,
}

/// A bucket and key prefix on an S3-compatible store.
#[derive(Clone, Debug)]
pub struct Remote {
    store: Arc<AmazonS3>,
    prefix: String,
    url: String,
}

impl Remote {
    /// Builds the client (no request is made yet; see [`Remote::check`]).
    ///
    /// # Errors
    /// [`StorageError::Config`] for an invalid config or a client that cannot be built.
    pub fn open(cfg: &StorageConfig, credentials: Option<&Credentials>) -> Result<Remote, StorageError> {
        let (bucket, prefix) = cfg.validate()?;
        install_crypto_provider();
        let timeout = Duration::from_millis(cfg.timeout_ms);
        let mut b = AmazonS3Builder::new()
            .with_bucket_name(&bucket)
            .with_region(&cfg.region)
            .with_allow_http(cfg.allow_http)
            .with_client_options(
                ClientOptions::new()
                    .with_allow_http(cfg.allow_http)
                    .with_timeout(timeout)
                    .with_connect_timeout(timeout.min(Duration::from_secs(5))),
            )
            .with_retry(RetryConfig {
                backoff: BackoffConfig {
                    init_backoff: Duration::from_millis(100),
                    max_backoff: Duration::from_secs(5),
                    base: 2.0,
                },
                max_retries: cfg.max_retries,
                retry_timeout: timeout * (cfg.max_retries as u32 + 1),
            });
        if !cfg.endpoint.is_empty() {
            b = b.with_endpoint(&cfg.endpoint);
        }
        if let Some(c) = credentials {
            b = b.with_access_key_id(&c.access_key_id).with_secret_access_key(&c.secret_access_key);
            if let Some(t) = &c.session_token {
                b = b.with_token(t);
            }
        }
        let store =
            b.build().map_err(|e| StorageError::Config(format!("cannot build the S3 client: {e}")))?;
        Ok(Remote { store: Arc::new(store), prefix, url: cfg.url.clone() })
    }

    /// The configured `s3://…` URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn key(&self, dir: &str, name: Option<&str>) -> ObjectPath {
        let parts = self
            .prefix
            .split('/')
            .chain(dir.split('/'))
            .chain(name)
            .filter(|s| !s.is_empty())
            .map(object_store::path::PathPart::from);
        ObjectPath::from_iter(parts)
    }

    /// Lists the objects directly under `dir` (relative to the prefix).
    ///
    /// # Errors
    /// [`StorageError::Request`] when the listing fails (no such bucket, refused
    /// credentials, the server cannot be reached).
    pub async fn list(&self, dir: &str) -> Result<Vec<RemoteFile>, StorageError> {
        let at = self.key(dir, None);
        let r = self.store.list_with_delimiter(Some(&at)).await.map_err(|source| StorageError::Request {
            op: "list",
            key: at.to_string(),
            source,
        })?;
        let mut out: Vec<RemoteFile> = r
            .objects
            .into_iter()
            .filter_map(|m| {
                let name = m.location.filename()?.to_string();
                Some(RemoteFile { name, size: m.size, modified_secs: m.last_modified.timestamp() })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Uploads a local file as `dir/name`. Returns its size.
    ///
    /// # Errors
    /// [`StorageError::Local`] if the file cannot be read, [`StorageError::Request`] if the
    /// upload fails.
    pub async fn upload(&self, local: &Path, dir: &str, name: &str) -> Result<u64, StorageError> {
        let bytes = tokio::fs::read(local)
            .await
            .map_err(|source| StorageError::Local { path: local.to_path_buf(), source })?;
        let n = bytes.len() as u64;
        let key = self.key(dir, Some(name));
        self.store.put(&key, PutPayload::from(bytes)).await.map_err(|source| StorageError::Request {
            op: "upload",
            key: key.to_string(),
            source,
        })?;
        Ok(n)
    }

    /// Downloads `dir/name` to `local`: streamed into a hidden `.NAME.part` file next to it,
    /// synced, then renamed, so `local` appears only complete. Returns its size.
    ///
    /// # Errors
    /// [`StorageError::Request`] if the object cannot be fetched (the partial file is
    /// removed), [`StorageError::Local`] if it cannot be written.
    pub async fn download(&self, dir: &str, name: &str, local: &Path) -> Result<u64, StorageError> {
        let key = self.key(dir, Some(name));
        let req = |source| StorageError::Request { op: "download", key: key.to_string(), source };
        let loc = |source| StorageError::Local { path: local.to_path_buf(), source };
        let parent = local.parent().unwrap_or(Path::new("."));
        let file_name = local.file_name().and_then(|n| n.to_str()).unwrap_or("download");
        let part = parent.join(format!(".{file_name}.part"));
        let result = async {
            let mut stream = self.store.get(&key).await.map_err(req)?.into_stream();
            let mut f = File::create(&part).map_err(loc)?;
            let mut n = 0u64;
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(req)?;
                f.write_all(&chunk).map_err(loc)?;
                n += chunk.len() as u64;
            }
            f.sync_all().map_err(loc)?;
            drop(f);
            durable::persist(&part, local).map_err(loc)?;
            Ok(n)
        }
        .await;
        if result.is_err() {
            let _ = std::fs::remove_file(&part);
        }
        result
    }
}

/// Which way a [`Job`] mirrors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Local directory → bucket.
    Push,
    /// Bucket → local directory.
    Pull,
}

/// One directory to mirror.
#[derive(Clone, Debug)]
pub struct Job {
    /// The local directory.
    pub local: PathBuf,
    /// The directory under the bucket's prefix (`games`, `models`, `trainer/models`).
    pub remote: String,
    /// File-name endings to mirror (`.parquet`); empty: every file. Hidden files (`.x`) and
    /// `*.tmp` / `*.part` files are never mirrored: they are still being written.
    pub suffixes: Vec<String>,
    /// Which way.
    pub direction: Direction,
}

impl Job {
    /// A push job.
    pub fn push(local: impl Into<PathBuf>, remote: &str, suffixes: &[&str]) -> Job {
        Job::new(local, remote, suffixes, Direction::Push)
    }

    /// A pull job.
    pub fn pull(remote: &str, local: impl Into<PathBuf>, suffixes: &[&str]) -> Job {
        Job::new(local, remote, suffixes, Direction::Pull)
    }

    fn new(local: impl Into<PathBuf>, remote: &str, suffixes: &[&str], direction: Direction) -> Job {
        Job {
            local: local.into(),
            remote: remote.to_string(),
            suffixes: suffixes.iter().map(|s| s.to_string()).collect(),
            direction,
        }
    }

    fn wants(&self, name: &str) -> bool {
        !name.starts_with('.')
            && !name.ends_with(".tmp")
            && !name.ends_with(".part")
            && (self.suffixes.is_empty() || self.suffixes.iter().any(|s| name.ends_with(s.as_str())))
    }
}

/// What one pass of one job did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassReport {
    /// Files sent or fetched.
    pub transferred: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Files already the same on both sides.
    pub up_to_date: usize,
    /// Files that failed (name, error); the next pass tries them again.
    pub failed: Vec<(String, String)>,
}

/// What a push remembers of its own uploads: size and modification time of the local file
/// when it was sent. Within one process this decides alone, so clock skew between this
/// machine and the store cannot cause endless re-uploads.
type Sent = HashMap<PathBuf, (u64, SystemTime)>;

fn mtime_secs(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// Runs one pass of `job`.
///
/// A push sends a local file when this process has not sent it in its present size and
/// modification time, and (for a file first seen) the store lacks it, holds another size,
/// or holds an older copy. A pull fetches an object when the local copy is missing or has
/// another size (game files are never rewritten).
///
/// # Errors
/// [`StorageError`] when the local directory or the remote listing cannot be read; a single
/// file's failure is reported in [`PassReport::failed`] instead.
pub async fn run_pass(remote: &Remote, job: &Job, sent: &mut Sent) -> Result<PassReport, StorageError> {
    let mut report = PassReport::default();
    let listed = remote.list(&job.remote).await?;
    match job.direction {
        Direction::Push => {
            let there: HashMap<&str, &RemoteFile> = listed.iter().map(|f| (f.name.as_str(), f)).collect();
            let entries = match std::fs::read_dir(&job.local) {
                Ok(e) => e,
                // Nothing written yet.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(report),
                Err(source) => return Err(StorageError::Local { path: job.local.clone(), source }),
            };
            let mut files: Vec<(String, PathBuf, u64, SystemTime)> = entries
                .filter_map(Result::ok)
                .filter_map(|e| {
                    let name = e.file_name().into_string().ok()?;
                    let meta = e.metadata().ok()?;
                    (meta.is_file() && job.wants(&name))
                        .then(|| (name, e.path(), meta.len(), meta.modified().unwrap_or(UNIX_EPOCH)))
                })
                .collect();
            files.sort();
            for (name, path, size, modified) in files {
                let needed = match sent.get(&path) {
                    Some(&(s, m)) => s != size || m != modified,
                    None => there
                        .get(name.as_str())
                        .is_none_or(|r| r.size != size || mtime_secs(modified) > r.modified_secs),
                };
                if !needed {
                    report.up_to_date += 1;
                    continue;
                }
                match remote.upload(&path, &job.remote, &name).await {
                    Ok(n) => {
                        sent.insert(path, (size, modified));
                        report.transferred += 1;
                        report.bytes += n;
                    }
                    Err(e) => report.failed.push((name, e.to_string())),
                }
            }
        }
        Direction::Pull => {
            std::fs::create_dir_all(&job.local)
                .map_err(|source| StorageError::Local { path: job.local.clone(), source })?;
            for f in listed.iter().filter(|f| job.wants(&f.name)) {
                let path = job.local.join(&f.name);
                if std::fs::metadata(&path).is_ok_and(|m| m.len() == f.size) {
                    report.up_to_date += 1;
                    continue;
                }
                match remote.download(&job.remote, &f.name, &path).await {
                    Ok(n) => {
                        report.transferred += 1;
                        report.bytes += n;
                    }
                    Err(e) => report.failed.push((f.name.clone(), e.to_string())),
                }
            }
        }
    }
    Ok(report)
}

/// Counters of a [`Syncer`], for logs and metrics.
#[derive(Debug, Default)]
pub struct SyncStats {
    /// Passes over all jobs.
    pub passes: AtomicU64,
    /// Files uploaded.
    pub uploaded_files: AtomicU64,
    /// Bytes uploaded.
    pub uploaded_bytes: AtomicU64,
    /// Files downloaded.
    pub downloaded_files: AtomicU64,
    /// Bytes downloaded.
    pub downloaded_bytes: AtomicU64,
    /// Failed listings and transfers.
    pub failures: AtomicU64,
    /// The last error of the last job that ran, if it had one.
    pub last_error: Mutex<Option<String>>,
}

/// A background thread that mirrors its [`Job`]s every `sync_ms`. Dropping it (or
/// [`Syncer::stop`]) runs a last pass of the push jobs and waits for the thread.
#[derive(Debug)]
pub struct Syncer {
    stop: Sender<()>,
    thread: Option<JoinHandle<()>>,
    stats: Arc<SyncStats>,
}

impl Syncer {
    /// Starts the thread; its first pass runs at once.
    ///
    /// # Panics
    /// If the thread or its Tokio runtime cannot be created (out of resources at start-up).
    pub fn spawn(remote: Remote, jobs: Vec<Job>, every: Duration) -> Syncer {
        let stats = Arc::new(SyncStats::default());
        let (stop, rx) = std::sync::mpsc::channel::<()>();
        let st = stats.clone();
        let thread = std::thread::Builder::new()
            .name("storage-sync".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a Tokio runtime for the storage thread");
                // Per job: what it sent, and its last error (each logged once, not every pass).
                let mut state: Vec<(Sent, Option<String>)> =
                    jobs.iter().map(|_| Default::default()).collect();
                info!(url = remote.url(), jobs = jobs.len(), "object storage mirror started");
                let mut run = |pulls: bool| {
                    for (job, (sent, last)) in jobs.iter().zip(state.iter_mut()) {
                        if pulls || job.direction == Direction::Push {
                            rt.block_on(pass(&remote, job, sent, last, &st));
                        }
                    }
                    st.passes.fetch_add(1, Ordering::Relaxed);
                };
                loop {
                    run(true);
                    match rx.recv_timeout(every) {
                        Err(RecvTimeoutError::Timeout) => {}
                        // Stop asked (or the owner is gone): one last pass of the pushes, so
                        // files written during shutdown reach the bucket.
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                            run(false);
                            info!(url = remote.url(), "object storage mirror stopped");
                            return;
                        }
                    }
                }
            })
            .expect("spawn the storage thread");
        Syncer { stop, thread: Some(thread), stats }
    }

    /// The thread's counters.
    pub fn stats(&self) -> Arc<SyncStats> {
        self.stats.clone()
    }

    /// Stops the thread after a last pass of the push jobs, and waits for it (as dropping
    /// the `Syncer` does).
    pub fn stop(self) {
        drop(self);
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        let _ = self.stop.send(());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn pass(remote: &Remote, job: &Job, sent: &mut Sent, last: &mut Option<String>, st: &SyncStats) {
    let mut errors = Vec::new();
    match run_pass(remote, job, sent).await {
        Ok(r) => {
            let (files, bytes) = match job.direction {
                Direction::Push => (&st.uploaded_files, &st.uploaded_bytes),
                Direction::Pull => (&st.downloaded_files, &st.downloaded_bytes),
            };
            files.fetch_add(r.transferred as u64, Ordering::Relaxed);
            bytes.fetch_add(r.bytes, Ordering::Relaxed);
            if r.transferred > 0 {
                info!(dir = %job.remote, direction = ?job.direction, files = r.transferred, bytes = r.bytes, "mirrored");
            }
            st.failures.fetch_add(r.failed.len() as u64, Ordering::Relaxed);
            errors.extend(r.failed.into_iter().map(|(name, e)| format!("{name}: {e}")));
        }
        Err(e) => {
            st.failures.fetch_add(1, Ordering::Relaxed);
            errors.push(e.to_string());
        }
    }
    // One line per event (stores answer with multi-line XML), and the same error again only
    // at debug level: an outage of hours must not flood the log every pass.
    let first = errors.first().map(|e| e.split_whitespace().collect::<Vec<_>>().join(" "));
    if let Some(e) = &first {
        if last.as_deref() != Some(e.as_str()) {
            warn!(dir = %job.remote, failures = errors.len(), error = %e, "object storage pass failed; retried at the next pass");
        } else {
            tracing::debug!(dir = %job.remote, error = %e, "object storage pass failed again");
        }
    } else if last.is_some() {
        info!(dir = %job.remote, "object storage reachable again");
    }
    *st.last_error.lock().expect("not poisoned") = first.clone();
    *last = first;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(url: &str) -> StorageConfig {
        StorageConfig { url: url.into(), ..StorageConfig::default() }
    }

    #[test]
    fn urls_are_checked() {
        assert_eq!(cfg("s3://zp").validate().unwrap(), ("zp".into(), String::new()));
        assert_eq!(cfg("s3://zp/run/a/").validate().unwrap(), ("zp".into(), "run/a".into()));
        assert_eq!(cfg("s3://zp/a/../b").validate().unwrap(), ("zp".into(), "b".into()));
        for (url, says) in
            [("zp/run", "s3://"), ("gs://zp", "scheme"), ("s3:///x", "bucket"), ("s3://zp?x=1", "query")]
        {
            let e = cfg(url).validate().unwrap_err().to_string();
            assert!(e.contains(says), "{url}: {e}");
        }
        let mut c = cfg("s3://zp");
        c.endpoint = "http://127.0.0.1:9000".into();
        assert!(c.validate().unwrap_err().to_string().contains("allow_http"));
        c.allow_http = true;
        assert!(c.validate().is_ok());
        c.endpoint = "ftp://x".into();
        assert!(c.validate().is_err());
        c.endpoint = String::new();
        c.sync_ms = 0;
        assert!(c.validate().is_err());
    }

    #[test]
    fn keys_join_prefix_dir_and_name() {
        let mut c = cfg("s3://zp/runs/one");
        c.endpoint = "http://127.0.0.1:1".into();
        c.allow_http = true;
        let r = Remote::open(&c, None).unwrap();
        assert_eq!(r.key("games", Some("a.parquet")).to_string(), "runs/one/games/a.parquet");
        assert_eq!(r.key("trainer/models", None).to_string(), "runs/one/trainer/models");
        let r = Remote::open(&cfg("s3://zp"), None).unwrap();
        assert_eq!(r.key("games", Some("a.parquet")).to_string(), "games/a.parquet");
    }

    #[test]
    fn work_in_progress_is_never_mirrored() {
        let j = Job::push("/x", "games", &[".parquet"]);
        assert!(j.wants("games-1.parquet"));
        assert!(!j.wants("games-1.parquet.tmp"));
        assert!(!j.wants(".games-1.parquet.part"));
        assert!(!j.wants("notes.txt"));
        let all = Job::pull("models", "/x", &[]);
        assert!(all.wants("best.safetensors"));
        assert!(!all.wants(".hidden"));
    }

    #[test]
    fn credentials_do_not_print_the_secret() {
        let c = Credentials {
            access_key_id: "AK".into(),
            secret_access_key: "SECRET".into(),
            session_token: None,
        };
        assert!(!format!("{c:?}").contains("SECRET"));
    }
}
