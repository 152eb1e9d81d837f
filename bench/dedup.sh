#!/usr/bin/env bash
# bench/dedup.sh - backs up the same tree into backlab's dedup target and into a borg repository,
# several times in alternating order, and prints both ingest rates and the reduction each found.
#
#   data     backlab dataset create --profile large-files --dedup-ratio RATIO --compress-ratio 2:
#            SIZE bytes in a few large files, one unit in RATIO new; read from the page cache by
#            both (the tree is read once before each backup)
#   borg     borg create, repository initialised with --encryption none, --compression none,
#            --chunker-params buzhash,16,20,18,4095 (64 KiB to 1 MiB chunks, 256 KiB on average);
#            it names chunks by SHA-256 and fsyncs its segments at the end; rate = SIZE over
#            the Duration its --stats prints
#   backlab  backlab run --tests full_backup, one stream (borg reads with one thread too), target
#            kind dedup with avg_chunk 256K (64 KiB to 1 MiB: FastCDC), chunks named by BLAKE3,
#            containers flushed at the end (fsync); rate = the run's logical MB/s
#   both     a new, empty store each round, on the same file system as the tree, removed after
#
# Environment:
#   SIZE       bytes in the tree (default 2G)
#   RATIO      the tree's dedup ratio (default 3)
#   REPEAT     backups per tool (default 3)
#   BENCH_DIR  where the tree and the stores go (default /var/tmp/backlab-bench)
#
# Needs cargo, borg (Debian package borgbackup), python3. Exits 0 whatever the figures are;
# non-zero only when a tool failed or is missing.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SIZE=${SIZE:-2G}
RATIO=${RATIO:-3}
REPEAT=${REPEAT:-3}
BENCH_DIR=${BENCH_DIR:-/var/tmp/backlab-bench}

die() {
    echo "dedup.sh: $*" >&2
    exit 2
}
note() { echo "$*" >&2; }

case $REPEAT in '' | *[!0-9]* | 0) die "REPEAT must be a positive integer" ;; esac
for tool in cargo borg python3; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is not installed (borg: apt-get install borgbackup)"
done

note "building backlab (cargo build --release --quiet) in $ROOT"
(cd "$ROOT" && cargo build --release --quiet) || die "cargo build --release failed"
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
case $TARGET_DIR in /*) ;; *) TARGET_DIR=$ROOT/$TARGET_DIR ;; esac
BL=$TARGET_DIR/release/backlab
[ -x "$BL" ] || die "backlab binary not found at $BL"

mkdir -p "$BENCH_DIR" || die "cannot create $BENCH_DIR"
SCRATCH=$(mktemp -d "$BENCH_DIR/dedup.XXXXXX") || die "cannot create a scratch directory"
cleanup() {
    rm -rf "$SCRATCH"
    rmdir "$BENCH_DIR" 2>/dev/null
    return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

TREE=$SCRATCH/tree
note "creating the tree: $SIZE, dedup $RATIO:1, compression 2:1"
"$BL" dataset create "$TREE" --profile large-files --size "$SIZE" --dedup-ratio "$RATIO" \
    --compress-ratio 2 >"$SCRATCH/create.txt" || die "dataset create failed"
cat "$SCRATCH/create.txt" >&2
BYTES=$(du -sb "$TREE" | awk '{print $1}')
warm() { find "$TREE" -type f -exec cat {} + >/dev/null; }
export BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes BORG_RELOCATED_REPO_ACCESS_IS_OK=yes

m_borg() {
    local repo=$SCRATCH/borg log=$SCRATCH/borg.log
    rm -rf "$repo"
    borg init --encryption none "$repo" >/dev/null 2>&1 || return 1
    warm
    (cd "$TREE" && borg create --stats --compression none \
        --chunker-params buzhash,16,20,18,4095 "$repo::one" .) >"$log" 2>&1 ||
        { tail -n 20 "$log" >&2; return 1; }
    rm -rf "$repo"
    python3 - "$log" "$BYTES" <<'EOF'
import re, sys
text, size = open(sys.argv[1]).read(), int(sys.argv[2])
duration = re.search(r"Duration: ([0-9.]+) seconds", text)
line = re.search(r"This archive:\s+([0-9.]+) (\w?B)\s+([0-9.]+) (\w?B)\s+([0-9.]+) (\w?B)", text)
if not duration or not line:
    sys.exit("borg printed no stats")
unit = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}
original = float(line.group(1)) * unit[line.group(2)]
deduplicated = float(line.group(5)) * unit[line.group(6)]
print(f"{size / float(duration.group(1)) / 1e6:.1f} {original / deduplicated:.2f}")
EOF
}

m_backlab() {
    local store=$SCRATCH/store out=$SCRATCH/backlab.json log=$SCRATCH/backlab.log
    rm -rf "$store" && mkdir -p "$store"
    warm
    "$BL" run --source "$TREE" --target "dedup:path=$store,avg_chunk=256K" --tests full_backup \
        --streams 1 --block-size 1M --buffers 32 --cold-cache false --time-based false \
        --duration 600 --json >"$out" 2>"$log" || { tail -n 20 "$log" >&2; return 1; }
    [ -z "$(ls -A "$store")" ] || { echo "backlab left files in its store's directory" >&2; return 1; }
    rm -rf "$store"
    python3 - "$out" <<'EOF'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
if run["status"] != "done":
    sys.exit(f"backlab's run ended {run['status']}: {run.get('error')}")
d = run["dedup"]
busiest = max(("chunking", d["chunking_s"]), ("hashing", d["hashing_s"]), ("index", d["index_s"]),
              ("writing", d["writing_s"]), key=lambda s: s[1])
print(f"{run['mb_per_s']:.1f} {d['dedup_ratio']:.2f} {busiest[0]}")
EOF
}

BORG=() BACKLAB=() BORG_RATIO="" BL_RATIO="" BUSIEST=""
for round in $(seq 1 "$REPEAT"); do
    if [ $((round % 2)) = 1 ]; then order="backlab borg"; else order="borg backlab"; fi
    for tool in $order; do
        if [ "$tool" = borg ]; then
            line=$(m_borg) || die "borg failed (round $round)"
            read -r rate BORG_RATIO <<<"$line"
            BORG+=("$rate")
            note "round $round: borg    $rate MB/s (dedup $BORG_RATIO:1)"
        else
            line=$(m_backlab) || die "backlab failed (round $round)"
            read -r rate BL_RATIO BUSIEST <<<"$line"
            BACKLAB+=("$rate")
            note "round $round: backlab $rate MB/s (dedup $BL_RATIO:1, busiest stage $BUSIEST)"
        fi
    done
done

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.1f", v[(NR + 1) / 2]; else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
BL_MEDIAN=$(median "${BACKLAB[@]}")
BORG_MEDIAN=$(median "${BORG[@]}")
FS=$(df -T -P "$SCRATCH" | awk 'NR == 2 {print $2}')
echo "== backup of $SIZE ($BYTES bytes, made to dedup $RATIO:1) into a new store on $FS, $REPEAT rounds, alternating"
echo "   borg:    $(borg --version), --encryption none, --compression none, buzhash 64K-1M (256K avg), SHA-256 ids, one thread"
echo "   backlab: full_backup, 1 stream, dedup target, FastCDC 64K-1M (256K avg), BLAKE3 ids, fsync at the end"
echo "   borg    MB/s: ${BORG[*]}  median $BORG_MEDIAN (dedup $BORG_RATIO:1)"
echo "   backlab MB/s: ${BACKLAB[*]}  median $BL_MEDIAN (dedup $BL_RATIO:1; busiest stage: $BUSIEST)"
echo "   backlab / borg = $(awk -v a="$BL_MEDIAN" -v b="$BORG_MEDIAN" 'BEGIN { printf "%.2f", a / b }')"
