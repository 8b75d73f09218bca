//! The demo's MCP servers (LLM mode only), from the environment:
//!
//! | variable | meaning |
//! |---|---|
//! | `HANDOFF_MCP_SERVERS` | `name=url[,name=url…]`: Streamable HTTP endpoints; their tools are offered as `{name}__{tool}` |
//! | `HANDOFF_MCP_TOKENS` | `name=token[,…]`: a bearer token per server (the caller's own token is never passed on) |
//! | `HANDOFF_MCP_OAUTH` | `name=token_url[,…]`: these servers take OAuth access tokens from this token endpoint (client credentials grant; instead of a bearer token) |
//! | `HANDOFF_MCP_OAUTH_CLIENTS` | `name=client_id:client_secret[,…]`: the agent's client at each of those token endpoints (HTTP Basic) |
//! | `HANDOFF_MCP_OAUTH_AUDIENCES` | `name=audience[,…]` (optional): the `audience` asked for; by default the server's URL, which always goes as `resource` |
//! | `HANDOFF_MCP_OAUTH_SCOPES` | `name=scope scope…[,…]` (optional): the scopes asked for |
//! | `HANDOFF_MCP_REQUIRE_APPROVAL` | `name__tool[,…]` or `name__*`: these tools wait for an approver (role `approver`, not the requester; with `HANDOFF_AUTH` unset or `none` there are no roles, so the interrupt is raised and any caller may answer) |
//! | `HANDOFF_MCP_ALLOW_LOOPBACK` | `true` (tests only, like `HANDOFF_A2A_ALLOW_LOOPBACK`): loopback and `http://` URLs |
//!
//! A malformed variable refuses to start, naming the variable (never a token).

use std::collections::BTreeSet;

use handoff_auth::url_guard::check_outbound_url;
use handoff_core::ApprovalPolicy;
use handoff_llm::mcp::{ClientCredentials, McpServer};

/// The MCP servers the demo agent uses.
#[derive(Debug, Clone, Default)]
pub struct McpSettings {
    /// The servers, with their tokens and approval rules.
    pub servers: Vec<McpServer>,
    /// Loopback and plain `http` allowed (tests).
    pub allow_loopback: bool,
}

/// `name=value` pairs of a comma-separated list.
fn pairs(var: &str, value: &str) -> Result<Vec<(String, String)>, String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| match item.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() && !value.trim().is_empty() => {
                Ok((name.trim().to_owned(), value.trim().to_owned()))
            }
            // The item may be a token: say where, not what.
            _ => Err(format!(
                "{var}: expected name=value items separated by commas"
            )),
        })
        .collect()
}

impl McpSettings {
    /// Reads the `HANDOFF_MCP_*` variables (see the module docs).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let get = |var: &str| lookup(var).filter(|v| !v.trim().is_empty());
        let allow_loopback = match get("HANDOFF_MCP_ALLOW_LOOPBACK").as_deref().map(str::trim) {
            None | Some("false" | "0") => false,
            Some("true" | "1") => true,
            Some(other) => {
                return Err(format!(
                    "HANDOFF_MCP_ALLOW_LOOPBACK: expected true or false, got {other:?}"
                ));
            }
        };
        let var = "HANDOFF_MCP_SERVERS";
        let mut servers = Vec::new();
        let mut names = BTreeSet::new();
        for (name, url) in pairs(var, &get(var).unwrap_or_default())? {
            if !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(format!("{var}: server name {name:?} is not [A-Za-z0-9_-]"));
            }
            if !names.insert(name.clone()) {
                return Err(format!("{var}: server {name:?} is named twice"));
            }
            check_outbound_url(&url, allow_loopback)
                .map_err(|why| format!("{var}: {name}: {}", why.replace("A2A ", "")))?;
            servers.push(McpServer::streamable_http(&name, &url));
        }
        let known = |var: &str, name: &str| {
            names
                .contains(name)
                .then_some(())
                .ok_or_else(|| format!("{var}: no server {name:?} in HANDOFF_MCP_SERVERS"))
        };
        let var = "HANDOFF_MCP_TOKENS";
        for (name, token) in pairs(var, &get(var).unwrap_or_default())? {
            known(var, &name)?;
            let server = servers.iter_mut().find(|s| s.name() == name);
            if let Some(server) = server {
                *server = server.clone().bearer(&token);
            }
        }
        oauth(&get, &known, &mut servers, allow_loopback)?;
        let var = "HANDOFF_MCP_REQUIRE_APPROVAL";
        let policy = approver_policy(&lookup);
        for item in get(var).unwrap_or_default().split(',').map(str::trim) {
            if item.is_empty() {
                continue;
            }
            let (name, tool) = item
                .split_once("__")
                .filter(|(n, t)| !n.is_empty() && !t.is_empty())
                .ok_or_else(|| {
                    format!("{var}: expected server__tool or server__*, got {item:?}")
                })?;
            known(var, name)?;
            if let Some(server) = servers.iter_mut().find(|s| s.name() == name) {
                *server = match tool {
                    "*" => server.clone().requiring_approval(policy.clone()),
                    tool => server.clone().tool_requiring_approval(tool, policy.clone()),
                };
            }
        }
        Ok(McpSettings {
            servers,
            allow_loopback,
        })
    }
}

/// The `HANDOFF_MCP_OAUTH*` variables: client credentials for the servers they name.
fn oauth(
    get: &impl Fn(&str) -> Option<String>,
    known: &impl Fn(&str, &str) -> Result<(), String>,
    servers: &mut [McpServer],
    allow_loopback: bool,
) -> Result<(), String> {
    let named = |var: &str| -> Result<Vec<(String, String)>, String> {
        let items = pairs(var, &get(var).unwrap_or_default())?;
        for (name, _) in &items {
            known(var, name)?;
        }
        Ok(items)
    };
    let tokens = named("HANDOFF_MCP_TOKENS")?;
    let clients = named("HANDOFF_MCP_OAUTH_CLIENTS")?;
    let audiences = named("HANDOFF_MCP_OAUTH_AUDIENCES")?;
    let scopes = named("HANDOFF_MCP_OAUTH_SCOPES")?;
    let token_urls = named("HANDOFF_MCP_OAUTH")?;
    let of = |items: &[(String, String)], name: &str| {
        items
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    for (var, items) in [
        ("HANDOFF_MCP_OAUTH_CLIENTS", &clients),
        ("HANDOFF_MCP_OAUTH_AUDIENCES", &audiences),
        ("HANDOFF_MCP_OAUTH_SCOPES", &scopes),
    ] {
        if let Some((name, _)) = items.iter().find(|(n, _)| of(&token_urls, n).is_none()) {
            return Err(format!(
                "{var}: server {name:?} has no token endpoint in HANDOFF_MCP_OAUTH"
            ));
        }
    }
    for (name, token_url) in &token_urls {
        let var = "HANDOFF_MCP_OAUTH";
        if of(&tokens, name).is_some() {
            return Err(format!(
                "{var}: server {name:?} also has a bearer token in HANDOFF_MCP_TOKENS; use one"
            ));
        }
        check_outbound_url(token_url, allow_loopback)
            .map_err(|why| format!("{var}: {name}: {}", why.replace("A2A ", "")))?;
        let client = of(&clients, name).ok_or_else(|| {
            format!("{var}: server {name:?} has no client in HANDOFF_MCP_OAUTH_CLIENTS")
        })?;
        let (id, secret) = client
            .split_once(':')
            .filter(|(id, secret)| !id.is_empty() && !secret.is_empty())
            // The item holds a secret: say where, not what.
            .ok_or_else(|| {
                format!("HANDOFF_MCP_OAUTH_CLIENTS: {name}: expected client_id:client_secret")
            })?;
        let mut credentials = ClientCredentials::new(token_url, id, secret);
        if let Some(audience) = of(&audiences, name) {
            credentials = credentials.audience(&audience);
        }
        if let Some(scope) = of(&scopes, name) {
            credentials = credentials.scope(&scope);
        }
        if let Some(server) = servers.iter_mut().find(|s| s.name() == name) {
            *server = server.clone().client_credentials(credentials);
        }
    }
    Ok(())
}

/// An approver other than the requester; without authentication there are no roles or
/// distinct callers, so the thread's owner (anyone) answers.
fn approver_policy(lookup: impl Fn(&str) -> Option<String>) -> ApprovalPolicy {
    match lookup("HANDOFF_AUTH").as_deref().map(str::trim) {
        None | Some("" | "none") => ApprovalPolicy::new(),
        Some(_) => ApprovalPolicy::new().role("approver").not_requester(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> Result<McpSettings, String> {
        McpSettings::from_lookup(|k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn servers_tokens_and_approvals_are_read() {
        let s = settings(&[
            (
                "HANDOFF_MCP_SERVERS",
                "everything=http://127.0.0.1:3001/mcp, counter=http://localhost:9/mcp",
            ),
            ("HANDOFF_MCP_TOKENS", "counter=s3cr3t"),
            (
                "HANDOFF_MCP_REQUIRE_APPROVAL",
                "counter__count,everything__*",
            ),
            ("HANDOFF_MCP_ALLOW_LOOPBACK", "true"),
            ("HANDOFF_AUTH", "jwt"),
        ])
        .unwrap();
        assert!(s.allow_loopback);
        assert_eq!(s.servers.len(), 2);
        let debug = format!("{:?}", s.servers);
        assert!(!debug.contains("s3cr3t"), "{debug}");
        let policy = s.servers[1].approval_for("count").unwrap();
        assert_eq!(policy.roles, ["approver"]);
        assert!(policy.not_requester);
        assert!(s.servers[1].approval_for("other").is_none());
        assert!(s.servers[0].approval_for("echo").is_some());
        let open = settings(&[
            ("HANDOFF_MCP_SERVERS", "e=http://127.0.0.1:1/mcp"),
            ("HANDOFF_MCP_REQUIRE_APPROVAL", "e__echo"),
            ("HANDOFF_MCP_ALLOW_LOOPBACK", "1"),
        ])
        .unwrap();
        assert!(
            open.servers[0]
                .approval_for("echo")
                .unwrap()
                .roles
                .is_empty()
        );
        assert!(settings(&[]).unwrap().servers.is_empty());
    }

    #[test]
    fn oauth_clients_replace_bearer_tokens() {
        let s = settings(&[
            (
                "HANDOFF_MCP_SERVERS",
                "billing=https://billing.example/mcp,docs=https://docs.example/mcp",
            ),
            ("HANDOFF_MCP_OAUTH", "billing=https://auth.example/token"),
            ("HANDOFF_MCP_OAUTH_CLIENTS", "billing=agent:s3cr3t:x"),
            ("HANDOFF_MCP_OAUTH_AUDIENCES", "billing=urn:billing"),
            ("HANDOFF_MCP_TOKENS", "docs=t0k"),
        ])
        .unwrap();
        let debug = format!("{:?}", s.servers);
        assert!(debug.contains("client credentials"), "{debug}");
        assert!(
            !debug.contains("s3cr3t") && !debug.contains("t0k"),
            "{debug}"
        );
    }

    #[test]
    fn malformed_variables_name_themselves_and_never_a_token() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("HANDOFF_MCP_SERVERS", "nourl")], "HANDOFF_MCP_SERVERS"),
            (
                &[("HANDOFF_MCP_SERVERS", "a=http://127.0.0.1/mcp")],
                "HANDOFF_MCP_SERVERS",
            ),
            (
                &[("HANDOFF_MCP_SERVERS", "a b=https://x.example/mcp")],
                "HANDOFF_MCP_SERVERS",
            ),
            (
                &[(
                    "HANDOFF_MCP_SERVERS",
                    "a=https://x.example/,a=https://y.example/",
                )],
                "HANDOFF_MCP_SERVERS",
            ),
            (&[("HANDOFF_MCP_TOKENS", "b=s3cr3t")], "HANDOFF_MCP_TOKENS"),
            (
                &[
                    ("HANDOFF_MCP_SERVERS", "a=https://x.example/"),
                    ("HANDOFF_MCP_TOKENS", "s3cr3t"),
                ],
                "HANDOFF_MCP_TOKENS",
            ),
            (
                &[("HANDOFF_MCP_REQUIRE_APPROVAL", "echo")],
                "HANDOFF_MCP_REQUIRE_APPROVAL",
            ),
            (
                &[("HANDOFF_MCP_REQUIRE_APPROVAL", "x__echo")],
                "HANDOFF_MCP_REQUIRE_APPROVAL",
            ),
            (
                &[("HANDOFF_MCP_ALLOW_LOOPBACK", "yes")],
                "HANDOFF_MCP_ALLOW_LOOPBACK",
            ),
            (
                &[
                    ("HANDOFF_MCP_SERVERS", "a=https://x.example/"),
                    ("HANDOFF_MCP_OAUTH", "a=https://auth.example/token"),
                ],
                "HANDOFF_MCP_OAUTH",
            ),
            (
                &[
                    ("HANDOFF_MCP_SERVERS", "a=https://x.example/"),
                    ("HANDOFF_MCP_OAUTH", "a=https://auth.example/token"),
                    ("HANDOFF_MCP_OAUTH_CLIENTS", "a=s3cr3t"),
                ],
                "HANDOFF_MCP_OAUTH_CLIENTS",
            ),
            (
                &[
                    ("HANDOFF_MCP_SERVERS", "a=https://x.example/"),
                    ("HANDOFF_MCP_OAUTH", "a=http://127.0.0.1/token"),
                    ("HANDOFF_MCP_OAUTH_CLIENTS", "a=id:s3cr3t"),
                ],
                "HANDOFF_MCP_OAUTH",
            ),
            (
                &[
                    ("HANDOFF_MCP_SERVERS", "a=https://x.example/"),
                    ("HANDOFF_MCP_OAUTH_CLIENTS", "a=id:s3cr3t"),
                ],
                "HANDOFF_MCP_OAUTH_CLIENTS",
            ),
            (
                &[
                    ("HANDOFF_MCP_SERVERS", "a=https://x.example/"),
                    ("HANDOFF_MCP_TOKENS", "a=s3cr3t"),
                    ("HANDOFF_MCP_OAUTH", "a=https://auth.example/token"),
                    ("HANDOFF_MCP_OAUTH_CLIENTS", "a=id:s3cr3t"),
                ],
                "HANDOFF_MCP_OAUTH",
            ),
        ];
        for (vars, name) in cases {
            let error = settings(vars).unwrap_err();
            assert!(error.starts_with(name), "{vars:?}: {error}");
            assert!(!error.contains("s3cr3t"), "{error}");
        }
    }
}
