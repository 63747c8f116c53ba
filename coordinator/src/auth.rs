//! Bearer-token authentication: each token names a [`Role`], and each method lists the roles
//! that may call it.

use std::sync::Arc;

use tonic::{Request, Status};

use crate::config::CoordinatorConfig;
use crate::error::{CoordError, Role};

/// Checks the bearer token and records the caller's role in the request's extensions. Used as
/// a tonic interceptor in front of the whole service.
#[derive(Clone)]
pub struct AuthInterceptor {
    tokens: Arc<Vec<(String, Role)>>,
    /// The listener's guard: a connection that carries a valid token is trusted there, so no
    /// unauthenticated connection can take its place (issue 42).
    guard: Option<zeroplay_net::Guard>,
}

impl AuthInterceptor {
    /// An interceptor for the configured tokens, trusting authenticated connections in
    /// `guard`.
    pub fn new(cfg: &CoordinatorConfig, guard: Option<zeroplay_net::Guard>) -> Self {
        let a = &cfg.auth;
        AuthInterceptor {
            tokens: Arc::new(vec![
                (a.worker_token.clone(), Role::Worker),
                (a.trainer_token.clone(), Role::Trainer),
                (a.admin_token.clone(), Role::Admin),
            ]),
            guard,
        }
    }
}

impl tonic::service::Interceptor for AuthInterceptor {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        let token = req
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_owned);
        let role = token.and_then(|t| {
            // Compare every token fully so timing does not reveal a prefix.
            self.tokens.iter().fold(None, |found, (k, r)| {
                if constant_eq(k.as_bytes(), t.as_bytes()) { Some(*r) } else { found }
            })
        });
        match role {
            Some(r) => {
                if let (Some(guard), Some(peer)) = (&self.guard, req.remote_addr()) {
                    guard.trust(peer);
                }
                req.extensions_mut().insert(r);
                Ok(req)
            }
            None => Err(CoordError::Unauthenticated.into()),
        }
    }
}

fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub(crate) fn require<T>(req: &Request<T>, allowed: &[Role]) -> Result<Role, CoordError> {
    let role = *req.extensions().get::<Role>().ok_or(CoordError::Unauthenticated)?;
    if allowed.contains(&role) { Ok(role) } else { Err(CoordError::PermissionDenied(role)) }
}
