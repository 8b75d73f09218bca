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
pub use receiver::{MAX_VALIDATION_TOKEN, MIN_SECRET_LEN, Receiver, Registration};
pub use records::{Ack, ArtifactProgress, Outcome, PushConfigRecord, TaskSnapshot, TaskWake};
