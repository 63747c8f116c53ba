//! Worker registrations, bounded: every `Register` call makes one, so a holder of the worker
//! token could otherwise grow the table (and the coordinator's memory) without end. A
//! registration silent for `forget_after_ms` is forgotten; at a cap (per address, in all), the
//! registration silent the longest makes way if it has missed three heartbeats, else the call
//! is refused.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use crate::config::WorkersConfig;

struct Registration {
    seen: Instant,
    addr: Option<IpAddr>,
}

/// The registered workers.
pub(crate) struct Registrations {
    map: HashMap<String, Registration>,
    cfg: WorkersConfig,
    /// Silent this long, a registration may make way for a new one at a cap.
    stale: Duration,
}

impl Registrations {
    /// An empty table; `heartbeat`: the workers' heartbeat interval.
    pub(crate) fn new(cfg: WorkersConfig, heartbeat: Duration) -> Registrations {
        Registrations { map: HashMap::new(), cfg, stale: heartbeat * 3 }
    }

    /// Notes a call by `id`; false if `id` is not registered.
    pub(crate) fn touch(&mut self, id: &str, now: Instant) -> bool {
        match self.map.get_mut(id) {
            Some(r) => {
                r.seen = now;
                true
            }
            None => false,
        }
    }

    /// Registers `id` from `addr`.
    ///
    /// # Errors
    /// A sentence saying which cap is full of live registrations.
    pub(crate) fn register(&mut self, id: String, addr: Option<IpAddr>, now: Instant) -> Result<(), String> {
        self.forget_silent(now);
        let per_address = self.map.values().filter(|r| r.addr == addr).count();
        if per_address >= self.cfg.max_per_address as usize && !self.make_way(Some(addr), now) {
            return Err(format!(
                "{per_address} workers registered from this address, all alive (workers.max_per_address)"
            ));
        }
        if self.map.len() >= self.cfg.max_registrations as usize && !self.make_way(None, now) {
            return Err(format!(
                "{} workers registered, all alive (workers.max_registrations)",
                self.map.len()
            ));
        }
        self.map.insert(id, Registration { seen: now, addr });
        Ok(())
    }

    /// Drops the registration silent the longest (of `addr`, or of all with `None`) if it has
    /// been silent for over three heartbeats.
    fn make_way(&mut self, addr: Option<Option<IpAddr>>, now: Instant) -> bool {
        let stalest = self
            .map
            .iter()
            .filter(|(_, r)| addr.is_none_or(|a| r.addr == a))
            .min_by_key(|(_, r)| r.seen)
            .filter(|(_, r)| now.duration_since(r.seen) > self.stale)
            .map(|(id, _)| id.clone());
        match stalest {
            Some(id) => {
                self.map.remove(&id);
                true
            }
            None => false,
        }
    }

    /// Forgets registrations silent for `forget_after_ms`; returns how many.
    pub(crate) fn forget_silent(&mut self, now: Instant) -> usize {
        let limit = Duration::from_millis(self.cfg.forget_after_ms);
        let before = self.map.len();
        self.map.retain(|_, r| now.duration_since(r.seen) < limit);
        before - self.map.len()
    }

    /// Registrations heard from within `within`.
    pub(crate) fn alive(&self, within: Duration) -> usize {
        self.map.values().filter(|r| r.seen.elapsed() < within).count()
    }

    /// Registrations held.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_hold_against_live_registrations_and_silent_ones_make_way() {
        let cfg = WorkersConfig { max_per_address: 2, max_registrations: 3, forget_after_ms: 10_000 };
        let mut r = Registrations::new(cfg, Duration::from_millis(100));
        let t0 = Instant::now();
        let (a, b) = (Some("10.0.0.1".parse().unwrap()), Some("10.0.0.2".parse().unwrap()));
        r.register("a1".into(), a, t0).unwrap();
        r.register("a2".into(), a, t0).unwrap();
        let e = r.register("a3".into(), a, t0).unwrap_err();
        assert!(e.contains("max_per_address"), "{e}");
        r.register("b1".into(), b, t0).unwrap();
        assert!(r.register("b2".into(), b, t0).unwrap_err().contains("max_registrations"));
        // a1 keeps calling; a2 goes silent for over three heartbeats and makes way for a3.
        let t1 = t0 + Duration::from_millis(400);
        assert!(r.touch("a1", t1) && r.touch("b1", t1));
        r.register("a3".into(), a, t1).unwrap();
        assert!(!r.touch("a2", t1), "a2 made way");
        assert_eq!(r.len(), 3);
        // Silent past forget_after_ms: forgotten.
        assert_eq!(r.forget_silent(t1 + Duration::from_secs(11)), 3);
        assert_eq!(r.len(), 0);
    }
}
