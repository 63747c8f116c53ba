//! Fuzz targets for every decoder of untrusted bytes (issue 24): game state bytes, action and
//! position-file text, replay tokens, model files, and Parquet files on load.
//!
//! Each target takes arbitrary bytes and must answer with a value or an error: a panic is a
//! finding. They run two ways:
//! - under `cargo test` (`tests/fuzz.rs`): a seeded random driver, for a bounded time per
//!   target, feeding [`mutate`]d valid inputs ([`Seeds`]) as well as raw bytes;
//! - coverage-guided with libFuzzer: `cargo +nightly fuzz run <target>` in `fuzz/` (one file
//!   per target there, each calling the function here); that needs a nightly toolchain.
//!
//! Random bytes seldom pass a format's first check, so most inputs are edits of a valid input
//! (see [`mutate`]), which reach the checks deep inside each format.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use engine::GameKind;
use engine::game::Game;

/// The games, in the order the targets take them.
pub const KINDS: [GameKind; GameKind::ALL.len()] = GameKind::ALL;

/// `seed` changed by `edits`: a mode byte, then three bytes per edit (a position modulo the
/// length, big-endian, and a value XORed in). Modes 0–31 also truncate at the first edit's
/// position, 32–47 append the edit values, 48–55 give the edits themselves (raw bytes).
pub fn mutate(seed: &[u8], edits: &[u8]) -> Vec<u8> {
    let Some((&mode, rest)) = edits.split_first() else { return seed.to_vec() };
    if (48..56).contains(&mode) {
        return rest.to_vec();
    }
    let mut out = seed.to_vec();
    for e in rest.chunks_exact(3) {
        if out.is_empty() {
            break;
        }
        let at = usize::from(u16::from_be_bytes([e[0], e[1]])) % out.len();
        out[at] ^= e[2].max(1);
    }
    match mode {
        0..32 => {
            if let Some(e) = rest.get(..2) {
                let at = usize::from(u16::from_be_bytes([e[0], e[1]])) % (out.len() + 1);
                out.truncate(at);
            }
        }
        32..48 => out.extend(rest.iter().step_by(3)),
        _ => {}
    }
    out
}

/// Valid inputs the targets mutate.
#[derive(Debug, Clone)]
pub struct Seeds {
    /// Per game (in [`KINDS`] order): encoded positions, the initial one and random openings.
    pub states: Vec<Vec<Vec<u8>>>,
    /// Per game: a replay token of a dozen clicks.
    pub tokens: Vec<String>,
    /// A positions-file line.
    pub position_line: Vec<u8>,
    /// A model file (a `tiny` Battle Number network).
    pub model: Vec<u8>,
    /// A Parquet file of one stored Battle Number game, as the coordinator writes it.
    pub parquet: Vec<u8>,
}

impl Seeds {
    /// Builds every seed (a self-play game, a model file, a Parquet file in `scratch`).
    ///
    /// # Panics
    /// If a seed cannot be built: every one is the product's own output.
    pub fn new(scratch: &Path) -> Seeds {
        use engine::Features;
        use engine::battlenumber::BattleNumber;
        let opts = zeroplay_coordinator::games::GameOptions::default();
        let states: Vec<Vec<Vec<u8>>> = KINDS
            .iter()
            .map(|&k| {
                let mut v = vec![zeroplay_coordinator::games::initial_state(k, &opts)];
                v.extend(
                    (1..6u64)
                        .map(|i| zeroplay_coordinator::games::random_opening(k, &opts, 2 + 3 * i as u32, i)),
                );
                v
            })
            .collect();
        let tokens = KINDS
            .iter()
            .map(|&k| {
                engine::with_game!(k, |G| {
                    let mut g = G::new_game(&Default::default());
                    let mut rng = engine::rng_from_seed(7);
                    let (mut actions, mut legal) = (Vec::new(), Vec::new());
                    while actions.len() < 12 && g.outcome().is_none() {
                        g.legal_actions(&mut legal);
                        let a = legal[rand::RngExt::random_range(&mut rng, 0..legal.len())];
                        g.play(a).expect("legal");
                        actions.push(a);
                    }
                    zeroplay_server::replay::encode::<G>(&zeroplay_server::replay::Replay {
                        options: Default::default(),
                        seed: 5,
                        actions,
                    })
                })
            })
            .collect();
        let hex: String = states[0][1].iter().map(|b| format!("{b:02x}")).collect();
        let position_line =
            format!("{{\"game\": \"battlenumber\", \"state_hex\": \"{hex}\"}}\n").into_bytes();
        let cfg = model::NetConfig::named("tiny").expect("a named size");
        let net =
            model::ValueNet::new(&cfg, BattleNumber::FEATURE_LEN, BattleNumber::POLICY_LEN, &model::cpu());
        let meta = model::ModelMeta::for_game::<BattleNumber>(cfg, 10.0, model::ModelInfo::default());
        let model = model::to_bytes(&net, &meta).expect("a model file");
        let settings =
            engine::selfplay::SelfPlaySettings { full_sims: 4, fast_sims: 2, ..Default::default() };
        let start = BattleNumber::decode(&states[0][0]).expect("the initial position");
        let g = engine::selfplay::play_game(&start, &settings, &engine::eval::Rollout::default(), 1);
        let record = zeroplay_proto::convert::game_record(&g, format!("{:032x}", 1), 1, 0);
        zeroplay_coordinator::games::store_records(
            scratch,
            "seed.parquet",
            &[record],
            &Default::default(),
            engine::ENGINE_VERSION,
        )
        .expect("a valid game, written");
        let parquet = std::fs::read(scratch.join("seed.parquet")).expect("written");
        Seeds { states, tokens, position_line, model, parquet }
    }
}

/// The seeds and their scratch directory (under the system's temporary directory, named for
/// the process), built once per process: what each cargo-fuzz target in `fuzz/` starts from.
///
/// # Panics
/// As [`Seeds::new`], or if the scratch directory cannot be made.
pub fn shared() -> &'static (Seeds, PathBuf) {
    static SHARED: OnceLock<(Seeds, PathBuf)> = OnceLock::new();
    SHARED.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("zeroplay-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        (Seeds::new(&dir), dir)
    })
}

/// Picks a seed by the input's first byte and mutates it by the rest.
fn pick<'a, T: AsRef<[u8]>>(seeds: &'a [T], data: &[u8]) -> (&'a [u8], Vec<u8>) {
    let seed = seeds[data.first().map_or(0, |b| usize::from(*b)) % seeds.len()].as_ref();
    (seed, mutate(seed, data.get(1..).unwrap_or_default()))
}

/// State bytes of game `kind`: whatever `decode` accepts re-encodes to a state that decodes
/// to the same, and its first legal actions play.
///
/// # Panics
/// On a finding.
pub fn state_bytes(kind: GameKind, seeds: &Seeds, data: &[u8]) {
    let i = KINDS.iter().position(|k| *k == kind).expect("a known game");
    let (_, bytes) = pick(&seeds.states[i], data);
    engine::with_game!(kind, |G| {
        let Ok(g) = G::decode(&bytes) else { return };
        let again = engine::game::to_bytes(&g);
        let g2 = G::decode(&again).expect("a decoded state re-encodes to one that decodes");
        assert_eq!(engine::game::to_bytes(&g2), again, "encoding is stable");
        if g.outcome().is_none() {
            let mut legal = Vec::new();
            g.legal_actions(&mut legal);
            for a in legal.iter().take(4) {
                g.clone().play(*a).expect("a legal action plays");
            }
        }
    });
}

/// Action text in every game's position (a click, a recorded move), and a positions file
/// (written to `file`).
///
/// # Panics
/// On a finding.
pub fn text(seeds: &Seeds, file: &Path, data: &[u8]) {
    let text = String::from_utf8_lossy(data.get(1..).unwrap_or_default()).into_owned();
    for (i, &k) in KINDS.iter().enumerate() {
        engine::with_game!(k, |G| {
            let g = G::decode(&seeds.states[i][1]).expect("a seed");
            if let Ok(a) = g.parse_action(&text) {
                // A parsed action is played or refused, never a panic.
                let _ = g.clone().play(a);
            }
        });
    }
    std::fs::write(file, mutate(&seeds.position_line, data)).expect("scratch file");
    for k in KINDS {
        let _ = zeroplay_coordinator::leases::read_positions_file(file, k);
    }
}

/// Replay tokens, as a link or a new-game request brings them.
///
/// # Panics
/// On a finding.
pub fn replay_token(seeds: &Seeds, data: &[u8]) {
    let (_, bytes) = pick(&seeds.tokens, data);
    let token = String::from_utf8_lossy(&bytes).into_owned();
    let _ = zeroplay_server::replay::kind_of(&token);
    for k in KINDS {
        engine::with_game!(k, |G| {
            let _ = zeroplay_server::replay::decode::<G>(&token, &Default::default());
        });
    }
}

/// Model files, as PublishModel, `serve --model`, hot reload and workers read them (edits
/// aimed at the header half the time).
///
/// # Panics
/// On a finding.
pub fn model_file(seeds: &Seeds, data: &[u8]) {
    let seed = &seeds.model;
    let head = 8 + u64::from_le_bytes(seed[..8].try_into().expect("8 bytes")) as usize;
    let bytes = if data.first().is_some_and(|b| b % 2 == 0) {
        let mut b = mutate(&seed[..head + 64], data.get(1..).unwrap_or_default());
        if b.len() == head + 64 {
            b.extend_from_slice(&seed[head + 64..]);
        }
        b
    } else {
        mutate(seed, data.get(1..).unwrap_or_default())
    };
    let _ = modelfile::check(&bytes);
}

/// Parquet files as the trainer loads them (from a bucket, a disk, another tool), written to
/// `file`.
///
/// # Panics
/// On a finding.
pub fn parquet_file(seeds: &Seeds, file: &Path, data: &[u8]) {
    std::fs::write(file, mutate(&seeds.parquet, data)).expect("scratch file");
    let _ = trainer::data::read_file::<engine::battlenumber::BattleNumber>(file);
}
