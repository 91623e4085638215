# shellcheck shell=bash
# A Postfix instance of a script's own, for the interop scripts (sourced by
# scripts/interop-smtp.sh and scripts/interop-dkim.sh): its own main.cf,
# master.cf, queue and log in a temp dir; the system's Postfix, if any, is
# neither used nor touched.
#
#   postfix_require_root "$name"                # Postfix's master binds port 25, drops to its own user
#   postfix_need "$name" postfix:postfix ...    # command:package; apt-get installs what is missing
#   postfix_instance "$name"                    # sets work and conf; removed on exit unless <NAME>_KEEP=1
#   { postfix_main_cf; cat <<CONF ... CONF; } >"$conf/main.cf"
#   { cat <<CONF ... CONF; postfix_master_cf; } >"$conf/master.cf"
#   postfix_start                               # check, start; postfix_failed "why" prints the log, exits
#
# $name (interop-smtp, interop-dkim) prefixes messages, names the temp dir and, upper-cased
# without "interop-", the variable that keeps it: INTEROP_SMTP_KEEP, INTEROP_DKIM_KEEP.

postfix_name=postfix
# Commands run on exit before Postfix is stopped (another daemon the script started).
postfix_exit_hooks=()

postfix_require_root() {
  postfix_name="$1"
  if [ "$(id -u)" -ne 0 ]; then
    echo "$postfix_name: run as root: Postfix's master binds port 25 and drops to its own user" >&2
    exit 1
  fi
}

# Each argument is command:package; the packages whose command is missing are installed
# with apt-get (CI), or the script stops saying which are needed.
postfix_need() {
  postfix_name="$1"
  shift
  local missing=() spec
  for spec in "$@"; do
    command -v "${spec%%:*}" >/dev/null || missing+=("${spec#*:}")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  if ! command -v apt-get >/dev/null; then
    echo "$postfix_name: ${missing[*]} required" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  # "No configuration": the package installs no main.cf and starts no system MTA.
  echo 'postfix postfix/main_mailer_type select No configuration' | debconf-set-selections
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

postfix_cleanup() {
  local hook pid
  for hook in "${postfix_exit_hooks[@]}"; do "$hook" || true; done
  if [ -f "$work/spool/pid/master.pid" ]; then
    postfix -c "$conf" stop >/dev/null 2>&1 || true
    pid="$(tr -dc 0-9 <"$work/spool/pid/master.pid" || true)"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" || true; fi
  fi
  local keep="${postfix_name#interop-}"
  keep="INTEROP_${keep^^}_KEEP"
  [ -n "${!keep:-}" ] || rm -rf "$work"
}

# Makes $work (config in $conf, queue, data, log) and stops and removes it all on exit.
postfix_instance() {
  postfix_name="$1"
  # Postfix's daemons run as the postfix user, which must reach its queue: a private TMPDIR
  # (mode 0700) will not do, /tmp will.
  local base="${TMPDIR:-/tmp}"
  runuser -u postfix -- test -x "$base" 2>/dev/null || base=/tmp
  work="$(mktemp -d "$base/netdiag-$postfix_name.XXXXXX")"
  conf="$work/etc"
  trap postfix_cleanup EXIT
  mkdir "$conf" "$work/spool" "$work/data"
  # The daemons drop to the postfix user, which must reach its queue and own its data directory.
  chmod 755 "$work"
  chown postfix "$work/data"
}

# The main.cf lines every instance shares; the script appends its own.
postfix_main_cf() {
  cat <<CONF
compatibility_level = 3.6
queue_directory = $work/spool
data_directory = $work/data
maillog_file = $work/postfix.log
maillog_file_prefixes = $work
# Postfix refuses an inet_interfaces address no interface carries (127.0.0.77 is only inside
# lo's 127/8); the addresses are master.cf's, each service bound to its own.
inet_interfaces = all
inet_protocols = ipv4
alias_maps =
alias_database =
biff = no
# A loopback client has no PTR to look up, and the test's network may have no resolver.
smtpd_peername_lookup = no
CONF
}

# The internal services every instance needs, none chrooted (a chroot would need copies of
# /etc files inside the queue); the script adds its smtpd lines and any delivery agent.
postfix_master_cf() {
  cat <<CONF
cleanup unix n - n - 0 cleanup
qmgr unix n - n 300 1 qmgr
tlsmgr unix - - n 1000? 1 tlsmgr
rewrite unix - - n - - trivial-rewrite
bounce unix - - n - 0 bounce
defer unix - - n - 0 bounce
trace unix - - n - 0 bounce
verify unix - - n - 1 verify
proxymap unix - - n - - proxymap
error unix - - n - - error
retry unix - - n - - error
anvil unix - - n - 1 anvil
scache unix - - n - 1 scache
postlog unix-dgram n - n - 1 postlogd
CONF
}

postfix_failed() {
  echo "$postfix_name: $1; Postfix's log:" >&2
  cat "$work/postfix.log" >&2 || echo "(none: Postfix logs to syslog until its postlogd runs)" >&2
  exit 1
}

postfix_start() {
  postfix -c "$conf" check || postfix_failed "postfix check failed"
  postfix -c "$conf" start || postfix_failed "postfix did not start"
}
