#!/usr/bin/env bash
# needs: root
# The waker of a blocked interval: a wake-up from an interrupt (here the
# timer that ends a sleep) names "[irq]", not the task the interrupt landed
# on; a wake-up from a task names that task.
. "$(dirname "$0")/lib.sh"
need_root
grep -q ' __irqentry_text_start$' /proc/kallsyms && ! grep -q '^0000000000000000 ' /proc/kallsyms \
	|| { echo "skip: /proc/kallsyms shows no interrupt entry text"; exit 77; }

# 1. 30 steps that each sleep 3 ms, with a CPU hog on the same CPU: the
# timer interrupt that ends each sleep runs on top of the hog.
pick_cpus 1
CPU=${CPUS[${#CPUS[@]} - 1]} # the last allowed CPU
"$HOG" --cpu "$CPU" --seconds 60 & hog=$!
cleanup_hooks+=("kill $hog 2>/dev/null")
hog_running() { [ "$(cat /proc/$hog/comm 2>/dev/null)" = ig-hog ]; }
wait_until 30 hog_running || bad "the hog did not start"
"$IG" --events --no-system-libs -- "$WL" --cpu "$CPU" --iters 30 --kernels 1 --kernel-us 10 \
	--sleep-us 3000 >"$TMP/s.ev" 2>"$TMP/s.err"
kill $hog; wait $hog 2>/dev/null
# The sleeps: blocked between calls for at least 2.5 ms.
grep " offcpu " "$TMP/s.ev" | grep " state=blocked " | grep " in_call=0 " \
	| awk '{ for (i = 3; i <= NF; i++) if ($i ~ /^blocked_ns=/ && substr($i, 12) + 0 >= 2500000) print }' >"$TMP/sleeps"
n=$(wc -l <"$TMP/sleeps")
irq=$(grep -c " other=0:\[irq\] " "$TMP/sleeps")
hogw=$(grep -c " other=$hog:ig-hog " "$TMP/sleeps")
[ "$n" -ge 25 ] && ok "hog run: $n sleeps seen" || bad "hog run: only $n sleeps seen (30 made)"
expect_eq "hog run: sleeps naming ig-hog as waker" "$hogw" 0
[ "$irq" -ge $((n * 9 / 10)) ] && [ "$n" -gt 0 ] && ok "hog run: $irq of $n sleeps woken by [irq]" \
	|| bad "hog run: only $irq of $n sleeps woken by [irq]"

# 2. a task wakes the thread: the workers of tests/progs/dataloader wake the
# main thread, which waits for their batches.
"$IG" --events --no-system-libs -- "$B/tests/progs/dataloader" --seconds 2 >"$TMP/d.ev" 2>"$TMP/d.err"
named=$(grep " offcpu " "$TMP/d.ev" | grep " state=blocked " | grep -c " other=[1-9][0-9]*:dl-worker")
[ "$named" -gt 0 ] && ok "dataloader: $named blocked intervals name a dl-worker as waker" \
	|| bad "dataloader: no blocked interval names a dl-worker"
finish
