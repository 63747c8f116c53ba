//! SVG pictures of Battle Number positions (the play server's board download): the 7 × 7
//! board with the centre marked, pieces coloured by owner, solid edges drawn thick with their
//! triangles pointing out, Cross Zeros as crosses, the extraction path in progress, the score.

use std::fmt::Write;

use super::{BattleNumber, Kind, SQUARES};
use crate::game::{Game, Seat};

const CELL: f64 = 60.0;
const COLOURS: [(&str, &str); 2] = [("#f3d08a", "#7a5300"), ("#a9c8ee", "#123e6e")];

/// The picture of `g` as a standalone SVG document, with an English caption.
pub fn svg(g: &BattleNumber) -> String {
    svg_with_caption(g, &[english_caption(g)])
}

/// The caption line [`svg`] writes: the result or the score.
pub fn english_caption(g: &BattleNumber) -> String {
    let score = g.score_first();
    match g.outcome() {
        Some(o) => match o.winner() {
            Some(Seat::First) => format!("first seat wins ({score:+})"),
            Some(Seat::Second) => format!("second seat wins ({score:+})"),
            None => "draw".to_string(),
        },
        None => format!("score (first seat) {score:+}"),
    }
}

/// The picture of `g` with `caption` under the board (the picture widens for long lines).
pub fn svg_with_caption(g: &BattleNumber, caption: &[String]) -> String {
    let size = 7.0 * CELL;
    let (cw, ch) = crate::caption::size(caption);
    let (w, h) = ((size + 20.0).max(cw + 20.0), size + 20.0 + ch);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="-10 -10 {w} {h}" width="{w}" height="{h}" font-family="sans-serif">"#
    );
    let _ = write!(s, r##"<rect x="0" y="0" width="{size}" height="{size}" fill="#fbf8f1" stroke="#444"/>"##);
    for i in 1..7 {
        let x = f64::from(i) * CELL;
        let _ = write!(s, r##"<line x1="{x}" y1="0" x2="{x}" y2="{size}" stroke="#ccc"/>"##);
        let _ = write!(s, r##"<line x1="0" y1="{x}" x2="{size}" y2="{x}" stroke="#ccc"/>"##);
    }
    let c = 3.0 * CELL;
    let _ = write!(
        s,
        r##"<rect x="{c}" y="{c}" width="{CELL}" height="{CELL}" fill="none" stroke="#c33" stroke-dasharray="4 3"/>"##
    );
    let path = g.pending_path().map_or(0, |(visited, _)| visited);
    for sq in 0..SQUARES as u8 {
        let Some(p) = g.piece(sq) else { continue };
        let (x, y) = (f64::from(sq % 7) * CELL, f64::from(sq / 7) * CELL);
        let (fill, ink) = COLOURS[p.owner.index()];
        let on_path = path >> sq & 1 == 1;
        let _ = write!(
            s,
            r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{fill}" stroke="{}" stroke-width="{}"/>"#,
            x + 3.0,
            y + 3.0,
            CELL - 6.0,
            CELL - 6.0,
            if on_path { "#d22" } else { ink },
            if on_path { 3 } else { 1 }
        );
        if p.kind == Kind::CrossZero {
            let (a, b) = (x + 14.0, x + CELL - 14.0);
            let (t, u) = (y + 14.0, y + CELL - 14.0);
            let _ =
                write!(s, r#"<path d="M{a} {t}L{b} {u}M{b} {t}L{a} {u}" stroke="{ink}" stroke-width="3"/>"#);
        }
        let sides = p.kind.solid_sides(p.rot);
        for d in 0..4 {
            if sides >> d & 1 == 0 {
                continue;
            }
            // Side d (N, E, S, W): the edge's end points and the outward direction.
            let (x0, y0, x1, y1, nx, ny) = match d {
                0 => (x + 3.0, y + 3.0, x + CELL - 3.0, y + 3.0, 0.0, 1.0),
                1 => (x + CELL - 3.0, y + 3.0, x + CELL - 3.0, y + CELL - 3.0, -1.0, 0.0),
                2 => (x + 3.0, y + CELL - 3.0, x + CELL - 3.0, y + CELL - 3.0, 0.0, -1.0),
                _ => (x + 3.0, y + 3.0, x + 3.0, y + CELL - 3.0, 1.0, 0.0),
            };
            let _ = write!(
                s,
                r#"<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}" stroke="{ink}" stroke-width="5"/>"#
            );
            // The triangle sits inside the square against its edge, pointing out through it.
            let (mx, my) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
            let (tx, ty) = (mx + nx * 12.0, my + ny * 12.0);
            let (px, py) = (-ny * 7.0, nx * 7.0);
            let _ = write!(
                s,
                r#"<path d="M{:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}Z" fill="{ink}"/>"#,
                mx,
                my,
                tx + px,
                ty + py,
                tx - px,
                ty - py
            );
        }
    }
    crate::caption::write(&mut s, caption, 0.0, size + 26.0);
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_game_draws_every_piece() {
        let mut rng = crate::rng_from_seed(5);
        let mut g = BattleNumber::new_game(&Default::default());
        let mut max_pieces = 0;
        while g.outcome().is_none() {
            let mut a = Vec::new();
            g.legal_actions(&mut a);
            let pick = a[rand::RngExt::random_range(&mut rng, 0..a.len())];
            g.play(pick).unwrap();
            max_pieces = max_pieces.max(g.occupied().count_ones());
            let doc = svg(&g);
            assert!(doc.starts_with("<svg") && doc.ends_with("</svg>"));
            // One square per piece, plus the board and the centre mark.
            assert_eq!(doc.matches("<rect").count(), g.occupied().count_ones() as usize + 2);
        }
        assert!(max_pieces > 10);
    }
}
