#!/usr/bin/env bash
# The NVML shim read back through dlopen by nvml-read, without ingero-top:
# scripted values from SHIM_NVML and from a file changed while a reader
# runs, per-process memory through the v1/v2/v3 entry points, errors for
# chosen calls and devices, a slow call, a call that hangs until the file
# changes, and one that hangs for good. No root, no GPU. Exit 0 pass, 1 fail.
# shellcheck source=tests/integration/shim_lib.sh
. "$(dirname "$0")/shim_lib.sh"

NVML=$SHIMDIR/libnvidia-ml.so.1
READ=$SHIMDIR/nvml-read
CONF=$TMP/nvml.conf
export SHIM_NVML_FILE=$CONF
MIB=1048576

# nvconf LINES...: replaces the script file whole (by rename, as tests must).
nvconf() { printf '%s\n' "$@" >"$CONF.tmp" && mv "$CONF.tmp" "$CONF"; }
# val KEY FILE: the value printed for KEY (the first sample's).
val() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$2"; }
# want WHAT FILE KEY VALUE: one value read back.
want() {
	local got
	got=$(val "$3" "$2")
	if [ "$got" = "$4" ]; then pass "$1: $3 = $4"; else fail "$1: $3 = '$got', want '$4'"; fi
}

echo "exported symbols"
missing=$(lacks "$NVML" nvmlInit nvmlInit_v2 nvmlShutdown nvmlErrorString nvmlDeviceGetCount_v2 \
	nvmlDeviceGetHandleByIndex_v2 nvmlDeviceGetName nvmlDeviceGetUtilizationRates \
	nvmlDeviceGetMemoryInfo nvmlDeviceGetMemoryInfo_v2 nvmlDeviceGetPowerUsage \
	nvmlDeviceGetEnforcedPowerLimit nvmlDeviceGetTemperature nvmlDeviceGetClockInfo \
	nvmlDeviceGetComputeRunningProcesses nvmlDeviceGetComputeRunningProcesses_v2 \
	nvmlDeviceGetComputeRunningProcesses_v3)
if [ -z "$missing" ]; then pass "libnvidia-ml.so.1 exports the NVML names a monitor uses"
else fail "libnvidia-ml.so.1 lacks:$missing"; fi
extra=$(exports "$NVML" | grep -v '^nvml[A-Z]' | tr '\n' ' ')
if [ -z "$extra" ]; then pass "libnvidia-ml.so.1 exports no internal helper"
else fail "libnvidia-ml.so.1 exports internal helpers: $extra"; fi

echo "scripted values"
nvconf "devices=2" "0.name=NVIDIA H100 80GB HBM3" "0.util.gpu=87" "0.util.mem=41" \
	"0.mem.total_mib=81559" "0.mem.used_mib=40000" "0.mem.reserved_mib=500" "0.power_mw=351234" \
	"0.power_limit_mw=700000" "0.temp_c=66" "0.clock.sm_mhz=1755" "0.procs=4242:30000,4343:na" \
	"# a comment" "1.util.gpu=3"
SHIM_STATS=$TMP/nv.stats "$READ" --lib "$NVML" >"$TMP/v.out" 2>"$TMP/v.err" ||
	fail "nvml-read exited non-zero: $(cat "$TMP/v.err")"
want file "$TMP/v.out" count 2
want file "$TMP/v.out" dev0.name "NVIDIA H100 80GB HBM3"
want file "$TMP/v.out" dev0.util.gpu 87
want file "$TMP/v.out" dev0.util.mem 41
want file "$TMP/v.out" dev0.mem.total $((81559 * MIB))
want file "$TMP/v.out" dev0.mem.used $((40500 * MIB))
want file "$TMP/v.out" dev0.mem.free $(((81559 - 40500) * MIB))
want file "$TMP/v.out" dev0.mem2.used $((40000 * MIB))
want file "$TMP/v.out" dev0.mem2.reserved $((500 * MIB))
want file "$TMP/v.out" dev0.power_mw 351234
want file "$TMP/v.out" dev0.power_limit_mw 700000
want file "$TMP/v.out" dev0.temp_c 66
want file "$TMP/v.out" dev0.sm_mhz 1755
want file "$TMP/v.out" dev1.name "Shim GPU 1"
want file "$TMP/v.out" dev1.util.gpu 3
want file "$TMP/v.out" dev1.procs.v3 0
procs=$(grep '^dev0.procs.v[123].proc ' "$TMP/v.out" | awk '{ print $1, $2, $3 }' | sort | tr '\n' ';')
want_procs="dev0.procs.v1.proc 4242 $((30000 * MIB));dev0.procs.v1.proc 4343 18446744073709551615;"
want_procs="${want_procs}dev0.procs.v2.proc 4242 $((30000 * MIB));dev0.procs.v2.proc 4343 18446744073709551615;"
want_procs="${want_procs}dev0.procs.v3.proc 4242 $((30000 * MIB));dev0.procs.v3.proc 4343 18446744073709551615;"
if [ "$procs" = "$want_procs" ]; then
	pass "per-process memory through v1 (16-byte), v2 and v3 (24-byte) entries; na = NVML_VALUE_NOT_AVAILABLE"
else
	fail "processes: '$procs', want '$want_procs'"
fi
if grep -q '^dev0.procs.v3.proc 4242 [0-9]* ffffffff ffffffff$' "$TMP/v.out"; then
	pass "instance ids are ~0 outside MIG"
else
	fail "instance ids: $(grep '^dev0.procs.v3.proc' "$TMP/v.out" | head -1)"
fi
n=$(awk '$2 == "nvmlDeviceGetUtilizationRates" { print $3 }' "$TMP/nv.stats")
if [ "$n" = 2 ]; then pass "SHIM_STATS counts NVML calls (2 utilisation reads for 2 devices)"
else fail "SHIM_STATS: nvmlDeviceGetUtilizationRates $n, want 2"; fi
# The environment is the base, the file is read after it.
SHIM_NVML="devices=1;0.temp_c=12;0.power_mw=5" "$READ" --lib "$NVML" >"$TMP/env.out" 2>&1
want "environment, file over it" "$TMP/env.out" dev0.temp_c 66
SHIM_NVML_FILE=$TMP/none SHIM_NVML="devices=1;0.temp_c=12;0.power_mw=5" "$READ" --lib "$NVML" >"$TMP/env.out" 2>&1
want "environment alone" "$TMP/env.out" dev0.temp_c 12
want "environment alone" "$TMP/env.out" dev0.power_mw 5
SHIM_NVML="devices=1;0.temp_c=hot" SHIM_NVML_FILE=$TMP/none "$READ" --lib "$NVML" >"$TMP/bad.out" 2>"$TMP/bad.err"
if grep -q "ignoring 0.temp_c=hot" "$TMP/bad.err" && [ "$(val dev0.temp_c "$TMP/bad.out")" = 35 ]; then
	pass "a bad setting is reported on stderr and the default kept"
else
	fail "bad setting: $(cat "$TMP/bad.err")"
fi

echo "values change while a reader runs"
nvconf "0.util.gpu=10"
"$READ" --lib "$NVML" --repeat 400 --interval-ms 10 >"$TMP/live.out" 2>&1 &
rd=$!
BG_PIDS+=("$rd")
for _ in $(seq 200); do grep -q '^dev0.util.gpu 10$' "$TMP/live.out" && break; sleep 0.02; done
nvconf "0.util.gpu=90"
for _ in $(seq 200); do grep -q '^dev0.util.gpu 90$' "$TMP/live.out" && break; sleep 0.02; done
kill "$rd" 2>/dev/null
wait "$rd" 2>/dev/null
seq_seen=$(awk '$1 == "dev0.util.gpu" && $2 != last { printf "%s ", $2; last = $2 }' "$TMP/live.out")
if [ "$seq_seen" = "10 90 " ]; then pass "the file is re-read: one reader saw util 10 then 90"
else fail "live change: values seen in order: '$seq_seen'"; fi

echo "errors"
nvconf "devices=2" "error.nvmlDeviceGetPowerUsage=3" "1.error.nvmlDeviceGetTemperature=15" \
	"error.nvmlDeviceGetComputeRunningProcesses_v3=999"
"$READ" --lib "$NVML" >"$TMP/e.out" 2>&1
want "error for every device" "$TMP/e.out" dev0.power_mw "error 3 Not Supported"
want "error for every device" "$TMP/e.out" dev1.power_mw "error 3 Not Supported"
want "error for one device" "$TMP/e.out" dev1.temp_c "error 15 GPU is lost"
want "only that device" "$TMP/e.out" dev0.temp_c 35
want "error of one entry point" "$TMP/e.out" dev0.procs.v3 "error 999 Unknown Error"
want "not the others" "$TMP/e.out" dev0.procs.v2 0
nvconf "error.nvmlInit_v2=9"
"$READ" --lib "$NVML" >"$TMP/i.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && [ "$(val init "$TMP/i.out")" = "error 9 Driver Not Loaded" ]; then
	pass "a failing nvmlInit_v2 (9, Driver Not Loaded)"
else
	fail "failing init: exit $rc: $(cat "$TMP/i.out")"
fi
nvconf ""
"$READ" --lib "$NVML" --skip-init >"$TMP/u.out" 2>&1
want "calls before nvmlInit" "$TMP/u.out" count "error 1 Uninitialized"

echo "slow and hanging calls"
nvconf "delay_us.nvmlDeviceGetTemperature=300000"
t0=$(date +%s%N)
"$READ" --lib "$NVML" >"$TMP/d.out" 2>&1
dt=$((($(date +%s%N) - t0) / 1000000))
if [ "$dt" -ge 300 ] && [ "$(val dev0.temp_c "$TMP/d.out")" = 35 ]; then
	pass "delay_us: nvmlDeviceGetTemperature took the scripted 300 ms (run: $dt ms), then answered"
else
	fail "delay: run took $dt ms: $(val dev0.temp_c "$TMP/d.out")"
fi
# Hangs until the file changes: the reader stops before the power line.
nvconf "0.power_mw=1234" "hang.nvmlDeviceGetPowerUsage=change"
"$READ" --lib "$NVML" >"$TMP/h.out" 2>&1 &
rd=$!
BG_PIDS+=("$rd")
for _ in $(seq 250); do grep -q '^dev0.mem2.reserved' "$TMP/h.out" && break; sleep 0.02; done
sleep 0.5
if kill -0 "$rd" 2>/dev/null && grep -q '^dev0.mem2.reserved' "$TMP/h.out" &&
	! grep -q '^dev0.power_mw' "$TMP/h.out"; then
	pass "hang=change: nvmlDeviceGetPowerUsage blocks (0.5 s and counting)"
else
	fail "hang=change did not block: $(tail -2 "$TMP/h.out" | tr '\n' ' ')"
fi
nvconf "0.power_mw=4321"
for _ in $(seq 250); do kill -0 "$rd" 2>/dev/null || break; sleep 0.02; done
if ! kill -0 "$rd" 2>/dev/null && wait "$rd" && [ "$(val dev0.power_mw "$TMP/h.out")" = 4321 ]; then
	pass "hang=change: the call returns once the file changes, with the new value"
else
	fail "hang=change: after the change: $(tail -3 "$TMP/h.out" | tr '\n' ' ')"
fi
nvconf "1.hang.nvmlDeviceGetUtilizationRates=forever" "devices=2"
"$READ" --lib "$NVML" >"$TMP/f.out" 2>&1 &
rd=$!
BG_PIDS+=("$rd")
for _ in $(seq 250); do grep -q '^dev1.name' "$TMP/f.out" && break; sleep 0.02; done
nvconf "devices=2"
sleep 0.5
if kill -0 "$rd" 2>/dev/null && grep -q '^dev0.util.gpu 0$' "$TMP/f.out" &&
	! grep -q '^dev1.util.gpu' "$TMP/f.out"; then
	pass "hang=forever on device 1 only: device 0 answered, device 1 still blocked after the file changed"
else
	fail "hang=forever: $(tail -2 "$TMP/f.out" | tr '\n' ' ')"
fi
kill "$rd" 2>/dev/null

finish test_shim_nvml
