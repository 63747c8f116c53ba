//! A connection under the handshake and idle timeouts, closed at once when evicted.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use crate::table::{Table, Ticket};

/// Bytes a peer must send before an answer counts as the end of its handshake: an HTTP/2
/// preface is 24 bytes, a TLS ClientHello and an HTTP request line are longer.
const HANDSHAKE_BYTES: u64 = 24;

/// An accepted connection: reads and writes fail with `TimedOut` once the handshake or idle
/// timeout passes, and with `ConnectionAborted` once the guard evicts it.
#[derive(Debug)]
pub struct GuardedStream<S> {
    inner: S,
    ticket: Arc<Ticket>,
    table: Arc<Table>,
    /// Until established: the handshake deadline.
    handshake: Option<Pin<Box<Sleep>>>,
    idle: Pin<Box<Sleep>>,
    idle_after: Duration,
    last_io: Instant,
    read: u64,
    auto_establish: bool,
}

/// Marks a connection established from the protocol above it (a first request parsed).
#[derive(Clone, Debug)]
pub struct Mark(Arc<Ticket>);

impl Mark {
    /// The connection finished its handshake: it can no longer be evicted, and the handshake
    /// timeout no longer applies (its stream notices on its next read or write).
    pub fn establish(&self) {
        self.0.establish();
        self.0.conn.waker.wake();
    }

    /// The connection is receiving a request body: evictable again until the body is in
    /// ([`Ticket::unestablish`]).
    pub fn unestablish(&self) {
        self.0.unestablish();
    }
}

impl<S> GuardedStream<S> {
    pub(crate) fn new(
        inner: S,
        ticket: Ticket,
        handshake: Duration,
        idle: Duration,
        auto_establish: bool,
        table: Arc<Table>,
    ) -> Self {
        let now = Instant::now();
        GuardedStream {
            inner,
            ticket: Arc::new(ticket),
            table,
            handshake: Some(Box::pin(tokio::time::sleep_until(now + handshake))),
            idle: Box::pin(tokio::time::sleep_until(now + idle)),
            idle_after: idle,
            last_io: now,
            read: 0,
            auto_establish,
        }
    }

    /// A handle that marks this connection established.
    pub fn mark(&self) -> Mark {
        Mark(self.ticket.clone())
    }

    /// The connection underneath.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    fn established(&self) -> bool {
        self.handshake.is_none()
    }

    /// Err when the connection must close: evicted, or a timeout passed. Registers the task
    /// for eviction and for both deadlines.
    fn check(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        self.ticket.conn.waker.register(cx.waker());
        if self.ticket.evicted() {
            return Err(io::Error::new(io::ErrorKind::ConnectionAborted, "evicted to make room"));
        }
        if let Some(h) = &mut self.handshake {
            if self.ticket.is_established() {
                self.handshake = None;
            } else if h.as_mut().poll(cx).is_ready() {
                self.table.timed_out.fetch_add(1, Ordering::Relaxed);
                return Err(io::Error::new(io::ErrorKind::TimedOut, "handshake timeout"));
            }
        }
        // The idle deadline moves lazily: only when it fires is it checked against the last
        // read or write, so busy connections never touch the timer.
        while self.idle.as_mut().poll(cx).is_ready() {
            let due = self.last_io + self.idle_after;
            if due <= Instant::now() {
                self.table.timed_out.fetch_add(1, Ordering::Relaxed);
                return Err(io::Error::new(io::ErrorKind::TimedOut, "idle timeout"));
            }
            self.idle.as_mut().reset(due);
        }
        Ok(())
    }

    fn progressed(&mut self) {
        self.last_io = Instant::now();
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for GuardedStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let n = (buf.filled().len() - before) as u64;
                if n > 0 {
                    this.read += n;
                    this.progressed();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => match this.check(cx) {
                Ok(()) => Poll::Pending,
                Err(e) => Poll::Ready(Err(e)),
            },
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for GuardedStream<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if let Err(e) = this.check(cx) {
            return Poll::Ready(Err(e));
        }
        match Pin::new(&mut this.inner).poll_write(cx, data) {
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    this.progressed();
                    if this.auto_establish && !this.established() && this.read >= HANDSHAKE_BYTES {
                        this.ticket.establish();
                        this.handshake = None;
                    }
                }
                Poll::Ready(Ok(n))
            }
            other => other,
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl tonic::transport::server::Connected for GuardedStream<tokio::net::TcpStream> {
    type ConnectInfo = tonic::transport::server::TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}
