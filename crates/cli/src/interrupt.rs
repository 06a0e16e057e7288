//! Ctrl-C for the long simulator commands: the first SIGINT sets a flag
//! that the sweeps read between runs (no new run starts, finished runs are
//! written, marked incomplete, and the command exits 130); a second one
//! ends the process at once with 130, as an unhandled SIGINT would.
//!
//! The listener is tokio's (no unsafe code here): a current-thread runtime
//! on a thread of its own. It is installed only by the commands that read
//! the flag, so every other command keeps the default Ctrl-C.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

static FLAG: AtomicBool = AtomicBool::new(false);
static INSTALLED: OnceLock<()> = OnceLock::new();

/// Installs the listener (once) and returns the flag it sets. The
/// listener is registered before this returns, so a SIGINT after the call
/// is never the default one.
pub fn flag() -> &'static AtomicBool {
    INSTALLED.get_or_init(install);
    &FLAG
}

/// Whether a SIGINT arrived since [`flag`] installed the listener.
pub fn interrupted() -> bool {
    FLAG.load(Ordering::SeqCst)
}

fn on_signal() {
    if FLAG.swap(true, Ordering::SeqCst) {
        std::process::exit(130);
    }
}

#[cfg(unix)]
fn install() {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    // Registered here, on the calling thread, inside the runtime.
    let Ok(mut sigint) = rt.block_on(async { signal(SignalKind::interrupt()) }) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("routex-sigint".into())
        .spawn(move || {
            rt.block_on(async {
                while sigint.recv().await.is_some() {
                    on_signal();
                }
            });
        });
}

#[cfg(not(unix))]
fn install() {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("routex-sigint".into())
        .spawn(move || {
            rt.block_on(async {
                while tokio::signal::ctrl_c().await.is_ok() {
                    on_signal();
                }
            });
        });
}
