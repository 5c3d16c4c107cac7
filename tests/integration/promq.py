#!/usr/bin/env python3
"""A Prometheus HTTP API client for tests/integration/test_prometheus.sh.

    promq.py PORT ready              exit 0 when the server answers /-/ready
    promq.py PORT query EXPR [LABEL] the instant vector of EXPR, one line per
                                     sample: "<LABEL value> <sample value>"
                                     sorted (LABEL omitted: just the value)
    promq.py PORT at TIME EXPR [LABEL] the same, evaluated at Unix time TIME
    promq.py PORT targets            "<health> <lastError>" of each target
    promq.py PORT rules              "<name> <health> <evaluated>" of each rule
    promq.py PORT exprs FILE         runs every expression of FILE (blocks
                                     separated by blank lines; Grafana's
                                     $__rate_interval, $instance and $op
                                     replaced): "ok"/"FAIL" and the expression

Exits 1 when the server cannot be reached or the query fails."""
import json
import sys
import urllib.parse
import urllib.request


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return r.read().decode()


def exprs(port, path):
    blocks = [b.strip() for b in open(path).read().split("\n\n") if b.strip()]
    bad = 0
    for b in blocks:
        q = b.replace("$__rate_interval", "1m").replace("$instance", ".*").replace("$op", ".*")
        d = json.loads(get(port, "/api/v1/query?query=" + urllib.parse.quote(q)))
        ok = d.get("status") == "success"
        bad += not ok
        print("ok  " if ok else "FAIL", " ".join(b.split()), "" if ok else d)
    return 1 if bad else 0


def main():
    port, what = sys.argv[1], sys.argv[2]
    try:
        if what == "ready":
            get(port, "/-/ready")
            return 0
        if what == "targets":
            d = json.loads(get(port, "/api/v1/targets"))
            for t in d["data"]["activeTargets"]:
                print(t["health"], t.get("lastError", "") or "-")
            return 0
        if what == "rules":
            d = json.loads(get(port, "/api/v1/rules"))
            for g in d["data"]["groups"]:
                for r in g["rules"]:
                    ev = r.get("lastEvaluation", "")
                    print(r["name"], r["health"], "no" if ev.startswith("0001") else "yes")
            return 0
        if what == "exprs":
            return exprs(port, sys.argv[3])
        args = sys.argv[3:]
        at = ""
        if what == "at":
            at = "&time=" + urllib.parse.quote(args.pop(0))
        sys.argv[3:] = args
        q = urllib.parse.quote(args[0])
        d = json.loads(get(port, f"/api/v1/query?query={q}{at}"))
    except Exception as e:  # connection refused, HTTP error, bad JSON
        print(f"promq: {e}", file=sys.stderr)
        return 1
    if d.get("status") != "success":
        print(f"promq: {d}", file=sys.stderr)
        return 1
    label = sys.argv[4] if len(sys.argv) > 4 else None
    lines = []
    for s in d["data"]["result"]:
        v = s["value"][1]
        lines.append(f"{s['metric'].get(label, '')} {v}" if label else v)
    print("\n".join(sorted(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
