//! Integration tests of the built-in authenticators, with real keys (tests/fixtures) and a
//! fixed clock.

mod api_keys;
mod cf_access;
mod config;
mod iam;
mod jwt;
mod support;
mod verify;
