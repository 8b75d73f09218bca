use serde_json::json;

use super::send::slack_message;
use super::*;

/// The Standard Webhooks reference vector: its libraries (the `standardwebhooks` npm
/// package among them) give this signature for this secret, id, timestamp and body, and
/// so does HMAC-SHA256 computed by hand (`python3 -c 'import hmac, …'`).
#[test]
fn the_signature_matches_the_reference_vector() {
    let config = WebhookConfig::from_lookup(|key| match key {
        URLS_VAR => Some("ops=https://hooks.example/".to_owned()),
        SECRETS_VAR => Some("ops=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned()),
        _ => None,
    })
    .unwrap()
    .unwrap();
    let secret = config.endpoints[0].secret.as_ref().unwrap();
    let signed = signature(
        secret,
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1_614_265_330,
        br#"{"test": 2432232314}"#,
    );
    assert_eq!(signed, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    // Any change to what is signed changes it.
    let moved = signature(
        secret,
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1_614_265_331,
        br#"{"test": 2432232314}"#,
    );
    assert_ne!(moved, signed);
}

#[test]
fn slack_messages_carry_the_approval_link_and_who_may_answer() {
    let event = json!({
        "type": "interrupt.created",
        "timestamp": "2026-12-07T13:00:00.000Z",
        "data": {
            "tenant": "acme", "threadId": "t-1", "runId": "r-1", "interruptId": "i-1",
            "message": "Refund 12.00 on order A1?", "requestedBy": "alice",
            "requiredRoles": ["approver"], "notRequester": true,
            "consoleUrl": "https://console.example/?thread=t-1",
        }
    });
    let text = slack_message(&event)["text"].as_str().unwrap().to_owned();
    for part in [
        "Refund 12.00 on order A1?",
        "<https://console.example/?thread=t-1>",
        "role approver, not alice",
        "t-1",
    ] {
        assert!(text.contains(part), "{part} in {text}");
    }
    let failed = json!({"type": "run.failed", "data": {"threadId": "t", "runId": "r", "error": {"code": "AGENT_ERROR"}}});
    assert!(
        slack_message(&failed)["text"]
            .as_str()
            .unwrap()
            .contains("failed: AGENT_ERROR")
    );
}

#[test]
fn console_links_encode_the_thread_as_a_query_value() {
    let notifier = WebhookNotifier::new(Some("https://h.example/".to_owned()));
    assert_eq!(
        notifier.console_url("a b/c-d_e.f~g&h"),
        "https://h.example/?thread=a%20b%2Fc-d_e.f~g%26h"
    );
    assert_eq!(WebhookNotifier::new(None).console_url("t"), "/?thread=t");
}
