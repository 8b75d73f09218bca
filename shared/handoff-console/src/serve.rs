//! Serving the embedded files: compressed when the client takes `deflate`, revalidated by
//! ETag, locked down by a content security policy.

use axum::Router;
use axum::body::Body;
use axum::response::Response;
use axum::routing::get;
use http::StatusCode;
use http::header::{self, HeaderMap, HeaderValue};

use crate::{ASSETS, Asset};

/// What the page may load and reach: its own script and style only; runs and thread reads go
/// to the endpoint the operator names, which may be another origin (`connect-src *`).
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src *; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// The console's routes: `GET /`, `GET /console/app.js`, `GET /console/app.css` (and HEAD).
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    ASSETS.iter().fold(Router::new(), |router, asset| {
        router.route(
            asset.route,
            get(move |headers: HeaderMap| async move { respond(asset, &headers) }),
        )
    })
}

fn respond(asset: &'static Asset, request: &HeaderMap) -> Response {
    let mut response = if not_modified(asset, request) {
        empty(StatusCode::NOT_MODIFIED)
    } else if accepts_deflate(request) {
        let mut response = Response::new(Body::from(asset.zlib));
        response.headers_mut().insert(
            header::CONTENT_ENCODING,
            HeaderValue::from_static("deflate"),
        );
        response
    } else {
        match miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(asset.zlib, asset.raw_len) {
            Ok(raw) => Response::new(Body::from(raw)),
            // Only a corrupt build could get here; say so rather than send garbage.
            Err(_) => return empty(StatusCode::INTERNAL_SERVER_ERROR),
        }
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    headers.insert(header::ETAG, HeaderValue::from_static(asset.etag));
    // Same names across releases, so revalidate each time (a 304 costs a few bytes).
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

fn empty(status: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}

fn not_modified(asset: &Asset, request: &HeaderMap) -> bool {
    request
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .any(|tag| tag == "*" || tag == asset.etag)
}

/// Whether `Accept-Encoding` takes `deflate` (named or `*`, with a non-zero weight).
fn accepts_deflate(request: &HeaderMap) -> bool {
    request
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';');
            let name = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            (name.eq_ignore_ascii_case("deflate") || name == "*") && !refused
        })
}

#[cfg(test)]
mod tests;
