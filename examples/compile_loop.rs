//! Compiles the `benches/compile.rs` expression N times in a loop, for
//! instruction counts that the machine's noise does not move
//! (docs/performance.md, Compile):
//!
//! ```sh
//! cargo build --release -p routex --example compile_loop
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/compile_loop check-header 4000
//! ```
//!
//! Run it with N and 2N: the difference of the two totals divided by N is
//! the cost of one operation, start-up excluded.

use std::hint::black_box;

const HEADER: &str = "pulsar-wait-and-widen;seed=v1;cache_affinity_wait_ms=300;\
band_widen_interval_ms=300;max_queue_time_floor_ms=500;max_queue_time_ceil_ms=2000";

const CALL: &str = "pulsar-wait-and-widen(seed=v1, cache_affinity_wait_ms=300, \
band_widen_interval_ms=300, max_queue_time_floor_ms=500, max_queue_time_ceil_ms=2000)";

const OPERATIONS: &str = "sfv | parse-header | parse-call | check-header | check-call";

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(operation), Some(n)) = (args.next(), args.next().and_then(|n| n.parse().ok())) else {
        eprintln!("usage: compile_loop OPERATION N   (OPERATION: {OPERATIONS})");
        std::process::exit(2);
    };
    let run: fn() -> bool = match operation.as_str() {
        "sfv" => || sfv::Parser::parse_item(black_box(HEADER.as_bytes())).is_ok(),
        "parse-header" => || routex::syntax::parse_header(black_box(HEADER)).is_ok(),
        "parse-call" => || routex::syntax::parse_call(black_box(CALL)).is_ok(),
        "check-header" => || {
            let (compiled, _) =
                routex::check::check_expression("arg:1", black_box(HEADER), None, None);
            compiled.is_some()
        },
        "check-call" => || {
            let (compiled, _) =
                routex::check::check_expression("arg:1", black_box(CALL), None, None);
            compiled.is_some()
        },
        other => {
            eprintln!("unknown operation {other:?} ({OPERATIONS})");
            std::process::exit(2);
        }
    };
    let n: usize = n;
    let compiled = (0..n).filter(|_| black_box(run())).count();
    if compiled != n {
        eprintln!("{} of {n} compiles failed", n - compiled);
        std::process::exit(1);
    }
}
