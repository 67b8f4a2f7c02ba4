//! Running independent jobs on every core: `map` hands out indices from one counter to a
//! few scoped threads and keeps each result in its index's place, so the output order never
//! depends on which thread did what. No thread pool outlives a call; no global state.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `f(0..count)` on `jobs` threads (the caller's among them); `None` only where `f`
/// panicked (a bug), which ends that thread's share without taking the others down.
pub(crate) fn map<T: Send>(
    count: usize,
    jobs: usize,
    f: impl Fn(usize) -> T + Sync,
) -> Vec<Option<T>> {
    let jobs = jobs.clamp(1, count.max(1));
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<T>>> = (0..count).map(|_| Mutex::new(None)).collect();
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                break;
            }
            let done = f(i);
            if let Some(Ok(mut slot)) = results.get(i).map(Mutex::lock) {
                *slot = Some(done);
            }
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..jobs {
            // A thread the system cannot start leaves its share to the others.
            let _ = crate::limits::thread("ply-worker").spawn_scoped(scope, work);
        }
        work();
    });
    results
        .into_iter()
        .map(|m| m.into_inner().ok().flatten())
        .collect()
}

/// The number of cores, for `jobs`.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_keep_their_order_whatever_the_threads() {
        for jobs in [1, 2, 7] {
            let out = super::map(50, jobs, |i| i * i);
            let want: Vec<Option<usize>> = (0..50).map(|i| Some(i * i)).collect();
            assert_eq!(out, want);
        }
        assert!(super::map(0, 4, |i| i).is_empty());
    }
}
