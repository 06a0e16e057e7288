//! A trace's problems as a report on the trace file itself, so that each
//! bad line is shown at its own file, line and column, not at the
//! scenario's `trace.path`.
//!
//! A trace may be far larger than the input limit, so the report's text
//! holds only the lines it shows: each bad line and its neighbours as
//! they are, every other line up to the last bad one empty (line numbers
//! stay true; the text costs one byte per skipped line). The file is read
//! a second time, bounded as the reader is, and only when it failed.

use crate::workload::trace::{Limits, TraceError, TraceSpec};
use routex::diag::{Code, Diagnostic, Report, Span};
use std::io::{BufRead, Read};
use std::path::Path;

/// The report of a trace that failed to read with `errors`.
pub(super) fn report(path: &Path, _spec: &TraceSpec, errors: &[TraceError]) -> Report {
    let last = errors.iter().map(|e| e.line).max().unwrap_or(0);
    let wanted = |n: u64| errors.iter().any(|e| e.line.abs_diff(n) <= 1);
    let mut text = String::new();
    let mut starts: Vec<(u64, usize)> = Vec::new();
    let limit = Limits::default().line_bytes;
    if let Ok(file) = std::fs::File::open(path) {
        let mut reader = std::io::BufReader::new(file);
        let mut buf = Vec::new();
        for n in 1..=last.saturating_add(1) {
            buf.clear();
            let read = BufRead::read_until(
                &mut Read::take(&mut reader, limit as u64 + 1),
                b'\n',
                &mut buf,
            );
            if !matches!(read, Ok(k) if k > 0) {
                break;
            }
            if n > 1 {
                text.push('\n');
            }
            starts.push((n, text.len()));
            let whole = buf.len() <= limit || buf.last() == Some(&b'\n');
            if wanted(n) && whole {
                let line = String::from_utf8_lossy(&buf);
                text.push_str(line.trim_end_matches(['\n', '\r']));
            }
            if !whole {
                // The rest of an over-long line is not read: stop here.
                break;
            }
        }
    }
    let start_of = |line: u64| {
        starts
            .iter()
            .find(|(n, _)| *n == line)
            .map_or(text.len(), |(_, s)| *s)
    };
    let end_of = |start: usize| text[start..].find('\n').map_or(text.len(), |i| start + i);
    let diagnostics = errors
        .iter()
        .map(|e| {
            let start = start_of(e.line);
            let end = end_of(start);
            let line = &text[start..end];
            let span = match e.column {
                Some(c) if c >= 1 && c <= line.len() => {
                    let at = start + c - 1;
                    let mut end = (at + e.width.max(1)).min(start + line.len());
                    while !text.is_char_boundary(end) {
                        end += 1;
                    }
                    Span::new(at, end)
                }
                _ => {
                    let lead = line.len() - line.trim_start().len();
                    Span::new(start + lead, start + line.trim_end().len())
                }
            };
            Diagnostic::new(Code::InvalidTrace, span, e.message.clone())
        })
        .collect();
    let mut report = Report::new(path.display().to_string(), text);
    report.diagnostics = diagnostics;
    report
}
