//! The CORS layer through a router: preflights, refused origins, exposed headers, parsing.
use super::*;
use axum::body::Body;
use axum::routing::get;
use tower::ServiceExt;

const APP: &str = "https://app.example.com";

fn router(origins: &str) -> Router {
    let cors = CorsOrigins::parse(origins).unwrap().unwrap();
    let app = Router::new().route(
        "/agent",
        get(|| async { ([("x-handoff-run-id", "run-1")], "ok") }).post(|| async { "ok" }),
    );
    cors.apply(app)
}

async fn send(router: Router, request: Request<Body>) -> Response {
    router.oneshot(request).await.unwrap()
}

fn preflight(origin: &str) -> Request<Body> {
    http::Request::builder()
        .method(Method::OPTIONS)
        .uri("/agent")
        .header(header::ORIGIN, origin)
        .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
        .header(
            header::ACCESS_CONTROL_REQUEST_HEADERS,
            "content-type,authorization",
        )
        .body(Body::empty())
        .unwrap()
}

fn get_from(origin: &str) -> Request<Body> {
    http::Request::builder()
        .uri("/agent")
        .header(header::ORIGIN, origin)
        .body(Body::empty())
        .unwrap()
}

fn value(response: &Response, name: HeaderName) -> Option<&str> {
    response.headers().get(name).map(|v| v.to_str().unwrap())
}

fn cors_headers(response: &Response) -> Vec<String> {
    response
        .headers()
        .keys()
        .map(|n| n.as_str().to_owned())
        .filter(|n| n.starts_with("access-control-"))
        .collect()
}

#[tokio::test]
async fn preflight_from_an_allowed_origin_is_204_with_the_policy() {
    let response = send(
        router("https://app.example.com,http://localhost:3000"),
        preflight(APP),
    )
    .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        value(&response, header::ACCESS_CONTROL_ALLOW_ORIGIN),
        Some(APP)
    );
    assert_eq!(
        value(&response, header::ACCESS_CONTROL_ALLOW_CREDENTIALS),
        Some("true")
    );
    assert_eq!(
        value(&response, header::ACCESS_CONTROL_MAX_AGE),
        Some("600")
    );
    let methods = value(&response, header::ACCESS_CONTROL_ALLOW_METHODS).unwrap();
    assert_eq!(methods.replace(' ', ""), "GET,POST,OPTIONS");
    let headers = value(&response, header::ACCESS_CONTROL_ALLOW_HEADERS).unwrap();
    for name in ALLOW_HEADERS {
        assert!(
            headers.split(',').any(|h| h.trim() == name),
            "{name} missing from {headers}"
        );
    }
    let vary = value(&response, header::VARY).unwrap();
    assert!(vary.contains("origin"), "{vary}");
}

#[tokio::test]
async fn a_second_listed_origin_is_echoed_alone() {
    let response = send(
        router("https://app.example.com,http://localhost:3000"),
        preflight("http://localhost:3000"),
    )
    .await;
    assert_eq!(
        value(&response, header::ACCESS_CONTROL_ALLOW_ORIGIN),
        Some("http://localhost:3000")
    );
}

#[tokio::test]
async fn a_disallowed_origin_gets_no_cors_headers() {
    let response = send(router(APP), preflight("https://evil.example")).await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(cors_headers(&response), Vec::<String>::new());

    let response = send(router(APP), get_from("https://evil.example")).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(cors_headers(&response), Vec::<String>::new());
    // The handler's own headers are untouched.
    assert_eq!(
        value(&response, HeaderName::from_static("x-handoff-run-id")),
        Some("run-1")
    );
}

#[tokio::test]
async fn a_simple_get_from_an_allowed_origin_exposes_the_run_id() {
    let response = send(router(APP), get_from(APP)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        value(&response, header::ACCESS_CONTROL_ALLOW_ORIGIN),
        Some(APP)
    );
    let exposed = value(&response, header::ACCESS_CONTROL_EXPOSE_HEADERS).unwrap();
    for name in ["x-handoff-run-id", "location", "preference-applied"] {
        assert!(
            exposed.split(',').any(|h| h.trim() == name),
            "{name} missing from {exposed}"
        );
    }
    assert_eq!(
        value(&response, header::ACCESS_CONTROL_ALLOW_CREDENTIALS),
        Some("true")
    );
    // Preflight-only headers stay off ordinary responses.
    assert_eq!(value(&response, header::ACCESS_CONTROL_ALLOW_METHODS), None);
}

#[tokio::test]
async fn star_allows_any_origin_without_credentials() {
    let cors = CorsOrigins::parse("*").unwrap().unwrap();
    assert!(cors.is_any());
    let response = send(router("*"), preflight("https://anyone.example")).await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        value(&response, header::ACCESS_CONTROL_ALLOW_ORIGIN),
        Some("*")
    );
    assert_eq!(
        value(&response, header::ACCESS_CONTROL_ALLOW_CREDENTIALS),
        None
    );

    let response = send(router("*"), get_from("https://anyone.example")).await;
    assert_eq!(
        value(&response, header::ACCESS_CONTROL_ALLOW_ORIGIN),
        Some("*")
    );
    assert_eq!(
        value(&response, header::ACCESS_CONTROL_ALLOW_CREDENTIALS),
        None
    );
}

#[tokio::test]
async fn requests_without_origin_pass_through_untouched() {
    let request = http::Request::builder()
        .uri("/agent")
        .body(Body::empty())
        .unwrap();
    let response = send(router(APP), request).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(cors_headers(&response), Vec::<String>::new());
}

#[test]
fn unset_or_blank_means_no_cors() {
    assert_eq!(CorsOrigins::from_lookup(|_| None), Ok(None));
    assert_eq!(
        CorsOrigins::from_lookup(|_| Some(" , ".to_owned())),
        Ok(None)
    );
    let lookup =
        |name: &str| (name == CORS_ORIGINS_VAR).then(|| "http://localhost:3000".to_owned());
    let cors = CorsOrigins::from_lookup(lookup).unwrap().unwrap();
    assert_eq!(cors.origins(), ["http://localhost:3000"]);
    assert!(!cors.is_any());
}

#[test]
fn origins_are_normalised() {
    let cors = CorsOrigins::parse(" HTTPS://App.Example.com/ , https://app.example.com:443,http://[::1]:8080, http://localhost:80")
        .unwrap()
        .unwrap();
    assert_eq!(
        cors.origins(),
        [
            "https://app.example.com",
            "http://[::1]:8080",
            "http://localhost"
        ]
    );
}

#[test]
fn malformed_origins_are_refused_naming_the_variable() {
    for bad in [
        "app.example.com",
        "ftp://app.example.com",
        "https://app.example.com/path",
        "https://app.example.com//",
        "https://app.example.com?x=1",
        "https://user@app.example.com",
        "https://*.example.com",
        "https://",
        "https://app.example.com:",
        "https://app.example.com:99999",
        "https://app example.com",
        "null",
        "*,https://app.example.com",
    ] {
        let err = CorsOrigins::parse(bad).expect_err(bad);
        let message = err.to_string();
        assert!(message.starts_with("HANDOFF_CORS_ORIGINS: "), "{message}");
    }
}
