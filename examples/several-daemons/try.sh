#!/usr/bin/env bash
# Several abctl daemons on one PostgreSQL database, on this machine.
#
# It starts a throwaway PostgreSQL server (in a temporary directory, on a
# Unix socket only: no TCP port), then two daemons sharing its database,
# each on a free loopback port with a data directory of its own, and shows
# with the abctl command line that
#
#   - an agent applied through daemon 1 is listed through daemon 2;
#   - runs started through either daemon all complete, each executed by
#     exactly one daemon, whichever was free (the run queue is in the
#     database); the summary at the end says which daemon executed which
#     run, from the "run taken" lines of their logs;
#   - every run can be followed through the other daemon than the one it
#     was started through, and its files read through either (the run
#     files' directory is shared).
#
# The runs are examples/agents/quickstart.yaml's, which needs no language
# model: only Chromium (Debian: apt-get install chromium) and the project's
# test site. Run it from anywhere in a checkout:
#
#   examples/several-daemons/try.sh
#
# Settings, all optional:
#
#   ABCTL=path/to/abctl   the abctl binary (default: abctl on PATH)
#   SITE=http://...       the test site (default: built from
#                         ./internal/testsite/serve and started here)
#   RUNS=4                how many runs to start (half through each daemon)
#   KEEP=1                keep the temporary directory (logs, run files)
#
# Everything it starts (PostgreSQL, the daemons, the test site) is stopped
# when it exits, however it exits, and the temporary directory is removed.
# PostgreSQL refuses to run as root: run as root, the script runs it as the
# postgres user that Debian's postgresql package makes.
# See docs/scaling.md ("More than one daemon") for running this for real.
set -euo pipefail

ABCTL=${ABCTL:-abctl}
RUNS=${RUNS:-4}
SITE=${SITE:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
agent_file=$repo/examples/agents/quickstart.yaml

say() { printf '== %s\n' "$*"; }
die() { printf 'try.sh: %s\n' "$*" >&2; exit 1; }

# wait_for DESCRIPTION SECONDS COMMAND...: run COMMAND every 0.2 s until it
# succeeds, for at most SECONDS; fail saying what did not happen.
wait_for() {
	local what=$1 seconds=$2 i
	shift 2
	for ((i = 0; i < seconds * 5; i++)); do
		if "$@"; then return 0; fi
		sleep 0.2
	done
	die "$what did not happen within ${seconds}s"
}

command -v "$ABCTL" >/dev/null || die "no abctl binary: put it on PATH (go install ./cmd/abctl) or give its path as ABCTL=..."
ABCTL=$(command -v "$ABCTL")

# --- PostgreSQL's programs: where initdb on PATH really is (it may be a
# link), else the newest of Debian's /usr/lib/postgresql/VERSION/bin (the
# package does not put them on PATH).
pgbin=
candidates=()
if command -v initdb >/dev/null; then
	candidates+=("$(dirname "$(readlink -f "$(command -v initdb)")")")
fi
candidates+=($(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5nr))
for d in "${candidates[@]}"; do
	if [[ -x $d/initdb && -x $d/postgres && -x $d/pg_isready && -x $d/createdb ]]; then
		pgbin=$d
		break
	fi
done
[[ -n $pgbin ]] || die "PostgreSQL is not installed (no initdb, postgres, pg_isready and createdb side by side, on PATH nor in /usr/lib/postgresql/*/bin); Debian: apt-get install postgresql"

# --- Everything lives in one temporary directory, removed on exit. The
# trap stops, in reverse order, what was started.
work=$(mktemp -d "${TMPDIR:-/tmp}/abctl-several-XXXXXX")
pids=()         # daemons and the test site, stopped with SIGTERM
pg_data=        # the database's directory, once initdb made it
cleanup() {
	local status=$? pid i
	trap - EXIT INT TERM
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill -TERM "${pids[i]}" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		# A daemon finishes what is in flight; give it 20 s, then kill it.
		for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$pid" 2>/dev/null || true
	done
	if [[ -n $pg_data && -f $pg_data/postmaster.pid ]]; then
		# SIGINT is PostgreSQL's fast shutdown. Its process id is in
		# postmaster.pid, whoever it runs as.
		pid=$(head -n 1 "$pg_data/postmaster.pid")
		kill -INT "$pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	if [[ ${KEEP:-} == 1 ]]; then
		echo "try.sh: kept $work" >&2
	else
		rm -rf "$work"
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- PostgreSQL, as this user, or as postgres when this is root (it
# refuses root). Its directory must then be the postgres user's.
pg=$work/pg
mkdir -m 0700 "$pg"
as_pg=()
if [[ $(id -u) == 0 ]]; then
	id postgres >/dev/null 2>&1 ||
		die "running as root, and PostgreSQL refuses to run as root: there is no postgres user to run it as (Debian's postgresql package makes one); run this script as another user"
	chown postgres: "$pg"
	chmod 0711 "$work" # the postgres user goes through it to its directory
	as_pg=(runuser -u postgres --)
fi
pg_data=$pg/data
say "PostgreSQL: $pgbin, in $pg"
# A user "abctl" that may connect without a password: nothing but this
# user's processes reach the socket, which is in a directory of its own.
(cd / && "${as_pg[@]}" "$pgbin/initdb" --pgdata "$pg_data" --username abctl --auth trust \
	--encoding UTF8 --locale C --no-sync --no-instructions >"$work/initdb.log" 2>&1) ||
	die "initdb failed: $(cat "$work/initdb.log")"
# -h '': no TCP at all; -k: the socket's directory. Durability is off: this
# database is thrown away.
(cd / && exec "${as_pg[@]}" "$pgbin/postgres" -D "$pg_data" -k "$pg" -h '' \
	-c fsync=off -c full_page_writes=off -c synchronous_commit=off) >"$work/postgres.log" 2>&1 &
wait_for "PostgreSQL's start (see $work/postgres.log)" 60 \
	"$pgbin/pg_isready" -q -h "$pg" -U abctl -d postgres
"$pgbin/createdb" -h "$pg" -U abctl abctl
# The database's URL: the socket's directory as host, as libpq reads it.
export ABCTL_STORE="postgres://abctl@/abctl?host=$pg&sslmode=disable"
say "database: $ABCTL_STORE"

# --- What every daemon on the database shares: the secret (64 hexadecimal
# digits), the run files' directory and, here, an API key of our choosing
# (a daemon otherwise writes a key it made into its data directory).
export ABCTL_DAEMON_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
key=abk_try_$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
artifacts=$work/artifacts
mkdir -m 0700 "$artifacts"

# --- The test site, unless SITE names one.
if [[ -z $SITE ]]; then
	command -v go >/dev/null || die "no go command to build the test site's server: give the site's address as SITE=..."
	say "building and starting the test site (./internal/testsite/serve)"
	(cd "$repo" && go build -o "$work/serve" ./internal/testsite/serve)
	# It prints its address on stdout; port 0 is a free one.
	"$work/serve" -addr 127.0.0.1:0 >"$work/site.url" 2>"$work/site.log" &
	pids+=($!)
	wait_for "the test site's start (see $work/site.log)" 30 grep -q '^http' "$work/site.url"
	SITE=$(head -n 1 "$work/site.url")
	SITE=${SITE%/}
fi
say "test site: $SITE"

# --- The daemons: each on a free loopback port (--addr 127.0.0.1:0), with a
# data directory of its own, where its state file daemon.json says which
# port it took. --workers 1 makes each daemon execute one run at a time, so
# that the runs spread over both.
addrs=()
for n in 1 2; do
	mkdir -m 0700 "$work/daemon$n"
	"$ABCTL" daemon --data-dir "$work/daemon$n" --addr 127.0.0.1:0 \
		--artifacts "$artifacts" --api-key "$key" --workers 1 --no-recording \
		>"$work/daemon$n.log" 2>&1 &
	pids+=($!)
done
for n in 1 2; do
	wait_for "daemon $n's start (see $work/daemon$n.log)" 120 test -s "$work/daemon$n/daemon.json"
	addr=$(sed -n 's/.*"addr": *"\([^"]*\)".*/\1/p' "$work/daemon$n/daemon.json")
	[[ -n $addr ]] || die "no address in $work/daemon$n/daemon.json"
	addrs+=("http://$addr")
	say "daemon $n: http://$addr (data directory $work/daemon$n, log $work/daemon$n.log)"
done

# abctl_through N ARGS...: abctl against daemon N. The base URL and key
# come from the environment; ABCTL_EMBED=false: never start a daemon of
# its own; a configuration directory of its own, so that yours is not used.
mkdir "$work/config"
abctl_through() {
	local n=$1
	shift
	ABCTL_BASE_URL=${addrs[n - 1]} ABCTL_API_KEY=$key ABCTL_EMBED=false \
		ABCTL_CONFIG_DIR=$work/config NO_COLOR=1 "$ABCTL" "$@"
}

# --- One database: what is applied through one daemon is there for all.
say "abctl apply, through daemon 1:"
abctl_through 1 apply -f "$agent_file"
say "abctl get agents, through daemon 2:"
abctl_through 2 get agents

# --- Runs started through both daemons, each followed through the other.
runs=()
for ((i = 1; i <= RUNS; i++)); do
	n=$((2 - i % 2)) # 1, 2, 1, 2, ...
	run=$(abctl_through "$n" run --agent quickstart --param "site=$SITE" --detach)
	runs+=("$run")
	say "run $run started through daemon $n"
done
for ((i = 1; i <= RUNS; i++)); do
	run=${runs[i - 1]}
	n=$((1 + i % 2)) # the other daemon: 2, 1, 2, 1, ...
	if abctl_through "$n" runs watch "$run" --no-tui --timeout 3m >/dev/null 2>"$work/watch-$run.log"; then
		say "run $run completed (followed through daemon $n)"
	else
		cat "$work/watch-$run.log" >&2
		die "run $run did not complete (followed through daemon $n)"
	fi
done

# --- Who executed what: each daemon logs "run taken" with the run's id when
# it starts executing a run.
say "which daemon executed which run:"
for n in 1 2; do
	taken=$(sed -n 's/.*msg="run taken" run_id=\([^ ]*\).*/\1/p' "$work/daemon$n.log" | tr '\n' ' ')
	count=$(wc -w <<<"$taken")
	echo "daemon $n executed $count run(s): ${taken% }"
done
for run in "${runs[@]}"; do
	times=$(cat "$work"/daemon[12].log | grep -c "msg=\"run taken\" run_id=$run " || true)
	[[ $times == 1 ]] || die "run $run was taken $times times, not once"
done

# --- One directory of run files: a run's files are read through the daemon
# that did not execute it (here, the first run's first file).
run=${runs[0]}
by=1
grep -q "msg=\"run taken\" run_id=$run " "$work/daemon2.log" && by=2
other=$((3 - by))
say "the files of run $run (executed by daemon $by), listed through daemon $other:"
abctl_through "$other" runs artifacts "$run" | cut -f1-4 # id, kind, name, size
artifact=$(abctl_through "$other" runs artifacts "$run" -o json |
	sed -n 's/.*"artifact_id": *"\([^"]*\)".*/\1/p' | head -n 1)
[[ -n $artifact ]] || die "run $run has no files"
bytes=$(abctl_through "$other" runs artifact "$artifact" | wc -c)
((bytes > 0)) || die "the file $artifact of run $run read through daemon $other is empty"
say "read $artifact ($bytes bytes) through daemon $other"

say "all $RUNS runs completed, each executed by exactly one daemon"
