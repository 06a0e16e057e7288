//! The open documents: text, version, what kind of routex file each is, the
//! line table, and the analysis of the current text (computed when first
//! asked for, dropped on every change).

use super::analysis::Analysis;
use super::kind::{classify, Decided, Kind};
use super::position::Lines;
use super::scan;
use lsp_types::{TextDocumentContentChangeEvent, Uri};
use routex::diag::Span;
use std::cell::OnceCell;
use std::collections::HashMap;

/// Open documents kept at once; a client opening more gets the extra ones
/// ignored (with a log message), so memory stays bounded.
pub const MAX_DOCUMENTS: usize = 1024;

/// Largest document accepted at all; edits growing a document past it are
/// refused (the document is dropped), so one client cannot exhaust memory.
pub const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

/// An edit would grow a document past [`MAX_DOCUMENT_BYTES`].
#[derive(Debug)]
pub struct TooLarge;

pub struct Document {
    pub text: String,
    pub version: i32,
    pub kind: Kind,
    decided: Decided,
    /// The file name, for reports ("lb-config.json").
    pub name: String,
    /// The file on disk of a `file:` URI, for the project configuration
    /// (`routex.toml`, found from it as `routex lint` finds it).
    pub path: Option<std::path::PathBuf>,
    pub lines: Lines,
    analysis: OnceCell<Analysis>,
    /// Where JSON cursor scans resume; made on the first hover or
    /// completion after a change.
    checkpoints: OnceCell<Vec<scan::Checkpoint>>,
}

impl Document {
    pub fn new(uri: &Uri, language_id: &str, version: i32, text: String) -> Self {
        let name = file_name(uri);
        let (kind, decided) = classify(&name, language_id, &text);
        Document {
            lines: Lines::new(&text),
            text,
            version,
            kind,
            decided,
            name,
            path: file_path(uri),
            analysis: OnceCell::new(),
            checkpoints: OnceCell::new(),
        }
    }

    /// Forgets the analysis (the project configuration changed): the next
    /// request or publication checks the text again.
    pub fn invalidate(&mut self) {
        self.analysis = OnceCell::new();
    }

    /// The JSON context at byte `offset`, scanned from the nearest
    /// checkpoint: at most `scan::CHECKPOINT_SPACING` bytes per request
    /// once the document's checkpoints exist.
    pub fn json_cursor(&self, offset: usize) -> scan::Cursor {
        scan::cursor_from(&self.text, self.checkpoints(), offset)
    }

    /// Makes the checkpoints of a JSON document now (the server does it
    /// once the diagnostics of a change are out, while the editor is idle).
    pub fn prepare_cursor(&self) {
        if matches!(self.kind, Kind::Config | Kind::Scenario) {
            self.checkpoints();
        }
    }

    fn checkpoints(&self) -> &[scan::Checkpoint] {
        self.checkpoints
            .get_or_init(|| scan::checkpoints(&self.text))
    }

    /// The analysis of the current text.
    pub fn analysis(&self) -> &Analysis {
        self.analysis
            .get_or_init(|| Analysis::new(self.kind, &self.name, &self.text, self.path.as_deref()))
    }

    /// Applies content changes in order (ranges are in the text as left by
    /// the previous change). Err when the result would exceed
    /// [`MAX_DOCUMENT_BYTES`].
    pub fn apply(
        &mut self,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> Result<(), TooLarge> {
        for change in changes {
            match change.range {
                Some(range) => {
                    let Span { start, end } = self.lines.span(&self.text, range);
                    let grown = self.text.len() - (end - start) + change.text.len();
                    if grown > MAX_DOCUMENT_BYTES {
                        return Err(TooLarge);
                    }
                    self.text.replace_range(start..end, &change.text);
                }
                None => {
                    if change.text.len() > MAX_DOCUMENT_BYTES {
                        return Err(TooLarge);
                    }
                    self.text = change.text;
                }
            }
            self.lines = Lines::new(&self.text);
        }
        self.version = version;
        self.analysis = OnceCell::new();
        self.checkpoints = OnceCell::new();
        if self.decided == Decided::ByContent && self.kind == Kind::Other {
            self.kind = classify(&self.name, "json", &self.text).0;
        }
        Ok(())
    }
}

/// The open documents by URI.
#[derive(Default)]
pub struct Documents {
    map: HashMap<Uri, Document>,
}

impl Documents {
    /// Opens (or reopens) a document; false when [`MAX_DOCUMENTS`] are
    /// already open.
    pub fn open(&mut self, uri: Uri, document: Document) -> bool {
        if self.map.len() >= MAX_DOCUMENTS && !self.map.contains_key(&uri) {
            return false;
        }
        self.map.insert(uri, document);
        true
    }

    pub fn close(&mut self, uri: &Uri) -> Option<Document> {
        self.map.remove(uri)
    }

    pub fn get(&self, uri: &Uri) -> Option<&Document> {
        self.map.get(uri)
    }

    pub fn get_mut(&mut self, uri: &Uri) -> Option<&mut Document> {
        self.map.get_mut(uri)
    }

    /// Every open document, to change.
    pub fn all_mut(&mut self) -> impl Iterator<Item = (&Uri, &mut Document)> {
        self.map.iter_mut()
    }

    /// Every open document other than `uri`.
    pub fn others<'a>(&'a self, uri: &'a Uri) -> impl Iterator<Item = &'a Document> + 'a {
        self.map
            .iter()
            .filter(move |(u, _)| *u != uri)
            .map(|(_, d)| d)
    }
}

/// The path of a `file:` URI, percent-decoded; `None` for other schemes
/// (an unsaved buffer has no project).
fn file_path(uri: &Uri) -> Option<std::path::PathBuf> {
    if !uri
        .scheme()
        .is_some_and(|s| s.as_str().eq_ignore_ascii_case("file"))
    {
        return None;
    }
    let raw = uri.path().as_str().as_bytes();
    let mut bytes = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            raw[i],
            raw.get(i + 1).copied().and_then(hex),
            raw.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                bytes.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                bytes.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(bytes).ok().map(std::path::PathBuf::from)
}

/// Whether a document is a project configuration file, whose change
/// re-checks every open document.
pub fn is_project_file(uri: &Uri) -> bool {
    routex_project::FILE_NAMES.contains(&file_name(uri).as_str())
}

/// The last path segment of a URI, percent-decoding left alone (routex
/// only compares it with ASCII names).
fn file_name(uri: &Uri) -> String {
    let path = uri.path().as_str();
    path.rsplit('/').next().unwrap_or(path).to_string()
}
