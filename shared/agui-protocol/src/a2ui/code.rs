//! Splits streamed text into prose (`text` frames) and fenced code (`code_block` frames).

use serde_json::{Value, json};

/// One piece of output: a frame kind and its data.
pub(super) struct Piece {
    pub(super) kind: &'static str,
    pub(super) data: Value,
}

/// Per-message state. A line that might become a ```` ``` ```` fence is held back
/// until it is complete, so fences split across deltas are still recognised.
#[derive(Debug)]
pub(super) struct TextSplitter {
    prose: String,
    code: Option<(String, String)>,
    pending: String,
    at_line_start: bool,
}

impl Default for TextSplitter {
    fn default() -> Self {
        Self {
            prose: String::new(),
            code: None,
            pending: String::new(),
            at_line_start: true,
        }
    }
}

const FENCE: &str = "```";

impl TextSplitter {
    pub(super) fn push(&mut self, delta: &str) -> Vec<Piece> {
        self.pending.push_str(delta);
        let mut out = Vec::new();
        loop {
            if self.pending.is_empty() {
                break;
            }
            if self.at_line_start {
                if self.pending.starts_with(FENCE) {
                    let Some(newline) = self.pending.find('\n') else {
                        break;
                    };
                    let line: String = self.pending.drain(..=newline).collect();
                    self.toggle_fence(&line);
                    continue;
                }
                if FENCE.starts_with(self.pending.as_str()) {
                    break;
                }
            }
            let end = self
                .pending
                .find('\n')
                .map_or(self.pending.len(), |i| i + 1);
            let piece: String = self.pending.drain(..end).collect();
            self.at_line_start = piece.ends_with('\n');
            self.emit(&piece, &mut out);
        }
        out
    }

    pub(super) fn finish(&mut self) -> Vec<Piece> {
        let rest = std::mem::take(&mut self.pending);
        let mut out = Vec::new();
        // An unterminated closing fence at the very end just closes the block.
        if self.code.is_some() && rest.trim_end().starts_with(FENCE) {
            self.code = None;
        } else if !rest.is_empty() {
            self.emit(&rest, &mut out);
        }
        out
    }

    fn toggle_fence(&mut self, line: &str) {
        if self.code.take().is_none() {
            let language = line[FENCE.len()..].trim().to_owned();
            self.code = Some((language, String::new()));
        }
        self.at_line_start = true;
    }

    /// Adds a piece; a piece of the same kind as the previous one in this push
    /// extends that frame, so one delta never turns into several frames.
    fn emit(&mut self, piece: &str, out: &mut Vec<Piece>) {
        let (kind, data) = match &mut self.code {
            Some((language, code)) => {
                code.push_str(piece);
                (
                    "code_block",
                    json!({"language": language, "code": code, "delta": piece}),
                )
            }
            None => {
                self.prose.push_str(piece);
                ("text", json!({"content": self.prose, "delta": piece}))
            }
        };
        match out.last_mut() {
            Some(last) if last.kind == kind => {
                let delta = format!("{}{piece}", last.data["delta"].as_str().unwrap_or_default());
                last.data = data;
                last.data["delta"] = Value::String(delta);
            }
            _ => out.push(Piece { kind, data }),
        }
    }
}
