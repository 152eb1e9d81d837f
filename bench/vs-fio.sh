#!/usr/bin/env bash
# bench/vs-fio.sh - runs backlab beside fio, dd and tar on the same workloads, in one go, and
# prints the median of each figure and the ratio backlab / reference.
#
#   1. direct sequential write, 1 MiB blocks, 1 GiB       backlab tape_write  vs fio, dd
#   2. direct sequential read, 1 MiB blocks, 1 GiB file   backlab read_single vs fio, dd
#   3. page-cached read of the same file to null          backlab read_single vs dd, fio
#   4. 100 000 small files (4-16 KiB) read cold           backlab read_parallel vs tar
#   5. direct read of a 512 MiB file, time-based 10 s     backlab read_single's steady-state
#      figure vs fio (--time_based, --ramp_time=1: both leave their start-up out); goal: within 3 %
#
# Environment:
#   BENCH_DIR  where the scratch directory goes (default /var/tmp/backlab-bench); must be a real
#              disk, not tmpfs. The scratch directory is removed at the end.
#   REPEAT     measurements per tool and workload (default 3); the tool order alternates.
#   STREAMS    backlab reader streams for the small-files workload (default 16).
#   W3_REPEAT  measurements of the page-cached read (default 3 x REPEAT): each reads 1 GiB from
#              memory in about 55 ms, so a single one swings by 10 % and more.
#   W1_BUFFERS backlab ring buffers for the direct write (default 4). fio's psync job writes every
#              block from one 1 MiB buffer that stays in the CPU caches; a ring of 32 cycles
#              32 MiB through memory, which costs about 6 % on a 3 GB/s virtual disk. Four
#              buffers keep generation and writing overlapped with a cache-sized footprint.
#   WORKLOADS  which workloads to run (default "w1 w2 w3 w4").
#   FIO_HUGE=0 gives fio malloc'd buffers instead of huge pages (--mem=shmhuge, reserved through
#              /proc/sys/vm/nr_hugepages when writable and given back at the end).
#   NO_DROP_CACHES=1  do not use /proc/sys/vm/drop_caches even when it is writable (tests the
#              per-file eviction fallback).
#
# Installs nothing. Needs fio, dd, tar, cargo, and python3 or jq. Exits 0 whatever the
# ratios are (the PASS/FAIL lines tell); non-zero only when a tool failed or is missing.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPEAT=${REPEAT:-3}
STREAMS=${STREAMS:-16}
W1_BUFFERS=${W1_BUFFERS:-4}
W3_REPEAT=${W3_REPEAT:-$((3 * REPEAT))}
BENCH_DIR=${BENCH_DIR:-/var/tmp/backlab-bench}
SMALL_FILES=100000
# Bounds every backlab run by its size, not by the default 60 s duration.
BL_DURATION=600
GIB=$((1024 * 1024 * 1024))

die() {
    echo "vs-fio.sh: $*" >&2
    exit 2
}
note() { echo "$*" >&2; }

case $REPEAT in '' | *[!0-9]* | 0) die "REPEAT must be a positive integer (got '$REPEAT')" ;; esac
case $STREAMS in '' | *[!0-9]* | 0) die "STREAMS must be a positive integer (got '$STREAMS')" ;; esac
case $W3_REPEAT in '' | *[!0-9]* | 0) die "W3_REPEAT must be a positive integer (got '$W3_REPEAT')" ;; esac
case $W1_BUFFERS in '' | *[!0-9]* | 0) die "W1_BUFFERS must be a positive integer (got '$W1_BUFFERS')" ;; esac
WORKLOADS=${WORKLOADS:-w1 w2 w3 w4 w5}
for w in $WORKLOADS; do
    case $w in w1 | w2 | w3 | w4 | w5) ;; *) die "WORKLOADS: unknown workload '$w' (w1 to w5)" ;; esac
done
wants() { case " $WORKLOADS " in *" $1 "*) return 0 ;; esac; return 1; }

# --- tools -------------------------------------------------------------------------------------
command -v fio >/dev/null 2>&1 ||
    die "fio is not installed; this script installs nothing: install fio (e.g. apt-get install fio) and rerun"
for tool in dd tar cargo awk sort; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is not installed; this script installs nothing"
done
if command -v python3 >/dev/null 2>&1; then
    JSON_TOOL=python3
elif command -v jq >/dev/null 2>&1; then
    JSON_TOOL=jq
else
    die "neither python3 nor jq is installed; one is needed to read the JSON results"
fi

# --- build -------------------------------------------------------------------------------------
note "building backlab (cargo build --release --quiet) in $ROOT"
(cd "$ROOT" && cargo build --release --quiet) || die "cargo build --release failed in $ROOT"
BL=${CARGO_TARGET_DIR:-$ROOT/target}/release/backlab
case $BL in /*) ;; *) BL=$ROOT/$BL ;; esac
[ -x "$BL" ] || die "backlab binary not found at $BL after the build"

# --- scratch -----------------------------------------------------------------------------------
mkdir -p "$BENCH_DIR" || die "cannot create $BENCH_DIR"
FSTYPE=$(df -T -P "$BENCH_DIR" | awk 'NR == 2 {print $2}')
case $FSTYPE in
    tmpfs | ramfs | devtmpfs)
        die "$BENCH_DIR is on $FSTYPE; set BENCH_DIR to a directory on a real disk"
        ;;
esac
AVAIL_KB=$(df -P -k "$BENCH_DIR" | awk 'NR == 2 {print $4}')
NEED_KB=$((5 * 1024 * 1024))
[ "$AVAIL_KB" -ge "$NEED_KB" ] ||
    die "$BENCH_DIR has $((AVAIL_KB / 1024)) MiB free; about 5 GiB is needed"
SCRATCH=$(mktemp -d "$BENCH_DIR/run.XXXXXX") || die "cannot create a scratch directory in $BENCH_DIR"
# backlab's buffers of 1 MiB and more sit in transparent huge pages, so O_DIRECT pins one page
# table entry per 2 MiB. fio gets the same (--mem=shmhuge) when huge pages can be reserved;
# otherwise it keeps malloc'd buffers and the report says so.
HUGEPAGES_FILE=/proc/sys/vm/nr_hugepages
HUGEPAGES_BEFORE=
FIO_MEM=--mem=malloc
if [ "${FIO_HUGE:-1}" = 1 ] && [ -w "$HUGEPAGES_FILE" ]; then
    HUGEPAGES_BEFORE=$(cat "$HUGEPAGES_FILE")
    if [ "$HUGEPAGES_BEFORE" -ge 8 ] || echo 8 >"$HUGEPAGES_FILE" 2>/dev/null; then
        [ "$(cat "$HUGEPAGES_FILE")" -ge 8 ] && FIO_MEM=--mem=shmhuge
    fi
fi
cleanup() {
    rm -rf "$SCRATCH"
    rmdir "$BENCH_DIR" 2>/dev/null
    [ -n "$HUGEPAGES_BEFORE" ] && echo "$HUGEPAGES_BEFORE" >"$HUGEPAGES_FILE" 2>/dev/null
    return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- helpers -----------------------------------------------------------------------------------

# jget FILE a.0.b: the value at that path of a JSON file ("" when absent or null; a list is
# joined with "; "). Anything before the first line starting with "{" is skipped (fio can put
# notes there).
jget() {
    local file=$1 path=$2
    if [ "$JSON_TOOL" = python3 ]; then
        python3 -c '
import json, sys
text = open(sys.argv[1]).read()
start = text.find("{")
d = json.loads(text[start:]) if start >= 0 else None
for k in sys.argv[2].split("."):
    if d is None:
        break
    d = d[int(k)] if isinstance(d, list) and int(k) < len(d) else (d.get(k) if isinstance(d, dict) else None)
if d is None:
    print("")
elif isinstance(d, list):
    print("; ".join(str(x) for x in d))
else:
    print(d)
' "$file" "$path" 2>/dev/null
    else
        sed -n '/^{/,$p' "$file" | jq -r --arg p "$path" '
            getpath($p | split(".") | map(tonumber? // .)) |
            if . == null then "" elif type == "array" then map(tostring) | join("; ") else . end
        ' 2>/dev/null
    fi
}

# calc EXPR a b: awk arithmetic on a and b, printed with 1 decimal (or as asked).
div1() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print ""; else printf "%.1f", a / b }'; }
div2() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print ""; else printf "%.2f", a / b }'; }
mbps() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print ""; else printf "%.1f", a / b / 1e6 }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
now() { date +%s.%N; }

median() {
    [ $# -gt 0 ] || { echo ""; return; }
    printf '%s\n' "$@" | sort -g | awk '
        { v[NR] = $1 }
        END { if (NR % 2) printf "%.1f", v[(NR + 1) / 2]; else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Results: R[workload.tool] = space-separated figures of the repeats.
declare -A R=()
FAILURES=()
OBSERVATIONS=()

record() { R[$1]="${R[$1]:-} $2"; }

# tool_failed WHAT COMMAND LOG
tool_failed() {
    FAILURES+=("$1")
    {
        echo "!! $1 failed: $2"
        [ -s "$3" ] && tail -n 20 "$3" | sed 's/^/!!   /'
    } >&2
}

# observe TEXT: a note for the report, once per distinct text.
observe() {
    local o
    for o in "${OBSERVATIONS[@]}"; do
        [ "$o" = "$1" ] && return
    done
    OBSERVATIONS+=("$1")
    note "   note: $1"
}

# Between measurements: deleted files' blocks freed (the file system is mounted with discard on
# some machines) and dirty pages written back, so one tool does not pay for the previous one.
settle() {
    sync
    sleep 1
}

DROP_CACHES=0
if [ "${NO_DROP_CACHES:-0}" != 1 ] && [ -w /proc/sys/vm/drop_caches ] &&
    (sync && echo 3 >/proc/sys/vm/drop_caches) 2>/dev/null; then
    DROP_CACHES=1
fi

# Evicts the small-files tree from the page cache: drop_caches when allowed (data, dentries and
# inodes), else posix_fadvise(DONTNEED) on each file (data pages only).
evict_small() {
    if [ "$DROP_CACHES" = 1 ]; then
        sync
        echo 3 >/proc/sys/vm/drop_caches
    elif [ "$JSON_TOOL" = python3 ]; then
        sync
        python3 -c '
import os, sys
for root, dirs, files in os.walk(sys.argv[1]):
    for name in files:
        fd = os.open(os.path.join(root, name), os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
' "$SCRATCH/small"
    else
        sync
        find "$SCRATCH/small" -type f -exec sh -c 'for f; do dd if="$f" iflag=nocache count=0 status=none; done' sh {} +
    fi
}

# --- measurements: each sets MEAS (the figure) or returns 1 ---------------------------------

# m_fio KEY RW(read|write) fio-args...: MB/s from fio's JSON.
m_fio() {
    local key=$1 rw=$2
    shift 2
    local out=$SCRATCH/fio.json log=$SCRATCH/fio.log
    rm -f "$out"
    MEAS=
    if ! fio --output-format=json --output="$out" "$FIO_MEM" "$@" >"$log" 2>&1; then
        tool_failed "$key fio" "fio $*" "$log"
        return 1
    fi
    local err bw io
    err=$(jget "$out" jobs.0.error)
    bw=$(jget "$out" "jobs.0.$rw.bw_bytes")
    io=$(jget "$out" "jobs.0.$rw.io_bytes")
    if [ "${err:-1}" != 0 ] || [ -z "$bw" ] || [ "$bw" = 0 ]; then
        cp "$out" "$log.json" 2>/dev/null
        tool_failed "$key fio" "fio $* (error=$err bw_bytes=$bw)" "$out"
        return 1
    fi
    [ "$io" = "$GIB" ] || [ -n "${FIO_TIME_BASED:-}" ] || observe "$key: fio moved $io bytes, not $GIB"
    MEAS=$(mbps "$bw" 1)
}

# m_dd KEY dd-args...: MB/s from the bytes and seconds dd prints on stderr.
m_dd() {
    local key=$1
    shift
    local log=$SCRATCH/dd.log bytes secs
    MEAS=
    if ! LC_ALL=C dd "$@" 2>"$log"; then
        tool_failed "$key dd" "dd $*" "$log"
        return 1
    fi
    bytes=$(awk '/ copied, / { print $1 }' "$log" | tail -n 1)
    secs=$(sed -n 's/.* copied, \([0-9.e+-]*\) s, .*/\1/p' "$log" | tail -n 1)
    if [ -z "$bytes" ] || [ -z "$secs" ]; then
        tool_failed "$key dd" "dd $* (cannot parse its report)" "$log"
        return 1
    fi
    [ "$bytes" = "$GIB" ] || observe "$key: dd moved $bytes bytes, not $GIB"
    MEAS=$(mbps "$bytes" "$secs")
}

# m_backlab KEY backlab-run-args...: sets BL_MB, BL_SECS, BL_FILES, BL_BYTES (and MEAS = BL_MB).
m_backlab() {
    local key=$1
    shift
    local out=$SCRATCH/backlab.json log=$SCRATCH/backlab.log rc status error warnings
    MEAS= BL_MB= BL_SECS= BL_FILES= BL_BYTES=
    "$BL" run "$@" --duration "${BL_RUN_DURATION:-$BL_DURATION}" --json >"$out" 2>"$log"
    rc=$?
    status=$(jget "$out" runs.0.status)
    error=$(jget "$out" runs.0.error)
    if [ $rc -ne 0 ] || [ "$status" != done ]; then
        {
            echo "   exit code $rc, status '$status', error: $error"
        } >>"$log"
        tool_failed "$key backlab" "$BL run $* --duration $BL_DURATION --json" "$log"
        return 1
    fi
    BL_MB=$(jget "$out" runs.0.mb_per_s)
    BL_SECS=$(jget "$out" runs.0.seconds)
    BL_FILES=$(jget "$out" runs.0.files)
    BL_BYTES=$(jget "$out" runs.0.bytes)
    warnings=$(jget "$out" runs.0.warnings)
    if [ -n "$warnings" ]; then
        case $warnings in
            *"${BL_EXPECTED_WARNING:-@none@}"*) observe "$key: backlab warned (expected here): $warnings" ;;
            *) observe "$key: backlab warned: $warnings" ;;
        esac
    fi
    MEAS=$BL_MB
    if [ -n "${BL_STEADY:-}" ]; then
        MEAS=$(jget "$out" runs.0.steady.mb_per_s)
        [ "$(jget "$out" runs.0.validity.valid)" = True ] || [ "$(jget "$out" runs.0.validity.valid)" = true ] ||
            observe "$key: backlab judged its run not valid: $(jget "$out" runs.0.validity.flags)"
        [ -n "$MEAS" ] || { tool_failed "$key backlab" "no steady state found" "$log"; return 1; }
    fi
}

# order REP tool...: the tools in order on even repeats, reversed on odd ones.
order() {
    local rep=$1
    shift
    if [ $((rep % 2)) -eq 0 ]; then
        printf '%s\n' "$@"
    else
        printf '%s\n' "$@" | tac
    fi
}

progress() {
    local of=$REPEAT
    [ "$1" = w3 ] && of=$W3_REPEAT
    note "$(printf '   [%s rep %d/%d] %-8s %s' "$1" "$(($2 + 1))" "$of" "$3" "$4")"
}

# --- machine info ------------------------------------------------------------------------------
echo "== machine"
echo "nproc:      $(nproc)"
echo "kernel:     $(uname -srm)"
echo "cpu:        $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)"
echo "memory:     $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)"
echo "fio:        $(fio --version 2>/dev/null)"
echo "backlab:    $("$BL" --version 2>/dev/null)"
echo "scratch:    $SCRATCH"
df -T -h "$SCRATCH" | sed 's/^/            /'
echo "mount:      $(awk -v d="$(df -P "$SCRATCH" | awk 'NR == 2 { print $6 }')" '$2 == d { print $1, $2, $3, $4 }' /proc/mounts | tail -n 1)"
echo "repeats:    $REPEAT (median reported, tool order alternating); small-files streams: $STREAMS"
echo "write ring: backlab --buffers $W1_BUFFERS x 1 MiB for the direct write (fio psync: one buffer)"
echo "cached read: $W3_REPEAT measurements per tool (each is only ~55 ms long)"
echo "steady read: w5 reads one 512 MiB file with O_DIRECT, 1 MiB blocks, for 10 s in both tools;"
echo "            backlab's steady-state figure (its ramp and tail left out) against fio"
echo "            --time_based --runtime=10 --ramp_time=1 (fio leaves its first second out)"
if [ "$FIO_MEM" = --mem=shmhuge ]; then
    echo "buffers:    fio $FIO_MEM (huge pages, as backlab's 1 MiB buffers; FIO_HUGE=0 for malloc)"
else
    echo "buffers:    fio $FIO_MEM: no huge pages could be reserved, so fio pins 4 KiB pages and"
    echo "            backlab 2 MiB ones; expect backlab ahead on fast direct I/O"
fi
if [ "$DROP_CACHES" = 1 ]; then
    echo "cold cache: sync; echo 3 > /proc/sys/vm/drop_caches before each small-files measurement"
else
    echo "cold cache: /proc/sys/vm/drop_caches is not writable (or NO_DROP_CACHES=1): the tar figure"
    echo "            is only evicted per file (posix_fadvise DONTNEED on data pages; dentries and"
    echo "            inodes stay cached), backlab evicts per file itself (--cold-cache)"
fi
echo

# --- 1. direct sequential write ----------------------------------------------------------------
W=w1
wants w1 && note "== 1. direct sequential write, 1 MiB blocks, 1 GiB"
mkdir -p "$SCRATCH/wtarget" "$SCRATCH/empty"
WFILE=$SCRATCH/w.dat
wants w1 && for ((rep = 0; rep < REPEAT; rep++)); do
    for tool in $(order $rep backlab fio dd); do
        rm -f "$WFILE"
        settle
        case $tool in
            backlab)
                m_backlab $W --source "$SCRATCH/empty" --target "$SCRATCH/wtarget" --tests tape_write \
                    --buffers "$W1_BUFFERS" --block-size 1M --size 1G --direct --fsync --compress-ratio 1.0 || continue
                [ "$BL_BYTES" = "$GIB" ] || observe "$W: backlab tape_write moved $BL_BYTES bytes, not $GIB"
                ;;
            fio)
                # fallocate=none: like dd and backlab, fio allocates blocks as it writes a new
                # file, instead of preallocating them before its clock starts.
                m_fio $W write --name=seqwrite --filename="$WFILE" --rw=write --bs=1M --size=1G \
                    --direct=1 --ioengine=psync --end_fsync=1 --fallocate=none || continue
                ;;
            dd)
                m_dd $W if=/dev/zero of="$WFILE" bs=1M count=1024 oflag=direct conv=fsync || continue
                ;;
        esac
        record $W.$tool "$MEAS"
        progress $W $rep $tool "$MEAS MB/s"
    done
done
rm -f "$WFILE"
leftover=$(find "$SCRATCH/wtarget" -mindepth 1 | head -n 3)
[ -z "$leftover" ] || observe "$W: backlab tape_write left files in its target: $leftover"

# --- 2. direct sequential read -----------------------------------------------------------------
W=w2
RFILE=$SCRATCH/r.dat
if (wants w2 || wants w3) && ! fio --name=prep --filename="$RFILE" --rw=write --bs=1M --size=1G --direct=1 --ioengine=psync \
    --end_fsync=1 >"$SCRATCH/prep.log" 2>&1; then
    tool_failed "creating the 1 GiB read file with fio" "fio --name=prep --filename=$RFILE ..." "$SCRATCH/prep.log"
fi
if [ -f "$RFILE" ]; then
    wants w2 && note "== 2. direct sequential read, 1 MiB blocks, 1 GiB file"
    wants w2 && for ((rep = 0; rep < REPEAT; rep++)); do
        for tool in $(order $rep backlab fio dd); do
            settle
            case $tool in
                backlab)
                    m_backlab $W --source "$RFILE" --target null --tests read_single --block-size 1M \
                        --direct || continue
                    [ "$BL_BYTES" = "$GIB" ] || observe "$W: backlab read_single moved $BL_BYTES bytes, not $GIB"
                    ;;
                fio)
                    m_fio $W read --name=seqread --filename="$RFILE" --rw=read --bs=1M --size=1G \
                        --direct=1 --ioengine=psync || continue
                    ;;
                dd)
                    m_dd $W if="$RFILE" of=/dev/null bs=1M iflag=direct || continue
                    ;;
            esac
            record $W.$tool "$MEAS"
            progress $W $rep $tool "$MEAS MB/s"
        done
    done

    # --- 3. page-cached read to null -----------------------------------------------------------
    W=w3
    wants w3 && note "== 3. page-cached read of the 1 GiB file to null"
    # This workload reads from memory on purpose.
    BL_EXPECTED_WARNING="was in the page cache before the test"
    wants w3 && for ((rep = 0; rep < W3_REPEAT; rep++)); do
        for tool in $(order $rep backlab dd fio); do
            cat "$RFILE" >/dev/null # warm (again) before each measurement
            case $tool in
                backlab)
                    m_backlab $W --source "$RFILE" --target null --tests read_single --block-size 1M \
                        --direct=false --cold-cache=false || continue
                    [ "$BL_BYTES" = "$GIB" ] || observe "$W: backlab read_single moved $BL_BYTES bytes, not $GIB"
                    ;;
                fio)
                    m_fio $W read --name=cachedread --filename="$RFILE" --rw=read --bs=1M --size=1G \
                        --direct=0 --invalidate=0 --ioengine=psync || continue
                    ;;
                dd)
                    m_dd $W if="$RFILE" of=/dev/null bs=1M || continue
                    ;;
            esac
            record $W.$tool "$MEAS"
            progress $W $rep $tool "$MEAS MB/s"
        done
    done
fi
rm -f "$RFILE"

BL_EXPECTED_WARNING=
# --- 4. small files read cold ------------------------------------------------------------------
W=w4
SMALL=$SCRATCH/small
t0=$(now)
wants w4 && note "== 4. $SMALL_FILES small files (4-16 KiB) read cold"
if ! wants w4; then
    :
elif "$BL" dataset create "$SMALL" --profile small-files --size 2G --files $SMALL_FILES --seed 1 \
    >"$SCRATCH/dataset.log" 2>&1; then
    note "   dataset created in $(div1 "$(awk -v a="$(now)" -v b="$t0" 'BEGIN { print a - b }')" 1) s: $(tail -n 1 "$SCRATCH/dataset.log")"
    NFILES=$(find "$SMALL" -type f | wc -l)
    [ "$NFILES" = $SMALL_FILES ] || observe "$W: the dataset holds $NFILES files, not $SMALL_FILES"
    for ((rep = 0; rep < REPEAT; rep++)); do
        for tool in $(order $rep backlab tar); do
            settle
            evict_small
            case $tool in
                backlab)
                    m_backlab $W --source "$SMALL" --target null --tests read_parallel --streams "$STREAMS" \
                        --cold-cache || continue
                    [ "$BL_FILES" = "$NFILES" ] || observe "$W: backlab read $BL_FILES files, not $NFILES"
                    MEAS=$(div1 "$BL_FILES" "$BL_SECS")
                    progress $W $rep $tool "$MEAS files/s ($BL_FILES files in $BL_SECS s, $BL_MB MB/s)"
                    ;;
                tar)
                    t0=$(now)
                    tar -cf - -C "$SCRATCH" small 2>"$SCRATCH/tar.log" | cat >/dev/null
                    rcs=("${PIPESTATUS[@]}")
                    t1=$(now)
                    if [ "${rcs[0]}" -ne 0 ] || [ "${rcs[1]}" -ne 0 ]; then
                        tool_failed "$W tar" "tar -cf - -C $SCRATCH small | cat > /dev/null (exit ${rcs[*]})" \
                            "$SCRATCH/tar.log"
                        continue
                    fi
                    secs=$(awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.3f", a - b }')
                    MEAS=$(div1 "$NFILES" "$secs")
                    progress $W $rep $tool "$MEAS files/s ($NFILES files in $secs s)"
                    ;;
            esac
            record $W.$tool "$MEAS"
        done
    done
else
    tool_failed "$W backlab dataset create" \
        "$BL dataset create $SMALL --profile small-files --size 2G --files $SMALL_FILES --seed 1" \
        "$SCRATCH/dataset.log"
fi

# --- 5. time-based direct read: the steady-state figure ---------------------------------------
W=w5
SFILE=$SCRATCH/s.dat
if wants w5; then
    note "== 5. direct read of a 512 MiB file, time-based 10 s (backlab steady state vs fio)"
    if fio --name=prep --filename="$SFILE" --rw=write --bs=1M --size=512M --direct=1 --ioengine=psync \
        --end_fsync=1 >"$SCRATCH/prep5.log" 2>&1; then
        for ((rep = 0; rep < REPEAT; rep++)); do
            for tool in $(order $rep backlab fio); do
                settle
                case $tool in
                    backlab)
                        BL_STEADY=1 BL_RUN_DURATION=10 m_backlab $W --source "$SFILE" --target null \
                            --tests read_single --block-size 1M --direct --time-based || continue
                        ;;
                    fio)
                        FIO_TIME_BASED=1 m_fio $W read --name=ssread --filename="$SFILE" --rw=read \
                            --bs=1M --size=512M --direct=1 --ioengine=psync --time_based \
                            --runtime=10 --ramp_time=1 || continue
                        ;;
                esac
                record $W.$tool "$MEAS"
                progress $W $rep $tool "$MEAS MB/s"
            done
        done
    else
        tool_failed "creating the 512 MiB read file with fio" "fio --name=prep --filename=$SFILE ..." "$SCRATCH/prep5.log"
    fi
    rm -f "$SFILE"
fi

# --- report ------------------------------------------------------------------------------------
# med W TOOL: the median, "-" when the tool is not part of the workload, ERR when it failed.
med() {
    local key=$1.$2
    if [ -n "${R[$key]:-}" ]; then
        # shellcheck disable=SC2086
        median ${R[$key]}
    else
        local f
        for f in "${FAILURES[@]}"; do
            [ "$f" = "$1 $2" ] && { echo ERR; return; }
        done
        echo -
    fi
}
isnum() { case $1 in '' | - | ERR) return 1 ;; *) return 0 ;; esac; }
ratio() { # ratio BACKLAB REF NAME
    if isnum "$1" && isnum "$2"; then echo "$(div2 "$1" "$2") ($3)"; else echo "n/a ($3)"; fi
}

ROWS=(
    "w1|direct seq write 1M x 1G (MB/s)|fio dd|0.95"
    "w2|direct seq read 1M x 1G (MB/s)|fio dd|0.95"
    "w3|cached read 1M x 1G to null (MB/s)|dd fio|1.0"
    "w4|small-files read cold (files/s)|tar|3"
    "w5|steady direct read 512M, 10 s (MB/s)|fio|0.97"
)
VERDICTS=()
echo
echo "== results (median of $REPEAT; of $W3_REPEAT for the cached read)"
fmt='%-36s %9s %9s %9s %9s   %-26s %s\n'
printf "$fmt" workload backlab fio dd tar "ratio(backlab/ref)" goal
for row in "${ROWS[@]}"; do
    IFS='|' read -r w label refs goal <<<"$row"
    wants "$w" || continue
    b=$(med "$w" backlab)
    f=$(med "$w" fio)
    d=$(med "$w" dd)
    t=$(med "$w" tar)
    declare -A VAL=([fio]=$f [dd]=$d [tar]=$t)
    ratios=
    for ref in $refs; do
        ratios="${ratios:+$ratios, }$(ratio "$b" "${VAL[$ref]}" "$ref")"
    done
    goal_ref=${refs%% *}
    printf "$fmt" "$label" "$b" "$f" "$d" "$t" "$ratios" ">= $goal ($goal_ref)"
    if isnum "$b" && isnum "${VAL[$goal_ref]}"; then
        r=$(div2 "$b" "${VAL[$goal_ref]}")
        if ge "$r" "$goal"; then v=PASS; else v=FAIL; fi
        VERDICTS+=("$v  $label: backlab/$goal_ref = $r, goal >= $goal")
    else
        VERDICTS+=("FAIL  $label: no figure (a tool failed), goal >= $goal")
    fi
done
# The steady-state figure must agree with fio from above too: within 3 %.
if wants w5; then
    b=$(med w5 backlab) f=$(med w5 fio)
    if isnum "$b" && isnum "$f"; then
        r=$(div2 "$b" "$f")
        if ge 1.03 "$r"; then v=PASS; else v=FAIL; fi
        VERDICTS+=("$v  steady direct read: backlab/fio = $r, goal <= 1.03")
    fi
fi
echo
for v in "${VERDICTS[@]}"; do echo "$v"; done
echo
echo "raw figures (MB/s or files/s, one per repeat):"
for w in w1 w2 w3 w4 w5; do
    for tool in backlab fio dd tar; do
        [ -n "${R[$w.$tool]:-}" ] && printf '  %s %-8s%s\n' "$w" "$tool" "${R[$w.$tool]}"
    done
done
if [ ${#OBSERVATIONS[@]} -gt 0 ]; then
    echo
    echo "notes:"
    for o in "${OBSERVATIONS[@]}"; do echo "  - $o"; done
fi
if [ ${#FAILURES[@]} -gt 0 ]; then
    echo
    echo "vs-fio.sh: tool failures: ${FAILURES[*]} (see the messages above)" >&2
    exit 1
fi
exit 0
