//! [`ShallowNet`]: a value network of one hidden layer that a searcher runs itself, the way
//! NNUE engines evaluate: the hidden layer is an *accumulator*, the bias plus the rows of the
//! inputs that are not zero, and a move changes only a few of those rows.
//!
//! The weights are a `nano` model's (no residual block), copied out by the model crate
//! (`model::NetEvaluator` hands them over through [`crate::Evaluator::shallow`]), so the
//! network is trained, published and gated like every other; only its inference moves into
//! the search, where a call through the batch interface would cost more than the arithmetic.

use crate::features::utility;

/// A one-hidden-layer value network in plain vectors.
///
/// Forward: `h = relu(input_bias + Σ_i x_i · input[i])` (`[H]`), then
/// `[w, d, l, m] = head_bias + hᵀ · head` (`[4]`); the value is
/// [`utility`]`(softmax(w, d, l), m · margin_scale, margin_mix, score_scale)` for the side to
/// move, as the model crate's own inference computes it.
#[derive(Clone, Debug, PartialEq)]
pub struct ShallowNet {
    /// Input features (`F`).
    pub features: usize,
    /// Hidden width (`H`).
    pub hidden: usize,
    /// `[F, H]` row-major: row `i` is feature `i`'s weights.
    pub input: Vec<f32>,
    /// `[H]`.
    pub input_bias: Vec<f32>,
    /// `[H, 4]` row-major: hidden unit `j`'s weights to the win, draw and loss logits and the
    /// margin.
    pub head: Vec<f32>,
    /// `[4]`.
    pub head_bias: [f32; 4],
    /// The margin output times this is points.
    pub margin_scale: f32,
    /// [`utility`]'s weight on the margin.
    pub margin_mix: f32,
    /// [`utility`]'s score scale.
    pub score_scale: f32,
}

/// A [`ShallowNet`] whose vectors do not fit its sizes.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("shallow network: {0}")]
pub struct ShapeError(String);

impl ShallowNet {
    /// Checks every vector against `features` and `hidden`.
    ///
    /// # Errors
    /// The first vector whose length is wrong, or a weight that is not finite.
    pub fn validate(&self) -> Result<(), ShapeError> {
        let (f, h) = (self.features, self.hidden);
        for (name, len, want) in [
            ("input", self.input.len(), f * h),
            ("input_bias", self.input_bias.len(), h),
            ("head", self.head.len(), h * 4),
        ] {
            if len != want || want == 0 {
                return Err(ShapeError(format!(
                    "{name} has {len} weights, {want} expected (F = {f}, H = {h})"
                )));
            }
        }
        let all = self.input.iter().chain(&self.input_bias).chain(&self.head).chain(&self.head_bias);
        if !all.copied().all(f32::is_finite) {
            return Err(ShapeError("a weight is not finite".into()));
        }
        Ok(())
    }

    /// Sets `acc` (`[H]`) to the input bias plus `value · row(index)` for every active input.
    ///
    /// # Panics
    /// If `acc` is not `H` long or an index is not below `F`.
    pub fn accumulate(&self, active: impl IntoIterator<Item = (usize, f32)>, acc: &mut [f32]) {
        acc.copy_from_slice(&self.input_bias);
        for (i, x) in active {
            self.add_row(i, x, acc);
        }
    }

    /// `acc += x · row(i)`: one input changing by `x` (an NNUE update).
    ///
    /// # Panics
    /// If `acc` is not `H` long or `i` is not below `F`.
    #[inline]
    pub fn add_row(&self, i: usize, x: f32, acc: &mut [f32]) {
        let h = self.hidden;
        let row = &self.input[i * h..(i + 1) * h];
        // `x` is 1 for the indicator inputs that are most of them: a plain add.
        if x == 1.0 {
            for (a, w) in acc.iter_mut().zip(row) {
                *a += w;
            }
        } else if x == -1.0 {
            for (a, w) in acc.iter_mut().zip(row) {
                *a -= w;
            }
        } else {
            for (a, w) in acc.iter_mut().zip(row) {
                *a += x * w;
            }
        }
    }

    /// The value for the side to move, in `[-1, 1]`, from an accumulator.
    ///
    /// # Panics
    /// If `acc` is not `H` long.
    pub fn value(&self, acc: &[f32]) -> f32 {
        assert_eq!(acc.len(), self.hidden, "accumulator length");
        let mut out = self.head_bias;
        for (a, w) in acc.iter().zip(self.head.chunks_exact(4)) {
            let r = a.max(0.0);
            out[0] += r * w[0];
            out[1] += r * w[1];
            out[2] += r * w[2];
            out[3] += r * w[3];
        }
        let m = out[0].max(out[1]).max(out[2]);
        let e = [(out[0] - m).exp(), (out[1] - m).exp(), (out[2] - m).exp()];
        let s = e[0] + e[1] + e[2];
        let wdl = [e[0] / s, e[1] / s, e[2] / s];
        utility(wdl, out[3] * self.margin_scale, self.margin_mix, self.score_scale)
    }

    /// The value of a dense input vector (`[F]`): the reference the sparse paths are tested
    /// against.
    ///
    /// # Panics
    /// If `x` is not `F` long.
    pub fn value_dense(&self, x: &[f32]) -> f32 {
        assert_eq!(x.len(), self.features, "input length");
        let mut acc = vec![0.0; self.hidden];
        self.accumulate(x.iter().enumerate().filter(|p| *p.1 != 0.0).map(|(i, &v)| (i, v)), &mut acc);
        self.value(&acc)
    }
}

/// A network of random weights for tests (`features` inputs, `hidden` wide), fixed by `seed`.
#[cfg(test)]
pub(crate) fn random_net(features: usize, hidden: usize, seed: u64) -> ShallowNet {
    use rand::RngExt;
    let mut rng = crate::rng_from_seed(seed);
    ShallowNet {
        features,
        hidden,
        input: (0..features * hidden).map(|_| rng.random_range(-0.3f32..0.3)).collect(),
        input_bias: (0..hidden).map(|_| rng.random_range(-0.1f32..0.1)).collect(),
        head: (0..hidden * 4).map(|_| rng.random_range(-0.5f32..0.5)).collect(),
        head_bias: [0.0, 0.1, 0.0, 0.0],
        margin_scale: 10.0,
        margin_mix: 0.5,
        score_scale: 3.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net() -> ShallowNet {
        let (f, h) = (5, 3);
        ShallowNet {
            features: f,
            hidden: h,
            input: (0..f * h).map(|i| (i as f32 * 0.37).sin()).collect(),
            input_bias: vec![0.1, -0.2, 0.3],
            head: (0..h * 4).map(|i| (i as f32 * 0.71).cos()).collect(),
            head_bias: [0.05, 0.0, -0.05, 0.1],
            margin_scale: 10.0,
            margin_mix: 0.5,
            score_scale: 3.0,
        }
    }

    #[test]
    fn sparse_updates_equal_a_full_recomputation() {
        let n = net();
        n.validate().unwrap();
        let x = [1.0, 0.0, 0.5, 1.0, 0.0];
        let mut acc = vec![0.0; 3];
        n.accumulate([(0, 1.0), (2, 0.5), (3, 1.0)], &mut acc);
        assert_eq!(n.value(&acc), n.value_dense(&x));
        // Feature 3 off, feature 1 on: two row updates.
        n.add_row(3, -1.0, &mut acc);
        n.add_row(1, 1.0, &mut acc);
        let y = [1.0, 1.0, 0.5, 0.0, 0.0];
        assert!((n.value(&acc) - n.value_dense(&y)).abs() < 1e-6);
        assert!(n.value(&acc).abs() <= 1.0);
    }

    #[test]
    fn wrong_shapes_and_non_finite_weights_are_refused() {
        let mut n = net();
        n.head.pop();
        assert!(n.validate().unwrap_err().to_string().contains("head has 11 weights, 12 expected"));
        let mut n = net();
        n.input[4] = f32::NAN;
        assert!(n.validate().is_err());
    }
}
