#!/usr/bin/env bash
# needs: root
# --prometheus against a real Prometheus server (Debian's prometheus
# package, loopback only, scrape interval 1 s, a temporary data folder):
# ingero-top traces two shim workloads, one of them with a hostile process
# name, while Prometheus scrapes it and idle clients hold connections open.
# Then, through Prometheus's HTTP API: the target is up, the calls of each
# process equal the workloads' own counts, op by op; histogram_quantile(0.99)
# of every busy op agrees with ingero-top's own p99 (its --summary) within
# one bucket; the hostile name arrives stripped of its control bytes. On a
# scrape: promtool check metrics passes, the content type is the exposition
# format's; more connections than the cap are refused and logged in one line;
# a NUL byte in a request gets 400 at once; with every slot held by clients
# that never finish their requests, the scrapes (Prometheus's and curl's)
# still get 200 through the reserved slot; the refusals are in the metrics.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile.sh"
need_root
for t in prometheus promtool curl; do
	command -v $t >/dev/null || { echo "skip: $t not installed (make deps installs Debian's prometheus)"; exit 77; }
done
[ -x "$WL" ] || { echo "skip: $WL not built (make test-build)"; exit 77; }
PQ="python3 $ROOT/tests/integration/promq.py"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
IGPORT=$(free_port)
PPORT=$(free_port)

# 1. Prometheus, scraping ingero-top's port every second.
cat >"$TMP/prom.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: ['$ROOT/docs/prometheus-rules.yml']
scrape_configs:
  - job_name: ingero
    static_configs:
      - targets: ['127.0.0.1:$IGPORT']
EOF
promtool check rules "$ROOT/docs/prometheus-rules.yml" >"$TMP/rules.check" 2>&1 &&
	ok "promtool check rules docs/prometheus-rules.yml: $(grep -o 'SUCCESS: [0-9]* rules found' "$TMP/rules.check")" ||
	bad "docs/prometheus-rules.yml: $(cat "$TMP/rules.check")"
prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/promdata" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$TMP/prom.log" 2>&1 &
prom=$!
cleanup_hooks+=("kill $prom 2>/dev/null; wait $prom 2>/dev/null")
wait_until 60 $PQ "$PPORT" ready || { bad "Prometheus did not start: $(tail -n 5 "$TMP/prom.log")"; finish; }
ok "Prometheus $(prometheus --version 2>&1 | awk 'NR == 1 {print $3}') on 127.0.0.1:$PPORT"

# 2. Two workloads waiting for SIGUSR1, one started through a link named
# ESC ] 0 ; pwned BEL (its process name); ingero-top traces both by pid;
# four idle clients hold connections meanwhile.
mkdir -p "$TMP/bin"
LINK=$TMP/bin/$H_TITLE
ln -s "$WL" "$LINK"
args=(--wait-signal --iters 300 --kernels 2 --kernel-us 400 --sync-every 1 --malloc-every 10
	--h2d 65536 --d2h 4096)
"$WL" "${args[@]}" --expect "$TMP/w1.expect" >"$TMP/w1.ready" 2>&1 &
w1=$!
"$LINK" "${args[@]}" --iters 200 --expect "$TMP/w2.expect" >"$TMP/w2.ready" 2>&1 &
w2=$!
cleanup_hooks+=("kill $w1 $w2 2>/dev/null")
wait_until 30 grep -q ready "$TMP/w1.ready" && wait_until 30 grep -q ready "$TMP/w2.ready" ||
	{ bad "the workloads never said ready"; finish; }
"$IG" -v --batch --summary --json --no-system-libs --prometheus "127.0.0.1:$IGPORT" --prometheus-procs 5 \
	--pid "$w1,$w2" >"$TMP/summary.json" 2>"$TMP/ig.err" &
ig=$!
cleanup_hooks+=("kill $ig 2>/dev/null")
metric() { curl -s "http://127.0.0.1:$IGPORT/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
attached() { [ "$(metric ingero_top_traced_processes)" = 2 ] && [ "$(metric ingero_top_probes_attached)" -gt 0 ]; }
wait_until 60 attached || { bad "ingero-top did not attach: $(tail -n 5 "$TMP/ig.err")"; finish; }
python3 - "$IGPORT" >"$TMP/idle.log" 2>&1 <<'PY' &
import socket, sys, time
socks = [socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20) for _ in range(4)]
time.sleep(8)  # past the read timeout (5 s): the server drops them
print("idle", len(socks), "closed by server:", sum(1 for s in socks if s.recv(1) == b""))
PY
idle=$!
kill -USR1 $w1 $w2
wait $w1; rc1=$?
wait $w2; rc2=$?
expect_eq "workloads' exit status" "$rc1 $rc2" "0 0"
wait $idle
grep -q "idle 4 closed by server: 4" "$TMP/idle.log" && ok "4 idle clients dropped at the read timeout" \
	|| bad "idle clients: $(cat "$TMP/idle.log")"

# 3. The counts, as Prometheus has them, equal the workloads' own.
counts() { # expect file, label matcher
	expect_counts "$1" >"$1.want"
	$PQ "$PPORT" query "sum by (op) (ingero_top_cuda_calls_total{$2})" op >"$1.got" &&
		diff -q "$1.want" "$1.got" >/dev/null
}
if wait_until 60 counts "$TMP/w1.expect" "pid=\"$w1\""; then
	ok "workload[$w1]: calls per op in Prometheus = its own ($(wc -l <"$TMP/w1.expect.want") ops, $(awk '{s += $2} END {print s}' "$TMP/w1.expect.want") calls)"
else
	bad "workload[$w1] calls in Prometheus differ:"; diff "$TMP/w1.expect.want" "$TMP/w1.expect.got"
fi
if wait_until 30 counts "$TMP/w2.expect" 'comm="]0;pwned"'; then
	ok "workload[$w2] named ESC]0;pwned BEL: calls under comm=\"]0;pwned\" (control bytes stripped) = its own ($(awk '{s += $2} END {print s}' "$TMP/w2.expect.want"))"
else
	bad "workload[$w2] calls in Prometheus differ:"; diff "$TMP/w2.expect.want" "$TMP/w2.expect.got"
fi
# the histograms' counts are the calls of every process
$PQ "$PPORT" query 'sum by (op) (ingero_top_cuda_calls_total)' op >"$TMP/all.calls"
$PQ "$PPORT" query 'sum by (op) (ingero_top_cuda_call_duration_seconds_count)' op >"$TMP/all.count"
diff -q "$TMP/all.calls" "$TMP/all.count" >/dev/null && [ -s "$TMP/all.calls" ] &&
	ok "histogram _count = calls per op ($(wc -l <"$TMP/all.calls") ops)" || bad "histogram counts differ from calls"
expect_eq "Prometheus target health" "$($PQ "$PPORT" targets | awk '{print $1}' | sort -u)" "up"
$PQ "$PPORT" query 'histogram_quantile(0.99, sum by (le, op) (ingero_top_cuda_call_duration_seconds_bucket))' op \
	>"$TMP/prom.p99"
$PQ "$PPORT" query 'ingero_top_probes_attached' >"$TMP/probes"
[ "$(cat "$TMP/probes")" -gt 0 ] && ok "ingero_top_probes_attached = $(cat "$TMP/probes")" || bad "no probes attached in Prometheus"

# The documented queries, the dashboard's and the example rules run on
# these metrics without an error.
awk '/^## Example queries/ {on = 1; next} /^## / {on = 0} on && /^    / {sub(/^    /, ""); print; next}
	on && /^$/ {print ""}' "$ROOT/docs/prometheus.md" >"$TMP/doc.exprs"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print("\n\n".join(t["expr"] for p in d["panels"] for t in p["targets"]))' "$ROOT/docs/grafana-dashboard.json" \
	>"$TMP/dash.exprs"
for f in doc dash; do
	if $PQ "$PPORT" exprs "$TMP/$f.exprs" >"$TMP/$f.out"; then
		ok "$f queries: $(grep -c '^ok' "$TMP/$f.out") run without an error"
	else
		bad "$f queries:"; grep -v '^ok' "$TMP/$f.out"
	fi
done
rules_ok() { $PQ "$PPORT" rules >"$TMP/rules" && [ -s "$TMP/rules" ] && ! grep -qv ' ok yes$' "$TMP/rules"; }
wait_until 30 rules_ok && ok "the example rules are loaded and evaluate ($(wc -l <"$TMP/rules") rules)" ||
	{ bad "rules:"; cat "$TMP/rules"; }

# 4. A scrape: promtool, the content type, the build info, the hostile label.
curl -s -D "$TMP/headers" -o "$TMP/scrape.txt" "http://127.0.0.1:$IGPORT/metrics"
grep -qi '^Content-Type: text/plain; version=0.0.4; charset=utf-8' "$TMP/headers" &&
	ok "Content-Type: text/plain; version=0.0.4; charset=utf-8" || bad "content type: $(cat "$TMP/headers")"
if promtool check metrics <"$TMP/scrape.txt" >"$TMP/promtool.out" 2>&1; then
	ok "promtool check metrics: clean ($(grep -vc '^#' "$TMP/scrape.txt") samples)"
else
	bad "promtool check metrics:"; head -n 20 "$TMP/promtool.out"
fi
grep -q '^ingero_top_build_info{version="[0-9.]*",mode="live"} 1$' "$TMP/scrape.txt" && ok "build_info" || bad "build_info"
check_clean "$TMP/scrape.txt" "the scrape"

# 5. More connections than the cap (8): refused, counted, one log line each.
python3 - "$IGPORT" <<'PY' >"$TMP/flood.log" 2>&1
import socket, sys, time
socks = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(12)]
time.sleep(1)
refused = 0
for s in socks:
    s.settimeout(0.5)
    try:
        refused += s.recv(64).startswith(b"HTTP/1.1 503")
    except OSError:
        pass
print("refused", refused)
PY
n=$(awk '{print $2}' "$TMP/flood.log")
[ "${n:-0}" -ge 4 ] && ok "12 connections at once: $n got 503" || bad "flood: $(cat "$TMP/flood.log")"
logged() { grep -q "metrics endpoint: refused 127.0.0.1:[0-9]*: too many connections (8 open)" "$TMP/ig.err"; }
wait_until 30 logged && ok "the refusals are logged: $(grep -c 'metrics endpoint: refused' "$TMP/ig.err") line(s), one per second at most" \
	|| bad "no refusal line in the log"
refused_metric() {
	curl -s "http://127.0.0.1:$IGPORT/metrics" | awk '/^ingero_top_metrics_refused_total\{reason="busy"\}/ {print $2}' \
		>"$TMP/busy" && [ "$(cat "$TMP/busy")" -ge "$n" ]
}
wait_until 30 refused_metric && ok "ingero_top_metrics_refused_total{reason=\"busy\"} = $(cat "$TMP/busy")" \
	|| bad "refused metric: $(cat "$TMP/busy")"

# 6. A NUL byte in a request: 400 at once (the read timeout, 5 s, would
# close it without an answer), counted as bad_request.
python3 - "$IGPORT" >"$TMP/nul.log" 2>&1 <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
s.sendall(b"GET /metrics HTTP/1.1\r\nX: a\0b\r\n\r\n")
r = b""
while True:
    try:
        b = s.recv(4096)
    except OSError as e:
        print("error", e)
        break
    if not b:
        break
    r += b
print("status", r.split(b"\r\n", 1)[0].decode(errors="replace") or "(closed without an answer)")
PY
grep -q '^status HTTP/1.1 400 ' "$TMP/nul.log" && ok "a NUL byte in the request: $(sed -n 's/^status //p' "$TMP/nul.log")" ||
	bad "NUL byte: $(cat "$TMP/nul.log")"
refusals() { # reason: its counter in a scrape (-1 when the scrape failed)
	curl -sf "http://127.0.0.1:$IGPORT/metrics" |
		awk -v r="$1" '$1 == "ingero_top_metrics_refused_total{reason=\"" r "\"}" {v = $2}
			END {print v == "" ? -1 : v}'
}
bad_req() { [ "$(refusals bad_request)" -ge 1 ]; }
wait_until 30 bad_req && ok "ingero_top_metrics_refused_total{reason=\"bad_request\"} = $(refusals bad_request)" ||
	bad "bad_request refusals: '$(refusals bad_request)'"

# 7. Every slot held by clients that begin a request and never finish it,
# renewed as the server drops them, one more on top every 0.25 s: the
# scrapes still get 200 (the reserved slot takes a whole request). Ours are
# spread over the attack, so that none falls only in the moment the server
# has dropped the slow ones and they are not yet renewed.
busy0=$(refusals busy)
python3 - "$IGPORT" >"$TMP/slow.log" 2>&1 <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
def slow():
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    s.setblocking(False)
    return s
def gone(s):  # answered (503) or closed by the server
    try:
        s.recv(256)
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True
held, extra, renewed, answered = [slow() for _ in range(8)], [], 0, 0
end = time.time() + 10
while time.time() < end:
    for i, s in enumerate(held):
        if gone(s):
            s.close()
            held[i] = slow()
            renewed += 1
    for s in [s for s in extra if gone(s)]:
        s.close()
        extra.remove(s)
        answered += 1
    extra.append(slow())
    time.sleep(0.25)
print("renewed", renewed, "extra answered", answered)
PY
slow=$!
cleanup_hooks+=("kill $slow 2>/dev/null")
more_busy() { [ "$(refusals busy)" -gt "$busy0" ]; }
t0=$(date +%s)
if wait_until 30 more_busy; then
	codes=$(for i in 1 2 3 4 5 6 7 8; do
		curl -s -o /dev/null -w '%{http_code} ' "http://127.0.0.1:$IGPORT/metrics"
		sleep 0.5
	done)
	expect_eq "8 scrapes with every slot held by slow clients" "$codes" "200 200 200 200 200 200 200 200 "
	# a 503 names its path in the log (refusals: one line a second at most)
	[ "$codes" = "200 200 200 200 200 200 200 200 " ] ||
		grep 'metrics endpoint: refused' "$TMP/ig.err" | tail -n 5 | sed 's/^/    /'
else
	bad "the slow clients never filled the slots: $(cat "$TMP/slow.log")"
fi
wait $slow
t1=$(date +%s)
echo "    (slow clients: $(cat "$TMP/slow.log"))"
# Prometheus scraped once a second all along: never down (min of up is 1)
up=$($PQ "$PPORT" at "$t1" "min_over_time(up{job=\"ingero\"}[$((t1 - t0))s])")
expect_eq "Prometheus's up over the $((t1 - t0)) s of slow clients (min)" "$up" 1
[ "$(refusals busy)" -gt "$busy0" ] && ok "ingero_top_metrics_refused_total{reason=\"busy\"}: $busy0 -> $(refusals busy)" ||
	bad "busy refusals did not grow"

# 8. ingero-top's own p99 (the --summary it prints on SIGINT) and Prometheus's.
kill -INT $ig
wait $ig
expect_eq "ingero-top exit status after SIGINT" "$?" 0
python3 - "$TMP/summary.json" "$TMP/prom.p99" <<'PY' >"$TMP/p99.cmp"
import json, sys
bounds = [1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3,
          1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
def bucket(v):  # index of the bucket (le_{k-1}, le_k] holding v
    return next((k for k, b in enumerate(bounds) if v <= b * (1 + 1e-9)), len(bounds))
frame = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
prom = {l.split()[0]: float(l.split()[1]) for l in open(sys.argv[2]) if l.strip()}
checked = bad = 0
for o in frame["ops"]:
    if o["calls"] < 100:
        continue
    ig = o["p99_ns"] / 1e9
    p = prom.get(o["op"])
    if p is None:
        print(f"FAIL {o['op']}: no histogram_quantile from Prometheus")
        bad += 1
        continue
    kb, pb = bucket(ig), bucket(p)
    lo = bounds[kb - 1] if kb else 0
    verdict = "ok  " if abs(kb - pb) <= 1 else "FAIL"
    bad += verdict == "FAIL"
    checked += 1
    print(f"{verdict} {o['op']}: ingero-top p99 {ig * 1e3:.3f} ms in bucket ({lo}, {bounds[kb]}] s, "
          f"histogram_quantile {p * 1e3:.3f} ms ({abs(kb - pb)} bucket(s) apart)")
print(f"checked {checked} bad {bad}")
PY
cat "$TMP/p99.cmp"
read -r _ checked _ nbad <<<"$(tail -n 1 "$TMP/p99.cmp")"
[ "$checked" -ge 4 ] && [ "$nbad" = 0 ] && ok "p99 agrees within one bucket for $checked ops" || bad "p99 comparison ($checked ops, $nbad bad)"
same=$(grep -c '(0 bucket(s) apart)' "$TMP/p99.cmp")
echo "    ($same of $checked in the same bucket)"
finish
