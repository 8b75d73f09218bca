//! An MCP POST (to a server, or to its token endpoint) through the host's one outbound
//! client ([`Outbound`], behind the outbound guard): answered whole, capped at
//! [`MAX_ANSWER_BYTES`], bounded by the request's timeout, the body included.

use std::time::Duration;

use handoff_core::outbound::{Outbound, OutboundError, Timeout, read_capped};

/// Largest MCP answer read (a larger one is unusable); results are then cut to
/// [`super::MAX_RESULT_BYTES`] for the model.
pub const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// Sends `request` through `http`, given up after `timeout_ms`, and reads the answer
/// whole (an SSE answer ends when the server closes it after the response).
pub(crate) async fn post(
    http: &dyn Outbound,
    mut request: http::Request<Vec<u8>>,
    timeout_ms: u64,
) -> Result<http::Response<Vec<u8>>, OutboundError> {
    let timeout = Duration::from_millis(timeout_ms.max(1));
    request.extensions_mut().insert(Timeout(timeout));
    read_capped(http.send(request).await?, MAX_ANSWER_BYTES).await
}

/// A header of `response` as text (`None` when absent or not text).
pub(crate) fn header(response: &http::Response<Vec<u8>>, name: &str) -> Option<String> {
    let value = response.headers().get(name)?.to_str().ok()?;
    Some(value.to_owned())
}
