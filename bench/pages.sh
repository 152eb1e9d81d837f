#!/usr/bin/env bash
# bench/pages.sh - latency of the report page, its download and the chart endpoints for a
# finished 500-run campaign, and of the campaign list with 200 campaigns, measured with wrk
# against a release build of `backlab serve`.
#
#   1. starts `backlab serve` on a free port with a fresh database in a scratch directory;
#   2. runs a 500-run campaign (null_sink on generated data: 5 buffers x 5 block sizes
#      x 4 streams x 5 repeats, 0.3 s each, so every run has samples), then 199 small ones;
#   3. runs wrk on /campaigns/ID, its report download, each chart (and one drawn for a phone),
#      the list (/) and a planner question, and prints p50 and p99.
#
# Environment: DURATION (wrk seconds per URL, default 10), CONNECTIONS (default 4),
# BENCH_DIR (scratch parent, default /var/tmp). Needs wrk, curl, python3, cargo. Goal: p99 < 10 ms.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-4}
for tool in wrk curl python3 cargo; do
    command -v "$tool" >/dev/null || { echo "pages.sh: $tool is missing (apt-get install $tool)" >&2; exit 2; }
done

echo "building backlab (cargo build --release)" >&2
(cd "$ROOT" && cargo build --release --quiet)
BL=$ROOT/target/release/backlab
SCRATCH=$(mktemp -d "${BENCH_DIR:-/var/tmp}/backlab-pages.XXXXXX")
SERVER_PID=
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

"$BL" serve --bind 127.0.0.1:0 --db "$SCRATCH/lab.db" --data-dir "$SCRATCH/data" --demo-size 0 \
    >"$SCRATCH/stdout" 2>"$SCRATCH/serve.log" &
SERVER_PID=$!
for _ in $(seq 100); do
    grep -q "listening on" "$SCRATCH/stdout" 2>/dev/null && break
    sleep 0.1
done
BASE=$(sed -n 's/^backlab listening on //p' "$SCRATCH/stdout")
[ -n "$BASE" ] || { echo "pages.sh: the server did not start" >&2; cat "$SCRATCH/serve.log" >&2; exit 1; }

SPEC='{"name": "500 runs", "source": {"generated": {"size": "64G"}}, "target": {"kind": "null"},
  "tests": ["null_sink"], "repeat": 5,
  "params": {"duration_s": 0.3},
  "matrix": {"buffers": [4, 8, 16, 32, 64], "block_size": ["64K", "128K", "256K", "512K", "1M"],
             "streams": [1, 2, 4, 8]}}'
ID=$(curl -sf -X POST "$BASE/api/campaigns" -d "$SPEC" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
echo "campaign $ID: 500 runs of 0.3 s, waiting for them" >&2
while :; do
    STATUS=$(curl -sf "$BASE/api/campaigns/$ID" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["runs_finished"])')
    case $STATUS in done*) break ;; failed* | cancelled*) echo "pages.sh: campaign $STATUS" >&2; exit 1 ;; esac
    sleep 2
done

SMALL='{"name": "small", "source": {"generated": {"size": "4M"}}, "target": {"kind": "null"},
  "tests": ["null_sink"], "params": {"duration_s": 0.3}}'
echo "199 more campaigns for the list" >&2
for _ in $(seq 199); do
    LAST=$(curl -sf -X POST "$BASE/api/campaigns" -d "$SMALL" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
done
while :; do
    STATUS=$(curl -sf "$BASE/api/campaigns/$LAST" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')
    case $STATUS in done) break ;; failed | cancelled) echo "pages.sh: campaign $STATUS" >&2; exit 1 ;; esac
    sleep 1
done

# p50 and p99 from wrk's latency distribution, in ms.
measure() {
    local url=$1 out
    out=$(wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$url")
    python3 - "$out" <<'PY'
import re, sys
text = sys.argv[1]
def ms(value, unit):
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
p = {m.group(1): ms(m.group(2), m.group(3)) for m in re.finditer(r"^\s+(50|99)(?:\.000)?%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)}
rate = re.search(r"Requests/sec:\s+([\d.]+)", text)
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
print(f"{p.get('50', float('nan')):8.2f} {p.get('99', float('nan')):8.2f} {float(rate.group(1)) if rate else 0:9.0f} {errors.group(1) if errors else 0:>6}")
PY
}

echo
echo "== latency with $CONNECTIONS connections, ${DURATION}s per URL (a 500-run campaign; 200 campaigns)"
printf '%-40s %8s %8s %9s %6s  %s\n' url p50_ms p99_ms req/s non2xx goal
FAIL=0
for path in "/campaigns/$ID" "/campaigns/$ID/charts/tests.svg" "/campaigns/$ID/charts/throughput.svg" \
    "/campaigns/$ID/charts/stages.svg" "/campaigns/$ID/charts/matrix.svg" \
    "/campaigns/$ID/charts/heatmap.svg" "/campaigns/$ID/charts/throughput.narrow.svg" \
    "/campaigns/$ID/report.html" "/"; do
    read -r p50 p99 rate errors <<<"$(measure "$BASE$path")"
    verdict=$(python3 -c "print('PASS' if $p99 < 10 and $errors == 0 else 'FAIL')")
    [ "$verdict" = PASS ] || FAIL=1
    printf '%-40s %8s %8s %9s %6s  %s\n' "${path/$ID/ID}" "$p50" "$p99" "$rate" "$errors" "p99 < 10: $verdict"
done
# The planner answers a question from the campaign's figures each time it is asked (nothing is
# kept): reported, with no goal, so its cost at 500 runs is known.
path="/campaigns/$ID/plan?data=12T&window=8h"
read -r p50 p99 rate errors <<<"$(measure "$BASE$path")"
[ "$errors" = 0 ] || FAIL=1
printf '%-40s %8s %8s %9s %6s  %s\n' "${path/$ID/ID}" "$p50" "$p99" "$rate" "$errors" "(computed each time)"
echo
echo "machine: $(nproc) cores, $(uname -r); wrk $(wrk -v 2>&1 | head -n1 | awk '{print $2}')"
exit $FAIL
