//! A request body that must keep up: it fails (and the connection can be closed) once it has
//! taken longer than `base + received / min_rate`, so a client sending a body a byte every few
//! seconds cannot hold a connection (and its slot under the cap) for long (issue 44).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body, Bytes, Frame, SizeHint};
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};

use crate::stream::Mark;
use crate::table::Table;

/// A boxed error, as hyper and tonic take them.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a slow body reports: a gRPC status where tonic reads one (`DEADLINE_EXCEEDED`), and a
/// plain message for HTTP.
fn too_slow(received: u64, elapsed: Duration) -> BoxError {
    let msg = format!(
        "request body too slow: {received} bytes in {:.1} s (below the listener's minimum transfer rate)",
        elapsed.as_secs_f64()
    );
    Box::new(tonic::Status::deadline_exceeded(msg))
}

/// The limits: a body gets `base`, plus a second for every `min_rate` bytes it has sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BodyLimits {
    /// The allowance every body gets.
    pub base: Duration,
    /// Bytes per second that earn more time.
    pub min_rate: u64,
}

impl BodyLimits {
    fn allowed(&self, received: u64) -> Duration {
        self.base + Duration::from_secs_f64(received as f64 / self.min_rate.max(1) as f64)
    }
}

/// `inner` held to `limits` (see the module documentation). When it falls behind, the body
/// fails, `slow` (if any) is notified — the connection's task then closes the connection — and
/// the listener's `slow_requests` count goes up.
pub struct DeadlineBody<B> {
    inner: B,
    limits: BodyLimits,
    start: Instant,
    received: u64,
    sleep: Pin<Box<Sleep>>,
    slow: Option<Arc<Notify>>,
    table: Option<Arc<Table>>,
    on_end: Option<Mark>,
    failed: bool,
}

impl<B> DeadlineBody<B> {
    /// Marks the connection established once the body has ended.
    pub(crate) fn on_end(mut self, mark: Option<Mark>) -> Self {
        self.on_end = mark;
        self
    }

    pub(crate) fn new(
        inner: B,
        limits: BodyLimits,
        slow: Option<Arc<Notify>>,
        table: Option<Arc<Table>>,
    ) -> Self {
        let start = Instant::now();
        DeadlineBody {
            inner,
            limits,
            start,
            received: 0,
            sleep: Box::pin(tokio::time::sleep_until(start + limits.allowed(0))),
            slow,
            table,
            on_end: None,
            failed: false,
        }
    }
}

impl<B> Body for DeadlineBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if this.failed {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(d) = frame.data_ref() {
                    this.received += d.len() as u64;
                    let deadline = this.start + this.limits.allowed(this.received);
                    this.sleep.as_mut().reset(deadline);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => {
                if let Some(m) = this.on_end.take() {
                    m.establish();
                }
                Poll::Ready(None)
            }
            Poll::Pending => {
                if this.sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.failed = true;
                if let Some(t) = &this.table {
                    t.slow_requests.fetch_add(1, Ordering::Relaxed);
                }
                if let Some(n) = this.slow.take() {
                    n.notify_one();
                }
                Poll::Ready(Some(Err(too_slow(this.received, this.start.elapsed()))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.failed || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// For a tonic server: every request body held to `guard`'s body limits (a slow one ends its
/// call with DEADLINE_EXCEEDED and counts in the guard's `slow_requests`). Use as
/// `Server::builder().layer(grpc_body_deadline(&guard))`.
pub fn grpc_body_deadline(
    guard: &crate::Guard,
) -> tower::util::MapRequestLayer<
    impl Fn(hyper::Request<tonic::body::Body>) -> hyper::Request<tonic::body::Body> + Clone + use<>,
> {
    let limits = guard.config().body_limits();
    let table = guard.table.clone();
    tower::util::MapRequestLayer::new(move |req: hyper::Request<tonic::body::Body>| {
        let table = table.clone();
        req.map(move |b| tonic::body::Body::new(DeadlineBody::new(b, limits, None, Some(table))))
    })
}
