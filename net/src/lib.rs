//! Guarded TCP listeners for the zeroplay servers (the coordinator's gRPC port, the play
//! server, the metrics and health endpoints).
//!
//! A plain listener lets anyone without credentials hold connections that send nothing (or
//! one byte now and then) until the process runs out of file descriptors: new workers then
//! time out, health checks stop answering and storage fails with "Too many open files"
//! (issue 24). A [`GuardedListener`] bounds that:
//!
//! - **Caps.** At most [`Connections::max`] connections in all and
//!   [`Connections::per_address`] from one address (IPv6 grouped by /64, since one host
//!   holds a whole /64). The cap in all is lowered to fit the file-descriptor limit less
//!   [`Connections::fd_reserve`], so Parquet files, the database and model files always have
//!   descriptors left ([`raise_fd_limit`] first raises the soft limit to the hard one).
//! - **Eviction, not lock-out.** When a cap is full, a new connection takes the place of the
//!   oldest one that has not yet finished its handshake (first request, or TLS/HTTP/2
//!   preface and an answer). A flood of idle connections therefore never keeps a real
//!   client out. When every held connection is established, an address over its fair share
//!   of a full table (or the newcomer's own full address) gives up its oldest untrusted
//!   connection, so a few addresses holding established, pinging connections cannot keep
//!   the rest out either; connections that carried an authenticated request
//!   ([`Guard::trust`]) are never given up (see the `table` module).
//! - **Timeouts.** A connection must be established within [`Connections::handshake_ms`],
//!   and one with no bytes in either direction for [`Connections::idle_s`] is closed.
//!
//! The HTTP servers serve a guarded listener with [`serve_http`] (hyper's HTTP/1 with a
//! header-read timeout, so a request trickled a byte at a time is cut off too); the
//! coordinator feeds [`GuardedListener::into_incoming`] to tonic.

mod body;
mod http;
mod stream;
mod table;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use tracing::{info, warn};

pub use body::{BodyLimits, BoxError, DeadlineBody, grpc_body_deadline};
pub use http::serve_http;
pub use stream::{GuardedStream, Mark};
use table::Table;
pub use table::{GuardStats, Ticket};

/// Limits on the connections one listener holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Connections {
    /// Most connections held at once (lowered at start to fit the process's file-descriptor
    /// limit less `fd_reserve`).
    pub max: usize,
    /// Most connections held at once from one address (an IPv6 /64 counts as one address).
    /// Behind a reverse proxy every client has the proxy's address: raise it there.
    pub per_address: usize,
    /// A new connection must finish its handshake (send a first request, or its TLS or
    /// HTTP/2 preface and get an answer) within this many milliseconds, or it is closed.
    pub handshake_ms: u64,
    /// A connection with no bytes in either direction for this many seconds is closed.
    pub idle_s: u64,
    /// A request body gets this many milliseconds, plus a second for every
    /// `min_body_bytes_per_s` bytes it sends: a slower one fails (HTTP: its connection is
    /// closed; gRPC: the call ends with DEADLINE_EXCEEDED) and counts as a slow request.
    pub body_ms: u64,
    /// The minimum transfer rate of a request body (bytes per second), see `body_ms`.
    pub min_body_bytes_per_s: u64,
    /// File descriptors kept out of the connection cap for everything else the process
    /// opens (Parquet files, the database, model files, logs).
    pub fd_reserve: u64,
    /// The kernel's queue of connections whose TCP handshake is done but that the server
    /// has not yet accepted (listen(2)'s backlog; Linux caps it at `net.core.somaxconn`).
    /// When it overflows, the kernel drops handshakes: a client whose last ACK is dropped
    /// believes it is connected to a server that never heard of it. Under a flood of new
    /// connections the guard accepts (and evicts) fast, but only a queue longer than the
    /// flood keeps real clients' handshakes from being dropped meanwhile (issue 24).
    pub backlog: u32,
}

impl Default for Connections {
    fn default() -> Self {
        Connections {
            max: 4096,
            per_address: 64,
            handshake_ms: 10_000,
            idle_s: 120,
            body_ms: 10_000,
            min_body_bytes_per_s: 1024,
            fd_reserve: 256,
            backlog: 1024,
        }
    }
}

impl Connections {
    /// The small limits of a metrics and health listener (scraped by a few monitors).
    pub fn metrics() -> Self {
        Connections {
            max: 256,
            per_address: 32,
            handshake_ms: 5_000,
            idle_s: 60,
            body_ms: 5_000,
            min_body_bytes_per_s: 1024,
            fd_reserve: 256,
            backlog: 256,
        }
    }

    /// Checks the values make sense.
    ///
    /// # Errors
    /// [`ConnectionsError`] naming the field.
    pub fn validate(&self) -> Result<(), ConnectionsError> {
        if self.max == 0 {
            return Err(ConnectionsError("connections.max must be at least 1".into()));
        }
        if self.per_address == 0 || self.per_address > self.max {
            return Err(ConnectionsError(format!(
                "connections.per_address must be between 1 and connections.max ({}), got {}",
                self.max, self.per_address
            )));
        }
        if !(100..=600_000).contains(&self.handshake_ms) {
            return Err(ConnectionsError(format!(
                "connections.handshake_ms must be between 100 and 600000, got {}",
                self.handshake_ms
            )));
        }
        if !(1..=86_400).contains(&self.idle_s) {
            return Err(ConnectionsError(format!(
                "connections.idle_s must be between 1 and 86400, got {}",
                self.idle_s
            )));
        }
        if !(100..=600_000).contains(&self.body_ms) || self.min_body_bytes_per_s == 0 {
            return Err(ConnectionsError(format!(
                "connections.body_ms must be between 100 and 600000 (got {}) and min_body_bytes_per_s at least 1",
                self.body_ms
            )));
        }
        if !(16..=65_535).contains(&self.backlog) {
            return Err(ConnectionsError(format!(
                "connections.backlog must be between 16 and 65535, got {}",
                self.backlog
            )));
        }
        Ok(())
    }

    /// The limits a request body is held to.
    pub fn body_limits(&self) -> BodyLimits {
        BodyLimits { base: Duration::from_millis(self.body_ms), min_rate: self.min_body_bytes_per_s }
    }

    /// The handshake timeout.
    pub fn handshake(&self) -> Duration {
        Duration::from_millis(self.handshake_ms)
    }

    /// The idle timeout.
    pub fn idle(&self) -> Duration {
        Duration::from_secs(self.idle_s)
    }
}

/// Binds a listening socket on `addr` (`host:port`; port 0 picks a free port) with `cfg`'s
/// accept queue ([`Connections::backlog`]) and `SO_REUSEADDR` (as tokio's `bind` sets it, so a
/// restarted server rebinds at once). Tries each address `addr` resolves to, in order.
///
/// # Errors
/// The resolver's error, or the last address's bind or listen error.
pub async fn bind(addr: &str, cfg: &Connections) -> std::io::Result<TcpListener> {
    let mut last = None;
    for a in tokio::net::lookup_host(addr).await? {
        let socket =
            if a.is_ipv4() { tokio::net::TcpSocket::new_v4() } else { tokio::net::TcpSocket::new_v6() };
        let bound = socket.and_then(|s| {
            s.set_reuseaddr(true)?;
            s.bind(a)?;
            s.listen(cfg.backlog)
        });
        match bound {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{addr} resolves to no address"))
    }))
}

/// A [`Connections`] value out of range.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConnectionsError(pub String);

/// Raises the soft limit on open files to the hard limit (as Go's runtime does) and returns
/// the soft limit now in force (`None` where there is none).
pub fn raise_fd_limit() -> Option<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let lim = getrlimit(Resource::Nofile);
    if lim.current != lim.maximum {
        let raised = rustix::process::Rlimit { current: lim.maximum, maximum: lim.maximum };
        if let Err(e) = setrlimit(Resource::Nofile, raised) {
            warn!(error = %e, "could not raise the open-files limit to its hard limit");
            return lim.current;
        }
    }
    getrlimit(Resource::Nofile).current
}

/// The cap in all that `cfg` gives under a soft open-files limit of `fd_limit`: `cfg.max`,
/// lowered so that `fd_reserve` descriptors stay free (never below 8).
pub fn effective_max(cfg: &Connections, fd_limit: Option<u64>) -> usize {
    match fd_limit {
        Some(limit) => {
            let room = limit.saturating_sub(cfg.fd_reserve).max(8);
            cfg.max.min(usize::try_from(room).unwrap_or(usize::MAX))
        }
        None => cfg.max,
    }
}

/// Groups peers by address: an IPv4 address, or an IPv6 /64 (IPv4-mapped IPv6 as IPv4).
pub fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut s = v6.segments();
                s[4..].fill(0);
                IpAddr::V6(s.into())
            }
        },
    }
}

/// The admission side of a guarded listener: caps, eviction and counters. Cheap to clone;
/// clones share one table.
#[derive(Clone, Debug)]
pub struct Guard {
    table: Arc<Table>,
    cfg: Connections,
}

impl Guard {
    /// A guard for `cfg`, its cap in all fitted to the open-files limit (raised first).
    pub fn new(cfg: Connections, what: &str) -> Self {
        let fd_limit = raise_fd_limit();
        let max = effective_max(&cfg, fd_limit);
        if max < cfg.max {
            warn!(
                listener = what,
                configured = cfg.max,
                max,
                fd_limit = ?fd_limit,
                fd_reserve = cfg.fd_reserve,
                "connection cap lowered to fit the open-files limit"
            );
        }
        Guard::with_max(cfg, max)
    }

    /// A guard with the cap in all set to `max` as given (tests; [`Guard::new`] otherwise).
    pub fn with_max(cfg: Connections, max: usize) -> Self {
        let per = cfg.per_address.min(max);
        Guard { table: Arc::new(Table::new(max, per)), cfg }
    }

    /// Takes a place for a connection from `peer`, making way where a cap is full (the oldest
    /// unestablished connection, else an untrusted one from an address over its share), or
    /// `None` when nobody may make way.
    pub fn admit(&self, peer: SocketAddr) -> Option<Ticket> {
        self.table.admit(peer, address_key(peer.ip()))
    }

    /// Marks the connection from `peer` trusted: it carried an authenticated request (the
    /// coordinator calls this for every request with a valid token), so it is established
    /// and no unauthenticated connection can take its place. False when this guard holds
    /// no connection from `peer`.
    pub fn trust(&self, peer: SocketAddr) -> bool {
        self.table.trust(peer)
    }

    /// Lets established connections that have not been trusted make way for newcomers (an
    /// address over its share of a full table, or at its own cap, gives up its oldest): for
    /// a listener whose real clients all authenticate and are marked with [`Guard::trust`].
    pub fn displace_untrusted(&self) {
        self.table.set_displace(true);
    }

    /// The limits this guard enforces.
    pub fn config(&self) -> &Connections {
        &self.cfg
    }

    /// The cap in all in force.
    pub fn max(&self) -> usize {
        self.table.max()
    }

    /// Counters: connections held, accepted, refused, evicted, timed out.
    pub fn stats(&self) -> GuardStats {
        self.table.stats()
    }

    /// Wraps `io` (admitted with `ticket`) in the handshake and idle timeouts. With
    /// `auto_establish` the connection counts as established once it has sent 24 bytes and
    /// been answered (a TLS or HTTP/2 handshake); otherwise the protocol marks it through
    /// [`GuardedStream::mark`].
    pub fn wrap<S>(&self, io: S, ticket: Ticket, auto_establish: bool) -> GuardedStream<S> {
        GuardedStream::new(
            io,
            ticket,
            self.cfg.handshake(),
            self.cfg.idle(),
            auto_establish,
            self.table.clone(),
        )
    }
}

/// A TCP listener whose connections pass a [`Guard`].
#[derive(Debug)]
pub struct GuardedListener {
    listener: TcpListener,
    guard: Guard,
    auto_establish: bool,
}

impl GuardedListener {
    /// Guards `listener` with `cfg` (`what` names it in logs).
    pub fn new(listener: TcpListener, cfg: Connections, what: &str) -> Self {
        let guard = Guard::new(cfg, what);
        info!(listener = what, max = guard.max(), per_address = guard.cfg.per_address, "connection limits");
        GuardedListener { listener, guard, auto_establish: false }
    }

    /// Guards `listener` with a guard made already (its table shared with the caller).
    pub fn with_guard(listener: TcpListener, guard: Guard) -> Self {
        GuardedListener { listener, guard, auto_establish: false }
    }

    /// The guard (for its counters).
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// The address listened on.
    ///
    /// # Errors
    /// The socket's error.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The next admitted connection. Refused connections are closed at once; accept errors
    /// (out of file descriptors above all) are logged and retried after a pause, so the
    /// listener never spins.
    pub async fn accept(&mut self) -> (GuardedStream<tokio::net::TcpStream>, SocketAddr) {
        let mut last_warn: Option<std::time::Instant> = None;
        loop {
            match self.listener.accept().await {
                Ok((io, peer)) => {
                    let Some(ticket) = self.guard.admit(peer) else {
                        drop(io);
                        continue;
                    };
                    let _ = io.set_nodelay(true);
                    return (self.guard.wrap(io, ticket, self.auto_establish), peer);
                }
                Err(e) if is_per_connection(&e) => {}
                Err(e) => {
                    if last_warn.is_none_or(|t| t.elapsed() > Duration::from_secs(5)) {
                        warn!(error = %e, "accept failed; pausing before the next accept");
                        last_warn = Some(std::time::Instant::now());
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    /// The accepted connections as a stream for tonic's `serve_with_incoming`, each
    /// established once its TLS or HTTP/2 handshake has been answered.
    pub fn into_incoming(
        mut self,
    ) -> impl tokio_stream::Stream<Item = Result<GuardedStream<tokio::net::TcpStream>, std::io::Error>> + Send
    {
        self.auto_establish = true;
        incoming_channel(self)
    }
}

/// Accepts on its own task into a channel: tonic polls a stream, and `accept` loops.
fn incoming_channel(
    listener: GuardedListener,
) -> impl tokio_stream::Stream<Item = Result<GuardedStream<tokio::net::TcpStream>, std::io::Error>> + Send {
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        let mut listener = listener;
        loop {
            let (io, _) = tokio::select! {
                c = listener.accept() => c,
                () = tx.closed() => return,
            };
            if tx.send(Ok(io)).await.is_err() {
                return;
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

/// Errors that concern one connection only (the peer gave up before it was accepted).
fn is_per_connection(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_the_reserve_free() {
        let cfg = Connections { max: 4096, fd_reserve: 256, ..Connections::default() };
        assert_eq!(effective_max(&cfg, Some(1024)), 768);
        assert_eq!(effective_max(&cfg, Some(1 << 20)), 4096);
        assert_eq!(effective_max(&cfg, Some(100)), 8);
        assert_eq!(effective_max(&cfg, None), 4096);
    }

    /// Connects up to `n` clients to `l` without accepting any (each given 300 ms: a dropped
    /// SYN is retried only after a second), then accepts what came; returns both counts.
    async fn queued_without_accepting(l: &TcpListener, n: usize) -> (usize, usize) {
        let addr = l.local_addr().unwrap();
        let mut clients = Vec::new();
        for _ in 0..n {
            match tokio::time::timeout(Duration::from_millis(300), tokio::net::TcpStream::connect(addr)).await
            {
                Ok(Ok(c)) => clients.push(c),
                _ => break,
            }
        }
        let mut accepted = 0;
        while let Ok(Ok(_)) = tokio::time::timeout(Duration::from_millis(300), l.accept()).await {
            accepted += 1;
        }
        (clients.len(), accepted)
    }

    #[tokio::test]
    async fn the_accept_queue_holds_the_configured_backlog() {
        // A flood of 300 handshakes before the server accepts one: all queue and are accepted.
        let cfg = Connections::default();
        let l = bind("127.0.0.1:0", &cfg).await.unwrap();
        assert_eq!(queued_without_accepting(&l, 300).await, (300, 300));
        // The same flood against a short queue: handshakes past it are dropped (the test
        // above can fail).
        let short = Connections { backlog: 16, ..cfg };
        let l = bind("127.0.0.1:0", &short).await.unwrap();
        let (connected, accepted) = queued_without_accepting(&l, 300).await;
        assert!(connected < 100, "{connected} connected to a queue of 16");
        assert!(accepted <= connected);
        assert!(bind("127.0.0.1", &Connections::default()).await.is_err(), "no port");
    }

    #[test]
    fn ipv6_peers_are_grouped_by_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(address_key(a), address_key(b));
        assert_ne!(address_key(a), address_key(c));
        let mapped: IpAddr = "::ffff:10.0.0.7".parse().unwrap();
        assert_eq!(address_key(mapped), "10.0.0.7".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn bad_limits_are_named() {
        let e = Connections { per_address: 0, ..Connections::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("per_address"), "{e}");
        let e = Connections { backlog: 0, ..Connections::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("connections.backlog"), "{e}");
        let e = Connections { handshake_ms: 10, ..Connections::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("handshake_ms"), "{e}");
        assert!(Connections::default().validate().is_ok());
        assert!(Connections::metrics().validate().is_ok());
    }
}
