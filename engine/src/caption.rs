//! Captions under the SVG pictures of positions: lines of text that the picture is made wide
//! and tall enough for, so that no line is cut (the play server writes them in the reader's
//! language; the `render` command in English).

use std::fmt::Write;

/// Font size of a caption line, in the picture's units (pixels).
pub const FONT: f64 = 16.0;
/// Height of one caption line.
pub const LINE: f64 = 22.0;

/// The width `line` needs at [`FONT`]: wide (CJK) characters count about one em, others about
/// six tenths.
pub fn width(line: &str) -> f64 {
    line.chars().map(|c| if u32::from(c) >= 0x2e80 { 1.0 } else { 0.6 }).sum::<f64>() * FONT
}

/// The size `lines` need: (widest line, total height with a margin).
pub fn size(lines: &[String]) -> (f64, f64) {
    let w = lines.iter().map(|l| width(l)).fold(0.0, f64::max);
    (w, lines.len() as f64 * LINE + 12.0)
}

/// Writes `lines` as `<text>` elements, the first baseline at (x, y).
pub fn write(s: &mut String, lines: &[String], x: f64, y: f64) {
    for (i, l) in lines.iter().enumerate() {
        let _ = write!(
            s,
            r##"<text x="{x:.1}" y="{:.1}" font-size="{FONT}" fill="#333">{}</text>"##,
            y + i as f64 * LINE,
            escape(l)
        );
    }
}

/// `text` with XML's special characters escaped.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_characters_need_more_room_and_text_is_escaped() {
        assert!(width("先手勝") > width("abc"));
        assert_eq!(size(&["ab".into(), "abcd".into()]), (4.0 * 0.6 * FONT, 2.0 * LINE + 12.0));
        let mut s = String::new();
        write(&mut s, &["a < b & c".into()], 0.0, 10.0);
        assert!(s.contains("a &lt; b &amp; c"), "{s}");
    }
}
