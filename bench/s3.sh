#!/usr/bin/env bash
# bench/s3.sh - uploads the same file to the same S3 server with rclone and with backlab, at the
# same part size and parts in flight, several times in alternating order, and prints the median
# of each and the ratio backlab / rclone (goal: at least 0.95).
#
#   server   s3s-fs 0.14.1 (the server the tests use), standalone on a free loopback port, its
#            bucket in STORE_DIR; installed into target/bench-tools by `cargo install` when missing
#   rclone   rclone copyto FILE store:bucket/key, multipart (--s3-upload-cutoff under the file's
#            size), --s3-chunk-size PART, --s3-upload-concurrency CONCURRENCY, no MD5 of the file
#            (--s3-disable-checksum: backlab computes none either), no HEAD or bucket check
#            before the upload; its rate is the file's bytes over rclone's own "Elapsed time"
#   backlab  backlab run --tests full_backup of the file into target kind s3 with one stream,
#            part_size PART, concurrency CONCURRENCY, object_size the file's size (one object,
#            as rclone makes); its rate is the run's whole-run MB/s, the clock running from the
#            first read to the completed upload
#   both     read the file from the page cache (it is read once before each upload), write one
#            object, and the object is deleted after every upload
#   differs  rclone signs each part's payload over plain HTTP (SHA-256 of the part, as SigV4 asks
#            without TLS) and sends its Content-MD5, which the server then checks; backlab's
#            presigned requests carry an unsigned payload and no MD5. rclone 1.60 has no flag
#            that turns either off for multipart parts, so on a 2-core machine that hashing,
#            beside the server on the same cores, is most of the gap (see --dump headers)
#
# Environment:
#   SIZE         bytes in the file (default 1G; a number with K, M or G)
#   PART         part size (default 16M)
#   CONCURRENCY  parts in flight (default 8)
#   REPEAT       uploads per tool (default 5)
#   BENCH_DIR    where the file goes (default /var/tmp/backlab-bench)
#   STORE_DIR    where the server keeps the bucket (default a directory in /dev/shm when there is
#                room, else in BENCH_DIR): on tmpfs the server's own disk writes stay out of both
#                figures
#
# Needs cargo, rclone (Debian package), python3, curl. Exits 0 whatever the ratio is (the
# PASS/FAIL line tells); non-zero only when a tool failed or is missing.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SIZE=${SIZE:-1G}
PART=${PART:-16M}
CONCURRENCY=${CONCURRENCY:-8}
REPEAT=${REPEAT:-5}
BENCH_DIR=${BENCH_DIR:-/var/tmp/backlab-bench}
ACCESS_KEY=benchkey
SECRET_KEY=benchsecret-not-a-real-one
BUCKET=bench

die() {
    echo "s3.sh: $*" >&2
    exit 2
}
note() { echo "$*" >&2; }

bytes_of() {
    case $1 in
        *[Gg]) echo $((${1%?} * 1024 * 1024 * 1024)) ;;
        *[Mm]) echo $((${1%?} * 1024 * 1024)) ;;
        *[Kk]) echo $((${1%?} * 1024)) ;;
        *[!0-9]* | '') return 1 ;;
        *) echo "$1" ;;
    esac
}
SIZE_BYTES=$(bytes_of "$SIZE") || die "SIZE: '$SIZE' is not a size (write e.g. 1G)"
PART_BYTES=$(bytes_of "$PART") || die "PART: '$PART' is not a size (write e.g. 16M)"
case $CONCURRENCY in '' | *[!0-9]* | 0) die "CONCURRENCY must be a positive integer" ;; esac
case $REPEAT in '' | *[!0-9]* | 0) die "REPEAT must be a positive integer" ;; esac
[ "$PART_BYTES" -lt "$SIZE_BYTES" ] || die "PART ($PART) must be smaller than SIZE ($SIZE): both tools upload in parts"

for tool in cargo rclone python3 curl; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is not installed (rclone: apt-get install rclone)"
done

# --- build and install -------------------------------------------------------------------------
note "building backlab (cargo build --release --quiet) in $ROOT"
(cd "$ROOT" && cargo build --release --quiet) || die "cargo build --release failed"
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
case $TARGET_DIR in /*) ;; *) TARGET_DIR=$ROOT/$TARGET_DIR ;; esac
BL=$TARGET_DIR/release/backlab
[ -x "$BL" ] || die "backlab binary not found at $BL"
TOOLS=$TARGET_DIR/bench-tools
S3SFS=$TOOLS/bin/s3s-fs
if [ ! -x "$S3SFS" ]; then
    note "installing s3s-fs 0.14.1 into $TOOLS (cargo install, once)"
    cargo install --quiet --root "$TOOLS" s3s-fs --version 0.14.1 --features binary ||
        die "cargo install s3s-fs failed"
fi

# --- scratch -----------------------------------------------------------------------------------
mkdir -p "$BENCH_DIR" || die "cannot create $BENCH_DIR"
SCRATCH=$(mktemp -d "$BENCH_DIR/s3.XXXXXX") || die "cannot create a scratch directory"
if [ -z "${STORE_DIR:-}" ]; then
    SHM_KB=$(df -P -k /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')
    if [ -n "$SHM_KB" ] && [ "$SHM_KB" -gt $((3 * SIZE_BYTES / 1024)) ]; then
        STORE_DIR=$(mktemp -d /dev/shm/backlab-s3.XXXXXX)
    else
        STORE_DIR=$SCRATCH/store
    fi
fi
mkdir -p "$STORE_DIR/$BUCKET" || die "cannot create $STORE_DIR/$BUCKET"
SERVER_PID=
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$SCRATCH" "$STORE_DIR"
    rmdir "$BENCH_DIR" 2>/dev/null
    return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

FILE=$SCRATCH/data.bin
note "writing $SIZE of random data to $FILE"
head -c "$SIZE_BYTES" /dev/urandom >"$FILE" || die "cannot write $FILE"

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$S3SFS" --host 127.0.0.1 --port "$PORT" --access-key "$ACCESS_KEY" --secret-key "$SECRET_KEY" \
    "$STORE_DIR" >"$SCRATCH/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
    sleep 0.1
done
curl -s -o /dev/null "http://127.0.0.1:$PORT/" || die "s3s-fs did not start: $(tail -n 5 "$SCRATCH/server.log")"

# rclone reads the remote from the environment; AWS_CA_BUNDLE (set on some machines) would make
# it refuse the plain-HTTP endpoint.
rclone_env() {
    env -u AWS_CA_BUNDLE \
        RCLONE_CONFIG_STORE_TYPE=s3 RCLONE_CONFIG_STORE_PROVIDER=Other \
        RCLONE_CONFIG_STORE_ENDPOINT="http://127.0.0.1:$PORT" \
        RCLONE_CONFIG_STORE_ACCESS_KEY_ID="$ACCESS_KEY" \
        RCLONE_CONFIG_STORE_SECRET_ACCESS_KEY="$SECRET_KEY" \
        RCLONE_CONFIG_STORE_FORCE_PATH_STYLE=true \
        "$@"
}

warm() { cat "$FILE" >/dev/null; }

# --- measurements: each prints MB/s or fails ---------------------------------------------------
m_rclone() {
    local log=$SCRATCH/rclone.log elapsed
    warm
    rclone_env rclone copyto "$FILE" "store:$BUCKET/rclone/data.bin" \
        --s3-chunk-size "$PART" --s3-upload-concurrency "$CONCURRENCY" \
        --s3-upload-cutoff "$PART" --s3-disable-checksum --s3-no-check-bucket --s3-no-head \
        --transfers 1 --checkers 1 --stats 1h -v >"$log" 2>&1 ||
        { tail -n 20 "$log" >&2; return 1; }
    # rclone's own clock, in the summary -v prints at the end: "Elapsed time:  4.1s" (or 1m2.3s).
    elapsed=$(sed -n 's/.*Elapsed time: *\([0-9hms.]*\).*/\1/p' "$log" | tail -n 1)
    rclone_env rclone deletefile "store:$BUCKET/rclone/data.bin" >/dev/null 2>&1 ||
        { echo "rclone could not delete its object" >&2; return 1; }
    python3 - "$SIZE_BYTES" "$elapsed" <<'EOF'
import re, sys
size, text = int(sys.argv[1]), sys.argv[2]
seconds = 0.0
for number, unit in re.findall(r"([0-9.]+)([hms])", text):
    seconds += float(number) * {"h": 3600, "m": 60, "s": 1}[unit]
if seconds <= 0:
    sys.exit("rclone printed no elapsed time")
print(f"{size / seconds / 1e6:.1f}")
EOF
}

m_backlab() {
    local out=$SCRATCH/backlab.json log=$SCRATCH/backlab.log
    warm
    env AWS_ACCESS_KEY_ID="$ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$SECRET_KEY" \
        "$BL" run --source "$FILE" \
        --target "s3:store=bench,part_size=$PART,concurrency=$CONCURRENCY,object_size=$SIZE_BYTES" \
        --s3-store "bench=http://127.0.0.1:$PORT/$BUCKET" \
        --tests full_backup --streams 1 --block-size 1M --buffers 32 \
        --cold-cache false --time-based false --duration 600 --json >"$out" 2>"$log" ||
        { tail -n 20 "$log" >&2; return 1; }
    python3 - "$out" "$SIZE_BYTES" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
run = report["runs"][0]
if run["status"] != "done":
    sys.exit(f"backlab's run ended {run['status']}: {run.get('error')}")
if run["bytes"] != int(sys.argv[2]):
    sys.exit(f"backlab moved {run['bytes']} bytes, not {sys.argv[2]}")
s3 = run.get("s3") or {}
print(f"{run['mb_per_s']:.1f} {s3.get('objects')} {s3.get('part_uploads', {}).get('requests')}")
EOF
}

# --- the rounds --------------------------------------------------------------------------------
RCLONE=() BACKLAB=()
for round in $(seq 1 "$REPEAT"); do
    if [ $((round % 2)) = 1 ]; then order="backlab rclone"; else order="rclone backlab"; fi
    for tool in $order; do
        if [ "$tool" = rclone ]; then
            figure=$(m_rclone) || die "rclone's upload failed (round $round)"
            RCLONE+=("$figure")
            note "round $round: rclone  $figure MB/s"
        else
            line=$(m_backlab) || die "backlab's upload failed (round $round)"
            read -r figure objects parts <<<"$line"
            BACKLAB+=("$figure")
            note "round $round: backlab $figure MB/s ($objects object, $parts parts)"
        fi
    done
    left=$(find "$STORE_DIR/$BUCKET" -type f | wc -l)
    [ "$left" = 0 ] || die "round $round left $left files in the bucket"
done

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.1f", v[(NR + 1) / 2]; else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
BL_MEDIAN=$(median "${BACKLAB[@]}")
RC_MEDIAN=$(median "${RCLONE[@]}")
RATIO=$(awk -v a="$BL_MEDIAN" -v b="$RC_MEDIAN" 'BEGIN { printf "%.2f", a / b }')
STORE_FS=$(df -T -P "$STORE_DIR" | awk 'NR == 2 {print $2}')

echo "== upload of $SIZE ($SIZE_BYTES bytes) to s3s-fs 0.14.1 on 127.0.0.1 (bucket on $STORE_FS), $REPEAT rounds, alternating"
echo "   both:    one object, multipart, $PART parts, $CONCURRENCY in flight, no MD5 of the data, file read from the page cache"
echo "   rclone:  $(rclone version | head -n 1), copyto --s3-chunk-size $PART --s3-upload-concurrency $CONCURRENCY, rate = bytes / rclone's Elapsed time;"
echo "            it hashes every part (SHA-256 payload signature, Content-MD5 the server checks)"
echo "   backlab: full_backup, 1 stream, 32 x 1 MiB ring, object_size $SIZE, rate = whole-run MB/s (first read to completed upload);"
echo "            presigned parts, unsigned payload, no MD5"
echo "   machine: $(nproc) cores; the server shares them with the client"
echo "   rclone  MB/s: ${RCLONE[*]}  median $RC_MEDIAN"
echo "   backlab MB/s: ${BACKLAB[*]}  median $BL_MEDIAN"
if awk -v r="$RATIO" 'BEGIN { exit !(r >= 0.95) }'; then
    echo "PASS backlab / rclone = $RATIO (goal >= 0.95)"
else
    echo "FAIL backlab / rclone = $RATIO (goal >= 0.95)"
fi
