#!/usr/bin/env bash
# bench/write-behind.sh - backlab's target write into a directory beside the same write path
# done by hand, and fio's direct writes as the device's yardstick, alternating rounds; prints
# each side's MB/s, the medians and the paired ratio backlab / by hand (goal: within 5 %).
#
#   backlab  backlab run --generated 1G --block-size 1M --target DIR --tests tape_write --json:
#            data generated for every block (2:1 compressible, its CPU the lab's own) written
#            buffered in 1 MiB blocks, each 16 MiB handed to the disk at once and the 16 MiB
#            64 MiB behind waited for and dropped from the page cache (sync_file_range), the
#            file fdatasynced inside the timed window; the run ends once steady (about 6 s);
#            rate = its steady MB/s
#   by hand  python3 writing SIZE of one random 1 MiB block again and again (no CPU spent making
#            data: a lab whose generation holds a core shows it in a ratio below 1) into a file in the same
#            directory with the same write-behind (the same window and depth, ctypes'
#            sync_file_range and posix_fadvise), fdatasync at the end; rate = SIZE over the
#            wall time including the fdatasync
#   fio      fio --rw=write --bs=1m --direct=1 --ioengine=libaio --iodepth=32 --end_fsync=1,
#            SIZE into the same directory: what the device takes without the page cache, for
#            reference (a device with a write-back cache can take buffered writeback faster)
#   rounds   REPEAT rounds, backlab first in odd rounds and by hand first in even ones
#
# Environment:
#   SIZE       bytes the hand side and fio write (default 16G)
#   REPEAT     rounds (default 3)
#   BENCH_DIR  the directory written (default /var/tmp/backlab-bench-wb): a real disk
#   BACKLAB    the binary (default: target/release/backlab, built first)
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${SIZE:-16G}
REPEAT=${REPEAT:-3}
BENCH_DIR=${BENCH_DIR:-/var/tmp/backlab-bench-wb}
if [ -z "${BACKLAB:-}" ]; then
    cargo build --release --quiet
    BACKLAB=target/release/backlab
fi
for tool in python3 fio; do
    command -v "$tool" >/dev/null || { echo "write-behind.sh: needs $tool" >&2; exit 2; }
done
mkdir -p "$BENCH_DIR"
trap 'rm -f "$BENCH_DIR"/wb.dat "$BENCH_DIR"/fio.dat' EXIT
gib=${SIZE%G}

by_hand() {
    python3 - "$BENCH_DIR/wb.dat" "$gib" <<'PY'
import ctypes, os, sys, time
libc = ctypes.CDLL("libc.so.6", use_errno=True)
libc.sync_file_range.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
WINDOW, IN_FLIGHT = 16 << 20, 4
path, total = sys.argv[1], int(sys.argv[2]) << 30
block = os.urandom(1 << 20)
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
start = time.monotonic()
written = handed = 0
while written < total:
    os.write(fd, block)
    written += len(block)
    while written - handed >= WINDOW:
        libc.sync_file_range(fd, handed, WINDOW, 2)
        old = handed - IN_FLIGHT * WINDOW
        if old >= 0:
            libc.sync_file_range(fd, old, WINDOW, 1 | 2 | 4)
            os.posix_fadvise(fd, old, WINDOW, os.POSIX_FADV_DONTNEED)
        handed += WINDOW
os.fdatasync(fd)
print(f"{total / (time.monotonic() - start) / 1e6:.1f}")
os.close(fd)
os.unlink(path)
PY
}

lab() {
    "$BACKLAB" run --generated 1G --block-size 1M --target "$BENCH_DIR" --tests tape_write --json 2>/dev/null |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["runs"][0]; s=r.get("steady") or {}; print("%.1f" % (s.get("mb_per_s") if s.get("steady") else r["mb_per_s"]))'
}

device() {
    fio --name=w --filename="$BENCH_DIR/fio.dat" --rw=write --bs=1m --size="$SIZE" --direct=1 \
        --ioengine=libaio --iodepth=32 --end_fsync=1 --minimal 2>/dev/null |
        awk -F';' '{printf "%.1f\n", $48 * 1024 / 1e6}'
    rm -f "$BENCH_DIR/fio.dat"
}

fs=$(df -T "$BENCH_DIR" | awk 'NR==2 {print $2 " on " $1}')
echo "conditions: $BENCH_DIR ($fs), write cache $(cat /sys/block/"$(basename "$(df "$BENCH_DIR" | awk 'NR==2 {print $1}')")"/queue/write_cache 2>/dev/null || echo unknown), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); by hand and fio $SIZE each"
printf '%-6s %12s %12s %12s %8s\n' round backlab by-hand fio-direct ratio
labs=() hands=() ratios=()
for round in $(seq 1 "$REPEAT"); do
    if [ $((round % 2)) -eq 1 ]; then l=$(lab); h=$(by_hand); else h=$(by_hand); l=$(lab); fi
    d=$(device)
    r=$(python3 -c "print('%.3f' % ($l / $h))")
    labs+=("$l") hands+=("$h") ratios+=("$r")
    printf '%-6s %12s %12s %12s %8s\n' "$round" "$l" "$h" "$d" "$r"
done
python3 - "${labs[*]}" "${hands[*]}" "${ratios[*]}" <<'PY'
import statistics, sys
labs, hands, ratios = ([float(x) for x in arg.split()] for arg in sys.argv[1:4])
paired = statistics.median(ratios)
print(f"median MB/s: backlab {statistics.median(labs):.1f}, by hand {statistics.median(hands):.1f}")
print(f"paired ratio backlab / by hand: {paired:.3f} ({'within' if abs(paired - 1) <= 0.05 else 'OUTSIDE'} 5 %)")
PY
