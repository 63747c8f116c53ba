//! How many games each client may hold, and which game makes way when the server is full
//! (issue 44: a game-creation flood from a few dozen addresses must not lock new players out).

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::{AppState, Held};

impl AppState {
    /// Makes room for a new game when `games` is full: drops a game with no click played, not
    /// searching and idle at least `unplayed_idle_s` — of those, one of the address holding
    /// the most games, idle longest. Returns whether it dropped one. So a flood of games nobody
    /// plays gives way to new players within `unplayed_idle_s`, the flooders' games first.
    /// `only`: among that address's games alone (a client at its limit replacing its own).
    pub(crate) fn evict_unplayed(&self, games: &mut HashMap<u64, Arc<Held>>, only: Option<IpAddr>) -> bool {
        let mut held: HashMap<IpAddr, usize> = HashMap::new();
        for h in games.values() {
            *held.entry(h.owner).or_default() += 1;
        }
        let min = Duration::from_secs(self.cfg.unplayed_idle_s);
        let victim = games
            .iter()
            .filter(|(_, h)| only.is_none_or(|ip| h.owner == ip) && !h.thinking.load(Ordering::SeqCst))
            // A game busy elsewhere is not a candidate (and is not waited for).
            .filter(|(_, h)| h.table.try_lock().is_ok_and(|t| t.ply() == 0))
            .map(|(id, h)| (*id, held[&h.owner], h.last_used.lock().expect("not poisoned").elapsed()))
            .filter(|(_, _, idle)| *idle >= min)
            .max_by_key(|(_, n, idle)| (*n, *idle))
            .map(|(id, _, _)| id);
        match victim.and_then(|id| games.remove(&id)) {
            Some(h) => {
                h.stop_search();
                true
            }
            None => false,
        }
    }

    /// How many games `owner` holds, and the most it may hold now: `max_games_per_client`, or
    /// its share while many addresses play (`max_games` over the addresses holding games,
    /// `owner` counted).
    pub(crate) fn holding_and_share(&self, games: &HashMap<u64, Arc<Held>>, owner: IpAddr) -> (usize, usize) {
        let owners: HashSet<IpAddr> = games.values().map(|h| h.owner).collect();
        let mine = games.values().filter(|h| h.owner == owner).count();
        let active = owners.len() + usize::from(mine == 0);
        (mine, (self.cfg.max_games / active.max(1)).clamp(1, self.cfg.max_games_per_client))
    }
}
