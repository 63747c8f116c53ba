//! The value/policy network: a residual MLP over a game's feature vector.

use burn::nn::{Linear, LinearConfig, Relu};
use burn::prelude::*;

pub use modelfile::NetConfig;

/// The layers of a [`ValueNet`], borrowed.
pub(crate) struct Parts<'a> {
    pub input: &'a Linear,
    pub blocks: Vec<(&'a Linear, &'a Linear)>,
    pub wdl: &'a Linear,
    pub margin: &'a Linear,
    pub policy: &'a Linear,
}

/// One residual block: `x + W₂ · relu(W₁ · x)`, then relu.
#[derive(Module, Debug)]
pub struct Block {
    a: Linear,
    b: Linear,
}

/// What the network outputs for a batch of `B` positions.
#[derive(Debug)]
pub struct NetOutput {
    /// Win/draw/loss logits from the mover's view: `[B, 3]`.
    pub wdl_logits: Tensor<2>,
    /// Predicted final score difference from the mover's view, divided by the margin scale:
    /// `[B, 1]`.
    pub margin: Tensor<2>,
    /// Policy logits over the game's fixed action index: `[B, P]` (`P = 1`, unused, for a
    /// game without a fixed action space).
    pub policy_logits: Tensor<2>,
    /// Predicted final ownership per square from the mover's view, before `tanh`: `[B, O]`;
    /// `None` for a network without the auxiliary ownership head.
    pub ownership: Option<Tensor<2>>,
}

/// The network. Tensor names (as in the model files): `input.{weight,bias}`,
/// `blocks.{i}.{a,b}.{weight,bias}`, `wdl.*`, `margin.*`, `policy.*`, and `ownership.*` where
/// the network has the auxiliary ownership head; burn stores a linear layer's weight as
/// `[in, out]`.
#[derive(Module, Debug)]
pub struct ValueNet {
    input: Linear,
    blocks: Vec<Block>,
    wdl: Linear,
    margin: Linear,
    policy: Linear,
    /// Training-only auxiliary head (KataGo's ownership): search never reads it, but learning
    /// to predict the final board shapes the shared layers the value head reads.
    ownership: Option<Linear>,
    act: Relu,
}

impl ValueNet {
    /// A freshly initialised network for `features` inputs and `policy` actions (0: none).
    pub fn new(cfg: &NetConfig, features: usize, policy: usize, device: &Device) -> ValueNet {
        ValueNet::with_ownership(cfg, features, policy, 0, device)
    }

    /// [`ValueNet::new`] with an auxiliary ownership head of `ownership` outputs (0: none).
    pub fn with_ownership(
        cfg: &NetConfig,
        features: usize,
        policy: usize,
        ownership: usize,
        device: &Device,
    ) -> ValueNet {
        let h = cfg.hidden;
        ValueNet {
            input: LinearConfig::new(features, h).init(device),
            blocks: (0..cfg.blocks)
                .map(|_| Block {
                    a: LinearConfig::new(h, h).init(device),
                    b: LinearConfig::new(h, h).init(device),
                })
                .collect(),
            wdl: LinearConfig::new(h, 3).init(device),
            margin: LinearConfig::new(h, 1).init(device),
            policy: LinearConfig::new(h, policy.max(1)).init(device),
            ownership: (ownership > 0).then(|| LinearConfig::new(h, ownership).init(device)),
            act: Relu::new(),
        }
    }

    /// Outputs of the ownership head (0: none).
    pub fn ownership_len(&self) -> usize {
        self.ownership.as_ref().map_or(0, |l| l.weight.dims()[1])
    }

    /// This network with a fresh ownership head of `len` outputs (0: without one); the other
    /// layers are kept. A model trained without the head can so be trained on with it.
    pub fn set_ownership(mut self, len: usize, device: &Device) -> ValueNet {
        if self.ownership_len() != len {
            let h = self.input.weight.dims()[1];
            self.ownership = (len > 0).then(|| LinearConfig::new(h, len).init(device));
        }
        self
    }

    /// The layers, for [`crate::cpu::CpuNet`] to copy.
    pub(crate) fn parts(&self) -> Parts<'_> {
        Parts {
            input: &self.input,
            blocks: self.blocks.iter().map(|b| (&b.a, &b.b)).collect(),
            wdl: &self.wdl,
            margin: &self.margin,
            policy: &self.policy,
        }
    }

    /// Runs the network.
    ///
    /// Shapes: `x: [B, F]` (`F` the game's feature length) → [`NetOutput`] (`[B, 3]`,
    /// `[B, 1]`, `[B, P]`, `[B, O]`).
    pub fn forward(&self, x: Tensor<2>) -> NetOutput {
        let mut x = self.act.forward(self.input.forward(x));
        for b in &self.blocks {
            let y = b.b.forward(self.act.forward(b.a.forward(x.clone())));
            x = self.act.forward(x + y);
        }
        NetOutput {
            wdl_logits: self.wdl.forward(x.clone()),
            margin: self.margin.forward(x.clone()),
            ownership: self.ownership.as_ref().map(|o| o.forward(x.clone())),
            policy_logits: self.policy.forward(x),
        }
    }
}
