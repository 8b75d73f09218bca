//! The native outbound client for models (`handoff_host_native::outbound::UreqOutbound::operator`,
//! through `handoff_llm::stream`) against a local HTTP
//! stand-in for a provider (plain `http://` on loopback, as a local Ollama or vLLM):
//! the body streams chunk by chunk, the key travels in the header, HTTP errors and an
//! unreachable endpoint map to stable model errors.

use std::time::Duration;

use futures::StreamExt;
use handoff_core::codes::ErrorCode;
use handoff_core::outbound::{Timeout, sensitive};
use handoff_host_native::outbound::UreqOutbound;
use handoff_llm::openai::ChunkParser;
use handoff_llm::{ModelDelta, ModelError, ProviderStream, stream};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Serves one request: reads it whole, answers `head`, then each of `pieces` with a pause.
async fn serve_once(
    head: &'static str,
    pieces: Vec<String>,
) -> (String, tokio::task::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/v1/chat/completions",
        listener.local_addr().unwrap()
    );
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = socket.read(&mut buf).await.unwrap();
            request.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&request).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let length: usize = text
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    break;
                }
            }
        }
        socket.write_all(head.as_bytes()).await.unwrap();
        for piece in pieces {
            let chunk = format!("{:x}\r\n{piece}\r\n", piece.len());
            socket.write_all(chunk.as_bytes()).await.unwrap();
            socket.flush().await.unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let _ = socket.write_all(b"0\r\n\r\n").await;
        String::from_utf8_lossy(&request).to_string()
    });
    (url, task)
}

fn request(url: String) -> http::Request<Vec<u8>> {
    let body = json!({ "model": "m", "stream": true, "messages": [] });
    let mut request = http::Request::post(url)
        .header("authorization", sensitive("Bearer sk-local").unwrap())
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&body).unwrap())
        .unwrap();
    request
        .extensions_mut()
        .insert(Timeout(Duration::from_secs(30)));
    request
}

const STREAMING: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";

#[tokio::test(flavor = "multi_thread")]
async fn the_answer_streams_in_pieces_and_parses_into_deltas() {
    let pieces = vec![
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n".to_owned(),
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\ndata: [DO"
            .to_owned(),
        "NE]\n\n".to_owned(),
    ];
    let (url, server) = serve_once(STREAMING, pieces).await;
    let mut body = stream(&UreqOutbound::operator(), request(url))
        .await
        .expect("streams");
    let mut parser = ProviderStream::new(ChunkParser::default());
    let (mut reads, mut deltas) = (0, Vec::new());
    while let Some(chunk) = body.next().await {
        reads += 1;
        deltas.extend(parser.feed(&chunk.expect("chunk")).expect("parses"));
    }
    assert_eq!(
        deltas,
        vec![
            ModelDelta::Text("Hel".into()),
            ModelDelta::Text("lo".into())
        ]
    );
    assert!(reads >= 2, "the body arrived in one piece: not streamed");
    let seen = server.await.unwrap();
    assert!(
        seen.contains("authorization: Bearer sk-local")
            || seen.contains("Authorization: Bearer sk-local")
    );
    assert!(seen.contains("\"stream\":true"));
}

#[tokio::test(flavor = "multi_thread")]
async fn http_errors_and_an_unreachable_endpoint_map_to_model_errors() {
    let head = "HTTP/1.1 429 Too Many Requests\r\nretry-after: 3\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
    let (url, _server) = serve_once(
        head,
        vec!["{\"error\":{\"message\":\"org-123 over quota\"}}".into()],
    )
    .await;
    let error = match stream(&UreqOutbound::operator(), request(url)).await {
        Err(error) => error,
        Ok(_) => panic!("a 429 streamed"),
    };
    assert!(
        matches!(
            error,
            ModelError::RateLimited {
                retry_after_ms: Some(3000),
                ..
            }
        ),
        "{error:?}"
    );
    assert!(!error.public_message().contains("org-123"));

    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/v1/chat/completions",
        closed.local_addr().unwrap()
    );
    drop(closed);
    let error = match stream(&UreqOutbound::operator(), request(url)).await {
        Err(error) => error,
        Ok(_) => panic!("a closed port streamed"),
    };
    assert_eq!(error.code().name, "MODEL_UNAVAILABLE");
}
