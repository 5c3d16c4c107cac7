# Helpers for the hostile-text tests (sourced after lib.sh): a crafted
# recording whose names, stack symbols and file facts hold terminal control
# bytes, and the checks every text output must pass (docs/batch.md,
# "Untrusted text").

# The names the crafted recordings use (also the JSON round-trip wants).
H_TITLE=$'\e]0;pwned\a'          # sets the terminal title
H_FORGE=$'\n1234 call op=x'      # a forged --events line
H_HOG=$'h\ro\tg x\e[2J'          # CR, TAB, space, clear screen
H_SYM='wl\u001b]0;sym\u0007\r\n\tworker'   # JSON text in stack_traces.frames
H_SYM_TEXT='\x1b[1mwl\x1b]0;sym\x07\r\n\tworker' # how the text outputs show it

# make_hostile_db SRC DST: a copy of SRC with every process name, event comm,
# stack frame and recorded chain made hostile (row counts unchanged).
make_hostile_db() {
	cp "$1" "$2" || return 1
	local has_comm
	has_comm=$(sqlite3 "$2" "SELECT COUNT(*) FROM pragma_table_info('events') WHERE name = 'comm'")
	{
		echo "BEGIN;"
		echo "UPDATE process_names SET name = CASE WHEN rowid % 3 = 0 THEN char(27) || ']0;pwned' || char(7)
			WHEN rowid % 3 = 1 THEN char(10) || '1234 call op=x' ELSE name || char(13) || char(9) || ' x' END;"
		if [ "$has_comm" = 1 ]; then
			echo "UPDATE events SET comm = CASE WHEN comm = '' THEN ''
				WHEN pid = tid THEN char(27) || ']0;pwned' || char(7)
				ELSE char(10) || '1234 call op=x' END,
			  other_comm = CASE WHEN other_comm = '' THEN ''
				WHEN other_comm = 'ig-hog' THEN 'h' || char(13) || 'o' || char(9) || 'g x' || char(27) || '[2J'
				ELSE other_comm || char(7) END;"
		fi
		echo "UPDATE stack_traces SET frames = replace(replace(frames, 'wl_worker', '$H_SYM'),
			'libc.so.6', 'libc\\u001b[2J\\u009b.so');"
		echo "UPDATE stack_traces SET frames = replace(frames, '\"s\":\"', '\"s\":\"\\u001b[1m');"
		echo "UPDATE causal_chains SET summary = summary || char(27) || ']0;chain' || char(7),
			explanation = explanation || char(13), timeline = timeline || char(27) || '[2J';"
		echo "UPDATE schema_info SET value = value || char(27) || '[31m' WHERE key = 'version';"
		echo "COMMIT;"
	} | sqlite3 "$2"
}

# check_clean FILE WHAT [empty-ok]: no ESC, CR, BEL byte (nor any other C0
# control but LF, nor DEL) in FILE, which must not be empty unless empty-ok.
check_clean() {
	local esc cr bel ctl
	esc=$(tr -cd '\033' <"$1" | wc -c)
	cr=$(tr -cd '\r' <"$1" | wc -c)
	bel=$(tr -cd '\007' <"$1" | wc -c)
	ctl=$(tr -cd '\000-\011\013-\037\177' <"$1" | wc -c)
	if [ "$esc$cr$bel$ctl" = 0000 ] && { [ -s "$1" ] || [ "${3:-}" = empty-ok ]; }; then
		ok "$2: 0 ESC, 0 CR, 0 BEL, 0 other control bytes ($(wc -c <"$1") bytes)"
	else
		bad "$2: $esc ESC, $cr CR, $bel BEL, $ctl control bytes in $(wc -c <"$1") bytes"
	fi
}

# check_events FILE WHAT: every --events line is "<ts> <kind> pid=P tid=T"
# and key=value fields, with each key once.
check_events() {
	local badn
	badn=$(awk '{
		ok = NF >= 4 && $1 ~ /^[0-9]+$/ && $2 ~ /^[a-z]+$/ && $3 ~ /^pid=[0-9]+$/ && $4 ~ /^tid=[0-9]+$/
		delete seen
		for (i = 3; ok && i <= NF; i++) {
			if ($i !~ /^[a-z_0-9]+=./) ok = 0
			k = substr($i, 1, index($i, "=") - 1)
			if (k in seen) ok = 0
			seen[k] = 1
		}
		if (!ok) { n++; if (n <= 3) print "    bad line: " $0 > "/dev/stderr" }
	} END { print n + 0 }' "$1")
	if [ "$badn" = 0 ] && [ -s "$1" ]; then
		ok "$2: all $(wc -l <"$1") --events lines parse"
	else
		bad "$2: $badn of $(wc -l <"$1") --events lines do not parse"
	fi
}

# Per kind and per op counts of an --events file: "call op=X N" / "kind N".
event_shape() {
	awk '{ k = $2; if ($2 == "call") for (i = 5; i <= NF; i++) if ($i ~ /^op=/) k = k " " $i; c[k]++ }
	     END { for (k in c) print k, c[k] }' "$1" | sort
}

# The op table of a text frame: "op calls" per row.
op_rows() { awk '/^OP /{on=1; next} on && NF == 0 {exit} on {print $1, $2}' "$1" | sort; }
