#!/usr/bin/env bash
# bench/life-demo.sh - a life of NIGHTS nights of TOOL on the 256 MiB demo data (the tree
# `backlab serve` writes: typical profile, seed 1, 2:1), and whether it finished within the
# length `backlab run` printed before it started (goal: it did).
#
#   data     backlab dataset create DEMO --size SIZE --seed 1 (the demo's own request)
#   life     backlab run --source DEMO --target DIR --tool TOOL --life NIGHTS: retention every
#            7 keeping 7, checks after the last night, the latest and oldest kept backup restored
#            and verified; its first line says how long it is expected to take
#   timed    by the script, from before `backlab run` starts to after it exits (the copy of the
#            source, every night, the restores and the removal of everything included)
#
# Environment: TOOL (restic), NIGHTS (30), SIZE (256M), BENCH_DIR (target/bench-life-demo),
# BACKLAB (target/release/backlab, built when missing). Needs the tool, python3.
set -euo pipefail
cd "$(dirname "$0")/.."

TOOL=${TOOL:-restic}
NIGHTS=${NIGHTS:-30}
SIZE=${SIZE:-256M}
BENCH_DIR=${BENCH_DIR:-target/bench-life-demo}
BACKLAB=${BACKLAB:-target/release/backlab}
[ -x "$BACKLAB" ] || cargo build --release --quiet

rm -rf "$BENCH_DIR"
mkdir -p "$BENCH_DIR/target" "$BENCH_DIR/data"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
"$BACKLAB" dataset create "$BENCH_DIR/demo" --size "$SIZE" --seed 1 >/dev/null
version=$({ "$TOOL" version 2>/dev/null || "$TOOL" --version 2>/dev/null; } | head -1 || true)
echo "conditions: $version, $(nproc) cores," \
  "$NIGHTS nights of the $SIZE demo, data and target in $BENCH_DIR"
sync
started=$(date +%s.%N)
"$BACKLAB" run --source "$BENCH_DIR/demo" --target "$BENCH_DIR/target" --tool "$TOOL" \
  --life "$NIGHTS" --restore-to "$BENCH_DIR/data" >"$BENCH_DIR/out.txt" 2>"$BENCH_DIR/err.txt"
ended=$(date +%s.%N)
python3 - "$BENCH_DIR/err.txt" "$BENCH_DIR/out.txt" "$started" "$ended" <<'EOF'
import re, sys
said = open(sys.argv[1]).read() + open(sys.argv[2]).read()
line = next(l for l in said.splitlines() if "expected to take" in l)
def seconds(words):
    total = 0.0
    for number, unit in re.findall(r"([\d.]+)\s*(h|m|s)", words):
        total += float(number) * {"h": 3600, "m": 60, "s": 1}[unit]
    return total
about = seconds(line.split("about", 1)[1].split(",")[0]) if "about" in line else None
most = seconds(line.split("at most", 1)[1]) if "at most" in line else None
took = float(sys.argv[4]) - float(sys.argv[3])
print(f"printed: {line.strip()}")
print(f"took {took:.1f} s; expected about {about} s, at most {most} s")
held = about is not None and took <= about
print("SUMMARY:", f"finished within the estimate ({took / about:.2f} of it)" if held
      else "did NOT finish within the estimate")
for l in said.splitlines():
    if l.startswith(("restic's", "borg's", "Restore of", "Most memory")):
        print(l)
sys.exit(0 if held else 1)
EOF
