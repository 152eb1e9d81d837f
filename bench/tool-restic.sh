#!/usr/bin/env bash
# bench/tool-restic.sh - backlab's tool_backup of restic beside the same restic command timed by
# hand, on the same tree, several times in alternating order, and prints each one's MB/s (source
# bytes over wall time), the medians and the ratio backlab / by hand (goal: the paired ratio
# within 3 %).
#
#   data     backlab dataset create --profile typical --size SIZE --seed 1 (compression 2:1), in
#            BENCH_DIR
#   backlab  backlab run --source TREE --target DIR --tool restic:compression=COMPRESSION,
#            pack_size=PACK_SIZE --tests tool_backup --json: the lab makes a new repository in a
#            directory of the run's own in DIR (`restic init --quiet --repo R
#            --repository-version 2`, untimed), syncs the tree's file system and drops every file
#            of it from the page cache, then runs `restic backup --json --repo R --host backlab
#            --compression COMPRESSION --pack-size PACK_SIZE TREE` with a cleared environment
#            (PATH, HOME = a scratch home, RESTIC_PASSWORD, RESTIC_PROGRESS_FPS=4,
#            RESTIC_CACHE_DIR=HOME/cache) in that home, reading its JSON lines from a pipe;
#            rate = the run's MB/s, the tree's bytes over the wall time from spawn to exit
#   by hand  the same: a new repository in a directory of its own in DIR made by the same
#            `restic init` (untimed), the tree's file system synced and every file dropped from
#            the page cache (posix_fadvise DONTNEED, as the lab does; fincore then counts what
#            is left), the same `restic backup` with the same arguments and environment in a
#            fresh scratch home (beside the lab's, on the same file system), its JSON lines read
#            from a pipe, timed by python3 from before the spawn to after the exit; rate = the
#            tree's bytes over that wall time. The repository and home are removed after each
#            backup, as the lab removes its own
#   rounds   REPEAT of each, alternating (backlab first in odd rounds, by hand first in even);
#            each round's ratio pairs the two runs taken back to back, so a machine whose
#            speed drifts over the bench moves both sides of a pair alike; the goal is met by
#            the median of the rounds' ratios (the paired ratio), and the ratio of the two
#            sides' medians is printed beside it. restic keeps most of a small machine's cores
#            busy, so other work moves its figure: before each backup the bench waits (at most
#            QUIET_WAIT s) until the whole machine was at most QUIET % busy over 2 s; each row
#            shows that wait, the 1-minute load average, and what other work did during the
#            backup: its share of the machine's CPU (/proc/stat less restic's own CPU) and the MB
#            it moved on the bench's disk (/proc/diskstats less restic's own I/O), sampled every
#            50 ms while the `restic backup` process lived (the lab's child, found in /proc, or
#            the one by hand). A round where either side's other work passed NOISY % or
#            NOISY_DISK MB is printed, marked, and run again (RETRY times at most; the last try
#            counts); the rounds that stayed noisy are counted apart in the summary
#   check    then CHECK runs of the lab's timing against the command's own clock: the same
#            restic commands as an operator's definition (--tools, under `sh -c`) whose backup
#            notes the time before it starts restic and after restic ends (`date +%s.%N`);
#            prints the lab's wall time over the command's own start to end, run by run. Other
#            work on the machine moves both alike, so this holds where the side-by-side rounds
#            swing
#
# Environment:
#   SIZE         bytes in the tree (default 1G; a number with K, M or G)
#   COMPRESSION  restic's --compression: off, auto or max (default auto, the lab's default)
#   PACK_SIZE    restic's --pack-size in MiB, 4 to 128 (default 16, the lab's default)
#   REPEAT       backups per side (default 5)
#   CHECK        runs of the timing check (default 3; 0 skips it)
#   QUIET        wait before each backup until the machine's CPU is at most this % busy (default
#                10; 0 does not wait)
#   QUIET_WAIT   the longest wait, in seconds, before going ahead anyway (default 300)
#   NOISY        a round where other work took more than this % of the CPU during either side's
#                run is noisy (default 20)
#   NOISY_DISK   ... or moved more than this many MB on the bench's disk (default 64)
#   RETRY        times a noisy round is run again, both sides (default 2; 0 keeps every round)
#   BENCH_DIR    where the tree, the repositories and the homes go (default
#                /var/tmp/backlab-bench): a real disk, not tmpfs, or "cold" means nothing
#   BACKLAB      a backlab binary to use instead of building target/release/backlab
#
# Needs cargo (unless BACKLAB is given), restic (0.14 or later: --repository-version 2,
# --pack-size), python3, fincore (util-linux). Exits 0 whatever the ratio is (the PASS/FAIL line
# tells); non-zero only when a tool failed or is missing.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SIZE=${SIZE:-1G}
COMPRESSION=${COMPRESSION:-auto}
PACK_SIZE=${PACK_SIZE:-16}
REPEAT=${REPEAT:-5}
CHECK=${CHECK:-3}
QUIET=${QUIET:-10}
QUIET_WAIT=${QUIET_WAIT:-300}
NOISY=${NOISY:-20}
NOISY_DISK=${NOISY_DISK:-64}
RETRY=${RETRY:-2}
BENCH_DIR=${BENCH_DIR:-/var/tmp/backlab-bench}

die() {
    echo "tool-restic.sh: $*" >&2
    exit 2
}
note() { echo "$*" >&2; }

case $REPEAT in '' | *[!0-9]* | 0) die "REPEAT must be a positive integer" ;; esac
case $CHECK in '' | *[!0-9]*) die "CHECK must be a whole number" ;; esac
case $QUIET in '' | *[!0-9]*) die "QUIET must be a whole number" ;; esac
case $QUIET_WAIT in '' | *[!0-9]*) die "QUIET_WAIT must be a whole number" ;; esac
case $NOISY in '' | *[!0-9]*) die "NOISY must be a whole number" ;; esac
case $NOISY_DISK in '' | *[!0-9]*) die "NOISY_DISK must be a whole number" ;; esac
case $RETRY in '' | *[!0-9]*) die "RETRY must be a whole number" ;; esac
case $COMPRESSION in off | auto | max) ;; *) die "COMPRESSION must be off, auto or max" ;; esac
case $PACK_SIZE in '' | *[!0-9]*) die "PACK_SIZE must be a whole number" ;; esac
[ "$PACK_SIZE" -ge 4 ] && [ "$PACK_SIZE" -le 128 ] || die "PACK_SIZE must be from 4 to 128"
for tool in restic python3 fincore; do
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
SCRATCH=$(mktemp -d "$BENCH_DIR/tool-restic.XXXXXX") || die "cannot create a scratch directory"
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
note "creating the tree: $SIZE, profile typical, compression 2:1, seed 1"
"$BL" dataset create "$TREE" --profile typical --size "$SIZE" --seed 1 >"$SCRATCH/create.txt" ||
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

load1() { cut -d' ' -f1 /proc/loadavg; }

# Waits until the whole machine's CPU was at most QUIET % busy over 2 s (the bench itself is
# idle then, so this is other work), for QUIET_WAIT seconds at most; prints the seconds waited,
# with a "+" when it gave up and the run goes ahead on a busy machine.
wait_quiet() {
    [ "$QUIET" -gt 0 ] || { echo 0; return 0; }
    python3 - "$QUIET" "$QUIET_WAIT" <<'EOF'
import sys, time
quiet, patience = float(sys.argv[1]), float(sys.argv[2])
def stat():
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return sum(fields[:8]) - fields[3] - fields[4], sum(fields[:8])
began = time.monotonic()
while True:
    busy0, total0 = stat()
    time.sleep(2)
    busy1, total1 = stat()
    waited = time.monotonic() - began
    if busy1 - busy0 <= quiet / 100 * max(1, total1 - total0):
        print(f"{max(0, waited - 2):.0f}")
        break
    if waited >= patience:
        print(f"{waited:.0f}+")
        break
EOF
}

# Runs a command, timed from before its spawn to after its exit, reading its standard output
# to the end (into OUT, or discarded, as the lab reads restic's JSON lines); prints its wall
# seconds, then what other work did while restic's backup ran: its share of the machine's CPU
# (/proc/stat less restic's own utime and stime) and the MB it moved on the bench's disk
# (/proc/diskstats less restic's own read_bytes and write_bytes), from samples every 50 ms of
# the machine and of the restic process: the command itself by hand ("self"), the lab's child
# `restic backup` ("child"), so both sides are judged over the same step.
cat >"$SCRATCH/measure.py" <<'EOF'
import json, os, subprocess, sys, threading, time
device, out, err, watch, argv = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[6:]
hz = os.sysconf("SC_CLK_TCK")
def machine():
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    busy = (sum(fields[:8]) - fields[3] - fields[4]) / hz
    for line in open("/proc/diskstats"):
        f = line.split()
        if f"{f[0]}:{f[1]}" == device:
            return busy, (int(f[5]) + int(f[9])) * 512
    return busy, None
def process(pid):
    """restic's CPU seconds and block I/O bytes, or None once it is gone."""
    try:
        stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        io = dict(line.split(": ") for line in open(f"/proc/{pid}/io").read().splitlines())
    except (OSError, ValueError):
        return None
    return (int(stat[11]) + int(stat[12])) / hz, int(io["read_bytes"]) + int(io["write_bytes"])
def find_restic(parent):
    """The parent's child `restic backup`: a pid above the parent's, so the search reads a few
    files, not all of /proc (a search that cost CPU would slow the lab's `restic init`, whose
    key derivation calibrates itself on the machine's speed)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) <= parent:
            continue
        try:
            ppid = int(open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[1])
            if ppid != parent:
                continue
            words = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if words[:2] == [b"restic", b"backup"]:
            return int(entry), words
    return None, None
def kdf(words):
    """The scrypt parameters `restic init` chose for the repository (N, r, p): restic
    calibrates them to about 0.5 s on the machine as it is at init, and every backup pays
    that key derivation again when it opens the repository."""
    try:
        repo = os.fsdecode(words[words.index(b"--repo") + 1])
        keys = os.path.join(repo, "keys")
        key = json.load(open(os.path.join(keys, os.listdir(keys)[0])))
        return f"{key['N']}/{key['r']}/{key['p']}"
    except (OSError, ValueError, IndexError, KeyError):
        return "?"
seen = []  # (time, machine CPU s, disk bytes, restic's CPU s, restic's bytes) while restic ran
stop = threading.Event()
params = ["?"]
def sample(child):
    target = None
    if watch == "self":
        target = child.pid
        params[0] = kdf([os.fsencode(word) for word in argv])
    while not stop.is_set():
        if target is None:
            target, words = find_restic(child.pid)
            if target is not None:
                params[0] = kdf(words)
        if target is not None:
            now, (busy, disk), own = time.monotonic(), machine(), process(target)
            if own is not None:
                seen.append((now, busy, disk) + own)
        stop.wait(0.05)
with open(err, "wb") as stderr, open(os.devnull if out == "-" else out, "wb") as sink:
    start = time.monotonic()
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr)
    sampler = threading.Thread(target=sample, args=(child,))
    sampler.start()
    for line in child.stdout:
        sink.write(line)
    status = child.wait()
    end = time.monotonic()
    stop.set()
    sampler.join()
if status != 0:
    sys.stderr.write(open(err, errors="replace").read()[-4000:])
    sys.exit(f"{argv[0]} exited {status}")
other_cpu = other_disk = "?"
if len(seen) >= 2:
    (t0, b0, d0, c0, i0), (t1, b1, d1, c1, i1) = seen[0], seen[-1]
    # The machine's busy seconds over the window, less restic's own, as a share of all cores.
    cores = os.cpu_count() or 1
    other_cpu = f"{max(0.0, ((b1 - b0) - (c1 - c0)) / (cores * max(1e-3, t1 - t0)) * 100):.0f}"
    if d0 is not None:
        other_disk = f"{max(0, (d1 - d0) - (i1 - i0)) / 1e6:.0f}"
print(f"{end - start:.6f} {other_cpu} {other_disk} {params[0]}")
EOF
DEVICE=$(stat -c '%Hd:%Ld' "$SCRATCH")

# One backup by backlab: prints its MB/s, its wall seconds, how much of the tree was resident
# when the run began (the lab's own cache_resident_pct), the other work's CPU share and disk MB
# while the lab's restic backup ran, the repository's scrypt N/r/p and the run's flags.
m_backlab() {
    local json=$SCRATCH/backlab.json measured
    measured=$(python3 "$SCRATCH/measure.py" "$DEVICE" "$json" "$SCRATCH/backlab.err" child -- \
        "$BL" run --source "$TREE" --target "$OUT" \
        --tool "restic:compression=$COMPRESSION,pack_size=$PACK_SIZE" --tests tool_backup \
        --restore-to "$SCRATCH" --no-follow-up --json) || return 1
    python3 - "$json" "$BYTES" "$measured" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
run = doc["runs"][0]
if run.get("status") != "done" or run.get("bytes") != int(sys.argv[2]):
    sys.exit(f"the run did not back up the whole tree: {run.get('status')} {run.get('error')}")
_, other_cpu, other_disk, kdf = sys.argv[3].split()
flags = ",".join(str(flag.get("code") if isinstance(flag, dict) else flag)
                 for flag in run.get("validity", {}).get("flags") or []) or "-"
print(f"{run['mb_per_s']:.1f} {run['seconds']:.3f} {run.get('cache_resident_pct') or 0:.1f} "
      f"{other_cpu} {other_disk} {kdf} {flags}")
EOF
}

# The same backup by hand: prints its MB/s, its wall seconds, the bytes left resident after the
# drop, the other work's CPU share and disk MB while restic ran and the repository's scrypt
# N/r/p.
m_hand() {
    local home=$SCRATCH/home repo_dir=$OUT/hand.tool password resident measured
    rm -rf "$home" "$repo_dir"
    mkdir -p "$home" "$repo_dir" || return 1
    password=$(python3 -c 'import secrets; print(f"{secrets.randbits(128):032x}")')
    local -a env=(env -i PATH="$PATH_FOR_TOOLS" HOME="$home" RESTIC_PASSWORD="$password"
        RESTIC_PROGRESS_FPS=4 RESTIC_CACHE_DIR="$home/cache")
    # Untimed, as the lab's: the repository, in a directory of its own beside the target's files.
    (cd "$home" && "${env[@]}" restic init --quiet --repo "$repo_dir/repo" --repository-version 2) \
        >/dev/null 2>"$SCRATCH/hand.err" || { tail -n 20 "$SCRATCH/hand.err" >&2; return 1; }
    resident=$(drop_tree)
    # env execs restic: the timed process is restic's own.
    measured=$(cd "$home" && python3 "$SCRATCH/measure.py" "$DEVICE" - "$SCRATCH/hand.err" self -- \
        "${env[@]}" restic backup --json --repo "$repo_dir/repo" --host backlab \
        --compression "$COMPRESSION" --pack-size "$PACK_SIZE" "$TREE") || return 1
    rm -rf "$home" "$repo_dir"
    python3 - "$BYTES" "$resident" "$measured" <<'EOF'
import sys
size, resident = int(sys.argv[1]), sys.argv[2]
wall, other_cpu, other_disk, kdf = sys.argv[3].split()
print(f"{size / float(wall) / 1e6:.1f} {float(wall):.3f} {resident} {other_cpu} {other_disk} {kdf}")
EOF
}

RESTIC_VERSION=$(restic version 2>/dev/null | head -n 1)
FS=$(df --output=fstype,source "$SCRATCH" 2>/dev/null | tail -n 1 | awk '{print $1 " on " $2}')
CORES=$(nproc 2>/dev/null || echo "?")
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
echo "tree: $BYTES bytes in $FILES files ($SIZE, profile typical, 2:1, seed 1) in $SCRATCH"
echo "restic: $RESTIC_VERSION; init --repository-version 2; backup --json --host backlab" \
    "--compression $COMPRESSION --pack-size $PACK_SIZE"
echo "repositories: new each backup, in the target directory $OUT ($FS); homes beside the lab's"
echo "cold cache: sync -f of the tree's file system, then posix_fadvise DONTNEED on every file" \
    "(both sides)"
echo "machine: $CORES cores; load average before the bench $LOAD_START; $REPEAT rounds," \
    "alternating; before each backup a wait until the CPU is at most $QUIET % busy" \
    "(at most $QUIET_WAIT s); a round with other work above $NOISY % of the CPU or" \
    "$NOISY_DISK MB on the disk is run again (at most $RETRY times)"
echo "columns: waited = s waited for a quiet machine first; o.cpu, o.disk = other work's share of" \
    "the CPU and MB on the bench's disk while restic's backup ran; scrypt = the repository's" \
    "key derivation N/r/p, calibrated by its restic init"
printf '%-6s %-8s %9s %8s %7s %6s %6s %7s %10s  %s\n' round side MB/s wall_s waited load1 \
    "o.cpu" "o.disk" "scrypt" "cold?"
# Whether other work stayed under NOISY % of the CPU and NOISY_DISK MB of the disk (a figure
# that could not be measured is not judged).
calm() {
    local other=$1 disk=$2
    [ "$other" = "?" ] || [ "$other" -le "$NOISY" ] || return 1
    [ "$disk" = "?" ] || [ "$disk" -le "$NOISY_DISK" ] || return 1
}
: >"$SCRATCH/figures"
for round in $(seq 1 "$REPEAT"); do
    if [ $((round % 2)) -eq 1 ]; then order="backlab hand"; else order="hand backlab"; fi
    for attempt in $(seq 0 "$RETRY"); do
        rows=() records=() quiet_round=1
        for side in $order; do
            waited=$(wait_quiet)
            load=$(load1)
            if [ "$side" = backlab ]; then
                line=$(m_backlab) || die "backlab's run failed in round $round"
                read -r mb wall resident other disk kdf flags <<<"$line"
                cold="${resident} % resident when the run began (lab's figure); flags: $flags"
            else
                line=$(m_hand) || die "the hand-timed backup failed in round $round"
                read -r mb wall resident other disk kdf <<<"$line"
                cold="$resident bytes resident after the drop (fincore)"
            fi
            calm "$other" "$disk" || quiet_round=0
            rows+=("$(printf '%-6s %-8s %9s %8s %7s %6s %5s%% %7s %10s  %s' "$round" "$side" \
                "$mb" "$wall" "$waited" "$load" "$other" "$disk" "$kdf" "$cold")")
            records+=("$side $mb $load $other $disk $kdf")
        done
        if [ "$quiet_round" -eq 0 ] && [ "$attempt" -lt "$RETRY" ]; then
            for row in "${rows[@]}"; do echo "$row  [noisy: round run again]"; done
            continue
        fi
        for row in "${rows[@]}"; do echo "$row"; done
        printf '%s\n' "${records[@]}" >>"$SCRATCH/figures"
        break
    done
done

python3 - "$SCRATCH/figures" "$CORES" "$NOISY" "$NOISY_DISK" <<'EOF'
import statistics, sys
figures = {"backlab": [], "hand": []}
calm = {"backlab": [], "hand": []}
kdfs = {"backlab": [], "hand": []}
loads, others, disks = [], [], []
noisy, noisy_disk = float(sys.argv[3]), float(sys.argv[4])
number = lambda word: float(word) if word != "?" else 0.0  # not measured: not judged
for line in open(sys.argv[1]):
    side, mb, load, other, disk, kdf = line.split()
    figures[side].append(float(mb))
    kdfs[side].append(kdf)
    calm[side].append(number(other) <= noisy and number(disk) <= noisy_disk)
    loads.append(float(load))
    others.append(number(other))
    disks.append(number(disk))
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
# A round where other work took more than NOISY % of the CPU, or moved more than NOISY_DISK MB
# on the bench's disk, while either side ran measured the other work as much as the backups:
# the rounds where neither side was disturbed, apart.
quiet = [pair for pair, x, y in zip(pairs, calm["backlab"], calm["hand"]) if x and y]
if len(quiet) < len(pairs):
    rule = f"other work at most {noisy:.0f} % of the CPU and {noisy_disk:.0f} MB on the disk"
    if quiet:
        print(f"quiet    the {len(quiet)} of {len(pairs)} rounds with {rule} on both sides: "
              f"paired ratio {statistics.median(quiet):.3f} ({', '.join(map(str, quiet))})")
    else:
        print(f"quiet    none of the {len(pairs)} rounds had {rule} on both sides")
# restic calibrates its key derivation at each init (scrypt's p is the step: about 0.08 s of
# the ~0.5 s each backup pays to open its repository), so two new repositories need not cost
# the same to open; the rounds whose two repositories got the same, apart.
same = [pair for pair, x, y in zip(pairs, kdfs["backlab"], kdfs["hand"]) if x == y != "?"]
if len(same) < len(pairs):
    print(f"scrypt   the {len(same)} of {len(pairs)} rounds whose two repositories got the same "
          f"key derivation: paired ratio "
          + (f"{statistics.median(same):.3f} ({', '.join(map(str, same))})" if same else "-"))
try:
    cores = int(sys.argv[2])
except ValueError:
    cores = 0
# restic alone keeps up to all the cores busy; other work beside it is what makes a run unfair.
told = (f"other work took up to {max(others):.0f} % of the CPU and moved up to "
        f"{max(disks):.0f} MB on the disk during a run, load average up to {max(loads):.2f} on "
        f"{cores} cores")
if not all(calm["backlab"] + calm["hand"]) or (cores and max(loads) > 1.5 * cores):
    print(f"machine  BUSY: {told}: the rounds are noisy")
else:
    print(f"machine  quiet: {told}")
EOF

[ "$CHECK" -gt 0 ] || exit 0
MARKS=$SCRATCH/marks
mkdir -p "$MARKS" || die "cannot create $MARKS"
# The same restic commands under `sh -c` (the definition's words joined with spaces): the
# backup notes the time, runs restic, notes the time once it has ended and exits with its
# status.
cat >"$SCRATCH/marked.json" <<JSON
[
  {
    "name": "restic-marked",
    "shape": "repository",
    "shell": true,
    "version": [["restic", "version"]],
    "env": {
      "RESTIC_PASSWORD": "{password}",
      "RESTIC_PROGRESS_FPS": "4",
      "RESTIC_CACHE_DIR": "{home}/cache"
    },
    "init": [["restic init --quiet --repo", "{repo}", "--repository-version 2"]],
    "backup": [
      ["date +%s.%N >$MARKS/start; restic backup --json --repo", "{repo}",
       "--host backlab --compression $COMPRESSION --pack-size $PACK_SIZE", "{source}",
       "; status=\$?; date +%s.%N >$MARKS/end; exit \$status"]
    ],
    "restore": [["restic restore latest --repo", "{repo}", "--target", "{restore}"]],
    "progress": "restic_json"
  }
]
JSON
echo "timing check: the lab's wall time against the command's own (before restic starts to after it ends)"
for run in $(seq 1 "$CHECK"); do
    rm -f "$MARKS/start" "$MARKS/end"
    "$BL" run --tools "$SCRATCH/marked.json" --source "$TREE" --target "$OUT" \
        --tool restic-marked --tests tool_backup --restore-to "$SCRATCH" \
        --no-follow-up --json >"$SCRATCH/marked-run.json" 2>"$SCRATCH/backlab.err" ||
        { tail -n 20 "$SCRATCH/backlab.err" >&2; die "the timing check's run failed"; }
    python3 - "$SCRATCH/marked-run.json" "$MARKS" <<'PY' || die "the timing check's marks are missing"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
if run.get("status") != "done":
    sys.exit(f"the timing check's run failed: {run.get('error')}")
start = float(open(sys.argv[2] + "/start").read())
end = float(open(sys.argv[2] + "/end").read())
own = end - start
print(f"check  {run['seconds']:.3f} s by the lab ({run['mb_per_s']:.1f} MB/s), {own:.3f} s by "
      f"the command's own clock ({run['bytes'] / own / 1e6:.1f} MB/s): "
      f"lab / own = {run['seconds'] / own:.4f}")
PY
done
