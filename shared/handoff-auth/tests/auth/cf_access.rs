//! `HANDOFF_AUTH=cf-access`.

use handoff_auth::{Authenticator, CfAccess, CfAccessConfig};
use jsonwebtoken::Algorithm;
use serde_json::json;

use crate::support::*;

const TEAM: &str = "myteam.cloudflareaccess.com";
const CERTS: &str = "https://myteam.cloudflareaccess.com/cdn-cgi/access/certs";
const AUD: &str = "4714c1358e65fe4b408ad6d432a5f878f08194bdb4752441fd56faefa9b2b6f2";

fn config() -> CfAccessConfig {
    CfAccessConfig {
        team_domain: TEAM.to_owned(),
        audience: AUD.to_owned(),
        tenant_claim: "tid".to_owned(),
        roles_claim: "roles".to_owned(),
    }
}

fn access() -> CfAccess {
    CfAccess::new(config(), static_jwks(CERTS, key_set()), clock())
}

fn access_claims() -> serde_json::Value {
    json!({
        "iss": format!("https://{TEAM}"),
        "aud": [AUD],
        "sub": "7335d417-61da-459d-899c-0a01c76a2f94",
        "email": "alice@example.com",
        "iat": NOW,
        "exp": NOW + 3600,
        "type": "app",
    })
}

#[test]
fn the_assertion_header_authenticates_with_the_email_as_subject() {
    let token = sign(Algorithm::RS256, &access_claims());
    let principal = run(&access(), &request(&[("cf-access-jwt-assertion", &token)])).unwrap();
    assert_eq!(principal.tenant, "default");
    assert_eq!(principal.subject, "alice@example.com");
    assert_eq!(config().certs_url(), CERTS);
}

#[test]
fn the_cookie_is_the_fallback_and_service_tokens_use_sub() {
    let mut claims = access_claims();
    claims.as_object_mut().unwrap().remove("email");
    claims["tid"] = json!("acme");
    let token = sign(Algorithm::RS256, &claims);
    let cookie = format!("theme=dark; CF_Authorization={token}; other=1");
    let principal = run(&access(), &request(&[("cookie", &cookie)])).unwrap();
    assert_eq!(principal.subject, "7335d417-61da-459d-899c-0a01c76a2f94");
    assert_eq!(principal.tenant, "acme");
}

#[test]
fn wrong_audience_issuer_algorithm_or_no_token_are_refused() {
    let mut wrong_aud = access_claims();
    wrong_aud["aud"] = json!(["another-app"]);
    let token = sign(Algorithm::RS256, &wrong_aud);
    assert_eq!(
        unauthenticated(run(
            &access(),
            &request(&[("cf-access-jwt-assertion", &token)])
        )),
        "wrong audience"
    );

    let mut wrong_iss = access_claims();
    wrong_iss["iss"] = json!("https://otherteam.cloudflareaccess.com");
    let token = sign(Algorithm::RS256, &wrong_iss);
    assert_eq!(
        unauthenticated(run(
            &access(),
            &request(&[("cf-access-jwt-assertion", &token)])
        )),
        "wrong issuer"
    );

    // Access signs with RS256 only.
    let token = sign(Algorithm::ES256, &access_claims());
    let message = unauthenticated(run(
        &access(),
        &request(&[("cf-access-jwt-assertion", &token)]),
    ));
    assert_eq!(message, "unsupported algorithm");

    let message = unauthenticated(run(&access(), &request(&[("cookie", "theme=dark")])));
    assert!(message.contains("Cf-Access-Jwt-Assertion"), "{message}");
    // A bearer header is not an Access assertion.
    let token = sign(Algorithm::RS256, &access_claims());
    unauthenticated(run(&access(), &bearer(&token)));
    assert_eq!(access().scheme(), "cf-access");
}
