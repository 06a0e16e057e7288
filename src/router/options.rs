//! Router settings: cache bounds, the clock and the expression compiler.

use super::clock::{Clock, SystemClock};
use crate::diag::Diagnostic;
use crate::ir::{Definition, RouteTable};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// stargate's bound on targets with a cached expression.
pub const DEFAULT_CACHE_CAPACITY: usize = 16_384;
/// stargate's idle expiry of a cached expression.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// Compiles an `x-routing-method` value for a model against a table; `Err`
/// holds the errors, the first being stargate's (the one the router
/// answers), as every compile function of routex returns them. By default
/// [`crate::check::compile_header_value`] (header form only, as stargate
/// reads the header); tools that also take the call form, such as
/// `routex decide`, use [`crate::check::compile_request_expression`].
pub type Compiler =
    Arc<dyn Fn(&RouteTable, &str, &str) -> Result<Definition, Vec<Diagnostic>> + Send + Sync>;

/// A router's settings; [`Default`] gives stargate's cache bounds, the
/// system clock and the header-form compiler.
#[derive(Clone)]
pub struct RouterOptions {
    /// Targets with a cached expression; beyond it the least recently used
    /// entry is evicted (the entry just built is always kept).
    pub cache_capacity: usize,
    /// An entry not hit for this long expires.
    pub idle_timeout: Duration,
    /// The time source of idle expiry (default: the system clock; tests
    /// and the simulator pass a [`super::ManualClock`]).
    pub clock: Arc<dyn Clock>,
    /// Compiles `x-routing-method` values with parameters (default
    /// [`crate::check::compile_header_value`]).
    pub compiler: Compiler,
    /// Whether `compiler` reads the call form, so that a value with `(` and
    /// no `;` is an expression. Off by default: stargate reads such a value
    /// as a method name (an unknown one).
    pub call_form: bool,
}

impl Default for RouterOptions {
    fn default() -> Self {
        RouterOptions {
            cache_capacity: DEFAULT_CACHE_CAPACITY,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            clock: Arc::new(SystemClock::new()),
            compiler: Arc::new(crate::check::compile_header_value),
            call_form: false,
        }
    }
}

impl RouterOptions {
    /// These options with room for `capacity` cached targets (default
    /// [`DEFAULT_CACHE_CAPACITY`]).
    pub fn with_cache_capacity(mut self, capacity: usize) -> Self {
        self.cache_capacity = capacity;
        self
    }

    /// These options with entries expiring after `idle` without a hit
    /// (default [`DEFAULT_IDLE_TIMEOUT`], 15 minutes).
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
        self
    }

    /// These options with `clock` as the time source.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// A compiler of header values only (the call form stays off).
    pub fn with_compiler(mut self, compiler: Compiler) -> Self {
        self.compiler = compiler;
        self
    }

    /// A compiler that also reads the call form, e.g.
    /// [`crate::check::compile_request_expression`].
    pub fn with_call_form_compiler(mut self, compiler: Compiler) -> Self {
        self.compiler = compiler;
        self.call_form = true;
        self
    }
}

impl fmt::Debug for RouterOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RouterOptions")
            .field("cache_capacity", &self.cache_capacity)
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
}
