//! The point of no return of one operation: a deadline checked before its first write.
//!
//! A server answers a request that outlives its time with a retryable refusal. That is
//! only honest when the operation has not written and never will: a client that retries
//! as told must not store the same thing twice. So a caller with a deadline runs the
//! operation under a [`Deadline`] ([`Deadline::run`]); the ledger claims it before its
//! first write transaction ([`claim`]), and from then on the operation completes and is
//! acknowledged however late. When the caller's time is up it [`abandon`](Deadline::abandon)s
//! the deadline: that succeeds only if no write began, and then none ever will (the
//! operation's first write is refused with `timeout`); otherwise the caller waits for the
//! outcome and answers it.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

use super::{LedgerError, LedgerResult};

const PENDING: u8 = 0;
const WRITING: u8 = 1;
const ABANDONED: u8 = 2;

/// One operation's deadline and whether it has begun to write.
#[derive(Debug)]
pub struct Deadline {
    at: Instant,
    state: AtomicU8,
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Deadline>>> = const { RefCell::new(None) };
}

impl Deadline {
    /// A deadline at `at`, nothing written yet.
    pub fn new(at: Instant) -> Arc<Self> {
        Arc::new(Self {
            at,
            state: AtomicU8::new(PENDING),
        })
    }

    /// Runs `f` on this thread under `deadline`: every ledger write it makes claims it first.
    pub fn run<R>(deadline: &Arc<Self>, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<Arc<Deadline>>);
        impl Drop for Restore {
            fn drop(&mut self) {
                CURRENT.with(|c| *c.borrow_mut() = self.0.take());
            }
        }
        let _restore = Restore(CURRENT.with(|c| c.borrow_mut().replace(deadline.clone())));
        f()
    }

    /// The deadline the operation on this thread runs under, to carry to another thread
    /// that writes for it ([`run_with`](Self::run_with)): a thread-local does not follow
    /// work handed to a pool.
    pub fn current() -> Option<Arc<Self>> {
        CURRENT.with(|c| c.borrow().clone())
    }

    /// Runs `f` under `deadline` when there is one ([`current`](Self::current) of the
    /// thread that handed `f` over), else as it is.
    pub fn run_with<R>(deadline: Option<&Arc<Self>>, f: impl FnOnce() -> R) -> R {
        match deadline {
            Some(d) => Self::run(d, f),
            None => f(),
        }
    }

    /// The caller's time is up: true when nothing was written and nothing will be (the
    /// operation's next write is refused), false when a write has begun (its outcome is
    /// the answer, however late).
    pub fn abandon(&self) -> bool {
        match self
            .state
            .compare_exchange(PENDING, ABANDONED, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => true,
            Err(state) => state == ABANDONED,
        }
    }

    /// Whether the operation was abandoned (it should stop: its answer was given).
    pub fn abandoned(&self) -> bool {
        self.state.load(Ordering::Acquire) == ABANDONED
    }

    /// Claims the right to write: true when a write began before (the operation is past
    /// its point of no return) or the deadline has not passed; false when it was abandoned
    /// or has passed (then it is abandoned, and stays so).
    fn claim(&self) -> bool {
        if Instant::now() >= self.at {
            let _ = self.state.compare_exchange(
                PENDING,
                ABANDONED,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
        }
        match self
            .state
            .compare_exchange(PENDING, WRITING, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => true,
            Err(state) => state == WRITING,
        }
    }
}

/// Between the steps of a long read: a refusal (`timeout`) when the operation running on
/// this thread was abandoned by its caller (its answer was given: the rest of the work
/// would be thrown away).
///
/// # Errors
/// [`LedgerError::Refused`] with the reason `timeout`.
pub fn go_on() -> LedgerResult<()> {
    if CURRENT.with(|c| c.borrow().as_ref().is_some_and(|d| d.abandoned())) {
        return Err(timed_out());
    }
    Ok(())
}

/// The refusal of an operation whose time ran out before it wrote anything.
pub(crate) fn timed_out() -> LedgerError {
    LedgerError::Refused {
        reason: crate::base::Reason::Timeout,
        message: "the operation's time ran out before it wrote anything; nothing was stored, and a retry is safe".into(),
    }
}

/// Before a write transaction: whether the operation running on this thread may write
/// (always, outside [`Deadline::run`]).
pub(crate) fn claim() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_none_or(|d| d.claim()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_write_begun_is_never_abandoned_and_an_abandoned_operation_never_writes() {
        let later = Instant::now() + Duration::from_secs(60);
        // Abandoned first: no write may begin.
        let d = Deadline::new(later);
        assert!(d.abandon());
        assert!(!Deadline::run(&d, claim));
        assert!(d.abandon(), "abandoning twice says the same");
        // A write began: every later write of it may go on, and abandoning fails.
        let d = Deadline::new(later);
        assert!(Deadline::run(&d, claim));
        assert!(!d.abandon());
        assert!(Deadline::run(&d, claim));
        // Past its time, the first write is refused and the operation is abandoned.
        let d = Deadline::new(Instant::now());
        assert!(!Deadline::run(&d, claim));
        assert!(d.abandoned());
        // Outside a deadline, and after one (restored), writes go on.
        assert!(claim());
        let nested = Deadline::new(later);
        Deadline::run(&nested, || {
            assert!(!Deadline::run(&d, claim));
            assert!(claim(), "the outer deadline is back");
        });
        assert!(claim());
        assert!(go_on().is_ok());
        let gone = Deadline::new(later);
        gone.abandon();
        assert!(Deadline::run(&gone, go_on).is_err());
        // Carried to another thread, it holds there.
        let d = Deadline::new(Instant::now());
        let carried = Deadline::run(&d, Deadline::current);
        let there = std::thread::spawn(move || Deadline::run_with(carried.as_ref(), claim));
        assert!(!there.join().unwrap());
        assert!(Deadline::run_with(None, claim));
    }
}
