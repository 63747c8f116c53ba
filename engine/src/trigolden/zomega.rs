//! Exact arithmetic in Z[ω], ω = e^{iπ/5} (36°), and the exact sign tests every TriGolden rule
//! decision is made with.
//!
//! An element is `a + bω + cω² + dω³` with integers, reduced by ω⁴ = −1 + ω − ω² + ω³ (the
//! tenth cyclotomic polynomial). Real and imaginary parts lie in Q(√5):
//! - `2·Re = (2a − c + d) + (b + c − d)·φ`
//! - `Im = sin36° · (b + (c + d)·φ)`
//!
//! so every sign is the sign of some `p + qφ` with integers, decided by [`sign_phi`] with
//! integer arithmetic only.
//!
//! The geometric predicates work on [`Pt`]s (a point and its rounded coordinates) and are
//! filtered: the sign of the rounded value is taken where it lies beyond [`FILTER`], which
//! is proven far above its rounding error, and the exact test decides the rest (true zeros,
//! mostly). Rule decisions therefore stay exact, at the speed of two multiplications.

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, Mul, Neg, Sub};

use serde::{Deserialize, Serialize};

/// An element of Z[ω]: `a + bω + cω² + dω³`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Z(pub [i32; 4]);

impl Z {
    /// 0.
    pub const ZERO: Z = Z([0, 0, 0, 0]);
    /// 1.
    pub const ONE: Z = Z([1, 0, 0, 0]);
    /// ω.
    pub const OMEGA: Z = Z([0, 1, 0, 0]);
    /// φ = 1 + ω² − ω³, the golden ratio.
    pub const PHI: Z = Z([1, 0, 1, -1]);

    /// `a + bω + cω² + dω³`.
    pub const fn new(a: i32, b: i32, c: i32, d: i32) -> Z {
        Z([a, b, c, d])
    }

    /// ω^k (any integer k; ω¹⁰ = 1).
    pub fn omega_pow(k: i32) -> Z {
        let k = k.rem_euclid(10);
        let base = match k % 5 {
            0 => Z::ONE,
            1 => Z([0, 1, 0, 0]),
            2 => Z([0, 0, 1, 0]),
            3 => Z([0, 0, 0, 1]),
            _ => Z([-1, 1, -1, 1]),
        };
        if k >= 5 { -base } else { base }
    }

    /// Complex conjugate (mirror in the real axis): ω ↦ ω⁻¹ = 1 − ω + ω² − ω³, ω² ↦ −ω³,
    /// ω³ ↦ −ω².
    pub fn conj(self) -> Z {
        let [a, b, c, d] = self.0;
        Z([a + b, -b, b - d, -b - c])
    }

    /// The point halfway to `other`, doubled (`self + other`): midpoints stay in Z[ω] when
    /// everything else is doubled too.
    pub fn double(self) -> Z {
        self + self
    }

    /// Real part as `(p, q)` with `2·Re = p + qφ`.
    pub fn re2(self) -> (i64, i64) {
        let [a, b, c, d] = self.0.map(i64::from);
        (2 * a - c + d, b + c - d)
    }

    /// Imaginary part as `(p, q)` with `Im = sin36°·(p + qφ)`.
    pub fn im(self) -> (i64, i64) {
        let [_, b, c, d] = self.0.map(i64::from);
        (b, c + d)
    }

    /// Sign of the real part.
    pub fn re_sign(self) -> Ordering {
        let (p, q) = self.re2();
        sign_phi(p, q)
    }

    /// Sign of the imaginary part.
    pub fn im_sign(self) -> Ordering {
        let (p, q) = self.im();
        sign_phi(p, q)
    }

    /// The screen position (x, y) in floating point, for drawing only.
    pub fn to_f64(self) -> (f64, f64) {
        const COS36: f64 = 0.809_016_994_374_947_4;
        const COS72: f64 = 0.309_016_994_374_947_45;
        const SIN36: f64 = 0.587_785_252_292_473_1;
        const SIN72: f64 = 0.951_056_516_295_153_5;
        let [a, b, c, d] = self.0.map(f64::from);
        (a + b * COS36 + (c - d) * COS72, b * SIN36 + (c + d) * SIN72)
    }
}

impl Add for Z {
    type Output = Z;
    fn add(self, o: Z) -> Z {
        Z(std::array::from_fn(|i| self.0[i] + o.0[i]))
    }
}

impl Sub for Z {
    type Output = Z;
    fn sub(self, o: Z) -> Z {
        Z(std::array::from_fn(|i| self.0[i] - o.0[i]))
    }
}

impl Neg for Z {
    type Output = Z;
    fn neg(self) -> Z {
        Z(self.0.map(|x| -x))
    }
}

impl Mul for Z {
    type Output = Z;
    fn mul(self, o: Z) -> Z {
        let mut c = [0i64; 7];
        for i in 0..4 {
            for j in 0..4 {
                c[i + j] += i64::from(self.0[i]) * i64::from(o.0[j]);
            }
        }
        // ω⁶ = −ω, ω⁵ = −1, ω⁴ = −1 + ω − ω² + ω³.
        c[1] -= c[6];
        c[0] -= c[5];
        let c4 = c[4];
        c[0] -= c4;
        c[1] += c4;
        c[2] -= c4;
        c[3] += c4;
        Z(std::array::from_fn(|i| i32::try_from(c[i]).expect("Z[ω] coordinate overflow")))
    }
}

impl fmt::Display for Z {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d] = self.0;
        write!(f, "({a},{b},{c},{d})")
    }
}

/// Sign of `p + qφ` (φ the golden ratio), exactly: `2(p + qφ) = s + q√5` with `s = 2p + q`.
pub fn sign_phi(p: i64, q: i64) -> Ordering {
    let s = i128::from(2 * p + q);
    let q = i128::from(q);
    match (s.cmp(&0), q.cmp(&0)) {
        (Ordering::Equal, qs) => qs,
        (ss, Ordering::Equal) => ss,
        (Ordering::Greater, Ordering::Greater) => Ordering::Greater,
        (Ordering::Less, Ordering::Less) => Ordering::Less,
        // Opposite signs: compare s² with 5q² (never equal: √5 is irrational).
        (Ordering::Greater, Ordering::Less) => (s * s).cmp(&(5 * q * q)),
        (Ordering::Less, Ordering::Greater) => (5 * q * q).cmp(&(s * s)),
    }
}

/// Sign of the cross product u × v (positive: v is counter-clockwise of u).
///
/// Equal to the sign of `Im(ū·v)`, computed without the full product: this is the innermost
/// test of legal-turn generation. With `2·Re = a + bφ` and `Im = sin36°·(c + dφ)` for each
/// vector, `2·(u × v) / sin36° = (a₁ + b₁φ)(c₂ + d₂φ) − (c₁ + d₁φ)(a₂ + b₂φ)`, expanded in
/// Z[φ] with φ² = φ + 1.
pub fn cross_sign(u: Z, v: Z) -> Ordering {
    let ((a1, b1), (c1, d1)) = (u.re2(), u.im());
    let ((a2, b2), (c2, d2)) = (v.re2(), v.im());
    let (p1, q1) = mul_phi(a1, b1, c2, d2);
    let (p2, q2) = mul_phi(c1, d1, a2, b2);
    sign_phi(p1 - p2, q1 - q2)
}

/// Sign of the dot product u · v.
///
/// Equal to the sign of `Re(ū·v)`: `4·(u · v) = (a₁ + b₁φ)(a₂ + b₂φ) + (3 − φ)(c₁ + d₁φ)(c₂ +
/// d₂φ)`, because `4·sin²36° = 3 − φ`.
pub fn dot_sign(u: Z, v: Z) -> Ordering {
    let ((a1, b1), (c1, d1)) = (u.re2(), u.im());
    let ((a2, b2), (c2, d2)) = (v.re2(), v.im());
    let (p1, q1) = mul_phi(a1, b1, a2, b2);
    let (x, y) = mul_phi(c1, d1, c2, d2);
    // (3 − φ)(x + yφ) = (3x − y) + (2y − x)φ.
    sign_phi(p1 + 3 * x - y, q1 + 2 * y - x)
}

/// `(x + yφ)(z + wφ)` as `(p, q)` with the product `p + qφ` (φ² = φ + 1).
fn mul_phi(x: i64, y: i64, z: i64, w: i64) -> (i64, i64) {
    (x * z + y * w, x * w + y * z + y * w)
}

/// A board point: its exact coordinates and their floating-point image, so the predicates
/// below can decide most signs with two multiplications and fall back to the exact test only
/// near zero (Shewchuk's "filtered predicates").
///
/// Equality is the exact coordinates' (the image is a function of them).
#[derive(Copy, Clone, Debug)]
pub struct Pt {
    /// The exact point.
    pub z: Z,
    /// Its x coordinate, rounded.
    pub x: f64,
    /// Its y coordinate, rounded.
    pub y: f64,
}

impl PartialEq for Pt {
    fn eq(&self, o: &Pt) -> bool {
        self.z == o.z
    }
}

impl Eq for Pt {}

impl From<Z> for Pt {
    fn from(z: Z) -> Pt {
        let (x, y) = z.to_f64();
        Pt { z, x, y }
    }
}

impl Pt {
    /// The point with every coordinate doubled (exact in both forms).
    pub fn twice(self) -> Pt {
        Pt { z: self.z.double(), x: 2.0 * self.x, y: 2.0 * self.y }
    }
}

/// Where a floating-point sign is trusted: a cross or dot product of two differences of
/// points whose f64 image lies beyond ±`FILTER` has the sign of the exact value.
///
/// Why that holds: a board holds at most 2 × 253 pieces (the shape table's limit), each vertex is
/// reached from the origin by at most three edges per piece of the attachment tree, and an
/// edge moves each Z[ω] coordinate by at most 4, so every coordinate stays below 2¹³ and every
/// point within 2¹⁵ of the origin. `Z::to_f64` is then off by at most 2⁻³⁶ per axis, a
/// difference by 2⁻³⁵, and a product of two differences (each below 2¹⁶) with the
/// subtraction's rounding by less than 1.2·10⁻⁵: two orders of magnitude under `FILTER`.
/// On real boards (coordinates below 50) the error is near 10⁻¹³. The exact test runs only
/// for |value| ≤ `FILTER`: true zeros (collinear, perpendicular, coincident) and, rarely, a
/// tiny non-zero value.
pub const FILTER: f64 = 1e-3;

#[inline]
fn filtered(value: f64, exact: impl FnOnce() -> Ordering) -> Ordering {
    if value > FILTER {
        Ordering::Greater
    } else if value < -FILTER {
        Ordering::Less
    } else {
        exact()
    }
}

/// Orientation of the triangle (a, b, c), exactly, from the coordinates alone.
pub fn orient_exact(a: Z, b: Z, c: Z) -> Ordering {
    cross_sign(b - a, c - a)
}

/// Orientation of the triangle (a, b, c): `Greater` counter-clockwise, `Less` clockwise,
/// `Equal` collinear. Exact (filtered: see [`FILTER`]).
#[inline]
pub fn orient(a: Pt, b: Pt, c: Pt) -> Ordering {
    let v = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
    filtered(v, || orient_exact(a.z, b.z, c.z))
}

/// Sign of the dot product (b − a) · (d − c), exactly (filtered).
#[inline]
fn dot(a: Pt, b: Pt, c: Pt, d: Pt) -> Ordering {
    let v = (b.x - a.x) * (d.x - c.x) + (b.y - a.y) * (d.y - c.y);
    filtered(v, || dot_sign(b.z - a.z, d.z - c.z))
}

/// Sign of `b.y − a.y`, exactly (filtered).
#[inline]
fn above(b: Pt, a: Pt) -> bool {
    filtered(b.y - a.y, || (b.z - a.z).im_sign()) == Ordering::Greater
}

/// Is `p` in the open segment (a, b)? (On the segment, not an endpoint.)
#[inline]
pub fn on_open_segment(p: Pt, a: Pt, b: Pt) -> bool {
    orient(a, b, p) == Ordering::Equal && strictly_between(p, a, b)
}

/// For `p` on the line through `a` and `b`: does it lie strictly between them?
#[inline]
pub fn strictly_between(p: Pt, a: Pt, b: Pt) -> bool {
    dot(a, b, a, p) == Ordering::Greater && dot(b, a, b, p) == Ordering::Greater
}

/// Do the segments (a, b) and (c, d) properly cross: meet at one point interior to both,
/// not collinear?
pub fn proper_cross(a: Pt, b: Pt, c: Pt, d: Pt) -> bool {
    let (o1, o2) = (orient(a, b, c), orient(a, b, d));
    if o1 == Ordering::Equal || o2 == Ordering::Equal || o1 == o2 {
        return false;
    }
    let (o3, o4) = (orient(c, d, a), orient(c, d, b));
    o3 != Ordering::Equal && o4 != Ordering::Equal && o3 != o4
}

/// Do the segments (a, b) and (c, d) share a piece of positive length?
pub fn collinear_overlap(a: Pt, b: Pt, c: Pt, d: Pt) -> bool {
    orient(a, b, c) == Ordering::Equal && orient(a, b, d) == Ordering::Equal && overlap_along(a, b, c, d)
}

/// For four points on one line: do the segments (a, b) and (c, d) share a piece of positive
/// length?
pub fn overlap_along(a: Pt, b: Pt, c: Pt, d: Pt) -> bool {
    // Position along a → b, compared exactly.
    let cmp = |x: Pt, y: Pt| dot(a, b, y, x);
    let (c0, d0) = if cmp(c, d) == Ordering::Greater { (d, c) } else { (c, d) };
    let lo = if cmp(c0, a) == Ordering::Greater { c0 } else { a };
    let hi = if cmp(d0, b) == Ordering::Less { d0 } else { b };
    cmp(lo, hi) == Ordering::Less
}

/// Do two segments touch in the rules' sense: share a piece of positive length, or properly
/// cross? (Contact at a single point is not touching.)
pub fn segments_touch(a: Pt, b: Pt, c: Pt, d: Pt) -> bool {
    proper_cross(a, b, c, d) || collinear_overlap(a, b, c, d)
}

/// Where a point lies relative to a polygon.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Inside {
    /// In the open interior.
    Interior,
    /// On the boundary: on edge `i` (from vertex `i` to `i + 1`), or at a vertex (then the
    /// edge leaving it).
    Boundary(usize),
    /// Outside.
    Exterior,
}

/// Locates `p` relative to the simple polygon `poly` (either orientation).
pub fn locate(p: Pt, poly: &[Pt]) -> Inside {
    let n = poly.len();
    for i in 0..n {
        let (a, b) = (poly[i], poly[(i + 1) % n]);
        if p == a || on_open_segment(p, a, b) {
            return Inside::Boundary(i);
        }
    }
    // Crossing number of the ray from p towards +x.
    let mut inside = false;
    for i in 0..n {
        let (a, b) = (poly[i], poly[(i + 1) % n]);
        let a_above = above(a, p);
        let b_above = above(b, p);
        if a_above != b_above {
            // The edge crosses the ray's line; it is to the right of p when p is on the
            // inner side of an upward edge, or the outer side of a downward one.
            let o = orient(a, b, p);
            if (b_above && o == Ordering::Greater) || (a_above && o == Ordering::Less) {
                inside = !inside;
            }
        }
    }
    if inside { Inside::Interior } else { Inside::Exterior }
}

/// Do the interiors of two simple counter-clockwise polygons overlap? Exact for convex and
/// non-convex polygons, including shared edges (glued pieces do not overlap) and identical
/// polygons (they do).
///
/// Method: a proper crossing of two edges means overlap. Otherwise every edge of one polygon
/// is cut at the other's vertices lying on it; each piece lies wholly inside, outside or on
/// the other's boundary, so its midpoint decides: inside means overlap, and on the boundary
/// an edge running the same way (interiors on the same side) means overlap. If no boundary
/// enters the other interior, the interiors are disjoint or the polygons are identical, and
/// identical polygons share edges running the same way.
pub fn interiors_overlap(p: &[Pt], q: &[Pt]) -> bool {
    let (n, m) = (p.len(), q.len());
    for i in 0..n {
        for j in 0..m {
            if proper_cross(p[i], p[(i + 1) % n], q[j], q[(j + 1) % m]) {
                return true;
            }
        }
    }
    boundary_enters(p, q) || boundary_enters(q, p)
}

fn boundary_enters(p: &[Pt], q: &[Pt]) -> bool {
    let (n, m) = (p.len(), q.len());
    let q2: Vec<Pt> = q.iter().map(|z| z.twice()).collect();
    let mut cuts = Vec::with_capacity(m + 2);
    for i in 0..n {
        let (a, b) = (p[i], p[(i + 1) % n]);
        cuts.clear();
        cuts.push(a);
        cuts.extend(q.iter().copied().filter(|&v| on_open_segment(v, a, b)));
        cuts.push(b);
        cuts.sort_by(|&x, &y| dot(a, b, y, x));
        for w in cuts.windows(2) {
            if w[0] == w[1] {
                continue;
            }
            let mid = Pt { z: w[0].z + w[1].z, x: w[0].x + w[1].x, y: w[0].y + w[1].y };
            match locate(mid, &q2) {
                Inside::Interior => return true,
                Inside::Boundary(j) => {
                    // The piece lies along q's edge j: same direction means the interiors are
                    // on the same side.
                    if dot(a, b, q[j], q[(j + 1) % m]) == Ordering::Greater {
                        return true;
                    }
                }
                Inside::Exterior => {}
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The expanded sign tests agree with the product they stand for.
        #[test]
        fn cross_and_dot_signs_equal_the_full_product(
            u in proptest::array::uniform4(-200i32..200),
            v in proptest::array::uniform4(-200i32..200),
        ) {
            let (u, v) = (Z(u), Z(v));
            prop_assert_eq!(cross_sign(u, v), (u.conj() * v).im_sign());
            prop_assert_eq!(dot_sign(u, v), (u.conj() * v).re_sign());
        }

        /// The same with small coordinates, where collinear and perpendicular pairs (the
        /// `Equal` answers) are common.
        #[test]
        fn cross_and_dot_signs_agree_on_ties(
            u in proptest::array::uniform4(-2i32..3),
            v in proptest::array::uniform4(-2i32..3),
        ) {
            let (u, v) = (Z(u), Z(v));
            prop_assert_eq!(cross_sign(u, v), (u.conj() * v).im_sign());
            prop_assert_eq!(dot_sign(u, v), (u.conj() * v).re_sign());
        }
    }

    // The tests below were written for points given exactly; these wrappers give them the
    // filtered predicates (local items shadow the glob import).
    fn on_open_segment(p: Z, a: Z, b: Z) -> bool {
        super::on_open_segment(p.into(), a.into(), b.into())
    }
    fn segments_touch(a: Z, b: Z, c: Z, d: Z) -> bool {
        super::segments_touch(a.into(), b.into(), c.into(), d.into())
    }
    fn pts(v: &[Z]) -> Vec<Pt> {
        v.iter().map(|&z| z.into()).collect()
    }
    fn interiors_overlap(p: &[Z], q: &[Z]) -> bool {
        super::interiors_overlap(&pts(p), &pts(q))
    }
    fn locate(p: Z, poly: &[Z]) -> Inside {
        super::locate(p.into(), &pts(poly))
    }

    /// The exact tests, unfiltered: what the filtered ones must equal.
    fn on_open_segment_exact(p: Z, a: Z, b: Z) -> bool {
        orient_exact(a, b, p) == Ordering::Equal
            && dot_sign(b - a, p - a) == Ordering::Greater
            && dot_sign(a - b, p - b) == Ordering::Greater
    }

    proptest! {
        /// The filtered orientation and point-on-segment tests equal the exact ones, with
        /// coordinates up to the bound `FILTER`'s proof assumes (2¹³) and with small ones,
        /// where collinear triples (the exact fallback) are common.
        #[test]
        fn filtered_predicates_equal_the_exact_ones(
            big in proptest::array::uniform3(proptest::array::uniform4(-8191i32..8192)),
            small in proptest::array::uniform3(proptest::array::uniform4(-2i32..3)),
        ) {
            for [a, b, c] in [big, small] {
                let (a, b, c) = (Z(a), Z(b), Z(c));
                prop_assert_eq!(orient(a.into(), b.into(), c.into()), orient_exact(a, b, c));
                prop_assert_eq!(on_open_segment(a, b, c), on_open_segment_exact(a, b, c));
                // The midpoint of b and c (doubled) lies on their segment exactly.
                let m = b + c;
                if b != c {
                    prop_assert!(super::on_open_segment(m.into(), b.double().into(), c.double().into()));
                }
            }
        }
    }

    /// `FILTER`'s error bound assumes an edge moves each coordinate by at most 4.
    #[test]
    fn an_edge_moves_each_coordinate_by_at_most_four() {
        for l in crate::trigolden::shapes::Len::ALL {
            for k in 0..10 {
                let e = l.z() * Z::omega_pow(k);
                assert!(e.0.iter().all(|c| c.abs() <= 4), "{} at {k}: {e}", l.name());
            }
        }
    }

    fn approx(z: Z) -> (f64, f64) {
        z.to_f64()
    }

    #[test]
    fn arithmetic_matches_the_complex_numbers() {
        let samples = [Z::new(1, 2, -3, 4), Z::new(-2, 0, 5, 1), Z::PHI, Z::OMEGA, Z::new(0, -1, -1, 3)];
        for &x in &samples {
            for &y in &samples {
                let (xr, xi) = approx(x);
                let (yr, yi) = approx(y);
                let (pr, pi) = approx(x * y);
                assert!((pr - (xr * yr - xi * yi)).abs() < 1e-9 && (pi - (xr * yi + xi * yr)).abs() < 1e-9);
            }
            let (cr, ci) = approx(x.conj());
            let (xr, xi) = approx(x);
            assert!((cr - xr).abs() < 1e-9 && (ci + xi).abs() < 1e-9, "conj of {x}");
        }
        assert_eq!(Z::omega_pow(5), -Z::ONE);
        assert_eq!(Z::omega_pow(10), Z::ONE);
        assert_eq!(Z::omega_pow(4) * Z::OMEGA, Z::omega_pow(5));
        assert_eq!(Z::omega_pow(-1), Z::OMEGA.conj());
        let phi = (1.0 + 5f64.sqrt()) / 2.0;
        assert!((approx(Z::PHI).0 - phi).abs() < 1e-12 && approx(Z::PHI).1.abs() < 1e-12);
        assert_eq!(Z::PHI * Z::PHI, Z::PHI + Z::ONE, "φ² = φ + 1");
    }

    #[test]
    fn signs_are_exact_and_agree_with_floating_point_away_from_zero() {
        let phi = (1.0 + 5f64.sqrt()) / 2.0;
        for p in -30i64..=30 {
            for q in -30i64..=30 {
                let f = p as f64 + q as f64 * phi;
                let want = if p == 0 && q == 0 {
                    Ordering::Equal
                } else if f > 0.0 {
                    Ordering::Greater
                } else {
                    Ordering::Less
                };
                assert_eq!(sign_phi(p, q), want, "{p} + {q}φ");
            }
        }
        // Near-cancellations: Fibonacci ratios approach φ from both sides.
        let (mut f0, mut f1) = (1i64, 1i64);
        for _ in 0..40 {
            let f2 = f0 + f1;
            // f2 − f1·φ alternates in sign and shrinks towards 0.
            let s = sign_phi(f2, -f1);
            let f = f2 as f64 - f1 as f64 * phi;
            if f.abs() > 1e-6 {
                assert_eq!(s, if f > 0.0 { Ordering::Greater } else { Ordering::Less });
            }
            assert_ne!(s, Ordering::Equal);
            (f0, f1) = (f1, f2);
        }
    }

    #[test]
    fn segment_predicates_on_exact_edge_cases() {
        let o = Z::ZERO;
        let one = Z::ONE;
        let two = Z::new(2, 0, 0, 0);
        let w = Z::OMEGA;
        // A point on an open segment, and its endpoints.
        assert!(on_open_segment(one, o, two));
        assert!(!on_open_segment(o, o, two) && !on_open_segment(two, o, two));
        // A 36° direction: φ·ω lies on the segment 0 → 2φ·ω.
        assert!(on_open_segment(Z::PHI * w, o, Z::PHI * w + Z::PHI * w));
        assert!(!on_open_segment(Z::PHI * w + one, o, Z::PHI * w + Z::PHI * w));
        // Touching at a vertex is not touching; a T-junction is not touching.
        assert!(!segments_touch(o, one, one, one + w));
        assert!(!segments_touch(o, two, one, one + w), "vertex in an open edge");
        // Collinear partial overlap touches; collinear end-to-end contact does not.
        assert!(segments_touch(o, two, one, Z::new(3, 0, 0, 0)));
        assert!(!segments_touch(o, one, one, two));
        assert!(segments_touch(o, two, two, o), "the same segment");
        // Proper crossing.
        assert!(segments_touch(o, two + w, one + w + w, one - w));
        // Parallel, apart.
        assert!(!segments_touch(o, two, w, two + w));
    }

    #[test]
    fn polygon_overlap_on_exact_edge_cases() {
        let sq = |x: i32| {
            // A rhombus with 72° and 108° angles, shifted x along the real axis.
            let s = Z::new(x, 0, 0, 0);
            vec![s, s + Z::ONE, s + Z::ONE + Z::omega_pow(2), s + Z::omega_pow(2)]
        };
        let a = sq(0);
        assert!(interiors_overlap(&a, &a), "identical");
        assert!(!interiors_overlap(&a, &sq(1)), "sharing an edge");
        assert!(!interiors_overlap(&a, &sq(2)), "apart");
        let big: Vec<Z> = a.iter().map(|z| z.double()).collect();
        assert!(
            interiors_overlap(&a, &big) && interiors_overlap(&big, &a),
            "one inside the other, sharing a corner"
        );
        // Half-shifted copy: vertices on edges, no proper crossing, yet overlapping.
        let half: Vec<Z> = big.iter().map(|&z| z + Z::ONE).collect();
        assert!(interiors_overlap(&big, &half));
        // A non-convex quadrilateral (reflex corner at c) and the triangle filling its notch:
        // glued along two edges, not overlapping; the hull overlaps both.
        let up = Z::new(0, 0, 1, 1); // ω² + ω³ = i·2sin72°
        let (o, b4) = (Z::ZERO, Z::new(4, 0, 0, 0));
        let d = Z::new(2, 0, 0, 0) + up + up;
        let c = Z::new(2, 0, 0, 0) + up;
        let concave = vec![o, b4, d, c];
        let notch = vec![o, c, d];
        let hull = vec![o, b4, d];
        assert!(!interiors_overlap(&concave, &notch) && !interiors_overlap(&notch, &concave));
        assert!(interiors_overlap(&concave, &hull) && interiors_overlap(&notch, &hull));
        assert!(interiors_overlap(&concave, &concave));
        assert_eq!(locate(Z::new(1, 0, 0, 0), &a), Inside::Boundary(1), "a vertex: the edge leaving it");
        assert_eq!(locate(Z::new(1, 0, 0, 0), &big), Inside::Boundary(0));
        assert_eq!(
            locate(Z::new(1, 0, 1, 0).double(), &big.iter().map(|z| z.double()).collect::<Vec<_>>()),
            Inside::Interior
        );
        assert_eq!(locate(Z::new(5, 0, 0, 0), &a), Inside::Exterior);
    }
}
