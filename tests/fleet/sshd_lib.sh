# Real OpenSSH servers on loopback for the fleet tests (sourced, not run).
#
# Each simulated host is one /usr/sbin/sshd on 127.0.0.1 with a free port,
# its own ed25519 host key, its own sshd_config and log, and a ForceCommand
# that runs tests/fleet/host_wrap.sh SCENARIO HOSTDIR: whatever the client
# asks for, that host runs its scenario (a hog, an NCCL rank, a command
# that is not there, ...). The client side is one ssh_config (Host aliases,
# one IdentityFile, one known_hosts, StrictHostKeyChecking yes, BatchMode
# left to the caller) handed to ingero-top with --ssh-config.
#
#   sshd_setup                       temp dir, client key, ssh_config; trap
#   sshd_host NAME SCENARIO [opts]   an sshd for alias NAME running SCENARIO
#       --user U        log in as U (default root)
#       --password      PubkeyAuthentication no, PasswordAuthentication yes
#       --wrong-key     known_hosts holds another key for NAME
#       --unknown-key   known_hosts holds no key for NAME
#       --env VAR=VAL   for host_wrap.sh (repeatable)
#   sshd_unreachable NAME            an alias to a port where nothing listens
#   sshd_user_add                    a non-root login user (SSHD_USER), removed at exit
#   sshd_port NAME                   its port
#   sshd_ssh NAME CMD...             ssh -F the config, BatchMode, as the fleet does
#   sshd_sessions NAME               sessions sshd opened for NAME (its log)
#   sshd_leftovers                   pids still running from any host's session
#   sshd_cleanup                     (at exit) kills every sshd and its children
#
# Variables: SSHD_DIR (the temp dir), SSHD_CONFIG (the ssh_config to pass
# with --ssh-config), SSHD_KNOWN (known_hosts), SSHD_PORT_<NAME> (ports),
# SSHD_USER (after sshd_user_add). host_wrap.sh is told IG, WL, HOG, BUILD
# dirs through HOSTDIR/host.env; sshd_host's --env adds to it.
SSHD_BIN=${SSHD_BIN:-/usr/sbin/sshd}
SSHD_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SSHD_PIDS=()
SSHD_USER=""

sshd_need() { # exit 77 when the parts are missing
	local p
	[ "$(id -u)" = 0 ] || { echo "skip: the fleet's sshd tests need root (sshd, useradd)"; exit 77; }
	for p in "$SSHD_BIN" ssh ssh-keygen python3; do
		command -v "$p" >/dev/null || { echo "skip: $p missing (make deps)"; exit 77; }
	done
}

# Appends sshd_cleanup to whatever EXIT trap the caller set (tests/integration/lib.sh's).
# shellcheck disable=SC2120 # its $3 is the parsed trap's, not an argument
sshd_trap() {
	local old=""
	if [ -n "$(trap -p EXIT)" ]; then
		eval "set -- $(trap -p EXIT)"
		old=$3
	fi
	# shellcheck disable=SC2064
	trap "sshd_cleanup; $old" EXIT
}

sshd_setup() {
	sshd_need
	SSHD_DIR=$(mktemp -d /tmp/ig-sshd.XXXXXX)
	chmod 755 "$SSHD_DIR"
	# the wrapper runs as the hosts' login users too: a copy they can read
	# (a checkout under a private directory, mktemp -d's 0700, is not)
	cp "$SSHD_LIB_DIR/host_wrap.sh" "$SSHD_DIR/host_wrap.sh"
	chmod 755 "$SSHD_DIR/host_wrap.sh"
	SSHD_CONFIG=$SSHD_DIR/ssh_config
	SSHD_KNOWN=$SSHD_DIR/known_hosts
	SSHD_AUTH=$SSHD_DIR/authorized_keys
	# shellcheck disable=SC2119
	sshd_trap
	# Privilege separation directory (Debian's unit makes it at boot).
	mkdir -p /run/sshd && chmod 755 /run/sshd
	ssh-keygen -q -t ed25519 -N '' -C ig-fleet-client -f "$SSHD_DIR/client_key" || return 1
	cp "$SSHD_DIR/client_key.pub" "$SSHD_AUTH"
	chmod 644 "$SSHD_AUTH"
	: >"$SSHD_KNOWN"
	chmod 644 "$SSHD_KNOWN"
	# The other host key, for --wrong-key: the host's real key is not this one.
	ssh-keygen -q -t ed25519 -N '' -C ig-fleet-other -f "$SSHD_DIR/other_host_key" || return 1
	cat >"$SSHD_CONFIG" <<-EOF
	# ssh_config of the fleet test: only these hosts, only this key
	Host *
	    IdentityFile $SSHD_DIR/client_key
	    IdentitiesOnly yes
	    IdentityAgent none
	    UserKnownHostsFile $SSHD_KNOWN
	    GlobalKnownHostsFile /dev/null
	    StrictHostKeyChecking yes
	    UpdateHostKeys no
	    AddressFamily inet
	    ControlMaster no
	    ControlPath none
	EOF
	# Host blocks are inserted before "Host *" (first match wins in ssh_config).
}

# A free TCP port on 127.0.0.1 (bound then closed: the kernel does not hand
# it out again at once).
sshd_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# sshd_alias NAME PORT USER: the Host block for NAME, before "Host *".
sshd_alias() {
	local block
	block=$(printf 'Host %s\n    HostName 127.0.0.1\n    Port %s\n    User %s\n    HostKeyAlias %s\n' \
		"$1" "$2" "$3" "$1")
	python3 - "$SSHD_CONFIG" "$block" <<-'PY'
	import sys
	path, block = sys.argv[1], sys.argv[2]
	text = open(path).read()
	i = text.index("Host *")
	open(path, "w").write(text[:i] + block + "\n" + text[i:])
	PY
}

sshd_host() {
	local name=$1 scenario=$2 user=root password=no known=right env=() port hd i
	shift 2
	while [ $# -gt 0 ]; do
		case $1 in
		--user) user=$2; shift ;;
		--password) password=yes ;;
		--wrong-key) known=wrong ;;
		--unknown-key) known=none ;;
		--env) env+=("$2"); shift ;;
		*) echo "sshd_host: unknown option $1" >&2; return 1 ;;
		esac
		shift
	done
	hd=$SSHD_DIR/$name
	mkdir -p "$hd" && chmod 777 "$hd" # the wrapper may run as a non-root user
	ssh-keygen -q -t ed25519 -N '' -C "ig-fleet-$name" -f "$hd/host_key" || return 1
	{
		echo "IG=${IG:?}"
		echo "WL=${WL:?}"
		echo "HOG=${HOG:?}"
		echo "SSHD_MARK=$SSHD_DIR"
		echo "HOSTDIR=$hd"
		for i in "${env[@]}"; do printf '%s=%q\n' "${i%%=*}" "${i#*=}"; done
	} >"$hd/host.env"
	chmod 644 "$hd/host.env"
	port=$(sshd_free_port)
	local pubkey=yes
	[ "$password" = yes ] && pubkey=no
	cat >"$hd/sshd_config" <<-EOF
	ListenAddress 127.0.0.1:$port
	HostKey $hd/host_key
	PidFile $hd/sshd.pid
	UsePAM no
	PermitRootLogin prohibit-password
	AuthorizedKeysFile $SSHD_AUTH
	StrictModes no
	PubkeyAuthentication $pubkey
	PasswordAuthentication $password
	KbdInteractiveAuthentication $password
	PermitEmptyPasswords no
	AllowTcpForwarding no
	X11Forwarding no
	PrintMotd no
	PrintLastLog no
	AcceptEnv none
	MaxStartups 100:30:200
	MaxSessions 100
	LogLevel VERBOSE
	ForceCommand /bin/bash $SSHD_DIR/host_wrap.sh $scenario $hd
	EOF
	"$SSHD_BIN" -t -f "$hd/sshd_config" || { echo "sshd_host $name: bad sshd_config" >&2; return 1; }
	# -D: stays in the foreground (our child, its pid known); -E: the log.
	"$SSHD_BIN" -D -f "$hd/sshd_config" -E "$hd/sshd.log" &
	SSHD_PIDS+=("$!")
	echo "$!" >"$hd/sshd.mainpid"
	printf -v "SSHD_PORT_${name//[^A-Za-z0-9_]/_}" '%s' "$port"
	sshd_alias "$name" "$port" "$user"
	case $known in
	right) echo "$name $(cut -d' ' -f1,2 "$hd/host_key.pub")" >>"$SSHD_KNOWN" ;;
	wrong) echo "$name $(cut -d' ' -f1,2 "$SSHD_DIR/other_host_key.pub")" >>"$SSHD_KNOWN" ;;
	none) ;;
	esac
	# Listening: the log says so (polled; a loaded machine is slow).
	for ((i = 0; i < 300; i++)); do
		grep -q "Server listening on 127.0.0.1 port $port" "$hd/sshd.log" 2>/dev/null && return 0
		kill -0 "$!" 2>/dev/null || break
		sleep 0.1
	done
	echo "sshd_host $name: sshd did not start: $(tail -3 "$hd/sshd.log" 2>/dev/null)" >&2
	return 1
}

# The port of alias NAME.
sshd_port() {
	local v="SSHD_PORT_${1//[^A-Za-z0-9_]/_}"
	echo "${!v}"
}

# An alias to a port where nothing listens (connection refused at once).
sshd_unreachable() {
	local port
	port=$(sshd_free_port)
	mkdir -p "$SSHD_DIR/$1"
	sshd_alias "$1" "$port" root
	printf -v "SSHD_PORT_${1//[^A-Za-z0-9_]/_}" '%s' "$port"
}

# A login user without sudo rights (a password-less account that is not
# locked, so that sshd with UsePAM no lets its key in).
sshd_user_add() {
	SSHD_USER=igfleet$$
	useradd -m -s /bin/bash -p '*' "$SSHD_USER" || { SSHD_USER=""; return 1; }
}

# ssh to a host the way the fleet does (BatchMode, -T), for the harness's own checks.
sshd_ssh() {
	local name=$1
	shift
	ssh -F "$SSHD_CONFIG" -T -o BatchMode=yes -o ConnectTimeout=10 "$name" -- "$@"
}

# Sessions sshd opened on host NAME (its VERBOSE log: "Accepted publickey"
# is an authenticated login; a refused host key never gets that far).
sshd_sessions() { grep -c 'Accepted publickey\|Accepted password' "$SSHD_DIR/$1/sshd.log" 2>/dev/null; }
sshd_log() { cat "$SSHD_DIR/$1/sshd.log" 2>/dev/null; }
# What host_wrap.sh was asked to run on host NAME, one line a session.
sshd_commands() { cat "$SSHD_DIR/$1/commands" 2>/dev/null; }

# The processes a host's sessions started (host_wrap.sh marks them with
# SSHD_MARK in their environment; sudo drops it, so the wrapper passes it
# on with env): pids, one a line, none when nothing is left.
sshd_leftovers() {
	local f pid
	for f in /proc/[0-9]*/environ; do
		pid=${f#/proc/}; pid=${pid%/environ}
		[ "$pid" = $$ ] && continue
		grep -qzxF "SSHD_MARK=$SSHD_DIR" "$f" 2>/dev/null && echo "$pid"
	done
}

# Every descendant of PID, deepest last (ps's ppid, read once).
sshd_descendants() {
	ps -e -o pid=,ppid= | awk -v root="$1" '
		{ kids[$2] = kids[$2] " " $1 }
		END { n = split(kids[root], q, " "); i = 1
		      while (i <= n) { p = q[i++]; print p; m = split(kids[p], k, " ")
		                       for (j = 1; j <= m; j++) q[++n] = k[j] } }'
}

sshd_cleanup() {
	local p kids=() left
	for p in "${SSHD_PIDS[@]}"; do
		mapfile -t -O "${#kids[@]}" kids < <(sshd_descendants "$p")
		kill "$p" 2>/dev/null
	done
	[ ${#kids[@]} -gt 0 ] && kill "${kids[@]}" 2>/dev/null
	if [ -n "${SSHD_DIR:-}" ] && [ -d "$SSHD_DIR" ]; then
		# Session processes that outlived their sshd (reparented to init).
		mapfile -t left < <(sshd_leftovers)
		[ ${#left[@]} -gt 0 ] && kill "${left[@]}" 2>/dev/null
		sleep 0.2
		mapfile -t left < <(sshd_leftovers)
		[ ${#left[@]} -gt 0 ] && kill -9 "${left[@]}" 2>/dev/null
	fi
	for p in "${SSHD_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	SSHD_PIDS=()
	if [ -n "$SSHD_USER" ]; then
		mapfile -t left < <(pgrep -u "$SSHD_USER") # that user's: ours
		[ ${#left[@]} -gt 0 ] && kill -9 "${left[@]}" 2>/dev/null
		userdel -r "$SSHD_USER" 2>/dev/null
		SSHD_USER=""
	fi
	[ -n "${SSHD_DIR:-}" ] && rm -rf "$SSHD_DIR"
	SSHD_DIR=""
}
