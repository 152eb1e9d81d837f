#!/usr/bin/env bash
# bench/relay-overhead.sh - what the lab's counting relay costs a tool: restic backs up the same
# tree into the same S3 server through backlab, once with its requests passing through the
# relay (the default) and once reaching the server directly (`--s3-uncounted`), in pairs in
# alternating order, and the script prints each side's median MB/s and their ratio (goal:
# within 3 %), and the relay's counts of one run beside what they add up to.
#
#   server   s3s-fs 0.14.1 (the server the tests use), standalone on a free loopback port, its
#            bucket on tmpfs when there is room (its own disk writes out of both figures);
#            installed into target/bench-tools by `cargo install` when missing
#   both     backlab run --tests tool_backup --tool restic into target kind s3 (the same store,
#            a fresh repository each run, removed after it), the tree dropped from the page
#            cache before each backup as every tool run does; the figure is the run's MB/s,
#            restic's backup timed from spawn to exit
#   differs  only whether restic's requests pass through the relay
#
# Environment: SIZE (the demo tree's size, default 256M), PAIRS (5), BENCH_DIR
# (target/bench-relay), BACKLAB (target/release/backlab, built when missing). Needs restic,
# cargo, python3, curl.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${SIZE:-256M}
PAIRS=${PAIRS:-5}
BENCH_DIR=${BENCH_DIR:-target/bench-relay}
BACKLAB=${BACKLAB:-target/release/backlab}
ACCESS_KEY=benchkey
SECRET_KEY=benchsecret-not-a-real-one
BUCKET=bench
for tool in restic cargo python3 curl; do
    command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 2; }
done
[ -x "$BACKLAB" ] || cargo build --release --quiet
S3SFS=target/bench-tools/bin/s3s-fs
if [ ! -x "$S3SFS" ]; then
    echo "installing s3s-fs 0.14.1 into target/bench-tools (cargo install, once)" >&2
    cargo install --quiet --root target/bench-tools s3s-fs --version 0.14.1 --features binary
fi

rm -rf "$BENCH_DIR"
mkdir -p "$BENCH_DIR/data"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
STORE_DIR=$(mktemp -d /dev/shm/backlab-relay.XXXXXX)
mkdir -p "$STORE_DIR/$BUCKET"
SERVER_PID=
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$STORE_DIR"
    return 0
}
trap cleanup EXIT

"$BACKLAB" dataset create "$BENCH_DIR/demo" --size "$SIZE" --seed 1 >/dev/null
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$S3SFS" --host 127.0.0.1 --port "$PORT" --access-key "$ACCESS_KEY" --secret-key "$SECRET_KEY" \
    "$STORE_DIR" >"$BENCH_DIR/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
    sleep 0.1
done

cat >"$BENCH_DIR/spec.json" <<EOF
{"name": "relay overhead", "source": {"paths": ["$BENCH_DIR/demo"]},
 "target": {"kind": "s3", "store": "lab", "prefix": "relay/"},
 "tests": ["tool_backup"], "tool": {"name": "restic"}}
EOF
echo "conditions: $(restic version | cut -d' ' -f1-2), $(nproc) cores, the $SIZE demo tree," \
    "s3s-fs 0.14.1 on loopback with its bucket on tmpfs, $PAIRS pairs in alternating order"

one() { # $1: counted | uncounted; prints the run's MB/s, keeps its JSON
    local flag=() out="$BENCH_DIR/$1-$2.json"
    [ "$1" = uncounted ] && flag=(--s3-uncounted)
    AWS_ACCESS_KEY_ID=$ACCESS_KEY AWS_SECRET_ACCESS_KEY=$SECRET_KEY \
        "$BACKLAB" run "$BENCH_DIR/spec.json" --s3-store "lab=http://127.0.0.1:$PORT/$BUCKET" \
        "${flag[@]}" --restore-to "$BENCH_DIR/data" --json >"$out" 2>"$BENCH_DIR/$1-$2.err"
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["runs"][0]["mb_per_s"])' "$out"
}

counted=() uncounted=()
for pair in $(seq 1 "$PAIRS"); do
    if [ $((pair % 2)) -eq 1 ]; then
        counted+=("$(one counted "$pair")"); uncounted+=("$(one uncounted "$pair")")
    else
        uncounted+=("$(one uncounted "$pair")"); counted+=("$(one counted "$pair")")
    fi
    echo "pair $pair: through the relay ${counted[-1]} MB/s, direct ${uncounted[-1]} MB/s"
done

python3 - "$BENCH_DIR/counted-1.json" "${counted[*]}" "${uncounted[*]}" <<'EOF'
import json, statistics, sys
counted = [float(v) for v in sys.argv[2].split()]
direct = [float(v) for v in sys.argv[3].split()]
ratios = [c / d for c, d in zip(counted, direct)]
ratio = statistics.median(ratios)
print(f"median through the relay {statistics.median(counted):.1f} MB/s, direct "
      f"{statistics.median(direct):.1f} MB/s; median of the pairs' ratios {ratio:.3f} "
      f"(range {min(ratios):.3f}-{max(ratios):.3f})")
tool = json.load(open(sys.argv[1]))["runs"][0]["tool"]
requests = tool["requests"]["operations"]
total = sum(op["requests"] for op in requests)
up = sum(op["bytes_up"] for op in requests)
each = ", ".join("%d %s" % (op["requests"], op["operation"]) for op in requests)
print(f"one run's requests through the relay: {total} ({each}); {up} bytes up, the "
      f"bucket held {tool.get('stored_bytes')} bytes after it")
print("SUMMARY:", "within 3 %" if abs(ratio - 1) <= 0.03 else "NOT within 3 %")
EOF
