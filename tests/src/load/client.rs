//! The load itself: client threads with one keep-alive connection each, sending pairs (run 1
//! → approval interrupt, then the approving resume → one refund) through a warm-up and a
//! measured window, every stream checked.

use std::io::Read;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::bodies::{self, Shape};
use super::server::cpu_ticks;

/// One measured window against one server.
pub(crate) struct Window {
    /// Pairs completed inside the window.
    pub(crate) pairs: u64,
    /// Wall-clock length of the window.
    pub(crate) seconds: f64,
    /// Server CPU (utime + stime) over the window, clock ticks.
    pub(crate) server_ticks: u64,
    /// The kernel's part of it (stime).
    pub(crate) server_sys_ticks: u64,
    /// This process's CPU over the window (the load generator), clock ticks.
    pub(crate) client_ticks: u64,
    /// Run-1 time to first byte of the pairs completed inside the window, sorted.
    pub(crate) ttfb: Vec<Duration>,
    /// Failed pairs (any time) and the first failure.
    pub(crate) errors: u64,
    pub(crate) first_error: Option<String>,
    /// Order ids refunded by the sampled pairs; each was checked right after its pair
    /// (failures in `refund_failures`) and is checked again after the round ([`verify`]).
    pub(crate) sampled: Vec<String>,
    /// Sampled orders whose refund count was not exactly 1 right after their pair.
    pub(crate) refund_failures: Vec<String>,
}

/// Where a pair's ids come from; one per server, so ids never repeat on it.
pub(crate) struct Ids {
    next: AtomicU64,
    tag: String,
}

impl Ids {
    pub(crate) fn new(tag: &str) -> Ids {
        Ids {
            next: AtomicU64::new(100),
            tag: format!("load-{}-{tag}", std::process::id()),
        }
    }
}

#[derive(Default)]
struct Tally {
    pairs: u64,
    errors: u64,
    first_error: Option<String>,
    ttfb: Vec<Duration>,
    sampled: Vec<String>,
    refund_failures: Vec<String>,
}

/// Runs `clients` threads against `url` for `warmup` then `measure`; every `sample_every`th
/// measured pair's refund is checked right after it (one `GET`, inside the window: a budgeted
/// memory store may have forgotten it by the end of the round) and its order id kept for
/// [`verify`].
pub(crate) fn drive(
    url: &str,
    pid: u32,
    clients: usize,
    (warmup, measure): (Duration, Duration),
    ids: &Arc<Ids>,
    sample_every: u64,
    shape: Shape,
) -> Window {
    let measuring = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let total = Arc::new(Mutex::new(Tally::default()));
    let workers: Vec<_> = (0..clients)
        .map(|_| {
            let (measuring, stop, total, ids) =
                (measuring.clone(), stop.clone(), total.clone(), ids.clone());
            let url = url.to_owned();
            std::thread::spawn(move || {
                let agent = agent();
                let mut tally = Tally::default();
                while !stop.load(Ordering::Relaxed) {
                    let n = ids.next.fetch_add(1, Ordering::Relaxed);
                    let order = format!("B{n}");
                    match pair(&agent, &url, &format!("{}-{n}", ids.tag), &order, shape) {
                        Ok(ttfb) if measuring.load(Ordering::Relaxed) => {
                            tally.pairs += 1;
                            tally.ttfb.push(ttfb);
                            if n % sample_every == 0 {
                                if let Err(failure) = refunded_once(&agent, &url, &order) {
                                    tally.refund_failures.push(failure);
                                }
                                tally.sampled.push(order);
                            }
                        }
                        Ok(_) => {}
                        Err(error) => {
                            tally.errors += 1;
                            tally.first_error.get_or_insert(error);
                            std::thread::sleep(Duration::from_millis(10));
                        }
                    }
                }
                let mut total = total.lock().expect("tally");
                total.pairs += tally.pairs;
                total.errors += tally.errors;
                total.ttfb.append(&mut tally.ttfb);
                total.sampled.append(&mut tally.sampled);
                total.refund_failures.append(&mut tally.refund_failures);
                if total.first_error.is_none() {
                    total.first_error = tally.first_error;
                }
            })
        })
        .collect();
    std::thread::sleep(warmup);
    let me = std::process::id();
    let (server0, client0) = (cpu_ticks(pid), cpu_ticks(me));
    let started = Instant::now();
    measuring.store(true, Ordering::Relaxed);
    std::thread::sleep(measure);
    measuring.store(false, Ordering::Relaxed);
    let seconds = started.elapsed().as_secs_f64();
    let (server1, client1) = (cpu_ticks(pid), cpu_ticks(me));
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        worker.join().expect("client thread");
    }
    let mut total = std::mem::take(&mut *total.lock().expect("tally"));
    total.ttfb.sort();
    Window {
        pairs: total.pairs,
        seconds,
        server_ticks: (server1.0 + server1.1).saturating_sub(server0.0 + server0.1),
        server_sys_ticks: server1.1.saturating_sub(server0.1),
        client_ticks: (client1.0 + client1.1).saturating_sub(client0.0 + client0.1),
        ttfb: total.ttfb,
        errors: total.errors,
        first_error: total.first_error,
        sampled: total.sampled,
        refund_failures: total.refund_failures,
    }
}

/// A keep-alive agent (ureq pools the connection; one thread, one connection).
pub(crate) fn agent() -> ureq::Agent {
    // A timeout per phase, none for name resolution: ureq resolves the address before every
    // request, pooled connection or not, and under a global timeout it does so on a thread of
    // its own (thousands of thread starts per second on the generator's core, every one of
    // them landing in its TTFBs). Resolving `127.0.0.1:port` takes no time.
    let phase = Some(Duration::from_secs(30));
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_idle_connections_per_host(1)
        .timeout_connect(phase)
        .timeout_send_request(phase)
        .timeout_send_body(phase)
        .timeout_recv_response(phase)
        .timeout_recv_body(phase)
        .build()
        .into()
}

/// Run 1 then the approving resume; returns run 1's time to first byte.
fn pair(
    agent: &ureq::Agent,
    url: &str,
    thread: &str,
    order: &str,
    shape: Shape,
) -> Result<Duration, String> {
    pair_bodies(agent, url, thread, order, shape).map(|(ttfb, _, _)| ttfb)
}

/// One pair on a thread of its own; returns the bodies of run 1 and of the resume (what the
/// transport floor replays).
pub(crate) fn record_pair(url: &str, shape: Shape) -> Result<(String, String), String> {
    let thread = format!("load-{}-recorded", std::process::id());
    // An order id the load never uses (its ids start at B100).
    pair_bodies(&agent(), url, &thread, "B10", shape).map(|(_, run, resume)| (run, resume))
}

/// [`pair`], with both bodies: (run 1's time to first byte, run 1's body, the resume's body).
fn pair_bodies(
    agent: &ureq::Agent,
    url: &str,
    thread: &str,
    order: &str,
    shape: Shape,
) -> Result<(Duration, String, String), String> {
    let mut messages = vec![bodies::message(
        "m1",
        "user",
        &format!("Refund order {order}"),
    )];
    let mut state = "{}".to_owned();
    let run1 = bodies::run(shape, thread, "r1", &messages, &state);
    let (ttfb, stream) = post(agent, &format!("{url}/agent"), &run1)?;
    let outcome = finished(&stream, "interrupt")?;
    let id = outcome["interrupts"][0]["id"]
        .as_str()
        .ok_or_else(|| format!("run 1 interrupt without an id: {outcome}"))?;
    bodies::apply_stream(&stream, &mut messages, &mut state);
    let run2 = bodies::resume(shape, thread, "r2", &messages, &state, id);
    let (_, resumed) = post(agent, &format!("{url}/agent"), &run2)?;
    finished(&resumed, "success")?;
    Ok((ttfb, stream, resumed))
}

/// POSTs a body; returns (time to first body byte, whole body).
pub(crate) fn post(
    agent: &ureq::Agent,
    url: &str,
    body: &str,
) -> Result<(Duration, String), String> {
    let started = Instant::now();
    let response = agent
        .post(url)
        .header("content-type", "application/json")
        .send(body)
        .map_err(|e| format!("POST {url}: {e}"))?;
    let status = response.status();
    if !status.is_success() {
        let text = response.into_body().read_to_string().unwrap_or_default();
        return Err(format!("POST {url} {body}: {status} {text}"));
    }
    let mut reader = response.into_body().into_reader();
    let mut bytes = vec![0u8; 1];
    reader
        .read_exact(&mut bytes)
        .map_err(|e| format!("first byte: {e}"))?;
    let ttfb = started.elapsed();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| format!("body: {e}"))?;
    String::from_utf8(bytes)
        .map(|text| (ttfb, text))
        .map_err(|e| format!("body is not UTF-8: {e}"))
}

/// Checks an SSE body starts with RUN_STARTED and ends with a RUN_FINISHED whose outcome
/// has type `want`; returns that outcome.
pub(crate) fn finished(stream: &str, want: &str) -> Result<Value, String> {
    let mut data = stream.lines().filter_map(|l| l.strip_prefix("data: "));
    let first = data.next().unwrap_or_default();
    if !first.starts_with(r#"{"type":"RUN_STARTED""#) {
        return Err(format!("stream does not start with RUN_STARTED: {stream}"));
    }
    let mut last: Value = serde_json::from_str(data.next_back().unwrap_or_default())
        .map_err(|e| format!("last event is not JSON ({e}): {stream}"))?;
    if last["type"] != "RUN_FINISHED" || last["outcome"]["type"] != want {
        return Err(format!("expected RUN_FINISHED {want}, got: {stream}"));
    }
    Ok(last["outcome"].take())
}

/// How many refunds the demo ledger counts for `order`.
fn refunds(agent: &ureq::Agent, url: &str, order: &str) -> Result<u64, String> {
    agent
        .get(format!("{url}/demo/orders/{order}"))
        .call()
        .map_err(|e| e.to_string())
        .and_then(|r| r.into_body().read_to_string().map_err(|e| e.to_string()))
        .and_then(|body| serde_json::from_str::<Value>(&body).map_err(|e| e.to_string()))
        .and_then(|v| {
            v["refunds"]
                .as_u64()
                .ok_or_else(|| format!("no refund count in {v}"))
        })
        .map_err(|e| format!("{order}: {e}"))
}

/// Checks `order` was refunded exactly once.
fn refunded_once(agent: &ureq::Agent, url: &str, order: &str) -> Result<(), String> {
    match refunds(agent, url, order)? {
        1 => Ok(()),
        other => Err(format!(
            "{order}: {other} refunds right after its pair, expected 1"
        )),
    }
}

/// Checks the sampled orders again after the round: none was refunded a second time since.
/// A store that may forget (`may_forget`: the memory store's budget drops the oldest
/// threads and ledger accounts) answers 0 for the ones it dropped; they are not counted as
/// held. Returns (orders still held, failures).
pub(crate) fn verify(url: &str, orders: &[String], may_forget: bool) -> (usize, Vec<String>) {
    let agent = agent();
    let mut held = 0;
    let mut failures = Vec::new();
    for order in orders {
        match refunds(&agent, url, order) {
            Ok(1) => held += 1,
            Ok(0) if may_forget => {}
            Ok(other) => failures.push(format!(
                "{order}: {other} refunds after the round, expected 1"
            )),
            Err(error) => failures.push(error),
        }
    }
    (held, failures)
}
