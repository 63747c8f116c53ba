//! TriGolden's [`Pack`]: what the hosts need to know of it beyond the rules.

use super::TriGolden;
use crate::game::Game;
use crate::pack::{GamePack, ModelDoc, Pack, Strength};

impl GamePack for TriGolden {
    const PACK: Pack = Pack {
        title: "TriGolden",
        title_zh: "頂鑫棋",
        replay_code: 2,
        perft_note: "default piece set and options; a turn is the set of pieces it places",
        selfplay: r#"
# TriGolden's positions cost far more to expand and play out than Battle Number's:
# lighter searches (200 simulations for a full search, 50 for a fast one).
[settings]
full_sims = 200
fast_sims = 50
"#,
        pipeline: r#"
# TriGolden's games come about fifty times slower than Battle Number's: a 200,000-position
# window, a round every 3,000 new positions.
window_positions = 200000
window_min_positions = 50000
min_new_positions = 3000
# 25 samples per position: the ~300 steps per 3,000 positions that run tg3 was measured with
# (docs/benchmarks.md); TriGolden positions are scarce.
samples_per_position = 25.0
steps_per_round = 300

[train]
# The loss weights tg3 was measured with.
q_mix = 0.5
margin_weight = 1.0

[gate]
sims = 32
# The fixed threshold over 40 matches that tg3 was measured with: its matches cost seconds
# each, and the default SPRT would play up to 100 a round (its effect there is not measured).
rule = "threshold"
matches = 40

[gate.leaf]
# A TriGolden playout costs milliseconds: gating with one per leaf would take longer than the
# round it gates.
lambda = 0.0

[rating]
# Rating games cost what gating games cost: a few, against the reference only.
matches = 4
anchors = []
"#,
        strength: Strength {
            ms: 500,
            opponent: "trigolden-user:time={ms}ms",
            opening_plies: 0,
            mixed: "lambda=0,knowledge=0.5",
            searcher: None,
        },
        model: ModelDoc {
            input: "A residual MLP. Input: the TriGolden feature vector, version `feature_version`
(`feature_len` floats:
turn, scores, stock, methods, edge states and the single, double and co-live links of both
players, from the view of the player to move; the layout is in
`engine/src/trigolden/features.rs`).",
            margin: crate::pack::POINTS_MARGIN,
            policy: None,
        },
        served_agents: &["trigolden-user", "trigolden-lite", "mcts"],
        arbitration: true,
    };

    fn svg(&self, caption: &[String]) -> String {
        super::render::svg_with_caption(self, caption)
    }

    fn caption(&self) -> String {
        super::render::english_caption(self)
    }

    // A turn counts once per set of pieces, whatever the order of its clicks.
    fn perft_children(&self) -> Vec<Self> {
        let turns = self.legal_turns().into_iter();
        turns
            .map(|turn| {
                let mut child = self.clone();
                turn.into_iter().for_each(|a| child.play_unchecked(a));
                child
            })
            .collect()
    }

    fn perft(&self, depth: u32, make_every_turn: bool) -> u64 {
        super::perft(self, depth, make_every_turn)
    }

    fn summary(&self) -> String {
        let [a, b] = self.scores();
        let ending = crate::pack::ending(self.outcome());
        format!(
            "{} pieces, {} turns played, scores {a}–{b}{ending}",
            self.pieces().len(),
            self.turns_played()
        )
    }
}
