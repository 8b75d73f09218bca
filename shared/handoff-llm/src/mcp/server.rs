//! An MCP server an agent uses: where, with which credential, and which of its tools
//! wait for a human.

use handoff_core::ApprovalPolicy;

use super::oauth::ClientCredentials;

/// How this agent proves itself to a server: its own credential, never the caller's.
#[derive(Clone)]
pub(crate) enum Credential {
    Bearer(String),
    ClientCredentials(ClientCredentials),
}

/// A remote MCP server reached over Streamable HTTP.
#[derive(Clone)]
pub struct McpServer {
    pub(crate) name: String,
    pub(crate) url: String,
    pub(crate) credential: Option<Credential>,
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
            .field(
                "credential",
                &match &self.credential {
                    None => "none",
                    Some(Credential::Bearer(_)) => "bearer …",
                    Some(Credential::ClientCredentials(_)) => "client credentials …",
                },
            )
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
            credential: None,
            approval: None,
            tool_approvals: Vec::new(),
        }
    }

    /// Sends `Authorization: Bearer {token}` to this server. The token is this server's
    /// own: the caller's credential is never passed on (MCP forbids token pass-through).
    #[must_use]
    pub fn bearer(mut self, token: &str) -> Self {
        self.credential = Some(Credential::Bearer(token.to_owned()));
        self
    }

    /// Authenticates with an access token from the server's authorization server, got
    /// with this agent's own client id and secret (OAuth client credentials), for the
    /// audience the credentials name (this server's URL by default).
    #[must_use]
    pub fn client_credentials(mut self, credentials: ClientCredentials) -> Self {
        self.credential = Some(Credential::ClientCredentials(credentials));
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

    /// What tells this server's state apart in a process: name, URL and credential (held
    /// in memory only, never logged).
    pub(crate) fn identity(&self) -> String {
        let credential = match &self.credential {
            None => String::new(),
            Some(Credential::Bearer(token)) => format!("bearer {token}"),
            Some(Credential::ClientCredentials(c)) => format!(
                "client {} {} {} {:?} {:?}",
                c.token_url, c.client_id, c.client_secret, c.audience, c.scope
            ),
        };
        format!("{}\n{}\n{credential}", self.name, self.url)
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
