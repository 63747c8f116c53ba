//! # zeroplay telemetry
//!
//! What every long-running zeroplay process (coordinator, worker, trainer, play server) shows
//! to the orchestrator around it, in one place so that they all look alike:
//!
//! - `GET /metrics`: the process's Prometheus metrics in the OpenMetrics text format, from a
//!   [`prometheus_client`] registry the process builds at start (no global registry: each
//!   process, and each in-process test server, has its own);
//! - `GET /healthz`: liveness, `200 ok` while the process's HTTP server answers;
//! - `GET /readyz`: readiness, `200 ready` once the process said so with
//!   [`Health::set_ready`], `503 not ready` before that and while it shuts down.
//!
//! Counters a process already keeps as atomics are exported without copying through [`Live`],
//! a collector that reads them at scrape time. New measurements (latency histograms, model
//! versions by game) use `prometheus_client`'s own metric types.
//!
//! Entry points: [`router`] (to mount in an existing axum app, as the play server does),
//! [`serve`] (a standalone listener, as the trainer uses) and [`spawn`] (the same on its own
//! task with a stop handle, as the coordinator and worker use).

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;

pub use prometheus_client;

/// The media type of `/metrics` answers.
pub const OPENMETRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Histogram buckets for latencies in seconds: 0.5 ms to about 16 s, doubling.
pub fn latency_buckets() -> impl Iterator<Item = f64> {
    prometheus_client::metrics::histogram::exponential_buckets(0.0005, 2.0, 16)
}

/// Readiness, shared between the process (which sets it) and its `/readyz` endpoint.
#[derive(Clone, Debug, Default)]
pub struct Health {
    ready: Arc<AtomicBool>,
}

impl Health {
    /// Not ready until [`Health::set_ready`]`(true)`.
    pub fn new() -> Health {
        Health::default()
    }

    /// Marks the process ready (or, at shutdown, no longer ready).
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Release);
    }

    /// Whether the process is ready.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }
}

type Read = Box<dyn Fn() -> f64 + Send + Sync>;
type ReadLabeled = Box<dyn Fn() -> Vec<(String, f64)> + Send + Sync>;

enum Kind {
    Counter(Read),
    Gauge(Read),
    /// One gauge per value of the label.
    Labeled(&'static str, ReadLabeled),
}

struct Entry {
    name: &'static str,
    help: &'static str,
    kind: Kind,
}

/// A collector of values read at scrape time: a process's own atomics and queue lengths,
/// exported without a second copy that could drift from the first.
///
/// ```
/// # use std::sync::{Arc, atomic::{AtomicU64, Ordering}};
/// let games = Arc::new(AtomicU64::new(3));
/// let mut registry = zeroplay_telemetry::prometheus_client::registry::Registry::with_prefix("demo");
/// let g = games.clone();
/// registry.register_collector(Box::new(
///     zeroplay_telemetry::Live::new().counter("games", "Games stored", move || g.load(Ordering::Relaxed)),
/// ));
/// assert!(zeroplay_telemetry::encode(&registry).contains("demo_games_total 3"));
/// ```
#[derive(Default)]
pub struct Live {
    entries: Vec<Entry>,
}

impl Live {
    /// An empty collector.
    pub fn new() -> Live {
        Live::default()
    }

    /// Adds a counter (a value that only grows; `_total` is appended to the name).
    pub fn counter(
        mut self,
        name: &'static str,
        help: &'static str,
        read: impl Fn() -> u64 + Send + Sync + 'static,
    ) -> Live {
        self.entries.push(Entry { name, help, kind: Kind::Counter(Box::new(move || read() as f64)) });
        self
    }

    /// Adds a gauge (a value that goes up and down).
    pub fn gauge(
        mut self,
        name: &'static str,
        help: &'static str,
        read: impl Fn() -> f64 + Send + Sync + 'static,
    ) -> Live {
        self.entries.push(Entry { name, help, kind: Kind::Gauge(Box::new(read)) });
        self
    }

    /// Adds a gauge with one series per value of `label` (e.g. the best model's version per
    /// game); `read` gives the label values and their gauges.
    pub fn labeled_gauge(
        mut self,
        name: &'static str,
        help: &'static str,
        label: &'static str,
        read: impl Fn() -> Vec<(String, f64)> + Send + Sync + 'static,
    ) -> Live {
        self.entries.push(Entry { name, help, kind: Kind::Labeled(label, Box::new(read)) });
        self
    }
}

impl Live {
    /// Adds a listener's connection counters (`connections_open`, `connections_accepted`,
    /// `connections_refused`, `connections_evicted`, `connections_displaced`,
    /// `connections_trusted`, `connections_timed_out`, `connections_slow_requests`).
    pub fn connections(self, guard: &zeroplay_net::Guard) -> Live {
        let g = |f: fn(&zeroplay_net::GuardStats) -> u64| {
            let guard = guard.clone();
            move || f(&guard.stats())
        };
        let open = g(|s| s.open);
        let trusted = g(|s| s.trusted);
        self.gauge("connections_open", "Connections held now", move || open() as f64)
            .counter("connections_accepted", "Connections admitted", g(|s| s.accepted))
            .counter(
                "connections_refused",
                "Connections closed at once: every held connection was established",
                g(|s| s.refused),
            )
            .counter(
                "connections_evicted",
                "Connections closed before their handshake to make room for a newer one",
                g(|s| s.evicted),
            )
            .counter(
                "connections_displaced",
                "Established connections that never authenticated, closed to make room for a newer one (an address over its share of a full table)",
                g(|s| s.displaced),
            )
            .gauge("connections_trusted", "Connections held now that carried an authenticated request", move || {
                trusted() as f64
            })
            .counter(
                "connections_timed_out",
                "Connections closed by the handshake or idle timeout",
                g(|s| s.timed_out),
            )
            .counter(
                "connections_slow_requests",
                "Requests whose body came below the minimum transfer rate (cut off; on HTTP, the connection closed)",
                g(|s| s.slow_requests),
            )
    }
}

impl fmt::Debug for Live {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.entries.iter().map(|e| e.name)).finish()
    }
}

impl Collector for Live {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        for e in &self.entries {
            match &e.kind {
                Kind::Counter(read) => {
                    // A counter is a whole count; the cast back is exact below 2^53.
                    let m = ConstCounter::new(read() as u64);
                    m.encode(encoder.encode_descriptor(e.name, e.help, None, m.metric_type())?)?;
                }
                Kind::Gauge(read) => {
                    let m = ConstGauge::new(read());
                    m.encode(encoder.encode_descriptor(e.name, e.help, None, m.metric_type())?)?;
                }
                Kind::Labeled(label, read) => {
                    let series = read();
                    if series.is_empty() {
                        continue;
                    }
                    let mut family = encoder.encode_descriptor(
                        e.name,
                        e.help,
                        None,
                        ConstGauge::new(0.0).metric_type(),
                    )?;
                    for (value, v) in series {
                        let labels = [(*label, value)];
                        ConstGauge::new(v).encode(family.encode_family(&labels)?)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The registry in the OpenMetrics text format.
pub fn encode(registry: &Registry) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail; an encoder error would be a bug in a metric.
    if let Err(e) = prometheus_client::encoding::text::encode(&mut out, registry) {
        tracing::error!(error = %e, "encoding metrics failed");
    }
    out
}

#[derive(Clone)]
struct AppState {
    registry: Arc<Registry>,
    health: Health,
}

/// `/metrics`, `/healthz` and `/readyz` as an axum router (to merge into an app whose own
/// state is `S`).
pub fn router<S: Clone + Send + Sync + 'static>(registry: Arc<Registry>, health: Health) -> Router<S> {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(AppState { registry, health })
}

async fn metrics(State(s): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE)], encode(&s.registry))
}

async fn healthz() -> &'static str {
    "ok\n"
}

async fn readyz(State(s): State<AppState>) -> impl IntoResponse {
    if s.health.is_ready() {
        (StatusCode::OK, "ready\n")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready\n")
    }
}

/// Serves [`router`] on `listener` until `shutdown` completes.
///
/// # Errors
/// The listener's I/O error.
pub async fn serve(
    listener: TcpListener,
    registry: Arc<Registry>,
    health: Health,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(%addr, "metrics and health endpoints listening (/metrics, /healthz, /readyz)");
    }
    // Guarded like the servers' own ports: a flood here must not take the process's file
    // descriptors, and a monitor still gets in (issue 24).
    let listener =
        zeroplay_net::GuardedListener::new(listener, zeroplay_net::Connections::metrics(), "metrics");
    zeroplay_net::serve_http(listener, router::<()>(registry, health), shutdown).await;
    Ok(())
}

/// [`serve`] on its own task, until [`Running::stop`] (or until the handle is dropped, as on
/// an early return).
pub fn spawn(listener: TcpListener, registry: Arc<Registry>, health: Health) -> Running {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, registry, health, async move {
        let _ = stopped.await;
    }));
    Running { stop, task }
}

/// A metrics endpoint started by [`spawn`].
#[derive(Debug)]
pub struct Running {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// Stops serving (answers in flight finish) and waits until the listener is closed.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

/// Binds `addr` (`host:port`) for [`serve`].
///
/// # Errors
/// A clear message when the address does not parse or cannot be bound.
pub async fn bind(addr: &str) -> Result<TcpListener, String> {
    zeroplay_net::bind(addr, &zeroplay_net::Connections::metrics())
        .await
        .map_err(|e| format!("metrics listener {addr}: {e}"))
}

/// A minimal blocking HTTP/1.1 client for tests, benchmarks and tools that call zeroplay's HTTP
/// endpoints without an HTTP client crate: one request per connection (`Connection: close`),
/// chunked bodies decoded. Returns the status code, the head (status line and headers) and
/// the body. Not for production use; browsers, Prometheus and `curl` are the real clients.
///
/// # Errors
/// Connection or I/O errors (reads time out after `timeout`), or an answer that is not HTTP.
pub fn request(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    ctype: &str,
    timeout: std::time::Duration,
) -> std::io::Result<(u16, String, Vec<u8>)> {
    request_with(addr, method, path, body, ctype, &[], timeout)
}

/// [`request`] with extra headers (`name`, `value`).
///
/// # Errors
/// As [`request`].
pub fn request_with(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    ctype: &str,
    headers: &[(&str, &str)],
    timeout: std::time::Duration,
) -> std::io::Result<(u16, String, Vec<u8>)> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect_timeout(&addr, timeout.min(std::time::Duration::from_secs(10)))?;
    s.set_read_timeout(Some(timeout))?;
    let body = body.unwrap_or(b"");
    let extra: String = headers.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{extra}\r\n",
        body.len()
    );
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    let mut out = Vec::new();
    s.read_to_end(&mut out)?;
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_string());
    let split = out.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| bad("no response head"))?;
    let head = String::from_utf8_lossy(&out[..split]).to_string();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| bad("no status"))?;
    let mut rest = out[split + 4..].to_vec();
    if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        rest = dechunk(&rest).ok_or_else(|| bad("bad chunked body"))?;
    }
    Ok((status, head, rest))
}

fn dechunk(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n")?;
        let n = usize::from_str_radix(std::str::from_utf8(&b[..eol]).ok()?.trim(), 16).ok()?;
        if n == 0 {
            return Some(out);
        }
        out.extend_from_slice(b.get(eol + 2..eol + 2 + n)?);
        b = b.get(eol + 2 + n + 2..)?;
    }
}

/// `GET path` with [`request`] (5 s timeout): the status code and the body as text.
///
/// # Errors
/// As [`request`].
pub fn http_get(addr: std::net::SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    let (status, _, body) =
        request(addr, "GET", path, None, "text/plain", std::time::Duration::from_secs(5))?;
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

/// The value of the sample `series` (a metric name with its labels exactly as exposed, e.g.
/// `zeroplay_worker_model_version{game="banqi"}`) in an OpenMetrics text.
pub fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.split(' ').next()?.parse().ok())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU64;

    use prometheus_client::metrics::family::Family;
    use prometheus_client::metrics::gauge::Gauge;
    use prometheus_client::metrics::histogram::Histogram;
    use std::time::Duration;

    use super::*;

    /// The status line and the body, off the runtime's threads.
    async fn get(addr: std::net::SocketAddr, path: &'static str) -> String {
        match tokio::task::spawn_blocking(move || {
            request(addr, "GET", path, None, "text/plain", Duration::from_secs(5))
        })
        .await
        .unwrap()
        {
            Ok((status, head, body)) => {
                format!("HTTP/1.1 {status}\n{head}\n{}", String::from_utf8_lossy(&body))
            }
            Err(e) => format!("error {e}"),
        }
    }

    #[test]
    fn live_values_are_read_at_scrape_time() {
        let n = Arc::new(AtomicU64::new(1));
        let mut r = Registry::with_prefix("t");
        let m = n.clone();
        r.register_collector(Box::new(
            Live::new()
                .counter("games", "Games", move || m.load(Ordering::Relaxed))
                .gauge("depth", "Queue depth", || 2.5)
                .labeled_gauge("best", "Best model", "game", || {
                    vec![("banqi".into(), 3.0), ("battlenumber".into(), 9.0)]
                }),
        ));
        assert!(encode(&r).contains("t_games_total 1\n"), "{}", encode(&r));
        n.store(41, Ordering::Relaxed);
        let text = encode(&r);
        assert!(text.contains("t_games_total 41\n"), "{text}");
        assert!(text.contains("# TYPE t_depth gauge\nt_depth 2.5\n"), "{text}");
        assert!(text.contains("t_best{game=\"banqi\"} 3.0\nt_best{game=\"battlenumber\"} 9.0\n"), "{text}");
        assert!(text.ends_with("# EOF\n"));
    }

    #[tokio::test]
    async fn endpoints_answer_and_readiness_follows_the_process() {
        let mut r = Registry::with_prefix("t");
        let versions = Family::<Vec<(String, String)>, Gauge>::default();
        r.register("model_version", "Model version by game", versions.clone());
        versions.get_or_create(&vec![("game".into(), "banqi".into())]).set(7);
        let h = Histogram::new(latency_buckets());
        r.register("ack_seconds", "Acknowledgement latency", h.clone());
        h.observe(0.003);
        let health = Health::new();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(listener, Arc::new(r), health.clone(), async {
            let _ = rx.await;
        }));

        let m = get(addr, "/metrics").await;
        assert!(m.starts_with("HTTP/1.1 200"), "{m}");
        assert!(m.contains("application/openmetrics-text"), "{m}");
        assert!(m.contains("t_model_version{game=\"banqi\"} 7"), "{m}");
        assert!(m.contains("t_ack_seconds_count 1"), "{m}");
        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.1 200"));
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 503"));
        health.set_ready(true);
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 200"));
        assert!(get(addr, "/nope").await.starts_with("HTTP/1.1 404"));

        let (code, body) =
            tokio::task::spawn_blocking(move || http_get(addr, "/metrics")).await.unwrap().unwrap();
        assert_eq!(code, 200);
        assert_eq!(sample(&body, "t_model_version{game=\"banqi\"}"), Some(7.0));
        assert_eq!(sample(&body, "t_ack_seconds_count"), Some(1.0));
        assert_eq!(sample(&body, "t_ack_second"), None, "a name's prefix is not the name");

        tx.send(()).unwrap();
        server.await.unwrap().unwrap();
        assert!(tokio::task::spawn_blocking(move || http_get(addr, "/healthz")).await.unwrap().is_err());
    }
}
