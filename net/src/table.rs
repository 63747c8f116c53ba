//! The table of held connections: counts in all, per address and untrusted per address; the
//! unestablished and the established-but-untrusted ones in age order (the eviction
//! candidates); and the counters.
//!
//! Who makes way for a newcomer, in order (issue 42):
//! 1. the oldest connection still in its handshake (of the newcomer's address when that
//!    address is at its cap, of anyone when the table is full);
//! 2. at a full address, that address's oldest established but untrusted connection: an
//!    address that fills its own cap only displaces itself;
//! 3. at a full table, the oldest established but untrusted connection of the address
//!    holding the most untrusted connections (the newcomer's own on a tie): so as addresses
//!    arrive at a full table the largest ones shrink towards an equal share (the cap per
//!    address adapts to how many addresses are active), and a few addresses holding
//!    established, pinging connections can no longer lock everyone else out. A newcomer is
//!    refused only when every held connection is trusted.
//!
//! A **trusted** connection (one that carried an authenticated request, [`Table::trust`]) is
//! never displaced: no number of unauthenticated connections can take a worker's place.
//! Steps 2 and 3 are on only where every real client authenticates (the coordinator:
//! `Guard::displace_untrusted`); elsewhere (the play server, metrics) an established
//! connection is a client as far as the server can tell, and keeps its place.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use atomic_waker::AtomicWaker;

/// Shared between a connection's stream and the table: eviction is a flag and a wake-up.
#[derive(Debug, Default)]
pub(crate) struct ConnState {
    pub(crate) evicted: AtomicBool,
    established: AtomicBool,
    trusted: AtomicBool,
    pub(crate) waker: AtomicWaker,
}

type Candidates = BTreeMap<u64, (IpAddr, Arc<ConnState>)>;

#[derive(Debug, Default)]
struct State {
    total: usize,
    per: HashMap<IpAddr, usize>,
    /// Untrusted connections per address (in `pending` or `loose`).
    untrusted: HashMap<IpAddr, usize>,
    /// Unestablished connections by admission order (the oldest first).
    pending: Candidates,
    /// Established, untrusted connections by admission order.
    loose: Candidates,
    /// Every held connection's id by its peer, for [`Table::trust`].
    by_peer: HashMap<SocketAddr, u64>,
    trusted: usize,
    next: u64,
}

/// Counters of a guarded listener.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GuardStats {
    /// Connections held now.
    pub open: u64,
    /// Of those, connections that carried an authenticated request (never displaced).
    pub trusted: u64,
    /// Connections admitted since start.
    pub accepted: u64,
    /// Connections closed at once: every held connection in their scope was established
    /// (and, where untrusted connections make way, trusted).
    pub refused: u64,
    /// Unestablished connections closed to make room for a newer one.
    pub evicted: u64,
    /// Established, untrusted connections closed to make room for a newer one (from an
    /// address holding more than its share of a full table, or from the newcomer's own full
    /// address).
    pub displaced: u64,
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
    /// Whether established, untrusted connections make way (steps 2 and 3 of the module
    /// docs): on for a listener whose real clients all authenticate.
    displace: AtomicBool,
    state: Mutex<State>,
    accepted: AtomicU64,
    refused: AtomicU64,
    evicted: AtomicU64,
    displaced: AtomicU64,
    pub(crate) timed_out: AtomicU64,
    pub(crate) slow_requests: AtomicU64,
}

impl Table {
    pub(crate) fn new(max: usize, per_address: usize) -> Self {
        Table {
            max: max.max(1),
            per_address: per_address.max(1),
            displace: AtomicBool::new(false),
            state: Mutex::default(),
            accepted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            displaced: AtomicU64::new(0),
            timed_out: AtomicU64::new(0),
            slow_requests: AtomicU64::new(0),
        }
    }

    pub(crate) fn max(&self) -> usize {
        self.max
    }

    pub(crate) fn set_displace(&self, on: bool) {
        self.displace.store(on, Ordering::Relaxed);
    }

    pub(crate) fn stats(&self) -> GuardStats {
        let (open, trusted) = {
            let s = self.state.lock().expect("not poisoned");
            (s.total as u64, s.trusted as u64)
        };
        GuardStats {
            open,
            trusted,
            accepted: self.accepted.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            evicted: self.evicted.load(Ordering::Relaxed),
            displaced: self.displaced.load(Ordering::Relaxed),
            timed_out: self.timed_out.load(Ordering::Relaxed),
            slow_requests: self.slow_requests.load(Ordering::Relaxed),
        }
    }

    /// A place for a connection from `peer` (grouped under `key`), making way as the module
    /// docs say; `None` when nobody may make way.
    pub(crate) fn admit(self: &Arc<Self>, peer: SocketAddr, key: IpAddr) -> Option<Ticket> {
        let mut s = self.state.lock().expect("not poisoned");
        if s.per.get(&key).copied().unwrap_or(0) >= self.per_address && !self.make_way_at(&mut s, key) {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        if s.total >= self.max && !self.make_way(&mut s, key) {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        s.total += 1;
        *s.per.entry(key).or_default() += 1;
        *s.untrusted.entry(key).or_default() += 1;
        let id = s.next;
        s.next += 1;
        let conn = Arc::new(ConnState::default());
        s.pending.insert(id, (key, conn.clone()));
        s.by_peer.insert(peer, id);
        self.accepted.fetch_add(1, Ordering::Relaxed);
        Some(Ticket { table: self.clone(), id, key, peer, conn, released: false })
    }

    /// Marks the connection from `peer` trusted (it carried an authenticated request): it is
    /// established and can never be displaced. False when no such connection is held.
    pub(crate) fn trust(&self, peer: SocketAddr) -> bool {
        let mut s = self.state.lock().expect("not poisoned");
        let Some(&id) = s.by_peer.get(&peer) else { return false };
        let entry = s.pending.remove(&id).or_else(|| s.loose.remove(&id));
        let Some((key, conn)) = entry else {
            // Already trusted (or evicted this instant: its place is gone either way).
            return true;
        };
        conn.trusted.store(true, Ordering::Release);
        if !conn.established.swap(true, Ordering::AcqRel) {
            conn.waker.wake();
        }
        Self::drop_untrusted(&mut s, key);
        s.trusted += 1;
        true
    }

    /// At a full address: its oldest unestablished connection, else its oldest untrusted one.
    fn make_way_at(&self, s: &mut State, key: IpAddr) -> bool {
        let of_key = |c: &Candidates| c.iter().find(|(_, (k, _))| *k == key).map(|(id, _)| *id);
        if let Some(id) = of_key(&s.pending) {
            return self.evict(s, id, false);
        }
        if !self.displace.load(Ordering::Relaxed) {
            return false;
        }
        match of_key(&s.loose) {
            Some(id) => self.evict(s, id, true),
            None => false,
        }
    }

    /// At a full table: the oldest unestablished connection of anyone, else the oldest
    /// untrusted one of the address holding the most untrusted connections (the newcomer's
    /// own on a tie). So a newcomer is refused only when every held connection is trusted.
    fn make_way(&self, s: &mut State, key: IpAddr) -> bool {
        if let Some(&id) = s.pending.keys().next() {
            return self.evict(s, id, false);
        }
        if !self.displace.load(Ordering::Relaxed) {
            return false;
        }
        let Some(&most) = s.untrusted.values().max() else { return false };
        let own = s.untrusted.get(&key) == Some(&most);
        let victim = s
            .loose
            .iter()
            .find(|(_, (k, _))| if own { *k == key } else { s.untrusted.get(k) == Some(&most) })
            .map(|(id, _)| *id);
        match victim {
            Some(id) => self.evict(s, id, true),
            None => false,
        }
    }

    /// Closes candidate `id` (from `loose` if `established`, else from `pending`), releasing
    /// its place at once.
    fn evict(&self, s: &mut State, id: u64, established: bool) -> bool {
        let from = if established { &mut s.loose } else { &mut s.pending };
        let Some((k, conn)) = from.remove(&id) else { return false };
        Self::drop_untrusted(s, k);
        Self::release_counts(s, k);
        conn.evicted.store(true, Ordering::Release);
        conn.waker.wake();
        if established { &self.displaced } else { &self.evicted }.fetch_add(1, Ordering::Relaxed);
        true
    }

    fn drop_untrusted(s: &mut State, key: IpAddr) {
        if let Some(n) = s.untrusted.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                s.untrusted.remove(&key);
            }
        }
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
    peer: SocketAddr,
    pub(crate) conn: Arc<ConnState>,
    released: bool,
}

impl Ticket {
    /// Marks the connection established: it can no longer be evicted to make room (only
    /// displaced, while untrusted, by the rules in the module docs).
    pub fn establish(&self) {
        if self.conn.established.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut s = self.table.state.lock().expect("not poisoned");
        if let Some(e) = s.pending.remove(&self.id) {
            s.loose.insert(self.id, e);
        }
    }

    /// Makes an established, untrusted connection evictable again, at its original age: it
    /// is receiving a request, and protection is earned by whole requests (a request body
    /// trickled a byte at a time must not hold a place a new client needs). A trusted
    /// connection stays as it is.
    pub fn unestablish(&self) {
        if self.conn.trusted.load(Ordering::Acquire)
            || !self.conn.established.swap(false, Ordering::AcqRel)
            || self.evicted()
        {
            return;
        }
        let mut s = self.table.state.lock().expect("not poisoned");
        if let Some(e) = s.loose.remove(&self.id) {
            s.pending.insert(self.id, e);
        }
    }

    /// Whether [`Ticket::establish`] was called (and not undone), or the connection trusted.
    pub fn is_established(&self) -> bool {
        self.conn.established.load(Ordering::Acquire)
    }

    /// Whether the connection carried an authenticated request.
    pub fn is_trusted(&self) -> bool {
        self.conn.trusted.load(Ordering::Acquire)
    }

    /// Whether the table took this connection's place for a newer one.
    pub fn evicted(&self) -> bool {
        self.conn.evicted.load(Ordering::Acquire)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut s = self.table.state.lock().expect("not poisoned");
        if s.by_peer.get(&self.peer) == Some(&self.id) {
            s.by_peer.remove(&self.peer);
        }
        // An evicted connection's counts were released when it was evicted.
        if self.released || self.evicted() {
            return;
        }
        self.released = true;
        let untrusted = s.pending.remove(&self.id).or_else(|| s.loose.remove(&self.id)).is_some();
        if untrusted {
            Table::drop_untrusted(&mut s, self.key);
        } else if self.is_trusted() {
            s.trusted -= 1;
        }
        Table::release_counts(&mut s, self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU16;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn displacing(max: usize, per_address: usize) -> Arc<Table> {
        let t = Arc::new(Table::new(max, per_address));
        t.set_displace(true);
        t
    }

    /// A connection from `addr` on a port not used before.
    fn from(t: &Arc<Table>, addr: &str) -> Option<Ticket> {
        static PORT: AtomicU16 = AtomicU16::new(1);
        let peer = SocketAddr::new(ip(addr), PORT.fetch_add(1, Ordering::Relaxed));
        t.admit(peer, ip(addr))
    }

    #[test]
    fn a_full_address_evicts_its_oldest_unestablished_then_untrusted_connection() {
        let t = displacing(100, 2);
        let a = from(&t, "10.0.0.1").unwrap();
        let b = from(&t, "10.0.0.1").unwrap();
        let other = from(&t, "10.0.0.2").unwrap();
        let c = from(&t, "10.0.0.1").unwrap();
        assert!(a.evicted() && !b.evicted() && !c.evicted() && !other.evicted());
        assert_eq!(t.stats().open, 3);
        // Both established but untrusted: the address displaces its own oldest.
        b.establish();
        c.establish();
        let d = from(&t, "10.0.0.1").unwrap();
        assert!(b.evicted() && !c.evicted() && !d.evicted());
        assert_eq!((t.stats().evicted, t.stats().displaced), (1, 1));
        // Both trusted: nobody may make way, the address is refused.
        assert!(t.trust(c.peer) && t.trust(d.peer));
        assert!(from(&t, "10.0.0.1").is_none());
        assert_eq!(t.stats().refused, 1);
        drop(a); // evicted: its place was already given back
        drop(b);
        drop(c);
        assert_eq!((t.stats().open, t.stats().trusted), (2, 1));
        assert!(from(&t, "10.0.0.1").is_some());
    }

    #[test]
    fn a_full_table_evicts_the_oldest_unestablished_of_anyone() {
        let t = displacing(3, 3);
        let a = from(&t, "10.0.0.1").unwrap();
        a.establish();
        let b = from(&t, "10.0.0.2").unwrap();
        let c = from(&t, "10.0.0.3").unwrap();
        let d = from(&t, "10.0.0.4").unwrap();
        assert!(!a.evicted() && b.evicted() && !c.evicted() && !d.evicted());
        c.establish();
        d.establish();
        // All established, one each: the oldest gives way.
        let e = from(&t, "10.0.0.5").unwrap();
        assert!(a.evicted() && !c.evicted() && !d.evicted());
        let s = t.stats();
        assert_eq!((s.open, s.accepted, s.refused, s.evicted, s.displaced), (3, 5, 0, 1, 1));
        e.establish();
        // c starts receiving a request: evictable again, and the first candidate.
        c.unestablish();
        let f = from(&t, "10.0.0.6").unwrap();
        assert!(c.evicted() && !d.evicted() && !e.evicted() && !f.evicted());
        // An evicted connection stays evicted.
        c.unestablish();
        assert_eq!(t.stats().open, 3);
    }

    /// The probe of issue 42: established, pinging connections from a few addresses filled
    /// the table and every new client was refused from then on.
    #[test]
    fn a_full_table_of_established_connections_gives_way_to_a_new_address() {
        let t = displacing(8, 8);
        let mut flood = Vec::new();
        for i in 0..8 {
            let c = from(&t, if i < 5 { "10.0.0.1" } else { "10.0.0.2" }).unwrap();
            c.establish();
            flood.push(c);
        }
        // A newcomer from a third address displaces the largest address's oldest.
        let w = from(&t, "10.0.0.9").unwrap();
        assert!(flood[0].evicted() && flood[1..].iter().all(|c| !c.evicted()));
        assert_eq!(t.stats().displaced, 1);
        w.establish();
        // The shares even out as newcomers arrive: 10.0.0.1 goes from 5 to 3.
        let x = from(&t, "10.0.0.9").unwrap();
        assert!(flood[1].evicted());
        x.establish();
        let y = from(&t, "10.0.0.3").unwrap();
        assert!(flood[2].evicted() && !flood[3].evicted());
        y.establish();
        // 10.0.0.1, 10.0.0.2, 10.0.0.9 and 10.0.0.3 hold 2, 3, 2 and 1: 10.0.0.2 gives way.
        let z = from(&t, "10.0.0.9").unwrap();
        assert!(flood[5].evicted(), "10.0.0.2 held the most");
        assert!(!w.evicted() && !x.evicted() && !z.evicted());
        assert_eq!(t.stats().open, 8);
    }

    #[test]
    fn trusted_connections_are_never_displaced() {
        let t = displacing(4, 4);
        let workers: Vec<Ticket> = (0..3).map(|_| from(&t, "10.0.0.1").unwrap()).collect();
        for w in &workers {
            assert!(t.trust(w.peer));
            assert!(w.is_established() && w.is_trusted());
            // A request body on a trusted connection does not make it evictable.
            w.unestablish();
            assert!(w.is_established());
        }
        let flood = from(&t, "10.0.0.2").unwrap();
        flood.establish();
        // The flood's newcomer can only displace the flood's own connection.
        let next = from(&t, "10.0.0.2").unwrap();
        assert!(flood.evicted() && !next.evicted());
        next.establish();
        // A fourth worker connection from a new address takes the flood's place...
        let w4 = from(&t, "10.0.0.3").unwrap();
        assert!(next.evicted());
        assert!(t.trust(w4.peer));
        // ...and with every place trusted, the flood is refused.
        assert!(from(&t, "10.0.0.2").is_none());
        assert!(workers.iter().all(|w| !w.evicted()));
        let s = t.stats();
        assert_eq!((s.open, s.trusted, s.displaced, s.refused), (4, 4, 2, 1));
        drop(workers);
        assert_eq!((t.stats().open, t.stats().trusted), (1, 1));
        // A connection no longer held cannot be trusted.
        assert!(!t.trust(SocketAddr::new(ip("10.0.0.7"), 1)));
    }

    #[test]
    fn without_displacement_established_connections_keep_their_place() {
        let t = Arc::new(Table::new(3, 2));
        let a = from(&t, "10.0.0.1").unwrap();
        let b = from(&t, "10.0.0.1").unwrap();
        a.establish();
        b.establish();
        assert!(from(&t, "10.0.0.1").is_none(), "a full address of established connections");
        let c = from(&t, "10.0.0.2").unwrap();
        c.establish();
        assert!(from(&t, "10.0.0.3").is_none(), "a full table of established connections");
        assert!(!a.evicted() && !b.evicted() && !c.evicted());
        let s = t.stats();
        assert_eq!((s.open, s.refused, s.evicted, s.displaced), (3, 2, 0, 0));
    }
}
