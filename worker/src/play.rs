//! The games a worker plays: a leased self-play game, or one gating match between two
//! models (or a model and the user's rollout AI).

use std::sync::Arc;

use engine::agent::Agent;
use engine::arena::play_match_from;
use engine::eval::Evaluator;
use engine::selfplay::{CheckSearch, play_game_until};
use engine::{Features, GameKind, LeafEvaluator};
use model::NetSource;
use zeroplay_proto::v1 as pb;

use crate::*;

/// The game a lease is for.
fn lease_kind(lease: &pb::Lease) -> Result<GameKind, String> {
    lease.game_kind.parse().map_err(|e| format!("lease {}: {e}", lease.lease_id))
}

/// Plays one leased game; `Ok(None)` if stopped.
pub(crate) fn play_lease(
    state: &State,
    lease: &pb::Lease,
    stop: &dyn Fn() -> bool,
) -> Result<Option<pb::GameRecord>, String> {
    let kind = lease_kind(lease)?;
    engine::with_game!(kind, |G| play_as::<G>(state, lease, stop))
}

pub(crate) fn play_as<G: Features + engine::agent::GameAgents>(
    state: &State,
    lease: &pb::Lease,
    stop: &dyn Fn() -> bool,
) -> Result<Option<pb::GameRecord>, String> {
    let start = G::decode(&lease.start_state).map_err(|e| format!("lease {}: {e}", lease.lease_id))?;
    if start.outcome().is_some() {
        return Err(format!("lease {}: the start position is finished", lease.lease_id));
    }
    let wire = lease.settings.as_ref().ok_or("lease without settings")?;
    let (settings, leaf) = zeroplay_proto::convert::selfplay_from_proto(wire)
        .map_err(|e| format!("lease {}: {e}", lease.lease_id))?;
    let game = match settings.teacher_spec().map_err(|e| format!("lease {}: {e}", lease.lease_id))? {
        // A teacher (such as banqi-ab) plays instead of MCTS; its endgame tables are kept on
        // disk like every other Banqi agent's.
        Some(teacher) => {
            // `model=served`: this worker's newest model, run on the slot's own thread (a
            // one-layer model runs inside the teacher's search, no batcher between). Built only
            // for a teacher that reads it.
            let served = teacher.uses_net().then(|| {
                model::net_leaf::<G>(
                    NetSource::Slot(
                        state
                            .models
                            .slot(GameKind::of::<G>())
                            .expect("a slot for every game this worker plays"),
                        None,
                    ),
                    &engine::LeafSettings::net_alone(),
                )
            });
            engine::selfplay::play_teacher_game_until(
                &start,
                &settings,
                &model::with_tables(teacher),
                served.as_ref(),
                lease.seed,
                stop,
            )
            .map_err(|e| format!("lease {}: {e}", lease.lease_id))?
        }
        None => self_play(state, &start, &settings, &leaf, lease.seed, stop),
    };
    let Some(game) = game else {
        return Ok(None);
    };
    let id = format!("{:032x}", rand::random::<u128>());
    let model_version =
        game.moves.iter().map(|m| m.model_version).max().unwrap_or(0).max(lease.model_version);
    Ok(Some(game_record(&game, id, lease.seed, model_version)))
}

/// One MCTS self-play game with the leaf the lease names.
fn self_play<G: Features>(
    state: &State,
    start: &G,
    settings: &engine::selfplay::SelfPlaySettings,
    leaf: &engine::LeafSettings,
    seed: u64,
    stop: &dyn Fn() -> bool,
) -> Option<engine::selfplay::SelfPlayGame<G>> {
    let evaluator: Arc<dyn Evaluator<G>> = match leaf.evaluator {
        // The network once one is published (hot-swapped between moves), the user's rollout
        // evaluator until then.
        LeafEvaluator::Net => model::net_leaf::<G>(
            NetSource::Slot(
                state.models.slot(GameKind::of::<G>()).expect("a slot for every game this worker plays"),
                Some(state.batcher.clone()),
            ),
            leaf,
        ),
        LeafEvaluator::Rollout | LeafEvaluator::Uniform => leaf.without_net(),
    };
    play_game_until(start, settings, evaluator.as_ref(), seed, stop)
}

/// Model `version` for an evaluation match: from the cache, or downloaded, checked and loaded
/// (this blocks the calling slot thread, never a runtime thread).
pub(crate) fn evaluation_model(
    state: &State,
    rt: &tokio::runtime::Handle,
    client: &Client,
    kind: GameKind,
    version: u64,
) -> Result<model::Model, String> {
    if let Some(m) = state.evaluation_models.lock().expect("not poisoned").get(&version) {
        return Ok(m.clone());
    }
    let bytes = rt.block_on(download_version(&mut client.clone(), version, None))?;
    let m = load_model(kind, &bytes).map_err(|e| format!("model {version}: {e}"))?;
    let mut cache = state.evaluation_models.lock().expect("not poisoned");
    if cache.len() >= 4 {
        // Gating plays the newest models; the oldest cached one is least likely needed.
        let oldest = *cache.keys().min().expect("not empty");
        cache.remove(&oldest);
    }
    cache.insert(version, m.clone());
    Ok(m)
}

/// A played gating match: the candidate's points and the games, as the report carries them.
pub(crate) struct PlayedMatch {
    pub(crate) points: f64,
    pub(crate) games: Vec<pb::MatchGame>,
}

/// Plays a gating match (a lease with `evaluation` set).
pub(crate) fn play_evaluation(
    state: &State,
    rt: &tokio::runtime::Handle,
    client: &Client,
    lease: &pb::Lease,
    ev: &pb::EvaluationMatch,
) -> Result<PlayedMatch, String> {
    let kind = lease_kind(lease)?;
    engine::with_game!(kind, |G| evaluation_as::<G>(state, rt, client, lease, ev))
}

pub(crate) fn evaluation_as<G: Features + engine::agent::GameAgents>(
    state: &State,
    rt: &tokio::runtime::Handle,
    client: &Client,
    lease: &pb::Lease,
    ev: &pb::EvaluationMatch,
) -> Result<PlayedMatch, String> {
    let start = G::decode(&lease.start_state).map_err(|e| format!("lease {}: {e}", lease.lease_id))?;
    if start.outcome().is_some() {
        return Err(format!("lease {}: the start position is finished", lease.lease_id));
    }
    let s = zeroplay_proto::convert::evaluation_from_proto(ev)
        .map_err(|e| format!("lease {}: bad evaluation settings: {e}", lease.lease_id))?;
    let leaf = |version: u64| -> Result<Arc<dyn Evaluator<G>>, String> {
        let m = match version {
            0 => None,
            v => Some(evaluation_model(state, rt, client, GameKind::of::<G>(), v)?),
        };
        Ok(model::gate_leaf::<G>(m, &s))
    };
    // The same agents as the trainer's own gating (model::gate_agent, model::gate_user_ai).
    let mut a = model::gate_agent(leaf(ev.candidate_version)?, &s, "candidate");
    let mut b: Box<dyn Agent<G>> = match ev.opponent_version {
        0 => model::gate_user_ai::<G>(&s, "opponent"),
        v => model::gate_agent(leaf(v)?, &s, "opponent"),
    };
    let m = play_match_from(&start, a.as_mut(), b.as_mut(), lease.seed);
    let games = m
        .games
        .iter()
        .map(|g| pb::MatchGame { actions: g.actions.iter().map(|a| a.to_string()).collect() })
        .collect();
    Ok(PlayedMatch { points: m.points_a, games })
}

/// Searches a check (a lease with `check` set): the position, fresh, as self-play searches
/// it, with the model that searched the stored move; its root value and policy target (each
/// action as its wire string).
pub(crate) fn check_value(
    state: &State,
    rt: &tokio::runtime::Handle,
    client: &Client,
    lease: &pb::Lease,
    check: &pb::ValueCheck,
) -> Result<CheckSearch<String>, String> {
    let kind = lease_kind(lease)?;
    engine::with_game!(kind, |G| check_as::<G>(state, rt, client, lease, check))
}

fn check_as<G: Features + engine::agent::GameAgents>(
    state: &State,
    rt: &tokio::runtime::Handle,
    client: &Client,
    lease: &pb::Lease,
    check: &pb::ValueCheck,
) -> Result<CheckSearch<String>, String> {
    let position = G::decode(&lease.start_state).map_err(|e| format!("lease {}: {e}", lease.lease_id))?;
    if position.outcome().is_some() {
        return Err(format!("lease {}: the position to check is finished", lease.lease_id));
    }
    let wire = lease.settings.as_ref().ok_or("lease without settings")?;
    let (settings, leaf) = zeroplay_proto::convert::selfplay_from_proto(wire)
        .map_err(|e| format!("lease {}: {e}", lease.lease_id))?;
    let sims = u32::try_from(check.sims.clamp(1, 1 << 20)).expect("bounded");
    let evaluator: Arc<dyn Evaluator<G>> = match (leaf.evaluator, lease.model_version) {
        (LeafEvaluator::Net, v) if v > 0 => {
            let m = evaluation_model(state, rt, client, GameKind::of::<G>(), v)?;
            model::net_leaf::<G>(NetSource::Fixed(m), &leaf)
        }
        // The stored move was searched without a network (none published yet, or another leaf).
        _ => leaf.without_net(),
    };
    let c = engine::selfplay::search_check(&position, &settings, evaluator.as_ref(), sims, lease.seed);
    Ok(CheckSearch {
        root_value: c.root_value,
        visits: c.visits.into_iter().map(|(a, n)| (a.to_string(), n)).collect(),
    })
}
