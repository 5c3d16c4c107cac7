#!/usr/bin/env bash
# Nothing is cut silently (issue 28): every shipped recording (the
# scenarios' and the fixtures': Ingero's, the viewer's, vLLM's) is
# replayed at 80x24, 120x40 and 200x60 (all at once, one tmux session each
# in one server), and the main screen, the op, process, thread and alert
# screens reached with Enter on the first rows (where the recording has
# calls and alerts), and two pages of help are read. The check fails on
#  * a number cut without a mark: a digit run that touches the right edge
#    of the screen or of a box (│) with no mark (… or a unit) after it. A
#    right-aligned number column that ends at the edge is whole, not cut:
#    a digit at the edge is accepted when it ends a whole token (a space
#    before it) and a row next to it also reaches the edge there (the
#    column's other cells or its title), and so is the header's clock
#    (hh:mm:ss, whole by its format);
#  * a percentage over 100. Every percentage the viewer shows is a share of
#    something (wall time, of a window, of the machine's CPUs) and stays
#    within 100; none is allowed over it.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
command -v python3 >/dev/null || skip "python3 is not installed"

DBS=(tests/scenarios/*.db tests/fixtures/*/*.db)
[ ${#DBS[@]} -ge 16 ] || fail "only ${#DBS[@]} recordings"
KEY_PAUSE=0.05
ALL=("${!DBS[@]}")
SEL=("${ALL[@]}") # the sessions the next keys, waits and captures are for

all_keys() { # keys for every selected session
	local i
	for i in "${SEL[@]}"; do "${TMUX_CMD[@]}" send-keys -t "s$i" "$@"; done
	sleep 0.1
}
snap() { # NAME: capture every selected session
	local i
	for i in "${SEL[@]}"; do
		"${TMUX_CMD[@]}" capture-pane -p -t "s$i" >"$TMPD/$size.$(basename "${DBS[$i]}" .db).$1.txt"
	done
}
wait_all() { # [-v] REGEX: every session shows it (-v: none shows it)
	local i j not=
	[ "$1" = -v ] && { not=1; shift; }
	for i in "${SEL[@]}"; do
		for ((j = 0; j < TUI_WAIT * 10; j++)); do
			if "${TMUX_CMD[@]}" capture-pane -p -t "s$i" | grep -qE -- "$1"; then
				[ -z "$not" ] && break
			else
				[ -n "$not" ] && break
			fi
			sleep 0.1
		done
		[ $j -lt $((TUI_WAIT * 10)) ] || {
			"${TMUX_CMD[@]}" capture-pane -p -t "s$i"
			fail "${DBS[$i]}: timed out waiting for /$1/"
		}
	done
}

for size in $SIZES; do
	w=$(size_w "$size")
	h=$(size_h "$size")
	for i in "${!DBS[@]}"; do
		"${TMUX_CMD[@]}" new-session -d -s "s$i" -x "$w" -y "$h" \
			"$IG --speed 0 --replay ${DBS[$i]}; sleep 600" || fail "cannot start tmux"
	done
	"${TMUX_CMD[@]}" set-option -g window-size manual >/dev/null 2>&1
	# the whole recording replayed, then frozen
	wait_all '/[0-9][0-9a-z.]* 100%'
	all_keys p
	wait_all 'PAUSED'
	snap main
	# which recordings have CUDA calls (the op, process and thread screens)
	# and alerts (the alert screen): the others show the main screen and
	# the help
	CALLS=() ALERTS=()
	for i in "${ALL[@]}"; do
		f=$TMPD/$size.$(basename "${DBS[$i]}" .db).main.txt
		grep -q 'no CUDA calls yet' "$f" || CALLS+=("$i")
		grep -q 'no alerts' "$f" || ALERTS+=("$i")
	done
	[ ${#CALLS[@]} -ge 12 ] && [ ${#ALERTS[@]} -ge 10 ] ||
		fail "$size: only ${#CALLS[@]} recordings with calls, ${#ALERTS[@]} with alerts"
	echo "ok: $size: ${#DBS[@]} recordings, ${#CALLS[@]} with calls, ${#ALERTS[@]} with alerts"
	SEL=("${CALLS[@]}")
	all_keys Enter # the first op
	wait_all 'latency histogram'
	snap op
	all_keys Escape
	wait_all '^! GPU API'
	all_keys Tab Enter # the first process
	wait_all 'CUDA ops of this process'
	snap proc
	all_keys Tab Enter # its first thread
	wait_all '^ thread [0-9]+'
	snap thread
	all_keys Escape Escape
	wait_all '^! GPU API'
	SEL=("${ALERTS[@]}")
	all_keys Tab Enter # the first alert
	wait_all '^ \[[A-Z]+\] chain-'
	snap alert
	all_keys Escape
	wait_all '^! GPU API'
	SEL=("${ALL[@]}")
	all_keys h
	wait_all ' help \((replay|live) mode\)'
	snap help1
	all_keys NPage
	wait_all -v ' help \((replay|live) mode\)'
	snap help2
	all_keys Escape
	"${TMUX_CMD[@]}" kill-server 2>/dev/null
	sleep 0.3
done
[ -n "$CUTS_KEEP" ] && cp "$TMPD"/*.txt "$CUTS_KEEP"/

python3 - "$TMPD" <<'EOF' || exit 1
import glob, os, re, sys
EDGE = "│┃║┤┐┘|"
bad = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.txt"))):
    name = os.path.basename(f)[:-4]
    w = int(name.split("x")[0])
    lines = [l.rstrip("\n") for l in open(f, encoding="utf-8", errors="replace")]
    pad = [l.ljust(w) for l in lines]
    for y, l in enumerate(pad):
        # the right edges: the last column, and every column before a box side
        edges = [w - 1] + [x - 1 for x, c in enumerate(l) if c in EDGE and x > 0]
        for e in edges:
            if e >= len(l) or not l[e].isdigit():
                continue
            s = e
            while s > 0 and l[s - 1] not in " " + EDGE:
                s -= 1
            tok = l[s:e + 1]
            whole = re.fullmatch(r"[0-9.,:]+", tok) is not None
            near = [pad[j][e] for j in (y - 1, y + 1) if 0 <= j < len(pad)]
            column = any(c not in " " + EDGE for c in near)
            clock = re.fullmatch(r"[0-9]{2}:[0-9]{2}:[0-9]{2}", tok) is not None
            if not (whole and (column or clock)):
                bad.append(f"{name}:{y + 1}: number cut at the edge: {tok!r} in {lines[y].strip()!r}")
        for m in re.finditer(r"(?<![0-9.])([0-9]+(?:\.[0-9]+)?)%", l):
            if float(m.group(1)) > 100:
                bad.append(f"{name}:{y + 1}: percentage over 100: {m.group(0)} in {lines[y].strip()!r}")
for b in bad:
    print("FAIL:", b)
if bad:
    sys.exit(1)
print(f"ok: {len(glob.glob(os.path.join(sys.argv[1], '*.txt')))} screens, no number cut, no percentage over 100")
EOF
ok "no cut number and no percentage over 100 on any screen of any scenario"
