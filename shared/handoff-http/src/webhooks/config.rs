//! The operator's webhook settings, read from the environment and refused whole when
//! malformed (the message names the variable, never a secret or a URL: a Slack webhook's
//! URL is a credential too).

use base64::Engine as _;

/// `name=url,…`: where events are posted.
pub const URLS_VAR: &str = "HANDOFF_WEBHOOK_URLS";
/// `name=secret,…`: each endpoint's signing secret (`whsec_` + base64, or raw text).
pub const SECRETS_VAR: &str = "HANDOFF_WEBHOOK_SECRETS";
/// `true`: loopback addresses and `http://` are admitted (tests only).
pub const ALLOW_LOOPBACK_VAR: &str = "HANDOFF_WEBHOOK_ALLOW_LOOPBACK";
/// `slack`: a Slack-compatible `{"text"}` message instead of the JSON event.
pub const FORMAT_VAR: &str = "HANDOFF_WEBHOOK_FORMAT";

/// What is posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WebhookFormat {
    /// The event, `{"type", "timestamp", "data"}`, signed (Standard Webhooks).
    #[default]
    Standard,
    /// `{"text"}` with the approval link (Slack's incoming webhooks), signed the same way.
    Slack,
}

/// A signing secret: its bytes never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub(crate) Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// One configured receiver.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Its name (what `done` and the deliveries list record).
    pub name: String,
    pub(crate) url: String,
    pub(crate) secret: Option<Secret>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("name", &self.name)
            .field("signed", &self.secret.is_some())
            .finish_non_exhaustive()
    }
}

/// The webhook settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookConfig {
    /// The receivers, in the order configured.
    pub endpoints: Vec<Endpoint>,
    /// What is posted.
    pub format: WebhookFormat,
    /// Whether loopback and `http://` URLs are admitted.
    pub allow_loopback: bool,
}

impl WebhookConfig {
    /// The settings, `None` without `HANDOFF_WEBHOOK_URLS`; `Err` names the malformed
    /// variable.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, String> {
        let allow_loopback = allows_loopback(&lookup)?;
        let format = match lookup(FORMAT_VAR).as_deref().map(str::trim) {
            None | Some("" | "standard") => WebhookFormat::Standard,
            Some("slack") => WebhookFormat::Slack,
            Some(other) => {
                return Err(format!(
                    "{FORMAT_VAR}: `{other}` is not a format (slack, or unset for the JSON event)"
                ));
            }
        };
        let secrets = match lookup(SECRETS_VAR) {
            Some(text) => pairs(SECRETS_VAR, &text)?,
            None => Vec::new(),
        };
        let Some(urls) = lookup(URLS_VAR).filter(|v| !v.trim().is_empty()) else {
            if let Some((name, _)) = secrets.first() {
                return Err(format!(
                    "{SECRETS_VAR}: endpoint `{name}` has no URL in {URLS_VAR}"
                ));
            }
            return Ok(None);
        };
        let mut endpoints = Vec::new();
        for (name, url) in pairs(URLS_VAR, &urls)? {
            check_url(&name, &url, allow_loopback)?;
            endpoints.push(Endpoint {
                name,
                url,
                secret: None,
            });
        }
        for (name, text) in secrets {
            let Some(endpoint) = endpoints.iter_mut().find(|e| e.name == name) else {
                return Err(format!(
                    "{SECRETS_VAR}: endpoint `{name}` has no URL in {URLS_VAR}"
                ));
            };
            endpoint.secret = Some(secret(&name, &text)?);
        }
        if format == WebhookFormat::Standard
            && let Some(unsigned) = endpoints.iter().find(|e| e.secret.is_none())
        {
            return Err(format!(
                "{SECRETS_VAR}: endpoint `{}` has no secret (every JSON event is signed; \
                 only {FORMAT_VAR}=slack may post unsigned)",
                unsigned.name
            ));
        }
        Ok(Some(WebhookConfig {
            endpoints,
            format,
            allow_loopback,
        }))
    }
}

/// `HANDOFF_WEBHOOK_ALLOW_LOOPBACK`: `true`/`1` admits loopback, `false`/`0`/unset not.
pub fn allows_loopback(lookup: impl Fn(&str) -> Option<String>) -> Result<bool, String> {
    match lookup(ALLOW_LOOPBACK_VAR).as_deref().map(str::trim) {
        None | Some("" | "0" | "false") => Ok(false),
        Some("1" | "true") => Ok(true),
        Some(_) => Err(format!("{ALLOW_LOOPBACK_VAR}: true or false")),
    }
}

/// Refuses to start on malformed webhook settings (hosts call it before serving).
pub fn check_webhooks(lookup: impl Fn(&str) -> Option<String>) -> Result<(), String> {
    WebhookConfig::from_lookup(lookup).map(|_| ())
}

/// `name=value,…`: names are letters, digits, `-` and `_`, each once.
fn pairs(var: &str, text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (n, entry) in text.split(',').map(str::trim).enumerate() {
        if entry.is_empty() {
            continue;
        }
        let Some((name, value)) = entry.split_once('=') else {
            return Err(format!("{var}: entry {} is not name=value", n + 1));
        };
        let (name, value) = (name.trim(), value.trim());
        let valid = !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(format!(
                "{var}: entry {} needs a name of letters, digits, - or _",
                n + 1
            ));
        }
        if value.is_empty() {
            return Err(format!("{var}: `{name}` has an empty value"));
        }
        if out.iter().any(|(seen, _)| seen == name) {
            return Err(format!("{var}: `{name}` is named twice"));
        }
        out.push((name.to_owned(), value.to_owned()));
    }
    Ok(out)
}

/// `https://host/…`, or `http://` with loopback admitted. Where it resolves to is the
/// outbound guard's to check, when it is sent.
fn check_url(name: &str, url: &str, allow_loopback: bool) -> Result<(), String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|_| format!("{URLS_VAR}: the URL of `{name}` is not a URL"))?;
    match uri.scheme_str() {
        Some("https") => {}
        Some("http") if allow_loopback => {}
        _ => {
            return Err(format!(
                "{URLS_VAR}: the URL of `{name}` must be https ({ALLOW_LOOPBACK_VAR}=true \
                 admits http://, tests only)"
            ));
        }
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(format!("{URLS_VAR}: the URL of `{name}` has no host"));
    }
    Ok(())
}

/// `whsec_` + base64 is the key's bytes (as Standard Webhooks libraries read it); any
/// other text is used as its UTF-8 bytes.
fn secret(name: &str, text: &str) -> Result<Secret, String> {
    match text.strip_prefix("whsec_") {
        Some(encoded) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
            .filter(|bytes| !bytes.is_empty())
            .map(Secret)
            .ok_or_else(|| {
                format!("{SECRETS_VAR}: the secret of `{name}` is not base64 after whsec_")
            }),
        None => Ok(Secret(text.as_bytes().to_vec())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(vars: &[(&str, &str)]) -> Result<Option<WebhookConfig>, String> {
        WebhookConfig::from_lookup(|key| {
            vars.iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn endpoints_are_read_with_their_secrets() {
        let config = parse(&[
            (
                URLS_VAR,
                "ops=https://hooks.example/a?x=1, audit=https://b.example/",
            ),
            (SECRETS_VAR, "ops=whsec_c2VjcmV0,audit=plain-text"),
        ])
        .unwrap()
        .unwrap();
        let names: Vec<_> = config.endpoints.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["ops", "audit"]);
        assert_eq!(config.endpoints[0].url, "https://hooks.example/a?x=1");
        assert_eq!(config.endpoints[0].secret, Some(Secret(b"secret".to_vec())));
        assert_eq!(
            config.endpoints[1].secret,
            Some(Secret(b"plain-text".to_vec()))
        );
        assert_eq!(config.format, WebhookFormat::Standard);
        assert_eq!(parse(&[]).unwrap(), None);
    }

    #[test]
    fn malformed_settings_name_their_variable_and_never_a_secret_or_url() {
        let cases: [&[(&str, &str)]; 9] = [
            &[(URLS_VAR, "ops")],
            &[(URLS_VAR, "o p=https://a.example"), (SECRETS_VAR, "x=y")],
            &[(URLS_VAR, "ops=http://secret-host.example/T0KEN")],
            &[(URLS_VAR, "ops=https://a.example,ops=https://b.example")],
            &[(URLS_VAR, "ops=https://a.example")],
            &[
                (URLS_VAR, "ops=https://a.example"),
                (SECRETS_VAR, "ops=whsec_!!T0KEN!!"),
            ],
            &[
                (URLS_VAR, "ops=https://a.example"),
                (SECRETS_VAR, "ops=s,other=T0KEN"),
            ],
            &[
                (URLS_VAR, "ops=https://a.example"),
                (SECRETS_VAR, "ops=s"),
                (FORMAT_VAR, "xml"),
            ],
            &[
                (URLS_VAR, "ops=https://a.example"),
                (SECRETS_VAR, "ops=s"),
                (ALLOW_LOOPBACK_VAR, "yes"),
            ],
        ];
        for vars in cases {
            let error = parse(vars).expect_err(&format!("{vars:?} refused"));
            assert!(error.starts_with("HANDOFF_WEBHOOK_"), "{error}");
            assert!(
                !error.contains("T0KEN") && !error.contains("secret-host"),
                "{error}"
            );
        }
    }

    #[test]
    fn slack_may_post_unsigned_and_loopback_needs_its_setting() {
        let config = parse(&[
            (URLS_VAR, "team=http://127.0.0.1:9/hook"),
            (FORMAT_VAR, "slack"),
            (ALLOW_LOOPBACK_VAR, "true"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(config.format, WebhookFormat::Slack);
        assert!(config.allow_loopback && config.endpoints[0].secret.is_none());
        assert!(format!("{config:?}").contains("team"));
        assert!(
            !format!("{config:?}").contains("127.0.0.1"),
            "no URL in Debug"
        );
    }
}
