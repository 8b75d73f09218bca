//! The servers under load: a child process pinned to one core, its URL from the first
//! stdout line, and its CPU time and peak RSS from `/proc`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// What to start.
pub(crate) enum Kind {
    /// `dev-server` with this `HANDOFF_STORE` (`None`: the default, the embedded SQLite store)
    /// and `HANDOFF_SQLITE_SYNC` (`None`: the default, `full`).
    Handoff(Option<&'static str>, Option<&'static str>),
    /// `node reference-server.mjs`, with `--durable` when the flag is set (its SQLite file
    /// in the server's own directory, like the dev server's).
    Node(PathBuf, bool),
    /// `load-floor`, replaying these recorded bodies (run 1, the resume).
    Floor(PathBuf, PathBuf),
}

/// A running server; killed on drop.
pub(crate) struct Server {
    child: Child,
    /// `http://127.0.0.1:port`.
    pub(crate) url: String,
    dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether `taskset` can pin processes here (and there is a second core for the client).
pub(crate) fn can_pin() -> bool {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores >= 2
        && Command::new("taskset")
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

/// Pins this process (every thread, and the threads it starts later) to `core`.
pub(crate) fn pin_self(core: usize) -> bool {
    Command::new("taskset")
        .args([
            "-a",
            "-p",
            "-c",
            &core.to_string(),
            &std::process::id().to_string(),
        ])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Starts a server (under `taskset -c 0` when `pin`) and waits for its URL.
pub(crate) fn start(kind: &Kind, bin_dir: &Path, pin: bool, tag: &str) -> Server {
    let dir = std::env::temp_dir().join(format!("handoff-load-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (program, args): (PathBuf, Vec<PathBuf>) = match kind {
        Kind::Handoff(..) => (bin_dir.join("dev-server"), vec![]),
        Kind::Node(script, durable) => {
            let flag = durable.then(|| "--durable".into());
            (
                "node".into(),
                [script.clone()].into_iter().chain(flag).collect(),
            )
        }
        Kind::Floor(..) => (bin_dir.join("load-floor"), vec![]),
    };
    let mut command = if pin {
        let mut c = Command::new("taskset");
        c.args(["-c", "0"]).arg(&program);
        c
    } else {
        Command::new(&program)
    };
    command
        .args(&args)
        .env("PORT", "0")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Kind::Node(_, true) = kind {
        command.env("HANDOFF_DATA_DIR", &dir);
    }
    if let Kind::Handoff(store, sync) = kind {
        command
            .env("HANDOFF_DATA_DIR", &dir)
            .env_remove("HANDOFF_STORE")
            .env_remove("HANDOFF_SQLITE_SYNC");
        if let Some(store) = store {
            command.env("HANDOFF_STORE", store);
        }
        if let Some(sync) = sync {
            command.env("HANDOFF_SQLITE_SYNC", sync);
        }
    }
    if let Kind::Floor(run, resume) = kind {
        command
            .env("HANDOFF_FLOOR_RUN", run)
            .env("HANDOFF_FLOOR_RESUME", resume);
    }
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("start {} (build it first): {e}", program.display()));
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("banner");
    // Keep draining so the server never writes into a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in banner {line:?}"))
        .to_owned();
    Server { child, url, dir }
}

/// Clock ticks per second of `/proc/<pid>/stat` times (`getconf CLK_TCK`, else 100).
pub(crate) fn clock_ticks() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100)
}

/// (utime, stime) in clock ticks of a process, all its threads included.
pub(crate) fn cpu_ticks(pid: u32) -> (u64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at field 3 (state).
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|v| v.parse::<u64>().ok());
    (field(14).unwrap_or(0), field(15).unwrap_or(0))
}

/// CPU time of a process in nanoseconds, all its threads included, exited ones too: its
/// CPU-time clock (`clock_getcpuclockid`), which the kernel brings up to date when read.
/// Per-thread `schedstat` lagged by up to a scheduler tick for a thread that had just run,
/// so a conversation turn (a few ms) was read with part of its CPU or with the last turn's.
pub(crate) fn cpu_ns(pid: u32) -> u64 {
    let clock = i32::try_from(pid)
        .ok()
        .and_then(|pid| nix::time::clock_getcpuclockid(nix::unistd::Pid::from_raw(pid)).ok());
    clock
        .and_then(|clock| nix::time::clock_gettime(clock).ok())
        .map_or(0, |t| {
            u64::try_from(t.tv_sec()).unwrap_or(0) * 1_000_000_000
                + u64::try_from(t.tv_nsec()).unwrap_or(0)
        })
}

/// Peak resident set (`VmHWM`), in KiB.
pub(crate) fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

impl Server {
    /// The server's process id (taskset execs the program, so it is the same process).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}
