//! What a host provides to reach a model: one streaming POST.

use std::collections::BTreeMap;

use agui_protocol::{Message, Tool};
use async_trait::async_trait;
use futures::stream::BoxStream;
use serde_json::Value;

use crate::error::ModelError;
use crate::sse::FrameParser;
use crate::{anthropic, openai};

/// One streaming request to a provider.
#[derive(Clone, PartialEq)]
pub struct ModelRequest {
    /// The endpoint (`{base}/chat/completions`, `{base}/v1/messages`).
    pub url: String,
    /// Headers, the API key among them (never log this struct's headers).
    pub headers: BTreeMap<String, String>,
    /// The JSON body.
    pub body: Value,
    /// Give up after this long (the run's remaining budget), if set.
    pub timeout_ms: Option<u64>,
}

impl std::fmt::Debug for ModelRequest {
    /// Without header values: they carry the API key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelRequest")
            .field("url", &self.url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("timeout_ms", &self.timeout_ms)
            .finish_non_exhaustive()
    }
}

/// The body of a streamed answer, chunk by chunk.
pub type ByteStream = BoxStream<'static, Result<Vec<u8>, ModelError>>;

/// A host's HTTP client for model calls: a native client, or `fetch` on Workers. A
/// non-2xx answer is an error built with [`ModelError::from_http`]; a timeout or a
/// connection failure is [`ModelError::Unavailable`].
#[async_trait]
pub trait ModelClient: Send + Sync + 'static {
    /// Sends `request` and streams the answer's body.
    async fn stream(&self, request: ModelRequest) -> Result<ByteStream, ModelError>;
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

    /// The streaming request for one turn.
    pub fn request(
        &self,
        system: Option<&str>,
        messages: &[Message],
        tools: &[Tool],
        timeout_ms: Option<u64>,
    ) -> ModelRequest {
        let mut headers = BTreeMap::from([
            ("content-type".to_owned(), "application/json".to_owned()),
            ("accept".to_owned(), "text/event-stream".to_owned()),
        ]);
        let (url, body) = match self {
            Provider::OpenAi {
                base_url,
                api_key,
                model,
            } => {
                if !api_key.is_empty() {
                    headers.insert("authorization".into(), format!("Bearer {api_key}"));
                }
                let body = openai::request_body(model, system, messages, tools);
                (format!("{base_url}/chat/completions"), body)
            }
            Provider::Anthropic {
                base_url,
                api_key,
                model,
                max_tokens,
            } => {
                headers.insert("x-api-key".into(), api_key.clone());
                headers.insert("anthropic-version".into(), "2023-06-01".into());
                let body = anthropic::request_body(model, system, messages, tools, *max_tokens);
                (format!("{base_url}/v1/messages"), body)
            }
        };
        ModelRequest {
            url,
            headers,
            body,
            timeout_ms,
        }
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
