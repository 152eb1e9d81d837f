#!/usr/bin/env bash
# bench/life-forecast.sh - a restic life forecast from a ladder of small-file trees, checked
# against a real life at twice the ladder's largest rung (a size not on the ladder): the
# retention's (restic forget --prune) peak memory and the nightly backup's seconds, forecast and
# measured, and their ratio (goal: within 25 %).
#
#   ladder   backlab run LADDER: restic, a life of NIGHTS nights (retention every 2
#            keeping 1, checks after the last) on each of RUNGS generated trees of FROM, 2×FROM,
#            … bytes in files spread around MEAN (lognormal, σ 1), and a forecast at twice the
#            largest rung (its bytes, and its bytes ÷ MEAN files); the forecast's lines are
#            read from the printed report
#   check    backlab dataset create CHECK --size 2×largest --mean-file-size MEAN (the same
#            generator the ladder uses, another seed), then backlab run CHECK: the same
#            life on that tree; measured: the largest retention's peak memory (restic's
#            process tree, sampled every 250 ms, and the largest stage's own peak) and the mean
#            of the backups after the first night
#   both     the same machine, one after the other, the lab's data dir and the target in
#            BENCH_DIR; the repository lives beside the target's files; every tree is dropped
#            from the page cache before each backup, as every life does
#
# Environment: MEAN (4K), FROM (50M), RUNGS (4), NIGHTS (4), BENCH_DIR (target/bench-life),
# BACKLAB (target/release/backlab, built when missing), REUSE_CHECK=1 (keep the check's result
# from an earlier run in BENCH_DIR, with the same MEAN, FROM, RUNGS and NIGHTS, and run only the
# ladder). Needs restic, python3.
set -euo pipefail
cd "$(dirname "$0")/.."

MEAN=${MEAN:-4K}
FROM=${FROM:-50M}
RUNGS=${RUNGS:-4}
NIGHTS=${NIGHTS:-4}
BENCH_DIR=${BENCH_DIR:-target/bench-life}
BACKLAB=${BACKLAB:-target/release/backlab}
[ -x "$BACKLAB" ] || cargo build --release --quiet
command -v restic >/dev/null || { echo "needs restic" >&2; exit 1; }

if [ "${REUSE_CHECK:-0}" = 1 ] && [ -s "$BENCH_DIR/check.out" ]; then
  rm -rf "$BENCH_DIR/target" "$BENCH_DIR/data" "$BENCH_DIR/ladder.txt"
else
  rm -rf "$BENCH_DIR"
  REUSE_CHECK=0
fi
mkdir -p "$BENCH_DIR/target" "$BENCH_DIR/data"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)

bytes() { python3 -c "
import sys
units = {'': 1, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
t = sys.argv[1].strip().upper()
print(int(t[:-1]) * units[t[-1]] if t[-1] in units else int(t))" "$1"; }
from=$(bytes "$FROM")
mean=$(bytes "$MEAN")
largest=$((from << (RUNGS - 1)))
check=$((largest * 2))
files=$((check / mean))

life='{"nights": '"$NIGHTS"', "retention_every": 2, "keep": 1}'
cat >"$BENCH_DIR/ladder.json" <<EOF
{"name": "forecast ladder", "source": {"generated": {"size": "1M"}},
 "target": {"kind": "dir", "path": "$BENCH_DIR/target"},
 "tool": {"name": "restic"}, "life": $life,
 "forecast": {"size": "$check", "files": $files, "keep": 1, "ladder_from": "$from",
              "rungs": $RUNGS}}
EOF
echo "conditions: restic $(restic version | cut -d' ' -f2), $(nproc) cores, ladder of $RUNGS" \
  "rungs from $FROM in files of $MEAN on average, $NIGHTS nights each (retention every 2" \
  "keeping 1), forecast at $check bytes in $files files; data in $BENCH_DIR"
started=$(date +%s)
"$BACKLAB" run "$BENCH_DIR/ladder.json" --restore-to "$BENCH_DIR/data" \
  >"$BENCH_DIR/ladder.txt" 2>"$BENCH_DIR/ladder.err"
echo "ladder: $(( $(date +%s) - started )) s"

if [ "$REUSE_CHECK" = 1 ]; then
  echo "check: reused from $BENCH_DIR/check.out"
else
"$BACKLAB" dataset create "$BENCH_DIR/check" --size "$check" --mean-file-size "$MEAN" \
  --seed 7 >/dev/null
cat >"$BENCH_DIR/check.json" <<EOF
{"name": "forecast check", "source": {"paths": ["$BENCH_DIR/check"]},
 "target": {"kind": "dir", "path": "$BENCH_DIR/target"},
 "tool": {"name": "restic"}, "tests": ["tool_life"], "life": $life}
EOF
started=$(date +%s)
"$BACKLAB" run "$BENCH_DIR/check.json" --restore-to "$BENCH_DIR/data" --json \
  >"$BENCH_DIR/check.out" 2>"$BENCH_DIR/check.err"
echo "check: $(( $(date +%s) - started )) s"
rm -rf "$BENCH_DIR/check"
fi

python3 - "$BENCH_DIR/ladder.txt" "$BENCH_DIR/check.out" <<'EOF'
import json, re, sys

units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "s": 1,
         "min": 60}

def amount(text):
    number, unit = text.strip().split(" ")[:2]
    return float(number.replace(" ", "")) * units[unit]

report = open(sys.argv[1]).read()
def forecast(figure):
    line = next(l for l in report.splitlines() if l.strip().startswith(figure + ":"))
    answer = line.split(":", 1)[1].strip()
    match = re.match(r"about ([\d.]+ \w+) \(([\d.]+ \w+)–([\d.]+ \w+)\)", answer)
    if not match:
        return None, answer
    return tuple(amount(g) for g in match.groups()), answer

result = json.load(open(sys.argv[2]))
life = result["runs"][0]["tool"]["life"]
commands = [c for n in life["nights"] for c in n["commands"]]
measured = {
    "retention (prune), peak memory": max(
        c["peak_rss_bytes"] for c in commands if c["command"] == "retention"),
    "nightly backup, seconds": sum(
        n["commands"][0]["seconds"] for n in life["nights"][1:]) / (len(life["nights"]) - 1),
}
# Beside the goal, for the record: the other figures a real life measured once.
restores = {restore["which"]: restore["seconds"] for restore in life["restores"]}
also = {
    "first (full) backup, seconds": life["nights"][0]["commands"][0]["seconds"],
    "full restore, seconds": restores.get("latest"),
    "restore of one file, seconds": restores.get("one file"),
}
ok = True
for figure, real in also.items():
    got, answer = forecast(figure)
    if got is None or real is None:
        print(f"(also) {figure}: {answer}, measured {real}")
    else:
        print(f"(also) {figure}: forecast {got[0]:.2f} s, measured {real:.2f} s, "
              f"forecast ÷ measured {got[0] / real:.2f}")
for figure, real in measured.items():
    got, answer = forecast(figure)
    if got is None:
        print(f"{figure}: no number forecast ({answer})")
        ok = False
        continue
    value, low, high = got
    ratio = value / real
    within = abs(ratio - 1) <= 0.25
    ok &= within
    unit = "MiB" if "memory" in figure else "s"
    scale = 1 << 20 if unit == "MiB" else 1
    print(f"{figure}: forecast {value / scale:.1f} {unit} (range {low / scale:.1f}–"
          f"{high / scale:.1f}), measured {real / scale:.1f} {unit}, forecast ÷ measured "
          f"{ratio:.2f} {'within' if within else 'OUTSIDE'} 25 %")
for line in report.splitlines():
    if line.startswith("Forecast for") or "would need" in line:
        print(line.strip())
print("SUMMARY:", "every figure within 25 %" if ok else "a figure missed")
sys.exit(0 if ok else 1)
EOF
