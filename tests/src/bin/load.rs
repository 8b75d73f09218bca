#![allow(clippy::disallowed_methods)] // A load benchmark measures wall-clock time; it is not engine code.
//! `make bench` load benchmark (issue 16): the Node reference server, the dev server on
//! `HANDOFF_STORE=memory` and the dev server on its default (SQLite) store, side by side in one
//! run, and the transport floor (`load-floor`: the dev server's HTTP stack replaying a pair the
//! memory-store server answered before the rounds, doing no work), which shows how much of a
//! server's CPU per pair is the transport's. Each server is pinned to core 0 (`taskset -c 0`),
//! the load generator to core 1.
//!
//! `load [--bin-dir DIR] [--node-server FILE] [--clients 16] [--seconds 20] [--warmup 3]
//! [--rounds 3] [--servers node,node-durable,memory,sqlite,sqlite-normal,floor] [--client official|minimal]
//! [--conversation N] [--print-turns]` (issue 38: `make bench` runs `--client official
//! --conversation 50`; `--print-turns` also prints every turn's CPU, round by round).
//! `--client official` (the default) sends what `@ag-ui/client`'s `HttpAgent` sends: the
//! whole history it holds on every run (the resume carries run 1's snapshot: the user's
//! message, the assistant's messages and tool calls, the tool result), its state, a front-end
//! tool, a context entry and `forwardedProps`; `minimal` sends only the new message and ids.
//! `--conversation N` then runs conversation mode (`load/conversation.rs`): one thread per
//! client, N lockstep turns each resending the whole history, server CPU per turn. The last
//! line, `ratios: memory X, sqlite X, sqlite-normal X, turnN/turn1 memory X sqlite X,
//! sqlite/node-durable X, sqlite-normal/node-durable X, memory/node turn10 X memory/node turnN X`,
//! is for scripts: Node's CPU per pair over each server's, turn N's CPU over turn 1's, the
//! durable Node reference's (`reference-server.mjs --durable`, issue 54: the same durable work)
//! over each SQLite server's, and Node's CPU for chat turn 10 and turn N over the memory store's.
//!
//! Per round and server, `clients` threads (one keep-alive connection each)
//! send pairs — run 1 (→ approval interrupt) then the approving resume (→ one refund) — for
//! `warmup` seconds, then for a measured window of `seconds`. Every stream is checked
//! (RUN_STARTED first, RUN_FINISHED with the expected outcome last); every 50th measured
//! pair's order is checked to have exactly one refund right after the pair (one `GET`, counted
//! in the window) and again after the round, when the memory store may have forgotten it (its
//! budget drops the least recently written threads and ledger accounts) but no store may show a
//! second refund. Rounds interleave the servers, so
//! background load hits them all alike; the table has the median of the rounds.
//!
//! Server CPU per pair is utime + stime from `/proc/<pid>/stat` over the window divided by
//! the pairs completed in it; peak RSS is `VmHWM` after the last round; TTFB is from sending
//! run 1 to its first body byte. The Node reference keeps every thread, so its peak RSS grows
//! with the pairs sent; the memory store keeps its threads and the demo's ledger accounts
//! within `HANDOFF_MEMORY_MAX_BYTES` (16 MiB by default). "Server core busy" is the
//! server's CPU over the window's wall time: below 100% the server waited (on the disk, on the
//! clients, or on other processes sharing its core), and pairs/s is below what the core could
//! do; CPU µs/pair does not depend on that. Targets are printed next to the Handoff rows; this is a
//! benchmark, so missing one does not fail it.

#[path = "../load/bodies.rs"]
mod bodies;
#[path = "../load/client.rs"]
mod client;
#[path = "../load/conversation.rs"]
mod conversation;
#[path = "../load/server.rs"]
mod server;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use server::Kind;

struct Args {
    bin_dir: PathBuf,
    node_server: PathBuf,
    clients: usize,
    seconds: f64,
    warmup: f64,
    rounds: usize,
    /// Which servers to run (`node`, `memory`, `sqlite`, `sqlite-normal`, `floor`); all by
    /// default.
    servers: Vec<String>,
    /// Whose request bodies (`--client official|minimal`, default official).
    shape: bodies::Shape,
    /// Turns per conversation in conversation mode (`--conversation N`; 0: off).
    conversation: usize,
    /// Prints every turn's CPU of every conversation round (`--print-turns`).
    print_turns: bool,
}

/// Every server `--servers` may name, in the order rounds run them.
const SERVERS: [&str; 6] = [
    "node",
    "node-durable",
    "memory",
    "sqlite",
    "sqlite-normal",
    "floor",
];

const USAGE: &str = "usage: load [--bin-dir DIR] [--node-server FILE] [--clients 16] \
[--seconds 20] [--warmup 3] [--rounds 3] [--servers node,node-durable,memory,sqlite,sqlite-normal,floor] \
[--client official|minimal] [--conversation N] [--print-turns]";

/// Refuses the command line: what is wrong, then the usage, and exit status 2.
#[allow(clippy::print_stderr)] // A command-line tool's refusal.
fn refuse(problem: &str) -> ! {
    eprintln!("load: {problem}\n{USAGE}");
    std::process::exit(2)
}

fn args() -> Args {
    let mut parsed = Args {
        bin_dir: "target/release".into(),
        node_server: "tests/node/bench/reference-server.mjs".into(),
        clients: 16,
        seconds: 20.0,
        warmup: 3.0,
        rounds: 3,
        servers: SERVERS.map(str::to_owned).to_vec(),
        shape: bodies::Shape::Official,
        conversation: 0,
        print_turns: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| refuse(&format!("{arg} needs a value")))
        };
        let number = |v: String| -> f64 {
            match v.parse::<f64>() {
                Ok(n) if n.is_finite() && n >= 0.0 => n,
                _ => refuse(&format!("{arg} {v}: expected a number, 0 or more")),
            }
        };
        match arg.as_str() {
            "--bin-dir" => parsed.bin_dir = value().into(),
            "--node-server" => parsed.node_server = value().into(),
            "--clients" => parsed.clients = number(value()) as usize,
            "--seconds" => parsed.seconds = number(value()),
            "--warmup" => parsed.warmup = number(value()),
            "--rounds" => parsed.rounds = number(value()) as usize,
            "--servers" => parsed.servers = value().split(',').map(str::to_owned).collect(),
            "--client" => {
                let name = value();
                parsed.shape = bodies::Shape::parse(&name).unwrap_or_else(|| {
                    refuse(&format!("--client {name}: expected official or minimal"))
                });
            }
            "--conversation" => parsed.conversation = number(value()) as usize,
            "--print-turns" => parsed.print_turns = true,
            "-h" | "--help" => {
                #[allow(clippy::print_stdout)] // Asked for.
                {
                    println!("{USAGE}");
                }
                std::process::exit(0)
            }
            other => refuse(&format!("unknown argument {other}")),
        }
    }
    if let Some(unknown) = parsed
        .servers
        .iter()
        .find(|s| !SERVERS.contains(&s.as_str()))
    {
        refuse(&format!(
            "--servers: no server {unknown} (expected {})",
            SERVERS.join(",")
        ));
    }
    if parsed.clients == 0 || parsed.rounds == 0 {
        refuse("--clients and --rounds need at least 1");
    }
    parsed
}

/// One round's numbers for one server.
struct Round {
    pairs_per_s: f64,
    cpu_us_per_pair: f64,
    p50_ms: f64,
    p99_ms: f64,
    server_busy: f64,
    sys_share: f64,
    client_busy: f64,
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn mark(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

#[allow(clippy::print_stdout)] // The table is the output.
fn main() {
    let args = args();
    let pin = server::can_pin() && server::pin_self(1);
    let tick_us = 1e6 / server::clock_ticks() as f64;
    let loadavg = || std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load benchmark: {} client bodies, {} keep-alive clients, {} s warm-up + {} s measured, {} round(s), median; {}",
        args.shape.name(),
        args.clients,
        args.warmup,
        args.seconds,
        args.rounds,
        if pin {
            "servers pinned to core 0, load generator to core 1"
        } else {
            "NOT pinned (no taskset or one core): numbers are per process, not per core"
        }
    );
    println!("loadavg before: {}", loadavg().trim());
    let recorded = args
        .servers
        .iter()
        .any(|s| s == "floor")
        .then(|| record_for_floor(&args.bin_dir, args.shape));
    let floor = recorded
        .as_ref()
        .map(|(_, run, resume)| Kind::Floor(run.clone(), resume.clone()));
    let kinds: Vec<_> = [
        (
            "node",
            "Node reference (node:http + @ag-ui/encoder, Map)",
            Kind::Node(args.node_server.clone(), false),
        ),
        (
            "node-durable",
            "Node reference, durable (--durable: better-sqlite3, WAL, synchronous=FULL)",
            Kind::Node(args.node_server.clone(), true),
        ),
        (
            "memory",
            "Handoff dev server, HANDOFF_STORE=memory",
            Kind::Handoff(Some("memory"), None),
        ),
        (
            "sqlite",
            "Handoff dev server, default SQLite store (synchronous=FULL)",
            Kind::Handoff(None, None),
        ),
        (
            "sqlite-normal",
            "Handoff dev server, SQLite with HANDOFF_SQLITE_SYNC=normal",
            Kind::Handoff(None, Some("normal")),
        ),
    ]
    .into_iter()
    .chain(floor.map(|kind| {
        (
            "floor",
            "Transport floor: the same HTTP stack replaying the memory store's responses, no work",
            kind,
        )
    }))
    .filter(|(tag, _, _)| args.servers.iter().any(|s| s == tag))
    .map(|(tag, name, kind)| (tag, (name, kind)))
    .collect();
    let servers: Vec<_> = kinds
        .iter()
        .enumerate()
        .map(|(i, (_, (_, kind)))| {
            let tag = format!("s{i}");
            (
                server::start(kind, &args.bin_dir, pin, &tag),
                Arc::new(client::Ids::new(&tag)),
            )
        })
        .collect();
    let phases = (
        Duration::from_secs_f64(args.warmup),
        Duration::from_secs_f64(args.seconds),
    );
    let mut rounds: Vec<Vec<Round>> = kinds.iter().map(|_| Vec::new()).collect();
    let mut failures = 0u64;
    for round in 1..=args.rounds {
        for (i, (server, ids)) in servers.iter().enumerate() {
            let w = client::drive(
                &server.url,
                server.pid(),
                args.clients,
                phases,
                ids,
                50,
                args.shape,
            );
            let may_forget = matches!(kinds[i].1.1, Kind::Handoff(Some("memory"), _));
            let (held, mut bad) = client::verify(&server.url, &w.sampled, may_forget);
            bad.splice(0..0, w.refund_failures.iter().cloned());
            failures += w.errors + bad.len() as u64;
            let pick = |q: f64| {
                w.ttfb
                    .get(((w.ttfb.len() as f64 * q) as usize).min(w.ttfb.len().saturating_sub(1)))
                    .map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
            };
            let r = Round {
                pairs_per_s: w.pairs as f64 / w.seconds,
                cpu_us_per_pair: w.server_ticks as f64 * tick_us / w.pairs.max(1) as f64,
                p50_ms: pick(0.50),
                p99_ms: pick(0.99),
                server_busy: w.server_ticks as f64 * tick_us / 1e6 / w.seconds,
                sys_share: w.server_sys_ticks as f64 / w.server_ticks.max(1) as f64,
                client_busy: w.client_ticks as f64 * tick_us / 1e6 / w.seconds,
            };
            println!(
                "round {round} {}: {} pairs, {:.0} pairs/s, {:.0} µs CPU/pair, TTFB p50 {:.2} ms p99 {:.2} ms, server core {:.0}% busy ({:.0}% of it in the kernel), load generator {:.0}% of a core; {} failed pairs, {}/{} sampled refunds exactly once right after their pair, {} of them still stored after the round; {} refund check(s) failed",
                kinds[i].1.0,
                w.pairs,
                r.pairs_per_s,
                r.cpu_us_per_pair,
                r.p50_ms,
                r.p99_ms,
                r.server_busy * 100.0,
                r.sys_share * 100.0,
                r.client_busy * 100.0,
                w.errors,
                w.sampled.len() - w.refund_failures.len(),
                w.sampled.len(),
                held,
                bad.len()
            );
            if let Some(error) = w.first_error.as_deref().or(bad.first().map(String::as_str)) {
                let short: String = error.chars().take(400).collect();
                println!("  first failure: {short}");
            }
            rounds[i].push(r);
        }
    }
    println!("loadavg after: {}", loadavg().trim());
    println!();
    println!(
        "| server | pairs/s (one core) | server CPU µs/pair | run-1 TTFB p50 | run-1 TTFB p99 | peak RSS | server core busy | targets (issue 54) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    // One measure of one server, its median over the rounds.
    let median_of = |i: usize, f: fn(&Round) -> f64| median(rounds[i].iter().map(f).collect());
    let cpu_of = |tag: &str| {
        let i = kinds.iter().position(|(t, _)| *t == tag)?;
        Some(median_of(i, |r| r.cpu_us_per_pair))
    };
    let (node_cpu, durable_cpu) = (cpu_of("node"), cpu_of("node-durable"));
    let mut ratios = std::collections::BTreeMap::<&str, f64>::new();
    let mut vs_durable = std::collections::BTreeMap::<&str, f64>::new();
    for (i, (tag, (name, _))) in kinds.iter().enumerate() {
        let of = |f: fn(&Round) -> f64| median_of(i, f);
        let (rate, cpu) = (of(|r| r.pairs_per_s), of(|r| r.cpu_us_per_pair));
        let (p50, p99) = (of(|r| r.p50_ms), of(|r| r.p99_ms));
        let busy = of(|r| r.server_busy) * 100.0;
        let rss_mib = server::peak_rss_kib(servers[i].0.pid()) as f64 / 1024.0;
        // A reference's CPU per pair over this server's: how many of this server's pairs fit
        // in the core time the reference needs for one.
        let vs_node = node_cpu.map(|node| node / cpu);
        let vs_node_durable = durable_cpu.map(|durable| durable / cpu);
        let against = |ratio: Option<f64>, times: f64, who: &str| match ratio {
            Some(ratio) => format!(
                "{} ({ratio:.2}× {who}'s pairs per core)",
                mark(ratio >= times)
            ),
            None => format!("n/a ({who} not run)"),
        };
        let rss = mark(rss_mib <= 64.0);
        let targets = match *tag {
            "memory" => format!(
                "≥ 2.5× Node: {}; RSS ≤ 64 MiB: {rss}",
                against(vs_node, 2.5, "Node")
            ),
            "sqlite" => format!(
                "≥ 1× Node: {}; ≥ 3× Node durable: {}; RSS ≤ 64 MiB: {rss}",
                against(vs_node, 1.0, "Node"),
                against(vs_node_durable, 3.0, "Node durable"),
            ),
            "sqlite-normal" => format!(
                "≥ 4× Node durable: {}; RSS ≤ 64 MiB: {rss}",
                against(vs_node_durable, 4.0, "Node durable")
            ),
            // Its core is mostly idle: its pairs/s and TTFB are the load generator's limit.
            "floor" => "(the transport alone: no engine change goes below its CPU per pair; \
                        its pairs/s and TTFB are the load generator's own limit)"
                .to_owned(),
            _ => "(reference)".to_owned(),
        };
        if let Some(ratio) = vs_node_durable {
            vs_durable.insert(*tag, ratio);
        }
        if let Some(ratio) = vs_node {
            ratios.insert(*tag, ratio);
        }
        println!(
            "| {name} | {rate:.0} | {cpu:.0} | {p50:.2} ms | {p99:.2} ms | {rss_mib:.1} MiB | {busy:.0}% | {targets} |"
        );
    }
    let turn_ratios = match args.conversation {
        0 => Default::default(),
        turns => {
            let (ratios, errors) = conversations(&args, &kinds, &servers, turns);
            failures += errors;
            ratios
        }
    };
    drop(servers);
    // Last, one line a script can read.
    let ratio = |map: &std::collections::BTreeMap<&str, f64>, tag: &str| {
        map.get(tag).map_or("n/a".to_owned(), |r| format!("{r:.2}"))
    };
    println!(
        "\nratios: memory {}, sqlite {}, sqlite-normal {}, turn{n}/turn1 memory {} sqlite {}, \
         sqlite/node-durable {}, sqlite-normal/node-durable {}, \
         memory/node turn10 {}, memory/node turn{n} {}",
        ratio(&ratios, "memory"),
        ratio(&ratios, "sqlite"),
        ratio(&ratios, "sqlite-normal"),
        ratio(&turn_ratios.growth, "memory"),
        ratio(&turn_ratios.growth, "sqlite"),
        ratio(&vs_durable, "sqlite"),
        ratio(&vs_durable, "sqlite-normal"),
        ratio(&turn_ratios.vs_node_at_10, "memory"),
        ratio(&turn_ratios.vs_node_at_n, "memory"),
        // Without conversation mode the turn ratios are n/a, and so is the turn.
        n = match args.conversation {
            0 => "N".to_owned(),
            turns => turns.to_string(),
        },
    );
    if let Some((dir, _, _)) = recorded {
        let _ = std::fs::remove_dir_all(dir);
    }
    if failures > 0 {
        println!("\n{failures} failed pair(s), turn(s) or refund check(s): see the rounds above");
        std::process::exit(1);
    }
}

/// Records one pair's bodies on an unpinned memory-store dev server, for `load-floor` to
/// replay; returns (their directory, run 1's file, the resume's file).
fn record_for_floor(
    bin_dir: &std::path::Path,
    shape: bodies::Shape,
) -> (PathBuf, PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("handoff-load-{}-recorded", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory for the recorded pair");
    let recorder = server::start(
        &Kind::Handoff(Some("memory"), None),
        bin_dir,
        false,
        "record",
    );
    let (run, resume) = client::record_pair(&recorder.url, shape)
        .unwrap_or_else(|e| panic!("recording a pair for the transport floor: {e}"));
    let (run_path, resume_path) = (dir.join("run.sse"), dir.join("resume.sse"));
    std::fs::write(&run_path, run).expect("write the recorded run");
    std::fs::write(&resume_path, resume).expect("write the recorded resume");
    (dir, run_path, resume_path)
}

/// What conversation mode measured, by server tag: turn N's CPU over turn 1's, and Node's CPU
/// for turn 10 and turn N over the server's.
#[derive(Default)]
struct Turns<'a> {
    growth: std::collections::BTreeMap<&'a str, f64>,
    vs_node_at_10: std::collections::BTreeMap<&'a str, f64>,
    vs_node_at_n: std::collections::BTreeMap<&'a str, f64>,
}

/// Conversation mode on every server but the floor: per round, `clients` conversations of
/// `turns` turns in lockstep; prints each server's turn CPU (µs per client) at a few turns
/// and the median of turn N over turn 1; returns those medians by server tag, and failures.
#[allow(clippy::print_stdout)]
fn conversations<'a>(
    args: &Args,
    kinds: &[(&'a str, (&str, Kind))],
    servers: &[(server::Server, Arc<client::Ids>)],
    turns: usize,
) -> (Turns<'a>, u64) {
    println!(
        "\nconversation mode: {} conversations of {turns} turns each, in lockstep, every turn \
         sending the whole history ({} client bodies); server CPU per turn and client",
        args.clients,
        args.shape.name()
    );
    let mut ratios = Turns::default();
    let mut failures = 0;
    let mut per_server: Vec<Vec<conversation::Turns>> = kinds.iter().map(|_| Vec::new()).collect();
    for round in 1..=args.rounds {
        for (i, (tag, _)) in kinds.iter().enumerate() {
            if *tag == "floor" {
                continue;
            }
            let server = &servers[i].0;
            let label = format!("{tag}-r{round}");
            let set = conversation::drive(
                &server.url,
                server.pid(),
                args.clients,
                turns,
                &label,
                args.shape,
            );
            failures += set.errors;
            if let Some(error) = &set.first_error {
                let short: String = error.chars().take(400).collect();
                println!(
                    "  {tag} round {round}: {} failed turn(s); first: {short}",
                    set.errors
                );
            }
            if args.print_turns {
                let per_client = |ns: &u64| ns / 1000 / args.clients.max(1) as u64;
                let turns_us: Vec<u64> = set.cpu_ns.iter().map(per_client).collect();
                println!("  {tag} round {round}, CPU µs of each turn: {turns_us:?}");
            }
            per_server[i].push(set);
        }
    }
    println!(
        "| server | turn 1 | turn 2 | turn 10 | turn {turns}/2 | turn {turns} | turn {turns} / turn 1 | turn {turns} / turn 2 | Node / this at turn 10 | at turn {turns} | targets (issue 54) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    // Server `i`'s CPU for turn `k` (ns, all clients), the median over the rounds.
    let turn_cpu = |i: usize, k: usize| {
        let k = k.clamp(1, turns);
        median(
            per_server[i]
                .iter()
                .map(|s| s.cpu_ns.get(k - 1).copied().unwrap_or(0) as f64)
                .collect(),
        )
    };
    let node = kinds
        .iter()
        .position(|(tag, _)| *tag == "node")
        .filter(|i| !per_server[*i].is_empty());
    for (i, (tag, (name, _))) in kinds.iter().enumerate() {
        let sets = &per_server[i];
        if sets.is_empty() {
            continue;
        }
        let at = |k: usize| turn_cpu(i, k) / 1e3 / args.clients as f64;
        let ratio = median(sets.iter().map(|s| s.ratio(turns)).collect());
        // Turn 1 also creates the thread; from turn 2 on, only the history grows.
        let from_second = at(turns) / at(2).max(f64::MIN_POSITIVE);
        // Node's CPU for a turn over this server's: how many of this server's turns fit in
        // the core time Node needs for one.
        let vs_node =
            |k: usize| node.map(|n| turn_cpu(n, k) / turn_cpu(i, k).max(f64::MIN_POSITIVE));
        let (at_10, at_n) = (vs_node(10), vs_node(turns));
        let shown = |r: Option<f64>| r.map_or("n/a".to_owned(), |r| format!("{r:.2}×"));
        let target = match *tag {
            "memory" => format!(
                "turn {turns} / turn 1 ≤ 1.5: {}; ≥ 3× Node at turn 10 and turn {turns}: {}",
                mark(ratio <= 1.5),
                match (at_10, at_n) {
                    (Some(a), Some(b)) => mark(a >= 3.0 && b >= 3.0),
                    _ => "n/a (Node not run)",
                }
            ),
            "sqlite" | "sqlite-normal" => {
                format!("turn {turns} / turn 1 ≤ 1.5: {}", mark(ratio <= 1.5))
            }
            _ => "(reference)".to_owned(),
        };
        println!(
            "| {name} | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs | {ratio:.2} | {from_second:.2} | {} | {} | {target} |",
            at(1),
            at(2),
            at(10),
            at(turns / 2),
            at(turns),
            shown(at_10),
            shown(at_n),
        );
        ratios.growth.insert(*tag, ratio);
        if *tag != "node" {
            if let Some(r) = at_10 {
                ratios.vs_node_at_10.insert(*tag, r);
            }
            if let Some(r) = at_n {
                ratios.vs_node_at_n.insert(*tag, r);
            }
        }
    }
    (ratios, failures)
}
