//! An MCP server's answer as the tests' fake servers build it, turned into the response an
//! [`Outbound`](handoff_core::outbound::Outbound) hands back. Shared by handoff-llm's MCP
//! tests and handoff-http's approval-path table (`#[path]`-included there).

use handoff_core::outbound::{Body, whole};

/// Status, `Content-Type` (empty: none), `Mcp-Session-Id` and body.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) content_type: String,
    pub(crate) session_id: Option<String>,
    pub(crate) body: Vec<u8>,
}

impl Answer {
    pub(crate) fn into_response(self) -> http::Response<Body> {
        let mut response = http::Response::builder().status(self.status);
        if !self.content_type.is_empty() {
            response = response.header("content-type", self.content_type);
        }
        if let Some(id) = self.session_id {
            response = response.header("mcp-session-id", id);
        }
        response.body(whole(self.body)).unwrap()
    }
}
