//! The crate's one lock-poisoning policy. hypermem never treats a poisoned lock as a
//! failure of its own: every structure behind a lock is either rebuilt from durable state
//! (caches, indexes, mirrors of the ledger) or changed by steps that each leave it
//! consistent (a vector is appended, then published), so the guard a panicking holder
//! left behind is still usable. Every lock is therefore taken through these helpers,
//! which recover the guard; a panic in one request never turns every later request into
//! a panic.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locking that recovers from poisoning (see the module documentation).
pub(crate) trait Recover<T: ?Sized> {
    /// The guard, whatever a panicking holder left behind.
    fn locked(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> Recover<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Read/write locking that recovers from poisoning (see the module documentation).
pub(crate) trait RecoverRw<T: ?Sized> {
    /// A read guard, whatever a panicking writer left behind.
    fn reading(&self) -> RwLockReadGuard<'_, T>;
    /// A write guard, whatever a panicking writer left behind.
    fn writing(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T: ?Sized> RecoverRw<T> for RwLock<T> {
    fn reading(&self) -> RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn writing(&self) -> RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(PoisonError::into_inner)
    }
}
