#!/usr/bin/env bash
# bench/generations.sh - sends successive full backups of one generated dataset into a dedup
# store, each generation changing a share of it, and prints per generation the ingest rate,
# what the store wrote and how long its writes took.
#
#   data     backlab's generated source: SIZE bytes, compression 2:1, every unit distinct,
#            GENERATIONS generations each changing CHANGE of the dataset's units
#   backlab  backlab run --tests full_backup, STREAMS streams, 1 MiB blocks, target kind dedup
#            with avg_chunk CHUNK in a new directory under BENCH_DIR, removed after
#   rate     each generation's logical MB/s (what the backup sent over its run's seconds);
#            growth = the generation's stored bytes over the first generation's
#
# Ingest rates are the one timing comparison of the dedup tests: a 2-core machine running
# other work can swap the first generation's rate with a later one's, so it is measured here
# rather than asserted in `cargo test` (which asserts the store's write time and growth).
#
# Environment:
#   SIZE         bytes in the dataset (default 2G)
#   GENERATIONS  full backups (default 5)
#   CHANGE       change rate per generation (default 0.05)
#   CHUNK        the store's average chunk (default 16K)
#   STREAMS      reader streams (default 2)
#   REPEAT       campaigns (default 3)
#   BENCH_DIR    where the store goes (default /var/tmp/backlab-bench)
#
# Needs cargo and python3. Exits 0 whatever the figures are; non-zero only when a run failed.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SIZE=${SIZE:-2G}
GENERATIONS=${GENERATIONS:-5}
CHANGE=${CHANGE:-0.05}
CHUNK=${CHUNK:-16K}
STREAMS=${STREAMS:-2}
REPEAT=${REPEAT:-3}
BENCH_DIR=${BENCH_DIR:-/var/tmp/backlab-bench}

die() {
    echo "generations.sh: $*" >&2
    exit 2
}
note() { echo "$*" >&2; }

case $REPEAT in '' | *[!0-9]* | 0) die "REPEAT must be a positive integer" ;; esac
for tool in cargo python3; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is not installed"
done

note "building backlab (cargo build --release --quiet) in $ROOT"
(cd "$ROOT" && cargo build --release --quiet) || die "cargo build --release failed"
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
case $TARGET_DIR in /*) ;; *) TARGET_DIR=$ROOT/$TARGET_DIR ;; esac
BL=$TARGET_DIR/release/backlab
[ -x "$BL" ] || die "backlab binary not found at $BL"

mkdir -p "$BENCH_DIR" || die "cannot create $BENCH_DIR"
SCRATCH=$(mktemp -d "$BENCH_DIR/generations.XXXXXX") || die "cannot create a scratch directory"
cleanup() {
    rm -rf "$SCRATCH"
    rmdir "$BENCH_DIR" 2>/dev/null
    return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

FS=$(df -T -P "$SCRATCH" | awk 'NR == 2 {print $2}')
echo "== $GENERATIONS generations of $SIZE (compression 2:1, $CHANGE changed per generation) into a new dedup store on $FS"
echo "   backlab full_backup, $STREAMS streams, 1M blocks, store chunks $CHUNK; $REPEAT campaigns"
for round in $(seq 1 "$REPEAT"); do
    store=$SCRATCH/store
    rm -rf "$store" && mkdir -p "$store"
    "$BL" run --generated "$SIZE" --compress-ratio 2 --generations "$GENERATIONS" \
        --change-rate "$CHANGE" --target "dedup:path=$store,avg_chunk=$CHUNK" \
        --tests full_backup --streams "$STREAMS" --block-size 1M --json \
        >"$SCRATCH/run.json" 2>"$SCRATCH/run.log" || { tail -n 20 "$SCRATCH/run.log" >&2; die "backlab failed (campaign $round)"; }
    [ -z "$(ls -A "$store")" ] || die "backlab left files in its store's directory"
    python3 - "$SCRATCH/run.json" "$round" <<'EOF' || die "backlab's result could not be read"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
first_stored = None
rates = []
for run in runs:
    if run["status"] != "done":
        sys.exit(f"a run ended {run['status']}: {run.get('error')}")
    d, g = run["dedup"], run["generated_dedup"]["generation"]
    first_stored = first_stored or d["stored_bytes"]
    growth = d["stored_bytes"] / first_stored * 100
    flags = ",".join(f["code"] for f in run["validity"]["flags"]) or "valid"
    rates.append(run["mb_per_s"])
    print(f"   campaign {sys.argv[2]} generation {g['generation']}: {run['mb_per_s']:7.1f} MB/s  "
          f"stored {d['stored_bytes'] / 2**20:7.1f} MiB ({growth:5.1f} % of the first)  "
          f"writing {d['writing_s']:5.2f} s  changed {g['change_rate_achieved']:.4f}  [{flags}]")
later = sorted(rates[1:])
median = (later[(len(later) - 1) // 2] + later[len(later) // 2]) / 2
print(f"   campaign {sys.argv[2]}: later generations' median / first = {median / rates[0]:.2f}")
EOF
done
