//! A model call: the provider's streaming POST, sent through the host's one outbound
//! client ([`Outbound`]).

use std::time::Duration;

use agui_protocol::{Message, Tool};
use futures::StreamExt;
use futures::stream::BoxStream;
use handoff_core::outbound::{Outbound, Timeout, read_capped, sensitive};

use crate::error::ModelError;
use crate::sse::FrameParser;
use crate::{anthropic, openai};

/// Largest error answer read (to log; never sent to a client).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// The body of a streamed answer, chunk by chunk.
pub type ModelStream = BoxStream<'static, Result<Vec<u8>, ModelError>>;

/// Sends a model `request` (from [`Provider::request`]) through the host's one outbound
/// client and streams the answer's body. A non-2xx answer is an error built with
/// [`ModelError::from_http`]; a timeout or a connection failure, before or during the
/// stream, is [`ModelError::Unavailable`].
pub async fn stream(
    client: &dyn Outbound,
    request: http::Request<Vec<u8>>,
) -> Result<ModelStream, ModelError> {
    let response = client
        .send(request)
        .await
        .map_err(|e| ModelError::Unavailable {
            detail: format!("model request failed: {e}"),
        })?;
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        let retry_after = ModelError::retry_after(|name| {
            let value = response.headers().get(name)?.to_str().ok()?;
            Some(value.to_owned())
        });
        let text = read_capped(response, MAX_ERROR_BODY)
            .await
            .map(|r| String::from_utf8_lossy(r.body()).into_owned())
            .unwrap_or_default();
        return Err(ModelError::from_http(status, retry_after.as_deref(), &text));
    }
    Ok(response
        .into_body()
        .map(|chunk| {
            chunk.map_err(|e| ModelError::Unavailable {
                detail: format!("model stream broke: {e}"),
            })
        })
        .boxed())
}

/// Which dialect, where, with which key and model.
#[derive(Clone, PartialEq, Eq)]
pub enum Provider {
    /// OpenAI-compatible Chat Completions; `base_url` like `https://api.openai.com/v1`
    /// (or a local `http://127.0.0.1:11434/v1`).
    OpenAi {
        /// Base URL, without the trailing `/chat/completions`.
        base_url: String,
        /// Bearer key (may be empty for a local server).
        api_key: String,
        /// Model name.
        model: String,
    },
    /// Anthropic Messages; `base_url` like `https://api.anthropic.com`.
    Anthropic {
        /// Base URL, without the trailing `/v1/messages`.
        base_url: String,
        /// `x-api-key`.
        api_key: String,
        /// Model name.
        model: String,
        /// `max_tokens` of each turn.
        max_tokens: u32,
    },
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, base_url, model) = match self {
            Provider::OpenAi {
                base_url, model, ..
            } => ("openai", base_url, model),
            Provider::Anthropic {
                base_url, model, ..
            } => ("anthropic", base_url, model),
        };
        write!(f, "Provider({kind}, {base_url}, {model})")
    }
}

impl Provider {
    /// The provider's name as OpenTelemetry's GenAI conventions spell it (`openai`,
    /// `anthropic`): the `provider` of the usage the agent reports.
    pub fn name(&self) -> &'static str {
        match self {
            Provider::OpenAi { .. } => "openai",
            Provider::Anthropic { .. } => "anthropic",
        }
    }

    /// The model asked for.
    pub fn model(&self) -> &str {
        match self {
            Provider::OpenAi { model, .. } | Provider::Anthropic { model, .. } => model,
        }
    }

    /// From the environment, as the providers' own SDKs read it: `kind` is `openai`
    /// (`OPENAI_API_KEY`, `OPENAI_BASE_URL`) or `anthropic` (`ANTHROPIC_API_KEY`,
    /// `ANTHROPIC_BASE_URL`); `model` picks the model. `None` without a key (a local
    /// OpenAI-compatible server needs only its base URL).
    pub fn from_lookup(
        kind: &str,
        model: Option<String>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Option<Self> {
        match kind {
            "openai" => {
                let base_url = lookup("OPENAI_BASE_URL");
                let api_key = lookup("OPENAI_API_KEY");
                if api_key.is_none() && base_url.is_none() {
                    return None;
                }
                Some(Provider::OpenAi {
                    base_url: trim(base_url.unwrap_or_else(|| "https://api.openai.com/v1".into())),
                    api_key: api_key.unwrap_or_default(),
                    model: model.unwrap_or_else(|| "gpt-4o-mini".into()),
                })
            }
            "anthropic" => Some(Provider::Anthropic {
                api_key: lookup("ANTHROPIC_API_KEY")?,
                base_url: trim(
                    lookup("ANTHROPIC_BASE_URL")
                        .unwrap_or_else(|| "https://api.anthropic.com".into()),
                ),
                model: model.unwrap_or_else(|| "claude-sonnet-4-5".into()),
                max_tokens: 4096,
            }),
            _ => None,
        }
    }

    /// The streaming request for one turn, given up after `timeout_ms` (the run's
    /// remaining budget) if set. The key's header is marked sensitive: the request's
    /// `Debug` does not show it. A base URL or key that cannot make a request is
    /// [`ModelError::Malformed`].
    pub fn request(
        &self,
        system: Option<&str>,
        messages: &[Message],
        tools: &[Tool],
        timeout_ms: Option<u64>,
    ) -> Result<http::Request<Vec<u8>>, ModelError> {
        let malformed = |what: &str, e: &dyn std::fmt::Display| ModelError::Malformed {
            detail: format!("{what}: {e}"),
        };
        let (url, key, body) = match self {
            Provider::OpenAi {
                base_url,
                api_key,
                model,
            } => {
                let key =
                    (!api_key.is_empty()).then(|| ("authorization", format!("Bearer {api_key}")));
                let body = openai::request_body(model, system, messages, tools);
                (format!("{base_url}/chat/completions"), key, body)
            }
            Provider::Anthropic {
                base_url,
                api_key,
                model,
                max_tokens,
            } => {
                let body = anthropic::request_body(model, system, messages, tools, *max_tokens);
                let key = Some(("x-api-key", api_key.clone()));
                (format!("{base_url}/v1/messages"), key, body)
            }
        };
        let mut request = http::Request::post(url)
            .header("content-type", "application/json")
            .header("accept", "text/event-stream");
        if let Provider::Anthropic { .. } = self {
            request = request.header("anthropic-version", "2023-06-01");
        }
        if let Some((name, value)) = key {
            let value = sensitive(&value).map_err(|_| ModelError::Malformed {
                detail: "the API key is not a valid header value".into(),
            })?;
            request = request.header(name, value);
        }
        let body = serde_json::to_vec(&body).map_err(|e| malformed("request body", &e))?;
        let mut request = request
            .body(body)
            .map_err(|e| malformed("model request", &e))?;
        if let Some(ms) = timeout_ms {
            request
                .extensions_mut()
                .insert(Timeout(Duration::from_millis(ms)));
        }
        Ok(request)
    }

    /// A fresh parser for this dialect's stream.
    pub fn parser(&self) -> Box<dyn FrameParser + Send> {
        match self {
            Provider::OpenAi { .. } => Box::new(openai::ChunkParser::default()),
            Provider::Anthropic { .. } => Box::new(anthropic::EventParser),
        }
    }
}

fn trim(url: String) -> String {
    url.trim_end_matches('/').to_owned()
}
