#!/usr/bin/env python3
"""Runs form presets on a lab and sets each one's expected duration (the form's dry run,
before anything is queued) against its real duration. Prints one line per preset and a SUMMARY
line; exits non-zero when a preset misses by more than 25 %.

    estimates.py --base http://127.0.0.1:PORT bottleneck tuning
"""
import argparse
import json
import re
from html import unescape
import time
import urllib.parse
import urllib.request
from html.parser import HTMLParser


class FormFields(HTMLParser):
    """The fields the campaign form posts, as a browser would: inputs with their values,
    ticked checkboxes and radio buttons, text areas, each select's chosen option."""

    def __init__(self):
        super().__init__()
        self.pairs = []
        self.select = None
        self.first_option = None
        self.textarea = None
        self.text = ""

    def handle_data(self, data):
        if self.textarea:
            self.text += data

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "input" and attrs.get("name"):
            kind = attrs.get("type", "text")
            if kind in ("checkbox", "radio"):
                if "checked" in attrs:
                    self.pairs.append((attrs["name"], attrs.get("value", "on")))
            elif kind not in ("submit", "button"):
                self.pairs.append((attrs["name"], attrs.get("value", "")))
        elif tag == "textarea" and attrs.get("name"):
            self.textarea = attrs["name"]
            self.text = ""
        elif tag == "select":
            self.select = attrs.get("name")
            self.first_option = None
        elif tag == "option" and self.select:
            if self.first_option is None:
                self.first_option = attrs.get("value", "")
            if "selected" in attrs:
                self.pairs.append((self.select, attrs.get("value", "")))
                self.select = None

    def handle_endtag(self, tag):
        if tag == "textarea" and self.textarea:
            self.pairs.append((self.textarea, self.text.strip()))
            self.textarea = None
        if tag == "select" and self.select:
            self.pairs.append((self.select, self.first_option or ""))
            self.select = None


def post_form(base, pairs):
    body = urllib.parse.urlencode(pairs).encode()
    request = urllib.request.Request(base + "/campaigns/new", data=body, method="POST")
    request.add_header("Accept", "application/json")
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def get_json(base, path):
    with urllib.request.urlopen(base + path, timeout=60) as answer:
        return json.loads(answer.read())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("presets", nargs="+")
    args = parser.parse_args()
    misses = 0
    for preset in args.presets:
        with urllib.request.urlopen(f"{args.base}/campaigns/new?preset={preset}", timeout=60) as page:
            fields = FormFields()
            fields.feed(page.read().decode())
        planned = post_form(args.base, fields.pairs + [("dry_run", "true")])
        expected = planned["expected_s"]
        started = time.monotonic()
        queued = post_form(args.base, fields.pairs)
        while True:
            campaign = get_json(args.base, f"/api/campaigns/{queued['id']}")
            if campaign["status"] in ("done", "failed", "cancelled"):
                break
            time.sleep(0.2)
        real = time.monotonic() - started
        ratio = real / expected if expected else float("inf")
        ok = abs(ratio - 1) <= 0.25
        misses += not ok
        print(f"{'ok  ' if ok else 'MISS'} {preset}: {planned['runs']} runs, expected "
              f"{expected:.0f} s{' at most' if planned['at_most'] else ''}, took {real:.0f} s "
              f"(real ÷ expected {ratio:.2f}); campaign {campaign['status']}")
        # What the campaign concluded: the verdict, and a sweep's answer from its page.
        verdict = get_json(args.base, f"/api/campaigns/{queued['id']}/bottleneck")["bottleneck"]
        print(f"     verdict ({'conclusive' if verdict['conclusive'] else 'inconclusive'}): "
              f"{verdict['verdict']}")
        with urllib.request.urlopen(f"{args.base}/campaigns/{queued['id']}", timeout=60) as page:
            html = page.read().decode()
        sweep = re.search(r'id="sweep-best">([^<]*)<', html)
        if sweep:
            print(f"     sweep: {unescape(sweep.group(1))}")
        # Where a miss comes from: the runs that took half as long again as planned.
        runs = sorted(campaign["runs"], key=lambda run: run["position"])
        for run, plan in zip(runs, planned["plan"]):
            if not (run.get("started_ms") and run.get("finished_ms")):
                continue
            took = (run["finished_ms"] - run["started_ms"]) / 1000
            if took > 1.5 * plan["expected_s"]:
                flags = [f["code"] for f in ((run.get("result") or {}).get("validity") or {}).get("flags", [])]
                print(f"     run {run['position'] + 1} ({run['test']}): expected {plan['expected_s']:.1f} s, "
                      f"took {took:.1f} s; flags {flags or 'none'}")
    print(f"SUMMARY presets={len(args.presets)} missed={misses}")
    raise SystemExit(1 if misses else 0)


if __name__ == "__main__":
    main()
