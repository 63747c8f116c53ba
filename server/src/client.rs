//! A minimal blocking HTTP/1.1 client for the server's own tests and benchmarks: one request
//! per connection (`Connection: close`), chunked bodies decoded, server-sent events split.
//! Not for production use; browsers and `curl` are the real clients.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
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

/// Sends one request to `addr`.
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
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(120)))?;
    let body = body.unwrap_or(b"");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
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
    Ok(Response { status, head, body: rest })
}

/// Sends JSON (or nothing) and returns the response.
///
/// # Errors
/// As [`request`].
pub fn json(addr: SocketAddr, method: &str, path: &str, body: Option<&Value>) -> std::io::Result<Response> {
    let b = body.map(|v| v.to_string().into_bytes());
    request(addr, method, path, b.as_deref(), "application/json")
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
