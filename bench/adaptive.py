#!/usr/bin/env python3
"""The adaptive search against the full sweep, on one lab, machine and data: for each case the
full sweep runs once (it has no seed), then the adaptive search SEEDS times with seeds 1..SEEDS.
Per search it prints the runs it needed, the point it chose, and whether that point is the full
sweep's best or within the full sweep's noise of it: the full sweep's best does not beat it by
the rule /compare uses (both repeated and valid, the gap wider than either's spread, Welch's
p < 0.05). Prints a SUMMARY line per case: same answer in N of SEEDS, the runs' median share of
the full sweep's, and whether the goal (>= 4 of 5 with <= 40 % of the runs) holds.

    adaptive.py --base http://127.0.0.1:PORT [--seeds 5] [--cases tuning,network,striped]
"""
import argparse
import json
import math
import statistics
import time
import urllib.request


def cases(duration):
    """The three sweeps: the tuning preset against a directory target, seed 000's network
    preset into two emulated LTO-4 drives, seed 001's block-size sweep on the striped volume."""
    return {
        "tuning": {
            "name": "Buffer × block tuning",
            "source": {"paths": ["demo"]},
            "target": {"kind": "dir", "path": "."},
            "tests": ["tape_write", "full_backup"],
            "params": {"buffers": 32, "block_size": "256K", "streams": 4, "cold_cache": True,
                       "fsync": True, "time_based": True, "duration_s": duration},
            "matrix": {"buffers": [8, 16, 32], "block_size": ["64K", "128K", "256K"],
                       "streams": [1, 2, 4]},
            "repeat": 3,
        },
        "network": {
            "name": "Network backup, 6–8 clients",
            "source": {"generated": {"size": "2G"}},
            "target": {"kind": "tape", "model": "lto-4", "drives": 2},
            "tests": ["network_backup"],
            "params": {"buffers": 32, "block_size": "256K", "streams": 2, "duration_s": duration},
            "matrix": {"clients": [6, 7, 8], "buffers": [16, 32], "block_size": ["128K", "256K"]},
            "repeat": 3,
        },
        "striped": {
            "name": "Striped volume model (seed 001)",
            "source": {"generated": {"size": "1G"}},
            "target": {"kind": "striped", "disks": 10, "disk_mb_s": 5, "stripe_unit": "64K",
                       "controllers": 3, "controller_mb_s": 20},
            "tests": ["tape_write"],
            "params": {"buffers": 8, "block_size": "256K", "streams": 1, "duration_s": duration},
            "matrix": {"block_size": ["64K", "128K", "256K", "320K", "512K", "640K", "1280K",
                                      "2560K"]},
            "repeat": 3,
        },
    }


def call(base, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data,
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def run(base, spec):
    """Submits a campaign, waits for its end, returns its JSON and wall time."""
    started = time.monotonic()
    campaign_id = call(base, "/api/campaigns", spec)["id"]
    while True:
        time.sleep(1)
        campaign = call(base, f"/api/campaigns/{campaign_id}")
        if campaign["status"] in ("done", "failed", "cancelled"):
            return campaign, time.monotonic() - started


def deciding(spec):
    tests = spec["tests"]
    return "full_backup" if "full_backup" in tests else tests[-1]


def key(params):
    return (params["buffers"], params["block_size"], params["streams"], params.get("clients"),
            params.get("part_size"), params.get("concurrency"))


def words(params):
    text = f"{params['buffers']} × {params['block_size'] >> 10}K, {params['streams']} stream(s)"
    if params.get("clients"):
        text += f", {params['clients']} clients"
    return text


def t_sf(t, df):
    """Student's t upper tail, through the regularized incomplete beta function."""
    x = df / (df + t * t)
    return 0.5 * betainc(df / 2.0, 0.5, x)


def betainc(a, b, x):
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * fraction(a, b, x) / a
    return 1.0 - front * fraction(b, a, 1.0 - x) / b


def fraction(a, b, x):
    """Lentz's continued fraction for the incomplete beta."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-12:
            break
    return h


def stands_out(better, other, alpha=0.05):
    """The lab's rule (noise::stands_out) on two points' `noise` sides. The bench passes both
    as valid: whether a choice is within noise is a question of the figures; validity is told
    beside it."""
    b, o = better["stat"], other["stat"]
    if o["median"] <= 0 or b["runs"] < 2 or o["runs"] < 2:
        return False
    if not (better["valid"] and other["valid"]):
        return False
    spread = lambda s: (s["max"] - s["min"]) / 2.0 / s["median"] * 100.0 if s["median"] > 0 else 0
    gap = (b["median"] - o["median"]) / o["median"] * 100.0
    if gap <= max(spread(b), spread(o)):
        return False
    va, vb = better["variance"] / b["runs"], other["variance"] / o["runs"]
    diff = abs(better["mean"] - other["mean"])
    if va + vb <= 0:
        return diff > 0
    t = diff / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va * va / (b["runs"] - 1) + vb * vb / (o["runs"] - 1))
    return min(1.0, 2.0 * t_sf(t, df)) < alpha


def best_point(campaign, test):
    points = [p for p in campaign["points"] if p["test"] == test and p["figure"]]
    marked = [p for p in points if p["best"]]
    return (marked or sorted(points, key=lambda p: -p["figure"]["mb_per_s"]))[0] if points else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--cases", default="tuning,network,striped")
    parser.add_argument("--duration", type=float, default=5.0)
    args = parser.parse_args()
    print(f"each run time-based, {args.duration:g} s (the presets' tuning duration); repeat 3; "
          f"budget: the lab's default, 40 % of the full sweep's runs, rounded down")
    all_met = True
    for name in args.cases.split(","):
        spec = cases(args.duration)[name]
        test = deciding(spec)
        full, full_s = run(args.base, spec)
        full_runs = len(full["runs"])
        by_setting = {key(p["params"]): p for p in full["points"]
                      if p["test"] == test and p["figure"]}
        reference = best_point(full, test)
        valid = sum(1 for p in by_setting.values() if p["figure"]["valid"])
        print(f"\n{name}: full sweep {full['id']}: {full_runs} runs in {full_s:.0f} s, "
              f"{len(by_setting)} points ({valid} valid); best {words(reference['params'])} at "
              f"{reference['figure']['mb_per_s']:.1f} MB/s"
              f"{' (stands out)' if reference['stands_out'] else ' (within noise of the runner-up)'}")
        same, shares = 0, []
        for seed in range(1, args.seeds + 1):
            searched = dict(spec, name=f"{spec['name']} (adaptive, seed {seed})")
            searched["matrix"] = dict(spec["matrix"], search={"strategy": "adaptive", "seed": seed})
            campaign, seconds = run(args.base, searched)
            search = campaign["search"]
            chosen = best_point(campaign, test)
            at_full = by_setting.get(key(chosen["params"])) if chosen else None
            if chosen is None or at_full is None:
                verdict = "no answer"
                agrees = False
            elif key(chosen["params"]) == key(reference["params"]):
                verdict = "the full sweep's best"
                agrees = True
            elif not stands_out(dict(reference["figure"]["noise"], valid=True),
                                dict(at_full["figure"]["noise"], valid=True)):
                verdict = (f"within the full sweep's noise of its best "
                           f"({at_full['figure']['mb_per_s']:.1f} vs "
                           f"{reference['figure']['mb_per_s']:.1f} MB/s there)")
                agrees = True
            else:
                verdict = (f"WORSE than the full sweep's best beyond noise "
                           f"({at_full['figure']['mb_per_s']:.1f} vs "
                           f"{reference['figure']['mb_per_s']:.1f} MB/s there)")
                agrees = False
            if at_full is not None and not (at_full["figure"]["valid"]
                                            and reference["figure"]["valid"]):
                verdict += " [a figure not valid in the full sweep: compared on its noise alone]"
            same += agrees
            share = search["runs"] / full_runs
            shares.append(share)
            print(f"  seed {seed}: {search['runs']:3d} runs ({share * 100:3.0f} %), "
                  f"{search['points_run']}/{search['points_total']} points, {seconds:.0f} s; chose "
                  f"{words(chosen['params']) if chosen else '-'}: {verdict}; stopped: "
                  f"{search['stopped']}")
        met = same >= math.ceil(args.seeds * 0.8) and max(shares) <= 0.4
        all_met &= met
        print(f"SUMMARY {name}: same answer in {same} of {args.seeds}; runs "
              f"{min(shares) * 100:.0f}–{max(shares) * 100:.0f} % of the full sweep's "
              f"(median {statistics.median(shares) * 100:.0f} %); goal "
              f"{'met' if met else 'NOT met'}")
    raise SystemExit(0 if all_met else 1)


if __name__ == "__main__":
    main()
