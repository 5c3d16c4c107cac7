#!/usr/bin/env bash
# `ingero-top mcp` driven by a real MCP client: the official TypeScript SDK
# (tests/mcp, pinned; `make mcp-client` installs it) lists the tools and
# calls every one on each shipped recording and on a live traced workload
# (root), and the answers are checked against --json --summary of the same
# data. The negative matrix of run_sql (the file unchanged, byte for byte),
# hostile names marked as data, and the JSON-RPC edges the SDK never sends
# (version negotiation, -32601, -32602, -32700, -32600, notifications) with
# a plain stdio client.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile.sh"

M=$ROOT/tests/mcp
command -v node >/dev/null || { echo "skip: node is not installed (apt-get install nodejs)"; exit 77; }
[ -f "$M/node_modules/@modelcontextprotocol/sdk/package.json" ] || "$M/install.sh" >/dev/null 2>&1
[ -f "$M/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
	{ echo "skip: the MCP SDK is not installed and npm could not install it (make mcp-client says why)"; exit 77; }

client() { # mode args...: the SDK client's checks into the log
	node "$M/client.mjs" "$@" >"$TMP/client.out" 2>"$TMP/client.err"
	local rc=$?
	grep -E '^(ok|FAIL) ' "$TMP/client.out"
	grep -q '^FAIL ' "$TMP/client.out" && FAILS=$((FAILS + 1))
	[ $rc = 0 ] || { bad "client $1 exit $rc"; tail -n 5 "$TMP/client.err"; }
}

# --- every tool on every shipped recording, against --json --summary -----------------
for db in "$ROOT"/tests/scenarios/*.db "$ROOT/tests/fixtures/ingero/pytorch-dataloader-starvation.db"; do
	n=$(basename "$db" .db)
	echo "== $n"
	"$IG" --json --summary --replay "$db" >"$TMP/$n.json"
	client replay "$IG" "$db" "$TMP/$n.json"
done

# --- run_sql: the negative matrix; the file is not touched --------------------------
cp "$ROOT/tests/scenarios/dataloader.db" "$TMP/neg.db"
sum0=$(sha256sum "$TMP/neg.db" | cut -d' ' -f1)
echo "== run_sql negative matrix"
client sqlneg "$IG" "$TMP/neg.db"
expect_eq "run_sql: the file unchanged (sha256)" "$(sha256sum "$TMP/neg.db" | cut -d' ' -f1)" "$sum0"
expect_eq "run_sql: nothing created beside it" "$(ls "$TMP" | grep -c 'neg\.db-')" 0
[ -e /tmp/ig-mcp-evil.db ] && bad "ATTACH created /tmp/ig-mcp-evil.db" || ok "ATTACH created nothing"

# --- hostile names: marked as data, stripped of control characters ---------------------
make_hostile_db "$ROOT/tests/scenarios/cpu-contention.db" "$TMP/h.db"
sqlite3 "$TMP/h.db" "UPDATE process_names SET name = char(27) || '[2JIGNORE' || char(10) || 'all';
	UPDATE events SET comm = 'IGNORE' || char(8232) || char(27) || ']0;x' WHERE comm != ''"
echo "== hostile names"
client hostile "$IG" "$TMP/h.db" IGNORE

# --- the protocol, with a plain client ----------------------------------------------------
echo "== JSON-RPC edges"
python3 - "$IG" "$ROOT/tests/scenarios/cpu-contention.db" <<'PY' && ok "JSON-RPC: versions, errors, notifications, batches, CRLF, EOF" || bad "JSON-RPC edges"
import json, subprocess, sys
ig, db = sys.argv[1], sys.argv[2]
def session(lines):
    p = subprocess.run([ig, "mcp", "--replay", db], input="".join(lines), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = [json.loads(l) for l in p.stdout.splitlines()]
    assert all(m.get("jsonrpc") == "2.0" for m in out), out
    return out, p.stderr
msg = lambda i, m, p=None: json.dumps({"jsonrpc": "2.0", "id": i, "method": m, **({"params": p} if p is not None else {})}) + "\n"
init = lambda i, v: msg(i, "initialize", {"protocolVersion": v, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}})
# every supported version is answered with itself, anything else with the latest
for v, want in [("2025-11-25",) * 2, ("2025-06-18",) * 2, ("2025-03-26",) * 2, ("2024-11-05",) * 2, ("1999-01-01", "2025-11-25")]:
    out, _ = session([init(1, v)])
    got = out[0]["result"]["protocolVersion"]
    assert got == want, (v, got)
    print(f"ok   initialize {v}: answered {got}")
lines = [init("a", "2025-06-18"),
         json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n",
         msg(2, "ping"),
         msg(3, "no/such/method"),
         msg(4, "tools/call", {"name": "get_process", "arguments": {"pid": -1}}),
         msg(5, "tools/call", {"name": "nope"}),
         msg(6, "initialize", {}),
         "this is not json\n",
         json.dumps([{"jsonrpc": "2.0", "id": 7, "method": "ping"}]) + "\n",
         json.dumps({"id": 8, "method": "ping"}) + "\n",
         msg(9, "tools/call", {"name": "get_overview", "arguments": {}}).replace("\n", "\r\n"),
         msg(10, "prompts/get", {"name": "nope"}),
         json.dumps({"jsonrpc": "2.0", "id": 99, "result": {}}) + "\n",   # a response: ignored
         msg(11, "tools/call", {"name": "get_process", "arguments": {"pid": 4194304}}),
         msg(12, "tools/call", {"name": "get_timeline", "arguments": {"limit": 5}})]
out, err = session(lines)
by = {m.get("id"): m for m in out if m.get("id") is not None}
nulls = [m for m in out if m.get("id") is None]
assert by["a"]["result"]["serverInfo"]["name"] == "ingero-top"
assert by[2]["result"] == {}
assert by[3]["error"]["code"] == -32601, by[3]
assert by[4]["error"]["code"] == -32602 and "pid" in by[4]["error"]["message"], by[4]
assert by[5]["error"]["code"] == -32602 and "Unknown tool" in by[5]["error"]["message"], by[5]
assert by[6]["error"]["code"] == -32602 and "protocolVersion" in by[6]["error"]["message"], by[6]
assert by[8]["error"]["code"] == -32600, by[8]
assert not by[9]["result"]["isError"] and by[9]["result"]["structuredContent"]["mode"] == "replay"
assert by[10]["error"]["code"] == -32602
assert by[11]["result"]["isError"] is True and "no process 4194304" in by[11]["result"]["content"][0]["text"]
codes = sorted(m["error"]["code"] for m in nulls)
assert codes == [-32700, -32600], codes   # not JSON; a batch
# get_timeline with no tid or pid: the top chain's feeding thread, said in note
top = json.loads(subprocess.run([ig, "--replay", db, "--json", "--summary"], capture_output=True, text=True).stdout.splitlines()[-1])["chains"][0]
tl = by[12]["result"]
assert not tl.get("isError"), tl
tl = tl["structuredContent"]
assert tl["tid"] == top["tid"] and top["id"] in tl["note"] and tl["returned"] == 5, (tl["tid"], top["tid"], tl.get("note"))
assert all(e["tid"] == top["tid"] for e in tl["events"]), tl["events"]
assert 99 not in by and len(out) == 13, len(out)   # the notification and the response got no answer
assert "serving on stdio" in err and not any(l.startswith("{") for l in err.splitlines())
# a recording bigger than what is kept in memory: ranges read the file again, same answers
ask = [init(1, "2025-11-25")] + [msg(10 + i, "tools/call", {"name": n, "arguments": a}) for i, (n, a) in enumerate([
    ("get_trace_stats", {"since": "+0.5s", "until": "-0.5s"}), ("get_timeline", {"pid": 5241, "since": "+0.5s", "limit": 2000}),
    ("get_slow_calls", {"since": "+0.5s"})])]
def answers(extra):
    p = subprocess.run([ig, "mcp", *extra, "--replay", db], input="".join(ask), capture_output=True, text=True, timeout=120)
    return [json.loads(l)["result"]["structuredContent"] for l in p.stdout.splitlines()[1:]]
mem, disk = answers([]), answers(["--keep-events", "1000"])
assert mem[1]["source"] == "memory" and disk[1]["source"] == "recording", (mem[1]["source"], disk[1]["source"])
for a, b in zip(mem, disk):
    a.pop("source", None); b.pop("source", None)
    assert a == b, (json.dumps(a)[:300], json.dumps(b)[:300])
print("ok   ranges with the events in memory and read again from the file (--keep-events 1000): the same answers")
print("ok   get_timeline without tid or pid: the feeding thread of the top chain")
print("ok   ping, -32601, -32602 (bad argument, unknown tool, bad initialize), -32700, -32600 (batch, no jsonrpc), CRLF, notifications and responses unanswered, logs on stderr only")
PY

# --- live: the session keeps running in the server -----------------------------------------
if [ "$(id -u)" != 0 ]; then
	echo "part skipped: the live session needs root"
	finish
fi
echo "== live"
client live "$IG" "$TMP/live.json" -- --record "$TMP/live.db" -- "$WL" --iters 1500 --threads 2 --sleep-us 2000
[ -f "$TMP/live.db" ] && [ ! -e "$TMP/live.db-wal" ] && ok "live: the recording was closed into one file" || bad "live: no closed recording"
"$IG" --json --summary --replay "$TMP/live.db" >"$TMP/live-summary.json"
echo "== live answers against --json --summary of the recording the session made"
client compare "$TMP/live.json" "$TMP/live-summary.json"
finish
