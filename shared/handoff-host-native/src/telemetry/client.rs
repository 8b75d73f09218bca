//! OTLP requests through the one native client ([`UreqOutbound`], for the operator's own
//! collector). The SDK's batch processor runs exports on its own thread (blocking on the
//! future, with no tokio runtime), so this adapter sends on that thread.

use std::time::Duration;

use async_trait::async_trait;
use handoff_core::outbound::Timeout;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

use crate::outbound::UreqOutbound;

/// At most this much of a collector's answer is read (it is only a status).
const MAX_ANSWER_BYTES: usize = 1 << 20;
/// One export's bound, the answer included.
const TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug)]
pub(super) struct Export(pub(super) UreqOutbound);

#[async_trait]
impl HttpClient for Export {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let mut request = Request::from_parts(parts, body.to_vec());
        request.extensions_mut().insert(Timeout(TIMEOUT));
        let (parts, body) = self
            .0
            .send_blocking(request, MAX_ANSWER_BYTES)?
            .into_parts();
        Ok(Response::from_parts(parts, Bytes::from(body)))
    }
}
