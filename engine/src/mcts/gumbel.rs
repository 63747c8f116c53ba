//! Gumbel root search (Danihelka et al., ICLR 2022): its settings, its result and the
//! `Mcts` methods that run it.

use super::*;

/// Gumbel root search settings (Danihelka et al., "Policy improvement by planning with
/// Gumbel", ICLR 2022): Gumbel-top-k sampling of `m` root actions, sequential halving of the
/// simulations among them, and the completed-Q improved policy as the training target.
#[derive(Clone, Debug, PartialEq)]
pub struct GumbelConfig {
    /// Root actions considered (sampled without replacement by Gumbel-top-k).
    pub m: usize,
    /// `c_visit` of the monotone transform `σ(q̂) = (c_visit + max_b N(b)) · c_scale · q̂`.
    pub c_visit: f32,
    /// `c_scale` of the same transform (q̂ is rescaled to [0, 1] over the root's children).
    pub c_scale: f32,
}

impl Default for GumbelConfig {
    /// The paper's (and DeepMind mctx's) values: m = 16, c_visit = 50, c_scale = 0.1.
    fn default() -> Self {
        GumbelConfig { m: 16, c_visit: 50.0, c_scale: 0.1 }
    }
}

/// What a Gumbel root search chose and the policy it improved.
#[derive(Clone, Debug, PartialEq)]
pub struct GumbelResult<A> {
    /// The action sequential halving kept: `argmax g(a) + logit(a) + σ(q̂(a))` among the
    /// survivors of the last round (with `noise = false`, g = 0).
    pub action: A,
    /// The improved policy `softmax(logit + σ(completed Q))` over every root child, in
    /// legal-action order; sums to 1.
    pub policy: Vec<(A, f32)>,
    /// Simulations run.
    pub sims: u64,
}

impl<G: Game> Mcts<G> {
    /// Gumbel root search: `sims` new simulations spent by sequential halving over `m` root
    /// actions drawn by Gumbel-top-k from the priors (Danihelka et al. 2022), PUCT below the
    /// root. Returns the chosen action and the completed-Q improved policy, the training
    /// target that still improves on the priors at 8–64 simulations, where visit counts do not.
    ///
    /// `noise = false` drops the Gumbel draws (a deterministic, greedy search). The root's own
    /// value estimate in the completed Q (`v_mix`) is its mean value so far.
    ///
    /// # Panics
    /// If the root is a finished game or a chance node.
    pub fn gumbel_search<E: Evaluator<G> + ?Sized>(
        &mut self,
        evaluator: &E,
        sims: u64,
        gumbel: &GumbelConfig,
        noise: bool,
        rng: &mut Rng,
    ) -> GumbelResult<G::Action> {
        use rand::RngExt;
        assert!(matches!(self.root_state.to_move(), Actor::Player(_)), "Gumbel search at a chance node");
        let mut spent = 0u64;
        if !self.nodes[0].expanded() {
            spent += self.search(evaluator, Budget::sims(1), rng, &mut |_| {});
        }
        let kids: Vec<usize> = self.children(0).collect();
        let logits: Vec<f32> = kids.iter().map(|&c| self.nodes[c].prior.max(1e-12).ln()).collect();
        let g: Vec<f32> = kids
            .iter()
            .map(|_| {
                if noise {
                    let u: f32 = rng.random::<f32>().clamp(1e-12, 1.0 - 1e-7);
                    -(-u.ln()).ln()
                } else {
                    0.0
                }
            })
            .collect();
        let mut order: Vec<usize> = (0..kids.len()).collect();
        order.sort_by(|&a, &b| (g[b] + logits[b]).total_cmp(&(g[a] + logits[a])).then(a.cmp(&b)));
        let budget = sims.saturating_sub(spent);
        // No more candidates than simulations: each considered action gets a visit.
        let m = gumbel.m.min(kids.len()).min(budget.max(1) as usize).max(1);
        let mut alive: Vec<usize> = order[..m].to_vec();
        let rounds = (usize::BITS - (m - 1).leading_zeros()).max(1) as u64; // ceil(log2 m)
        let mut left = budget;
        let mut round = 0u64;
        while left > 0 {
            // Each round gives every survivor the same share of what remains for the rounds
            // still to come (at least one visit each), then halves the survivors.
            let rounds_left = rounds.saturating_sub(round).max(1);
            let per = (left / (rounds_left * alive.len() as u64)).max(1);
            self.forced.clear();
            self.forced_next = 0;
            'fill: for _ in 0..per {
                for &i in &alive {
                    if self.forced.len() as u64 >= left {
                        break 'fill;
                    }
                    self.forced.push(kids[i]);
                }
            }
            let k = self.forced.len() as u64;
            let ran = self.search(evaluator, Budget::sims(k), rng, &mut |_| {});
            self.forced.clear();
            self.forced_next = 0;
            spent += ran;
            left = left.saturating_sub(ran.max(1));
            round += 1;
            if alive.len() > 1 {
                let sigma = self.sigma_completed(&kids, gumbel);
                alive.sort_by(|&a, &b| {
                    (g[b] + logits[b] + sigma[b]).total_cmp(&(g[a] + logits[a] + sigma[a])).then(a.cmp(&b))
                });
                alive.truncate(alive.len().div_ceil(2));
            }
            if self.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed)) {
                break;
            }
        }
        let sigma = self.sigma_completed(&kids, gumbel);
        let best = *alive
            .iter()
            .max_by(|&&a, &&b| {
                (g[a] + logits[a] + sigma[a]).total_cmp(&(g[b] + logits[b] + sigma[b])).then(b.cmp(&a))
            })
            .expect("at least one survivor");
        let z: Vec<f32> = logits.iter().zip(&sigma).map(|(l, s)| l + s).collect();
        let top = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = z.iter().map(|x| (x - top).exp()).collect();
        let sum: f32 = e.iter().sum();
        let policy = kids
            .iter()
            .zip(&e)
            .map(|(&c, x)| (self.nodes[c].action.expect("children have actions"), x / sum))
            .collect();
        GumbelResult {
            action: self.nodes[kids[best]].action.expect("children have actions"),
            policy,
            sims: spent,
        }
    }

    /// `σ(completed Q)` for each root child in `kids`: a visited child's mean value, an
    /// unvisited one's `v_mix` (the prior-weighted value of the visited children mixed with
    /// the root's value), rescaled to [0, 1] over the children, times
    /// `(c_visit + max visits) · c_scale`.
    fn sigma_completed(&self, kids: &[usize], gumbel: &GumbelConfig) -> Vec<f32> {
        let seat = match self.root_state.to_move() {
            Actor::Player(s) => s,
            Actor::Chance => Seat::First,
        };
        let mut visits_sum = 0f32;
        let mut prior_visited = 0f32;
        let mut weighted_q = 0f32;
        let mut max_n = 0u32;
        for &c in kids {
            let n = &self.nodes[c];
            if n.visits > 0 {
                visits_sum += n.visits as f32;
                prior_visited += n.prior;
                weighted_q += n.prior * self.q(c, seat).unwrap_or(0.0);
                max_n = max_n.max(n.visits);
            }
        }
        let root_v = self.q(0, seat).unwrap_or(0.0);
        let v_mix = if prior_visited > 0.0 {
            (root_v + visits_sum * weighted_q / prior_visited) / (1.0 + visits_sum)
        } else {
            root_v
        };
        let q: Vec<f32> = kids
            .iter()
            .map(|&c| if self.nodes[c].visits > 0 { self.q(c, seat).unwrap_or(v_mix) } else { v_mix })
            .collect();
        let lo = q.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = q.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let scale = (gumbel.c_visit + max_n as f32) * gumbel.c_scale;
        q.iter().map(|x| scale * (x - lo) / (hi - lo).max(1e-6)).collect()
    }
}
