#!/usr/bin/env bash
# needs: root
# GPU device meters from the NVML shim (values scripted in a file the test
# rewrites while ingero-top runs): `check` says in one INFO line whether
# NVML works and why not; live --json frames carry every scripted value,
# null for a call that fails, the workload's GPU memory joined to its
# process; a hanging NVML call never stalls the batch loop, is named in the
# status while it hangs, and sampling resumes after it; ingero-top exits
# on time with a call hung for good; the recording replays the samples.
. "$(dirname "$0")/lib.sh"
need_root

NV=$B/shim/libnvidia-ml.so.1
SCRIPT=$TMP/nvml.script
script() { printf '%s\n' "$@" >"$SCRIPT.new" && mv "$SCRIPT.new" "$SCRIPT"; }

# Wall-clock bounds are this machine's: the same command without the hang,
# timed first, plus what the hang may add (`check` waits 3 s for NVML, a
# stop 0.3 s for its thread), plus as much again for the noise: on a VM 30
# times slower a fixed 10 s would fail a check that returned on time.
ms_now() { date +%s%3N; }
# bound_s NORMAL_MS ADD_MS: seconds a run may take: twice the normal run,
# what the hang adds, 2 s
bound_s() { echo $(((2 * $1 + $2 + 2000 + 999) / 1000)); }

# --- check ------------------------------------------------------------------------
line() { env "$@" "$IG" check 2>/dev/null | grep '^INFO nvml'; }
l=$(line INGERO_TOP_NVML=/nonexistent/libnvidia-ml.so.1)
[[ $l == *"no device meters: /nonexistent/libnvidia-ml.so.1 not found"* ]] && ok "check, no library: $l" || bad "check, no library: '$l'"
t0=$(ms_now)
l=$(line INGERO_TOP_NVML="$NV" SHIM_NVML="devices=2;0.name=NVIDIA H100 80GB HBM3")
check_ms=$(($(ms_now) - t0))
[[ $l == *"device meters on: driver 580.95.05, 2 devices (NVIDIA H100 80GB HBM3, Shim GPU 1)"* ]] &&
	ok "check, NVML works: $l" || bad "check, NVML works: '$l'"
l=$(line INGERO_TOP_NVML="$NV" SHIM_NVML="error.nvmlInit_v2=9")
[[ $l == *"no device meters: nvmlInit_v2: Driver Not Loaded (9)"* ]] && ok "check, init fails: $l" || bad "check, init fails: '$l'"
t0=$(ms_now)
l=$(line INGERO_TOP_NVML="$NV" SHIM_NVML="hang.nvmlDeviceGetCount_v2=forever")
took=$(($(ms_now) - t0)) most=$(bound_s "$check_ms" 3300)
[[ $l == *"NVML did not answer within 3 s: nvmlDeviceGetCount_v2 not answering"* ]] &&
	ok "check, a call hangs: $l" || bad "check, a call hangs: '$l'"
[ "$took" -le $((1000 * most)) ] &&
	ok "check returns with the call still hung: $took ms (at most $most s: it takes $check_ms ms without)" ||
	bad "check took $took ms with the call hung, $check_ms ms without (at most $most s)"
[ "$(env INGERO_TOP_NVML="$NV" "$IG" check 2>/dev/null | grep -c nvml)" = 1 ] && ok "one line" || bad "not one line"

# --- live frames --------------------------------------------------------------------
"$WL" --wait-signal --iters 1000000 --kernels 2 --kernel-us 500 --sleep-us 500 >"$TMP/wl.out" 2>"$TMP/wl.err" &
wl=$!
cleanup_hooks+=("kill $wl 2>/dev/null")
wait_until 30 grep -q '^ready' "$TMP/wl.out" || bad "workload not ready"
script devices=2 "0.name=NVIDIA H100 80GB HBM3" 0.util.gpu=87 0.util.mem=41 0.mem.used_mib=32768 \
	0.power_mw=350000 0.temp_c=65 1.util.gpu=12 1.error.nvmlDeviceGetPowerUsage=3 \
	"0.procs=$wl:1536"
INGERO_TOP_NVML=$NV SHIM_NVML_FILE=$SCRIPT "$IG" --batch --json -d 0.5 --pid "$wl" \
	--record "$TMP/run.db" >"$TMP/frames.json" 2>"$TMP/ig.err" &
ig=$!
cleanup_hooks+=("kill $ig 2>/dev/null")
kill -USR1 "$wl"
# the last frame's GPU part as "key value" lines
gpu_view() {
	python3 - "$1" "$wl" <<'PY' 2>/dev/null
import json, sys
frames = []
for l in open(sys.argv[1]):
    try:
        frames.append(json.loads(l))
    except ValueError:
        pass
f = frames[-1]
print("frames", len(frames))
st = f["status"]
print("nvml", st.get("nvml"), st.get("nvml_stuck_ns", 0) > 0)
print("note", st.get("nvml_note", ""))
for g in f.get("gpus", []):
    i = g["index"]
    for k in ("name", "util_gpu_pct", "util_mem_pct", "mem_used", "mem_total", "power_mw",
              "power_limit_mw", "temp_c", "sm_mhz", "nvml_error"):
        print("gpu%d.%s %s" % (i, k, g.get(k)))
for p in f.get("gpu_procs", []):
    print("proc", p["pid"], p["dev"], p["mem_used"])
for p in f.get("procs", []):
    if p["pid"] == int(sys.argv[2]):
        print("procmem", p.get("gpu_mem_bytes"))
PY
}
has() { gpu_view "$TMP/frames.json" | grep -qx -- "$1"; }
wait_until 30 has "gpu0.util_gpu_pct 87" && ok "live: gpu0 utilisation 87%" || bad "live: no gpu0 util"
view=$(gpu_view "$TMP/frames.json")
for want in "gpu0.name H100 80GB HBM3" "gpu0.util_mem_pct 41" "gpu0.mem_used 34359738368" \
	"gpu0.mem_total 85899345920" "gpu0.power_mw 350000" "gpu0.power_limit_mw 700000" \
	"gpu0.temp_c 65" "gpu0.sm_mhz 1980" "gpu1.util_gpu_pct 12" "gpu1.power_mw None" \
	"gpu1.nvml_error 3" "proc $wl 0 1610612736" "procmem 1610612736" "nvml ok False"; do
	grep -qx -- "$want" <<<"$view" && ok "live: $want" || bad "live: no '$want'"
done

# a call starts failing: its value becomes null, the others stay
script devices=2 0.util.gpu=87 0.mem.used_mib=32768 0.error.nvmlDeviceGetTemperature=999 "0.procs=$wl:1536"
wait_until 30 has "gpu0.temp_c None" && ok "live: a failing call gives null" || bad "live: temp not null"
has "gpu0.util_gpu_pct 87" && ok "live: the other values stay" || bad "live: util lost"

# a call hangs until the script changes: frames keep coming, the call is named
script devices=2 0.util.gpu=55 "hang.nvmlDeviceGetMemoryInfo_v2=change"
wait_until 30 has "nvml ok True" && ok "live: the hanging call is reported" || bad "live: hang not reported"
gpu_view "$TMP/frames.json" | grep -q "^note nvmlDeviceGetMemoryInfo_v2 not answering for" &&
	ok "live: the status names nvmlDeviceGetMemoryInfo_v2" || bad "live: note '$(gpu_view "$TMP/frames.json" | grep ^note)'"
n0=$(gpu_view "$TMP/frames.json" | awk '$1 == "frames" {print $2}')
wait_until 30 bash -c "[ \$(grep -c '^{' '$TMP/frames.json') -ge $((n0 + 4)) ]" &&
	ok "live: the batch loop goes on while NVML hangs (frame $n0 and 4 more)" || bad "live: frames stopped"
script devices=2 0.util.gpu=33 "0.procs=$wl:1536"
wait_until 30 has "gpu0.util_gpu_pct 33" && ok "live: sampling resumes after the call returns" || bad "live: no resume"
has "nvml ok False" && ok "live: nothing stuck any more" || bad "live: still stuck"
kill -INT "$ig"
wait "$ig"
expect_eq "live: exit status" "$?" 0

# a call hung for good: ingero-top still exits on time (the same run
# without the hang first, for this machine's time)
script devices=1
t0=$(ms_now)
INGERO_TOP_NVML=$NV SHIM_NVML_FILE=$SCRIPT "$IG" --batch -n 3 -d 0.5 --pid "$wl" >"$TMP/fine.txt" 2>&1
fine_ms=$(($(ms_now) - t0))
script devices=1 "hang.nvmlDeviceGetUtilizationRates=forever"
t0=$(ms_now)
INGERO_TOP_NVML=$NV SHIM_NVML_FILE=$SCRIPT "$IG" --batch -n 3 -d 0.5 --pid "$wl" >"$TMP/hung.txt" 2>&1
rc=$?
took=$(($(ms_now) - t0)) most=$(bound_s "$fine_ms" 300)
expect_eq "hung for good: exit status" "$rc" 0
[ "$took" -le $((1000 * most)) ] &&
	ok "hung for good: exited in $took ms (at most $most s: $fine_ms ms without the hang)" ||
	bad "hung for good: $took ms, $fine_ms ms without the hang (at most $most s)"

# --- the recording ---------------------------------------------------------------------
rows=$(sqlite3 "$TMP/run.db" "SELECT COUNT(*) FROM events WHERE source = 8 AND op = 1")
[ "$rows" -gt 4 ] && ok "recorded device samples: $rows rows" || bad "recorded device samples: '$rows'"
chmod 644 "$TMP/run.db"
setpriv --reuid=65534 --regid=65534 --clear-groups "$IG" --batch --json --summary \
	--replay "$TMP/run.db" >"$TMP/rp.json" 2>/dev/null
rv=$(gpu_view "$TMP/rp.json")
grep -qx "gpu0.util_gpu_pct 33" <<<"$rv" && grep -qx "gpu0.power_limit_mw 700000" <<<"$rv" &&
	grep -qx "gpu1.nvml_error 0" <<<"$rv" && ok "replay: the last samples" ||
	{ bad "replay: device samples"; echo "$rv"; }
errs=$(sqlite3 "$TMP/run.db" "SELECT COUNT(*) FROM events WHERE source = 8 AND op = 1 AND cpu = 1 AND ret_code = 3")
[ "$errs" -gt 0 ] && ok "recorded: gpu1's NVML error ($errs samples)" || bad "recorded: no NVML error"
grep -qx "proc $wl 0 1610612736" <<<"$rv" && ok "replay: the process's GPU memory" || bad "replay: no process memory"
kill "$wl" 2>/dev/null
finish
