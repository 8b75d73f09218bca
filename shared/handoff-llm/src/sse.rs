//! Reading a provider's event stream: bytes in (split anywhere), deltas out.

use agui_protocol::sse::SseDecoder;

use crate::delta::{ModelDelta, Parsed};
use crate::error::ModelError;

/// A dialect's frame parser.
pub trait FrameParser {
    /// One SSE frame (`event:` name, if any, and its `data:`).
    fn frame(&mut self, event: Option<&str>, data: &str) -> Parsed;
}

/// A provider's response body as it arrives: `feed` it chunks, get deltas.
#[derive(Debug, Default)]
pub struct ProviderStream<P> {
    decoder: SseDecoder,
    parser: P,
}

impl<P: FrameParser + ?Sized> FrameParser for Box<P> {
    fn frame(&mut self, event: Option<&str>, data: &str) -> Parsed {
        (**self).frame(event, data)
    }
}

impl<P: FrameParser> ProviderStream<P> {
    /// A stream read with `parser`.
    pub fn new(parser: P) -> Self {
        ProviderStream {
            decoder: SseDecoder::new(),
            parser,
        }
    }

    /// The deltas completed by `chunk` (frames may be split anywhere, even inside a
    /// UTF-8 character).
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<ModelDelta>, ModelError> {
        let mut deltas = Vec::new();
        for frame in self.decoder.feed(chunk) {
            deltas.extend(self.parser.frame(frame.event.as_deref(), &frame.data)?);
        }
        Ok(deltas)
    }
}
