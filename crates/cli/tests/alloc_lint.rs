//! Guards linear cost of `lint` without timing anything: a counting global
//! allocator measures allocations and bytes of checking and rendering
//! generated inputs at two sizes, and the cost per item must not grow with
//! the input (a quadratic path, such as a message listing every key cloned
//! into every diagnostic, or a renderer re-reading the text per
//! diagnostic, multiplies it by the size ratio).

// A counting global allocator implements `GlobalAlloc`, an unsafe trait.
#![allow(unsafe_code)]

#[path = "support/lint_inputs.rs"]
mod inputs;

use routex::config::{import, load_table};
use routex::render::{diff as render_diff, github, json, sarif};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static COUNTS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

fn count(bytes: usize) {
    let _ = COUNTS.try_with(|c| {
        let (n, b) = c.get();
        c.set((n + 1, b + bytes as u64));
    });
}

// SAFETY: defers to the system allocator; only counts calls and bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// (allocations, bytes) of `f`, on this thread.
fn measure(f: impl FnOnce()) -> (u64, u64) {
    let before = COUNTS.with(Cell::get);
    f();
    let after = COUNTS.with(Cell::get);
    (after.0 - before.0, after.1 - before.1)
}

/// Runs `work` on inputs of `small` and `4 * small` items and checks that
/// allocations and bytes per item stay within 25% (growth by doubling of
/// buffers differs a little between sizes; a quadratic path gives 4x).
fn per_item_constant(
    what: &str,
    small: usize,
    make: impl Fn(usize) -> String,
    work: impl Fn(&str),
) {
    let per_item = |n: usize| {
        let text = make(n);
        let (allocations, bytes) = measure(|| work(&text));
        (allocations as f64 / n as f64, bytes as f64 / n as f64)
    };
    let (a1, b1) = per_item(small);
    let (a4, b4) = per_item(4 * small);
    assert!(
        a4 <= a1 * 1.25,
        "{what}: {a1:.1} allocations per item at {small}, {a4:.1} at {}",
        4 * small
    );
    assert!(
        b4 <= b1 * 1.25,
        "{what}: {b1:.0} bytes per item at {small}, {b4:.0} at {}",
        4 * small
    );
}

fn lint_all_formats(name: &str, text: &str) {
    let reports = [load_table(name, text).1];
    let _ = json::render(&reports);
    let _ = github::render(&reports);
    let _ = sarif::render(&reports);
    let _ = routex_cli::human::render(&reports, routex_cli::human::Style::Plain);
}

#[test]
fn models_with_one_error_each_cost_the_same_per_model() {
    per_item_constant(
        "lb-config.json with errors",
        1_000,
        |n| inputs::lb_config(n, true),
        |t| lint_all_formats("lb-config.json", t),
    );
}

#[test]
fn clean_models_cost_the_same_per_model() {
    per_item_constant(
        "clean lb-config.json",
        1_000,
        |n| inputs::lb_config(n, false),
        |t| lint_all_formats("lb-config.json", t),
    );
    per_item_constant(
        "import",
        1_000,
        |n| inputs::lb_config(n, false),
        |t| {
            let _ = import("lb-config.json", t);
        },
    );
}

#[test]
fn unknown_keys_in_one_entry_cost_the_same_per_key() {
    per_item_constant("unknown keys", 2_000, inputs::unknown_keys, |t| {
        lint_all_formats("lb-config.json", t)
    });
}

#[test]
fn route_file_errors_cost_the_same_per_line() {
    per_item_constant(
        "route file with errors",
        1_000,
        |n| inputs::route_file(n, true),
        |t| lint_all_formats("fleet.routes", t),
    );
    per_item_constant(
        "clean route file",
        1_000,
        |n| inputs::route_file(n, false),
        |t| lint_all_formats("fleet.routes", t),
    );
}

/// `routex diff` of two configurations in which every model differs:
/// loading both, comparing, and every output format.
#[test]
fn diff_costs_the_same_per_model() {
    per_item_constant(
        "diff",
        1_000,
        |n| {
            let (old, new) = inputs::lb_config_pair(n);
            format!("{old}\u{0}{new}")
        },
        |both| {
            let (old, new) = both.split_once('\u{0}').unwrap_or_default();
            let (Some(a), Some(b)) = (load_table("old.json", old).0, load_table("new.json", new).0)
            else {
                panic!("the generated pair loads");
            };
            let diff = routex::diff::diff_tables(&a, &b);
            assert_eq!(diff.sets.len(), 1 + a.models.len() + a.models.len() / 4);
            let _ = render_diff::render_human(&diff, "old.json", "new.json");
            let _ = render_diff::render_json(&diff, "old.json", "new.json");
            let at = routex::diff::locate("new.json", new);
            let _ = render_diff::render_github(&diff, "new.json", new, &at);
        },
    );
}
