#!/usr/bin/env bash
# bench/lmdd.sh - `backlab lmdd` against dd and fio on the same file: a sequential direct-I/O
# write (twice: see below), then a read. backlab runs REPEATS times back to back with each other
# tool, which of the two goes first alternating; prints each tool's median MiB/s (lmdd's "MB")
# and backlab's ratio to each, the median of the pairs' ratios. Goal: within 5 %.
#
# Like with like: every tool moves the same bytes in the same block size with O_DIRECT on one
# file, one request at a time (fio: psync, iodepth 1). Buffers: at the default 512 KiB block
# size all three use ordinary 4 KiB pages (backlab backs only buffers of 1 MiB or more with huge
# pages); give BS=8m to compare with fio on huge pages (--mem=shmhuge, reserved through
# /proc/sys/vm/nr_hugepages and given back), where dd, which cannot use them, is shown but not
# judged. The write's data: backlab generates incompressible data, dd and fio write zeros or
# their own pattern; a disk without compression takes them alike.
#
# Every write starts from no file: each tool creates it and allocates its blocks as it writes.
# Every run starts after the removal of the file before it is synced, so the journal commit
# that frees that file's blocks (and, on a file system mounted with discard, trims them) lands
# between runs, not inside whichever run comes next.
#
# Writes are compared twice, each time with the same work between writes for every tool taking
# part. (1) None: backlab, like lmdd with its internal input, writes one block (generated once)
# over and over from one thread; fio reuses its buffer (--scramble_buffers=0; by default it
# rewrites part of it before every write, which cost it 20-25 % here). dd cannot write without
# reading every block first, so it sits this one out. (2) Each block filled just before its
# write, on the writing thread: dd reads it from /dev/zero, fio zeroes it (--refill_buffers
# --zero_buffers), backlab writes lmdd's offset pattern into it (lmdd's opat=1). On this VM the fill costs more than its own CPU time: the
# write of a buffer the CPU has just written takes longer (fio's completion latency, which
# leaves the fill out: 212 us a 512 KiB write from a reused buffer, 225 us from a freshly
# zeroed one, 273 us from a freshly randomised one), which is why dd's writes trailed the
# others' by a third when only it did the work.
#
# Single runs swing by 10-20 % on a virtual disk, and stretches of minutes favour one tool: a
# verdict needs the 15 pairs of the default, and the middle half of the pairs' ratios, printed
# beside it, says how firm it is. When that is as wide as the goal, run the bench again.
#
# Environment: SIZE (default 2g), BS (default 512k), REPEATS (pairs with each tool, default 15),
# BENCH_DIR (scratch parent, default /var/tmp), VERBOSE (set: print every run's figure). Needs
# dd, fio, python3, cargo.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SIZE=${SIZE:-2g}
BS=${BS:-512k}
REPEATS=${REPEATS:-15}
for tool in dd fio python3 cargo; do
    command -v "$tool" >/dev/null || { echo "lmdd.sh: $tool is missing (apt-get install $tool)" >&2; exit 2; }
done
bytes_of() { python3 -c "
import sys; t=sys.argv[1].lower(); m={'k':1<<10,'m':1<<20,'g':1<<30}
print(int(t[:-1])*m[t[-1]] if t[-1] in m else int(t))" "$1"; }
SIZE_B=$(bytes_of "$SIZE")
BS_B=$(bytes_of "$BS")
BLOCKS=$((SIZE_B / BS_B))
SIZE_B=$((BLOCKS * BS_B))

echo "building backlab (cargo build --release)" >&2
(cd "$ROOT" && cargo build --release --quiet)
BL=$ROOT/target/release/backlab
SCRATCH=$(mktemp -d "${BENCH_DIR:-/var/tmp}/backlab-lmdd.XXXXXX")
FILE=$SCRATCH/testfile

HUGEPAGES_FILE=/proc/sys/vm/nr_hugepages
HUGEPAGES_BEFORE=
FIO_MEM=--mem=malloc
HUGE_SIDE=no
if [ "$BS_B" -ge $((1 << 20)) ]; then
    HUGE_SIDE=yes
    if [ -w "$HUGEPAGES_FILE" ]; then
        HUGEPAGES_BEFORE=$(cat "$HUGEPAGES_FILE")
        WANT=$(( (BS_B >> 21) + 4 ))
        if [ "$HUGEPAGES_BEFORE" -ge "$WANT" ] || echo "$WANT" >"$HUGEPAGES_FILE" 2>/dev/null; then
            [ "$(cat "$HUGEPAGES_FILE")" -ge "$WANT" ] && FIO_MEM=--mem=shmhuge
        fi
    fi
fi
cleanup() {
    [ -n "$HUGEPAGES_BEFORE" ] && echo "$HUGEPAGES_BEFORE" >"$HUGEPAGES_FILE" 2>/dev/null
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

# No file, and the disk quiet: the removal's commit (and discard) done before the clock starts.
fresh() { rm -f "$FILE"; sync; }

# Each prints MiB/s. A write starts from no file and allocates as it goes (fio: no fallocate).
backlab_run() { # write|write-filled|read
    local out
    case $1 in
    write) fresh; out=$("$BL" lmdd of="$FILE" bs="$BS" count="$BLOCKS" direct=1) ;;
    write-filled) fresh; out=$("$BL" lmdd of="$FILE" bs="$BS" count="$BLOCKS" direct=1 opat=1) ;;
    read) sync; out=$("$BL" lmdd if="$FILE" bs="$BS" count="$BLOCKS" direct=1) ;;
    esac
    # lmdd's own MB/sec (MB of 2^20 bytes), reckoned from unrounded seconds.
    python3 -c "import sys; print(float(sys.argv[1].split()[5]))" "$out"
}
dd_run() { # write-filled|read: dd has no write that leaves its buffer alone
    local out
    if [ "$1" = write-filled ]; then
        fresh
        out=$(dd if=/dev/zero of="$FILE" bs="$BS_B" count="$BLOCKS" oflag=direct 2>&1 | tail -n1)
    else
        sync
        out=$(dd if="$FILE" of=/dev/null bs="$BS_B" count="$BLOCKS" iflag=direct 2>&1 | tail -n1)
    fi
    python3 -c "import sys; w=sys.argv[1].split(); print(int(w[0]) / 2**20 / float(w[w.index('s,') - 1]))" "$out"
}
fio_run() { # write|write-filled|read
    local rw=$1 fill=(--scramble_buffers=0)
    case $1 in
    write) fresh ;;
    write-filled) rw=write; fill=(--refill_buffers --zero_buffers); fresh ;;
    read) sync ;;
    esac
    fio --name=lmdd --fallocate=none --filename="$FILE" --rw="$rw" --bs="$BS_B" --size="$SIZE_B" --direct=1 \
        --ioengine=psync --iodepth=1 --numjobs=1 "${fill[@]}" "$FIO_MEM" --output-format=json 2>/dev/null |
        python3 -c "import json,sys; j=json.load(sys.stdin)['jobs'][0]; print(j[sys.argv[1]]['bw_bytes'] / 2**20)" "$rw"
}

# What each case gives every tool alike.
declare -A CONDITION=(
    [write]="no work between writes: backlab (lmdd's internal input: one block, generated once, written over and over from one thread) and fio (--scramble_buffers=0) write what their buffer holds; dd cannot (it reads every block before writing it) and is left out"
    [write-filled]="each block filled just before its write, on the writing thread: dd reads it from /dev/zero, fio zeroes it (--refill_buffers --zero_buffers), backlab writes lmdd's offset pattern into it (opat=1)"
    [read]="each block read into a buffer nothing else touches, then dropped"
)

echo "== backlab lmdd vs dd vs fio: $((SIZE_B >> 20)) MiB in $BS blocks, O_DIRECT, one request at a time, $REPEATS pairs with each tool"
FAIL=0
for op in write write-filled read; do
    # Backlab's runs paired with dd's (BD, D) and with fio's (BF, F).
    BD=() D=() BF=() F=()
    # The file exists before any read.
    [ -f "$FILE" ] || "$BL" lmdd of="$FILE" bs="$BS" count="$BLOCKS" direct=1 >/dev/null
    others=(fio)
    [ "$op" = write ] || others=(dd fio)
    for other in "${others[@]}"; do
        for turn in $(seq "$REPEATS"); do
            # A pair runs back to back, so the disk's slow drifts cancel in its ratio; which
            # tool goes first alternates, so neither always follows the other's writes.
            if ((turn % 2)); then
                mine=$(backlab_run "$op")
                theirs=$("${other}_run" "$op")
            else
                theirs=$("${other}_run" "$op")
                mine=$(backlab_run "$op")
            fi
            if [ "$other" = dd ]; then BD+=("$mine") D+=("$theirs"); else BF+=("$mine") F+=("$theirs"); fi
        done
    done
    echo "-- $op: ${CONDITION[$op]}"
    if [ -n "${VERBOSE:-}" ]; then
        [ "$op" = write ] || echo "   pairs with dd: backlab ${BD[*]} | dd ${D[*]}"
        echo "   pairs with fio: backlab ${BF[*]} | fio ${F[*]}"
    fi
    python3 - "$op" "$HUGE_SIDE" "$FIO_MEM" "${BD[*]}" "${D[*]}" "${BF[*]}" "${F[*]}" <<'EOF' || FAIL=1
import statistics, sys
op, huge, fio_mem = sys.argv[1:4]
bd, d, bf, f = ([float(x) for x in arg.split()] for arg in sys.argv[4:8])
ok = True
median = statistics.median
line = f"{op:12}  backlab {median(bd + bf):8.1f}  " + (f"dd {median(d):8.1f}  " if d else "dd        -  ") + f"fio {median(f):8.1f} MiB/s   "
pairs = [("fio", bf, f, huge == "no" or fio_mem == "--mem=shmhuge")]
if d:
    pairs.insert(0, ("dd", bd, d, huge == "no"))
for name, mine, other, judged in pairs:
    # Judged on the median of the pairs' ratios; the ratio of the medians is shown beside it.
    ratios = [x / y for x, y in zip(mine, other)]
    ratio = median(ratios)
    verdict = ("PASS" if abs(ratio - 1) <= 0.05 else "FAIL") if judged else "not judged"
    ok &= verdict != "FAIL"
    # The middle half of the pairs' ratios: how firm the median is on this machine.
    q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratio, ratio, ratio)
    line += f"backlab/{name} {ratio:5.3f} ({verdict}; middle half {q1:5.3f}-{q3:5.3f}; medians {median(mine) / median(other):5.3f})  "
print(line)
sys.exit(0 if ok else 1)
EOF
done
echo
echo "every run after a sync: the last file's removal committed (and trimmed) before the clock starts"
echo "buffers: backlab $([ "$HUGE_SIDE" = yes ] && echo 'huge pages' || echo '4 KiB pages'), dd malloc, fio $FIO_MEM"
echo "machine: $(nproc) cores, $(uname -r); file on $(df --output=source,fstype "$SCRATCH" | tail -n1 | xargs)"
echo "fio $(fio --version), $(dd --version | head -n1)"
exit $FAIL
