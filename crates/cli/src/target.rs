//! `--stargate TARGET`: the stargate state every command checks and
//! decides for (docs/stargate.md 0.1). Set once per process from the
//! command line, like the colour choice; read by each command.

use routex::ir::Target;
use std::sync::atomic::{AtomicU8, Ordering};

/// 0: not given; else 1 + the target's position in `Target::ALL`.
static CHOSEN: AtomicU8 = AtomicU8::new(0);

/// Parses `--stargate`'s value.
pub fn parse(value: &str) -> Result<Target, String> {
    value.parse()
}

/// Records the command line's choice.
pub fn set(target: Option<Target>) {
    let code = target.map_or(0, |t| t as u8 + 1);
    CHOSEN.store(code, Ordering::Relaxed);
}

/// The target given on the command line, if any.
pub fn chosen() -> Option<Target> {
    match CHOSEN.load(Ordering::Relaxed) {
        0 => None,
        code => Target::ALL.get(usize::from(code - 1)).copied(),
    }
}

/// The target commands follow: the command line's, else the newest.
pub fn get() -> Target {
    chosen().unwrap_or(Target::NEWEST)
}
