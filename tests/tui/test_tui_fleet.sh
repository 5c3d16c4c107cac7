#!/usr/bin/env bash
# The fleet screen (issue 29; docs/fleet.md, "The fleet screen"): four
# hosts played by a fake ssh (tests/tui/fleet_fake_ssh.sh: h1 with a HIGH
# cpu_contention chain, h2 the NCCL straggler with two processes, h3
# unreachable, h4 healthy). Checks the header line, the rows and their
# order (the straggler first, marked by a character and a colour; the
# character without colours too), the why of the unreachable host, no
# number cut at 80x24 and 200x60, too small, the help, the filter, the
# sort, a click, and Enter: the host's viewer (the real one, on a shipped
# recording) in the terminal, q in it back to the fleet, which is still
# updating; q quits and no fake host is left running.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
command -v python3 >/dev/null || skip "python3 is not installed"
"$IG" --help 2>&1 | grep -q -- '--ssh' || skip "$IG has no --ssh"

FAKE=$PWD/tests/tui/fleet_fake_ssh.sh
TAG=FLEET_FAKE_TAG=$TMPD # in every fake host's environment: none may be left
fleet() { # W H [ENV...]: the fleet screen of h1..h4 in a fresh tmux server
	local w=$1 h=$2
	shift 2
	start "$w" "$h" env IG="$IG" "$TAG" "$@" "$IG" --ssh h1,h2,h3,h4 --ssh-program "$FAKE"
}
left_running() { grep -lsa -- "$TAG" /proc/[0-9]*/environ 2>/dev/null | wc -l; }

# numbers_whole W: no number cut on the screen: no digit against an
# ellipsis, no "12." left, and a token at the right edge is a whole one.
numbers_whole() {
	screen | python3 -c '
import re, sys
w = int(sys.argv[1])
whole = re.compile(r"^[(]?[+\u00b1-]?\d+(\.\d+)?(ns|us|ms|s|%|x|GiB|MiB|KiB|B)?[,:)]?$|^\d+(,\d+)*/\d+,?$")
bad = []
for y, l in enumerate(sys.stdin.read().splitlines()):
    if re.search(r"\d(\u2026|\.\.\.)|(\u2026)\d|\d\.(\s|$)", l):
        bad.append(f"{y + 1}: a number cut: {l.strip()!r}")
    if len(l) >= w and l[w - 1].isdigit():
        tok = l.split(" ")[-1]
        if not whole.match(tok) and not re.search(r"\[\d+\]$", tok):
            bad.append(f"{y + 1}: {tok!r} cut at the edge")
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)' "$1" || fail "a number cut at ${1} columns"
}

# --- 200x60: the header, the rows, the marker, the why ------------------------
fleet 200 60
HDR='^fleet: 4 hosts, 3 live, 1 unreachable · straggler rank 3 \(comm 0x1a2b3c\) on h2: last in [0-9]+/[0-9]+ collectives, \+1[12]\.[0-9]ms \(clock ±[0-9.]+(ns|us|ms)\)'
wait_for "$HDR"
ok "the header line: counts, then the straggler, its lateness and the clock's uncertainty"
expect '^HOST +STATE +GPU% +CPU% +PRE% +WAIT% +TOP OP +P99 +CHG +GPU +MEM +NCCL WAIT +RANK +DROPS +WORST CHAIN' \
	"200x60: every column"
wait_for '^  h3 +unreachable +ssh: connect to host h3 port 22: Connection refused'
ok "h3: unreachable, ssh's own words across its number columns"
r_h2=$(row_of '^▶ h2 +live') r_p1=$(row_of '└─python3\[2201\]') r_p2=$(row_of '└─pt_data_worker\[2202\]')
r_h1=$(row_of '^  h1 +live') r_h3=$(row_of '^  h3 ') r_h4=$(row_of '^  h4 +live')
[ "$r_h2" = 2 ] || fail "the straggler's host is not the first row (row $r_h2)"
[ "$r_p1" = 3 ] && [ "$r_p2" = 4 ] || fail "h2's processes are not under it ($r_p1 $r_p2)"
[ "$r_h1" = 5 ] && [ "$r_h3" = 6 ] && [ "$r_h4" = 7 ] ||
	fail "order: want h2 (straggler), h1 (chain), h3 (not live), h4 (healthy): $r_h1 $r_h3 $r_h4"
ok "rows worst first: h2 (straggler, its two processes under it), h1, h3, h4"
expect '^  h1 +live +20% +30% +38% +12% +cudaLaunchKernel +4\.[0-9]+ms +[+-][0-9]+% +87% +61\.0GiB +12\.5ms +1/4 +3 +HIGH cpu_contention 42% stress-ng\[4711\]$' \
	"h1: its split, top op, p99, change, GPU, NCCL, rank, drops and chain"
expect '└─python3\[2201\] +61% +20% +\? +19% +ncclAllReduce' "a PRE% not known is ?"
expect '^  h4 +live .* - +- +12\.5ms +0/4 +0 +-$' "h4: no NVML, no chain"
# the marker: a character and a colour (the row's first cell)
[ "$(screen_e | grep '▶' | sed 's/▶.*//' | colour_escapes)" -gt 0 ] ||
	fail "the straggler's marker has no colour"
ok "the straggler marked: ▶ and a colour"
numbers_whole 200
ok "200x60: no number cut"

# --- 80x24 and too small --------------------------------------------------------
resize 80 24
wait_for '^fleet: 4 hosts, 3 live, 1 unreachable · straggler rank 3 \(comm 0x1a2b3c\) on h2:$'
expect '^  last in [0-9]+/[0-9]+ collectives, \+1[12]\.[0-9]ms \(clock ±' "80x24: the header wraps at a piece"
expect '^HOST +STATE +WORST CHAIN' "80x24: the columns that fit, by priority"
expect '^  h3 +unreachable +ssh: connect to host h3 port 22:…' "80x24: the why cut at a word, with a mark"
expect '^  h1 +live +HIGH cpu_contention 42% stress-ng\[4711\]$' "80x24: the chain whole, culprit included"
expect_not '[0-9](…|\.\.\.)' "80x24: no number against an ellipsis"
numbers_whole 80
ok "80x24: no number cut"
screen | python3 -c 'import sys; sys.exit(any(len(l) > 80 for l in sys.stdin.read().splitlines()))' ||
	fail "80x24: a line wider than the screen"
expect 'F1Help F10Quit Enter: open host · q in it: back' "the hint bar says how to come back"
resize 30 8
expect 'terminal too small' "30x8: too small"
expect '\(need 40x10\)' "30x8: the size it needs, as the viewer says"
resize 120 40
wait_for "^▶ h2"

# --- help, filter, sort, click --------------------------------------------------
keys h
expect 'help \(fleet screen\)' "h: the fleet's help"
expect 'Enter +Open the selected host.s full viewer' "the help lists Enter"
expect_scroll 'WORST CHAIN +the host.s worst active chain' "the help lists the columns"
keys Escape
wait_for '^HOST +STATE'
ok "Esc closes the help"
keys /
text h4
keys Enter
wait_for '^  h4 +live'
expect_not '^  h1 ' "filter h4: h1 hidden"
expect_not 'h2 +live' "filter h4: h2 hidden"
expect 'filter "h4"' "the filter is shown in the title row"
keys Escape
wait_for '^  h1 +live'
ok "Esc clears the filter"
keys s
expect 'hosts sorted by name' "s: by name"
[ "$(row_of '^  h1 ')" -lt "$(row_of '▶ h2 ')" ] || fail "sorted by name: h1 is not above h2"
ok "by name: h1 first"
keys s
keys s
expect 'hosts sorted worst first' "s again: back to worst first"
wait_for '^▶ h2'

# --- Enter: the host's viewer, q back ----------------------------------------------
click "$(row_of '^  h3 ')" 4
keys Enter
wait_for 'h3 is unreachable, no viewer: ssh: connect to host h3 port 22: Connection refused'
expect '^HOST +STATE' "Enter on an unreachable host: the fleet stays, its reason said"
click "$(row_of '^  h4 ')" 4
keys Enter
wait_for 'REPLAY'
expect 'cudaLaunchKernel' "Enter: the host's viewer runs in the terminal (ssh -t)"
keys q
wait_for "back from h4.s viewer"
ok "q in the viewer: back to the fleet; the click had selected h4"
wait_for 'last in [0-9]+/[0-9]+ collectives' 
n1=$(screen | sed -nE 's/.*last in ([0-9]+)\/.*/\1/p' | head -1)
for ((i = 0; i < TUI_WAIT * 10; i++)); do
	n2=$(screen | sed -nE 's/.*last in ([0-9]+)\/.*/\1/p' | head -1)
	[ -n "$n2" ] && [ "$n2" != "$n1" ] && break
	sleep 0.1
done
[ -n "$n2" ] && [ "$n2" != "$n1" ] || fail "the fleet screen is not updating after the viewer ($n1)"
ok "the fleet screen still updates ($n1 -> $n2 collectives)"

# --- q quits, nothing left --------------------------------------------------------
keys q
wait_exit
[ "$(cat "$TMPD/status")" = 0 ] || fail "exit status $(cat "$TMPD/status")"
for ((i = 0; i < TUI_WAIT * 10; i++)); do
	[ "$(left_running)" = 0 ] && break
	sleep 0.1
done
[ "$(left_running)" = 0 ] || fail "fake hosts still running after q"
ok "q quits (status 0) and every connection ended"
stop

# --- no colours, no UTF-8: the marker is still there -------------------------------
fleet 120 40 NO_COLOR=1 LC_ALL=C LANG=C
wait_for '^> h2 +live'
[ "$(screen_e | colour_escapes)" = 0 ] || fail "NO_COLOR: colours on the screen"
ok "NO_COLOR and ASCII: the straggler marked by > alone"
keys q
wait_exit
echo "all fleet screen checks passed"
