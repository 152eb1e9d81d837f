#!/usr/bin/env bash
# bench/net-vs-iperf.sh - runs backlab's network backup beside iperf3 on the same paths, in one
# go, and prints the median of each figure and the ratio backlab / iperf3.
#
#   n1. a 1 Gbit/s link: an agent in a network namespace, joined to the lab by a veth pair
#       shaped with tc tbf (root and iproute2 needed; skipped otherwise, with the reason)
#       backlab network_backup, 1 agent x 2 streams -> null   vs   iperf3 -P 2, same direction
#   n2. loopback: backlab's own loopback clients, 1 client x 2 streams -> null
#       vs iperf3 -P 2 on 127.0.0.1 (both CPU-bound on a small machine: informational)
#
# Environment:
#   REPEAT     measurements per tool and workload (default 3); the tool order alternates.
#   SECONDS_N1 seconds per measurement on the link (default 8).
#   RATE       the link's rate for tc tbf (default 1gbit).
#   WORKLOADS  which workloads to run (default "n1 n2").
#
# Installs nothing. Needs iperf3, curl, cargo and python3. Exits 0 whatever the ratios are
# (the PASS/FAIL lines tell); non-zero only when a tool failed or is missing.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPEAT=${REPEAT:-3}
SECONDS_N1=${SECONDS_N1:-8}
RATE=${RATE:-1gbit}
WORKLOADS=${WORKLOADS:-n1 n2}

die() {
    echo "net-vs-iperf.sh: $*" >&2
    exit 2
}
note() { echo "$*" >&2; }
wants() { case " $WORKLOADS " in *" $1 "*) return 0 ;; esac; return 1; }

case $REPEAT in '' | *[!0-9]* | 0) die "REPEAT must be a positive integer (got '$REPEAT')" ;; esac
case $SECONDS_N1 in '' | *[!0-9]* | 0) die "SECONDS_N1 must be a positive integer" ;; esac
for w in $WORKLOADS; do
    case $w in n1 | n2) ;; *) die "WORKLOADS: unknown workload '$w' (n1, n2)" ;; esac
done
for tool in iperf3 curl cargo python3; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is not installed; this script installs nothing"
done

note "building backlab (cargo build --release --quiet) in $ROOT"
(cd "$ROOT" && cargo build --release --quiet) || die "cargo build --release failed"
BL=${CARGO_TARGET_DIR:-$ROOT/target}/release/backlab
[ -x "$BL" ] || die "backlab binary not found at $BL"

SCRATCH=$(mktemp -d /tmp/backlab-net-bench.XXXXXX)
NS=blbench$$
LAB_END=blb$$a
AGENT_END=blb$$b
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    wait 2>/dev/null
    ip netns del "$NS" 2>/dev/null
    ip link del "$LAB_END" 2>/dev/null
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

declare -A FIGURES
record() { FIGURES[$1]="${FIGURES[$1]:-} $2"; }
median() {
    printf '%s\n' $1 | sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {'d': d}))" "$@"; }

# iperf3 received rate in MB/s from its JSON.
iperf_mbps() { json "$1" "round(d['end']['sum_received']['bytes'] / d['end']['sum_received']['seconds'] / 1e6, 1)"; }

echo "== machine"
echo "nproc:   $(nproc)"
echo "kernel:  $(uname -srm)"
echo "iperf3:  $(iperf3 --version 2>/dev/null | head -n 1)"
echo "backlab: $("$BL" --version)"
echo "repeats: $REPEAT (median reported, tool order alternating)"
echo

# --- n1: a shaped link between namespaces --------------------------------------------------
N1_SKIP=
if wants n1; then
    if [ "$(id -u)" != 0 ]; then
        N1_SKIP="not root"
    elif ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
        N1_SKIP="iproute2 (ip, tc) is not installed"
    elif ! ip netns add "$NS" 2>"$SCRATCH/netns.err"; then
        N1_SKIP="cannot create a network namespace: $(cat "$SCRATCH/netns.err")"
    fi
    if [ -n "$N1_SKIP" ]; then
        echo "n1 skipped: $N1_SKIP"
    else
        ip link add "$LAB_END" type veth peer name "$AGENT_END" &&
            ip link set "$AGENT_END" netns "$NS" &&
            ip addr add 10.232.0.1/24 dev "$LAB_END" && ip link set "$LAB_END" up &&
            ip netns exec "$NS" ip addr add 10.232.0.2/24 dev "$AGENT_END" &&
            ip netns exec "$NS" ip link set "$AGENT_END" up &&
            ip netns exec "$NS" ip link set lo up &&
            ip netns exec "$NS" tc qdisc add dev "$AGENT_END" root tbf rate "$RATE" burst 256kb latency 100ms ||
            die "cannot set up the veth pair and its tbf qdisc"
        TOKEN=bench-$$
        "$BL" serve --bind 10.232.0.1:18480 --data-bind 10.232.0.1:18481 --token "$TOKEN" \
            --db "$SCRATCH/lab.db" --data-dir "$SCRATCH/data" --demo-size 0 \
            >"$SCRATCH/serve.out" 2>"$SCRATCH/serve.log" &
        PIDS+=($!)
        for _ in $(seq 50); do curl -sf http://10.232.0.1:18480/healthz >/dev/null && break; sleep 0.1; done
        ip netns exec "$NS" "$BL" agent --server http://10.232.0.1:18480 --token "$TOKEN" --name far \
            >"$SCRATCH/agent.log" 2>&1 &
        PIDS+=($!)
        for _ in $(seq 100); do
            curl -s http://10.232.0.1:18480/api/agents | grep -q '"connected":true' && break
            sleep 0.1
        done
        # About SECONDS_N1 seconds at the link's rate: 1 Gbit/s carries ~119 MB/s of payload.
        SIZE_MB=$((SECONDS_N1 * 119))
        echo "== n1. $RATE tbf link between namespaces, 1 client x 2 streams, ~${SECONDS_N1} s each"
        for ((rep = 0; rep < REPEAT; rep++)); do
            order="backlab iperf3"
            [ $((rep % 2)) -eq 1 ] && order="iperf3 backlab"
            for tool in $order; do
                case $tool in
                    backlab)
                        id=$(curl -s -H "Authorization: Bearer $TOKEN" -X POST http://10.232.0.1:18480/api/campaigns \
                            -d "{\"source\":{\"agents\":[\"far\"]},\"target\":{\"kind\":\"null\"},\"tests\":[\"network_backup\"],\"params\":{\"streams\":2,\"size\":\"${SIZE_MB}M\"}}" |
                            python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])') ||
                            die "cannot submit the campaign; lab log: $SCRATCH/serve.log"
                        for _ in $(seq 600); do
                            status=$(curl -s "http://10.232.0.1:18480/api/campaigns/$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')
                            case $status in done | failed | cancelled) break ;; esac
                            sleep 0.2
                        done
                        curl -s "http://10.232.0.1:18480/api/campaigns/$id/bottleneck" >"$SCRATCH/n1.json"
                        [ "$(json "$SCRATCH/n1.json" "d['runs'][0]['status']")" = done ] ||
                            die "the backlab run failed: $(json "$SCRATCH/n1.json" "d['runs'][0]['error']")"
                        value=$(json "$SCRATCH/n1.json" "d['runs'][0]['mb_per_s']")
                        N1_VERDICT=$(json "$SCRATCH/n1.json" "d['bottleneck']['verdict']")
                        ;;
                    iperf3)
                        iperf3 -s -1 -B 10.232.0.1 -p 18482 >/dev/null 2>&1 &
                        server=$!
                        sleep 0.3
                        ip netns exec "$NS" iperf3 -c 10.232.0.1 -p 18482 -P 2 -t "$SECONDS_N1" -J >"$SCRATCH/iperf.json" ||
                            die "iperf3 failed: $(head -c 300 "$SCRATCH/iperf.json")"
                        wait "$server" 2>/dev/null
                        value=$(iperf_mbps "$SCRATCH/iperf.json")
                        ;;
                esac
                record "n1.$tool" "$value"
                note "   [n1 rep $((rep + 1))/$REPEAT] $tool $value MB/s"
            done
        done
        echo "backlab's verdict: $N1_VERDICT"
    fi
fi

# --- n2: loopback ----------------------------------------------------------------------------
if wants n2; then
    echo "== n2. loopback, 1 client x 2 streams, 8 GiB each"
    for ((rep = 0; rep < REPEAT; rep++)); do
        order="backlab iperf3"
        [ $((rep % 2)) -eq 1 ] && order="iperf3 backlab"
        for tool in $order; do
            case $tool in
                backlab)
                    "$BL" run --generated 8G --tests network_backup --clients 1 --streams 2 --target null \
                        --duration 600 --json >"$SCRATCH/n2.json" 2>"$SCRATCH/n2.log" ||
                        die "backlab run failed: $(tail -n 3 "$SCRATCH/n2.log")"
                    value=$(json "$SCRATCH/n2.json" "d['runs'][0]['mb_per_s']")
                    ;;
                iperf3)
                    iperf3 -s -1 -B 127.0.0.1 -p 18483 >/dev/null 2>&1 &
                    server=$!
                    sleep 0.3
                    iperf3 -c 127.0.0.1 -p 18483 -P 2 -n 8G -J >"$SCRATCH/iperf.json" ||
                        die "iperf3 failed"
                    wait "$server" 2>/dev/null
                    value=$(iperf_mbps "$SCRATCH/iperf.json")
                    ;;
            esac
            record "n2.$tool" "$value"
            note "   [n2 rep $((rep + 1))/$REPEAT] $tool $value MB/s"
        done
    done
fi

echo
echo "== results (median of $REPEAT)"
printf '%-44s %10s %10s %8s  %s\n' workload backlab iperf3 ratio goal
for w in n1 n2; do
    b=$(median "${FIGURES[$w.backlab]:-}")
    i=$(median "${FIGURES[$w.iperf3]:-}")
    [ -n "$b" ] && [ -n "$i" ] || continue
    ratio=$(awk -v b="$b" -v i="$i" 'BEGIN { printf "%.2f", b / i }')
    case $w in
        n1) label="$RATE link, 1 agent x 2 streams (MB/s)" goal=0.95 ;;
        n2) label="loopback, 1 client x 2 streams (MB/s)" goal=- ;;
    esac
    printf '%-44s %10s %10s %8s  %s\n' "$label" "$b" "$i" "$ratio" "$goal"
    if [ "$goal" != - ]; then
        verdict=$(awk -v r="$ratio" -v g="$goal" 'BEGIN { print (r >= g) ? "PASS" : "FAIL" }')
        echo "$verdict  $label: backlab/iperf3 = $ratio, goal >= $goal"
    fi
done
echo
echo "raw figures (MB/s, one per repeat):"
for key in n1.backlab n1.iperf3 n2.backlab n2.iperf3; do
    [ -n "${FIGURES[$key]:-}" ] && echo "  $key ${FIGURES[$key]}"
done
[ -n "$N1_SKIP" ] && echo "n1 skipped: $N1_SKIP"
exit 0
