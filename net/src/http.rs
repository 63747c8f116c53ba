//! An axum router served over HTTP/1 from a guarded listener.

use std::future::Future;
use std::time::Duration;

use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tower::ServiceExt;
use tracing::debug;

use crate::GuardedListener;
use crate::body::DeadlineBody;

/// How long open requests get to finish once shutdown begins.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serves `router` on `listener` until `shutdown` completes, then lets open requests finish
/// (for up to 10 s). Handlers can extract `ConnectInfo<SocketAddr>`.
///
/// Each request's header must arrive whole within the listener's `handshake_ms` (hyper's
/// header-read timeout, which also bounds a kept-alive connection's wait for its next
/// request), so a request trickled in a byte at a time is cut off. Its body must keep up with
/// the listener's minimum transfer rate (`body_ms`, `min_body_bytes_per_s`): a slower body
/// fails, its connection is closed and counted (`slow_requests`). A connection is established
/// (no longer evictable to make room) once a whole request is in: a request without a body
/// at once, one with a body when the body ends; while a body arrives it is evictable again,
/// so trickled bodies cannot hold the places new clients need.
pub async fn serve_http(
    mut listener: GuardedListener,
    router: axum::Router,
    shutdown: impl Future<Output = ()>,
) {
    let header_timeout = listener.guard().config().handshake();
    let limits = listener.guard().config().body_limits();
    let table = listener.guard().table.clone();
    let (closing_tx, closing_rx) = tokio::sync::watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let (io, peer) = tokio::select! {
            c = listener.accept() => c,
            () = &mut shutdown => break,
        };
        let router = router.clone();
        let mut closing = closing_rx.clone();
        let table = table.clone();
        tokio::spawn(async move {
            let mark = io.mark();
            let slow = std::sync::Arc::new(tokio::sync::Notify::new());
            let too_slow = slow.clone();
            let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                let body_done = if hyper::body::Body::is_end_stream(req.body()) {
                    mark.establish();
                    None
                } else {
                    mark.unestablish();
                    Some(mark.clone())
                };
                let (slow, table) = (slow.clone(), table.clone());
                let mut req = req.map(move |b| {
                    axum::body::Body::new(
                        DeadlineBody::new(b, limits, Some(slow), Some(table)).on_end(body_done),
                    )
                });
                req.extensions_mut().insert(ConnectInfo(peer));
                let (router, mark) = (router.clone(), mark.clone());
                async move {
                    let answer = router.oneshot(req).await;
                    // Answered: the request is whole (or its handler did not want the body).
                    mark.establish();
                    answer
                }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(io), service);
            tokio::pin!(conn);
            let closed = tokio::select! {
                r = conn.as_mut() => Some(r),
                () = too_slow.notified() => {
                    // Dropping the connection closes it, whatever its request was doing.
                    debug!(%peer, "request body too slow: connection closed");
                    return;
                }
                r = closing.wait_for(|c| *c) => {
                    drop(r);
                    None
                }
            };
            let result = match closed {
                Some(r) => r,
                None => {
                    conn.as_mut().graceful_shutdown();
                    conn.await
                }
            };
            if let Err(e) = result {
                debug!(%peer, error = %e, "connection closed");
            }
        });
    }
    // Stop accepting, ask every connection to finish its request and close, and wait.
    drop(listener);
    let _ = closing_tx.send(true);
    drop(closing_rx);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, closing_tx.closed()).await;
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use axum::routing::get;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpSocket, TcpStream};

    use super::*;
    use crate::{Connections, Guard};

    async fn connect_from(source: &str, to: SocketAddr) -> TcpStream {
        let s = TcpSocket::new_v4().unwrap();
        s.bind(format!("{source}:0").parse().unwrap()).unwrap();
        s.connect(to).await.unwrap()
    }

    /// Whether the server closed `c` within `within` (EOF or reset on read).
    async fn closed_within(c: &mut TcpStream, within: Duration) -> bool {
        let mut buf = [0u8; 512];
        loop {
            match tokio::time::timeout(within, c.read(&mut buf)).await {
                Err(_) => return false,
                Ok(Ok(0) | Err(_)) => return true,
                Ok(Ok(_)) => {}
            }
        }
    }

    async fn get_ok(from: &str, to: SocketAddr) -> String {
        let mut c = connect_from(from, to).await;
        c.write_all(b"GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await.unwrap();
        let mut out = String::new();
        c.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn idle_and_trickling_connections_are_cut_off_and_real_requests_still_answer() {
        let cfg = Connections {
            max: 40,
            per_address: 8,
            handshake_ms: 600,
            idle_s: 5,
            fd_reserve: 0,
            ..Connections::default()
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let guarded = GuardedListener::with_guard(listener, Guard::with_max(cfg, 40));
        let guard = guarded.guard().clone();
        let router = axum::Router::new().route(
            "/who",
            get(|ConnectInfo(peer): ConnectInfo<SocketAddr>| async move { peer.ip().to_string() }),
        );
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve_http(guarded, router, async move {
            let _ = stopped.await;
        }));

        // 30 idle connections from one address: only the 8 newest stay; the rest are closed
        // at once, the 8 at the handshake timeout.
        let mut idle = Vec::new();
        for _ in 0..30 {
            idle.push(connect_from("127.0.0.2", addr).await);
        }
        // A request trickled a byte at a time from another address.
        let mut trickle = connect_from("127.0.0.3", addr).await;
        let start = std::time::Instant::now();
        // A real client from a third address is answered, with its address.
        assert!(get_ok("127.0.0.1", addr).await.ends_with("127.0.0.1"));
        let mut early = 0;
        for c in &mut idle[..22] {
            early += usize::from(closed_within(c, Duration::from_millis(300)).await);
        }
        assert_eq!(early, 22, "connections beyond the per-address cap close at once");
        let trickling = tokio::spawn(async move {
            for b in b"GET /who HTTP/1.1\r\nHost: x\r\n".iter().cycle() {
                if trickle.write_all(&[*b]).await.is_err() {
                    return start.elapsed();
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            unreachable!()
        });
        for c in &mut idle[22..] {
            assert!(
                closed_within(c, Duration::from_secs(3)).await,
                "an idle connection outlived the handshake timeout"
            );
        }
        let cut =
            tokio::time::timeout(Duration::from_secs(5), trickling).await.expect("trickle cut off").unwrap();
        assert!(cut < Duration::from_secs(3), "the trickled request was cut off after {cut:?}");
        assert!(start.elapsed() < Duration::from_secs(4));
        let s = guard.stats();
        assert!(s.evicted >= 22 && s.timed_out >= 8, "{s:?}");
        assert!(
            get_ok("127.0.0.2", addr).await.ends_with("127.0.0.2"),
            "the flooding address may connect again"
        );

        let _ = stop.send(());
        tokio::time::timeout(Duration::from_secs(5), server).await.unwrap().unwrap();
        assert_eq!(guard.stats().open, 0);
    }

    #[tokio::test]
    async fn established_connections_are_never_evicted() {
        let cfg = Connections {
            max: 4,
            per_address: 4,
            handshake_ms: 5_000,
            idle_s: 30,
            fd_reserve: 0,
            ..Connections::default()
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let guarded = GuardedListener::with_guard(listener, Guard::with_max(cfg, 4));
        let guard = guarded.guard().clone();
        let router = axum::Router::new().route("/who", get(|| async { "ok" }));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve_http(guarded, router, async move {
            let _ = stopped.await;
        }));
        // Four kept-alive connections, each with one answered request.
        let mut kept = Vec::new();
        for _ in 0..4 {
            let mut c = connect_from("127.0.0.1", addr).await;
            c.write_all(b"GET /who HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
            let mut buf = [0u8; 256];
            assert!(c.read(&mut buf).await.unwrap() > 0);
            kept.push(c);
        }
        // A fifth is refused (closed at once); the four stay open.
        let mut fifth = connect_from("127.0.0.1", addr).await;
        assert!(closed_within(&mut fifth, Duration::from_secs(1)).await);
        for c in &mut kept {
            assert!(!closed_within(c, Duration::from_millis(100)).await);
        }
        assert_eq!(guard.stats().refused, 1);
        let _ = stop.send(());
        tokio::time::timeout(Duration::from_secs(5), server).await.unwrap().unwrap();
    }
}
