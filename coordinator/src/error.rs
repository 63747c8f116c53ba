//! Who may call, and every way a call can fail: [`CoordError`] becomes a `tonic::Status` here
//! and nowhere else.

use tonic::Status;

use crate::games::ValidationError;

/// Authenticated roles.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// A self-play worker.
    Worker,
    /// A trainer.
    Trainer,
    /// An administrator.
    Admin,
}

/// Every way a call can fail, mapped to a gRPC status in [`From<CoordError> for Status`].
#[derive(Debug, thiserror::Error)]
pub enum CoordError {
    /// No or unknown token.
    #[error("missing or unknown bearer token")]
    Unauthenticated,
    /// The role may not call this method.
    #[error("role {0:?} may not call this method")]
    PermissionDenied(Role),
    /// A submitted game is malformed or illegal.
    #[error("{0}")]
    InvalidGame(ValidationError),
    /// A bad request field.
    #[error("{0}")]
    InvalidArgument(String),
    /// The game (`game <id>`, a lease's game, the same moves) is already stored.
    #[error("{0} is already stored")]
    Duplicate(String),
    /// Too much at once (model uploads): try again later.
    #[error("{0}")]
    Busy(String),
    /// A worker acts on what another worker holds (a lease out to it).
    #[error("{0}")]
    NotYours(String),
    /// Too large.
    #[error("{0}")]
    Oversized(String),
    /// Not found.
    #[error("{0}")]
    NotFound(String),
    /// The database or disk failed; the caller should retry later.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// The caller speaks another protocol.
    #[error("{0}")]
    FailedPrecondition(String),
    /// The caller's messages came in slower than the listener's minimum transfer rate.
    #[error("{0}")]
    TooSlow(String),
    /// The worker's stored values disagreed with other workers' checks of them: it is
    /// quarantined (`checks.rs`).
    #[error("{0}")]
    Quarantined(String),
}

impl From<CoordError> for Status {
    fn from(e: CoordError) -> Status {
        let msg = e.to_string();
        match e {
            CoordError::Unauthenticated => Status::unauthenticated(msg),
            CoordError::PermissionDenied(_) | CoordError::Quarantined(_) => Status::permission_denied(msg),
            CoordError::InvalidGame(ValidationError::Oversized(_))
            | CoordError::Oversized(_)
            | CoordError::Busy(_) => Status::resource_exhausted(msg),
            CoordError::InvalidGame(_) | CoordError::InvalidArgument(_) => Status::invalid_argument(msg),
            CoordError::Duplicate(_) => Status::already_exists(msg),
            CoordError::NotFound(_) => Status::not_found(msg),
            CoordError::Unavailable(_) => Status::unavailable(msg),
            CoordError::TooSlow(_) => Status::deadline_exceeded(msg),
            // Not now: a worker whose lease expired while it played retries its game, which is
            // taken once the lease is back in the queue, or dropped once another finishes it.
            CoordError::FailedPrecondition(_) | CoordError::NotYours(_) => Status::failed_precondition(msg),
        }
    }
}
