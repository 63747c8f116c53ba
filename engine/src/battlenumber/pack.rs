//! Battle Number's [`Pack`]: what the hosts need to know of it beyond the rules.

use super::BattleNumber;
use crate::pack::{GamePack, ModelDoc, Pack, Strength};

impl GamePack for BattleNumber {
    const PACK: Pack = Pack {
        title: "Battle Number",
        title_zh: "拚數棋",
        replay_code: 1,
        perft_note: "default options",
        // The hosts' defaults were chosen for Battle Number, the first game.
        selfplay: "",
        pipeline: "",
        strength: Strength {
            ms: 100,
            opponent: "mcts:time={ms}ms,eval=rollout",
            opening_plies: 6,
            mixed: "lambda=0.5",
            searcher: None,
        },
        model: ModelDoc {
            input: "A residual MLP. Input: the Battle Number feature vector, version `feature_version`
(`feature_len` floats, from the view of the player to move; the layout is in
`engine/src/battlenumber/features.rs`).",
            margin: crate::pack::POINTS_MARGIN,
            policy: Some((
                "the 69 click indices",
                "Policy index: square `s` (row · 7 + column) → `s`; piece `(kind, rotation)` → `49 + 4·kind + rotation`
with kinds S1, D2, C2, T3, X0 = 0..4. Mask to the legal clicks, then softmax.",
            )),
        },
        // The user's AI is MCTS with the rollout evaluator: `auto` serves it until a model
        // arrives.
        served_agents: &[],
        arbitration: false,
    };

    fn svg(&self, caption: &[String]) -> String {
        super::render::svg_with_caption(self, caption)
    }

    fn caption(&self) -> String {
        super::render::english_caption(self)
    }
}
