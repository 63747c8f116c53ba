//! The web client (`web/` at the repository root), compiled into the binary: the server needs
//! no files beside it and the page loads nothing from elsewhere.

/// The page.
pub const INDEX_HTML: &str = include_str!("../../web/index.html");
/// Its script (plain JavaScript, no build step).
pub const APP_JS: &str = include_str!("../../web/app.js");
/// Its style sheet.
pub const STYLE_CSS: &str = include_str!("../../web/style.css");
/// How to play each game, in both languages (`/rules?game=…`).
pub const RULES_HTML: &str = include_str!("../../web/rules.html");
/// The page for an address that names nothing.
pub const NOT_FOUND_HTML: &str = include_str!("../../web/404.html");
