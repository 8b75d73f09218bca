#![doc = include_str!("../README.md")]

mod auth;
pub mod client;
pub mod config;
mod digest;
pub mod error;
#[cfg(feature = "http")]
pub mod http;
pub mod jwks;
mod jwt;
pub mod jwt_crypto;
mod merge;
mod receiver;
pub mod records;
pub mod url_guard;

pub use a2a_types;
pub use auth::TOKEN_HEADERS;
pub use client::{
    A2aClient, ClientError, Delegate, Delegation, HttpClient, HttpRequest, HttpResponse,
    TokenSource,
};
pub use config::{ExpectedAuth, JwtAlgorithm, JwtAuth, ReceiverConfig, Subscription};
pub use error::{AuthFailure, ReceiverError};
pub use jwks::{CachedJwks, HttpJwks, JwkSet, JwksError, JwksSource, StaticJwks};
pub use receiver::{MAX_VALIDATION_TOKEN, MIN_SECRET_LEN, Receiver, Registration};
pub use records::{Ack, ArtifactProgress, Outcome, PushConfigRecord, TaskSnapshot, TaskWake};
