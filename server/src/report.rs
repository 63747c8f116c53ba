//! `/report` and `/report.json`: the designer's balance report that `zeroplay report` wrote,
//! read from disk on every request, so a report written again shows at once. Without one, the
//! page says how to make it.

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

use crate::{ApiError, AppState};

/// The report's directory: the configured one, else the report of the run a served model file
/// comes from (`runs/NAME/trainer/models/…` → `runs/NAME/report`), if it has been written.
fn dir(state: &AppState) -> Option<PathBuf> {
    if let Some(d) = &state.cfg.report {
        return Some(d.clone());
    }
    state.cfg.games.values().filter_map(|g| g.model.as_deref()).find_map(|m| {
        let run = m.ancestors().find(|a| a.file_name().is_some_and(|n| n == "trainer"))?.parent()?;
        let d = run.join("report");
        d.join("report.html").is_file().then_some(d)
    })
}

const NONE: &str = "<!doctype html><html><head><meta charset=\"utf-8\"><title>No report yet</title></head>\
<body style=\"font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto\"><h1>No balance report yet</h1>\
<p>Write one from a run's games, then serve it:</p>\
<pre>zeroplay report --run runs/NAME\nzeroplay serve --report runs/NAME/report</pre>\
<h1 lang=\"zh-Hant\">尚無平衡報告</h1><p lang=\"zh-Hant\">先用上面的指令從一次執行的對局產生報告，再啟動伺服器。</p>\
<p><a href=\"/\">Play · 下棋</a></p></body></html>";

/// `GET /report`.
pub async fn page(State(state): State<Arc<AppState>>) -> Response {
    match dir(&state).map(|d| std::fs::read(d.join("report.html"))) {
        Some(Ok(body)) => {
            ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], body)
                .into_response()
        }
        _ => (StatusCode::NOT_FOUND, Html(NONE)).into_response(),
    }
}

/// `GET /report.json`.
pub async fn json(State(state): State<Arc<AppState>>) -> Response {
    let Some(path) = dir(&state).map(|d| d.join("report.json")) else {
        return ApiError::NotFound(
            "no balance report: run `zeroplay report --run runs/NAME` and serve it with --report".into(),
        )
        .into_response();
    };
    match std::fs::read(&path) {
        Ok(body) => ([(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-cache")], body)
            .into_response(),
        Err(e) => ApiError::NotFound(format!("no report at {}: {e}", path.display())).into_response(),
    }
}
