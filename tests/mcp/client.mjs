// A real MCP client (the official TypeScript SDK, pinned in package.json,
// installed by `make mcp-client`) driving `ingero-top mcp` over stdio, for
// tests/integration/test_mcp.sh. Prints "ok ..." / "FAIL ..." lines and
// exits 1 when a check failed.
//
//   node client.mjs replay IG DB SUMMARY.json    every tool on a recording, answers
//                                                checked against --json --summary
//   node client.mjs live IG OUT.json -- ARGS...  every tool on a live session
//                                                (ingero-top mcp ARGS), answers saved
//   node client.mjs compare OUT.json SUMMARY.json  saved live answers vs the summary
//                                                of the recording the session made
//   node client.mjs sqlneg IG DB                 the negative matrix of run_sql
//   node client.mjs hostile IG DB MARK           names holding MARK come back
//                                                marked and without control chars
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readFileSync, writeFileSync } from "node:fs";

let fails = 0;
const ok = (m) => console.log(`ok   ${m}`);
const bad = (m) => { console.log(`FAIL ${m}`); fails++; };
const check = (cond, m) => (cond ? ok(m) : bad(m));
const eq = (got, want, m) => {
	const g = JSON.stringify(got), w = JSON.stringify(want);
	if (g === w) ok(m);
	else bad(`${m}: got ${g.slice(0, 300)}, want ${w.slice(0, 300)}`);
};

const TOOLS = ["get_check", "get_overview", "get_trace_stats", "get_causal_chains", "get_process",
	"get_stacks", "get_slow_calls", "get_timeline", "explain", "run_sql"];

// The answer with every {"untrusted_text": s} back to s (to compare with --json).
const unmark = (v) => {
	if (Array.isArray(v)) return v.map(unmark);
	if (v && typeof v === "object") {
		const k = Object.keys(v);
		if (k.length === 1 && k[0] === "untrusted_text") return v.untrusted_text;
		return Object.fromEntries(k.map((x) => [x, unmark(v[x])]));
	}
	return v;
};

async function connect(ig, args) {
	const transport = new StdioClientTransport({ command: ig, args, stderr: "inherit" });
	const client = new Client({ name: "ingero-top-test", version: "1.0.0" });
	await client.connect(transport);
	return client;
}

async function call(client, name, args = {}) {
	const r = await client.callTool({ name, arguments: args });
	if (r.isError) return { error: r.content?.[0]?.text ?? "", raw: r };
	// the text content is the same JSON as structuredContent
	const text = r.content?.[0]?.text;
	if (text === undefined || JSON.stringify(JSON.parse(text)) !== JSON.stringify(r.structuredContent))
		bad(`${name}: the text content differs from structuredContent`);
	return { data: unmark(r.structuredContent), marked: r.structuredContent, raw: r };
}

// Every tool once, with arguments that exercise it; the answers by name.
async function callAll(client) {
	const a = {};
	a.get_check = await call(client, "get_check");
	a.get_overview = await call(client, "get_overview");
	a.get_trace_stats = await call(client, "get_trace_stats");
	a.get_trace_stats_window = await call(client, "get_trace_stats", { scope: "window" });
	a.get_causal_chains = await call(client, "get_causal_chains", { limit: 64 });
	const procs = a.get_overview.data?.processes ?? [];
	const pid = procs.find((p) => p.cuda)?.pid ?? procs[0]?.pid;
	a.pid = pid;
	a.get_process = pid ? await call(client, "get_process", { pid }) : { error: "no process" };
	const tid = a.get_process.data?.stats?.time?.tid;
	a.get_stacks = await call(client, "get_stacks", { limit: 5 });
	a.get_slow_calls = await call(client, "get_slow_calls", { limit: 5 });
	a.get_slow_calls_range = await call(client, "get_slow_calls", { since: "+0s", until: "-0s", limit: 5 });
	a.get_trace_stats_range = await call(client, "get_trace_stats", { since: "+0s", until: "-0s" });
	a.tid = tid;
	a.get_timeline = await call(client, "get_timeline", { tid, since: "+0s", limit: 50 });
	a.explain = await call(client, "explain");
	a.explain_md = await client.callTool({ name: "explain", arguments: { format: "markdown" } });
	a.run_sql = await call(client, "run_sql", {
		sql: "SELECT COUNT(*) AS n FROM events e JOIN sources s ON s.id = e.source WHERE s.name IN ('CUDA', 'DRIVER')" });
	// the calls a --record-rate recording summarised (no such table: none)
	a.run_sql_sum = await call(client, "run_sql", {
		sql: "SELECT COALESCE(SUM(calls), 0) AS n FROM ingero_top_summaries" });
	return a;
}

// The answers against the --json --summary object of the same data.
function compare(a, s, live) {
	for (const t of TOOLS)
		check(a[t] && !(a[t].error && !(live && t === "run_sql")), `${t} answered${a[t]?.error ? ": " + a[t].error : ""}`);
	const pct = (l) => l.map((o) => [o.op, o.calls, o.p50_ns, o.p90_ns, o.p95_ns, o.p99_ns, o.p999_ns, o.max_ns, o.mean_ns]);
	if (live) // (the live clock ran on past the last event: rates and shares differ)
		eq(pct(a.get_trace_stats.data.ops), pct(s.ops), "get_trace_stats: calls and percentiles of every op equal --json --summary of the recording");
	else
		eq(a.get_trace_stats.data.ops, s.ops, "get_trace_stats: per-op statistics equal --json --summary ops");
	eq(a.get_trace_stats_range.data.ops.map((o) => [o.op, o.calls, o.p50_ns, o.p99_ns, o.max_ns]),
		s.ops.map((o) => [o.op, o.calls, o.p50_ns, o.p99_ns, o.max_ns]),
		"get_trace_stats over the whole range (+0s .. -0s): the same calls and percentiles");
	const key = (c) => [c.id, c.class, c.severity, c.impact, c.pid, c.culprit_pid];
	const byId = (l) => l.map(key).sort((x, y) => (x[0] < y[0] ? -1 : 1));
	const classes = (l) => [...new Set(l.map((c) => `${c.class}/${c.pid}`))].sort();
	if (live) {
		eq(classes(a.get_causal_chains.data.chains), classes(s.chains), "get_causal_chains: the classes and processes of the recording's chains");
		eq(pct(a.explain.data.ops), pct(s.ops), "explain: per-op table equals the recording's");
	} else {
		eq(byId(a.get_causal_chains.data.chains), byId(s.chains), "get_causal_chains: the chains of --json --summary (id, class, severity, impact, pid, culprit)");
		eq(byId(a.explain.data.chains), byId(s.chains), "explain: the same chains");
		eq(a.explain.data.ops, s.ops, "explain: per-op table equals --json --summary ops");
	}
	const sp = s.procs.filter((p) => p.cuda);
	eq(a.get_overview.data.processes.filter((p) => p.cuda).map((p) => p.pid).sort(), sp.map((p) => p.pid).sort(),
		"get_overview: the CUDA processes of --json --summary");
	const want = sp.find((p) => p.pid === a.pid);
	if (live) {
		eq(a.get_process.data.stats.calls_life, want?.calls_life, `get_process ${a.pid}: calls equal --json --summary`);
	} else {
		eq(a.get_process.data.stats, want, `get_process ${a.pid}: equals its --json --summary procs entry`);
		const calls = s.ops.reduce((n, o) => n + o.calls, 0);
		const summarised = a.run_sql_sum?.error ? 0 : a.run_sql_sum.data.rows[0][0];
		eq(a.get_overview.data.summarised, summarised, "get_overview: the calls the recording summarised");
		eq(a.run_sql.data.rows[0][0] + summarised, calls,
			"run_sql: CUDA and driver rows + the calls summarised = the calls of --json --summary");
	}
	const slowest = Math.max(...s.ops.map((o) => o.max_ns));
	eq(a.get_slow_calls.data.calls[0]?.dur_ns, slowest, "get_slow_calls: the slowest call is the largest max_ns of --json --summary");
	eq(a.get_slow_calls_range.data.calls[0]?.dur_ns, slowest, "get_slow_calls over the whole range: the same call");
	const durs = a.get_slow_calls.data.calls.map((c) => c.dur_ns);
	check(durs.every((d, i) => i === 0 || durs[i - 1] >= d), "get_slow_calls: slowest first");
	const ev = a.get_timeline.data.events;
	check(ev.length > 0 && ev.every((e) => e.tid === a.tid), `get_timeline tid ${a.tid}: ${ev.length} events, all of that thread`);
	check(ev.every((e, i) => i === 0 || ev[i - 1].ts_ns + (ev[i - 1].dur_ns ?? 0) <= e.ts_ns + (e.dur_ns ?? 0)),
		"get_timeline: in completion order");
	const st = a.get_stacks.data.stacks;
	check(st.length > 0 && st.every((x) => x.calls <= (s.ops.find((o) => o.op === x.op)?.calls ?? 0)),
		`get_stacks: ${st.length} stacks, each with no more calls than its op`);
	check(a.get_check.data.checks.length >= 5, `get_check: ${a.get_check.data.checks.length} checks`);
	eq(a.get_trace_stats_window.data.scope, "window", "get_trace_stats scope window");
	const md = a.explain_md.content?.[0]?.text ?? "";
	check(!a.explain_md.isError && md.startsWith("# Incident report") && md.includes("## Findings"),
		"explain format markdown: the Markdown report");
}

async function modeReplay(ig, db, summary) {
	const s = JSON.parse(readFileSync(summary, "utf8"));
	const client = await connect(ig, ["mcp", "--replay", db]);
	const sv = client.getServerVersion();
	eq(sv?.name, "ingero-top", "serverInfo.name");
	const caps = client.getServerCapabilities();
	check(caps?.tools && caps?.prompts, "capabilities: tools and prompts");
	const tools = (await client.listTools()).tools;
	eq(tools.map((t) => t.name).sort(), [...TOOLS].sort(), "tools/list: the ten tools");
	check(tools.every((t) => t.inputSchema?.type === "object" && t.inputSchema.additionalProperties === false &&
		t.description && t.annotations?.readOnlyHint === true), "every tool has a JSON Schema (object, no extra members), a description, readOnlyHint");
	const prompts = (await client.listPrompts()).prompts;
	eq(prompts.map((p) => p.name), ["investigate"], "prompts/list: investigate");
	const p = await client.getPrompt({ name: "investigate", arguments: { question: "why did p99 jump?" } });
	const pt = p.messages?.[0]?.content?.text ?? "";
	check(TOOLS.every((t) => pt.includes(t)) && pt.includes("untrusted_text") && pt.includes("why did p99 jump?"),
		"prompts/get investigate: walks through every tool, says untrusted text is data, carries the question");
	const a = await callAll(client);
	compare(a, s, false);
	// errors: a bad argument is a JSON-RPC error, a problem of the data a tool result
	for (const [args, what] of [[{ name: "nope", arguments: {} }, "an unknown tool"],
		[{ name: "get_process", arguments: { pid: "x" } }, "pid not an integer"],
		[{ name: "get_process", arguments: {} }, "a required argument missing"],
		[{ name: "get_stacks", arguments: { colour: 1 } }, "an unknown argument"],
		[{ name: "get_trace_stats", arguments: { scope: "year" } }, "a value outside the enum"]]) {
		try {
			await client.callTool(args);
			bad(`${what}: no error`);
		} catch (e) {
			check(e.code === -32602 && e.message.length > 10, `${what}: JSON-RPC error -32602 (${e.message.slice(0, 80)})`);
		}
	}
	const r = await client.callTool({ name: "get_process", arguments: { pid: 4194304 } });
	check(r.isError === true && /no process 4194304/.test(r.content[0].text), `a process not in the data: isError with a sentence (${r.content[0].text.slice(0, 60)})`);
	const r2 = await client.callTool({ name: "get_trace_stats", arguments: { since: "yesterday" } });
	check(r2.isError === true && /not a time/.test(r2.content[0].text), "a time that cannot be read: isError saying what to give");
	const r3 = await client.callTool({ name: "explain", arguments: { chain: "chain-9999" } });
	check(r3.isError === true && /no chain/.test(r3.content[0].text), "an unknown chain: isError listing the chains");
	await client.close();
}

async function modeLive(ig, out, args) {
	const client = await connect(ig, ["mcp", ...args]);
	const t0 = Date.now();
	let o;
	const counts = [];
	for (;;) { // the session runs in the server: ask again until the command is done
		o = await call(client, "get_overview");
		counts.push(o.data?.events ?? 0);
		if (o.data?.done || Date.now() - t0 > 120000) break;
		await new Promise((r) => setTimeout(r, 300));
	}
	check(o.data?.done === true, `live: the command finished, seen by asking again (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
	const grew = counts.filter((c, i) => i && c > counts[i - 1]).length;
	check(grew >= 2, `live: the answers followed the running session (events seen: ${counts.join(" ")})`);
	const a = await callAll(client);
	const sql = a.run_sql;
	check(sql.error && /traces live/.test(sql.error), "live run_sql: refused with a sentence");
	writeFileSync(out, JSON.stringify(a));
	await client.close();
}

async function modeSqlneg(ig, db) {
	const client = await connect(ig, ["mcp", "--sql-timeout", "1", "--replay", db]);
	const cases = [
		["INSERT INTO events(timestamp, pid, tid, source, op, duration) VALUES (1, 1, 1, 1, 1, 1)", /refused: INSERT/],
		["UPDATE events SET pid = 0", /refused: UPDATE/],
		["DELETE FROM events", /refused: DELETE/],
		["DROP TABLE events", /refused: DROP TABLE/],
		["CREATE TABLE x(a)", /refused: CREATE TABLE/],
		["ATTACH DATABASE '/tmp/ig-mcp-evil.db' AS evil", /refused: ATTACH/],
		["PRAGMA writable_schema = 1", /refused: PRAGMA writable_schema/],
		["PRAGMA journal_mode = DELETE", /refused: PRAGMA journal_mode/],
		["SELECT load_extension('/tmp/x.so')", /refused: function load_extension/],
		["SELECT 1; DELETE FROM events", /refused: several statements/],
		["VACUUM", /refused/],
		["WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", /time limit/],
	];
	for (const [sql, re] of cases) {
		const t = Date.now();
		const r = await client.callTool({ name: "run_sql", arguments: { sql } });
		const text = r.content?.[0]?.text ?? "";
		check(r.isError === true && re.test(text) && !text.includes("\n"),
			`run_sql ${sql.slice(0, 40)}: ${text.slice(0, 70)} (${Date.now() - t} ms)`);
	}
	const r = await client.callTool({ name: "run_sql", arguments: {
		sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000000) SELECT x FROM c", max_rows: 5000 } });
	const d = r.structuredContent;
	check(!r.isError && d.row_count === 5000 && d.truncated === "rows" && /cut at 5000 rows/.test(d.note),
		`run_sql of a million rows: cut at 5000 with a note (${d?.note})`);
	const r2 = await client.callTool({ name: "run_sql", arguments: { sql: "SELECT COUNT(*) FROM events" } });
	check(!r2.isError, "run_sql still answers after the refusals");
	await client.close();
}

// Every string holding mark must be an untrusted_text value without control
// characters; returns the number of such strings.
function walkMarked(v, key, mark, where) {
	let n = 0;
	if (typeof v === "string") {
		if (v.includes(mark)) {
			n++;
			if (key !== "untrusted_text") bad(`${where}: "${mark}" in member ${key} is not marked`);
			if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(v))
				bad(`${where}: a marked text still holds a control character: ${JSON.stringify(v)}`);
		}
	} else if (Array.isArray(v)) {
		for (const x of v) n += walkMarked(x, key, mark, where);
	} else if (v && typeof v === "object") {
		for (const k of Object.keys(v)) n += walkMarked(v[k], k, mark, where);
	}
	return n;
}

async function modeHostile(ig, db, mark) {
	const client = await connect(ig, ["mcp", "--replay", db]);
	let seen = 0;
	const a = await callAll(client);
	for (const [name, r] of Object.entries(a)) {
		if (!r?.raw || r.error) continue; // an error is a sentence, not JSON
		seen += walkMarked(r.marked, null, mark, name);
		walkMarked(JSON.parse(r.raw.content[0].text), null, mark, `${name} text`);
	}
	check(seen > 0, `hostile names: ${seen} strings hold the hostile name, every one marked and stripped`);
	const md = a.explain_md.content[0].text;
	const outside = md.split("\u27e6").map((seg, i) => (i === 0 ? seg : seg.split("\u27e7").slice(1).join("\u27e7")));
	check(md.includes(mark) && outside.every((seg) => !seg.includes(mark)),
		"explain markdown: the hostile name only between \u27e6 and \u27e7");
	check(!/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(md), "explain markdown: no control character");
	await client.close();
}

const [mode, ...rest] = process.argv.slice(2);
try {
	if (mode === "replay") await modeReplay(rest[0], rest[1], rest[2]);
	else if (mode === "live") await modeLive(rest[0], rest[1], rest.slice(3));
	else if (mode === "compare") compare(JSON.parse(readFileSync(rest[0], "utf8")), JSON.parse(readFileSync(rest[1], "utf8")), true);
	else if (mode === "sqlneg") await modeSqlneg(rest[0], rest[1]);
	else if (mode === "hostile") await modeHostile(rest[0], rest[1], rest[2]);
	else { console.log("usage: see the head of client.mjs"); process.exit(2); }
} catch (e) {
	bad(`${mode}: ${e.stack ?? e}`);
}
console.log(fails ? `${fails} check(s) failed` : "all checks passed");
process.exit(fails ? 1 : 0);
