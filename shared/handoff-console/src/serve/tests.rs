use axum::body::Body;
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use tower::ServiceExt;

use crate::{asset, routes};

async fn get(path: &str, headers: &[(&str, &str)]) -> http::Response<Body> {
    let mut request = Request::get(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    routes::<()>()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap()
}

async fn body(response: http::Response<Body>) -> Vec<u8> {
    response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec()
}

#[tokio::test]
async fn serves_the_page_inflated_to_a_client_without_deflate() {
    let response = get("/", &[]).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get(header::CONTENT_ENCODING).is_none());
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/html; charset=utf-8"
    );
    let csp = response.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    let page = String::from_utf8(body(response).await).unwrap();
    assert_eq!(page.len(), asset("/").unwrap().raw_len);
    assert!(
        page.contains("console/app.js"),
        "the page loads its script relatively"
    );
}

#[tokio::test]
async fn sends_the_compressed_bytes_to_a_browser() {
    let response = get(
        "/console/app.js",
        &[("accept-encoding", "gzip, deflate, br")],
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[header::CONTENT_ENCODING], "deflate");
    assert_eq!(response.headers()[header::VARY], "accept-encoding");
    let compressed = body(response).await;
    let raw = miniz_oxide::inflate::decompress_to_vec_zlib(&compressed).unwrap();
    assert_eq!(raw.len(), asset("/console/app.js").unwrap().raw_len);
    assert!(compressed.len() < raw.len());
}

#[tokio::test]
async fn a_refused_deflate_is_not_sent() {
    let response = get(
        "/console/app.css",
        &[("accept-encoding", "deflate;q=0, gzip")],
    )
    .await;
    assert!(response.headers().get(header::CONTENT_ENCODING).is_none());
    assert_eq!(
        body(response).await.len(),
        asset("/console/app.css").unwrap().raw_len
    );
}

#[tokio::test]
async fn revalidates_by_etag() {
    let first = get("/console/app.js", &[]).await;
    let etag = first.headers()[header::ETAG].to_str().unwrap().to_owned();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    let again = get("/console/app.js", &[("if-none-match", &etag)]).await;
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert!(body(again).await.is_empty());
    let stale = get("/console/app.js", &[("if-none-match", "\"other\"")]).await;
    assert_eq!(stale.status(), StatusCode::OK);
}

#[tokio::test]
async fn other_paths_are_not_the_console() {
    assert_eq!(get("/console/", &[]).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        get("/index.html", &[]).await.status(),
        StatusCode::NOT_FOUND
    );
}

#[test]
fn the_setting_is_on_unless_turned_off() {
    let with = |v: Option<&str>| crate::enabled(|_| v.map(str::to_owned));
    assert_eq!(with(None), Ok(true));
    assert_eq!(with(Some("on")), Ok(true));
    assert_eq!(with(Some("OFF")), Ok(false));
    assert_eq!(with(Some("0")), Ok(false));
    assert!(
        with(Some("maybe"))
            .unwrap_err()
            .to_string()
            .contains("HANDOFF_CONSOLE")
    );
}
