//! 7×7 bitboards in a `u64`: bit `row * 7 + col`, row 0 at the top.
//!
//! Shifts that move a whole set one square in a direction are a handful of word operations,
//! which is what makes move generation cheap enough for rollouts.

/// Every square of the board.
pub const FULL: u64 = (1u64 << 49) - 1;
/// Column 0 (west edge).
pub const COL0: u64 = col_mask(0);
/// Column 6 (east edge).
pub const COL6: u64 = col_mask(6);
/// Row 0 (north edge).
pub const ROW0: u64 = 0x7f;
/// Row 6 (south edge).
pub const ROW6: u64 = 0x7f << 42;
/// The border squares.
pub const BORDER: u64 = COL0 | COL6 | ROW0 | ROW6;

const fn col_mask(c: u32) -> u64 {
    let mut m = 0u64;
    let mut r = 0;
    while r < 7 {
        m |= 1u64 << (r * 7 + c);
        r += 1;
    }
    m
}

/// Directions, which are also the sides of a square: north, east, south, west.
pub const N: usize = 0;
/// East.
pub const E: usize = 1;
/// South.
pub const S: usize = 2;
/// West.
pub const W: usize = 3;

/// The squares one step in direction `d` from the squares of `m` (those that stay on the board).
#[inline(always)]
pub fn shift(m: u64, d: usize) -> u64 {
    match d {
        N => m >> 7,
        E => (m << 1) & !COL0 & FULL,
        S => (m << 7) & FULL,
        _ => (m >> 1) & !COL6,
    }
}

/// The squares side-adjacent to some square of `m`.
#[inline(always)]
pub fn neighbours(m: u64) -> u64 {
    shift(m, N) | shift(m, E) | shift(m, S) | shift(m, W)
}

/// Iterates the set squares of a mask, lowest first.
#[derive(Clone, Copy)]
pub struct Squares(pub u64);

impl Iterator for Squares {
    type Item = u8;
    #[inline(always)]
    fn next(&mut self) -> Option<u8> {
        if self.0 == 0 {
            None
        } else {
            let s = self.0.trailing_zeros() as u8;
            self.0 &= self.0 - 1;
            Some(s)
        }
    }
}

/// Grows `seed` inside `within` through side-adjacent steps until it stops growing.
#[inline]
pub fn flood(mut seed: u64, within: u64) -> u64 {
    seed &= within;
    loop {
        let next = (seed | neighbours(seed)) & within;
        if next == seed {
            return seed;
        }
        seed = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_do_not_wrap() {
        let east_edge = 1u64 << (2 * 7 + 6);
        assert_eq!(shift(east_edge, E), 0);
        let west_edge = 1u64 << (3 * 7);
        assert_eq!(shift(west_edge, W), 0);
        assert_eq!(shift(ROW0, N), 0);
        assert_eq!(shift(ROW6, S), 0);
        let centre = 1u64 << 24;
        assert_eq!(neighbours(centre).count_ones(), 4);
        assert_eq!(neighbours(1).count_ones(), 2);
        assert_eq!(BORDER.count_ones(), 24);
    }

    #[test]
    fn flood_stops_at_walls() {
        // Column 3 is a wall; flood from column 0 fills columns 0..=2 only.
        let within = FULL & !col_mask(3);
        let filled = flood(COL0, within);
        assert_eq!(filled, COL0 | col_mask(1) | col_mask(2));
    }
}
