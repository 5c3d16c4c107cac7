#!/usr/bin/env bash
# needs: root
# Durations measured by the uprobes match the shim's simulated GPU times
# within 10 %, and off-CPU time inside a synchronisation is split correctly:
# blocked (sleeping) without contention; preempted, naming the hog, when a
# CPU hog shares the CPU, even when a task that wakes often and runs briefly
# (a ticker) is what first takes the CPU each time.
. "$(dirname "$0")/lib.sh"
need_root
# Two CPUs of the allowed set: ingero-top on the first, the workload (and
# the hog) on the second.
pick_cpus 2
IGCPU=${CPUS[0]} WLCPU=${CPUS[1]}

median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }

# 1. a 4 ms kernel then a sync: the sync lasts the kernel's remaining time.
"$IG" --events --no-system-libs -- "$WL" --iters 30 --kernels 1 --kernel-us 4000 --sync-every 1 \
	--cpu "$WLCPU" >"$TMP/t1.ev" 2>"$TMP/t1.err"
sync_med=$(grep " op=cudaStreamSynchronize " "$TMP/t1.ev" | field dur_ns | median)
within "median cudaStreamSynchronize after a 4 ms kernel (ns)" "$sync_med" 4000000 10
cu_med=$(grep " op=cuStreamSynchronize " "$TMP/t1.ev" | field dur_ns | median)
within "median nested cuStreamSynchronize (ns)" "$cu_med" 4000000 10

# 2. a synchronous 8 MiB H2D copy at the shim's 10 GB/s: 839 us + 10 us.
"$IG" --events --no-system-libs -- "$WL" --iters 20 --kernels 0 --h2d 8388608 --sync-every 0 \
	--cpu "$WLCPU" >"$TMP/t2.ev" 2>"$TMP/t2.err"
cp_med=$(grep " op=cudaMemcpy " "$TMP/t2.ev" | field dur_ns | median)
within "median cudaMemcpy of 8 MiB (ns)" "$cp_med" 848861 10

# 3. no contention: sync time is blocked, not preempted.
pre=$(grep " op=cudaStreamSynchronize " "$TMP/t1.ev" | field preempt_ns | awk '{s += $1} END {print s + 0}')
blk=$(grep " op=cudaStreamSynchronize " "$TMP/t1.ev" | field blocked_ns | awk '{s += $1} END {print s + 0}')
awk -v p="$pre" -v b="$blk" 'BEGIN { exit !(b > 0 && p < 0.1 * b) }' \
	&& ok "quiet run: syncs blocked ${blk} ns, preempted ${pre} ns (< 10 %)" \
	|| bad "quiet run: blocked $blk ns, preempted $pre ns"
hogs=$(grep " op=cudaStreamSynchronize " "$TMP/t1.ev" | grep -c "other=[0-9]*:ig-hog")
expect_eq "quiet run: syncs naming ig-hog as preemptor" "$hogs" 0

# 4. a CPU hog pinned on the same CPU: syncs are preempted by the hog.
"$HOG" --cpu "$WLCPU" --seconds 60 & hog=$!
cleanup_hooks+=("kill $hog 2>/dev/null")
hog_running() { [ "$(cat /proc/$hog/comm 2>/dev/null)" = ig-hog ]; }
wait_until 30 hog_running || bad "the hog did not start"
# ingero-top itself stays off the workload's CPU: the hog is the only competitor there.
taskset -c "$IGCPU" "$IG" --events --no-system-libs -- "$WL" --iters 30 --kernels 1 --kernel-us 4000 \
	--sync-every 1 --cpu "$WLCPU" >"$TMP/t4.ev" 2>"$TMP/t4.err"
kill $hog; wait $hog 2>/dev/null
pre=$(grep " op=cudaStreamSynchronize " "$TMP/t4.ev" | field preempt_ns | awk '{s += $1} END {print s + 0}')
n=$(grep -c " op=cudaStreamSynchronize " "$TMP/t4.ev")
named=$(grep " op=cudaStreamSynchronize " "$TMP/t4.ev" | grep -c "other=$hog:ig-hog")
[ "$pre" -gt 0 ] && ok "hog run: syncs preempted $pre ns in total" || bad "hog run: no preempted time"
awk -v a="$named" -v n="$n" 'BEGIN { exit !(n > 0 && a >= n / 2) }' \
	&& ok "hog run: $named of $n syncs name ig-hog[$hog] as preemptor" \
	|| bad "hog run: only $named of $n syncs name ig-hog[$hog]"
# The off-CPU intervals inside the calls carry the runnable wait too.
inq=$(grep " offcpu " "$TMP/t4.ev" | grep "in_call=1" | field preempt_ns | awk '{s += $1} END {print s + 0}')
[ "$inq" -gt 0 ] && ok "hog run: off-CPU intervals inside calls: $inq ns runnable (waiting for the CPU)" \
	|| bad "hog run: off-CPU intervals inside calls show no runnable wait"
# 5. the hog and a ticker (nice -10: it takes the CPU at each wake-up, runs
# 20 us, sleeps) on the workload's CPU, syncs that spin: the ticker is the
# first to switch in at most preemptions, the hog holds the CPU; the
# preemptor named is the task that held the CPU longest during the wait.
"$HOG" --cpu "$WLCPU" --seconds 60 & hog=$!
nice -n -10 "$HOG" --cpu "$WLCPU" --tick-us 300 --seconds 60 & tick=$!
cleanup_hooks+=("kill $hog $tick 2>/dev/null")
ticker_running() { [ "$(cat /proc/$tick/comm 2>/dev/null)" = ig-ticker ]; }
wait_until 30 hog_running || bad "the hog did not start"
wait_until 30 ticker_running || bad "the ticker did not start"
# the hypervisor's share of the workload's CPU meanwhile (/proc/stat steal,
# in USER_HZ ticks): which task ran longest on a CPU the hypervisor keeps
# taking is the hypervisor's choice, so such a run is not judged (as the
# sweep does: tests/sweep/README.md)
steal() { awk -v c="cpu$WLCPU" '$1 == c { print $9 + 0 }' /proc/stat; }
s0=$(steal) t0=$(date +%s%N)
SHIM_SYNC=spin taskset -c "$IGCPU" "$IG" --events --no-system-libs -- "$WL" --iters 60 --kernels 1 \
	--kernel-us 4000 --sync-every 1 --cpu "$WLCPU" >"$TMP/t5.ev" 2>"$TMP/t5.err"
stolen=$(awk -v a="$s0" -v b="$(steal)" -v t0="$t0" -v t1="$(date +%s%N)" \
	-v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", 100 * (b - a) / hz / ((t1 - t0) / 1e9) }')
kill $hog $tick; wait $hog $tick 2>/dev/null
syncs=$(grep " op=cudaStreamSynchronize " "$TMP/t5.ev" | grep -v " preempt_ns=0 ")
n=$(grep -c . <<<"$syncs")
by_hog=$(grep -c "other=$hog:ig-hog" <<<"$syncs")
by_tick=$(grep -c "other=$tick:ig-ticker" <<<"$syncs")
if awk -v a="$by_hog" -v t="$by_tick" -v n="$n" 'BEGIN { exit !(n > 0 && a >= n / 2 && a > t) }'; then
	ok "hog and ticker: $by_hog of $n preempted syncs name ig-hog, $by_tick ig-ticker"
elif awk -v s="$stolen" 'BEGIN { exit !(s > 2) }'; then
	echo "note: hog and ticker not judged: the hypervisor took $stolen % of CPU $WLCPU" \
		"($by_hog of $n preempted syncs name ig-hog, $by_tick ig-ticker)"
else
	bad "hog and ticker: $by_hog of $n preempted syncs name ig-hog, $by_tick ig-ticker" \
		"(the hypervisor took $stolen % of CPU $WLCPU)"
fi
finish
