#![doc = include_str!("../README.md")]

mod auth;
pub mod client;
pub mod config;
mod digest;
pub mod error;
#[cfg(feature = "http")]
pub mod http;
mod jwt;
mod merge;
mod receiver;
pub mod records;

pub use a2a_types;
pub use auth::TOKEN_HEADERS;
pub use client::{A2aClient, ClientError, Delegate, Delegation, TokenSource};
pub use config::{ExpectedAuth, JwtAlgorithm, JwtAuth, ReceiverConfig, Subscription};
pub use error::{AuthFailure, ReceiverError};
// The key-set, JWT-crypto and URL-guard primitives live in handoff-auth (one home for
// auth); re-exported at their old paths.
pub use handoff_auth::jwks::{CachedJwks, JwkSet, JwksError, JwksSource, StaticJwks};
pub use handoff_auth::{jwks, jwt_crypto, url_guard};
pub use receiver::{MAX_VALIDATION_TOKEN, MIN_SECRET_LEN, Receiver, Registration};
pub use records::{Ack, ArtifactProgress, Outcome, PushConfigRecord, TaskSnapshot, TaskWake};
