//! The report as one HTML page: a verdict per game first, then per game and option set its
//! plots (SVG, drawn here: the page needs no script library and no network) and tables. Both
//! languages are in the page; a button (or `?lang=zh`) shows one, remembered as the play
//! page remembers it.

use std::fmt::Write;

use crate::games::Ending;
use crate::stats::{Histogram, Rate};
use crate::{Bucket, Group, Report, Tally};

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Text in both languages.
fn both(en: &str, zh: &str) -> String {
    format!("<span data-lang=\"en\">{}</span><span data-lang=\"zh\">{}</span>", esc(en), esc(zh))
}

/// Text in both languages inside SVG text (`tspan`: an HTML span is not allowed there).
fn both_svg(en: &str, zh: &str) -> String {
    format!("<tspan data-lang=\"en\">{}</tspan><tspan data-lang=\"zh\">{}</tspan>", esc(en), esc(zh))
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// The interval in words: `54.3% [51.2%, 57.4%]`.
fn rate_text(r: &Rate) -> String {
    format!("{} [{}, {}]", pct(r.score), pct(r.low), pct(r.high))
}

fn ending_words(e: Ending) -> (&'static str, &'static str) {
    match e {
        Ending::Points => ("on points", "計分結束"),
        Ending::NoLegalMove => ("a player had no legal move", "一方無子可下"),
        Ending::Arbitration => ("arbitration (rule 5)", "仲裁（規則 5）"),
        Ending::AllCaptured => ("every piece taken", "棋子全被吃光"),
        Ending::Repetition => ("draw: position repeated three times", "和局：同一局面三次"),
        Ending::NoProgress => ("draw: 60 plies without a capture or flip", "和局：60 步未吃未翻"),
        Ending::Resignation => ("resignation", "認輸"),
    }
}

/// The verdict on balance, in both languages.
fn verdict(g: &Group) -> String {
    let r = &g.first;
    let (en, zh) = r.verdict();
    format!(
        "{}: {} {} {}",
        both(&g.title, &g.title_zh),
        both(
            &format!("the first player scores {} over {} games ({});", rate_text(r), r.games, g.options_text),
            &format!("先手得分率 {}，共 {} 局（{}）；", rate_text(r), r.games, g.options_text),
        ),
        both(en, zh),
        if r.games >= 30 && r.unbalanced() { "⚠" } else { "" }
    )
}

/// A plot of the first player's score rate per bucket, each with its 95% interval, against
/// the 50% line.
pub fn rate_plot(buckets: &[Bucket], unit_en: &str, unit_zh: &str) -> String {
    let (w, h, left, bottom, top) = (560.0, 230.0, 44.0, 46.0, 12.0);
    let n = buckets.len().max(1) as f64;
    let band = (w - left - 10.0) / n;
    let y = |v: f64| top + (1.0 - v) * (h - top - bottom);
    let mut s =
        format!("<svg class=\"plot\" viewBox=\"0 0 {w} {h}\" role=\"img\" width=\"{w}\" height=\"{h}\">");
    for v in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let _ = write!(
            s,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" class=\"{}\"/><text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"end\">{}</text>",
            w - 10.0,
            if v == 0.5 { "even" } else { "grid" },
            left - 4.0,
            y(v) + 4.0,
            pct(v),
            y = y(v)
        );
    }
    for (i, b) in buckets.iter().enumerate() {
        let x = left + band * (i as f64 + 0.5);
        let r = &b.rate;
        let _ = write!(
            s,
            "<g class=\"bucket\"><title>{} · {} · {} games</title><line x1=\"{x}\" x2=\"{x}\" y1=\"{}\" y2=\"{}\" class=\"ci\"/><circle cx=\"{x}\" cy=\"{}\" r=\"4.5\" class=\"{}\"/><text x=\"{x}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text><text x=\"{x}\" y=\"{}\" class=\"tick n\" text-anchor=\"middle\">n={}</text></g>",
            esc(&b.label),
            rate_text(r),
            r.games,
            y(r.low),
            y(r.high),
            y(r.score),
            if r.unbalanced() { "point off" } else { "point" },
            h - bottom + 16.0,
            both_svg(&b.label, &b.label_zh),
            h - bottom + 31.0,
            r.games
        );
    }
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">{}</text></svg>",
        left + (w - left) / 2.0,
        h - 2.0,
        both_svg(unit_en, unit_zh)
    );
    s
}

/// A histogram as bars.
pub fn histogram_plot(hist: &Histogram, unit_en: &str, unit_zh: &str) -> String {
    let (w, h, left, bottom, top) = (560.0, 200.0, 36.0, 40.0, 10.0);
    let most = hist.bins.iter().map(|b| b.count).max().unwrap_or(1).max(1) as f64;
    let n = hist.bins.len().max(1) as f64;
    let band = (w - left - 10.0) / n;
    let mut s =
        format!("<svg class=\"plot\" viewBox=\"0 0 {w} {h}\" role=\"img\" width=\"{w}\" height=\"{h}\">");
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"end\">{most}</text>",
        left - 4.0,
        top + 8.0
    );
    for (i, b) in hist.bins.iter().enumerate() {
        let bh = (h - top - bottom) * b.count as f64 / most;
        let x = left + band * i as f64;
        let label = if b.lo == b.hi { b.lo.to_string() } else { format!("{}–{}", b.lo, b.hi) };
        let _ = write!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{bh}\" class=\"bar\"><title>{label}: {}</title></rect>",
            x + 1.0,
            h - bottom - bh,
            (band - 2.0).max(1.0),
            b.count
        );
        // Every other label where bins are many, so labels never overlap.
        if hist.bins.len() <= 10 || i % 2 == 0 {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
                x + band / 2.0,
                h - bottom + 14.0,
                if b.lo == b.hi { b.lo.to_string() } else { b.lo.to_string() + "…" }
            );
        }
    }
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">{} · {} {:.1} · {} {}</text></svg>",
        left + (w - left) / 2.0,
        h - 4.0,
        both_svg(unit_en, unit_zh),
        both_svg("mean", "平均"),
        hist.mean,
        both_svg("median", "中位數"),
        hist.median
    );
    s
}

/// Horizontal bars of a tally, values per game.
pub fn tally_plot(t: &Tally) -> String {
    let row = 22.0;
    // Room on the left for the longest label (about 50 characters at 11 px).
    let (w, left) = (660.0, 320.0);
    let h = row * t.items.len() as f64 + 8.0;
    let most = t.items.iter().map(|i| i.per_game).fold(0.0, f64::max).max(1e-9);
    let mut s =
        format!("<svg class=\"plot\" viewBox=\"0 0 {w} {h}\" role=\"img\" width=\"{w}\" height=\"{h}\">");
    for (k, it) in t.items.iter().enumerate() {
        let y = 4.0 + row * k as f64;
        let bw = (w - left - 60.0) * it.per_game / most;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"end\">{}</text><rect x=\"{left}\" y=\"{}\" width=\"{bw}\" height=\"{}\" class=\"bar\"/><text x=\"{}\" y=\"{}\" class=\"tick\">{:.2}</text>",
            left - 6.0,
            y + 14.0,
            both_svg(&it.label, &it.label_zh),
            y + 3.0,
            row - 6.0,
            left + bw + 4.0,
            y + 14.0,
            it.per_game
        );
    }
    s + "</svg>"
}

fn rate_row(label: &str, r: &Rate) -> String {
    format!(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:+.2} [{:+.2}, {:+.2}]</td></tr>",
        label,
        r.games,
        r.wins,
        r.draws,
        r.losses,
        rate_text(r),
        r.margin,
        r.margin_low,
        r.margin_high
    )
}

const RATE_HEAD: (&str, &str) = (
    "<th>games</th><th>first wins</th><th>draws</th><th>first losses</th><th>first player's score [95%]</th><th>mean margin [95%]</th>",
    "<th>局數</th><th>先手勝</th><th>和</th><th>先手負</th><th>先手得分率 [95%]</th><th>平均分差 [95%]</th>",
);

fn rate_head(first_en: &str, first_zh: &str) -> String {
    format!(
        "<tr data-lang=\"en\"><th>{}</th>{}</tr><tr data-lang=\"zh\"><th>{}</th>{}</tr>",
        esc(first_en),
        RATE_HEAD.0,
        esc(first_zh),
        RATE_HEAD.1
    )
}

fn section(g: &Group) -> String {
    let mut s = format!(
        "<section class=\"group\" data-game=\"{}\"><h2>{} <small>{}</small></h2><p class=\"verdict\">{}</p>",
        esc(&g.game),
        both(&g.title, &g.title_zh),
        esc(&g.options_text),
        verdict(g)
    );
    let _ = write!(
        s,
        "<table>{}{}</table>",
        rate_head("", ""),
        rate_row(&both("all games", "全部對局"), &g.first)
    );
    let _ = write!(
        s,
        "<h3>{}</h3>{}",
        both(
            "First player's score by model version (0: no network yet)",
            "先手得分率按模型版本（0：尚無網路）"
        ),
        rate_plot(&g.by_model, "model version", "模型版本")
    );
    let _ = write!(
        s,
        "<h3>{}</h3>{}",
        both("First player's score by search budget", "先手得分率按搜尋量"),
        rate_plot(&g.by_budget, "visits per full search", "每次完整搜尋的訪問數")
    );
    for sp in &g.splits {
        let _ = write!(s, "<h3>{}</h3>{}", both(&sp.en, &sp.zh), rate_plot(&sp.buckets, "", ""));
    }
    let _ = write!(
        s,
        "<div class=\"pair\"><div><h3>{}</h3>{}</div><div><h3>{}</h3>{}</div></div>",
        both("First player's final margin", "先手終局分差"),
        histogram_plot(&g.margin, "points", "分"),
        both("Game length", "對局長度"),
        histogram_plot(&g.turns, "turns", "回合")
    );
    let _ = write!(
        s,
        "<h3>{}</h3><table class=\"endings\"><tr data-lang=\"en\"><th>ending</th><th>games</th><th>share</th><th>won by the first player</th></tr><tr data-lang=\"zh\"><th>結束方式</th><th>局數</th><th>比例</th><th>先手勝</th></tr>",
        both("How games end", "對局如何結束")
    );
    for c in &g.endings {
        let (en, zh) = ending_words(c.key);
        let _ = write!(
            s,
            "<tr data-ending=\"{:?}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            c.key,
            both(en, zh),
            c.games,
            pct(c.games as f64 / g.games.max(1) as f64),
            c.first_wins
        );
    }
    s.push_str("</table>");
    for t in &g.tallies {
        let _ = write!(
            s,
            "<h3>{} <small>{}</small></h3>{}",
            both(&t.en, &t.zh),
            both("per game", "每局平均"),
            tally_plot(t)
        );
    }
    s + "</section>"
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:0;background:#f4f1ea;color:#222}\
header{display:flex;justify-content:space-between;align-items:center;background:#2d3a4a;color:#fff;padding:.5rem 1rem}\
header h1{font-size:1.2rem;margin:0}main{max-width:1200px;margin:auto;padding:.5rem 1rem}\
section{background:#fff;border-radius:8px;padding:.75rem 1rem;margin:.75rem 0;box-shadow:0 1px 3px #0002}\
table{border-collapse:collapse;margin:.4rem 0;font-size:.9rem}td,th{border:1px solid #ccd;padding:.2rem .5rem;text-align:center}\
h2 small,h3 small{font-weight:400;color:#666;font-size:.8rem}h3{font-size:1rem;margin:.8rem 0 .3rem}\
.plot{max-width:100%;height:auto;display:block}.grid{stroke:#e3e3e3}.even{stroke:#2d6cdf;stroke-dasharray:4 3}\
.ci{stroke:#333;stroke-width:2}.point{fill:#2d6cdf}.point.off{fill:#d22}.bar{fill:#5f8fd9}\
.tick{font-size:11px;fill:#444}.axis{font-size:12px;fill:#222}.pair{display:flex;flex-wrap:wrap;gap:1rem}\
.verdict{font-weight:600}.meta{color:#555;font-size:.85rem}#lang{font:inherit;background:#fff;border:0;border-radius:6px;padding:.3rem .7rem;cursor:pointer}\
body.zh [data-lang=en],body:not(.zh) [data-lang=zh]{display:none}";

const SCRIPT: &str = "const q=new URLSearchParams(location.search).get('lang');\
let zh=(q||localStorage.getItem('zeroplay-lang')||(navigator.language.startsWith('zh')?'zh':'en'))==='zh';\
const show=()=>{document.body.classList.toggle('zh',zh);document.documentElement.lang=zh?'zh-Hant':'en';\
document.getElementById('lang').textContent=zh?'English':'中文';};\
document.getElementById('lang').addEventListener('click',()=>{zh=!zh;localStorage.setItem('zeroplay-lang',zh?'zh':'en');show();});show();";

/// The whole page.
pub fn page(r: &Report) -> String {
    let mut s = String::from(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>zeroplay balance report</title><link rel=\"icon\" href=\"data:,\"><style>",
    );
    s.push_str(STYLE);
    let _ = write!(
        s,
        "</style></head><body><header><h1>{}</h1><button id=\"lang\" type=\"button\">中文</button></header><main>",
        both("zeroplay · balance report", "zeroplay · 平衡報告")
    );
    let _ = write!(
        s,
        "<p class=\"meta\">{} {} · {} · {}</p>",
        both("From", "資料來源"),
        esc(&r.sources.join(", ")),
        both(
            &format!("{} games, {} positions, {} files", r.games, r.positions, r.files_read),
            &format!("{} 局，{} 個局面，{} 個檔案", r.games, r.positions, r.files_read)
        ),
        both(&format!("{} left out", r.skipped.len()), &format!("略過 {} 項", r.skipped.len()))
    );
    let _ = write!(s, "<section id=\"verdicts\"><h2>{}</h2><ul>", both("At a glance", "一覽"));
    for g in &r.groups {
        let _ = write!(s, "<li>{}</li>", verdict(g));
    }
    s.push_str("</ul>");
    if r.groups.is_empty() {
        let _ = write!(s, "<p>{}</p>", both("No games in the store yet.", "資料中尚無對局。"));
    }
    s.push_str("</section>");
    for c in &r.comparisons {
        let _ = write!(
            s,
            "<section class=\"comparison\" data-game=\"{}\"><h2>{} <small>{}</small></h2><table>{}",
            esc(&c.game),
            both("Rule options side by side", "規則選項並列比較"),
            esc(&c.game),
            rate_head("options", "選項")
        );
        for row in &c.rows {
            s.push_str(&rate_row(&esc(&row.options_text), &row.first));
        }
        s.push_str("</table></section>");
    }
    for g in &r.groups {
        s.push_str(&section(g));
    }
    if !r.skipped.is_empty() {
        let _ = write!(s, "<section><h2>{}</h2><ul>", both("Left out", "略過"));
        for k in &r.skipped {
            let _ = write!(s, "<li>{}</li>", esc(k));
        }
        s.push_str("</ul></section>");
    }
    let _ = writeln!(s, "</main><script>{SCRIPT}</script></body></html>");
    s
}
