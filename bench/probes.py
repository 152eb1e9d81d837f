#!/usr/bin/env python3
"""The targeted probes of bench/hostile.sh against one running lab: runs that must stop, source
files swapped during a run, agent registrations by the thousand, and the smaller refusals.
Prints one line per probe and a SUMMARY line of counts; exits non-zero when a probe failed.

    probes.py --base http://127.0.0.1:PORT --data-port PORT --pid PID --data-dir DIR
"""
import argparse
import json
import os
import shutil
import socket
import struct
import subprocess
import time
import urllib.error
import urllib.request

failures = []
counts = {}


def note(name, ok, detail):
    counts[name] = counts.get(name, 0) + 1
    if not ok:
        failures.append(name)
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")


def request(base, method, path, body=None, headers=None):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    started = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=60) as answer:
            text = answer.read()
            status = answer.status
    except urllib.error.HTTPError as error:
        text = error.read()
        status = error.code
    took = time.monotonic() - started
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = text.decode(errors="replace")
    return status, parsed, took


def wait_status(base, cid, wanted, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _, campaign, _ = request(base, "GET", f"/api/campaigns/{cid}")
        if isinstance(campaign, dict) and campaign.get("status") in wanted:
            return campaign
        time.sleep(0.05)
    return None


def raw_http(base, head):
    host, port = base.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.encode() + b"Connection: close\r\n\r\n")
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return int(b"".join(chunks).split(b" ")[1])


def probe_stops(base, data_dir):
    """A 1e-9 MB/s what-if is refused; at the floor, a cancel of each reading kind stops it."""
    spec = {"source": {"paths": ["demo"]}, "target": {"kind": "null"}, "tests": ["read_single"],
            "params": {"duration_s": 2, "source_rate_mb_s": 1e-9}}
    status, answer, _ = request(base, "POST", "/api/campaigns", spec)
    note("rate 1e-9 refused", status == 422 and "params.source_rate_mb_s" in answer.get("fields", {}),
         f"{status}")
    os.makedirs(os.path.join(data_dir, "probe-target"), exist_ok=True)
    for test in ["read_single", "read_parallel", "null_sink", "full_backup"]:
        spec = {"source": {"paths": ["demo"]},
                "target": {"kind": "dir", "path": "probe-target"},
                "tests": [test],
                "params": {"duration_s": 60, "time_based": True, "source_rate_mb_s": 0.1,
                           "block_size": "1M", "buffers": 4}}
        status, answer, _ = request(base, "POST", "/api/campaigns", spec)
        if status != 201:
            note(f"cancel {test}", False, f"not queued: {status} {answer}")
            continue
        cid = answer["id"]
        wait_status(base, cid, ["running"], 30)
        time.sleep(1.5)
        started = time.monotonic()
        request(base, "POST", f"/api/campaigns/{cid}/cancel", {})
        ended = wait_status(base, cid, ["cancelled", "done", "failed"], 30)
        took = time.monotonic() - started
        note(f"cancel {test} at 0.1 MB/s", ended is not None and took < 1.0,
             f"{took * 1000:.0f} ms from the cancel to the campaign's end")
    for name, target in [
        ("drive at 1 MB/s, 1 MB buffer", {"kind": "tape", "model": "lto-4", "native_mb_s": 1,
                                          "min_mb_s": 0.5, "buffer_mb": 1, "reposition_s": 60}),
        ("striped at 0.1 MB/s", {"kind": "striped", "disks": 2, "disk_mb_s": 0.1,
                                 "controller_mb_s": 0.1}),
    ]:
        spec = {"source": {"generated": {"size": "1G"}}, "target": target, "tests": ["tape_write"],
                "params": {"duration_s": 2, "time_based": True, "buffers": 32, "block_size": "1M"}}
        status, answer, _ = request(base, "POST", "/api/campaigns", spec)
        if status != 201:
            note(name, False, f"not queued: {status} {answer}")
            continue
        cid = answer["id"]
        wait_status(base, cid, ["running"], 30)
        started = time.monotonic()
        ended = wait_status(base, cid, ["cancelled", "done", "failed"], 60)
        took = time.monotonic() - started
        error = (ended or {}).get("runs", [{}])[0].get("result", {}).get("error") or ""
        note(f"{name}, 2 s run", ended is not None and took < 9 and "cut" in error,
             f"ended {took:.1f} s after it started ({(ended or {}).get('status')})")


def fadvise_dontneed(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def resident_bytes(path):
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", path],
                         capture_output=True, text=True, check=True).stdout
    return int(out.split()[0])


def probe_swaps(base, data_dir, work):
    """Files of a source swapped for a link outside and for a FIFO while a run reads them."""
    source = os.path.join(data_dir, "probe-swap")
    shutil.rmtree(source, ignore_errors=True)
    os.makedirs(source)
    for name in "abcd":
        with open(os.path.join(source, name), "wb") as f:
            f.write(os.urandom(1 << 20))
    outside = os.path.join(work, "outside-secret")
    with open(outside, "wb") as f:
        f.write(os.urandom(3 << 20))
    fadvise_dontneed(outside)
    before = resident_bytes(outside)
    spec = {"source": {"paths": ["probe-swap"]}, "target": {"kind": "null"},
            "tests": ["read_single"],
            "params": {"duration_s": 4, "time_based": True, "source_rate_mb_s": 20,
                       "block_size": "256K"}}
    status, answer, _ = request(base, "POST", "/api/campaigns", spec)
    if status != 201:
        note("swaps", False, f"not queued: {status} {answer}")
        return
    cid = answer["id"]
    wait_status(base, cid, ["running"], 30)
    time.sleep(0.5)
    os.remove(os.path.join(source, "a"))
    os.symlink(outside, os.path.join(source, "a"))
    os.remove(os.path.join(source, "b"))
    os.mkfifo(os.path.join(source, "b"))
    started = time.monotonic()
    ended = wait_status(base, cid, ["cancelled", "done", "failed"], 30)
    took = time.monotonic() - started
    after = resident_bytes(outside)
    note("link and FIFO swapped in mid-run", ended is not None and ended["status"] == "done"
         and took < 6, f"the run ended {took:.1f} s after the swaps ({(ended or {}).get('status')})")
    note("bytes of the outside file read", before == 0 and after == 0,
         f"{after} resident after the run ({before} before)")


def frame(kind, payload):
    body = json.dumps(payload).encode()
    return b"BL" + bytes([kind]) + struct.pack(">I", len(body)) + body


def register(port, name, sources):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(frame(6, {"name": name, "token": None, "sources": sources,
                               "version": "probe", "host": "probe"}))
        header = b""
        while len(header) < 7:
            chunk = sock.recv(7 - len(header))
            if not chunk:
                return None
            header += chunk
        return header[2]


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def probe_agents(base, data_port, pid):
    """3 000 registrations of distinct names, each with the largest sources allowed."""
    rss_before = rss_mib(pid)
    refused = register(data_port, "talkative", [f"/{n}/" + "x" * 1000 for n in range(61)])
    note("61 KB of sources refused", refused == 3, f"answer frame kind {refused}")
    started = time.monotonic()
    ok = 0
    for index in range(3000):
        sources = [f"/{index:05}/{n}/" + "d" * 1000 for n in range(4)]
        ok += register(data_port, f"probe-{index:05}", sources) == 7
    took = time.monotonic() - started
    times = []
    listed = 0
    for _ in range(5):
        _, body, elapsed = request(base, "GET", "/api/agents")
        times.append(elapsed)
        listed = len(body.get("agents", []))
    rss_after = rss_mib(pid)
    note("3000 registrations", ok == 3000, f"{ok} registered in {took:.1f} s; {listed} listed")
    note("/api/agents after them", min(times) < 0.1,
         f"fastest {min(times) * 1000:.1f} ms, slowest {max(times) * 1000:.1f} ms")
    note("lab memory through them", rss_after < 120,
         f"{rss_before:.1f} MiB before, {rss_after:.1f} MiB after")


def probe_small(base, own_host):
    """The smaller refusals, each once."""
    bodies = {
        "params as a list": b'{"source":{"generated":{"size":"4M"}},"target":{"kind":"null"},"tests":["null_sink"],"params":[1]}',
        "a key twice": b'{"source":{"generated":{"size":"4M"}},"target":{"kind":"null"},"tests":["null_sink"],"params":{"duration_s":2,"buffers":8,"buffers":1024}}',
        "an empty source path": b'{"source":{"paths":[""]},"target":{"kind":"null"},"tests":["read_single"],"params":{"duration_s":2}}',
        "striped disk_mb_s 1e-300": b'{"source":{"generated":{"size":"4M"}},"target":{"kind":"striped","disk_mb_s":1e-300},"tests":["tape_write"],"params":{"duration_s":2}}',
    }
    for name, body in bodies.items():
        status, answer, _ = request(base, "POST", "/api/campaigns", body)
        fields = answer.get("fields", {}) if isinstance(answer, dict) else {}
        note(name, status in (400, 422) and "target.rotational_delay_ms" not in fields,
             f"{status}, fields {sorted(fields)}")
    status, answer, _ = request(base, "POST", "/api/campaigns",
                                {"source": {"generated": {"size": "4M"}}, "target": {"kind": "null"},
                                 "tests": ["null_sink"], "params": {"duration_s": 1}, "repeat": 2.0})
    note("repeat 2.0", status == 201, f"{status}")
    status, answer, _ = request(base, "GET", "/api/campaigns?before=nonsense")
    note("?before=nonsense", status == 422 and "query" in answer.get("error", ""), f"{status} {answer.get('error')}")
    note("no Host", raw_http(base, "GET /api/campaigns HTTP/1.0\r\n") == 400, "HTTP/1.0 without Host")
    note("two Hosts", raw_http(base, f"GET /healthz HTTP/1.1\r\nHost: evil.example\r\nHost: {own_host}\r\n") == 400, "")
    wide = {"source": {"generated": {"size": "1G"}}, "target": {"kind": "null"}, "tests": ["null_sink"],
            "params": {"duration_s": 1},
            "matrix": {"buffers": list(range(1, 41)), "streams": [1, 2, 3, 4, 5]}, "repeat": 5}
    accepted, refused = 0, 0
    for _ in range(15):
        status, _, _ = request(base, "POST", "/api/campaigns", wide)
        accepted += status == 201
        refused += status == 429
    note("queue bound", accepted <= 10 and refused >= 5, f"{accepted} campaigns of 1000 runs queued, {refused} refused (429)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--data-port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    own_host = args.base.split("//")[1]
    probe_stops(args.base, args.data_dir)
    probe_swaps(args.base, args.data_dir, args.work)
    probe_agents(args.base, args.data_port, args.pid)
    probe_small(args.base, own_host)
    print(f"SUMMARY probes={sum(counts.values())} failed={len(failures)}"
          + (f" ({', '.join(failures)})" if failures else ""))
    raise SystemExit(1 if failures else 0)


if __name__ == "__main__":
    main()
