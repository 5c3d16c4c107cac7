#!/usr/bin/env bash
# `ingero-top mcp` and NUL characters, with a plain stdio client (no SDK:
# no SDK sends these). A \u0000 escape is valid JSON: the request is refused
# with its own id (-32602 inside params, -32600 elsewhere), naming the member
# that holds it, in a value or in a member name; a NUL in the id is only
# echoed; an escaped backslash followed by u0000 is no NUL. A raw NUL byte
# is not JSON: its whole line gets -32700 (id null) and no part of it is
# acted on, before or after the NUL. The server goes on serving after each.
. "$(dirname "$0")/lib.sh"
DB=$ROOT/tests/scenarios/cpu-contention.db
[ -f "$DB" ] || { echo "skip: $DB missing"; exit 77; }

python3 - "$IG" "$DB" <<'PY' || FAILS=$((FAILS + 1))
import json, subprocess, sys
ig, db = sys.argv[1], sys.argv[2]
bad = 0
def check(what, cond, got):
    global bad
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else f": got {str(got)[:300]}"))
    bad += not cond
def session(data):  # bytes in, the messages out
    p = subprocess.run([ig, "mcp", "--replay", db], input=data, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    return [json.loads(l) for l in p.stdout.decode().splitlines()]
req = lambda i, m, p=None: {"jsonrpc": "2.0", "id": i, "method": m, **({"params": p} if p is not None else {})}
line = lambda o: json.dumps(o).encode() + b"\n"   # json.dumps writes a NUL as \u0000
call = lambda i, name, args: req(i, "tools/call", {"name": name, "arguments": args})

# 1. \u0000 escapes: each refused with its id, naming the member
esc = [(1, line(req(1, "ping\0x")), -32600, "method"),
       (2, line(call(2, "get_overview\0x", {})), -32602, "params.name"),
       (3, line(call(3, "run_sql", {"sql": "SELECT 1\0; DELETE FROM events"})), -32602, "params.arguments.sql"),
       (4, line(call(4, "get_trace_stats", {"op": "cudaMalloc\0x"})), -32602, "params.arguments.op"),
       (5, line({"jsonrpc": "2.0\0", "id": 5, "method": "ping"}), -32600, "jsonrpc"),
       (6, line(call(6, "get_overview", {"since\0": "+1s"})), -32602, "params.arguments.since\u2400"),
       (7, line(req(7, "prompts/get", {"name": "investigate", "arguments": {"pid": "1\0; rm"}})), -32602,
        "params.arguments.pid"),
       (8, line(req(8, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "t\0", "version": "0"}})), -32602, "params.clientInfo.name")]
data = b"".join(l for _, l, _, _ in esc)
data += line({"jsonrpc": "2.0", "method": "notifications/x\0y"})        # a notification: never answered
data += line(req("a\0b", "ping"))                                         # a NUL in the id: echoed
data += line(req(9, "prompts/get", {"name": "investigate", "arguments": {"question": "\\u0000"}}))
data += line(req(10, "ping"))
out = session(data)
by = {json.dumps(m.get("id")): m for m in out}
for i, _, code, path in esc:
    m = by.get(json.dumps(i), {})
    e = m.get("error", {})
    check(f"\\u0000 in {path}: {code} with id {i}, naming {path}",
          e.get("code") == code and f" {path} contains a NUL character" in e.get("message", ""), m or out)
check("no answer with id null", "null" not in by, [m for m in out if m.get("id") is None])
m = by.get(json.dumps("a\0b"), {})
check("a NUL in the id: the ping answered, the id echoed as it came", m.get("result") == {}, m or out)
m = by.get("9", {})
text = m.get("result", {}).get("messages", [{}])[0].get("content", {}).get("text", "")
check("an escaped backslash then u0000 is no NUL: served", "The question: \\u0000" in text, m)
check("the server goes on: ping answered", by.get("10", {}).get("result") == {}, by.get("10"))
check("one answer per request, none to the notification", len(out) == len(esc) + 3, len(out))

# 2. raw NUL bytes: the whole line is a parse error, nothing of it is done
raw = [json.dumps(req(20, "ping")).encode() + b"\0 trailing\n",     # a whole message before the NUL
       b"\0" + line(req(21, "ping")),                                # a NUL first (not a blank line)
       line(call(22, "get_overview", {})).replace(b"get_overview", b"get_over\0view"),
       line(call(23, "run_sql", {"sql": "SELECT 1"})).replace(b"SELECT 1", b"SELECT 1\0; SELECT 2"),
       b"  \0  \r\n"]
out = session(b"".join(raw) + line(req(24, "ping")))
ids = [m.get("id") for m in out]
errs = [m.get("error", {}) for m in out if m.get("id") is None]
check("a raw NUL byte: -32700 (id null) for each of the 5 lines",
      len(errs) == 5 and all(e.get("code") == -32700 and "NUL byte" in e.get("message", "") for e in errs), out)
check("nothing before or after a NUL byte acted on (no answer with ids 20 to 23)",
      not any(i in ids for i in (20, 21, 22, 23)), ids)
check("the server goes on: ping 24 answered", ids[-1:] == [24] and out[-1].get("result") == {}, out[-1:])
sys.exit(1 if bad else 0)
PY
finish
