#!/usr/bin/env bash
# needs: root
# The device meters in the viewer, live, with the NVML shim scripted by a
# file rewritten while the viewer runs: no pane without NVML; htop-style
# meters with the scripted values, "-" for a call that fails; the
# workload's GPU memory in the processes pane and on its process screen;
# one line per device on a small terminal, a summary above four devices; a
# hanging NVML call named while the screen and the keys keep working, gone
# when the call returns; q with a call hung for good still quits.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
command -v tmux >/dev/null || skip "tmux is not installed"
[ -x "$IG" ] || skip "$IG not built"
WL=${WL:-$PWD/${BUILD:-build}/workload}
NV=$PWD/${BUILD:-build}/shim/libnvidia-ml.so.1
[ -x "$WL" ] && [ -r "$NV" ] || skip "$WL or $NV not built (make test-build)"
[ "$(id -u)" = 0 ] || skip "needs root"
"$IG" check >"$TMPD/check.txt" 2>&1 || skip "ingero-top check fails here: $(tail -n 1 "$TMPD/check.txt")"

SCRIPT=$TMPD/nvml.script
script() { printf '%s\n' "$@" >"$SCRIPT.new" && mv "$SCRIPT.new" "$SCRIPT"; }
WLARGS=(--iters 7777777 --kernels 2 --kernel-us 300 --sync-every 1 --host-us 100)

# Without NVML: no device pane, the op table right under the header.
start 120 40 env INGERO_TOP_NVML=/nonexistent/libnvidia-ml.so.1 "$IG" --no-system-libs -- "$WL" "${WLARGS[@]}"
wait_for 'cudaLaunchKernel +[0-9]' 30
expect_not '^GPU[0-9]' "no device pane without NVML"
[ "$(line 4 | cut -c1-9)" = "! GPU API" ] && ok "the op table follows the header" || fail "line 4: $(line 4)"
stop

script devices=2 "0.name=NVIDIA H100 80GB HBM3" 0.util.gpu=87 0.util.mem=41 0.mem.used_mib=32768 \
	0.power_mw=350000 0.temp_c=65 1.util.gpu=12 1.error.nvmlDeviceGetPowerUsage=3
start 140 45 env INGERO_TOP_NVML="$NV" SHIM_NVML_FILE="$SCRIPT" "$IG" --no-system-libs -- "$WL" "${WLARGS[@]}"
wait_for '^GPU0 H100 80GB HBM3' 30
expect 'UTIL\[\|+ *87%\]' "GPU0 utilisation meter at 87%"
expect 'MEM \[\|+ *32.0GiB/80.0GiB\]' "GPU0 memory meter"
expect 'PWR \[\|+ *350W/700W\] +65C +SM 1980MHz +MEM-UTIL 41%' "GPU0 power, temperature, SM clock"
expect '^GPU1 Shim GPU 1 +UTIL\[\|* +12%\]' "GPU1 at 12%"
expect 'PWR \[ +-/700W\]' "GPU1 power: the failing call shows -"
# the workload's GPU memory, joined to its row and its process screen
wl=$(pgrep -f -- "^$WL --iters 7777777" | head -n 1)
[ -n "$wl" ] || fail "no workload process"
script devices=2 "0.name=NVIDIA H100 80GB HBM3" 0.util.gpu=87 0.mem.used_mib=32768 "0.procs=$wl:1536"
expect "^ +$wl workload .* 1\\.5GiB *\$" "GPU MEM column: 1.5GiB for workload[$wl]"
keys Tab
keys g
keys Enter
expect "^ workload\\[$wl\\] .* GPU mem 1\\.5GiB" "process screen: GPU mem 1.5GiB"
keys Escape

# smaller terminals: one line per device, then the summary above four
resize 60 20
expect '^GPU0\[\|+ *87%\] MEM 32.0GiB/80.0GiB' "60x20: one line per device"
expect '^GPU1\[' "60x20: the second device"
resize 140 45

# a call that hangs until the script changes
script devices=2 0.util.gpu=55 "hang.nvmlDeviceGetTemperature=change"
wait_for 'NVML: nvmlDeviceGetTemperature not answering for [0-9]+ s' 30
ok "the hanging call is named"
c1=$(line 1 | grep -oE '[0-9]{2}:[0-9]{2}:[0-9]{2}')
for _ in $(seq $((TUI_WAIT * 10))); do # a second's redraw, however slow the machine
	c2=$(line 1 | grep -oE '[0-9]{2}:[0-9]{2}:[0-9]{2}')
	[ -n "$c1" ] && [ "$c1" != "$c2" ] && break
	sleep 0.1
done
[ -n "$c1" ] && [ "$c1" != "$c2" ] && ok "the clock moves on ($c1, $c2)" || fail "clock stuck at '$c1' '$c2'"
keys p
expect ' PAUSED ' "keys still work while NVML hangs"
keys p
script devices=2 0.util.gpu=44
wait_gone 'not answering' 30
expect 'UTIL\[\|+ *44%\]' "values move again once the call returns"

# hung for good: q still quits, promptly
script devices=2 "hang.nvmlDeviceGetUtilizationRates=forever"
wait_for 'NVML: nvmlDeviceGetUtilizationRates not answering' 30
keys q
wait_exit 15
ok "q quits with an NVML call hung for good"
stop

# above four devices: a summary (NVML counts the devices once, at start);
# NCCL calls grouped under their own title
script devices=6 0.util.gpu=87 3.util.gpu=5 5.util.gpu=99
start 140 45 env INGERO_TOP_NVML="$NV" SHIM_NVML_FILE="$SCRIPT" "$IG" --no-system-libs -- "$WL" "${WLARGS[@]}" \
	--nccl --nccl-ranks 1 --nccl-ops allreduce --nccl-types float32
expect '^NCCL *$' "the NCCL group of the op table"
expect '^  ncclAllReduce +[0-9]' "ncclAllReduce under it"
expect '^GPUs 6  util avg 32% min 0% \(GPU1\) max 99% \(GPU5\)  mem 0B/480.0GiB  power 0.4kW/4.2kW  temp max 35C' \
	"six devices: a summary"
expect '^0:87% +1:0% +2:0% +3:5% +4:0% +5:99%' "six devices: each one's utilisation"
expect_not '^GPU0 ' "six devices: no meters one by one"
stop

# HIP calls under their own title
start 120 40 env INGERO_TOP_NVML=/nonexistent "$IG" --no-system-libs -- "$WL" --hip --iters 7777777 \
	--kernels 2 --kernel-us 300
expect '^HIP API *$' "the HIP API group of the op table"
expect '^  hipLaunchKernel +[0-9]' "hipLaunchKernel under it"
