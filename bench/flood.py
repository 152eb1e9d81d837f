#!/usr/bin/env python3
"""Connection flood and slow-loris against a running lab, with /healthz probed throughout.

Used by bench/hostile.sh. Standard library only. Prints what the lab did with the flood
(answered 503, closed, kept open), how long trickled headers were held, and the latency of
/healthz during the flood (p50, p99, max, failures).
"""

import argparse
import http.client
import resource
import socket
import statistics
import threading
import time


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def probe_healthz(host, port, stop, latencies, failures):
    while not stop.is_set():
        started = time.monotonic()
        try:
            conn = http.client.HTTPConnection(host, port, timeout=5)
            conn.request("GET", "/healthz")
            response = conn.getresponse()
            response.read()
            conn.close()
            if response.status == 200:
                latencies.append(time.monotonic() - started)
            else:
                failures.append(f"status {response.status}")
        except OSError as error:
            failures.append(type(error).__name__)
        time.sleep(0.05)


def percentile(values, share):
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))
    return ordered[index]


def open_idle(host, port, count, first_bytes):
    sockets, refused = [], 0
    for _ in range(count):
        try:
            sock = socket.create_connection((host, port), timeout=5)
            if first_bytes:
                sock.sendall(first_bytes)
            sockets.append(sock)
        except OSError:
            refused += 1
    return sockets, refused


def classify(sockets, wait_s):
    """After wait_s, how each flood connection stands: answered 503, closed, or still open."""
    time.sleep(wait_s)
    answered_503 = closed = still_open = 0
    for sock in sockets:
        sock.setblocking(False)
        try:
            data = sock.recv(4096)
            if not data:
                closed += 1
            elif b" 503 " in data.split(b"\r\n", 1)[0]:
                answered_503 += 1
            else:
                closed += 1
        except BlockingIOError:
            still_open += 1
        except OSError:
            closed += 1
        finally:
            sock.close()
    return answered_503, closed, still_open


def slow_loris(host, port, count, line_every_s, give_up_s):
    """Opens connections that send one header line every line_every_s; returns how long the
    lab kept each one (give_up_s when it never closed them)."""
    held = []
    sockets = []
    for _ in range(count):
        sock = socket.create_connection((host, port), timeout=5)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: %s:%d\r\n" % (host.encode(), port))
        sockets.append([sock, time.monotonic(), None])
    started = time.monotonic()
    while time.monotonic() - started < give_up_s and any(s[2] is None for s in sockets):
        time.sleep(line_every_s)
        for entry in sockets:
            if entry[2] is not None:
                continue
            try:
                entry[0].sendall(b"X-Trickle: 1\r\n")
                entry[0].setblocking(False)
                try:
                    if entry[0].recv(1) == b"":
                        entry[2] = time.monotonic() - entry[1]
                except BlockingIOError:
                    pass
                entry[0].setblocking(True)
            except OSError:
                entry[2] = time.monotonic() - entry[1]
    for entry in sockets:
        held.append(entry[2] if entry[2] is not None else give_up_s)
        entry[0].close()
    return held


def flood(name, host, port, data_port, count, first_bytes, hold_s, target_port):
    stop = threading.Event()
    latencies, failures = [], []
    prober = threading.Thread(target=probe_healthz, args=(host, port, stop, latencies, failures))
    prober.start()
    started = time.monotonic()
    sockets, refused = open_idle(host, target_port, count, first_bytes)
    opened_s = time.monotonic() - started
    answered_503, closed, still_open = classify(sockets, hold_s)
    stop.set()
    prober.join()
    print(f"{name}: {count} connections to port {target_port} "
          f"(opened in {opened_s:.1f} s, {refused} refused at connect)")
    print(f"  after {hold_s} s: {answered_503} answered 503, {closed} closed, {still_open} still open")
    print(f"  /healthz during it: {len(latencies)} ok, {len(failures)} failed; "
          f"p50 {percentile(latencies, 0.5) * 1000:.1f} ms, "
          f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms, "
          f"max {max(latencies, default=float('nan')) * 1000:.1f} ms")
    if failures:
        print(f"  failures: {sorted(set(failures))}")
    return latencies, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-port", type=int, required=True)
    parser.add_argument("--connections", type=int, default=1100)
    parser.add_argument("--hold", type=float, default=15.0)
    parser.add_argument("--loris", type=int, default=20)
    args = parser.parse_args()
    limit = raise_fd_limit()
    print(f"client file limit: {limit}")

    http_lat, http_fail = flood("HTTP flood (idle)", args.host, args.port, args.data_port,
                                args.connections, b"", args.hold, args.port)
    data_lat, data_fail = flood("data-port flood (2 bytes each)", args.host, args.port,
                                args.data_port, args.connections, b"BL", args.hold,
                                args.data_port)
    held = slow_loris(args.host, args.port, args.loris, 2.0, 60.0)
    print(f"slow-loris: {args.loris} connections sending a header line every 2 s; "
          f"held {statistics.median(held):.1f} s median, {max(held):.1f} s at most (gave up at 60 s)")
    all_lat = http_lat + data_lat
    print(f"SUMMARY healthz_p99_ms={percentile(all_lat, 0.99) * 1000:.1f} "
          f"healthz_failures={len(http_fail) + len(data_fail)} loris_max_held_s={max(held):.1f}")


if __name__ == "__main__":
    main()
