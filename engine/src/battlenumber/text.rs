//! A text drawing of the board for terminals and logs.

use super::BattleNumber;
use super::bitboard::{E, N, S, W};
use crate::game::Seat;

/// Draws the board: each square is 5×3 characters; a solid edge is drawn as `=` (horizontal)
/// or `#` (vertical) on the grid, with its triangle (`^ > v <`) inside the square. The kind
/// letter (S D C T X) is upper case for the first seat and lower case for the second; `color`
/// adds ANSI colours (first red, second blue). Squares in `marks` are highlighted: an empty one
/// shows `·`, an occupied one is bracketed `[ ]`.
pub fn draw_board(s: &BattleNumber, marks: u64, color: bool) -> String {
    let solid = |sq: usize, d: usize| s.solid[d] >> sq & 1 == 1;
    let mut out = String::new();
    out.push_str("     a     b     c     d     e     f     g\n");
    for r in 0..7 {
        // Horizontal grid line above row r.
        out.push_str("  +");
        for c in 0..7 {
            let sq = r * 7 + c;
            let above = (r > 0).then(|| sq - 7);
            let hard = solid(sq, N) || above.is_some_and(|a| solid(a, S));
            out.push_str(if hard { "=====" } else { "-----" });
            out.push('+');
        }
        out.push('\n');
        for line in 0..3 {
            if line == 1 {
                out.push_str(&format!("{r} "));
            } else {
                out.push_str("  ");
            }
            for c in 0..7 {
                let sq = r * 7 + c;
                let left_hard = solid(sq, W) || (c > 0 && solid(sq - 1, E));
                out.push(if left_hard { '#' } else { '|' });
                out.push_str(&cell_line(s, sq, line, marks >> sq & 1 == 1, color));
            }
            let right_hard = solid(r * 7 + 6, E);
            out.push(if right_hard { '#' } else { '|' });
            out.push('\n');
        }
    }
    out.push_str("  +");
    for c in 0..7 {
        out.push_str(if solid(42 + c, S) { "=====" } else { "-----" });
        out.push('+');
    }
    out.push('\n');
    out
}

fn cell_line(s: &BattleNumber, sq: usize, line: usize, marked: bool, color: bool) -> String {
    let Some(p) = s.piece(sq as u8) else {
        return if line == 1 && marked {
            "  ·  ".into()
        } else if line == 1 && sq == 24 {
            "  +  ".into()
        } else {
            "     ".into()
        };
    };
    let sides = p.kind.solid_sides(p.rot);
    let has = |d: usize| sides & (1 << d) != 0;
    let text = match line {
        0 => format!("  {}  ", if has(N) { '^' } else { ' ' }),
        2 => format!("  {}  ", if has(S) { 'v' } else { ' ' }),
        _ => {
            let letter = p.kind.code().chars().next().unwrap_or('?');
            let letter = if p.owner == Seat::First { letter } else { letter.to_ascii_lowercase() };
            let (l, r) = if marked { ('[', ']') } else { (' ', ' ') };
            format!("{}{l}{letter}{r}{}", if has(W) { '<' } else { ' ' }, if has(E) { '>' } else { ' ' })
        }
    };
    if color {
        let code = if p.owner == Seat::First { "31" } else { "34" };
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text
    }
}
