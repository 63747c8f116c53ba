//! The TriGolden piece set as data: a shape table (TOML), checked when loaded.
//!
//! ```toml
//! [[piece]]
//! name = "A"
//! count = 9                                  # pieces of this shape per player
//! edges = ["1@0", "1@3", "2@5", "phi@9"]     # length@direction, counter-clockwise
//! ```
//!
//! Lengths are `1`, `2`, `phi`, `phi2` (φ²) and `2phi`; directions are in units of 36°
//! (0–9). A table is refused, with an error naming the piece and the problem, unless every
//! piece is a simple counter-clockwise quadrilateral that closes and has exactly two
//! length-1 edges, its two shortest.

use std::fmt;

use serde::Deserialize;

use super::zomega::{Z, orient_exact, segments_touch};

/// The default piece set of the rules (`../shared/rules/trigolden.md`, "Default piece set").
pub const DEFAULT_TABLE: &str = include_str!("default_pieces.toml");

/// An edge length.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Len {
    /// 1.
    One,
    /// 2.
    Two,
    /// φ.
    Phi,
    /// φ².
    Phi2,
    /// 2φ.
    TwoPhi,
}

impl Len {
    /// Every length, shortest first (1 < φ < 2 < φ² < 2φ).
    pub const ALL: [Len; 5] = [Len::One, Len::Phi, Len::Two, Len::Phi2, Len::TwoPhi];

    /// The length as an element of Z[ω].
    pub fn z(self) -> Z {
        match self {
            Len::One => Z::ONE,
            Len::Two => Z::new(2, 0, 0, 0),
            Len::Phi => Z::PHI,
            Len::Phi2 => Z::new(2, 0, 1, -1),
            Len::TwoPhi => Z::new(2, 0, 2, -2),
        }
    }

    /// The name used in tables.
    pub fn name(self) -> &'static str {
        match self {
            Len::One => "1",
            Len::Two => "2",
            Len::Phi => "phi",
            Len::Phi2 => "phi2",
            Len::TwoPhi => "2phi",
        }
    }

    fn parse(s: &str) -> Option<Len> {
        Len::ALL.into_iter().find(|l| l.name() == s)
    }
}

/// The (length, direction) of vector `v`, if it is an allowed length along a multiple of 36°.
pub fn edge_of(v: Z) -> Option<(Len, u8)> {
    for k in 0..10u8 {
        let dir = Z::omega_pow(i32::from(k));
        for l in Len::ALL {
            if l.z() * dir == v {
                return Some((l, k));
            }
        }
    }
    None
}

/// One shape of the table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    /// Its name (`A`).
    pub name: String,
    /// Pieces of it per player.
    pub count: u8,
    /// Vertices, counter-clockwise, the first at the origin.
    pub vertices: [Z; 4],
    /// Edge `i` runs from vertex `i` to `i + 1`: its length and direction (units of 36°).
    pub edges: [(Len, u8); 4],
    /// The mirror image (computed once): vertices and edges.
    mirrored: ([Z; 4], [(Len, u8); 4]),
    /// `turned[mirror][r]`: the vertices (mirrored or not) turned by r·36°, computed once
    /// because placing a piece needs them on the hot path.
    turned: [[[Z; 4]; 10]; 2],
}

impl Shape {
    fn new(name: String, count: u8, vertices: [Z; 4], edges: [(Len, u8); 4]) -> Shape {
        // Mirrored vertex i is the mirror image of vertex (4 − i) mod 4, keeping the order
        // counter-clockwise.
        let v: [Z; 4] = std::array::from_fn(|i| vertices[(4 - i) % 4].conj());
        let e = std::array::from_fn(|i| edge_of(v[(i + 1) % 4] - v[i]).expect("mirrors keep edges"));
        let turned = [vertices, v].map(|vs| {
            std::array::from_fn(|r| {
                let w = Z::omega_pow(r as i32);
                vs.map(|z| w * z)
            })
        });
        Shape { name, count, vertices, edges, mirrored: (v, e), turned }
    }

    /// The vertices, mirrored or not, turned by `r`·36° (r < 10) about the first vertex.
    pub fn turned(&self, mirror: bool, r: usize) -> &[Z; 4] {
        &self.turned[usize::from(mirror)][r]
    }

    /// The vertices and edges of the shape, mirrored (in the real axis) or not, counter-
    /// clockwise. Mirrored vertex `i` is the mirror image of vertex `(4 − i) mod 4`.
    pub fn oriented(&self, mirror: bool) -> ([Z; 4], [(Len, u8); 4]) {
        if mirror { self.mirrored } else { (self.vertices, self.edges) }
    }
}

/// A checked shape table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ShapeTable {
    /// The shapes, in table order (an action names a shape by its index).
    pub shapes: Vec<Shape>,
}

/// Why a shape table was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// Not valid TOML of the expected form.
    #[error("shape table: {0}")]
    Syntax(String),
    /// No pieces, or more than the engine supports.
    #[error("shape table has {0} shapes (1 to 8 allowed)")]
    Count(usize),
    /// A problem with one piece.
    #[error("piece {piece:?}: {problem}")]
    Piece {
        /// The piece's name.
        piece: String,
        /// What is wrong.
        problem: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    piece: Vec<RawPiece>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPiece {
    name: String,
    count: u8,
    edges: Vec<String>,
}

impl ShapeTable {
    /// The default table.
    ///
    /// # Panics
    /// Never: the default table is checked by a test.
    pub fn default_table() -> ShapeTable {
        ShapeTable::parse(DEFAULT_TABLE).expect("the default shape table is valid")
    }

    /// Reads and checks a table.
    ///
    /// # Errors
    /// [`ShapeError`] naming the piece and the problem.
    pub fn parse(text: &str) -> Result<ShapeTable, ShapeError> {
        let raw: RawTable = toml::from_str(text).map_err(|e| ShapeError::Syntax(e.to_string()))?;
        if raw.piece.is_empty() || raw.piece.len() > 8 {
            return Err(ShapeError::Count(raw.piece.len()));
        }
        let mut shapes = Vec::new();
        for p in raw.piece {
            let bad = |problem: String| ShapeError::Piece { piece: p.name.clone(), problem };
            if p.name.is_empty() || p.name.len() > 8 || !p.name.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(bad("names are 1 to 8 letters or digits".into()));
            }
            if shapes.iter().any(|s: &Shape| s.name == p.name) {
                return Err(bad("the name is used twice".into()));
            }
            if p.count == 0 || p.count > 60 {
                return Err(bad(format!("count {} (1 to 60 allowed)", p.count)));
            }
            if p.edges.len() != 4 {
                return Err(bad(format!("{} edges: a piece is a quadrilateral (4 edges)", p.edges.len())));
            }
            let mut edges = [(Len::One, 0u8); 4];
            for (i, e) in p.edges.iter().enumerate() {
                let (l, d) =
                    e.split_once('@').ok_or_else(|| bad(format!("edge {e:?}: expected length@direction")))?;
                let len = Len::parse(l.trim())
                    .ok_or_else(|| bad(format!("edge {e:?}: length must be 1, 2, phi, phi2 or 2phi")))?;
                let dir: u8 = d
                    .trim()
                    .parse()
                    .ok()
                    .filter(|d| *d < 10)
                    .ok_or_else(|| bad(format!("edge {e:?}: direction must be 0 to 9 (units of 36°)")))?;
                edges[i] = (len, dir);
            }
            let mut vertices = [Z::ZERO; 4];
            let mut at = Z::ZERO;
            for (i, (l, d)) in edges.iter().enumerate() {
                vertices[i] = at;
                at = at + l.z() * Z::omega_pow(i32::from(*d));
            }
            if at != Z::ZERO {
                return Err(bad(format!("the edges do not close (they end at {at})")));
            }
            if vertices.iter().enumerate().any(|(i, v)| vertices[..i].contains(v)) {
                return Err(bad("two vertices coincide".into()));
            }
            // Simple: opposite edges do not touch, and no corner is flat or folded back.
            for i in 0..4 {
                let (a, b) = (vertices[i], vertices[(i + 1) % 4]);
                let (c, d) = (vertices[(i + 2) % 4], vertices[(i + 3) % 4]);
                if i < 2 && segments_touch(a.into(), b.into(), c.into(), d.into()) {
                    return Err(bad(format!("edges {i} and {} cross: not a simple quadrilateral", i + 2)));
                }
                if orient_exact(a, b, c) == std::cmp::Ordering::Equal {
                    return Err(bad(format!("edges {i} and {} are collinear", (i + 1) % 4)));
                }
            }
            if area_sign(&vertices) != std::cmp::Ordering::Greater {
                return Err(bad("the edges run clockwise; list them counter-clockwise".into()));
            }
            let ones = edges.iter().filter(|(l, _)| *l == Len::One).count();
            if ones != 2 {
                return Err(bad(format!("{ones} edges of length 1 (exactly two required)")));
            }
            shapes.push(Shape::new(p.name, p.count, vertices, edges));
        }
        // Player 1 opens with one piece and player 2 ends with one; every other turn places
        // two: each player's set must be odd.
        let per_player: u32 = shapes.iter().map(|s| u32::from(s.count)).sum();
        if per_player.is_multiple_of(2) || per_player > 253 {
            return Err(ShapeError::Piece {
                piece: "(all)".into(),
                problem: format!(
                    "{per_player} pieces per player: the turns (one piece, then two at a time, then one) need an odd number, at most 253"
                ),
            });
        }
        Ok(ShapeTable { shapes })
    }
}

/// Sign of a polygon's signed area (positive: counter-clockwise), exactly.
pub fn area_sign(v: &[Z]) -> std::cmp::Ordering {
    // Twice the area is Σ cross(v_i, v_{i+1}); sum the Z[ω] products, then take the sign.
    let n = v.len();
    let mut acc = Z::ZERO;
    for i in 0..n {
        acc = acc + v[i].conj() * v[(i + 1) % n];
    }
    acc.im_sign()
}

impl fmt::Display for ShapeTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in &self.shapes {
            let edges: Vec<String> = s.edges.iter().map(|(l, d)| format!("\"{}@{d}\"", l.name())).collect();
            writeln!(
                f,
                "[[piece]]\nname = \"{}\"\ncount = {}\nedges = [{}]\n",
                s.name,
                s.count,
                edges.join(", ")
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_table_is_the_rules_table() {
        let t = ShapeTable::default_table();
        let names: Vec<&str> = t.shapes.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["A", "B", "C"]);
        assert!(t.shapes.iter().all(|s| s.count == 9));
        // Vertices as printed in the rules.
        assert_eq!(
            t.shapes[0].vertices,
            [Z::new(0, 0, 0, 0), Z::new(1, 0, 0, 0), Z::new(1, 0, 0, 1), Z::new(-1, 0, 0, 1)]
        );
        assert_eq!(
            t.shapes[1].vertices,
            [Z::new(0, 0, 0, 0), Z::new(1, 0, 0, 0), Z::new(-1, 2, 0, 2), Z::new(-1, 1, -1, 1)]
        );
        assert_eq!(
            t.shapes[2].vertices,
            [Z::new(0, 0, 0, 0), Z::new(1, 0, 0, 0), Z::new(0, 1, 0, 2), Z::new(0, 0, 0, 1)]
        );
        // Round trip through the printed form.
        assert_eq!(ShapeTable::parse(&t.to_string()).unwrap(), t);
        // Mirrors stay counter-clockwise quadrilaterals with the same edge lengths.
        for s in &t.shapes {
            let (v, e) = s.oriented(true);
            assert_eq!(area_sign(&v), std::cmp::Ordering::Greater);
            let mut a: Vec<Len> = s.edges.iter().map(|e| e.0).collect();
            let mut b: Vec<Len> = e.iter().map(|e| e.0).collect();
            a.sort();
            b.sort();
            assert_eq!(a, b);
        }
    }

    #[test]
    fn bad_tables_are_refused_with_the_problem_named() {
        let one = |edges: &str| format!("[[piece]]\nname = \"X\"\ncount = 9\nedges = [{edges}]\n");
        let cases = [
            (one("\"1@0\", \"1@3\", \"2@5\""), "3 edges"),
            (one("\"1@0\", \"1@3\", \"2@5\", \"2@9\""), "do not close"),
            (one("\"1@0\", \"1@3\", \"3@5\", \"phi@9\""), "length must be"),
            (one("\"1@0\", \"1@3\", \"2@5\", \"phi@12\""), "direction must be"),
            (one("\"1@0\", \"1@3\", \"2@5\", \"phi9\""), "length@direction"),
            // A clockwise A.
            (one("\"phi@4\", \"2@0\", \"1@8\", \"1@5\""), "clockwise"),
            // A rhombus of side 1: four length-1 edges.
            (one("\"1@0\", \"1@2\", \"1@5\", \"1@7\""), "4 edges of length 1"),
            (
                "[[piece]]\nname = \"X\"\ncount = 0\nedges = [\"1@0\", \"1@3\", \"2@5\", \"phi@9\"]\n"
                    .to_string(),
                "count 0",
            ),
            ("piece = []\n".to_string(), "0 shapes"),
            (
                "[[piece]]\nname = \"X\"\ncount = 8\nedges = [\"1@0\", \"1@3\", \"2@5\", \"phi@9\"]\n"
                    .to_string(),
                "odd number",
            ),
            ("[[piece]]\nname = \"X\"\n".to_string(), "missing field"),
        ];
        for (text, want) in cases {
            let e = ShapeTable::parse(&text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}\n→ {e}\n(wanted {want:?})");
        }
        let twice = format!(
            "{}{}",
            one("\"1@0\", \"1@3\", \"2@5\", \"phi@9\""),
            one("\"1@0\", \"1@3\", \"2@5\", \"phi@9\"")
        );
        assert!(ShapeTable::parse(&twice).unwrap_err().to_string().contains("twice"));
    }
}
