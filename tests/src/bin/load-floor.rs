//! The load benchmark's transport floor: an axum server on the dev server's HTTP stack (axum,
//! hyper, tokio, one keep-alive connection per client) that does no work. It answers run 1 and
//! the resume with the bodies the dev server sent for a pair (recorded by `load` before the
//! rounds), and every refund check with one refund. Its CPU per pair is what the transport
//! alone costs on this machine: the part of the dev server's figure no engine change can
//! remove.
//!
//! `HANDOFF_FLOOR_RUN` and `HANDOFF_FLOOR_RESUME` name the two recorded bodies; `PORT` as the
//! dev server reads it (0: any free port). The first stdout line names the URL.

use std::convert::Infallible;

use agui_protocol::sse;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use axum::routing::{get, post};

// The dev server's allocator, so that the two differ only in the work.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Clone)]
struct Recorded {
    run: Bytes,
    resume: Bytes,
}

fn read(var: &str) -> Bytes {
    let path = std::env::var(var).unwrap_or_else(|_| panic!("{var} is not set"));
    std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{var}={path}: {e}"))
        .into()
}

/// One SSE response, chunked and with the dev server's headers, as a stream of one chunk.
fn stream(body: Bytes, run_id: &'static str) -> Response {
    let chunks = futures::stream::once(async move { Ok::<_, Infallible>(body) });
    let mut response = Response::new(Body::from_stream(chunks));
    let headers = response.headers_mut();
    for (name, value) in sse::RESPONSE_HEADERS {
        headers.insert(name, HeaderValue::from_static(value));
    }
    headers.insert("x-handoff-run-id", HeaderValue::from_static(run_id));
    response
}

async fn agent(State(recorded): State<Recorded>, body: Bytes) -> Response {
    // The load generator's resume is the only request that carries `resume`.
    if body.windows(9).any(|w| w == b"\"resume\":") {
        stream(recorded.resume, "r2")
    } else {
        stream(recorded.run, "r1")
    }
}

async fn order(Path(order_id): Path<String>) -> Response {
    let json = serde_json::json!({"orderId": order_id, "refunds": 1}).to_string();
    let mut response = Response::new(Body::from(json));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[allow(clippy::print_stdout)] // The banner is how `load` finds the URL.
fn main() {
    let recorded = Recorded {
        run: read("HANDOFF_FLOOR_RUN"),
        resume: read("HANDOFF_FLOOR_RESUME"),
    };
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let app = Router::new()
        .route("/agent", post(agent))
        .route("/demo/orders/{order_id}", get(order))
        .with_state(recorded);
    tokio::runtime::Builder::new_multi_thread()
        .enable_io()
        .build()
        .expect("runtime")
        .block_on(async move {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
                .await
                .expect("bind");
            let url = format!("http://{}", listener.local_addr().expect("address"));
            println!("load floor listening on {url}");
            axum::serve(listener, app).await.expect("serve");
        });
}
