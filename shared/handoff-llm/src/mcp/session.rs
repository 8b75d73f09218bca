//! One MCP server as this instance knows it: how it speaks (2026-07-28 without a
//! session, or a session revision), its cached tool list and access token.
//!
//! What this instance learnt lives in its memory only. Any instance can call any server:
//! one that has not spoken to it yet asks `server/discover` (see [`super::protocol`]),
//! and on a session revision initialises a session. A server that forgot the session (it
//! answers 404, or 400 as the reference server does for an unknown id) gets a fresh
//! `initialize` and the request again, once; one that no longer speaks 2026-07-28
//! (`-32022`) is asked again how it speaks, and the request sent again, once. A request
//! refused that way was not processed, so sending it again cannot act twice.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};

use serde_json::{Value, json};

use handoff_core::Sleep;
use handoff_core::outbound::{Outbound, OutboundError, sensitive};

use super::http::{header, post};
use super::jsonrpc;
use super::oauth::{AccessToken, parse_token};
use super::protocol::{self, Mode, UNSUPPORTED_VERSION};
use super::result::{Called, InputAnswers, classify};
use super::resume::{self, MAX_RESUMES, Position};
use super::server::{Credential, McpServer};

/// Pages of `tools/list` read at most (a server paging forever is cut off).
const MAX_PAGES: usize = 50;

/// A tool as the server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    /// Its MCP name.
    pub name: String,
    /// Its description (untrusted: it goes to the model as a tool description only).
    pub description: String,
    /// Its `inputSchema`.
    pub input_schema: Value,
}

/// Why a request failed, as far as "did the server act?" goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpError {
    /// Nothing reached the server.
    NotSent(String),
    /// The server refused with a JSON-RPC error: nothing was done.
    Rpc(i64, String),
    /// Sent, and no whole answer came back: it may have acted.
    InDoubt(String),
    /// The server answered with something unusable (an HTTP error, garbage, too much).
    Unusable(String),
}

impl std::fmt::Display for McpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpError::NotSent(why) | McpError::InDoubt(why) | McpError::Unusable(why) => {
                f.write_str(why)
            }
            McpError::Rpc(code, message) => write!(f, "MCP error {code}: {message}"),
        }
    }
}

/// Whether the server may have acted: a refused URL (the outbound guard), a name that
/// did not resolve or a refused connection sent nothing; a timeout or a broken
/// connection after sending is in doubt; an over-long answer did come (unusable).
impl From<OutboundError> for McpError {
    fn from(error: OutboundError) -> Self {
        match error {
            OutboundError::Refused(why) | OutboundError::NotSent(why) => {
                McpError::NotSent(format!("not sent: {why}"))
            }
            OutboundError::InDoubt(why) => McpError::InDoubt(format!("no answer: {why}")),
            too_large @ OutboundError::TooLarge(_) => McpError::Unusable(too_large.to_string()),
        }
    }
}

#[derive(Debug, Default)]
struct State {
    mode: Option<Mode>,
    tools: Option<Vec<ListedTool>>,
    /// The access token of a server reached with client credentials.
    token: Option<AccessToken>,
    next_id: u64,
}

/// One request's clock and time limit.
#[derive(Debug, Clone, Copy)]
struct Budget {
    now_ms: u64,
    timeout_ms: u64,
}

/// A server, its session and its tools on this instance.
#[derive(Debug)]
pub struct McpConnection {
    server: McpServer,
    state: Arc<Mutex<State>>,
    sleep: Timer,
}

/// The timer a resumed stream waits on (the host's), once the connection has one.
#[derive(Default)]
struct Timer(Mutex<Option<Arc<dyn Sleep>>>);

impl std::fmt::Debug for Timer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Timer")
    }
}

/// The state of every server connected with [`McpConnection::shared`] in this process (a
/// Worker isolate), by server name, URL and credential.
static SHARED: LazyLock<Mutex<HashMap<String, Arc<Mutex<State>>>>> = LazyLock::new(Mutex::default);

impl McpConnection {
    /// Not connected yet: the first request initialises. The session, tool list and
    /// access token live as long as this value.
    pub fn new(server: McpServer) -> Self {
        McpConnection {
            server,
            state: Arc::default(),
            sleep: Timer::default(),
        }
    }

    /// Like [`McpConnection::new`], with the session, tool list and access token shared by
    /// every connection to the same server (name, URL and credential) in this process:
    /// for hosts that build their agent per request (Workers), so an instance keeps them
    /// across requests.
    pub fn shared(server: McpServer) -> Self {
        let key = server.identity();
        let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        let state = shared.entry(key).or_default().clone();
        McpConnection {
            server,
            state,
            sleep: Timer::default(),
        }
    }

    /// The host's timer: with one, an SSE answer the server closed before the response is
    /// resumed after its `retry` delay ([`super::resume`]); without, that is an unusable
    /// answer. The agent hands its runtime's timer over at each run.
    pub fn set_sleep(&self, sleep: Arc<dyn Sleep>) {
        *self.sleep.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(sleep);
    }

    /// The server's settings.
    pub fn server(&self) -> &McpServer {
        &self.server
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The server's tools: cached after the first listing that succeeded, listed again
    /// once the server said its list changed or a call was refused. `now_ms` is the
    /// runtime's clock (access tokens expire), `timeout_ms` the limit per request.
    pub async fn tools(
        &self,
        http: &dyn Outbound,
        now_ms: u64,
        timeout_ms: u64,
    ) -> Result<Vec<ListedTool>, McpError> {
        let budget = Budget { now_ms, timeout_ms };
        let cached = self.state().tools.clone();
        if let Some(tools) = cached {
            return Ok(tools);
        }
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({ "cursor": cursor }),
                None => json!({}),
            };
            let page = self.rpc(http, "tools/list", None, params, budget).await?;
            let listed = page.get("tools").and_then(Value::as_array).ok_or_else(|| {
                McpError::Unusable("tools/list answered without tools".to_owned())
            })?;
            tools.extend(listed.iter().filter_map(|tool| {
                Some(ListedTool {
                    name: tool.get("name")?.as_str()?.to_owned(),
                    description: tool
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    input_schema: tool
                        .get("inputSchema")
                        .filter(|s| s.is_object())
                        .cloned()
                        .unwrap_or_else(|| json!({ "type": "object" })),
                })
            }));
            cursor = page
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if cursor.is_none() {
                break;
            }
        }
        self.state().tools = Some(tools.clone());
        Ok(tools)
    }

    /// Calls `tool` with `arguments`; `idempotency_key` goes along in `_meta` for a
    /// server that can use it (the same key when an in-doubt call is re-driven). `answers`
    /// make it the retry of an `input_required` result (2026-07-28): the same tool and
    /// arguments with `inputResponses` and the `requestState` echoed.
    #[allow(clippy::too_many_arguments)]
    pub async fn call(
        &self,
        http: &dyn Outbound,
        tool: &str,
        arguments: Value,
        idempotency_key: &str,
        answers: Option<&InputAnswers>,
        now_ms: u64,
        timeout_ms: u64,
    ) -> Result<Called, McpError> {
        let budget = Budget { now_ms, timeout_ms };
        let mut params = json!({
            "name": tool,
            "arguments": arguments,
            "_meta": { "idempotencyKey": idempotency_key },
        });
        if let Some(answers) = answers {
            params["inputResponses"] = Value::Object(answers.input_responses.clone());
            if let Some(state) = &answers.request_state {
                params["requestState"] = json!(state);
            }
        }
        let result = self
            .rpc(http, "tools/call", Some(tool), params, budget)
            .await;
        if let Err(McpError::Rpc(..)) = &result {
            // An unknown or disabled tool: the list this instance holds may be stale.
            self.state().tools = None;
        }
        classify(&result?).map_err(McpError::Unusable)
    }

    /// One request in the way the server speaks, found out first when this instance does
    /// not know it yet, and once more when the server forgot the session or the revision.
    async fn rpc(
        &self,
        http: &dyn Outbound,
        method: &str,
        name: Option<&str>,
        params: Value,
        budget: Budget,
    ) -> Result<Value, McpError> {
        let mut retried = false;
        loop {
            // Read first: the guard must not live across the probe below.
            let current = self.state().mode.clone();
            let mode = match current {
                Some(mode) => mode,
                None => self.connect(http, budget).await?,
            };
            let id = self.next_id();
            let sent = match mode {
                Mode::Stateless => protocol::with_meta(params.clone()),
                Mode::Session { .. } => params.clone(),
            };
            let body = jsonrpc::request(id, method, sent);
            let response = self.post(http, &mode, method, name, body, budget).await?;
            let forgotten = matches!(&mode, Mode::Session { id: Some(_), .. })
                && matches!(response.status().as_u16(), 404 | 400);
            let answer = match forgotten {
                true => Err(McpError::Unusable("session forgotten".into())),
                false => self.answer(&response, id),
            };
            let unsupported = mode == Mode::Stateless
                && matches!(&answer, Err(McpError::Rpc(UNSUPPORTED_VERSION, _)));
            if (forgotten || unsupported) && !retried {
                retried = true;
                let mut state = self.state();
                if state.mode.as_ref() == Some(&mode) {
                    state.mode = None;
                }
                continue;
            }
            if forgotten {
                return self.answer(&response, id);
            }
            if let (Err(McpError::Unusable(_)), Mode::Session { .. }) = (&answer, &mode) {
                let mut position = Position::default();
                let streamed = header(&response, "content-type")
                    .is_some_and(|t| t.starts_with("text/event-stream"));
                if streamed && response.status().is_success() {
                    position.read(response.body());
                }
                if position.last_event_id.is_some() {
                    return self.resume(http, &mode, id, position, budget).await;
                }
            }
            return answer;
        }
    }

    /// The response to request `id`, from GET streams resuming where `position` says the
    /// POST's stream stopped.
    async fn resume(
        &self,
        http: &dyn Outbound,
        mode: &Mode,
        id: u64,
        mut position: Position,
        budget: Budget,
    ) -> Result<Value, McpError> {
        let timer = self
            .sleep
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some(timer) = timer else {
            return Err(McpError::Unusable(
                "the stream closed before the response (no timer to resume it)".to_owned(),
            ));
        };
        let in_doubt = |why: String| McpError::InDoubt(format!("resuming the stream: {why}"));
        for _ in 0..MAX_RESUMES {
            timer.sleep(position.wait_ms()).await;
            let mut request =
                http::Request::get(&self.server.url).header("accept", "text/event-stream");
            for (name, value) in protocol::headers(mode, "", None) {
                request = request.header(name, value);
            }
            if let Some(last) = &position.last_event_id {
                request = request.header("last-event-id", last);
            }
            if let Some(token) = self.access_token(http, budget).await? {
                let value = sensitive(&format!("Bearer {token}"))
                    .map_err(|_| in_doubt("the token is not a valid header value".into()))?;
                request = request.header("authorization", value);
            }
            let request = request
                .body(Vec::new())
                .map_err(|e| in_doubt(e.to_string()))?;
            let followed = resume::follow(http, request, id, budget.timeout_ms, &mut position)
                .await
                .map_err(|e| in_doubt(e.to_string()))?;
            if let Some(message) = followed {
                let body = serde_json::to_vec(&message).unwrap_or_default();
                let parsed = jsonrpc::parse("application/json", &body, id);
                let answer = parsed.map_err(McpError::Unusable)?;
                return answer.outcome.map_err(|(code, m)| McpError::Rpc(code, m));
            }
        }
        Err(in_doubt(format!(
            "{MAX_RESUMES} reconnections did not bring the response"
        )))
    }

    /// How the server speaks: `server/discover` first, `initialize` when it does not
    /// offer 2026-07-28.
    async fn connect(&self, http: &dyn Outbound, budget: Budget) -> Result<Mode, McpError> {
        let id = self.next_id();
        let probe = protocol::with_meta(json!({}));
        let body = jsonrpc::request(id, "server/discover", probe);
        let response = self
            .post(
                http,
                &Mode::Stateless,
                "server/discover",
                None,
                body,
                budget,
            )
            .await?;
        let discovered = match self.answer(&response, id) {
            Ok(result) => protocol::speaks_stateless(&result),
            Err(error @ (McpError::NotSent(_) | McpError::InDoubt(_))) => return Err(error),
            Err(_) => false,
        };
        if !discovered {
            return self.initialize(http, budget).await;
        }
        self.state().mode = Some(Mode::Stateless);
        Ok(Mode::Stateless)
    }

    async fn initialize(&self, http: &dyn Outbound, budget: Budget) -> Result<Mode, McpError> {
        let id = self.next_id();
        let body = jsonrpc::request(id, "initialize", protocol::initialize_params());
        let unopened = Mode::Session {
            id: None,
            protocol: String::new(),
        };
        let response = self
            .post(http, &unopened, "initialize", None, body, budget)
            .await?;
        let result = self.answer(&response, id)?;
        let mode = Mode::Session {
            id: header(&response, "mcp-session-id"),
            protocol: result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or(protocol::SESSION_PROTOCOL_VERSION)
                .to_owned(),
        };
        let initialized = jsonrpc::notification("notifications/initialized");
        let ack = self
            .post(
                http,
                &mode,
                "notifications/initialized",
                None,
                initialized,
                budget,
            )
            .await?;
        if !ack.status().is_success() {
            return Err(McpError::Unusable(format!(
                "notifications/initialized answered HTTP {}",
                ack.status().as_u16()
            )));
        }
        self.state().mode = Some(mode.clone());
        Ok(mode)
    }

    fn next_id(&self) -> u64 {
        let mut state = self.state();
        state.next_id += 1;
        state.next_id
    }

    /// One POST with the server's credential; a 401 to a client-credentials token
    /// (revoked, expired early) gets a fresh token and the POST again, once: a request
    /// refused for its credential was not processed.
    async fn post(
        &self,
        http: &dyn Outbound,
        mode: &Mode,
        method: &str,
        name: Option<&str>,
        body: Vec<u8>,
        budget: Budget,
    ) -> Result<http::Response<Vec<u8>>, McpError> {
        let headers = protocol::headers(mode, method, name);
        let oauth = matches!(
            self.server.credential,
            Some(Credential::ClientCredentials(_))
        );
        if !oauth {
            return self.post_once(http, &headers, body, budget).await;
        }
        let response = self.post_once(http, &headers, body.clone(), budget).await?;
        if response.status() == http::StatusCode::UNAUTHORIZED {
            self.state().token = None;
            return self.post_once(http, &headers, body, budget).await;
        }
        Ok(response)
    }

    async fn post_once(
        &self,
        http: &dyn Outbound,
        headers: &[(&'static str, String)],
        body: Vec<u8>,
        budget: Budget,
    ) -> Result<http::Response<Vec<u8>>, McpError> {
        let not_sent = |why: &str| McpError::NotSent(format!("not sent: {why}"));
        let mut request = http::Request::post(&self.server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(token) = self.access_token(http, budget).await? {
            let value = sensitive(&format!("Bearer {token}"))
                .map_err(|_| not_sent("the token is not a valid header value"))?;
            request = request.header("authorization", value);
        }
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let request = request.body(body).map_err(|e| not_sent(&e.to_string()))?;
        Ok(post(http, request, budget.timeout_ms).await?)
    }

    /// The bearer token to send: the configured one, or a client-credentials token
    /// (cached until shortly before it expires). A token endpoint that fails means the
    /// MCP request was never sent, whatever happened to the token request.
    async fn access_token(
        &self,
        http: &dyn Outbound,
        budget: Budget,
    ) -> Result<Option<String>, McpError> {
        let credentials = match &self.server.credential {
            None => return Ok(None),
            Some(Credential::Bearer(token)) => return Ok(Some(token.clone())),
            Some(Credential::ClientCredentials(credentials)) => credentials,
        };
        let cached = self.state().token.clone();
        if let Some(token) = cached.filter(|t| t.usable_at(budget.now_ms)) {
            return Ok(Some(token.value));
        }
        let not_sent = |why: String| McpError::NotSent(format!("no access token: {why}"));
        let request = credentials
            .token_request(&self.server.url)
            .map_err(not_sent)?;
        let response = post(http, request, budget.timeout_ms)
            .await
            .map_err(|e| not_sent(McpError::from(e).to_string()))?;
        let token = parse_token(&response, budget.now_ms).map_err(not_sent)?;
        self.state().token = Some(token.clone());
        Ok(Some(token.value))
    }

    /// The result of request `id` in `response`.
    fn answer(&self, response: &http::Response<Vec<u8>>, id: u64) -> Result<Value, McpError> {
        let content_type = header(response, "content-type").unwrap_or_default();
        let parsed = jsonrpc::parse(&content_type, response.body(), id);
        if let Ok(answer) = &parsed
            && answer.tools_changed
        {
            self.state().tools = None;
        }
        match parsed {
            Ok(answer) => answer.outcome.map_err(|(code, m)| McpError::Rpc(code, m)),
            Err(_) if !response.status().is_success() => Err(McpError::Unusable(format!(
                "HTTP {}",
                response.status().as_u16()
            ))),
            Err(garbage) => Err(McpError::Unusable(garbage)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_was_not_sent_and_a_timeout_is_in_doubt() {
        let refused = McpError::from(OutboundError::Refused("10.0.0.1 is private".into()));
        assert_eq!(
            refused,
            McpError::NotSent("not sent: 10.0.0.1 is private".into())
        );
        let late = McpError::from(OutboundError::InDoubt("timed out".into()));
        assert_eq!(late, McpError::InDoubt("no answer: timed out".into()));
        let huge = McpError::from(OutboundError::TooLarge(crate::mcp::MAX_ANSWER_BYTES));
        assert_eq!(huge, McpError::Unusable("answer over 8388608 bytes".into()));
    }
}
