//! OTLP requests over `ureq`. The SDK's batch processor runs exports on its own thread
//! (blocking on the future), so a blocking client is what it needs.

use std::time::Duration;

use async_trait::async_trait;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};

/// At most this much of a collector's answer is read (it is only a status).
const MAX_ANSWER_BYTES: u64 = 1 << 20;

#[derive(Debug)]
pub(super) struct UreqExport {
    agent: ureq::Agent,
}

impl UreqExport {
    pub(super) fn new() -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(Duration::from_secs(10)))
            .build();
        UreqExport {
            agent: config.new_agent(),
        }
    }
}

#[async_trait]
impl HttpClient for UreqExport {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let request = ureq::http::Request::from_parts(parts, body.to_vec());
        let response = self.agent.run(request)?;
        let (parts, mut body) = response.into_parts();
        let body = body.with_config().limit(MAX_ANSWER_BYTES).read_to_vec()?;
        Ok(Response::from_parts(parts, Bytes::from(body)))
    }
}
