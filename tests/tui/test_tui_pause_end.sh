#!/usr/bin/env bash
# needs: root
# A pause that spans the end of the traced work keeps its evidence: the
# --demo cpu-contention workload runs, p pauses it while its HIGH alert is
# up, the workload exits while the screens are frozen, and some seconds of
# event time later p resumes. The view must then be the one a run without
# the pause gives: ENDED at the last activity, the HIGH alert still active
# (not "resolved", the header not "no alerts"), the cudaLaunchKernel row at
# the rate it had (the window of the last activity, not the model's at the
# resume, whose window had moved past the end).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_live

# the viewer's process: the child of the pane's shell
viewer_pid() {
	local sh
	sh=$("${TMUX_CMD[@]}" list-panes -t $T -F '#{pane_pid}' | head -1)
	pgrep -P "$sh" -x ingero-top | head -1
}

start 120 40 "$IG" --demo cpu-contention
wait_for 'cudaLaunchKernel +[0-9]' 60
wait_for '^HIGH .*CPU contention' 60
ig=$(viewer_pid)
[ -n "$ig" ] || fail "no viewer process"
pgrep -P "$ig" -x workload >/dev/null || fail "the demo's workload is not running"
rate0=$(cell '^! GPU API' 'cudaLaunchKernel' CALLS/S)
keys p
expect ' PAUSED ' "p pauses while the workload runs (cudaLaunchKernel at $rate0/s)"
# the workload ends while the screens are frozen
for ((i = 0; i < 1200; i++)); do
	pgrep -P "$ig" -x workload >/dev/null || break
	sleep 0.1
done
pgrep -P "$ig" -x workload >/dev/null && fail "the demo's workload did not end in 120 s"
ok "the workload exited during the pause"
# event time runs on past the end (the model's window moves on) before the
# resume; a slower machine only waits longer in the loop above
sleep 6
keys p
wait_gone ' PAUSED ' 30
wait_for ' ENDED [0-9]+(s|m)' 60
ok "resumed after the end: ENDED in the header"
expect_not ' no alerts ' "the header keeps the alerts"
expect '[0-9]+ alerts? \(worst HIGH\)' "the header says the worst is HIGH"
screen | grep -E '^HIGH .*CPU contention' | grep -q 'resolved' &&
	fail "the CPU contention alert is resolved after a pause across the end"
screen | grep -qE '^HIGH .*CPU contention' || fail "no HIGH CPU contention alert after the resume"
ok "the HIGH CPU contention alert stays active"
rate1=$(cell '^! GPU API' 'cudaLaunchKernel' CALLS/S)
python3 -c '
import sys
def num(s):
    m = {"k": 1e3, "M": 1e6}.get(s[-1:], 1)
    return float(s[:-1] if m != 1 else s) * m
sys.exit(0 if num(sys.argv[2]) >= num(sys.argv[1]) / 2 else 1)' "$rate0" "$rate1" 2>/dev/null ||
	fail "cudaLaunchKernel at $rate1/s after the resume, $rate0/s before the pause"
ok "cudaLaunchKernel keeps the rate of the last activity ($rate1/s, $rate0/s before the pause)"
keys q
wait_exit 60
