//! An MCP server an agent uses: where, with which credential, and which of its tools
//! wait for a human.

use handoff_core::ApprovalPolicy;

/// A remote MCP server reached over Streamable HTTP.
#[derive(Clone)]
pub struct McpServer {
    pub(crate) name: String,
    pub(crate) url: String,
    pub(crate) bearer: Option<String>,
    /// Every tool of the server waits for approval under this policy.
    pub(crate) approval: Option<ApprovalPolicy>,
    /// These tools (by their MCP name) wait for approval, overriding `approval`.
    pub(crate) tool_approvals: Vec<(String, ApprovalPolicy)>,
}

impl std::fmt::Debug for McpServer {
    /// Without the token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("bearer", &self.bearer.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// The server `name` (its tools are offered as `{name}__{tool}`) at the Streamable
    /// HTTP endpoint `url` (e.g. `https://mcp.example.com/mcp`).
    pub fn streamable_http(name: &str, url: &str) -> Self {
        McpServer {
            name: name.to_owned(),
            url: url.to_owned(),
            bearer: None,
            approval: None,
            tool_approvals: Vec::new(),
        }
    }

    /// Sends `Authorization: Bearer {token}` to this server. The token is this server's
    /// own: the caller's credential is never passed on (MCP forbids token pass-through).
    #[must_use]
    pub fn bearer(mut self, token: &str) -> Self {
        self.bearer = Some(token.to_owned());
        self
    }

    /// Every tool of this server waits for a human's approval under `policy`, as
    /// [`crate::BackendTool::requiring_approval`] does.
    #[must_use]
    pub fn requiring_approval(mut self, policy: ApprovalPolicy) -> Self {
        self.approval = Some(policy);
        self
    }

    /// The tool `tool` (its MCP name, e.g. `echo`) waits for approval under `policy`.
    #[must_use]
    pub fn tool_requiring_approval(mut self, tool: &str, policy: ApprovalPolicy) -> Self {
        self.tool_approvals.push((tool.to_owned(), policy));
        self
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The approval policy of `tool` (its MCP name), if it needs one.
    pub fn approval_for(&self, tool: &str) -> Option<ApprovalPolicy> {
        self.tool_approvals
            .iter()
            .find(|(name, _)| name == tool)
            .map(|(_, policy)| policy.clone())
            .or_else(|| self.approval.clone())
    }
}
