//! The answer validator is a hook: whatever validator the host gives decides, and an engine
//! without one refuses to ask for answers it could not check.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use handoff_core::codes::ErrorCode;
use handoff_core::schema::{SchemaFailure, SchemaValidator};
use serde_json::Value;
use support::*;

/// Refuses every answer whose `approved` is not `true`, counting its calls.
#[derive(Default)]
struct OnlyApprovals(AtomicUsize);

impl SchemaValidator for OnlyApprovals {
    fn validate(&self, _schema: &Value, value: &Value) -> Result<(), SchemaFailure> {
        self.0.fetch_add(1, Ordering::SeqCst);
        match value.get("approved") {
            Some(Value::Bool(true)) => Ok(()),
            _ => Err(SchemaFailure::Invalid("only approvals, please".into())),
        }
    }
}

#[tokio::test]
async fn the_hosts_validator_decides_and_a_refusal_writes_nothing() {
    let probe = Probe::new();
    let mut h = Harness::new(RefundAgent::new(probe.clone()));
    let validator = Arc::new(OnlyApprovals::default());
    h.engine = h
        .engine
        .clone()
        .with_schema_validator(Some(validator.clone()));
    let interrupt = interrupts(&h.run(&user_input("t", "r1", "refund")).await).remove(0);
    let before = h.thread("t").await;

    // A denial satisfies the interrupt's schema, but this validator says no.
    let err = h
        .reject(&resume_input("t", "r2", vec![deny(&interrupt)]))
        .await;
    assert_eq!(
        (err.code().name, err.http_status()),
        ("RESUME_PAYLOAD_INVALID", 422)
    );
    assert!(err.to_string().contains("only approvals"), "{err}");
    assert_eq!(h.thread("t").await, before);

    h.run(&resume_input("t", "r3", vec![approve(&interrupt)]))
        .await;
    assert_eq!(probe.calls(), 1);
    assert_eq!(validator.0.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn without_a_validator_an_interrupt_with_a_schema_fails_closed() {
    let probe = Probe::new();
    let mut h = Harness::new(RefundAgent::new(probe.clone()));
    h.engine = h.engine.clone().with_schema_validator(None);
    let events = h.run(&user_input("t", "r1", "refund")).await;
    assert_eq!(
        run_error(&events).code.as_deref(),
        Some("SCHEMA_VALIDATION_UNAVAILABLE"),
        "{}",
        dump(&events)
    );
    let view = h.thread("t").await;
    assert!(view.pending_interrupts.is_empty(), "nothing was asked");
}
