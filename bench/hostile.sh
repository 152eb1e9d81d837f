#!/usr/bin/env bash
# The lab under hostile load, from a release build: schemathesis (every check) against the
# lab's own OpenAPI document, then an HTTP connection flood, a data-port flood and slow-loris
# connections while /healthz is probed, with the lab's file limit at 1024 (systemd's default).
# Prints responses by status (0 5xx is the goal), /healthz latency during the floods, how long
# trickled headers were held, and the lab's memory and open files afterwards. Then the targeted
# probes (bench/probes.py) against a second lab with default limits: cancels of throttled runs,
# emulated targets too slow for their ring, source files swapped mid-run, 3 000 agent
# registrations, the smaller refusals; and a second lab on the same SQLite file, a database with
# a damaged page, and a full disk under the database freed again (as root: a tmpfs of the
# lab's own, in a private mount namespace).
#
#   bench/hostile.sh                    # defaults below
#   EXAMPLES=200 CONNECTIONS=2000 bench/hostile.sh
#   PROBES_ONLY=1 bench/hostile.sh      # the targeted probes and faults alone
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

if [ "${PROBES_ONLY:-0}" != 1 ]; then
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
fi

# The targeted probes need runs longer than the flooded lab's 2 s: a second lab, default limits.
start_lab() { # db data-dir stdout stderr [wrapper...]
    local db=$1 data=$2 out=$3 err=$4
    shift 4
    "$@" target/release/backlab serve --bind 127.0.0.1:0 --data-bind 127.0.0.1:0 \
        --db "$db" --data-dir "$data" --demo-size 16M </dev/null >"$out" 2>"$err" &
    echo $!
}
wait_listening() { # stdout
    for _ in $(seq 100); do
        grep -q 'listening on' "$1" 2>/dev/null && break
        sleep 0.1
    done
    sed -n 's/^backlab listening on //p' "$1" | head -1
}
kill "$lab_pid" 2>/dev/null || true
wait "$lab_pid" 2>/dev/null || true
lab_pid=$(start_lab "$work/probe.db" "$work/probe-data" "$work/probe.out" "$work/probe.log")
probe_base=$(wait_listening "$work/probe.out")
[ -n "$probe_base" ] || { echo "the probe lab did not start:"; cat "$work/probe.log"; exit 1; }
probe_data_port=$(curl -s "$probe_base/api/agents" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data_port"])')
for _ in $(seq 100); do [ -d "$work/probe-data/demo" ] && break; sleep 0.1; done
sleep 2 # the demo dataset is written in the background

say "targeted probes at $probe_base"
set +e
python3 bench/probes.py --base "$probe_base" --data-port "$probe_data_port" --pid "$lab_pid" \
    --data-dir "$work/probe-data" --work "$work"
probes_status=$?
set -e

say "a second lab on the same SQLite file"
set +e
timeout 20 target/release/backlab serve --bind 127.0.0.1:0 --data-bind 127.0.0.1:0 \
    --db "$work/probe.db" --data-dir "$work/probe-data" --demo-size 0 >/dev/null 2>"$work/second.log"
second_status=$?
set -e
echo "second lab: exit $second_status; said: $(sed 's/\x1b\[[0-9;]*m//g' "$work/second.log" | tail -1)"
echo "first lab afterwards: $(curl -s "$probe_base/healthz")"
kill -TERM "$lab_pid"; wait "$lab_pid" 2>/dev/null || true
lab_pid=

say "a database with a damaged page"
cp "$work/probe.db" "$work/damaged.db"
pages=$(( $(stat -c %s "$work/damaged.db") / 4096 ))
dd if=/dev/urandom of="$work/damaged.db" bs=4096 seek=$((pages / 2)) count=1 conv=notrunc status=none
sum_before=$(sha256sum "$work/damaged.db" | cut -c1-16)
set +e
timeout 20 target/release/backlab serve --bind 127.0.0.1:0 --data-bind 127.0.0.1:0 \
    --db "$work/damaged.db" --data-dir "$work/probe-data" --demo-size 0 >/dev/null 2>"$work/damaged.log"
damaged_status=$?
set -e
sum_after=$(sha256sum "$work/damaged.db" | cut -c1-16)
echo "page $((pages / 2)) of $pages overwritten; the lab exited $damaged_status and said: $(sed 's/\x1b\[[0-9;]*m//g' "$work/damaged.log" | tail -1)"
echo "sha256 before $sum_before, after $sum_after"

say "a full disk under the database (a 4 MiB tmpfs of the lab's own), then room again"
mkdir -p "$work/dbfs"
lab_pid=$(start_lab "$work/dbfs/lab.db" "$work/full-data" "$work/full.out" "$work/full.log" \
    unshare --mount sh -c 'mount -t tmpfs -o size=4m backlab-db "$0" && exec "$@"' "$work/dbfs")
full_base=$(wait_listening "$work/full.out")
small='{"source":{"generated":{"size":"1G"}},"target":{"kind":"null"},"tests":["null_sink"],"params":{"duration_s":1,"time_based":true},"repeat":2}'
wide='{"source":{"generated":{"size":"1G"}},"target":{"kind":"null"},"tests":["null_sink"],"params":{"duration_s":1},"matrix":{"buffers":['$(seq -s, 1 40)'],"streams":[1,2,3,4,5]},"repeat":5}'
post() { curl -s -o /dev/null -w '%{http_code}\n' -H 'content-type: application/json' -d "$2" "$full_base$1"; }
post /api/campaigns "$small" >/dev/null
nsenter --target "$lab_pid" --mount sh -c "cat /dev/zero > '$work/dbfs/filler' 2>/dev/null; df -h '$work/dbfs' | tail -1"
full_answers=$( { for _ in 1 2 3 4 5 6; do post /api/campaigns "$wide"; post /api/campaigns "$small"; done; } | sort | uniq -c | awk '{printf "%s × %s, ", $2, $1}')
echo "while full, 12 submissions: ${full_answers%, }; /healthz: $(curl -s -o /dev/null -w '%{http_code}' "$full_base/healthz")"
nsenter --target "$lab_pid" --mount rm "$work/dbfs/filler"
freed_answers=$( { for _ in $(seq 12); do post /api/campaigns "$small"; done; } | sort | uniq -c | awk '{printf "%s × %s, ", $2, $1}')
echo "room again, 12 submissions: ${freed_answers%, }"
for _ in $(seq 600); do
    queued=$(curl -s "$full_base/healthz" | python3 -c 'import json,sys; h=json.load(sys.stdin); print(h["queued"] + h["running"])')
    [ "$queued" = 0 ] && break
    sleep 0.5
done
echo "/healthz once the queue drained: $(curl -s "$full_base/healthz")"
sed 's/\x1b\[[0-9;]*m//g' "$work/full.log" | grep -o 'run started.*run_id=[0-9]*' | grep -o 'run_id=[0-9]*' \
    | sort | uniq -c | awk '{runs++; if ($1 > 1) twice++} END {printf "runs executed: %d, more than once: %d\n", runs, twice + 0}'
kill -TERM "$lab_pid"; wait 2>/dev/null || true
lab_pid=
exit "$probes_status"
