//! The network's forward pass on one CPU core without tensors: what the search calls at its
//! leaves, a few positions at a time, where burn's per-call set-up (~25 µs) costs more than
//! the arithmetic.
//!
//! Same weights, same function as [`crate::net::ValueNet::forward`] (the tests compare them),
//! computed the way NNUE engines do: the input layer sums only the rows of the features that
//! are not zero (most of a position's inputs are 0/1 indicators and most are 0), every hidden
//! layer skips the inputs that the ReLU set to zero, and the policy head computes only the
//! entries the caller asks for (the legal actions), as dot products over a transposed copy of
//! its weights. The loops are plain Rust; [`pulp::Arch::dispatch`] compiles them for the
//! widest vector instructions the machine has (AVX2 and FMA on current x86) and picks that
//! version at run time, so the binary still runs on any x86-64.

use burn::tensor::TensorData;

/// One dense layer's weights as plain vectors.
#[derive(Clone, Debug)]
struct Dense {
    /// `[in, out]` row-major, as burn stores a linear layer: row `i` is input `i`'s weights.
    w: Vec<f32>,
    /// `[out]`.
    b: Vec<f32>,
    outputs: usize,
}

impl Dense {
    fn from(layer: &burn::nn::Linear) -> Dense {
        let dims = layer.weight.val().dims();
        let w = data(layer.weight.val().into_data());
        let b = match &layer.bias {
            Some(b) => data(b.val().into_data()),
            None => vec![0.0; dims[1]],
        };
        Dense { w, b, outputs: dims[1] }
    }

    /// `out[p] = b + Σᵢ x[p][i] · w[i]` over the non-zero `x[p][i]`, for the `n` positions
    /// of `x` (`n × inputs`). Input by input, so each weight row is read once per batch and
    /// stays in cache while every position uses it; position by position would stream all
    /// the weights from memory once per position (Battle Number's input layer is 0.5 MB).
    #[inline(always)]
    fn apply(&self, x: &[f32], inputs: usize, n: usize, out: &mut [f32]) {
        let m = self.outputs;
        for o in out.chunks_exact_mut(m) {
            o.copy_from_slice(&self.b);
        }
        for (i, row) in self.w.chunks_exact(m).enumerate() {
            for (p, o) in out.chunks_exact_mut(m).enumerate().take(n) {
                let xi = x[p * inputs + i];
                if xi != 0.0 {
                    for (o, w) in o.iter_mut().zip(row) {
                        *o += xi * w;
                    }
                }
            }
        }
    }
}

fn data(d: TensorData) -> Vec<f32> {
    d.try_to_vec::<f32>().expect("model tensors are float32 (checked at load)")
}

/// The network's weights laid out for [`CpuNet::forward`].
#[derive(Clone, Debug)]
pub struct CpuNet {
    features: usize,
    hidden: usize,
    input: Dense,
    blocks: Vec<(Dense, Dense)>,
    wdl: Dense,
    margin: Dense,
    /// The policy head transposed, `[P, H]`: entry `j`'s weights are contiguous.
    policy_t: Vec<f32>,
    policy_b: Vec<f32>,
    /// The vector instructions this machine has, detected once.
    arch: pulp::Arch,
}

/// What [`CpuNet::forward`] returns for one position (raw, before softmax and scaling).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpuOutput {
    /// Win/draw/loss logits.
    pub wdl_logits: [f32; 3],
    /// The margin output (score difference / margin scale).
    pub margin: f32,
}

impl CpuNet {
    /// The weights of `net` (any device) copied out.
    pub fn new(net: &crate::net::ValueNet) -> CpuNet {
        let parts = net.parts();
        let input = Dense::from(parts.input);
        let hidden = input.outputs;
        let features = input.w.len() / hidden;
        let policy = Dense::from(parts.policy);
        let p = policy.outputs;
        let mut policy_t = vec![0.0; p * hidden];
        for i in 0..hidden {
            for j in 0..p {
                policy_t[j * hidden + i] = policy.w[i * p + j];
            }
        }
        CpuNet {
            features,
            hidden,
            input,
            blocks: parts.blocks.iter().map(|(a, b)| (Dense::from(a), Dense::from(b))).collect(),
            wdl: Dense::from(parts.wdl),
            margin: Dense::from(parts.margin),
            policy_t,
            policy_b: policy.b,
            arch: pulp::Arch::new(),
        }
    }

    /// Policy entries (the head's width; 1 for a game without a policy).
    pub fn policy_len(&self) -> usize {
        self.policy_b.len()
    }

    /// Runs the network on `n` positions (`features`: `n × F` row-major). For position `i`,
    /// `policy(i)` names the policy entries wanted (`None`: all of them); their logits are
    /// written to `policy_out[i · P + j]`, and the other entries of that row are left as
    /// they were.
    ///
    /// # Panics
    /// If `features` is not `n × F` or `policy_out` not `n × P` long, or an index is ≥ P.
    pub fn forward<'a>(
        &self,
        features: &[f32],
        n: usize,
        policy: &dyn Fn(usize) -> Option<&'a [usize]>,
        out: &mut Vec<CpuOutput>,
        policy_out: &mut [f32],
    ) {
        let (f, h, p) = (self.features, self.hidden, self.policy_len());
        assert_eq!(features.len(), n * f, "feature batch length");
        assert_eq!(policy_out.len(), n * p, "policy output length");
        out.clear();
        self.arch.dispatch(
            #[inline(always)]
            || {
                let mut x = vec![0.0f32; n * h];
                let mut y = vec![0.0f32; n * h];
                let mut z = vec![0.0f32; n * h];
                self.input.apply(features, f, n, &mut x);
                relu(&mut x);
                for (a, b) in &self.blocks {
                    a.apply(&x, h, n, &mut y);
                    relu(&mut y);
                    // x ← relu(x + b·y): the block's output is added to its input.
                    b.apply(&y, h, n, &mut z);
                    for (xv, zv) in x.iter_mut().zip(&z) {
                        *xv = (*xv + zv).max(0.0);
                    }
                }
                let mut wdl = vec![0.0f32; n * 3];
                self.wdl.apply(&x, h, n, &mut wdl);
                let mut margin = vec![0.0f32; n];
                self.margin.apply(&x, h, n, &mut margin);
                for (i, xi) in x.chunks_exact(h).enumerate() {
                    out.push(CpuOutput {
                        wdl_logits: [wdl[i * 3], wdl[i * 3 + 1], wdl[i * 3 + 2]],
                        margin: margin[i],
                    });
                    let row_out = &mut policy_out[i * p..(i + 1) * p];
                    let mut entry = |j: usize| {
                        let w = &self.policy_t[j * h..(j + 1) * h];
                        row_out[j] = self.policy_b[j] + dot(xi, w);
                    };
                    match policy(i) {
                        Some(wanted) => wanted.iter().for_each(|&j| entry(j)),
                        None => (0..p).for_each(entry),
                    }
                }
            },
        );
    }
}

#[inline(always)]
fn relu(x: &mut [f32]) {
    for v in x {
        *v = v.max(0.0);
    }
}

/// A dot product in eight lanes, so the compiler may vectorise it (a single running sum
/// fixes the order of the additions and would stay scalar).
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            lanes[k] += x[k] * y[k];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};

    use burn::prelude::*;

    use super::*;
    use crate::net::{NetConfig, ValueNet};

    #[test]
    fn the_cpu_pass_equals_burns_forward() {
        let device = crate::cpu();
        let cfg = NetConfig { hidden: 40, blocks: 2 };
        let (f, p) = (37, 11);
        let net = ValueNet::new(&cfg, f, p, &device);
        let cpu = CpuNet::new(&net);
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let n = 5;
        // Mostly zeros and ones, as the games' encodings are, and some real values.
        let x: Vec<f32> = (0..n * f)
            .map(|_| match rng.random_range(0..4) {
                0 => 1.0,
                1 => rng.random_range(-2.0..2.0),
                _ => 0.0,
            })
            .collect();
        let reference = net.forward(Tensor::<2>::from_data(TensorData::new(x.clone(), [n, f]), &device));
        let wdl = data(reference.wdl_logits.into_data());
        let margin = data(reference.margin.into_data());
        let policy = data(reference.policy_logits.into_data());
        let mut out = Vec::new();
        let mut pol = vec![f32::NAN; n * p];
        cpu.forward(&x, n, &|_| None, &mut out, &mut pol);
        let close = |a: f32, b: f32| (a - b).abs() <= 1e-4 * (1.0 + b.abs());
        for i in 0..n {
            for k in 0..3 {
                assert!(close(out[i].wdl_logits[k], wdl[i * 3 + k]), "{i} wdl {k}");
            }
            assert!(close(out[i].margin, margin[i]), "{i} margin");
        }
        for (a, b) in pol.iter().zip(&policy) {
            assert!(close(*a, *b), "policy {a} vs {b}");
        }
        // Only the entries asked for are written.
        let wanted = [vec![3usize, 0], vec![], vec![10], vec![1, 2, 3], vec![5]];
        let mut some = vec![f32::NAN; n * p];
        cpu.forward(&x, n, &|i| Some(&wanted[i][..]), &mut out, &mut some);
        for i in 0..n {
            for j in 0..p {
                let v = some[i * p + j];
                if wanted[i].contains(&j) {
                    assert!(close(v, policy[i * p + j]));
                } else {
                    assert!(v.is_nan());
                }
            }
        }
    }
}
