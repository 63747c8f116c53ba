//! The board as an SVG download (`GET /api/games/{id}/board.svg?lang=&tz=`): captioned in
//! the page's language with the reader's local time, which the file name carries too.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::{ApiError, AppState, held};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SvgQuery {
    /// "en" (default) or "zh".
    lang: Option<String>,
    /// The reader's offset from UTC in minutes east (JavaScript's `-getTimezoneOffset()`).
    tz: Option<i32>,
}

/// The board as an SVG download, captioned in the page's language with the reader's local
/// time (the file name carries it too).
pub(crate) async fn svg(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    query: Result<Query<SvgQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let zh = match q.lang.as_deref() {
        None | Some("en") => false,
        Some("zh") => true,
        Some(other) => return Err(ApiError::BadRequest(format!("lang={other}: en or zh"))),
    };
    let tz = q.tz.unwrap_or(0);
    if !(-14 * 60..=14 * 60).contains(&tz) {
        return Err(ApiError::BadRequest(format!("tz={tz}: minutes east of UTC, -840 to 840")));
    }
    let h = held(&state, &id)?;
    let (now, shift) = (std::time::SystemTime::now(), Duration::from_secs(u64::from(tz.unsigned_abs()) * 60));
    let local = if tz >= 0 { now + shift } else { now - shift };
    let st = stamp(local);
    let sign = if tz < 0 { '-' } else { '+' };
    let when = format!(
        "{}-{}-{} {}:{} (UTC{sign}{}:{:02})",
        &st[0..4],
        &st[4..6],
        &st[6..8],
        &st[9..11],
        &st[11..13],
        tz.unsigned_abs() / 60,
        tz.unsigned_abs() % 60
    );
    let (doc, stem) = h.table.lock().expect("not poisoned").svg(zh, &when);
    let name = format!("{stem}_{st}.svg");
    Ok((
        [
            (header::CONTENT_TYPE, "image/svg+xml".to_string()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
        ],
        doc,
    )
        .into_response())
}

/// `yyyymmdd_hhmmss` of `t` as a UTC clock reads it (shift `t` first for local time).
pub fn stamp(t: std::time::SystemTime) -> String {
    let secs = t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}{m:02}{d:02}_{:02}{:02}{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_civil_time() {
        let t = std::time::UNIX_EPOCH + Duration::from_secs(1_795_000_000);
        // 2026-11-18 11:06:40 UTC (as Python's datetime.utcfromtimestamp has it)
        assert_eq!(stamp(t), "20261118_110640");
        assert_eq!(stamp(std::time::UNIX_EPOCH), "19700101_000000");
        let leap = std::time::UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(stamp(leap), "20000229_000000");
    }
}
