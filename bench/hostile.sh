#!/usr/bin/env bash
# The lab under hostile load, from a release build: schemathesis (every check) against the
# lab's own OpenAPI document, then an HTTP connection flood, a data-port flood and slow-loris
# connections while /healthz is probed, with the lab's file limit at 1024 (systemd's default).
# Prints responses by status (0 5xx is the goal), /healthz latency during the floods, how long
# trickled headers were held, and the lab's memory and open files afterwards.
#
#   bench/hostile.sh                    # defaults below
#   EXAMPLES=200 CONNECTIONS=2000 bench/hostile.sh
set -euo pipefail
cd "$(dirname "$0")/.."

EXAMPLES=${EXAMPLES:-40}          # schemathesis examples per operation
MAX_TIME=${MAX_TIME:-300}         # schemathesis time budget, seconds
CONNECTIONS=${CONNECTIONS:-1100}  # connections per flood
HOLD=${HOLD:-15}                  # seconds each flood is held
LORIS=${LORIS:-20}                # slow-loris connections
FD_LIMIT=${FD_LIMIT:-1024}        # the lab's file limit (soft and hard)

say() { printf '\n== %s\n' "$*"; }

cargo build --release --quiet
venv=target/bench-venv
if [ ! -x "$venv/bin/schemathesis" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet 'schemathesis>=4,<5'
fi

work=$(mktemp -d)
lab_pid=
cleanup() {
    if [ -n "$lab_pid" ]; then kill "$lab_pid" 2>/dev/null || true; wait "$lab_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Runs are kept tiny: schemathesis's campaigns really run.
(
    ulimit -n "$FD_LIMIT"
    exec target/release/backlab serve --bind 127.0.0.1:0 --data-bind 127.0.0.1:0 \
        --db "$work/lab.db" --data-dir "$work/data" --demo-size 16M \
        --max-duration 2 --max-size 64M
) >"$work/stdout" 2>"$work/serve.log" &
lab_pid=$!
for _ in $(seq 100); do
    grep -q 'listening on' "$work/stdout" 2>/dev/null && break
    sleep 0.1
done
base=$(sed -n 's/^backlab listening on //p' "$work/stdout" | head -1)
[ -n "$base" ] || { echo "the lab did not start:"; cat "$work/serve.log"; exit 1; }
port=${base##*:}
data_port=$(curl -s "$base/api/agents" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data_port"])')

say "conditions"
echo "backlab $(git rev-parse --short HEAD 2>/dev/null || echo '?') release build at $base, data port $data_port"
echo "lab file limit: $(grep 'Max open files' /proc/$lab_pid/limits | awk '{print $4" soft, "$5" hard"}')"
echo "schemathesis $("$venv/bin/schemathesis" --version | awk '{print $NF}'): --checks all, $EXAMPLES examples per operation, ${MAX_TIME} s at most"
echo "floods: $CONNECTIONS connections each, held ${HOLD} s; $LORIS slow-loris connections, one header line every 2 s"
echo "machine: $(nproc) cores, $(uname -r)"

say "schemathesis against /api/openapi.json"
set +e
"$venv/bin/schemathesis" run "$base/api/openapi.json" --checks all --workers 1 \
    --max-examples "$EXAMPLES" --max-time "$MAX_TIME" --seed 11 --no-color \
    --report vcr --report-vcr-path "$work/cassette.yaml" >"$work/schemathesis.log" 2>&1
st_status=$?
set -e
tail -n 25 "$work/schemathesis.log"
"$venv/bin/python" - "$work/cassette.yaml" <<'EOF'
import collections, re, sys
codes = collections.Counter(re.findall(r"^\s+code: '?(\d{3})'?", open(sys.argv[1]).read(), re.M))
total = sum(codes.values())
by_status = ", ".join(f"{code}: {count}" for code, count in sorted(codes.items()))
errors = sum(count for code, count in codes.items() if code.startswith("5"))
print(f"requests sent: {total}; by status: {by_status}")
print(f"SUMMARY schemathesis_requests={total} server_errors_5xx={errors}")
EOF
echo "schemathesis exit status: $st_status (non-zero also when a conformance check other than 5xx failed; see above)"
curl -sf "$base/healthz" >/dev/null && echo "healthz after schemathesis: ok"

say "floods and slow-loris"
python3 bench/flood.py --port "$port" --data-port "$data_port" \
    --connections "$CONNECTIONS" --hold "$HOLD" --loris "$LORIS"

say "the lab afterwards"
curl -sf "$base/healthz" && echo
echo "peak RSS: $(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' /proc/$lab_pid/status), open files now: $(ls /proc/$lab_pid/fd | wc -l)"
panics=$(grep -c 'panicked' "$work/serve.log" || true)
echo "panics in the lab's log: $panics"
