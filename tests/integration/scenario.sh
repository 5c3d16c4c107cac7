# Shared by tests/integration/test_scenario_*.sh (sourced after lib.sh, not
# run): one demo scenario (src/demo.c, docs/scenarios.md) traced live by
# `ingero-top --demo NAME --batch --summary`, recorded, the recording replayed
# without root, and the diagnosis checked by scenario_check.py: the class, op,
# process and culprit of the top chain, no chain of another class above LOW
# (live, replay, and every chain the recording holds), replay == live.

scenario_needs() {
	need_root
	# ingero-top on the first allowed CPU, the scenario's programs on the
	# last (and the first, for data-loader workers): src/session/demo.c
	pick_cpus 2
	command -v python3 >/dev/null || { echo "skip: needs python3"; exit 77; }
}

# scenario NAME CHECK-ARGS... (see scenario_check.py)
scenario() {
	local name=$1 rc
	shift
	local db=$TMP/$name.db live=$TMP/$name.live.json err=$TMP/$name.live.err
	local rep=$TMP/$name.replay.json rerr=$TMP/$name.replay.err
	local t0=$SECONDS
	# a private scratch base on a disk (io-stall's I/O must reach one), so
	# that other runs of the scenarios on the machine do not count
	local scratch
	scratch=$(mktemp -d /var/tmp/ig-scenario.XXXXXX)
	cleanup_hooks+=("rm -rf $scratch")
	# ingero-top on the first allowed CPU; the scenario pins its programs
	# to the last one (@CPU) and the first (@CPU2)
	TMPDIR=$scratch INGERO_DEMO_CPUS="${CPUS[${#CPUS[@]} - 1]},${CPUS[0]}" timeout -k 10 150 \
		taskset -c "${CPUS[0]}" "$IG" --demo "$name" --batch --summary --json -v \
		--record "$db" >"$live" 2>"$err"
	rc=$?
	echo "live run: ${name}, exit $rc, $((SECONDS - t0)) s"
	expect_eq "ingero-top --demo $name exit status" "$rc" 0
	grep -E "^(workload|trainer|dataloader): |demo $name: " "$err" | sed 's/^/     /'
	# its programs wait for a signal until the attach is done: none of
	# their calls is missed, and none is said to be
	expect_eq "processes attached late (the scenario's wait for the attach)" \
		"$(grep -c "attached to PID [0-9]* late" "$err")" 0
	# demo_stop killed and reaped every process of the scenario, the workers
	# its programs forked included (same process groups), and removed its
	# scratch directory
	local left pid i
	for i in $(seq 50); do # killed orphans are reaped by init: poll (10 s)
		left=""
		for pid in $(sed -n "s/.*demo $name: [^ ]*\[\([0-9]*\)\].*/\1/p" "$err"); do
			left="$left$(pgrep -g "$pid" | tr '\n' ' ')"
		done
		[ -z "$left" ] && break
		sleep 0.2
	done
	expect_eq "processes of the scenario left after ingero-top exited" "${left:-none}" none
	expect_eq "scratch directories left in $scratch" "$(ls -A "$scratch" | wc -l)" 0
	[ -s "$db" ] || { bad "no recording in $db"; sed 's/^/     | /' "$err" | tail -20; finish; }
	chmod 644 "$db"
	# the replay needs no root: run it as nobody when we can
	local as=()
	command -v setpriv >/dev/null && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	"${as[@]}" "$IG" --replay "$db" --batch --summary --json >"$rep" 2>"$rerr"
	rc=$?
	expect_eq "replay of $name.db ${as:+as nobody }exit status" "$rc" 0
	if python3 "$ROOT/tests/integration/scenario_check.py" --live "$live" --replay "$rep" \
		--db "$db" --log "$err" "$@"; then
		ok "diagnosis of $name"
	else
		bad "diagnosis of $name"
		echo "     live stderr:"
		sed 's/^/     | /' "$err" | tail -20
	fi
}
