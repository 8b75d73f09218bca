#!/usr/bin/env bash
# `make tck`: the A2A TCK's MUST tests (JSON-RPC) against the fixture agent `tck-agent`.
#
# 1. A venv of its own in target/tck/venv (not the project's .venv) with the TCK installed
#    from a scratch copy (target/tck/a2a-tck: the snapshot is read-only and the TCK writes
#    reports/ beside itself).
# 2. Builds `tck-agent` and serves it on TCK_PORT, waiting for /healthz.
# 3. Runs run_tck.py --level must --transport jsonrpc, then stops the server, whatever happened.
# 4. tests/tck/summary.py reads the JUnit report: per-module counts, then the last line,
#    `tck: MUST N passed, M failed`; the exit status is non-zero if any MUST test failed.
#
# Environment: TCK_PORT (9999), TCK_SRC (../shared/tools/a2a-tck), PYTHON (python3),
# TCK_ARGS (more pytest arguments for run_tck.py, e.g. `-k artifacts`).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PORT=${TCK_PORT:-9999}
SRC=${TCK_SRC:-$ROOT/../shared/tools/a2a-tck}
PYTHON=${PYTHON:-python3}
WORK=$ROOT/target/tck
VENV=$WORK/venv
TCK=$WORK/a2a-tck
URL=http://127.0.0.1:$PORT

log() { echo "tck: $*" >&2; }

[ -f "$SRC/run_tck.py" ] || { log "no TCK at $SRC (set TCK_SRC)"; exit 2; }
mkdir -p "$WORK"

# A fresh copy each run (the snapshot may have changed; the copy is small). Writable, as
# the snapshot's files are not.
rm -rf "$TCK"
cp -R "$SRC" "$TCK"
chmod -R u+w "$TCK"

# The venv and the TCK's dependencies, installed again only when the TCK's pyproject changes.
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
if ! cmp -s "$TCK/pyproject.toml" "$VENV/.tck-pyproject.toml"; then
    log "installing the TCK in $VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "$TCK"
    cp "$TCK/pyproject.toml" "$VENV/.tck-pyproject.toml"
fi

log "building tck-agent"
cargo build -q -p handoff-tests --bin tck-agent

if curl -fsS -o /dev/null "$URL/healthz" 2>/dev/null; then
    log "something already answers on $URL; stop it or set TCK_PORT"
    exit 2
fi

SERVER_LOG=$WORK/server.log
# The TCK takes its push notifications on a local http:// webhook: loopback admitted.
PORT=$PORT HANDOFF_AUTH=${HANDOFF_AUTH:-none} HANDOFF_A2A_ALLOW_LOOPBACK=true "$ROOT/target/debug/tck-agent" >"$SERVER_LOG" 2>&1 &
SERVER_PID=$!
# SIGTERM lets open responses finish (a stream the TCK left open among them): 10 s, then SIGKILL.
stop_server() {
    kill "$SERVER_PID" 2>/dev/null || return 0
    for _ in $(seq 1 100); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
}
trap stop_server EXIT
trap 'exit 130' INT TERM

for _ in $(seq 1 300); do
    if curl -fsS -o /dev/null "$URL/healthz" 2>/dev/null; then break; fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        log "tck-agent exited before answering /healthz; its log ($SERVER_LOG):"
        cat "$SERVER_LOG" >&2
        exit 2
    fi
    sleep 0.1
done
curl -fsS -o /dev/null "$URL/healthz" || { log "tck-agent did not answer $URL/healthz in 30 s"; exit 2; }
log "tck-agent serves $URL (log: $SERVER_LOG)"

# The TCK's own exit status is not ours: the summary decides from its report.
rm -rf "$TCK/reports"
status=0
# shellcheck disable=SC2086 # TCK_ARGS is a list of words
(cd "$TCK" && "$VENV/bin/python" run_tck.py --sut-host "$URL" --transport jsonrpc --level must \
    ${TCK_ARGS:+-- $TCK_ARGS}) >"$WORK/tck.log" 2>&1 || status=$?
log "run_tck.py exited $status (its output: $WORK/tck.log; reports: $TCK/reports)"

stop_server
exec "$VENV/bin/python" "$ROOT/tests/tck/summary.py" "$TCK/reports/junitreport.xml"
