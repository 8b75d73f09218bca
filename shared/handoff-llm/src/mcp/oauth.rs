//! OAuth 2.0 client credentials for an MCP server (RFC 6749 §4.4), without I/O.
//!
//! The agent is a confidential client of the server's authorization server: it asks the
//! token endpoint for an access token with its own client id and secret (HTTP Basic, the
//! method every authorization server must support), names the MCP server it wants the
//! token for (`resource`, RFC 8707, as the MCP authorization spec requires, and
//! `audience`, the parameter Auth0-style servers read), and sends the token as a bearer.
//! Tokens are cached per instance until shortly before `expires_in` runs out, and fetched
//! again when the MCP server answers 401.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use handoff_core::outbound::sensitive;

/// A token is fetched again this long before the end of its `expires_in`, so a request
/// does not leave with a token that expires on the way.
pub const EXPIRY_MARGIN_MS: u64 = 30_000;

/// An MCP server's OAuth client registration for the client credentials grant.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    pub(crate) token_url: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: String,
    pub(crate) audience: Option<String>,
    pub(crate) scope: Option<String>,
}

impl std::fmt::Debug for ClientCredentials {
    /// Without the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("token_url", &self.token_url)
            .field("client_id", &self.client_id)
            .field("audience", &self.audience)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl ClientCredentials {
    /// The client `client_id` with `client_secret` at the token endpoint `token_url`
    /// (e.g. `https://auth.example.com/oauth/token`).
    pub fn new(token_url: &str, client_id: &str, client_secret: &str) -> Self {
        ClientCredentials {
            token_url: token_url.to_owned(),
            client_id: client_id.to_owned(),
            client_secret: client_secret.to_owned(),
            audience: None,
            scope: None,
        }
    }

    /// The audience the token is for (the `audience` parameter); without one, the MCP
    /// server's URL. The server's URL always goes as `resource`.
    #[must_use]
    pub fn audience(mut self, audience: &str) -> Self {
        self.audience = Some(audience.to_owned());
        self
    }

    /// The scopes to ask for, space-separated.
    #[must_use]
    pub fn scope(mut self, scope: &str) -> Self {
        self.scope = Some(scope.to_owned());
        self
    }

    /// The token request for the MCP server at `server_url` (its `Authorization` marked
    /// sensitive); the error says why none can be made.
    pub(crate) fn token_request(&self, server_url: &str) -> Result<http::Request<Vec<u8>>, String> {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "client_credentials");
        form.append_pair("resource", server_url);
        form.append_pair("audience", self.audience.as_deref().unwrap_or(server_url));
        if let Some(scope) = &self.scope {
            form.append_pair("scope", scope);
        }
        // RFC 6749 §2.3.1: both parts form-encoded before Basic encoding.
        let encode = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let basic = STANDARD.encode(format!(
            "{}:{}",
            encode(&self.client_id),
            encode(&self.client_secret)
        ));
        let basic = sensitive(&format!("Basic {basic}"))
            .map_err(|_| "the client credentials are not a valid header value".to_owned())?;
        http::Request::post(&self.token_url)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .header("authorization", basic)
            .body(form.finish().into_bytes())
            .map_err(|e| format!("token URL: {e}"))
    }
}

/// An access token and when this instance stops using it.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct AccessToken {
    pub(crate) value: String,
    pub(crate) renew_at_ms: Option<u64>,
}

impl std::fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessToken")
            .field("renew_at_ms", &self.renew_at_ms)
            .finish_non_exhaustive()
    }
}

impl AccessToken {
    pub(crate) fn usable_at(&self, now_ms: u64) -> bool {
        self.renew_at_ms.is_none_or(|at| now_ms < at)
    }
}

/// The token in the endpoint's answer, fetched at `now_ms`; the error says why not, in
/// words safe to log (the endpoint's `error` code, never the body).
pub(crate) fn parse_token(
    response: &http::Response<Vec<u8>>,
    now_ms: u64,
) -> Result<AccessToken, String> {
    let status = response.status().as_u16();
    let body: Option<Value> = serde_json::from_slice(response.body()).ok();
    let field = |name: &str| body.as_ref().and_then(|b| b.get(name));
    if !(200..300).contains(&status) {
        let code = field("error")
            .and_then(Value::as_str)
            .unwrap_or("no error code");
        // Only the registered codes' characters (RFC 6749 §5.2), so nothing else leaks.
        let code: String = code
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .take(64)
            .collect();
        return Err(format!("token endpoint answered HTTP {status}: {code}"));
    }
    let value = field("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or("token endpoint answered without an access_token")?;
    let kind = field("token_type").and_then(Value::as_str).unwrap_or("");
    if !kind.eq_ignore_ascii_case("bearer") {
        return Err(format!(
            "token endpoint answered token_type {kind:?}, not Bearer"
        ));
    }
    let renew_at_ms = field("expires_in").and_then(Value::as_u64).map(|secs| {
        let lifetime = secs.saturating_mul(1_000);
        // A short-lived token is used for half its life rather than not at all.
        now_ms + lifetime.saturating_sub(EXPIRY_MARGIN_MS.min(lifetime / 2))
    });
    Ok(AccessToken {
        value: value.to_owned(),
        renew_at_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, body: &str) -> http::Response<Vec<u8>> {
        http::Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(body.as_bytes().to_vec())
            .unwrap()
    }

    #[test]
    fn the_request_is_basic_authenticated_and_names_the_server() {
        let credentials = ClientCredentials::new("https://auth.example/token", "agent:1", "p&ss=")
            .scope("tools:call");
        let request = credentials
            .token_request("https://mcp.example/mcp")
            .unwrap();
        let body = String::from_utf8(request.body().clone()).unwrap();
        assert_eq!(
            body,
            "grant_type=client_credentials&resource=https%3A%2F%2Fmcp.example%2Fmcp\
             &audience=https%3A%2F%2Fmcp.example%2Fmcp&scope=tools%3Acall"
        );
        let authorization = &request.headers()["authorization"];
        assert!(authorization.is_sensitive(), "kept out of Debug output");
        let basic = authorization
            .to_str()
            .unwrap()
            .strip_prefix("Basic ")
            .unwrap();
        let decoded = String::from_utf8(STANDARD.decode(basic).unwrap()).unwrap();
        assert_eq!(decoded, "agent%3A1:p%26ss%3D");
        assert_eq!(request.uri(), "https://auth.example/token");
        assert!(!format!("{credentials:?}").contains("p&ss"));
        let aimed = credentials
            .audience("urn:billing")
            .token_request("https://mcp.example/mcp")
            .unwrap();
        let body = String::from_utf8(aimed.into_body()).unwrap();
        assert!(body.contains("&audience=urn%3Abilling"), "{body}");
    }

    #[test]
    fn tokens_are_renewed_before_they_expire() {
        let token = parse_token(
            &answer(
                200,
                r#"{"access_token":"t0k","token_type":"bearer","expires_in":3600}"#,
            ),
            1_000,
        )
        .unwrap();
        assert_eq!(token.value, "t0k");
        assert!(token.usable_at(1_000 + 3_600_000 - EXPIRY_MARGIN_MS - 1));
        assert!(!token.usable_at(1_000 + 3_600_000 - EXPIRY_MARGIN_MS));
        let short = parse_token(
            &answer(
                200,
                r#"{"access_token":"t","token_type":"Bearer","expires_in":10}"#,
            ),
            0,
        )
        .unwrap();
        assert!(short.usable_at(4_999) && !short.usable_at(5_000));
        let forever = parse_token(
            &answer(200, r#"{"access_token":"t","token_type":"Bearer"}"#),
            0,
        )
        .unwrap();
        assert!(forever.usable_at(u64::MAX));
    }

    #[test]
    fn refusals_say_the_code_and_nothing_else() {
        let error = parse_token(
            &answer(
                401,
                r#"{"error":"invalid_client","error_description":"secret s3cr3t wrong"}"#,
            ),
            0,
        )
        .unwrap_err();
        assert_eq!(error, "token endpoint answered HTTP 401: invalid_client");
        let error = parse_token(&answer(400, "<html>s3cr3t</html>"), 0).unwrap_err();
        assert!(!error.contains("s3cr3t"), "{error}");
        let error = parse_token(
            &answer(200, r#"{"access_token":"t","token_type":"mac"}"#),
            0,
        )
        .unwrap_err();
        assert!(error.contains("not Bearer"), "{error}");
        assert!(parse_token(&answer(200, r#"{"token_type":"Bearer"}"#), 0).is_err());
    }
}
