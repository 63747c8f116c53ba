//! SVG pictures of TriGolden positions: pieces coloured by owner (labelled with their number
//! and shape), the last turn outlined, edges coloured by state (live green; dead: poked red,
//! clamped purple, suffocated grey; glued plain), scored bracing points marked, the scores.
//!
//! Floating point is used here only to draw; no rule depends on it.

use std::fmt::Write;

use super::TriGolden;
use crate::game::{Game, Seat};

const COLOURS: [(&str, &str); 2] = [("#e8b33c", "#7a5300"), ("#4f86c6", "#123e6e")];

/// The picture of `g` as a standalone SVG document, with an English caption.
pub fn svg(g: &TriGolden) -> String {
    svg_with_caption(g, &[english_caption(g)])
}

/// The caption line [`svg`] writes: the scores and the turn, or the result.
pub fn english_caption(g: &TriGolden) -> String {
    let status = match g.outcome() {
        Some(o) => match o.decisive {
            Some(w) => format!("{} wins by arbitration", if w == Seat::First { "first" } else { "second" }),
            None => "game over".to_string(),
        },
        None => format!(
            "turn {} of {}: {} to move",
            g.turns_played() + 1,
            g.total_turns(),
            if g.mover() == Seat::First { "first" } else { "second" }
        ),
    };
    let [a, b] = g.scores();
    format!("first: {a}   second: {b}   ({status})")
}

/// The picture of `g` with `caption` under the figure (the picture widens for long lines).
pub fn svg_with_caption(g: &TriGolden, caption: &[String]) -> String {
    let pieces = g.pieces();
    let scale = 40.0;
    let pts: Vec<[(f64, f64); 4]> = pieces
        .iter()
        .map(|p| {
            p.v.map(|z| {
                let (x, y) = z.to_f64();
                (x * scale, -y * scale)
            })
        })
        .collect();
    let (mut x0, mut y0, mut x1, mut y1) = (-scale, -scale, scale, scale);
    for p in pts.iter().flatten() {
        x0 = x0.min(p.0);
        y0 = y0.min(p.1);
        x1 = x1.max(p.0);
        y1 = y1.max(p.1);
    }
    let pad = scale;
    let (cw, ch) = crate::caption::size(caption);
    // A narrow figure is centred over a caption wider than itself.
    let fw = x1 - x0 + 2.0 * pad;
    let w = fw.max(cw + 20.0);
    let left = x0 - pad - (w - fw) / 2.0;
    let h = y1 - y0 + 2.0 * pad + ch;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="{left:.1} {:.1} {w:.1} {h:.1}" width="{w:.0}" height="{h:.0}" font-family="sans-serif">"#,
        y0 - pad
    );
    let _ = write!(
        s,
        r##"<rect x="{left:.1}" y="{:.1}" width="{w:.1}" height="{h:.1}" fill="#fbf8f1"/>"##,
        y0 - pad
    );
    // The last complete turn: the pieces placed since the turn before began.
    let last: usize = match (g.turns_played(), g.at_turn_start()) {
        (0, _) => 0,
        (1, true) => 1,
        (_, true) if g.turns_played() == g.total_turns() => 1,
        (_, true) => 2,
        (_, false) => 1,
    };
    let first_last = pieces.len().saturating_sub(last);
    for (i, (p, v)) in pieces.iter().zip(&pts).enumerate() {
        let (fill, stroke) = COLOURS[p.owner.index()];
        let path: Vec<String> = v.iter().map(|(x, y)| format!("{x:.2},{y:.2}")).collect();
        let width = if i >= first_last { 3.0 } else { 1.2 };
        let dash = if i >= first_last { r#" stroke-dasharray="6 3""# } else { "" };
        let _ = write!(
            s,
            r#"<polygon points="{}" fill="{fill}" fill-opacity="0.85" stroke="{stroke}" stroke-width="{width}"{dash}><title>piece {i}: {}{} ({})</title></polygon>"#,
            path.join(" "),
            g.options().shapes.shapes[usize::from(p.shape)].name,
            if p.mirror { "'" } else { "" },
            if p.owner == Seat::First { "first" } else { "second" },
        );
        let (cx, cy) = v.iter().fold((0.0, 0.0), |a, b| (a.0 + b.0 / 4.0, a.1 + b.1 / 4.0));
        let _ = write!(
            s,
            r#"<text x="{cx:.1}" y="{cy:.1}" font-size="9" text-anchor="middle" dominant-baseline="middle" fill="{stroke}">{i}</text>"#
        );
    }
    // Edge states: live edges green; dead ones by kind (glued edges are left plain).
    use super::tracker::EdgeState;
    for (p, states) in pieces.iter().zip(g.edge_states()) {
        for (e, st) in states.iter().enumerate() {
            let colour = match st {
                EdgeState::Live => "#2e9d4f",
                EdgeState::Poked => "#c0392b",
                EdgeState::Clamped => "#8e44ad",
                EdgeState::Suffocated => "#7f8c8d",
                EdgeState::Glued => continue,
            };
            let ((x1, y1), (x2, y2)) = (p.v[e].to_f64(), p.v[(e + 1) % 4].to_f64());
            let _ = write!(
                s,
                r#"<line x1="{:.2}" y1="{:.2}" x2="{:.2}" y2="{:.2}" stroke="{colour}" stroke-width="2.5" stroke-linecap="round"><title>{st:?}</title></line>"#,
                x1 * scale,
                -y1 * scale,
                x2 * scale,
                -y2 * scale
            );
        }
    }
    for &(q, z) in g.scored_points() {
        let (x, y) = z.to_f64();
        let _ = write!(
            s,
            r##"<circle cx="{:.2}" cy="{:.2}" r="3.5" fill="#c0392b" stroke="white" stroke-width="1"><title>braced: point on piece {q}</title></circle>"##,
            x * scale,
            -y * scale
        );
    }
    crate::caption::write(&mut s, caption, left + 10.0, y1 + pad + 14.0);
    s.push_str("</svg>");
    s
}
