//! Replay tokens: a whole game (kind, options, seed and clicks) in a short URL-safe string.
//!
//! Layout, then base64url without padding: format version (1), game code, the seed as a
//! varint, the options as JSON (length varint, bytes), the click count (varint), then each
//! click as the varint index of the action among the legal actions at that point. Indices
//! instead of names keep tokens short (a whole Battle Number game is about 200 characters)
//! and make every token self-checking: decoding replays the game, so a token can only name
//! positions the rules reach.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use engine::game::Game;

use engine::GameKind;

use crate::served::Served;

const FORMAT: u8 = 1;
/// Longest token accepted (characters).
pub const MAX_TOKEN_LEN: usize = 8192;

/// A game as a replay token holds it.
#[derive(Clone, Debug)]
pub struct Replay<G: Game> {
    /// Options.
    pub options: G::Options,
    /// The game's seed (the AI's randomness).
    pub seed: u64,
    /// Every click, in order.
    pub actions: Vec<G::Action>,
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at).ok_or("token ends early")?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("varint too long".into())
}

/// The token of `r`.
///
/// # Panics
/// If an action of `r` is not legal where it is played (the server only holds legal games).
pub fn encode<G: Served>(r: &Replay<G>) -> String {
    let mut out = vec![FORMAT, GameKind::of::<G>().pack().replay_code];
    put_varint(&mut out, r.seed);
    let opts = serde_json::to_vec(&G::options_json(&r.options)).expect("options serialise");
    put_varint(&mut out, opts.len() as u64);
    out.extend_from_slice(&opts);
    put_varint(&mut out, r.actions.len() as u64);
    let mut s = G::new_game(&r.options);
    let mut legal = Vec::new();
    for a in &r.actions {
        s.legal_actions(&mut legal);
        let i = legal.iter().position(|x| x == a).expect("a legal action");
        put_varint(&mut out, i as u64);
        s.play_unchecked(*a);
    }
    URL_SAFE_NO_PAD.encode(out)
}

/// The game kind code of a token, to pick the game type before decoding it.
///
/// # Errors
/// A token that is not base64url or is too short.
pub fn kind_of(token: &str) -> Result<GameKind, String> {
    let b = bytes(token)?;
    GameKind::from_replay_code(b[1]).ok_or_else(|| format!("unknown game code {}", b[1]))
}

/// The token's bytes, with a known format byte and at least a game code after it.
fn bytes(token: &str) -> Result<Vec<u8>, String> {
    if token.len() > MAX_TOKEN_LEN {
        return Err(format!("token longer than {MAX_TOKEN_LEN} characters"));
    }
    let b = URL_SAFE_NO_PAD.decode(token.trim()).map_err(|e| format!("token is not base64url: {e}"))?;
    if b.len() < 2 || b[0] != FORMAT {
        return Err("not a zeroplay replay token (unknown format)".into());
    }
    Ok(b)
}

/// Reads a token for game `G`, replaying (and so checking) every click.
///
/// # Errors
/// What is wrong: encoding, game, options, or the click that is out of range.
pub fn decode<G: Served>(token: &str, defaults: &G::Options) -> Result<Replay<G>, String> {
    let b = bytes(token)?;
    if b[1] != GameKind::of::<G>().pack().replay_code {
        return Err(format!("token is not a {} game", G::NAME));
    }
    let mut at = 2;
    let seed = get_varint(&b, &mut at)?;
    let n = get_varint(&b, &mut at)? as usize;
    let opts = b.get(at..at + n).ok_or("token ends inside the options")?;
    at += n;
    let v: serde_json::Value = serde_json::from_slice(opts).map_err(|e| format!("token options: {e}"))?;
    let options = G::options_from_json(&v, defaults)?;
    let count = get_varint(&b, &mut at)? as usize;
    if count > b.len() {
        return Err("token claims more clicks than it holds".into());
    }
    let mut s = G::new_game(&options);
    let mut legal = Vec::new();
    let mut actions = Vec::with_capacity(count);
    for k in 0..count {
        if s.outcome().is_some() {
            return Err(format!("click {} comes after the end of the game", k + 1));
        }
        s.legal_actions(&mut legal);
        let i = get_varint(&b, &mut at)? as usize;
        let a = *legal
            .get(i)
            .ok_or_else(|| format!("click {}: index {i} of {} legal actions", k + 1, legal.len()))?;
        s.play_unchecked(a);
        actions.push(a);
    }
    if at != b.len() {
        return Err("trailing bytes after the last click".into());
    }
    Ok(Replay { options, seed, actions })
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::battlenumber::BattleNumber;
    use engine::trigolden::TriGolden;

    fn random_game<G: Served>(seed: u64, max: usize) -> Replay<G> {
        let options = G::Options::default();
        let mut s = G::new_game(&options);
        let mut rng = engine::rng_from_seed(seed);
        let mut actions = Vec::new();
        let mut legal = Vec::new();
        while s.outcome().is_none() && actions.len() < max {
            s.legal_actions(&mut legal);
            let a = legal[rand::RngExt::random_range(&mut rng, 0..legal.len())];
            s.play(a).unwrap();
            actions.push(a);
        }
        Replay { options, seed: seed * 1_000_003, actions }
    }

    #[test]
    fn tokens_round_trip_whole_games() {
        for seed in 0..5 {
            let r = random_game::<BattleNumber>(seed, usize::MAX);
            let t = encode(&r);
            assert!(t.len() < 400, "{} characters", t.len());
            let back = decode::<BattleNumber>(&t, &Default::default()).unwrap();
            assert_eq!((back.seed, back.actions), (r.seed, r.actions));
            assert_eq!(kind_of(&t).unwrap(), GameKind::BattleNumber);
        }
        let r = random_game::<TriGolden>(1, 12);
        let back = decode::<TriGolden>(&encode(&r), &Default::default()).unwrap();
        assert_eq!(back.actions, r.actions);
    }

    #[test]
    fn bad_tokens_say_what_is_wrong() {
        let r = random_game::<BattleNumber>(9, 40);
        let t = encode(&r);
        assert!(decode::<TriGolden>(&t, &Default::default()).unwrap_err().contains("not a trigolden"));
        assert!(decode::<BattleNumber>("!!!", &Default::default()).unwrap_err().contains("base64"));
        assert!(decode::<BattleNumber>(&t[..t.len() - 3], &Default::default()).is_err());
        // An index past the legal actions.
        let mut raw = URL_SAFE_NO_PAD.decode(&t).unwrap();
        *raw.last_mut().unwrap() = 0x7f;
        assert!(
            decode::<BattleNumber>(&URL_SAFE_NO_PAD.encode(&raw), &Default::default())
                .unwrap_err()
                .contains("index")
        );
        raw.push(0);
        assert!(decode::<BattleNumber>(&URL_SAFE_NO_PAD.encode(&raw), &Default::default()).is_err());
        assert!(kind_of("AQk").is_err(), "game code 9 is no game");
        assert_eq!(kind_of("AQM").unwrap(), GameKind::Banqi);
    }
}
