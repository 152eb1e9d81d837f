#!/usr/bin/env bash
# bench/preset-twice.sh - from an empty data dir: starts `backlab serve`, runs the "Bottleneck
# determination" preset on the demo data twice in a row, and prints each run's validity, both
# verdicts, and how many rows /compare highlights between the two identical campaigns (the goal
# is none: a second identical campaign is not a change).
#
# Environment: BENCH_DIR (default /var/tmp/backlab-preset), PORT (default 18480).
# Needs cargo, curl and python3. Builds the release binary first.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_DIR=${BENCH_DIR:-/var/tmp/backlab-preset}
PORT=${PORT:-18480}
(cd "$ROOT" && cargo build --release --quiet)
BL=${CARGO_TARGET_DIR:-$ROOT/target}/release/backlab
rm -rf "$BENCH_DIR"
mkdir -p "$BENCH_DIR"
"$BL" serve --bind "127.0.0.1:$PORT" --data-bind "127.0.0.1:$((PORT + 1))" \
    --db "$BENCH_DIR/lab.db" --data-dir "$BENCH_DIR/data" >"$BENCH_DIR/serve.log" 2>&1 &
LAB=$!
trap 'kill $LAB 2>/dev/null; wait $LAB 2>/dev/null; rm -rf "$BENCH_DIR"' EXIT
URL=http://127.0.0.1:$PORT
for _ in $(seq 1 120); do curl -fs "$URL/healthz" >/dev/null && break; sleep 0.5; done

# The preset's spec, as the new-campaign page builds it.
SPEC='{"name": "Bottleneck determination", "source": {"paths": ["demo"]},
  "target": {"kind": "tape", "model": "lto-4", "drives": 1},
  "tests": ["tape_write", "read_single", "read_parallel", "null_sink", "full_backup"],
  "params": {"buffers": 32, "block_size": "256K", "streams": 4, "duration_s": 10,
             "time_based": true, "direct": false, "cold_cache": true, "fsync": true},
  "repeat": 3}'
echo "== machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== spec: the Bottleneck determination preset (demo data, emulated LTO-4, 10 s time-based, 3 repeats)"

# Retried while the lab is still writing its demo dataset at first start.
submit() {
    local body
    for _ in $(seq 1 60); do
        body=$(curl -s -X POST -H 'Content-Type: application/json' -d "$SPEC" "$URL/api/campaigns")
        if python3 -c 'import json,sys; print(json.loads(sys.argv[1])["id"])' "$body" 2>/dev/null; then
            return
        fi
        sleep 2
    done
    echo "preset-twice.sh: the lab refused the campaign: $body" >&2
    exit 1
}
wait_done() {
    while :; do
        status=$(curl -fs "$URL/api/campaigns/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')
        case $status in done | failed | cancelled) echo "$status"; return ;; esac
        sleep 5
    done
}
show() {
    curl -fs "$URL/api/campaigns/$1/bottleneck" >"$BENCH_DIR/report.json"
    python3 - "$BENCH_DIR/report.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
for run in r["runs"]:
    v = run.get("validity") or {}
    s = run.get("steady") or {}
    flags = ", ".join(f["code"] for f in v.get("flags", [])) or "-"
    steady = s.get("mb_per_s", "-") if s.get("steady") else "-"
    print("  %-14s %8.1f MB/s  steady %7s  valid=%s  %s" % (run["test"], run["mb_per_s"], steady, v.get("valid"), flags))
b = r["bottleneck"]
rows = []
for x in b["rows"]:
    spread = "±%.1f%%" % x["spread_pct"] if x["spread_pct"] is not None else "once"
    rows.append("%s %s %s" % (x["test"], x["mb_per_s"], spread))
print("  rows:", "; ".join(rows))
print("  conclusive:", b["conclusive"])
print("  verdict:", b["verdict"])
EOF
}
A=$(submit)
echo "== campaign A $A: $(wait_done "$A")"
show "$A"
B=$(submit)
echo "== campaign B $B: $(wait_done "$B")"
show "$B"
PAGE=$(curl -fs "$URL/compare?a=$A&b=$B")
ROWS=$(grep -c '<tr class="' <<<"$PAGE" || true)
CHANGED=$(grep -c '<tr class="changed"' <<<"$PAGE" || true)
echo "== /compare?a=$A&b=$B: $CHANGED of $ROWS rows highlighted as a change (goal: 0)"
python3 - "$PAGE" <<'EOF'
import re, sys
for row in re.findall(r'<tr class="[^"]*">(.*?)</tr>', sys.argv[1], re.S):
    cells = [re.sub("<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    if cells:
        print("  " + " | ".join(c.strip() for c in cells))
EOF
