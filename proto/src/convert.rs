//! Every conversion between the wire and the engine, both directions, in one place: the
//! coordinator, the worker, the trainer's gatekeeper and the tests all go through these, so a
//! field added to a message is added here once. Conversions from the wire check what they
//! read (ranges, names) and say what is wrong.

use engine::game::Game;
use engine::gating::{GateRule, GateSettings};
use engine::selfplay::{RootSearch, SelfPlayGame, SelfPlaySettings};
use engine::{LeafEvaluator, LeafSettings};

use crate::v1 as pb;

/// A leaf recipe for the wire.
pub fn leaf_to_proto(s: &LeafSettings) -> pb::LeafSettings {
    pb::LeafSettings {
        evaluator: s.evaluator.name().into(),
        margin_mix: s.margin_mix,
        lambda: s.lambda,
        score_scale: s.score_scale,
    }
}

/// A leaf recipe from the wire, checked; `None` (a message without one) is refused, as only a
/// peer older than protocol 2 sends that.
///
/// # Errors
/// A missing message, an unknown evaluator or a value out of range.
pub fn leaf_from_proto(p: Option<&pb::LeafSettings>) -> Result<LeafSettings, String> {
    let p = p.ok_or("no leaf settings (a peer older than protocol 2?)")?;
    let s = LeafSettings {
        evaluator: p.evaluator.parse::<LeafEvaluator>()?,
        margin_mix: p.margin_mix,
        lambda: p.lambda,
        score_scale: p.score_scale,
    };
    s.validate().map_err(|e| format!("leaf {e}"))?;
    Ok(s)
}

/// Self-play settings and their leaf recipe, as sent to workers with a lease.
pub fn selfplay_to_proto(s: &SelfPlaySettings, leaf: &LeafSettings) -> pb::SelfPlaySettings {
    pb::SelfPlaySettings {
        full_sims: s.full_sims,
        fast_sims: s.fast_sims,
        full_search_probability: s.full_search_probability,
        dirichlet_alpha: s.dirichlet_alpha,
        dirichlet_fraction: s.dirichlet_fraction,
        temperature: s
            .temperature
            .iter()
            .map(|&(until_ply, temperature)| pb::TemperatureStep { until_ply, temperature })
            .collect(),
        resign_threshold: s.resign_threshold,
        resign_consecutive: s.resign_consecutive,
        resign_playthrough_fraction: s.resign_playthrough_fraction,
        c_puct: s.c_puct,
        teacher: s.teacher.clone(),
        teacher_random: s.teacher_random,
        teacher_random_plies: s.teacher_random_plies,
        root: s.root.name().into(),
        gumbel_m: s.gumbel_m,
        gumbel_c_visit: s.gumbel_c_visit,
        gumbel_c_scale: s.gumbel_c_scale,
        forced_playouts: s.forced_playouts,
        leaf: Some(leaf_to_proto(leaf)),
    }
}

/// Self-play settings and their leaf recipe from the wire, checked.
///
/// # Errors
/// A description of the bad value.
pub fn selfplay_from_proto(p: &pb::SelfPlaySettings) -> Result<(SelfPlaySettings, LeafSettings), String> {
    let defaults = SelfPlaySettings::default();
    let s = SelfPlaySettings {
        full_sims: p.full_sims,
        fast_sims: p.fast_sims,
        full_search_probability: p.full_search_probability,
        dirichlet_alpha: p.dirichlet_alpha,
        dirichlet_fraction: p.dirichlet_fraction,
        temperature: p.temperature.iter().map(|t| (t.until_ply, t.temperature)).collect(),
        resign_threshold: p.resign_threshold,
        resign_consecutive: p.resign_consecutive,
        resign_playthrough_fraction: p.resign_playthrough_fraction,
        c_puct: p.c_puct,
        teacher: p.teacher.clone(),
        teacher_random: p.teacher_random,
        teacher_random_plies: p.teacher_random_plies,
        root: RootSearch::from_name(&p.root).ok_or_else(|| format!("root {:?}: puct or gumbel", p.root))?,
        // Zero is what an older coordinator, which knows no Gumbel, sends.
        gumbel_m: if p.gumbel_m == 0 { defaults.gumbel_m } else { p.gumbel_m },
        gumbel_c_visit: if p.gumbel_c_visit == 0.0 { defaults.gumbel_c_visit } else { p.gumbel_c_visit },
        gumbel_c_scale: if p.gumbel_c_scale == 0.0 { defaults.gumbel_c_scale } else { p.gumbel_c_scale },
        forced_playouts: p.forced_playouts,
    };
    s.validate().map_err(|e| e.to_string())?;
    Ok((s, leaf_from_proto(p.leaf.as_ref())?))
}

/// Gate settings for the wire (sent with a candidate model).
pub fn gate_to_proto(s: &GateSettings) -> pb::GateSettings {
    pb::GateSettings {
        rule: s.rule.name().into(),
        matches: s.matches,
        threshold: s.threshold,
        elo0: s.elo0,
        elo1: s.elo1,
        alpha: s.alpha,
        beta: s.beta,
        sims: s.sims,
        baseline_sims: s.baseline_sims,
        opening_plies: s.opening_plies,
        seed: s.seed,
        leaf: Some(leaf_to_proto(&s.leaf)),
    }
}

/// Gate settings from the wire, checked.
///
/// # Errors
/// A description of the first bad field.
pub fn gate_from_proto(p: &pb::GateSettings) -> Result<GateSettings, String> {
    let rule = GateRule::from_name(&p.rule)
        .ok_or_else(|| format!("gate rule {:?}: expected \"threshold\" or \"sprt\"", p.rule))?;
    let s = GateSettings {
        rule,
        matches: p.matches,
        threshold: p.threshold,
        elo0: p.elo0,
        elo1: p.elo1,
        alpha: p.alpha,
        beta: p.beta,
        sims: p.sims,
        baseline_sims: p.baseline_sims,
        opening_plies: p.opening_plies,
        leaf: leaf_from_proto(p.leaf.as_ref()).map_err(|e| format!("gate.{e}"))?,
        seed: p.seed,
    };
    s.validate()?;
    Ok(s)
}

/// One gating match as a worker plays it: the gate settings that matter to the match (its
/// simulations and leaf recipe).
pub fn evaluation_match(
    candidate_version: u64,
    opponent_version: u64,
    match_index: u32,
    s: &GateSettings,
) -> pb::EvaluationMatch {
    pb::EvaluationMatch {
        candidate_version,
        opponent_version,
        sims: s.sims,
        baseline_sims: s.baseline_sims,
        match_index,
        leaf: Some(leaf_to_proto(&s.leaf)),
    }
}

/// The settings a worker plays an evaluation match under, checked.
///
/// # Errors
/// Simulations out of range, or a bad leaf recipe.
pub fn evaluation_from_proto(p: &pb::EvaluationMatch) -> Result<GateSettings, String> {
    let s = GateSettings {
        sims: p.sims,
        baseline_sims: p.baseline_sims,
        leaf: leaf_from_proto(p.leaf.as_ref())?,
        ..GateSettings::default()
    };
    s.validate()?;
    Ok(s)
}

/// A finished self-play game as a submission record (the one place the wire form of a game is
/// built). `game_id` must be 32 lowercase hex digits, unique per game.
pub fn game_record<G: Game>(
    game: &SelfPlayGame<G>,
    game_id: String,
    seed: u64,
    model_version: u64,
) -> pb::GameRecord {
    let moves = game
        .moves
        .iter()
        .map(|m| pb::MoveRecord {
            action: m.action.to_string(),
            chance: m.chance,
            visits: m
                .visits
                .iter()
                .map(|(a, v)| pb::ActionVisits { action: a.to_string(), visits: *v })
                .collect(),
            root_value: m.root_value.clamp(-1.0, 1.0),
            full_search: m.full_search,
            model_version: m.model_version,
        })
        .collect();
    pb::GameRecord {
        game_id,
        game_kind: G::NAME.into(),
        seed,
        engine_version: engine::ENGINE_VERSION.into(),
        encoding_version: G::STATE_VERSION as u32,
        model_version,
        start_state: engine::game::to_bytes(&game.start),
        moves,
        resigned: game.resigned.is_some(),
        resigned_seat: game.resigned.map_or(0, |s| s.index() as u32),
        would_have_resigned: game.would_have_resigned.is_some(),
        would_resign_seat: game.would_have_resigned.map_or(0, |s| s.index() as u32),
        resign_root_value: game.resign_value.clamp(-1.0, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_bad_values_are_named() {
        let leaf = LeafSettings { lambda: 0.25, ..LeafSettings::served() };
        let sp = SelfPlaySettings::default();
        assert_eq!(selfplay_from_proto(&selfplay_to_proto(&sp, &leaf)), Ok((sp.clone(), leaf)));
        let g = GateSettings { leaf, matches: 12, baseline_sims: 6, ..GateSettings::default() };
        assert_eq!(gate_from_proto(&gate_to_proto(&g)), Ok(g.clone()));
        let ev = evaluation_from_proto(&evaluation_match(3, 2, 5, &g)).unwrap();
        assert_eq!((ev.sims, ev.baseline_sims, ev.leaf), (g.sims, 6, g.leaf));
        let p = pb::GateSettings { baseline_sims: u64::MAX, ..gate_to_proto(&g) };
        assert!(gate_from_proto(&p).unwrap_err().contains("baseline_sims"));

        // Gumbel settings cross the wire; an older coordinator's message (no root, zeros) is
        // PUCT with the Gumbel defaults; an unknown root is named.
        let gumbel =
            SelfPlaySettings { root: RootSearch::Gumbel, gumbel_m: 8, gumbel_c_scale: 0.2, ..sp.clone() };
        let forced = SelfPlaySettings { forced_playouts: 2.0, ..sp.clone() };
        assert_eq!(selfplay_from_proto(&selfplay_to_proto(&forced, &leaf)), Ok((forced, leaf)));
        let bad = pb::SelfPlaySettings { forced_playouts: f32::NAN, ..selfplay_to_proto(&sp, &leaf) };
        assert!(selfplay_from_proto(&bad).unwrap_err().contains("forced_playouts"));
        assert_eq!(selfplay_from_proto(&selfplay_to_proto(&gumbel, &leaf)), Ok((gumbel, leaf)));
        let older = pb::SelfPlaySettings {
            root: String::new(),
            gumbel_m: 0,
            gumbel_c_visit: 0.0,
            gumbel_c_scale: 0.0,
            ..selfplay_to_proto(&sp, &leaf)
        };
        assert_eq!(selfplay_from_proto(&older), Ok((sp.clone(), leaf)));
        let bad = pb::SelfPlaySettings { root: "mcts".into(), ..selfplay_to_proto(&sp, &leaf) };
        assert!(selfplay_from_proto(&bad).unwrap_err().contains("mcts"));

        // A message from before protocol 2 has no leaf settings.
        let old = pb::SelfPlaySettings { leaf: None, ..selfplay_to_proto(&sp, &leaf) };
        assert!(selfplay_from_proto(&old).unwrap_err().contains("protocol 2"));
        let mut p = gate_to_proto(&g);
        p.rule = "vote".into();
        assert!(gate_from_proto(&p).unwrap_err().contains("vote"));
        let p = pb::GateSettings { matches: 0, ..gate_to_proto(&g) };
        assert!(gate_from_proto(&p).is_err());
        let p = pb::GateSettings { leaf: Some(leaf_to_proto(&LeafSettings::rollout())), ..gate_to_proto(&g) };
        assert!(gate_from_proto(&p).unwrap_err().contains("net"), "gating measures networks");
        let mut bad = leaf_to_proto(&leaf);
        bad.lambda = 2.0;
        assert!(leaf_from_proto(Some(&bad)).unwrap_err().contains("lambda"));
        bad.evaluator = "nn".into();
        assert!(leaf_from_proto(Some(&bad)).unwrap_err().contains("\"nn\""));
    }
}
