//! The network at `banqi-ab`'s leaves: a cache of valued positions, and for a one-layer
//! network the searcher's own NNUE-style accumulators, kept per ply.

use std::sync::Arc;

use super::{EVAL_MAX, MAX_PLY};
use crate::Rng;
use crate::banqi::{Banqi, Colour};
use crate::eval::{Evaluator, Leaf};
use crate::shallow::ShallowNet;

/// A value network at the leaves, with a cache of the positions it has valued (the same
/// leaf recurs across iterations and transpositions). A value costs more than the
/// handcrafted evaluation's 63 ns: 160 ns for a `nano` network kept incrementally, about
/// 1 µs through [`Evaluator::mover_value`], tens of µs for the larger networks.
pub(super) struct NetLeaf {
    net: Arc<dyn Evaluator<Banqi>>,
    /// The network's own weights where it is one hidden layer: run here, summing only the
    /// ~50 active inputs' rows ([`Banqi::active_features`]).
    pub(super) shallow: Option<Arc<ShallowNet>>,
    acc: Vec<f32>,
    /// Per ply, the accumulators of the position the search is at on that ply, red's view
    /// then black's (`[MAX_PLY + 1][2][H]`), each derived from its parent's by the inputs the
    /// action changed ([`Banqi::view_feature_changes`]): NNUE's incremental first layer.
    /// Empty until [`NetLeaf::root`].
    stack: Vec<f32>,
    cache: Vec<(u64, i32)>,
    rng: Rng,
    pub(super) calls: u64,
    /// Only a one-layer network values the leaves (`model=served`: the served model may be
    /// none yet, or a larger one); the handcrafted evaluation does otherwise.
    one_layer_only: bool,
}

impl NetLeaf {
    /// A leaf valued by `net`, its weights taken at the first search; with `one_layer_only`,
    /// only while `net` is a one-layer network ([`NetLeaf::live`]).
    pub(super) fn new(net: Arc<dyn Evaluator<Banqi>>, one_layer_only: bool) -> NetLeaf {
        NetLeaf {
            one_layer_only,
            net,
            shallow: None,
            acc: Vec::new(),
            stack: Vec::new(),
            cache: vec![(0, 0); NetLeaf::CACHE],
            rng: crate::rng_from_seed(0),
            calls: 0,
        }
    }

    const CACHE: usize = 1 << 16;

    /// The root's accumulators, from scratch (ply 0 of [`NetLeaf::stack`]).
    pub(super) fn root(&mut self, pos: &Banqi) {
        let Some(n) = &self.shallow else {
            self.stack.clear();
            return;
        };
        let h = n.hidden;
        self.stack.resize((MAX_PLY + 1) * 2 * h, 0.0);
        for me in [Colour::Red, Colour::Black] {
            let acc = &mut self.stack[me.index() * h..(me.index() + 1) * h];
            acc.copy_from_slice(&n.input_bias);
            pos.view_features(me, |i, x| n.add_row(i, x, acc));
        }
    }

    /// The accumulators of `child` (at `ply`) from its parent's (at `ply - 1`).
    #[inline]
    pub(super) fn derive(&mut self, parent: &Banqi, child: &Banqi, ply: usize) {
        let Some(n) = &self.shallow else { return };
        let w = 2 * n.hidden;
        let (before, after) = self.stack.split_at_mut(ply * w);
        let accs = &mut after[..w];
        accs.copy_from_slice(&before[(ply - 1) * w..]);
        let (red, black) = accs.split_at_mut(n.hidden);
        parent.view_feature_changes(child, Colour::Red, |i, x| n.add_row(i, x, red));
        parent.view_feature_changes(child, Colour::Black, |i, x| n.add_row(i, x, black));
    }

    /// Whether the network values this search's leaves (else the handcrafted evaluation).
    pub(super) fn live(&self) -> bool {
        self.shallow.is_some() || !self.one_layer_only
    }

    /// Takes the network's weights for this search (a hot-swapped model may have changed
    /// since the last), forgetting cached values when they changed.
    pub(super) fn refresh(&mut self) {
        let now = self.net.shallow();
        let same = match (&now, &self.shallow) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.cache.fill((0, 0));
            self.shallow = now;
        }
    }

    /// The network's value of `pos` for the side to move, on the evaluation's scale
    /// (the inverse of [`score_value`]).
    pub(super) fn value(&mut self, pos: &Banqi, ply: usize) -> i32 {
        let slot = (pos.key as usize) & (Self::CACHE - 1);
        if self.cache[slot].0 == pos.key && pos.key != 0 {
            return self.cache[slot].1;
        }
        self.calls += 1;
        let lone = match &self.shallow {
            // `root` sized the stack for this search's network.
            Some(n) => {
                let h = n.hidden;
                let at = (ply * 2 + pos.view().index()) * h;
                self.acc.clear();
                self.acc.extend_from_slice(&self.stack[at..at + h]);
                let acc = &mut self.acc;
                pos.dynamic_features(|i, x| n.add_row(i, x, acc));
                #[cfg(debug_assertions)]
                {
                    let mut full = n.input_bias.clone();
                    pos.active_features(|i, x| n.add_row(i, x, &mut full));
                    for (a, b) in acc.iter().zip(&full) {
                        debug_assert!(
                            (a - b).abs() < 1e-3,
                            "incremental {a} vs full {b} at ply {ply}: {pos}"
                        );
                    }
                }
                Some(n.value(acc))
            }
            None => self.net.mover_value(pos),
        };
        let v = match lone {
            Some(v) => v,
            None => {
                // No actions: the search reads only the value, so no legal moves and no priors.
                let mut leaf =
                    [Leaf { state: pos.clone(), actions: Vec::new(), value: 0.0, priors: Vec::new() }];
                self.net.evaluate(&mut leaf, &mut self.rng);
                leaf[0].value * pos.side.sign()
            }
        };
        let score = (1_000.0 * v.clamp(-0.999, 0.999).atanh()).round() as i32;
        let score = score.clamp(-EVAL_MAX, EVAL_MAX);
        self.cache[slot] = (pos.key, score);
        score
    }
}
