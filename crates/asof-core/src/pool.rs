//! Work spread over threads one index at a time: the many-stores jobs (a
//! fleet's export, `asof gen --incidents`, the fleet tests) each run the same
//! work on items of very different sizes, so a worker takes the next index
//! when it is free instead of a fixed share.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Runs `work(i)` for every `i` in `0..n` on `jobs` threads (at least one,
/// at most `n`). `each` sees every result as it comes in, on the calling
/// thread. Once a `work` fails, no index not yet started is started (those
/// started finish). Returns the results by index: `None` for an index never
/// started.
///
/// A panic in `work` is raised again on the calling thread.
pub fn map<T: Send, E: Send>(
    n: usize,
    jobs: usize,
    work: impl Fn(usize) -> Result<T, E> + Sync,
    mut each: impl FnMut(usize, &Result<T, E>),
) -> Vec<Option<Result<T, E>>> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let mut results: Vec<Option<Result<T, E>>> = (0..n).map(|_| None).collect();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs.clamp(1, n.max(1)))
            .map(|_| {
                let send = send.clone();
                let (next, failed, work) = (&next, &failed, &work);
                scope.spawn(move || {
                    while !failed.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            break;
                        }
                        let result = work(i);
                        if result.is_err() {
                            failed.store(true, Ordering::Relaxed);
                        }
                        if send.send((i, result)).is_err() {
                            break;
                        }
                    }
                })
            })
            .collect();
        drop(send);
        for (i, result) in receive {
            each(i, &result);
            results[i] = Some(result);
        }
        for worker in workers {
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every index runs once, its result in its place, whatever the number
    /// of threads; `each` sees them all.
    #[test]
    fn every_index_runs_once_and_lands_in_its_place() {
        for jobs in [0, 1, 2, 7, 100] {
            let mut seen = Vec::new();
            let results = map(50, jobs, |i| Ok::<_, ()>(i * i), |i, r| seen.push((i, *r)));
            let expected: Vec<_> = (0..50).map(|i| Some(Ok(i * i))).collect();
            assert_eq!(results, expected, "{jobs} jobs");
            seen.sort();
            assert_eq!(seen.len(), 50);
        }
        assert!(map(0, 4, Ok::<_, ()>, |_, _| {}).is_empty());
    }

    /// Once a work fails, no index not yet started is started: on one
    /// thread, nothing after the failing index runs.
    #[test]
    fn a_failure_starts_nothing_more() {
        let ran = AtomicUsize::new(0);
        let results = map(
            100,
            1,
            |i| {
                ran.fetch_add(1, Ordering::Relaxed);
                if i == 3 { Err(i) } else { Ok(i) }
            },
            |_, _| {},
        );
        assert_eq!(ran.load(Ordering::Relaxed), 4);
        assert_eq!(results[3], Some(Err(3)));
        assert!(results[..3].iter().all(|r| matches!(r, Some(Ok(_)))));
        assert!(results[4..].iter().all(Option::is_none));
        // Every index taken before the failing one finishes.
        let results = map(100, 4, |i| if i == 10 { Err(i) } else { Ok(i) }, |_, _| {});
        assert_eq!(results[10], Some(Err(10)));
        assert!(results[..10].iter().all(|r| matches!(r, Some(Ok(_)))));
    }

    /// A panic in the work reaches the caller.
    #[test]
    fn a_panic_reaches_the_caller() {
        let caught = std::panic::catch_unwind(|| {
            map(
                4,
                2,
                |i| {
                    assert!(i != 2, "boom");
                    Ok::<_, ()>(i)
                },
                |_, _| {},
            );
        });
        assert!(caught.is_err());
    }
}
