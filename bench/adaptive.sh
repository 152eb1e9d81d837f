#!/usr/bin/env bash
# The adaptive search against the full sweep, from a release build: the tuning preset against a
# directory target, seed 000's network preset into two emulated LTO-4 drives and seed 001's
# block-size sweep on the emulated striped volume, each as a full sweep and as adaptive searches
# of seeds 1..SEEDS, on one lab, machine and data. Goal: the same answer (the full sweep's best,
# or within its noise) in at least 4 of 5 searches, each with at most 40 % of the sweep's runs.
#
#   bench/adaptive.sh                                   # all three, 5 seeds (about an hour)
#   CASES=striped SEEDS=3 bench/adaptive.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CASES=${CASES:-"tuning,network,striped"}
SEEDS=${SEEDS:-5}

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
python3 bench/adaptive.py --base "$base" --cases "$CASES" --seeds "$SEEDS"
