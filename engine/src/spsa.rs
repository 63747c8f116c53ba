//! SPSA (simultaneous perturbation stochastic approximation, Spall 1992), the tuner engine
//! authors use for evaluation weights: every iteration perturbs all weights at once by ±`c`,
//! plays the `+` weights against the `−` weights, and steps every weight along its own
//! perturbation by the result. Two games a step whatever the number of weights, which is
//! why it suits noisy game results.
//!
//! Gains follow Spall's schedule with fishtest's parametrisation: `c_k = c / (k+1)^γ` and a
//! step of `r_k · c_k` per unit of result, where `r_k = r · (A+1)^α / (A+k+1)^α` starts at
//! `r` and decays (α = 0.602, γ = 0.101, A = a tenth of the planned iterations). `c` is per
//! weight, in its own units, so each moves on its own scale. Pure and seeded: the caller
//! plays the games.

use rand::RngExt;

use crate::Rng;

/// How SPSA steps.
#[derive(Clone, Debug, PartialEq)]
pub struct SpsaSettings {
    /// Iterations planned (sets the stability constant `A`, a tenth of it).
    pub iterations: u64,
    /// Learning rate at the first iteration, as a share of `c` per unit of result.
    pub r: f64,
    /// Decay exponent of the step (Spall: 0.602).
    pub alpha: f64,
    /// Decay exponent of the perturbation (Spall: 0.101).
    pub gamma: f64,
}

impl Default for SpsaSettings {
    fn default() -> Self {
        SpsaSettings { iterations: 1_000, r: 0.5, alpha: 0.602, gamma: 0.101 }
    }
}

/// One iteration's perturbation: the signs and the two weight vectors to play.
#[derive(Clone, Debug, PartialEq)]
pub struct Perturbation {
    /// +1 or −1 per weight.
    pub delta: Vec<f64>,
    /// The weights plus `c_k · delta`, rounded and clamped to the bounds.
    pub plus: Vec<i32>,
    /// The weights minus `c_k · delta`, rounded and clamped.
    pub minus: Vec<i32>,
}

/// The tuner's state: the current weights (real-valued between the integer ones played).
#[derive(Clone, Debug)]
pub struct Spsa {
    theta: Vec<f64>,
    c: Vec<f64>,
    bounds: Vec<(i32, i32)>,
    settings: SpsaSettings,
    k: u64,
}

impl Spsa {
    /// A tuner starting at `theta`, perturbing weight `i` by about `c[i]`, keeping it within
    /// `bounds[i]`.
    ///
    /// # Panics
    /// If the three lists differ in length or a `c` is not positive.
    pub fn new(theta: &[i32], c: &[f64], bounds: &[(i32, i32)], settings: SpsaSettings) -> Spsa {
        assert!(theta.len() == c.len() && c.len() == bounds.len(), "one c and one bound per weight");
        assert!(c.iter().all(|&c| c > 0.0), "perturbations are positive");
        Spsa {
            theta: theta.iter().map(|&t| f64::from(t)).collect(),
            c: c.to_vec(),
            bounds: bounds.to_vec(),
            settings,
            k: 0,
        }
    }

    /// Iterations done.
    pub fn iteration(&self) -> u64 {
        self.k
    }

    /// The current weights, rounded.
    pub fn weights(&self) -> Vec<i32> {
        self.theta.iter().map(|t| t.round() as i32).collect()
    }

    /// The current weights, unrounded.
    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    fn ck(&self) -> f64 {
        1.0 / ((self.k + 1) as f64).powf(self.settings.gamma)
    }

    fn rk(&self) -> f64 {
        let a = (self.settings.iterations as f64 / 10.0).max(1.0);
        self.settings.r * ((a + 1.0) / (a + self.k as f64 + 1.0)).powf(self.settings.alpha)
    }

    fn clamp(&self, i: usize, v: f64) -> f64 {
        v.clamp(f64::from(self.bounds[i].0), f64::from(self.bounds[i].1))
    }

    /// The next iteration's two weight vectors.
    pub fn perturb(&self, rng: &mut Rng) -> Perturbation {
        let ck = self.ck();
        let delta: Vec<f64> =
            (0..self.theta.len()).map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 }).collect();
        let at = |sign: f64| -> Vec<i32> {
            (0..self.theta.len())
                .map(|i| self.clamp(i, self.theta[i] + sign * ck * self.c[i] * delta[i]).round() as i32)
                .collect()
        };
        Perturbation { plus: at(1.0), minus: at(-1.0), delta }
    }

    /// Steps along `p.delta` by `result`: the `+` weights' points minus the `−` weights'
    /// points, per game pair, in `[-1, 1]` (a pair won outright by `+` is 1).
    pub fn update(&mut self, p: &Perturbation, result: f64) {
        let step = self.rk() * self.ck() * result.clamp(-1.0, 1.0);
        for i in 0..self.theta.len() {
            self.theta[i] = self.clamp(i, self.theta[i] + step * self.c[i] * p.delta[i]);
        }
        self.k += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A noisy contest between two weight vectors on f(θ) = −Σ((θ−t)/s)²: `+` wins with a
    /// probability that grows with its advantage.
    fn contest(p: &Perturbation, target: &[f64], rng: &mut Rng) -> f64 {
        let f = |w: &[i32]| -> f64 {
            -w.iter().zip(target).map(|(&w, t)| ((f64::from(w) - t) / 50.0).powi(2)).sum::<f64>()
        };
        let edge = (f(&p.plus) - f(&p.minus)).clamp(-1.0, 1.0);
        let win = rng.random::<f64>() < 0.5 + 0.5 * edge;
        if win { 1.0 } else { -1.0 }
    }

    #[test]
    fn noisy_results_lead_the_weights_towards_the_optimum() {
        let target = [300.0, 80.0, 600.0];
        let start = [150, 150, 450];
        let mut rng = crate::rng_from_seed(2026);
        let settings = SpsaSettings { iterations: 4_000, r: 1.0, ..SpsaSettings::default() };
        let mut spsa = Spsa::new(&start, &[30.0, 15.0, 40.0], &[(0, 1000); 3], settings);
        let distance = |w: &[f64]| w.iter().zip(&target).map(|(w, t)| ((w - t) / 50.0).powi(2)).sum::<f64>();
        let before = distance(spsa.theta());
        for _ in 0..4_000 {
            let p = spsa.perturb(&mut rng);
            let r = contest(&p, &target, &mut rng);
            spsa.update(&p, r);
        }
        let after = distance(spsa.theta());
        assert_eq!(spsa.iteration(), 4_000);
        assert!(after < before / 4.0, "from {before:.2} to {after:.2}: {:?}", spsa.weights());
    }

    #[test]
    fn perturbations_respect_the_bounds_and_are_seeded() {
        let spsa = Spsa::new(&[0, 100], &[10.0, 10.0], &[(0, 100), (0, 100)], SpsaSettings::default());
        let p = spsa.perturb(&mut crate::rng_from_seed(1));
        assert_eq!(p, spsa.perturb(&mut crate::rng_from_seed(1)));
        for (i, w) in p.plus.iter().chain(&p.minus).enumerate() {
            assert!((0..=100).contains(w), "{i}: {w}");
        }
        // At a bound, one side of the perturbation is clamped and the other is not.
        for i in 0..2 {
            assert_eq!((p.plus[i] - p.minus[i]).abs(), 10, "{p:?}");
            assert_eq!((p.plus[i] - p.minus[i]).signum() as f64, p.delta[i], "{p:?}");
        }
    }
}
