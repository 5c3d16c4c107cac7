#!/usr/bin/env bash
# The layer rule at link time (docs/architecture.md): each layer of src/
# below app, as one archive of its objects, is linked whole into a program
# with only the archives of the layers it may call (the table of
# check_layers.py --link-table) and the system libraries; a call upward or
# sideways is an undefined reference, named here with the layer that
# defines it. Run by `make check-links` (and `make test`) after the build.
#
#   tests/tools/check_links.sh BUILD        LDLIBS="..." in the environment
#   PLANT_<layer>=FILE.o adds an object to that layer (the tests plant one)
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
LIBS=${LDLIBS:--lbpf -ldw -lelf -lz -lsqlite3 -ljansson -lncursesw -ltinfo -liberty -lm -lpthread}
T=$(mktemp -d /tmp/ig-links.XXXXXX)
trap 'rm -rf "$T"' EXIT
CC=${CC:-cc}
echo 'int main(void) { return 0; }' >"$T/main.c"
$CC -c -o "$T/main.o" "$T/main.c" || exit 2

mapfile -t table < <(tests/tools/check_layers.py --link-table)
declare -A deps
for row in "${table[@]}"; do
	read -r layer rest <<<"$row"
	deps[$layer]=$rest
	[ -d "$B/obj/src/core" ] || { echo "check-links: no objects in $B/obj/src (build first)"; exit 2; }
	objs=()
	for o in "$B"/obj/src/"$layer"/*.o; do [ -e "$o" ] && objs+=("$o"); done
	plant=PLANT_$layer
	[ -n "${!plant:-}" ] && objs+=("${!plant}")
	ar rcs "$T/lib$layer.a" "${objs[@]}" || exit 2
done

# who defines a symbol: "layer" of the first archive that has it
definer() {
	local l
	for l in "${!deps[@]}"; do
		nm --defined-only "$T/lib$l.a" 2>/dev/null | awk -v s="$1" '$3 == s { f = 1 } END { exit !f }' \
			&& { echo "$l"; return; }
	done
	echo "?"
}

bad=0
for row in "${table[@]}"; do
	read -r layer _ <<<"$row"
	# the allowed archives, top to bottom (the table lists bottom to top)
	libs=()
	for ((i = ${#table[@]} - 1; i >= 0; i--)); do
		read -r l _ <<<"${table[$i]}"
		[[ " ${deps[$layer]} " == *" $l "* ]] && libs+=("$T/lib$l.a")
	done
	if ! $CC -o "$T/out" "$T/main.o" -Wl,--whole-archive "$T/lib$layer.a" -Wl,--no-whole-archive \
		"${libs[@]}" $LIBS 2>"$T/err"; then
		while read -r sym; do
			echo "check-links: $layer calls $sym, defined in $(definer "$sym") (allowed: ${deps[$layer]:-nothing})"
			bad=$((bad + 1))
		done < <(grep -o "undefined reference to \`[^']*'" "$T/err" | sed "s/.*\`//; s/'$//" | sort -u)
		grep -q "undefined reference" "$T/err" || { cat "$T/err"; bad=$((bad + 1)); }
	fi
done
if [ "$bad" != 0 ]; then
	echo "check-links: $bad call(s) break the layer rule"
	exit 1
fi
echo "check-links: ${#table[@]} layers, each links with the layers below it alone"
