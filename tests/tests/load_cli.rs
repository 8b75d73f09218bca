//! The load benchmark's command line: `--help` answers, a mistyped argument is refused with
//! the usage instead of a panic, and a server name it does not know is not silently dropped.

use std::process::{Command, Output};

fn load(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_load"))
        .args(args)
        .output()
        .expect("the load binary runs")
}

#[test]
fn help_prints_the_usage_and_succeeds() {
    let out = load(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("usage: load "), "{text}");
    assert!(text.contains("--conversation N"), "{text}");
}

#[test]
fn a_bad_command_line_is_refused_with_status_2_and_says_why() {
    for (args, says) in [
        (&["--bogus"][..], "unknown argument --bogus"),
        (&["--servers", "node,memry"], "no server memry"),
        (&["--clients", "many"], "--clients many: expected a number"),
        (
            &["--client", "browser"],
            "--client browser: expected official or minimal",
        ),
        (&["--rounds"], "--rounds needs a value"),
        (&["--rounds", "0"], "at least 1"),
    ] {
        let out = load(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(stderr.contains("usage: load "), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
