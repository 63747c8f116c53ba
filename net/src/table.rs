//! The table of held connections: counts in all and per address, the unestablished ones in
//! age order (the eviction candidates), and the counters.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use atomic_waker::AtomicWaker;

/// Shared between a connection's stream and the table: eviction is a flag and a wake-up.
#[derive(Debug, Default)]
pub(crate) struct ConnState {
    pub(crate) evicted: AtomicBool,
    established: AtomicBool,
    pub(crate) waker: AtomicWaker,
}

#[derive(Debug, Default)]
struct State {
    total: usize,
    per: HashMap<IpAddr, usize>,
    /// Unestablished connections by admission order (the oldest first).
    pending: BTreeMap<u64, (IpAddr, Arc<ConnState>)>,
    next: u64,
}

/// Counters of a guarded listener.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GuardStats {
    /// Connections held now.
    pub open: u64,
    /// Connections admitted since start.
    pub accepted: u64,
    /// Connections closed at once: every held connection in their scope was established.
    pub refused: u64,
    /// Unestablished connections closed to make room for a newer one.
    pub evicted: u64,
    /// Connections closed by the handshake or idle timeout.
    pub timed_out: u64,
    /// Requests whose body came too slowly (below the minimum transfer rate): failed, and on
    /// HTTP listeners their connection closed.
    pub slow_requests: u64,
}

#[derive(Debug)]
pub(crate) struct Table {
    max: usize,
    per_address: usize,
    state: Mutex<State>,
    accepted: AtomicU64,
    refused: AtomicU64,
    evicted: AtomicU64,
    pub(crate) timed_out: AtomicU64,
    pub(crate) slow_requests: AtomicU64,
}

impl Table {
    pub(crate) fn new(max: usize, per_address: usize) -> Self {
        Table {
            max: max.max(1),
            per_address: per_address.max(1),
            state: Mutex::default(),
            accepted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            timed_out: AtomicU64::new(0),
            slow_requests: AtomicU64::new(0),
        }
    }

    pub(crate) fn max(&self) -> usize {
        self.max
    }

    pub(crate) fn stats(&self) -> GuardStats {
        let open = self.state.lock().expect("not poisoned").total as u64;
        GuardStats {
            open,
            accepted: self.accepted.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            evicted: self.evicted.load(Ordering::Relaxed),
            timed_out: self.timed_out.load(Ordering::Relaxed),
            slow_requests: self.slow_requests.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn admit(self: &Arc<Self>, key: IpAddr) -> Option<Ticket> {
        let mut s = self.state.lock().expect("not poisoned");
        if s.per.get(&key).copied().unwrap_or(0) >= self.per_address && !self.evict(&mut s, Some(key)) {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        if s.total >= self.max && !self.evict(&mut s, None) {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        s.total += 1;
        *s.per.entry(key).or_default() += 1;
        let id = s.next;
        s.next += 1;
        let conn = Arc::new(ConnState::default());
        s.pending.insert(id, (key, conn.clone()));
        self.accepted.fetch_add(1, Ordering::Relaxed);
        Some(Ticket { table: self.clone(), id, key, conn, released: false })
    }

    /// Evicts the oldest unestablished connection (of `key`, or of anyone), releasing its
    /// place at once; false when there is none.
    fn evict(&self, s: &mut State, key: Option<IpAddr>) -> bool {
        let victim = s.pending.iter().find(|(_, (k, _))| key.is_none_or(|key| *k == key)).map(|(id, _)| *id);
        let Some(id) = victim else { return false };
        let (k, conn) = s.pending.remove(&id).expect("just found");
        Self::release_counts(s, k);
        conn.evicted.store(true, Ordering::Release);
        conn.waker.wake();
        self.evicted.fetch_add(1, Ordering::Relaxed);
        true
    }

    fn release_counts(s: &mut State, key: IpAddr) {
        s.total -= 1;
        if let Some(n) = s.per.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                s.per.remove(&key);
            }
        }
    }
}

/// A connection's place in the table, given back when dropped.
#[derive(Debug)]
pub struct Ticket {
    table: Arc<Table>,
    id: u64,
    key: IpAddr,
    pub(crate) conn: Arc<ConnState>,
    released: bool,
}

impl Ticket {
    /// Marks the connection established: it can no longer be evicted to make room.
    pub fn establish(&self) {
        if self.conn.established.swap(true, Ordering::AcqRel) {
            return;
        }
        self.table.state.lock().expect("not poisoned").pending.remove(&self.id);
    }

    /// Makes an established connection evictable again, at its original age: it is receiving
    /// a request, and protection is earned by whole requests (a request body trickled a byte
    /// at a time must not hold a place a new client needs).
    pub fn unestablish(&self) {
        if !self.conn.established.swap(false, Ordering::AcqRel) || self.evicted() {
            return;
        }
        self.table.state.lock().expect("not poisoned").pending.insert(self.id, (self.key, self.conn.clone()));
    }

    /// Whether [`Ticket::establish`] was called (and not undone).
    pub fn is_established(&self) -> bool {
        self.conn.established.load(Ordering::Acquire)
    }

    /// Whether the table took this connection's place for a newer one.
    pub fn evicted(&self) -> bool {
        self.conn.evicted.load(Ordering::Acquire)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.released || self.evicted() {
            return;
        }
        self.released = true;
        let mut s = self.table.state.lock().expect("not poisoned");
        s.pending.remove(&self.id);
        Table::release_counts(&mut s, self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_full_address_evicts_its_oldest_unestablished_connection() {
        let t = Arc::new(Table::new(100, 2));
        let a = t.admit(ip("10.0.0.1")).unwrap();
        let b = t.admit(ip("10.0.0.1")).unwrap();
        let other = t.admit(ip("10.0.0.2")).unwrap();
        let c = t.admit(ip("10.0.0.1")).unwrap();
        assert!(a.evicted() && !b.evicted() && !c.evicted() && !other.evicted());
        assert_eq!(t.stats().open, 3);
        // With both of its connections established, the address is refused.
        b.establish();
        c.establish();
        assert!(t.admit(ip("10.0.0.1")).is_none());
        assert_eq!(t.stats().refused, 1);
        drop(a); // evicted: its place was already given back
        drop(b);
        assert_eq!(t.stats().open, 2);
        assert!(t.admit(ip("10.0.0.1")).is_some());
    }

    #[test]
    fn a_full_table_evicts_the_oldest_unestablished_of_anyone() {
        let t = Arc::new(Table::new(3, 3));
        let a = t.admit(ip("10.0.0.1")).unwrap();
        a.establish();
        let b = t.admit(ip("10.0.0.2")).unwrap();
        let c = t.admit(ip("10.0.0.3")).unwrap();
        let d = t.admit(ip("10.0.0.4")).unwrap();
        assert!(!a.evicted() && b.evicted() && !c.evicted() && !d.evicted());
        c.establish();
        d.establish();
        assert!(t.admit(ip("10.0.0.5")).is_none());
        let s = t.stats();
        assert_eq!((s.open, s.accepted, s.refused, s.evicted), (3, 4, 1, 1));
        // c starts receiving a request: evictable again, and the oldest candidate.
        c.unestablish();
        let e = t.admit(ip("10.0.0.5")).unwrap();
        assert!(c.evicted() && !d.evicted() && !e.evicted());
        // An evicted connection stays evicted.
        c.unestablish();
        assert_eq!(t.stats().open, 3);
    }
}
