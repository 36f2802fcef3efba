//! Time sources, injected so tests control time (LTP decay, validity windows, due dates).

use std::sync::atomic::{AtomicU64, Ordering};

/// A source of time in seconds (injected so tests control it).
pub trait Clock: Send + Sync {
    /// Seconds since an arbitrary fixed origin.
    fn now(&self) -> f64;
}

/// Wall-clock time (seconds since the Unix epoch).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> f64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    }
}

/// A clock that only moves when told to (tests, simulations).
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// A clock at `t` seconds.
    pub fn new(t: f64) -> Self {
        Self(AtomicU64::new(t.to_bits()))
    }

    /// Moves the clock to `t`.
    pub fn set(&self, t: f64) {
        self.0.store(t.to_bits(), Ordering::Release);
    }

    /// Moves the clock forward by `dt` seconds.
    pub fn advance(&self, dt: f64) {
        self.set(self.now() + dt);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Acquire))
    }
}

/// Milliseconds since the Unix epoch on `clock` (the ledger's timestamp unit).
pub fn now_ms(clock: &dyn Clock) -> i64 {
    (clock.now() * 1000.0).round() as i64
}
