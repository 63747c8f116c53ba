//! The report's statistics: a first-player score rate with its 95% interval, a mean with its
//! interval, histograms.

use serde::Serialize;

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_964;

/// How the first player fared in a set of games.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Rate {
    /// Games.
    pub games: usize,
    /// First-player wins.
    pub wins: usize,
    /// Draws.
    pub draws: usize,
    /// First-player losses.
    pub losses: usize,
    /// The first player's score rate, (wins + draws / 2) / games: 0.5 is balance.
    pub score: f64,
    /// Its 95% interval (Wilson), low end.
    pub low: f64,
    /// Its 95% interval (Wilson), high end.
    pub high: f64,
    /// The first player's mean score margin (points ahead at the end).
    pub margin: f64,
    /// Its 95% interval (normal approximation), low end.
    pub margin_low: f64,
    /// Its 95% interval (normal approximation), high end.
    pub margin_high: f64,
}

impl Rate {
    /// The rate of games given as (result, margin) from the first player's view.
    pub fn of(games: impl IntoIterator<Item = (i8, i32)>) -> Rate {
        let mut r = Rate::default();
        let mut margins = Vec::new();
        for (result, margin) in games {
            r.games += 1;
            match result.signum() {
                1 => r.wins += 1,
                0 => r.draws += 1,
                _ => r.losses += 1,
            }
            margins.push(f64::from(margin));
        }
        if r.games == 0 {
            return r;
        }
        let n = r.games as f64;
        r.score = (r.wins as f64 + r.draws as f64 / 2.0) / n;
        (r.low, r.high) = wilson(r.score, n);
        let (mean, half) = mean_interval(&margins);
        (r.margin, r.margin_low, r.margin_high) = (mean, mean - half, mean + half);
        r
    }

    /// The interval leaves 0.5 out: the first player is favoured (or not) beyond chance.
    pub fn unbalanced(&self) -> bool {
        self.games > 0 && (self.low > 0.5 || self.high < 0.5)
    }

    /// The verdict on balance, in English and Chinese: at least 30 games, and an interval
    /// wholly on one side of 50% for a side to be favoured.
    pub fn verdict(&self) -> (&'static str, &'static str) {
        if self.games < 30 {
            ("too few games for a verdict", "對局太少，尚無定論")
        } else if self.low > 0.5 {
            ("the first player is favoured beyond chance", "先手明顯佔優")
        } else if self.high < 0.5 {
            ("the second player is favoured beyond chance", "後手明顯佔優")
        } else {
            ("balanced within chance", "在誤差範圍內平衡")
        }
    }
}

/// The Wilson score interval of a rate `p` over `n` trials (draws counted as half a win).
pub fn wilson(p: f64, n: f64) -> (f64, f64) {
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The mean of `xs` and the half-width of its 95% interval (0 for fewer than two values).
pub fn mean_interval(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, Z95 * (var / n).sqrt())
}

/// A histogram of whole numbers.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Histogram {
    /// Bins, in order: values `lo..=hi` and how many fell there.
    pub bins: Vec<Bin>,
    /// The values' mean.
    pub mean: f64,
    /// The median.
    pub median: i64,
}

/// One histogram bin.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bin {
    /// Lowest value in the bin.
    pub lo: i64,
    /// Highest value in the bin.
    pub hi: i64,
    /// Values in the bin.
    pub count: usize,
}

impl Histogram {
    /// At most `max_bins` bins of equal whole width covering every value.
    pub fn of(values: &[i64], max_bins: usize) -> Histogram {
        let (Some(&lo), Some(&hi)) = (values.iter().min(), values.iter().max()) else {
            return Histogram::default();
        };
        let span = hi - lo + 1;
        let width = (span + max_bins as i64 - 1) / max_bins.max(1) as i64;
        let width = width.max(1);
        let count = ((span + width - 1) / width) as usize;
        let mut bins: Vec<Bin> = (0..count)
            .map(|i| Bin { lo: lo + i as i64 * width, hi: lo + (i as i64 + 1) * width - 1, count: 0 })
            .collect();
        for &v in values {
            bins[((v - lo) / width) as usize].count += 1;
        }
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        Histogram {
            bins,
            mean: values.iter().sum::<i64>() as f64 / values.len() as f64,
            median: sorted[sorted.len() / 2],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_counts_draws_as_half_and_its_interval_holds_the_rate() {
        let r = Rate::of([(1, 3), (1, 1), (0, 0), (-1, -2)]);
        assert_eq!((r.games, r.wins, r.draws, r.losses), (4, 2, 1, 1));
        assert!((r.score - 0.625).abs() < 1e-12);
        assert!(r.low < r.score && r.score < r.high && r.low >= 0.0 && r.high <= 1.0);
        assert!((r.margin - 0.5).abs() < 1e-12);
        assert!(!r.unbalanced(), "four games prove nothing");
    }

    #[test]
    fn the_wilson_interval_matches_a_known_value() {
        // 60 of 100: the textbook Wilson interval is [0.502, 0.691].
        let (lo, hi) = wilson(0.6, 100.0);
        assert!((lo - 0.502).abs() < 0.001 && (hi - 0.691).abs() < 0.001, "{lo} {hi}");
        // Many games all won by the first player: unbalanced beyond doubt.
        assert!(Rate::of(std::iter::repeat_n((1, 1), 50)).unbalanced());
    }

    #[test]
    fn a_histogram_covers_every_value_once() {
        let h = Histogram::of(&[1, 2, 2, 9, 10, 30], 5);
        assert_eq!(h.bins.iter().map(|b| b.count).sum::<usize>(), 6);
        assert_eq!(h.bins.first().unwrap().lo, 1);
        assert!(h.bins.last().unwrap().hi >= 30);
        assert!(h.bins.len() <= 5);
        assert_eq!(h.median, 9);
        assert!(Histogram::of(&[], 5).bins.is_empty());
    }
}
