//! Handoff's MCP client ([`handoff::llm::mcp`]) as the client under test of the MCP
//! conformance suite: `conformance client --command target/debug/mcp-conformance-client`
//! (`make mcp-conformance`, tests/mcp-conformance/run.sh).
//!
//! The suite starts a server for a scenario and runs this with its URL as the last
//! argument, the scenario's name in `MCP_CONFORMANCE_SCENARIO` and, for the client
//! credentials scenarios, `{"client_id", "client_secret"}` in `MCP_CONFORMANCE_CONTEXT`.
//! What it does is what an agent's run does: connect (2026-07-28's `server/discover`, else
//! `initialize`), list the tools, and call each once with arguments made from its schema,
//! through the guarded native transport (loopback allowed: the suite's servers are local).
//!
//! Handoff's client takes an authorization server's token endpoint as configuration; the
//! suite's servers publish theirs only as metadata. So with credentials this CLI first
//! finds it the way an operator would (RFC 9728 protected-resource metadata from the
//! server's 401, then RFC 8414 authorization-server metadata); the token request, the
//! bearer and the retry after a 401 are the client's own.
//!
//! Exit status 0 when every call answered; the suite judges what it saw.

// A command-line tool: what it did is its output, and its clock is the wall clock.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::disallowed_methods)]

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use handoff::llm::mcp::{Called, ClientCredentials, McpConnection, McpServer};
use handoff::outbound::{NetPolicy, Outbound, UreqOutbound};
use handoff::runtime::Sleep;
use serde_json::{Map, Value, json};

const TIMEOUT_MS: u64 = 20_000;

fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: mcp-conformance-client <server URL>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("no runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(run(&url, &context));
    // A resumed GET stream the server keeps open holds a blocking reader until its time
    // limit: not waited for.
    runtime.shutdown_background();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("{scenario}: {why}");
            ExitCode::FAILURE
        }
    }
}

async fn run(url: &str, context: &Value) -> Result<(), String> {
    let http: Arc<dyn Outbound> = Arc::new(UreqOutbound::guarded(NetPolicy {
        allow_loopback: true,
    }));
    let mut server = McpServer::streamable_http("conformance", url);
    let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
    if let (Some(id), Some(secret)) = (text("client_id"), text("client_secret")) {
        let endpoint = tokio::task::spawn_blocking({
            let url = url.to_owned();
            move || token_endpoint(&url)
        })
        .await
        .map_err(|e| e.to_string())??;
        println!("token endpoint: {endpoint}");
        server = server.client_credentials(ClientCredentials::new(&endpoint, &id, &secret));
    }
    let connection = McpConnection::new(server);
    connection.set_sleep(Arc::new(TokioSleep));
    let tools = connection
        .tools(http.as_ref(), now_ms(), TIMEOUT_MS)
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    println!(
        "tools: {:?}",
        tools.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    for (n, tool) in tools.iter().enumerate() {
        let args = sample(&tool.input_schema);
        let key = format!("conformance-{n}");
        let called = connection
            .call(
                http.as_ref(),
                &tool.name,
                args,
                &key,
                None,
                now_ms(),
                TIMEOUT_MS,
            )
            .await
            .map_err(|e| format!("tools/call {}: {e}", tool.name))?;
        match called {
            Called::Complete(outcome) => println!("{}: {}", tool.name, outcome.text),
            Called::InputRequired(asked) => println!("{}: input required {asked:?}", tool.name),
        }
    }
    Ok(())
}

/// The host's timer, as the dev server's runtime has it.
struct TokioSleep;

impl Sleep for TokioSleep {
    fn sleep(&self, millis: u64) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(std::time::Duration::from_millis(millis)))
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Arguments for `schema`: every property, a number 1, 2, … in order, strings and
/// booleans fixed.
fn sample(schema: &Value) -> Value {
    let mut args = Map::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return json!({});
    };
    for (index, (name, property)) in properties.iter().enumerate() {
        let value = match property.get("type").and_then(Value::as_str) {
            Some("number" | "integer") => json!(index + 1),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("conformance"),
        };
        args.insert(name.clone(), value);
    }
    Value::Object(args)
}

/// The token endpoint of the server at `url`'s authorization server: the protected
/// resource metadata its 401 names (else the well-known URL for its path), then the
/// authorization server's metadata.
fn token_endpoint(url: &str) -> Result<String, String> {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let probe = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "handoff-conformance", "version": "0"}}});
    let answer = agent
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .send(probe.to_string().as_bytes())
        .map_err(|e| format!("probe: {e}"))?;
    let named = answer
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| quoted(v, "resource_metadata"));
    let (origin, path) = split(url)?;
    let metadata_url =
        named.unwrap_or_else(|| format!("{origin}/.well-known/oauth-protected-resource{path}"));
    let resource = get_json(&agent, &metadata_url)?;
    let issuer = resource
        .pointer("/authorization_servers/0")
        .and_then(Value::as_str)
        .ok_or("no authorization_servers in the protected resource metadata")?;
    let (issuer_origin, issuer_path) = split(issuer)?;
    let path = issuer_path.trim_end_matches('/');
    for candidate in [
        format!("{issuer_origin}/.well-known/oauth-authorization-server{path}"),
        format!("{issuer_origin}/.well-known/openid-configuration{path}"),
        format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        ),
    ] {
        if let Ok(server) = get_json(&agent, &candidate)
            && let Some(endpoint) = server.get("token_endpoint").and_then(Value::as_str)
        {
            return Ok(endpoint.to_owned());
        }
    }
    Err(format!("no token_endpoint in {issuer}'s metadata"))
}

fn get_json(agent: &ureq::Agent, url: &str) -> Result<Value, String> {
    let mut answer = agent.get(url).call().map_err(|e| format!("{url}: {e}"))?;
    if !answer.status().is_success() {
        return Err(format!("{url}: HTTP {}", answer.status()));
    }
    let text = answer
        .body_mut()
        .read_to_string()
        .map_err(|e| format!("{url}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{url}: {e}"))
}

/// `key="value"` in a `WWW-Authenticate` challenge.
fn quoted(header: &str, key: &str) -> Option<String> {
    let start = header.find(&format!("{key}=\""))? + key.len() + 2;
    let end = header[start..].find('"')?;
    Some(header[start..start + end].to_owned())
}

/// `https://host:port` and the path (without a trailing `/`) of `url`.
fn split(url: &str) -> Result<(String, String), String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    let scheme = uri.scheme_str().ok_or("no scheme")?;
    let authority = uri.authority().ok_or("no host")?;
    let path = uri.path().trim_end_matches('/');
    Ok((format!("{scheme}://{authority}"), path.to_owned()))
}
