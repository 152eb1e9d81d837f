#!/usr/bin/env bash
# Expected against real durations of the form's presets, from a release build: each preset's
# fields as the form shows them, its dry run's estimate, then the campaign itself timed from
# submission to its end. The goal is within ±25 %.
#
#   bench/estimates.sh                       # bottleneck and tuning
#   PRESETS="bottleneck" bench/estimates.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PRESETS=${PRESETS:-"bottleneck tuning"}

cargo build --release --quiet
work=$(mktemp -d)
lab_pid=
cleanup() {
    if [ -n "$lab_pid" ]; then kill "$lab_pid" 2>/dev/null || true; wait "$lab_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
target/release/backlab serve --bind 127.0.0.1:0 --data-bind 127.0.0.1:0 \
    --db "$work/lab.db" --data-dir "$work/data" >"$work/stdout" 2>"$work/serve.log" &
lab_pid=$!
for _ in $(seq 100); do
    grep -q 'listening on' "$work/stdout" 2>/dev/null && break
    sleep 0.1
done
base=$(sed -n 's/^backlab listening on //p' "$work/stdout" | head -1)
[ -n "$base" ] || { echo "the lab did not start:"; cat "$work/serve.log"; exit 1; }
# The demo dataset (256 MiB) is written in the background at first start.
for _ in $(seq 600); do
    [ -d "$work/data/demo" ] && break
    sleep 0.1
done
sleep 1
echo "backlab $(git rev-parse --short HEAD 2>/dev/null || echo '?') release build at $base; $(nproc) cores, $(uname -r)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/estimates.py --base "$base" $PRESETS
