#!/usr/bin/env bash
# bench/tool-stream.sh - backlab's tool_backup of tar-zstd beside the same command timed by hand,
# on the same tree, several times in alternating order, and prints each one's MB/s (source bytes
# over wall time), the medians and the ratio backlab / by hand (goal: the paired ratio within 3 %).
#
#   data     backlab dataset create --profile typical --size SIZE (compression 2:1), in BENCH_DIR
#   backlab  backlab run --source TREE --tool tar-zstd:level=LEVEL,threads=THREADS --tests
#            tool_backup --json into the null target (TARGET=null) or a directory (TARGET=dir):
#            the lab syncs the tree's file system and drops every file of it from the page
#            cache, runs `tar --create --file - --listed-incremental HOME/tar.snar TREE | zstd
#            -LEVEL -TTHREADS --quiet --stdout` with a cleared environment (PATH, HOME) in a
#            scratch HOME and reads zstd's output through its pipeline into the target (a
#            directory's file fsynced at the end); rate = the run's MB/s, the tree's bytes over
#            the wall time from spawn to the end of the stream (and of the processes)
#   by hand  the same: the tree's file system synced and every file dropped from the page cache
#            (posix_fadvise DONTNEED, as the lab does; fincore then counts what is left), the
#            same two programs with the same arguments and environment in a fresh scratch HOME,
#            zstd's output into /dev/null or into a file in the same directory then fsynced
#            (`sync FILE`), timed by bash from before the pipeline starts to after it ends;
#            rate = the tree's bytes over that wall time
#   rounds   REPEAT of each, alternating (backlab first in odd rounds, by hand first in even);
#            each round's ratio pairs the two runs taken back to back, so a machine whose
#            speed drifts over the bench moves both sides of a pair alike; the goal is met by
#            the median of the rounds' ratios (the paired ratio), and the ratio of the two
#            sides' medians is printed beside it
#   check    then CHECK runs of the lab's timing against the command's own clock: the same
#            pipeline as an operator's definition (--tools, each stage under `sh -c`) whose
#            first stage notes the time before it execs tar and whose last notes it after zstd
#            ends (`date +%s.%N`); prints the lab's wall time over the command's own start to
#            end, run by run. Other work on the machine moves both alike, so this holds where
#            the side-by-side rounds swing
#
# Environment:
#   SIZE       bytes in the tree (default 1G; a number with K, M or G)
#   LEVEL      zstd's level (default 3)
#   THREADS    zstd's threads (default 1)
#   TARGET     null or dir (default null)
#   REPEAT     backups per side (default 5)
#   CHECK      runs of the timing check (default 3; 0 skips it)
#   BENCH_DIR  where the tree (and a dir target) go (default /var/tmp/backlab-bench): a real disk,
#              not tmpfs, or "cold" means nothing
#   BACKLAB    a backlab binary to use instead of building target/release/backlab
#
# Needs cargo (unless BACKLAB is given), tar, zstd, python3, fincore (util-linux). Exits 0
# whatever the ratio is (the PASS/FAIL line tells); non-zero only when a tool failed or is missing.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SIZE=${SIZE:-1G}
LEVEL=${LEVEL:-3}
THREADS=${THREADS:-1}
TARGET=${TARGET:-null}
REPEAT=${REPEAT:-5}
CHECK=${CHECK:-3}
BENCH_DIR=${BENCH_DIR:-/var/tmp/backlab-bench}

die() {
    echo "tool-stream.sh: $*" >&2
    exit 2
}
note() { echo "$*" >&2; }

case $REPEAT in '' | *[!0-9]* | 0) die "REPEAT must be a positive integer" ;; esac
case $CHECK in '' | *[!0-9]*) die "CHECK must be a whole number" ;; esac
case $LEVEL in '' | *[!0-9]*) die "LEVEL must be a whole number" ;; esac
case $THREADS in '' | *[!0-9]*) die "THREADS must be a whole number" ;; esac
case $TARGET in null | dir) ;; *) die "TARGET must be null or dir" ;; esac
for tool in tar zstd python3 fincore; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is not installed"
done

if [ -n "${BACKLAB:-}" ]; then
    BL=$BACKLAB
else
    command -v cargo >/dev/null 2>&1 || die "cargo is not installed (or give BACKLAB)"
    note "building backlab (cargo build --release --quiet) in $ROOT"
    (cd "$ROOT" && cargo build --release --quiet) || die "cargo build --release failed"
    TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
    case $TARGET_DIR in /*) ;; *) TARGET_DIR=$ROOT/$TARGET_DIR ;; esac
    BL=$TARGET_DIR/release/backlab
fi
[ -x "$BL" ] || die "backlab binary not found at $BL"

mkdir -p "$BENCH_DIR" || die "cannot create $BENCH_DIR"
SCRATCH=$(mktemp -d "$BENCH_DIR/tool-stream.XXXXXX") || die "cannot create a scratch directory"
cleanup() {
    rm -rf "$SCRATCH"
    rmdir "$BENCH_DIR" 2>/dev/null
    return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

TREE=$SCRATCH/tree
OUT=$SCRATCH/target
mkdir -p "$OUT" || die "cannot create $OUT"
note "creating the tree: $SIZE, profile typical, compression 2:1"
"$BL" dataset create "$TREE" --profile typical --size "$SIZE" >"$SCRATCH/create.txt" ||
    die "dataset create failed"
cat "$SCRATCH/create.txt" >&2
BYTES=$(find "$TREE" -type f -printf '%s\n' | awk '{s += $1} END {printf "%.0f\n", s}')
FILES=$(find "$TREE" -type f | wc -l)
PATH_FOR_TOOLS=${PATH:-/usr/local/bin:/usr/bin:/bin}

# Syncs the tree's file system and drops each of its files from the page cache, as the lab's
# tool_backup does before it starts the tool; prints the bytes still resident afterwards.
drop_tree() {
    sync --file-system "$TREE"
    python3 - "$TREE" <<'EOF'
import os, sys
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        try:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
EOF
    find "$TREE" -type f -print0 | xargs -0 fincore --bytes --noheadings --output RES 2>/dev/null |
        awk '{s += $1} END {printf "%.0f\n", s}'
}

# One backup by backlab: prints its MB/s, its wall seconds and how much of the tree was resident
# when the read began (the lab's own cache_resident_pct).
m_backlab() {
    local json=$SCRATCH/backlab.json target=null
    [ "$TARGET" = dir ] && target=$OUT
    "$BL" run --source "$TREE" --target "$target" --tool "tar-zstd:level=$LEVEL,threads=$THREADS" \
        --tests tool_backup --restore-to "$SCRATCH" --no-follow-up --json >"$json" \
        2>"$SCRATCH/backlab.err" || { tail -n 20 "$SCRATCH/backlab.err" >&2; return 1; }
    python3 - "$json" "$BYTES" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
run = doc["runs"][0]
if run.get("status") != "done" or run.get("bytes") != int(sys.argv[2]):
    sys.exit(f"the run did not back up the whole tree: {run.get('status')} {run.get('error')}")
print(f"{run['mb_per_s']:.1f} {run['seconds']:.3f} {run.get('cache_resident_pct') or 0:.1f}")
EOF
}

# The same backup by hand: prints its MB/s, its wall seconds and the bytes left resident after
# the drop.
m_hand() {
    local home=$SCRATCH/home resident start end
    rm -rf "$home" "$OUT"/hand.tar.zst
    mkdir -p "$home" || return 1
    resident=$(drop_tree)
    start=$EPOCHREALTIME
    if [ "$TARGET" = dir ]; then
        (cd "$home" && env -i PATH="$PATH_FOR_TOOLS" HOME="$home" bash -c \
            'tar --create --file - --listed-incremental "$HOME/tar.snar" "$1" 2>/dev/null |
             zstd -"$2" -T"$3" --quiet --stdout >"$4" && sync "$4"' \
            hand "$TREE" "$LEVEL" "$THREADS" "$OUT/hand.tar.zst") || return 1
    else
        (cd "$home" && env -i PATH="$PATH_FOR_TOOLS" HOME="$home" bash -c \
            'tar --create --file - --listed-incremental "$HOME/tar.snar" "$1" 2>/dev/null |
             zstd -"$2" -T"$3" --quiet --stdout >/dev/null' \
            hand "$TREE" "$LEVEL" "$THREADS") || return 1
    fi
    end=$EPOCHREALTIME
    rm -rf "$home" "$OUT"/hand.tar.zst
    python3 -c "
import sys
wall = float(sys.argv[2]) - float(sys.argv[1])
print(f'{int(sys.argv[3]) / wall / 1e6:.1f} {wall:.3f} {sys.argv[4]}')" "$start" "$end" "$BYTES" "$resident"
}

note "tree: $BYTES bytes in $FILES files; zstd -$LEVEL -T$THREADS; target $TARGET; $REPEAT rounds"
printf '%-6s %-10s %10s %9s  %s\n' round side MB/s wall_s "cold?"
: >"$SCRATCH/figures"
for round in $(seq 1 "$REPEAT"); do
    if [ $((round % 2)) -eq 1 ]; then order="backlab hand"; else order="hand backlab"; fi
    for side in $order; do
        if [ "$side" = backlab ]; then
            line=$(m_backlab) || die "backlab's run failed in round $round"
            read -r mb wall resident <<<"$line"
            cold="${resident} % resident when the read began (lab's figure)"
        else
            line=$(m_hand) || die "the hand-timed pipeline failed in round $round"
            read -r mb wall resident <<<"$line"
            cold="$resident bytes resident after the drop (fincore)"
        fi
        printf '%-6s %-10s %10s %9s  %s\n' "$round" "$side" "$mb" "$wall" "$cold"
        echo "$side $mb" >>"$SCRATCH/figures"
    done
done

python3 - "$SCRATCH/figures" <<'EOF'
import statistics, sys
figures = {"backlab": [], "hand": []}
for line in open(sys.argv[1]):
    side, mb = line.split()
    figures[side].append(float(mb))
b = statistics.median(figures["backlab"])
h = statistics.median(figures["hand"])
spread = lambda xs: (max(xs) - min(xs)) / statistics.median(xs) * 100
print(f"median   backlab {b:.1f} MB/s (range {spread(figures['backlab']):.1f} %), "
      f"by hand {h:.1f} MB/s (range {spread(figures['hand']):.1f} %)")
pairs = [round(x / y, 3) for x, y in zip(figures["backlab"], figures["hand"])]
paired = statistics.median(pairs)
print(f"ratio    backlab / by hand, paired (median of the rounds' ratios) = {paired:.3f}; "
      f"each round's: {', '.join(map(str, pairs))}; of the two medians: {b / h:.3f}")
print(("PASS" if abs(paired - 1) <= 0.03 else "FAIL") + ": goal: the paired ratio within 3 %")
EOF

[ "$CHECK" -gt 0 ] || exit 0
MARKS=$SCRATCH/marks
mkdir -p "$MARKS" || die "cannot create $MARKS"
# The same two programs with the same arguments, each stage under `sh -c` (the definition's
# words joined with spaces): the first notes the time and becomes tar, the last notes the time
# once zstd has ended and exits with zstd's status.
cat >"$SCRATCH/marked.json" <<JSON
[
  {
    "name": "tar-zstd-marked",
    "shape": "stream",
    "shell": true,
    "version": [["tar", "--version"], ["zstd", "--version"]],
    "backup": [
      ["date +%s.%N >$MARKS/start; exec tar --create --file - --listed-incremental", "{home}/tar.snar", "{source}"],
      ["zstd -$LEVEL -T$THREADS --quiet --stdout; status=\$?; date +%s.%N >$MARKS/end; exit \$status"]
    ],
    "restore": [["tar --extract --zstd --file", "{stream}", "--directory", "{restore}"]],
    "progress": "process_io"
  }
]
JSON
target=null
[ "$TARGET" = dir ] && target=$OUT
echo "timing check: the lab's wall time against the command's own (first stage's start to last stage's end)"
for run in $(seq 1 "$CHECK"); do
    rm -f "$MARKS/start" "$MARKS/end"
    "$BL" run --tools "$SCRATCH/marked.json" --source "$TREE" --target "$target" \
        --tool tar-zstd-marked --tests tool_backup --restore-to "$SCRATCH" --no-follow-up --json \
        >"$SCRATCH/marked-run.json" 2>"$SCRATCH/backlab.err" ||
        { tail -n 20 "$SCRATCH/backlab.err" >&2; die "the timing check's run failed"; }
    python3 - "$SCRATCH/marked-run.json" "$MARKS" <<'PY' || die "the timing check's marks are missing"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
start = float(open(sys.argv[2] + "/start").read())
end = float(open(sys.argv[2] + "/end").read())
own = end - start
print(f"check  {run['seconds']:.3f} s by the lab ({run['mb_per_s']:.1f} MB/s), {own:.3f} s by "
      f"the command's own clock ({run['bytes'] / own / 1e6:.1f} MB/s): "
      f"lab / own = {run['seconds'] / own:.4f}")
PY
done
