//! Where the CPU went, per thread, from `/proc/self/task/*/schedstat` (run time and run-queue
//! wait in ns; `stat` ticks where that file is missing), so Linux only. Threads are attributed
//! to an [`Owner`] by their names.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;

/// Who a thread belongs to, by its name.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Owner {
    /// Coordinator runtime: gRPC, protobuf decoding, replay validation, leases.
    CoordRuntime,
    /// Coordinator writer thread: redb group commits.
    CoordWriter,
    /// Coordinator compactor thread: Parquet files.
    CoordCompactor,
    /// Simulated workers of `bench ingest`.
    Clients,
    /// The worker's runtime: gRPC calls, spool reads, leasing, heartbeats.
    WorkerRuntime,
    /// The worker's self-play slots: search, plus writing each finished game to the spool.
    SelfPlay,
    /// This command's own threads (main, sampler).
    Bench,
}

pub(super) fn owner(name: &str) -> Owner {
    // Thread names are cut to 15 bytes in /proc.
    if name.starts_with("zp-coord") {
        Owner::CoordRuntime
    } else if name.starts_with("coordinator-wri") {
        Owner::CoordWriter
    } else if name.starts_with("coordinator-com") {
        Owner::CoordCompactor
    } else if name.starts_with("zp-bench") {
        Owner::Clients
    } else if name.starts_with("zp-worker") {
        Owner::WorkerRuntime
    } else if name.starts_with("selfplay-") {
        Owner::SelfPlay
    } else {
        Owner::Bench
    }
}

/// Clock ticks per second of `/proc/*/stat` (USER_HZ; 100 on every Linux we run on).
pub(super) const TICKS: f64 = 100.0;

/// User + system CPU seconds from a `/proc/.../stat` line.
pub(super) fn stat_cpu(stat: &str) -> Option<(String, f64)> {
    let (head, rest) = stat.rsplit_once(')')?;
    let name = head.split_once('(')?.1.to_string();
    let f: Vec<&str> = rest.split_whitespace().collect();
    let t = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok());
    // utime and stime are fields 14 and 15: 12th and 13th after the name.
    Some((name, (t(11)? + t(12)?) / TICKS))
}

/// Busy CPU seconds of the whole machine, all cores and processes (from `/proc/stat`).
pub(super) fn machine_cpu() -> f64 {
    let Ok(s) = std::fs::read_to_string("/proc/stat") else { return 0.0 };
    let Some(line) = s.lines().next() else { return 0.0 };
    // cpu user nice system idle iowait irq softirq steal ...: everything but idle and iowait.
    let f: Vec<f64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    f.iter().enumerate().filter(|(i, _)| *i != 3 && *i != 4).take(6).map(|(_, v)| v).sum::<f64>() / TICKS
}

pub(super) fn process_cpu() -> f64 {
    std::fs::read_to_string("/proc/self/stat").ok().and_then(|s| stat_cpu(&s)).map_or(0.0, |x| x.1)
}

/// One thread's reading.
#[derive(Clone, Debug)]
pub(super) struct ThreadCpu {
    pub(super) name: String,
    /// CPU seconds (scheduler run time, ns resolution; 10 ms ticks where schedstat is missing).
    pub(super) cpu: f64,
    /// Seconds spent runnable but waiting for a core (0 where schedstat is missing).
    pub(super) wait: f64,
}

pub(super) type Table = HashMap<u32, ThreadCpu>;

/// `run_ns wait_ns slices` from a `schedstat` file, in seconds.
pub(super) fn schedstat(text: &str) -> Option<(f64, f64)> {
    let mut f = text.split_whitespace().map(|x| x.parse::<u64>().ok());
    Some((f.next()?? as f64 / 1e9, f.next()?? as f64 / 1e9))
}

/// Every live thread of this process.
pub(super) fn threads() -> Table {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else { return out };
    for e in dir.flatten() {
        let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let Some((name, ticks)) =
            std::fs::read_to_string(e.path().join("stat")).ok().and_then(|s| stat_cpu(&s))
        else {
            continue;
        };
        let (cpu, wait) = std::fs::read_to_string(e.path().join("schedstat"))
            .ok()
            .and_then(|s| schedstat(&s))
            .unwrap_or((ticks, 0.0));
        out.insert(tid, ThreadCpu { name, cpu, wait });
    }
    out
}

/// CPU and run-queue wait seconds per owner between two thread tables (threads that are new
/// count from zero; threads that vanished count up to their last reading in `after`).
pub(super) fn cpu_delta(before: &Table, after: &Table) -> BTreeMap<Owner, (f64, f64)> {
    let mut out = BTreeMap::new();
    for (tid, t) in after {
        let (cpu0, wait0) = before.get(tid).map_or((0.0, 0.0), |b| (b.cpu, b.wait));
        let e = out.entry(owner(&t.name)).or_insert((0.0, 0.0));
        e.0 += t.cpu - cpu0;
        e.1 += t.wait - wait0;
    }
    out
}

/// Reads the thread table every 50 ms and keeps each thread's last reading, so threads that
/// exit (the worker's self-play slots) keep most of their CPU in the tally.
pub(super) struct Sampler {
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Table>>,
    handle: std::thread::JoinHandle<()>,
}

impl Sampler {
    pub(super) fn start() -> Result<Sampler> {
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(threads()));
        let handle = {
            let (stop, seen) = (stop.clone(), seen.clone());
            std::thread::Builder::new().name("bench-sampler".into()).spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let now = threads();
                    seen.lock().expect("not poisoned").extend(now);
                    std::thread::sleep(Duration::from_millis(50));
                }
            })?
        };
        Ok(Sampler { stop, seen, handle })
    }

    pub(super) fn finish(self) -> Table {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.handle.join();
        let mut seen = std::mem::take(&mut *self.seen.lock().expect("not poisoned"));
        seen.extend(threads());
        seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_parse() {
        let line = "123 (coordinator-wri) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0";
        assert_eq!(stat_cpu(line), Some(("coordinator-wri".into(), 3.0)));
        assert_eq!(owner("selfplay-1"), Owner::SelfPlay);
        assert_eq!(owner("zp-coord"), Owner::CoordRuntime);
        assert!(stat_cpu("garbage").is_none());
    }
}
