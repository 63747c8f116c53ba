//! The network's forward pass on one CPU core without tensors: what the search calls at its
//! leaves, a few positions at a time, where burn's per-call set-up (~25 µs) costs more than
//! the arithmetic.
//!
//! Same weights, same function as [`crate::net::ValueNet::forward`] (the tests compare them),
//! computed the way NNUE engines do: the input layer sums only the rows of the features that
//! are not zero (most of a position's inputs are 0/1 indicators and most are 0); each hidden
//! layer is a small register-blocked matrix product (4 positions × 16 outputs, or one
//! position × 64, held in registers over all the inputs, the weights repacked in the order
//! the loop reads them); and the policy head computes only the entries the caller asks for
//! (the legal actions), as dot products over a transposed copy of its weights.
//!
//! The kernels are generic over [`pulp::Simd`]; [`pulp::Arch::dispatch`] compiles them for
//! the widest vector instructions the machine has (AVX2 and FMA on current x86) and picks that
//! version at run time, so the binary still runs on any x86-64. Vector operations stay out of
//! closures: a closure is compiled without its caller's target features, so every operation
//! in it became a call (the first version of this file lost most of its speed that way).

use burn::tensor::TensorData;
use pulp::{Simd, WithSimd};

/// Positions per register block: 4 positions × 2 vector registers of outputs is 8
/// accumulators (AVX2), which leaves the other 8 registers for weights and broadcast inputs.
const GROUP: usize = 4;
/// Output blocks a lone position sums at once (4 × 2 registers, as above).
const WIDE: usize = 4;

/// Scratch space for [`Dense::apply_sparse`]: one position's non-zero inputs.
#[derive(Default)]
struct Sparse {
    index: Vec<u32>,
    value: Vec<f32>,
}

/// How [`CpuNet`] runs its dense layers. [`Kernel::Blocked`] is what inference uses;
/// [`Kernel::Rows`] is the earlier loop, kept so `zeroplay bench net` can time both in one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kernel {
    /// Register-blocked: for each block of two vector registers of outputs and 4 positions,
    /// the accumulators stay in registers over all the inputs, the weights read in the order
    /// stored; the input layer sums only the rows of non-zero features.
    #[default]
    Blocked,
    /// Input by input over the batch, each output row updated in memory (zero inputs skipped).
    Rows,
}

/// One dense layer's weights as plain vectors.
#[derive(Clone, Debug)]
struct Dense {
    /// `[in, out]` row-major, as burn stores a linear layer: row `i` is input `i`'s weights.
    w: Vec<f32>,
    /// The same weights as `[⌈out/W⌉, in, W]` (`W` = [`Dense::width`]): block `k` holds the
    /// weights of outputs `kW..kW+W`, input by input, zero-padded past the last output.
    packed: Vec<f32>,
    /// Outputs per packed block: two of the machine's vector registers.
    width: usize,
    /// `[out]`.
    b: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

impl Dense {
    fn from(layer: &burn::nn::Linear, width: usize) -> Dense {
        let (w, b, inputs, outputs) = weights(layer);
        Dense::new(w, b, inputs, outputs, width)
    }

    fn new(w: Vec<f32>, b: Vec<f32>, inputs: usize, outputs: usize, width: usize) -> Dense {
        let blocks = outputs.div_ceil(width);
        let mut packed = vec![0.0; blocks * inputs * width];
        for i in 0..inputs {
            for o in 0..outputs {
                packed[((o / width) * inputs + i) * width + o % width] = w[i * outputs + o];
            }
        }
        Dense { w, packed, width, b, inputs, outputs }
    }

    /// `out[p] = b + W·x[p]` for the `n` positions of `x` (`n × inputs`), by `kernel`.
    #[inline(always)]
    fn apply<S: Simd>(&self, simd: S, kernel: Kernel, x: &[f32], n: usize, out: &mut [f32]) {
        match kernel {
            Kernel::Blocked => self.apply_blocked(simd, x, n, out),
            Kernel::Rows => self.apply_rows(x, n, out),
        }
    }

    /// Register-blocked: 4 positions at a time against one block of outputs, then one
    /// position at a time against four blocks (so a lone position still has 8 independent
    /// sums in flight, not 2 chains waiting on each other's FMA latency); each sum runs over
    /// every input in registers. For dense inputs (the hidden layers, where about half
    /// survive the ReLU and a branch per input would cost more than the multiply).
    #[inline(always)]
    fn apply_blocked<S: Simd>(&self, simd: S, x: &[f32], n: usize, out: &mut [f32]) {
        debug_assert_eq!(self.width, 2 * S::F32_LANES, "packed for this machine's registers");
        let mut p = 0;
        while p + GROUP <= n {
            self.blocks::<S, GROUP, 1>(simd, x, p, out);
            p += GROUP;
        }
        while p < n {
            self.blocks::<S, 1, WIDE>(simd, x, p, out);
            p += 1;
        }
    }

    /// Every output block for positions `p0..p0 + P`, `B` blocks at a time.
    #[inline(always)]
    fn blocks<S: Simd, const P: usize, const B: usize>(
        &self,
        simd: S,
        x: &[f32],
        p0: usize,
        out: &mut [f32],
    ) {
        let count = self.outputs.div_ceil(self.width);
        let mut blk = 0;
        while blk + B <= count {
            self.block::<S, P, B>(simd, x, p0, blk, out);
            blk += B;
        }
        while blk < count {
            self.block::<S, P, 1>(simd, x, p0, blk, out);
            blk += 1;
        }
    }

    /// Output blocks `blk..blk + B` for positions `p0..p0 + P`: `P · B · 2` accumulators.
    #[inline(always)]
    fn block<S: Simd, const P: usize, const B: usize>(
        &self,
        simd: S,
        x: &[f32],
        p0: usize,
        blk: usize,
        out: &mut [f32],
    ) {
        let (k, m, wd) = (self.inputs, self.outputs, self.width);
        let xs: [&[f32]; P] = std::array::from_fn(|p| &x[(p0 + p) * k..(p0 + p + 1) * k]);
        let wbs: [&[f32]; B] =
            std::array::from_fn(|j| &self.packed[(blk + j) * k * wd..(blk + j + 1) * k * wd]);
        let zero = simd.splat_f32s(0.0);
        let mut acc = [[[zero; 2]; B]; P];
        for i in 0..k {
            // Loops, not closures, around vector operations: a closure is compiled without
            // the instructions this function is compiled for, and every operation in it
            // becomes a call.
            let mut xv = [zero; P];
            for p in 0..P {
                xv[p] = simd.splat_f32s(xs[p][i]);
            }
            for j in 0..B {
                let w = S::as_simd_f32s(&wbs[j][i * wd..(i + 1) * wd]).0;
                let (w0, w1) = (w[0], w[1]);
                for p in 0..P {
                    acc[p][j][0] = simd.mul_add_e_f32s(xv[p], w0, acc[p][j][0]);
                    acc[p][j][1] = simd.mul_add_e_f32s(xv[p], w1, acc[p][j][1]);
                }
            }
        }
        for p in 0..P {
            for j in 0..B {
                store::<S>(&acc[p][j], &self.b, (blk + j) * wd, m, &mut out[(p0 + p) * m..][..m]);
            }
        }
    }

    /// For sparse inputs (the input layer: most features are 0/1 indicators, most of them 0):
    /// position by position, the non-zero inputs listed without branches, then for each run
    /// of 4 blocks of outputs (8 registers) the rows of those inputs summed in registers,
    /// each read contiguously from the `[in, out]` layout.
    #[inline(always)]
    fn apply_sparse<S: Simd>(&self, simd: S, x: &[f32], n: usize, out: &mut [f32], scratch: &mut Sparse) {
        let (k, m, wd) = (self.inputs, self.outputs, self.width);
        debug_assert_eq!(wd, 2 * S::F32_LANES, "packed for this machine's registers");
        scratch.index.resize(k, 0);
        scratch.value.resize(k, 0.0);
        let zero = simd.splat_f32s(0.0);
        for (xp, op) in x.chunks_exact(k).zip(out.chunks_exact_mut(m)).take(n) {
            let mut nz = 0;
            for (i, &v) in xp.iter().enumerate() {
                scratch.index[nz] = i as u32;
                scratch.value[nz] = v;
                nz += usize::from(v != 0.0);
            }
            let (index, value) = (&scratch.index[..nz], &scratch.value[..nz]);
            let mut o0 = 0;
            while o0 + WIDE * wd <= m {
                let mut acc = [[zero; 2]; WIDE];
                for t in 0..nz {
                    let xv = simd.splat_f32s(value[t]);
                    let row = S::as_simd_f32s(&self.w[index[t] as usize * m + o0..][..WIDE * wd]).0;
                    for j in 0..WIDE {
                        acc[j][0] = simd.mul_add_e_f32s(xv, row[2 * j], acc[j][0]);
                        acc[j][1] = simd.mul_add_e_f32s(xv, row[2 * j + 1], acc[j][1]);
                    }
                }
                for j in 0..WIDE {
                    store::<S>(&acc[j], &self.b, o0 + j * wd, m, op);
                }
                o0 += WIDE * wd;
            }
            // What is left (fewer than 4 blocks): plain sums.
            for o in o0..m {
                let mut sum = self.b[o];
                for t in 0..nz {
                    sum += value[t] * self.w[index[t] as usize * m + o];
                }
                op[o] = sum;
            }
        }
    }

    /// The earlier kernel: input by input over the batch, each weight row read once per
    /// batch and added to every position's outputs in memory (zero inputs skipped).
    #[inline(always)]
    fn apply_rows(&self, x: &[f32], n: usize, out: &mut [f32]) {
        let (inputs, m) = (self.inputs, self.outputs);
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

/// Writes one block's two accumulator registers, plus the bias, to outputs `o0..` of `out`
/// (one position's `m` outputs), dropping the padding past `m`.
#[inline(always)]
fn store<S: Simd>(acc: &[S::f32s; 2], bias: &[f32], o0: usize, m: usize, out: &mut [f32]) {
    let mut lanes = [0.0f32; 64];
    let width = 2 * S::F32_LANES;
    let regs = S::as_mut_simd_f32s(&mut lanes[..width]).0;
    regs[0] = acc[0];
    regs[1] = acc[1];
    for l in 0..width.min(m - o0) {
        out[o0 + l] = lanes[l] + bias[o0 + l];
    }
}

/// Two of this machine's vector registers, in floats: the width [`Dense`] packs for.
struct Width;

impl WithSimd for Width {
    type Output = usize;

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> usize {
        2 * S::F32_LANES
    }
}

/// A linear layer's weights `[in, out]`, bias `[out]`, inputs and outputs.
fn weights(layer: &burn::nn::Linear) -> (Vec<f32>, Vec<f32>, usize, usize) {
    let dims = layer.weight.val().dims();
    let w = data(layer.weight.val().into_data());
    let b = match &layer.bias {
        Some(b) => data(b.val().into_data()),
        None => vec![0.0; dims[1]],
    };
    (w, b, dims[0], dims[1])
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
    /// The win/draw/loss and margin heads as one layer of 4 outputs (W, D, L, margin).
    value: Dense,
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
        let arch = pulp::Arch::new();
        let width = arch.dispatch(Width);
        let input = Dense::from(parts.input, width);
        let hidden = input.outputs;
        let features = input.inputs;
        let (pw, policy_b, _, p) = weights(parts.policy);
        let mut policy_t = vec![0.0; p * hidden];
        for i in 0..hidden {
            for j in 0..p {
                policy_t[j * hidden + i] = pw[i * p + j];
            }
        }
        let (ww, wb, _, _) = weights(parts.wdl);
        let (mw, mb, _, _) = weights(parts.margin);
        let mut vw = Vec::with_capacity(hidden * 4);
        for i in 0..hidden {
            vw.extend_from_slice(&ww[i * 3..i * 3 + 3]);
            vw.push(mw[i]);
        }
        let vb = vec![wb[0], wb[1], wb[2], mb[0]];
        CpuNet {
            features,
            hidden,
            input,
            blocks: parts
                .blocks
                .iter()
                .map(|(a, b)| (Dense::from(a, width), Dense::from(b, width)))
                .collect(),
            value: Dense::new(vw, vb, hidden, 4, width),
            policy_t,
            policy_b,
            arch,
        }
    }

    /// The weights as an [`engine::shallow::ShallowNet`] for a searcher to run itself, when
    /// this network has no residual block (a `nano` model); `None` otherwise.
    pub fn shallow(
        &self,
        margin_scale: f32,
        margin_mix: f32,
        score_scale: f32,
    ) -> Option<engine::shallow::ShallowNet> {
        if !self.blocks.is_empty() {
            return None;
        }
        let v = &self.value;
        let net = engine::shallow::ShallowNet {
            features: self.features,
            hidden: self.hidden,
            input: self.input.w.clone(),
            input_bias: self.input.b.clone(),
            head: v.w.clone(),
            head_bias: [v.b[0], v.b[1], v.b[2], v.b[3]],
            margin_scale,
            margin_mix,
            score_scale,
        };
        net.validate().ok()?;
        Some(net)
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
        self.forward_with(Kernel::default(), features, n, policy, out, policy_out);
    }

    /// The value head's outputs for one position (`features`: `F` long), the policy not
    /// computed: what an alpha-beta searcher reads at each leaf.
    ///
    /// # Panics
    /// If `features` is not `F` long.
    pub fn value_one(&self, features: &[f32]) -> CpuOutput {
        assert_eq!(features.len(), self.features, "feature length");
        let mut out = Vec::with_capacity(1);
        let none: &dyn Fn(usize) -> Option<&'static [usize]> = &|_| Some(&[]);
        let (kernel, n) = (Kernel::default(), 1);
        self.arch.dispatch(Forward {
            net: self,
            kernel,
            features,
            n,
            policy: none,
            out: &mut out,
            policy_out: &mut [],
        });
        out.pop().expect("one position in, one out")
    }

    /// [`CpuNet::forward`] with the dense layers run by `kernel` (the benchmark compares them).
    ///
    /// # Panics
    /// As [`CpuNet::forward`].
    pub fn forward_with<'a>(
        &self,
        kernel: Kernel,
        features: &[f32],
        n: usize,
        policy: &dyn Fn(usize) -> Option<&'a [usize]>,
        out: &mut Vec<CpuOutput>,
        policy_out: &mut [f32],
    ) {
        let p = self.policy_len();
        assert_eq!(features.len(), n * self.features, "feature batch length");
        assert_eq!(policy_out.len(), n * p, "policy output length");
        out.clear();
        self.arch.dispatch(Forward { net: self, kernel, features, n, policy, out, policy_out });
    }
}

/// One [`CpuNet::forward_with`] call, compiled for each instruction set [`pulp`] knows and
/// run as the widest this machine has.
struct Forward<'n, 'a, 'o> {
    net: &'n CpuNet,
    kernel: Kernel,
    features: &'n [f32],
    n: usize,
    policy: &'n dyn Fn(usize) -> Option<&'a [usize]>,
    out: &'o mut Vec<CpuOutput>,
    policy_out: &'o mut [f32],
}

impl WithSimd for Forward<'_, '_, '_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Forward { net, kernel, features, n, policy, out, policy_out } = self;
        let (h, p) = (net.hidden, net.policy_len());
        let mut x = vec![0.0f32; n * h];
        let mut y = vec![0.0f32; n * h];
        let mut z = vec![0.0f32; n * h];
        match kernel {
            Kernel::Blocked => net.input.apply_sparse(simd, features, n, &mut x, &mut Sparse::default()),
            Kernel::Rows => net.input.apply_rows(features, n, &mut x),
        }
        relu(&mut x);
        for (a, b) in &net.blocks {
            a.apply(simd, kernel, &x, n, &mut y);
            relu(&mut y);
            // x ← relu(x + b·y): the block's output is added to its input.
            b.apply(simd, kernel, &y, n, &mut z);
            for (xv, zv) in x.iter_mut().zip(&z) {
                *xv = (*xv + zv).max(0.0);
            }
        }
        let mut value = vec![0.0f32; n * 4];
        net.value.apply(simd, kernel, &x, n, &mut value);
        for (i, (xi, v)) in x.chunks_exact(h).zip(value.chunks_exact(4)).enumerate() {
            out.push(CpuOutput { wdl_logits: [v[0], v[1], v[2]], margin: v[3] });
            if policy_out.is_empty() {
                // `value_one`: no policy wanted.
                continue;
            }
            // Loops, not closures: a closure is compiled without the vector instructions this
            // function is compiled for, and each of its vector operations becomes a call.
            let row_out = &mut policy_out[i * p..(i + 1) * p];
            if let Some(wanted) = policy(i) {
                for &j in wanted {
                    row_out[j] = net.policy_b[j] + dot(simd, xi, &net.policy_t[j * h..(j + 1) * h]);
                }
            } else {
                for j in 0..p {
                    row_out[j] = net.policy_b[j] + dot(simd, xi, &net.policy_t[j * h..(j + 1) * h]);
                }
            }
        }
    }
}

#[inline(always)]
fn relu(x: &mut [f32]) {
    for v in x {
        *v = v.max(0.0);
    }
}

/// A dot product in two vector registers (two running sums hide the FMA latency).
#[inline(always)]
fn dot<S: Simd>(simd: S, a: &[f32], b: &[f32]) -> f32 {
    let (ha, ta) = S::as_simd_f32s(a);
    let (hb, tb) = S::as_simd_f32s(b);
    let zero = simd.splat_f32s(0.0);
    let (mut acc0, mut acc1) = (zero, zero);
    let pairs = ha.len() / 2;
    for k in 0..pairs {
        acc0 = simd.mul_add_e_f32s(ha[2 * k], hb[2 * k], acc0);
        acc1 = simd.mul_add_e_f32s(ha[2 * k + 1], hb[2 * k + 1], acc1);
    }
    if ha.len() % 2 == 1 {
        acc0 = simd.mul_add_e_f32s(ha[2 * pairs], hb[2 * pairs], acc0);
    }
    let mut tail = 0.0;
    for k in 0..ta.len() {
        tail += ta[k] * tb[k];
    }
    simd.reduce_sum_f32s(simd.add_f32s(acc0, acc1)) + tail
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
        let close = |a: f32, b: f32| (a - b).abs() <= 1e-4 * (1.0 + b.abs());
        // Both kernels; 40 outputs are two full blocks of 16 and a padded one, and 5
        // positions are a group of 4 and one left over.
        for kernel in [Kernel::Blocked, Kernel::Rows] {
            let mut out = Vec::new();
            let mut pol = vec![f32::NAN; n * p];
            cpu.forward_with(kernel, &x, n, &|_| None, &mut out, &mut pol);
            for i in 0..n {
                for k in 0..3 {
                    assert!(close(out[i].wdl_logits[k], wdl[i * 3 + k]), "{kernel:?} {i} wdl {k}");
                }
                assert!(close(out[i].margin, margin[i]), "{kernel:?} {i} margin");
            }
            for (a, b) in pol.iter().zip(&policy) {
                assert!(close(*a, *b), "{kernel:?} policy {a} vs {b}");
            }
        }
        let mut out = Vec::new();
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
