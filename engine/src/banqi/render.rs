//! SVG pictures of Banqi positions (the play server's board download): the 4 × 8 board with
//! files and ranks, face-up pieces as discs with their Chinese characters (red or black),
//! face-down pieces as plain discs, the face-down pool and the side to move.

use std::fmt::Write;

use super::{Banqi, Cell, Colour, PIECE_CODES, Piece, SQUARES};
use crate::game::Game;

const CELL: f64 = 60.0;

/// The character of a piece: 帥仕相俥傌炮兵 for red, 將士象車馬包卒 for black.
pub fn character(p: Piece) -> char {
    let red = ['帥', '仕', '相', '俥', '傌', '炮', '兵'];
    let black = ['將', '士', '象', '車', '馬', '包', '卒'];
    let i = p.kind as usize;
    if p.colour == Colour::Red { red[i] } else { black[i] }
}

/// The picture of `g` as a standalone SVG document.
pub fn svg(g: &Banqi) -> String {
    svg_with_caption(g, &[english_caption(g)])
}

/// The caption line [`svg`] writes: who is to move or won, quiet plies, the face-down pool.
pub fn english_caption(g: &Banqi) -> String {
    let mut pool = String::new();
    for code in 0..PIECE_CODES as u8 {
        let p = Piece::from_code(code);
        let n = g.pool_count(p);
        if n > 0 {
            let _ = write!(pool, "{}×{n} ", character(p));
        }
    }
    let status = match (g.outcome(), g.colour_to_move()) {
        (Some(o), _) => match o.winner() {
            Some(seat) => {
                format!("{} wins", if g.colour_of(seat) == Some(Colour::Red) { "red" } else { "black" })
            }
            None => "draw".into(),
        },
        (None, Some(Colour::Red)) => "red to move".into(),
        (None, Some(Colour::Black)) => "black to move".into(),
        (None, None) => "first flip to come".into(),
    };
    format!(
        "{status} · {} quiet plies · face down: {}",
        g.quiet_plies(),
        if pool.is_empty() { "none".to_string() } else { pool.trim_end().to_string() }
    )
}

/// The picture of `g` with `caption` under the board (the picture widens for long lines).
pub fn svg_with_caption(g: &Banqi, caption: &[String]) -> String {
    let (bw, bh) = (8.0 * CELL, 4.0 * CELL);
    let (cw, ch) = crate::caption::size(caption);
    let (w, h) = ((bw + 40.0).max(cw + 40.0), bh + 40.0 + ch);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="-30 -10 {w} {h}" width="{w}" height="{h}" font-family="sans-serif">"#
    );
    let _ = write!(s, r##"<rect x="0" y="0" width="{bw}" height="{bh}" fill="#f4e3c1" stroke="#5a4320"/>"##);
    for i in 1..8 {
        let x = f64::from(i) * CELL;
        let _ = write!(s, r##"<line x1="{x}" y1="0" x2="{x}" y2="{bh}" stroke="#b8a27a"/>"##);
    }
    for i in 1..4 {
        let y = f64::from(i) * CELL;
        let _ = write!(s, r##"<line x1="0" y1="{y}" x2="{bw}" y2="{y}" stroke="#b8a27a"/>"##);
    }
    for c in 0..8u8 {
        let x = (f64::from(c) + 0.5) * CELL;
        let _ = write!(
            s,
            r##"<text x="{x}" y="{}" font-size="13" text-anchor="middle" fill="#666">{}</text>"##,
            bh + 16.0,
            (b'a' + c) as char
        );
    }
    for r in 0..4u8 {
        let y = (3.5 - f64::from(r)) * CELL + 5.0;
        let _ = write!(
            s,
            r##"<text x="-14" y="{y}" font-size="13" text-anchor="middle" fill="#666">{r}</text>"##
        );
    }
    let radius = CELL * 0.42;
    for sq in 0..SQUARES as u8 {
        let (cx, cy) = ((f64::from(sq % 8) + 0.5) * CELL, (3.5 - f64::from(sq / 8)) * CELL);
        match g.cell(sq) {
            Cell::Empty => {}
            Cell::FaceDown => {
                let _ = write!(
                    s,
                    r##"<circle cx="{cx}" cy="{cy}" r="{radius}" fill="#8a6a3c" stroke="#4a3418" stroke-width="2"/>"##
                );
            }
            Cell::Up(p) => {
                let ink = if p.colour == Colour::Red { "#b3261e" } else { "#1d1d1d" };
                let _ = write!(
                    s,
                    r##"<circle cx="{cx}" cy="{cy}" r="{radius}" fill="#fdf6e3" stroke="{ink}" stroke-width="3"/><text x="{cx}" y="{}" font-size="28" text-anchor="middle" fill="{ink}">{}</text>"##,
                    cy + 10.0,
                    character(p)
                );
            }
        }
    }
    crate::caption::write(&mut s, caption, 0.0, bh + 46.0);
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_shows_pieces_face_down_discs_and_the_pool() {
        let g = Banqi::from_position_string("1X2g3/r1XC4/8/S6X b S1a1c1 12 1").unwrap();
        let s = svg(&g);
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert_eq!(s.matches("#8a6a3c").count(), 3, "three face-down discs");
        for c in ['將', '車', '炮', '兵'] {
            assert!(s.contains(c), "{c}");
        }
        assert!(s.contains("black to move") && s.contains("12 quiet plies") && s.contains("兵×1"));
    }
}
