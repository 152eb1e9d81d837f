#!/usr/bin/env bash
# bench/fleet.sh - N lab hosts (backlab serve processes) on one PostgreSQL database, sharing
# one queue, for N = 2, 4, 8 (HOSTS="2 4 8"). Each round queues RUNS runs (default 1000) of a
# 0.2 s null-sink test on generated data, in campaigns of 20 runs spread over the hosts (each
# campaign names its host), while a killer SIGKILLs a random host every 2-5 s and restarts it
# a second later under the same name. It reports, per N:
#   - runs claimed per second and runs finished per second (from the database's own times),
#   - the claim statement's latency (median, p99, max; each lab logs it per claim),
#   - attempts: how many runs were claimed more than once (their host was killed),
#   - and the checks: every run done, once (one `done` per run in all the hosts' logs), on
#     its campaign's host; no run lost. Any failed check makes the script exit 1.
#
# Conditions, printed with the figures: one PostgreSQL on loopback (fsync off: the database's
# disk is not what is measured), every host on this machine with one lane and a lease of
# LEASE seconds (default 2), the runs time-based so each lasts 0.2 s whatever the CPU gives it.
#
# Environment: HOSTS (default "2 4 8"), RUNS (default 1000), LEASE (default 2), KILL (1 to
# kill hosts, default 1), BENCH_DIR (scratch parent, default /tmp). Needs Debian's postgresql,
# python3, cargo.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HOSTS=${HOSTS:-"2 4 8"}
RUNS=${RUNS:-1000}
LEASE=${LEASE:-2}
KILL=${KILL:-1}
PER_CAMPAIGN=20
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$PGBIN/initdb" ] || { echo "fleet.sh: PostgreSQL's server is missing (apt-get install postgresql)" >&2; exit 2; }
for tool in python3 cargo psql; do
    command -v "$tool" >/dev/null || { echo "fleet.sh: $tool is missing" >&2; exit 2; }
done

WORK=$(mktemp -d "${BENCH_DIR:-/tmp}/backlab-fleet.XXXXXX")
chmod 755 "$WORK"
PIDS=()
PG_PID=
cleanup() {
    for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    [ -n "$PG_PID" ] && kill -QUIT "$PG_PID" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# The server refuses root: run as the postgres user then (setpriv execs, keeping the pid).
AS_PG=()
[ "$(id -u)" = 0 ] && AS_PG=(setpriv --reuid=postgres --regid=postgres --init-groups --)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

(cd "$ROOT" && cargo build --release --quiet)
BIN="$ROOT/target/release/backlab"

mkdir -p "$WORK/pg"
[ "$(id -u)" = 0 ] && chown postgres:postgres "$WORK/pg"
"${AS_PG[@]}" "$PGBIN/initdb" --auth=trust --username=backlab --no-sync -D "$WORK/pg/data" >/dev/null
PG_PORT=$(free_port)
"${AS_PG[@]}" "$PGBIN/postgres" -D "$WORK/pg/data" -p "$PG_PORT" -c listen_addresses=127.0.0.1 \
    -c unix_socket_directories="$WORK/pg" -c fsync=off -c synchronous_commit=off \
    -c full_page_writes=off -c max_connections=200 >"$WORK/pg/server.log" 2>&1 &
PG_PID=$!
for _ in $(seq 100); do "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" && break; sleep 0.1; done
PSQL=(psql -h 127.0.0.1 -p "$PG_PORT" -U backlab -X -q -t -A)

# start_host ROUND NAME: starts (or restarts) a host; its log collects every start's lines.
start_host() {
    local round=$1 name=$2 dir="$WORK/$1/$2"
    mkdir -p "$dir"
    NO_COLOR=1 RUST_LOG=info,backlab::lab=debug "$BIN" serve --bind 127.0.0.1:0 --data-bind 127.0.0.1:0 \
        --db "postgres://backlab@127.0.0.1:$PG_PORT/$round" --data-dir "$dir/data" --demo-size 0 \
        --host-name "$name" --lease "$LEASE" --lanes 1 >"$dir/stdout" 2>>"$dir/serve.log" &
    echo $! >"$dir/pid"
    PIDS+=("$!")
    disown "$!"  # killed on purpose: no word from the shell when it dies
    for _ in $(seq 200); do grep -q "listening on" "$dir/stdout" 2>/dev/null && break; sleep 0.05; done
    sed -n 's/^backlab listening on //p' "$dir/stdout" | head -1 >"$dir/url"
}

echo "fleet.sh: $(nproc) cores; PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on loopback (fsync off); each host: 1 lane, lease ${LEASE} s; runs: null_sink, generated data, 0.2 s time-based; ${RUNS} runs a round in campaigns of ${PER_CAMPAIGN}; hosts killed: $([ "$KILL" = 1 ] && echo 'one at random every 2-5 s, restarted 1 s later' || echo none)"
printf '%-3s %6s %9s %9s %9s %9s %9s %7s %6s  %s\n' N runs "claimed/s" "done/s" "claim p50" "claim p99" "claim max" retried kills checks
FAILED=0
for n in $HOSTS; do
    round="fleet_$n"
    "${PSQL[@]}" -d postgres -c "CREATE DATABASE $round"
    names=()
    for i in $(seq 1 "$n"); do names+=("h$i"); start_host "$round" "h$i"; done
    url=$(cat "$WORK/$round/h1/url")
    campaigns=$(( (RUNS + PER_CAMPAIGN - 1) / PER_CAMPAIGN ))
    for c in $(seq 0 $((campaigns - 1))); do
        host=${names[$((c % n))]}
        curl -sf -o /dev/null -X POST "$url/api/campaigns" -H 'content-type: application/json' -d "{
            \"name\": \"fleet $c\", \"host\": \"$host\",
            \"source\": {\"generated\": {\"size\": \"64G\"}}, \"target\": {\"kind\": \"null\"},
            \"tests\": [\"null_sink\"], \"repeat\": $PER_CAMPAIGN,
            \"params\": {\"block_size\": \"256K\", \"size\": \"64G\", \"duration_s\": 0.2, \"time_based\": true}}" \
            || { echo "fleet.sh: cannot submit to $url" >&2; exit 1; }
    done
    kills=0
    while :; do
        left=$("${PSQL[@]}" -d "$round" -c "SELECT COUNT(*) FROM runs WHERE status NOT IN ('done','failed','cancelled')")
        [ "$left" = 0 ] && break
        if [ "$KILL" = 1 ]; then
            sleep "$(python3 -c 'import random; print(round(random.uniform(2,5),2))')"
            victim=${names[$((RANDOM % n))]}
            kill -9 "$(cat "$WORK/$round/$victim/pid")" 2>/dev/null && kills=$((kills + 1))
            sleep 1
            start_host "$round" "$victim"
        else
            sleep 1
        fi
    done
    "${PSQL[@]}" -d "$round" -F ' ' -c "SELECT r.id, r.status, r.attempts, COALESCE(r.host,''), c.host, r.started_ms, r.finished_ms FROM runs r JOIN campaigns c ON c.seq = r.campaign_seq" >"$WORK/$round/runs.txt"
    line=$(python3 - "$WORK/$round" "$RUNS" "$kills" "$n" <<'EOF'
import glob, re, sys, statistics
work, runs_wanted, kills, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rows = [l.split() for l in open(f"{work}/runs.txt") if l.strip()]
problems = []
claims, done_logged = [], {}
for log in glob.glob(f"{work}/*/serve.log"):
    for line in open(log, errors="replace"):
        if "run claimed" in line:
            m = re.search(r"claim_ms=([0-9.]+)", line)
            if m: claims.append(float(m.group(1)))
        elif "run finished" in line and re.search(r'status="?done\b', line):
            m = re.search(r"run_id=(\d+)", line)
            if m: done_logged[int(m.group(1))] = done_logged.get(int(m.group(1)), 0) + 1
if len(rows) < runs_wanted: problems.append(f"{len(rows)} runs stored, {runs_wanted} queued")
not_done = [r for r in rows if r[1] != "done"]
if not_done: problems.append(f"{len(not_done)} runs not done (lost or failed)")
twice = [rid for rid, count in done_logged.items() if count > 1]
if twice: problems.append(f"{len(twice)} runs finished twice")
unlogged = [r for r in rows if done_logged.get(int(r[0]), 0) == 0]
if unlogged: problems.append(f"{len(unlogged)} done runs no host logged as finished")
elsewhere = [r for r in rows if r[3] != r[4]]
if elsewhere: problems.append(f"{len(elsewhere)} runs ran on another host than their campaign's")
attempts = sum(int(r[2]) for r in rows)
retried = sum(1 for r in rows if int(r[2]) > 1)
starts = [int(r[5]) for r in rows if r[5] != ""]
ends = [int(r[6]) for r in rows if r[6] != ""]
window = (max(ends) - min(starts)) / 1000 if starts and ends else float("nan")
claims.sort()
def pct(p): return claims[min(len(claims) - 1, int(p * len(claims)))] if claims else float("nan")
checks = "ok" if not problems else "FAIL: " + "; ".join(problems)
print(f"{n:<3} {len(rows):>6} {attempts / window:>9.1f} {len(rows) / window:>9.1f} {pct(0.5):>7.2f}ms {pct(0.99):>7.2f}ms {claims[-1] if claims else 0:>7.2f}ms {retried:>7} {kills:>6}  {checks}")
EOF
)
    echo "$line"
    case "$line" in *FAIL*) FAILED=1 ;; esac
    for name in "${names[@]}"; do kill -TERM "$(cat "$WORK/$round/$name/pid")" 2>/dev/null || true; done
    sleep 1
done
exit "$FAILED"
