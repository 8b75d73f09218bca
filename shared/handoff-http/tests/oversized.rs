//! Oversized bodies over real TCP (axum::serve, as the dev server runs it): the client
//! reads its 413 instead of a reset connection, and the connection stays usable.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use handoff_core::runtime::{ManualClock, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{Engine, Sleep, Store};
use handoff_demo::{DemoAgent, DemoConfig};
use handoff_http::HttpConfig;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedReadHalf;

const LIMIT: usize = 1024;
const OVERSIZED: usize = 2 * 1024 * 1024;

/// Real timers: the drain's bounds are timers.
struct TokioSleep;

impl Sleep for TokioSleep {
    fn sleep(&self, millis: u64) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(Duration::from_millis(millis)))
    }
}

async fn serve() -> std::net::SocketAddr {
    serve_with_limit(LIMIT).await
}

async fn serve_with_limit(limit: usize) -> std::net::SocketAddr {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let runtime = Runtime::new(
        ManualClock::new(1_764_421_200_000),
        SequentialIds::new("o"),
        TokioSleep,
    );
    let engine = Engine::new(
        DemoAgent::new(store.clone(), DemoConfig::default()),
        store,
        runtime,
    );
    let config = HttpConfig {
        body_limit: limit,
        ..HttpConfig::default()
    };
    let app = handoff_http::router(engine, config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// One response: status and body (these answers all carry a Content-Length).
async fn read_response(reader: &mut BufReader<OwnedReadHalf>) -> (u16, String) {
    let mut status_line = String::new();
    reader.read_line(&mut status_line).await.unwrap();
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).await.unwrap();
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.unwrap();
    (status, String::from_utf8(body).unwrap())
}

fn code(body: &str) -> String {
    let value: Value = serde_json::from_str(body).unwrap();
    value["code"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn an_oversized_body_gets_its_413_and_the_connection_stays_usable() {
    let addr = serve().await;
    let (read, mut write) = TcpStream::connect(addr).await.unwrap().into_split();
    let mut reader = BufReader::new(read);
    let body = vec![b' '; OVERSIZED];
    for round in 0..3 {
        let head = format!(
            "POST /agent HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {OVERSIZED}\r\n\r\n"
        );
        // Sent whole, as a client does, while the answer may already be on its way.
        let sending = async {
            write.write_all(head.as_bytes()).await?;
            write.write_all(&body).await
        };
        let (sent, (status, text)) = tokio::join!(sending, read_response(&mut reader));
        sent.unwrap_or_else(|err| panic!("round {round}: sending the body failed: {err}"));
        assert_eq!(status, 413, "round {round}: {text}");
        assert_eq!(code(&text), "BODY_TOO_LARGE", "round {round}");

        // The same connection serves the next request.
        write
            .write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n")
            .await
            .unwrap();
        let (status, text) = read_response(&mut reader).await;
        assert_eq!(status, 200, "round {round}: {text}");
    }
}

#[tokio::test]
async fn a_stalled_oversized_upload_is_answered_after_a_pause() {
    let addr = serve().await;
    let (read, mut write) = TcpStream::connect(addr).await.unwrap().into_split();
    let mut reader = BufReader::new(read);
    // Chunked, past the limit, then nothing more (and the body never ends).
    let chunk = vec![b' '; 2 * LIMIT];
    let head = "POST /agent HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
    write.write_all(head.as_bytes()).await.unwrap();
    write
        .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
        .await
        .unwrap();
    write.write_all(&chunk).await.unwrap();
    write.write_all(b"\r\n").await.unwrap();
    // A pause must end the wait (DRAIN_IDLE_MS), well before the overall bound (5 s).
    let (status, text) = tokio::time::timeout(Duration::from_secs(4), read_response(&mut reader))
        .await
        .expect("no answer within 4 s of the upload stalling");
    assert_eq!(status, 413, "{text}");
    assert_eq!(code(&text), "BODY_TOO_LARGE");
}

/// Before, a body declared over 8 MiB was never drained, whatever the limit: a 9 MiB POST
/// to the default 8 MiB limit reset the connection (Node's fetch saw EPIPE, not the 413).
#[tokio::test]
async fn a_body_up_to_twice_a_large_limit_still_gets_a_readable_413() {
    const MIB: usize = 1024 * 1024;
    let addr = serve_with_limit(8 * MIB).await;
    let (read, mut write) = TcpStream::connect(addr).await.unwrap().into_split();
    let mut reader = BufReader::new(read);
    let size = 16 * MIB;
    let head = format!(
        "POST /agent HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {size}\r\n\r\n"
    );
    let body = vec![b' '; size];
    let sending = async {
        write.write_all(head.as_bytes()).await?;
        write.write_all(&body).await
    };
    let (sent, (status, text)) = tokio::join!(sending, read_response(&mut reader));
    sent.expect("the whole body was taken, not reset");
    assert_eq!(status, 413, "{text}");
    assert_eq!(code(&text), "BODY_TOO_LARGE");
    write
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(
        read_response(&mut reader).await.0,
        200,
        "the connection stays usable"
    );
}
