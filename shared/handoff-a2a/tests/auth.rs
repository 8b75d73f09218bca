//! Authentication: token headers and `Authorization`, and the rule that every failure is
//! the same bare 401 (sender-signed JWTs: `auth_jwt.rs`; their key sets: `auth_keys.rs`).

mod common;

use common::*;
use handoff_a2a::{AuthFailure, ExpectedAuth};
use handoff_core::codes::ErrorCode;

#[tokio::test]
async fn token_is_read_in_both_spellings() {
    let h = Harness::new();
    let config = h.token_config().await;
    let b = status_body("TASK_STATE_WORKING", None);
    for name in [
        "X-A2A-Notification-Token",
        "A2A-Notification-Token",
        "a2a-notification-token",
    ] {
        let ack = h
            .post(&config, &headers(&[(name, TOKEN)]), &b)
            .await
            .unwrap();
        assert_eq!(ack.task_id, TASK, "{name}");
    }
    let both = headers(&[
        ("X-A2A-Notification-Token", TOKEN),
        ("A2A-Notification-Token", TOKEN),
    ]);
    h.post(&config, &both, &status_body("TASK_STATE_COMPLETED", None))
        .await
        .unwrap();
}

#[tokio::test]
async fn forged_missing_or_conflicting_tokens_are_401() {
    let h = Harness::new();
    let config = h.token_config().await;
    let b = status_body("TASK_STATE_WORKING", None);
    let forged = headers(&[("X-A2A-Notification-Token", "tok-per-config-0b6c8f1e-7e")]);
    assert_eq!(
        reason(h.post(&config, &forged, &b).await),
        AuthFailure::BadToken
    );
    assert_eq!(
        reason(h.post(&config, &headers(&[]), &b).await),
        AuthFailure::MissingCredentials
    );
    let conflicting = headers(&[
        ("X-A2A-Notification-Token", TOKEN),
        ("A2A-Notification-Token", "something-else-entirely"),
    ]);
    assert_eq!(
        reason(h.post(&config, &conflicting, &b).await),
        AuthFailure::BadToken
    );
    let repeated = headers(&[
        ("X-A2A-Notification-Token", TOKEN),
        ("X-A2A-Notification-Token", TOKEN),
    ]);
    assert_eq!(
        reason(h.post(&config, &repeated, &b).await),
        AuthFailure::BadToken
    );
    // A right token does not outweigh a wrong Authorization when both are configured.
    let config = h
        .register(
            Some(TASK),
            ExpectedAuth {
                token: Some(TOKEN.into()),
                ..authorization_auth()
            },
        )
        .await
        .config_id;
    let mixed = headers(&[
        ("X-A2A-Notification-Token", TOKEN),
        ("Authorization", "Bearer nope"),
    ]);
    assert_eq!(
        reason(h.post(&config, &mixed, &b).await),
        AuthFailure::BadAuthorization
    );
    h.post(&config, &token_headers(), &b).await.unwrap();
    assert!(h.snapshot().await.applied >= 1);
}

#[tokio::test]
async fn authorization_scheme_is_case_insensitive_credentials_are_not() {
    let h = Harness::new();
    let config = h.register(Some(TASK), authorization_auth()).await.config_id;
    let b = status_body("TASK_STATE_WORKING", None);
    for header in [
        format!("Bearer {CREDENTIALS}"),
        format!("bearer   {CREDENTIALS}"),
    ] {
        h.post(&config, &headers(&[("Authorization", &header)]), &b)
            .await
            .unwrap();
    }
    for header in [
        format!("Basic {CREDENTIALS}"),
        format!("Bearer {}", CREDENTIALS.to_uppercase()),
        "Bearer".to_owned(),
    ] {
        assert_eq!(
            reason(
                h.post(&config, &headers(&[("Authorization", &header)]), &b)
                    .await
            ),
            AuthFailure::BadAuthorization,
            "{header}"
        );
    }
}

#[tokio::test]
async fn require_all_needs_every_method() {
    let h = Harness::new();
    let config = h
        .register(
            Some(TASK),
            ExpectedAuth {
                token: Some(TOKEN.into()),
                require_all: true,
                ..authorization_auth()
            },
        )
        .await
        .config_id;
    let b = status_body("TASK_STATE_WORKING", None);
    assert_eq!(
        reason(h.post(&config, &token_headers(), &b).await),
        AuthFailure::MissingCredentials
    );
    let both = headers(&[
        ("X-A2A-Notification-Token", TOKEN),
        ("Authorization", &format!("Bearer {CREDENTIALS}")),
    ]);
    h.post(&config, &both, &b).await.unwrap();
}

#[tokio::test]
async fn unknown_expired_and_revoked_subscriptions_look_like_bad_credentials() {
    let h = Harness::new();
    let config = h.token_config().await;
    let b = status_body("TASK_STATE_WORKING", None);
    let bad_token = h
        .post(
            &config,
            &headers(&[("X-A2A-Notification-Token", "x".repeat(26).as_str())]),
            &b,
        )
        .await
        .unwrap_err();
    for id in ["a2apush-nope", "../../etc", "", &"x".repeat(500)] {
        let unknown = h.post(id, &token_headers(), &b).await.unwrap_err();
        assert_eq!(unknown.auth_failure(), Some(AuthFailure::UnknownConfig));
        assert_eq!(
            (
                unknown.http_status(),
                unknown.code().name,
                unknown.public_message()
            ),
            (
                bad_token.http_status(),
                bad_token.code().name,
                bad_token.public_message()
            )
        );
    }
    h.receiver.revoke(&config).await.unwrap();
    assert_eq!(
        reason(h.post(&config, &token_headers(), &b).await),
        AuthFailure::UnknownConfig
    );
    let config = h.token_config().await;
    h.clock
        .advance(h.receiver.config().default_subscription_ttl_ms);
    assert_eq!(
        reason(h.post(&config, &token_headers(), &b).await),
        AuthFailure::UnknownConfig
    );
}
