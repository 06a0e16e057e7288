//! Route files: the whole-file grammar for the common, valid case, and a
//! piecewise driver that reports every syntax error it can. After an error
//! it resynchronises at the next item keyword at the start of a line
//! (`default`, `allow`, `model`) or after a closing `}`, and keeps the items
//! that parsed.

use super::ast::{Allow, Item, RouteFile};
use super::grammar::{RoutexParser, Rule};
use super::lexical::{keyword_at, next_sync, skip_trivia, Sync};
use super::{build, errors, names};
use crate::diag::{Code, Diagnostic, Span};
use pest::iterators::Pair;
use pest::Parser;

/// A byte order mark is reported and read as blanks, so the rest of the
/// file is still checked (spans stay those of the original text).
pub(crate) fn parse(text: &str) -> (RouteFile, Vec<Diagnostic>) {
    match text.strip_prefix('\u{feff}') {
        Some(rest) => {
            let (file, mut diags) = parse_text(&format!("   {rest}"));
            diags.insert(0, byte_order_mark());
            (file, diags)
        }
        None => parse_text(text),
    }
}

/// The error for a leading U+FEFF.
pub(crate) fn byte_order_mark() -> Diagnostic {
    Diagnostic::new(
        Code::SyntaxError,
        Span::new(0, '\u{feff}'.len_utf8()),
        "the file starts with a UTF-8 byte order mark (U+FEFF)",
    )
    .with_help("save the file as UTF-8 without a byte order mark")
}

fn parse_text(text: &str) -> (RouteFile, Vec<Diagnostic>) {
    let (items, mut diags) = match RoutexParser::parse(Rule::route_file, text) {
        Ok(mut pairs) => {
            let items = pairs
                .next()
                .map(|file| {
                    file.into_inner()
                        .filter_map(|p| build::item(p, 0))
                        .collect()
                })
                .unwrap_or_default();
            (items, Vec::new())
        }
        Err(err) => {
            let mut r = Recovery {
                text,
                items: Vec::new(),
                diags: Vec::new(),
            };
            r.run();
            if r.diags.is_empty() {
                // The driver must agree with the grammar; never lose the error.
                r.diags
                    .push(errors::from_pest(&err, text, 0, Code::SyntaxError));
            }
            (r.items, r.diags)
        }
    };
    for item in &items {
        for expr in item_exprs(item) {
            diags.extend(names::check(expr));
        }
    }
    diags.sort_by_key(|d| d.span.start);
    (RouteFile { items }, diags)
}

pub(crate) fn item_span(item: &Item) -> Span {
    match item {
        Item::Default { span, .. } | Item::Model { span, .. } => *span,
        Item::Allow(a) => a.span,
    }
}

fn item_exprs(item: &Item) -> Vec<&super::ast::Expr> {
    match item {
        Item::Default { expr, .. } => vec![expr],
        Item::Allow(a) => vec![&a.expr],
        Item::Model { expr, allows, .. } => std::iter::once(expr)
            .chain(allows.iter().map(|a| &a.expr))
            .collect(),
    }
}

struct Recovery<'a> {
    text: &'a str,
    items: Vec<Item>,
    diags: Vec<Diagnostic>,
}

/// How a model block ended.
enum BlockEnd {
    /// After its `}` (or at the end of the file).
    Closed(usize),
    /// Not closed; the top level resumes here.
    Resume(usize),
}

impl<'a> Recovery<'a> {
    fn run(&mut self) {
        let mut pos = 0;
        loop {
            pos = skip_trivia(self.text, pos);
            if pos >= self.text.len() {
                return;
            }
            pos = match keyword_at(self.text, pos) {
                Some("default") => match self.piece(pos, Rule::default_at) {
                    Ok((pair, end)) => {
                        self.items.extend(build::default_item(pair, pos));
                        end
                    }
                    Err(at) => self.resync_top(at),
                },
                Some("allow") => match self.piece(pos, Rule::allow_at) {
                    Ok((pair, end)) => {
                        self.items.extend(build::allow(pair, pos).map(Item::Allow));
                        end
                    }
                    Err(at) => self.resync_top(at),
                },
                Some(_) => self.model(pos),
                None => {
                    self.unexpected(pos, "`default`, `allow` or `model`");
                    self.resync_top(pos)
                }
            };
        }
    }

    /// A model item: head, then an optional block.
    fn model(&mut self, start: usize) -> usize {
        let head = match self.piece(start, Rule::model_head_at) {
            Ok((pair, end)) => build::model_head(pair, start).map(|h| (h, end)),
            Err(at) => {
                // Still walk into the block of a broken head to report its errors.
                return match next_sync(self.text, at, true) {
                    Sync::Open(open) => match self.block(open).0 {
                        BlockEnd::Closed(p) | BlockEnd::Resume(p) => p,
                    },
                    other => self.sync_pos(other),
                };
            }
        };
        let Some(((id, expr), head_end)) = head else {
            return self.text.len();
        };
        let next = skip_trivia(self.text, head_end);
        let (allows, end, resume) = if self.text[next..].starts_with('{') {
            match self.block(next) {
                (BlockEnd::Closed(p), allows) => (allows, p, p),
                (BlockEnd::Resume(p), allows) => {
                    let end = head_end.max(last_end(&allows));
                    (allows, end, p)
                }
            }
        } else {
            (Vec::new(), head_end, head_end)
        };
        self.items.push(Item::Model {
            id,
            expr,
            allows,
            span: Span::new(start, end),
        });
        resume
    }

    /// The allows of the block whose `{` is at `open`.
    fn block(&mut self, open: usize) -> (BlockEnd, Vec<Allow>) {
        let mut allows = Vec::new();
        let mut pos = open + 1;
        loop {
            pos = skip_trivia(self.text, pos);
            if pos >= self.text.len() {
                let d = Diagnostic::new(
                    Code::SyntaxError,
                    Span::new(open, open + 1),
                    "this `{` is never closed",
                )
                .with_help("close the model block with `}`");
                self.diags.push(d);
                return (BlockEnd::Closed(pos), allows);
            }
            if self.text[pos..].starts_with('}') {
                return (BlockEnd::Closed(pos + 1), allows);
            }
            let failed_at = match keyword_at(self.text, pos) {
                Some("allow") => match self.piece(pos, Rule::allow_at) {
                    Ok((pair, end)) => {
                        allows.extend(build::allow(pair, pos));
                        pos = end;
                        continue;
                    }
                    Err(at) => at,
                },
                Some(_) => {
                    self.unexpected(pos, "`allow` or `}`");
                    return (BlockEnd::Resume(pos), allows);
                }
                None => {
                    self.unexpected(pos, "`allow` or `}`");
                    pos
                }
            };
            match next_sync(self.text, failed_at, false) {
                Sync::Keyword(p, "allow") => pos = p,
                Sync::Keyword(p, _) => return (BlockEnd::Resume(p), allows),
                Sync::AfterClose(p) => return (BlockEnd::Closed(p), allows),
                Sync::Open(_) | Sync::Eof => return (BlockEnd::Closed(self.text.len()), allows),
            }
        }
    }

    /// Parses one piece starting at `pos`: its pair and where it ends, or
    /// the error position after recording the diagnostic.
    fn piece(&mut self, pos: usize, rule: Rule) -> Result<(Pair<'a, Rule>, usize), usize> {
        let slice = &self.text[pos..piece_end(self.text, pos)];
        match RoutexParser::parse(rule, slice) {
            Ok(mut pairs) => {
                let entry = pairs.next();
                let inner = entry.and_then(|e| e.into_inner().find(|p| p.as_rule() != Rule::EOI));
                match inner {
                    Some(pair) => {
                        let end = pos + pair.as_span().end();
                        Ok((pair, end))
                    }
                    None => Err(pos),
                }
            }
            Err(err) => {
                let d = errors::from_pest(&err, slice, pos, Code::SyntaxError);
                let at = d.span.start;
                self.diags.push(d);
                Err(at)
            }
        }
    }

    fn unexpected(&mut self, pos: usize, expected: &str) {
        let mut d = errors::at(&self.text[pos..], 0, &[], Code::SyntaxError).offset(pos);
        d.message = d
            .message
            .replacen("unexpected", &format!("expected {expected}, found"), 1);
        self.diags.push(d);
    }

    fn resync_top(&self, at: usize) -> usize {
        self.sync_pos(next_sync(self.text, at, false))
    }

    fn sync_pos(&self, sync: Sync) -> usize {
        match sync {
            Sync::Keyword(p, _) | Sync::AfterClose(p) | Sync::Open(p) => p,
            Sync::Eof => self.text.len(),
        }
    }
}

/// Where the text handed to pest for the piece at `pos` ends: just after
/// the next item keyword at the start of a line (or after the next `}`).
/// pest's error scans from its position to the end of its input, so the
/// whole rest of the file per piece made many errors quadratic. Keeping the
/// next keyword in the slice keeps pest's message ("found `model`"); an
/// item never runs past a line that starts with a keyword, except for a
/// bare value spelt `default`, `allow` or `model` at the start of a line,
/// which then reads as a syntax error.
fn piece_end(text: &str, pos: usize) -> usize {
    match next_sync(text, pos + 1, false) {
        Sync::Keyword(p, keyword) => p + keyword.len(),
        Sync::AfterClose(p) => p,
        Sync::Open(_) | Sync::Eof => text.len(),
    }
}

fn last_end(allows: &[Allow]) -> usize {
    allows.last().map_or(0, |a| a.span.end)
}
