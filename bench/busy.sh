#!/usr/bin/env bash
# The Bottleneck determination preset beside a CPU hog: one busy loop per core for the whole
# campaign, from a release build. Other work can only slow the lab's side, so a full backup
# that still reaches the emulated drive's ceiling must be named target-bound, conclusively, and
# the CPU column must show the lab's own share with the other work beside it.
#
#   bench/busy.sh              # hogs on every core
#   HOGS=0 bench/busy.sh       # the same campaign on a quiet machine, for comparison
set -euo pipefail
cd "$(dirname "$0")/.."
HOGS=${HOGS:-$(nproc)}

cargo build --release --quiet
work=$(mktemp -d)
hogs=()
cleanup() {
    for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# A source like the lab's demo: 256 MiB in files of 1 to 16 MiB.
mkdir -p "$work/source"
for i in $(seq 1 32); do
    head -c "$(( (i % 16 + 1) << 20 ))" /dev/urandom >"$work/source/f$i"
done
# The form's Bottleneck determination preset, pointed at that source.
cat >"$work/spec.json" <<EOF
{"name": "Bottleneck determination beside a CPU hog",
 "source": {"paths": ["$work/source"]},
 "target": {"kind": "tape", "model": "lto-4"},
 "tests": ["tape_write", "read_single", "read_parallel", "null_sink", "full_backup"],
 "repeat": 3,
 "params": {"buffers": 32, "block_size": "256K", "streams": 4, "duration_s": "auto",
            "time_based": true, "cold_cache": true, "fsync": true}}
EOF

for _ in $(seq 1 "$HOGS"); do
    (while :; do :; done) &
    hogs+=($!)
done
echo "backlab $(git rev-parse --short HEAD 2>/dev/null || echo '?') release build; $(nproc) cores, $(uname -r)"
echo "conditions: $HOGS busy loop(s) beside the lab for the whole campaign; source 256 MiB of random files, cold cache; target one emulated LTO-4"
start=$(date +%s)
target/release/backlab run "$work/spec.json" --restore-to "$work" 2>/dev/null |
    sed -n '/^Test /,$p'
echo "campaign took $(( $(date +%s) - start )) s"
