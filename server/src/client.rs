//! A minimal blocking HTTP/1.1 client for the server's own tests and benchmarks: one request
//! per connection (`Connection: close`), chunked bodies decoded, server-sent events split.
//! Not for production use; browsers and `curl` are the real clients.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// A response.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// The head (status line and headers) as text.
    pub head: String,
    /// The body (de-chunked).
    pub body: Vec<u8>,
}

impl Response {
    /// The body as JSON (`null` when empty).
    ///
    /// # Panics
    /// If the body is not JSON.
    pub fn json(&self) -> Value {
        if self.body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&self.body).expect("a JSON body")
        }
    }

    /// The body as server-sent events: (event name, JSON data).
    ///
    /// # Panics
    /// If an event's data is not JSON.
    pub fn events(&self) -> Vec<(String, Value)> {
        let text = String::from_utf8_lossy(&self.body);
        let mut out = Vec::new();
        for block in text.split("\n\n") {
            let (mut ev, mut data) = (String::new(), String::new());
            for line in block.lines() {
                if let Some(e) = line.strip_prefix("event:") {
                    ev = e.trim().into();
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push_str(d.trim());
                }
            }
            if !data.is_empty() {
                out.push((ev, serde_json::from_str(&data).expect("JSON event data")));
            }
        }
        out
    }
}

/// Sends one request to `addr` ([`zeroplay_telemetry::request`], 120 s read timeout).
///
/// # Errors
/// Connection or I/O errors, or a response that is not HTTP.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    ctype: &str,
) -> std::io::Result<Response> {
    let (status, head, body) =
        zeroplay_telemetry::request(addr, method, path, body, ctype, Duration::from_secs(120))?;
    Ok(Response { status, head, body })
}

/// Sends JSON (or nothing) and returns the response.
///
/// # Errors
/// As [`request`].
pub fn json(addr: SocketAddr, method: &str, path: &str, body: Option<&Value>) -> std::io::Result<Response> {
    let b = body.map(|v| v.to_string().into_bytes());
    request(addr, method, path, b.as_deref(), "application/json")
}

/// A player's client: it keeps the secret of every game it creates (`POST /api/games`) and
/// sends it ([`crate::SECRET_HEADER`]) with every later request about that game, as the web
/// client does. A clone is the same player (it shares the secrets); another `Player` is a
/// stranger to those games.
#[derive(Clone, Debug)]
pub struct Player {
    addr: SocketAddr,
    secrets: Arc<Mutex<HashMap<String, String>>>,
}

impl Player {
    /// A player of the server at `addr`, with no games yet.
    pub fn new(addr: SocketAddr) -> Player {
        Player { addr, secrets: Arc::default() }
    }

    /// The secret of game `id`, if this player created it.
    pub fn secret(&self, id: &str) -> Option<String> {
        self.secrets.lock().expect("not poisoned").get(id).cloned()
    }

    /// Sends one request (with the game's secret when the path names a game of this player).
    ///
    /// # Errors
    /// As [`request`].
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
        ctype: &str,
    ) -> std::io::Result<Response> {
        let id = path.strip_prefix("/api/games/").map(|rest| rest.split(['/', '?']).next().unwrap_or(""));
        let secret = id.and_then(|id| self.secret(id));
        let headers: Vec<(&str, &str)> =
            secret.as_deref().map(|s| (crate::SECRET_HEADER, s)).into_iter().collect();
        let (status, head, body) = zeroplay_telemetry::request_with(
            self.addr,
            method,
            path,
            body,
            ctype,
            &headers,
            Duration::from_secs(120),
        )?;
        let r = Response { status, head, body };
        if method == "POST" && path == "/api/games" && r.status == 201 {
            let v = r.json();
            if let (Some(id), Some(secret)) = (v["id"].as_str(), v["secret"].as_str()) {
                self.secrets.lock().expect("not poisoned").insert(id.to_string(), secret.to_string());
            }
        }
        Ok(r)
    }

    /// Sends JSON (or nothing) and returns the response.
    ///
    /// # Errors
    /// As [`request`].
    pub fn json(&self, method: &str, path: &str, body: Option<&Value>) -> std::io::Result<Response> {
        let b = body.map(|v| v.to_string().into_bytes());
        self.request(method, path, b.as_deref(), "application/json")
    }
}
