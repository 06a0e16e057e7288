//! Ctrl-C for the long simulator commands: the first SIGINT sets a flag
//! that the sweeps read between runs (no new run starts, finished runs are
//! written, marked incomplete, and the command exits 130); a second one
//! ends the process at once, as an unhandled SIGINT would.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

static FLAG: AtomicBool = AtomicBool::new(false);
static INSTALLED: OnceLock<()> = OnceLock::new();

/// Installs the handler (once) and returns the flag it sets.
pub fn flag() -> &'static AtomicBool {
    INSTALLED.get_or_init(install);
    &FLAG
}

/// Whether a SIGINT arrived since [`flag`] installed the handler.
pub fn interrupted() -> bool {
    FLAG.load(Ordering::SeqCst)
}

#[cfg(unix)]
fn install() {
    // The action only touches atomics and `_exit`, which are
    // async-signal-safe.
    let action = || {
        if FLAG.swap(true, Ordering::SeqCst) {
            // SAFETY: `_exit` is async-signal-safe.
            unsafe { libc::_exit(130) };
        }
    };
    // SAFETY: the action is async-signal-safe (see above).
    let _ = unsafe { signal_hook_registry::register(libc::SIGINT, action) };
}

#[cfg(not(unix))]
fn install() {}
