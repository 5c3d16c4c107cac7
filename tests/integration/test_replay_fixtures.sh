#!/usr/bin/env bash
# Replay, recorder, flight-recorder and JSON tests rebuilt with ASan and UBSan:
# the fixture checks, the mutation test on corrupted copies of the Ingero
# fixtures (tests/fixtures/ingero, or IG_TRACES), the round trip, disk-full
# and kill -9 tests. Then the CLI on the fixtures and on broken files.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
tmp=$(mktemp -d /tmp/ig-asan.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

echo 'int main(void){return 0;}' >"$tmp/t.c"
if ! gcc -fsanitize=address,undefined "$tmp/t.c" -o "$tmp/t" 2>/dev/null; then
	echo "gcc cannot build with -fsanitize=address,undefined (libasan missing)"
	exit 77
fi

CF="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
    -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes -std=gnu11
    -D_GNU_SOURCE -DIG_VERSION=\"asan\" -Isrc -Ibpf -Itests/lib"
objs=()
for c in src/store/*.c src/core/ops.c src/core/status.c src/core/hist.c src/core/json.c src/core/escape.c src/core/waits.c src/collect/sysinfo.c \
	 src/collect/hostinfo.c tests/lib/testdb.c; do
	o=$tmp/$(echo "${c%.c}" | tr / _).o
	gcc $CF -c "$c" -o "$o" || exit 1
	objs+=("$o")
done
export IG_TRACES=${IG_TRACES:-$PWD/tests/fixtures/ingero}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
rc=0
for t in test_replay test_rec test_flight test_sysinfo test_json test_safefile test_replay_hostile; do
	gcc $CF -o "$tmp/$t" "tests/unit/$t.c" "${objs[@]}" -lsqlite3 -ljansson -lm -lpthread || exit 1
	echo "== $t (ASan/UBSan)"
	arg=""
	[ $t = test_replay ] && arg=400
	"$tmp/$t" $arg || { echo "FAIL: $t under ASan/UBSan"; rc=1; }
done
[ $rc = 0 ] || exit 1

# A real full disk (root: a 2 MiB tmpfs): recording stops with ENOSPC, the
# caller goes on, and the file replays. Without root this part says so.
if [ "$(id -u)" != 0 ]; then
	echo "part skipped: the full-disk case needs root (a tmpfs mount)"
else
	mkdir -p "$tmp/full"
	mount -t tmpfs -o size=2m tmpfs "$tmp/full" || { echo "FAIL: cannot mount a tmpfs"; exit 1; }
cat >"$tmp/fill.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "store/rec.h"
#include "store/replay.h"
static void nop(void *c, const struct ig_event *e) { (*(long *)c)++; }
int main(int argc, char **argv)
{
	const char *err;
	struct rec *r = rec_open(argv[1], NULL, &err);
	if (!r) { puts(err); return 2; }
	int rc = 0;
	for (long i = 0; i < 5000000 && (rc == 0 || rc == -ENOBUFS); i++) {
		struct ig_event e = { .kind = IG_EV_EXIT, .ts_ns = 1700000000000000000ull + i * 1000, .pid = 1 };
		rc = rec_event(r, &e);
		if (rc == -ENOBUFS) usleep(1000);
	}
	printf("rc %d: %s\n", rc, rec_error(r) ? rec_error(r) : "(none)");
	rec_close(r);
	const char *p[] = { argv[1] };
	struct ig_source *s = replay_open(p, 1, &err);
	if (!s) { printf("replay: %s\n", err); return 3; }
	long n = 0;
	while (s->ops->poll(s, nop, &n, 4096) > 0)
		;
	s->ops->free(s);
	printf("replayed %ld events\n", n);
	return rc == -ENOSPC && n > 1000 ? 0 : 4;
}
C
	gcc $CF -o "$tmp/fill" "$tmp/fill.c" "${objs[@]}" -lsqlite3 -ljansson -lm -lpthread || { umount "$tmp/full"; exit 1; }
	"$tmp/fill" "$tmp/full/rec.db"
	st=$?
	umount "$tmp/full"
	[ $st = 0 ] || { echo "FAIL: full tmpfs (exit $st)"; exit 1; }
	echo "full disk: recording stopped with ENOSPC, the file replays"
fi

# The CLI on every fixture, a multi-file replay, and broken files.
traces=$IG_TRACES
IG=${IG:-$BUILD/ingero-top}
[ -x "$IG" ] || { echo "FAIL: $IG not built"; exit 1; }
n=0
for f in "$traces"/*.db; do
	[ -f "$f" ] || continue
	out=$("$IG" --batch --summary --replay "$f" 2>&1 </dev/null) ||
		{ echo "FAIL: $IG --replay $f: $out"; exit 1; }
	n=$((n + 1))
done
[ $n -ge 5 ] || { echo "FAIL: $n fixtures in $traces, want the 5 shipped ones"; exit 1; }
n1=$traces/sample-gpu-node-01.db n2=$traces/sample-gpu-node-02.db n3=$traces/sample-gpu-node-03.db
out=$("$IG" --batch --summary --replay "$n1" "$n2" "$n3" 2>&1 </dev/null) ||
	{ echo "FAIL: multi-file replay: $out"; exit 1; }
printf 'not a database\n' >"$tmp/text.db"
: >"$tmp/empty.db"
for f in "$tmp/text.db" "$tmp/empty.db" /nonexistent.db; do
	out=$("$IG" --batch --summary --replay "$f" 2>&1 </dev/null)
	st=$?
	lines=$(printf '%s\n' "$out" | grep -c .)
	if [ $st = 0 ] || [ "$lines" != 1 ]; then
		echo "FAIL: --replay $f: exit $st, want non-zero and one line, got: $out"
		exit 1
	fi
done
echo "CLI: $n fixtures replay, broken files give one line and a non-zero exit"
echo "replay/record tests pass under ASan and UBSan"
