#!/usr/bin/env bash
# SMTP interop check: netdiag's STARTTLS probe against a real mail server (Postfix from Debian).
#
# Starts a Postfix instance of its own (its own main.cf, master.cf, queue and
# log in a temp dir; the system's Postfix, if any, is neither used nor touched)
# with STARTTLS on port 25 of two loopback addresses: 127.0.0.77 as Postfix
# comes (TLS 1.3) and 127.0.0.78 held to TLS 1.2, each serving a leaf for
# mx.interop.test and its intermediate from the test CA. Then it runs
# test/interop/mail-tls-postfix.test.ts, which probes both (and asks GET
# /api/mail-tls about a domain whose MX is the first, with a fake DNS server)
# and compares what netdiag saw with `openssl s_client -starttls smtp` and with
# Postfix's own log, and test/interop/tls-scan-postfix.test.ts, which scans both
# with GET /api/tls-scan?service=smtp and tries every protocol and suite with s_client
# to compare. It accepts no mail: no local delivery, no relaying. The addresses can
# be moved with INTEROP_SMTP_ADDRESS and INTEROP_SMTP12_ADDRESS.
#
# Arguments replace the test files given to vitest (mail-tls-postfix and tls-scan-postfix; another file, a -t filter);
# INTEROP_SMTP_KEEP=1 keeps the temp dir (config, certificates, Postfix's log).
#
# Needs root (Postfix's master binds port 25 and drops to its own user),
# postfix and openssl; installs them with apt-get when missing (CI).
set -euo pipefail

cd "$(dirname "$0")/.."

address="${INTEROP_SMTP_ADDRESS:-127.0.0.77}"
address12="${INTEROP_SMTP12_ADDRESS:-127.0.0.78}"
mx_name=mx.interop.test

if [ "$(id -u)" -ne 0 ]; then
  echo "interop-smtp: run as root: Postfix's master binds port 25 and drops to its own user" >&2
  exit 1
fi
if ! command -v postfix >/dev/null || ! command -v openssl >/dev/null; then
  if command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    # "No configuration": the package installs no main.cf and starts no system MTA.
    echo 'postfix postfix/main_mailer_type select No configuration' | debconf-set-selections
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends postfix openssl >/dev/null
  else
    echo "interop-smtp: postfix and openssl are required" >&2
    exit 1
  fi
fi

# Postfix's daemons run as the postfix user, which must reach its queue: a private TMPDIR
# (mode 0700) will not do, /tmp will.
base="${TMPDIR:-/tmp}"
runuser -u postfix -- test -x "$base" 2>/dev/null || base=/tmp
work="$(mktemp -d "$base/netdiag-interop-smtp.XXXXXX")"
conf="$work/etc"
cleanup() {
  if [ -f "$work/spool/pid/master.pid" ]; then
    postfix -c "$conf" stop >/dev/null 2>&1 || true
    pid="$(tr -dc 0-9 <"$work/spool/pid/master.pid" || true)"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" || true; fi
  fi
  [ -n "${INTEROP_SMTP_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

mkdir "$conf" "$work/spool" "$work/data"
# The daemons drop to the postfix user, which must reach its queue and own its data directory.
chmod 755 "$work"
chown postfix "$work/data"
npx tsx test/interop/export-test-pki.ts "$conf" "$mx_name"

cat >"$conf/main.cf" <<CONF
compatibility_level = 3.6
queue_directory = $work/spool
data_directory = $work/data
maillog_file = $work/postfix.log
maillog_file_prefixes = $work
myhostname = $mx_name
# Postfix refuses an inet_interfaces address no interface carries (127.0.0.77 is only inside
# lo's 127/8); the addresses are master.cf's, each service bound to its own.
inet_interfaces = all
inet_protocols = ipv4
# Mail for nobody: no local domains, no relaying, no aliases, every recipient refused.
mydestination =
relay_domains =
alias_maps =
alias_database =
local_transport = error:local delivery is disabled
smtpd_relay_restrictions = reject_unauth_destination
smtpd_recipient_restrictions = reject
biff = no
# A loopback client has no PTR to look up, and the test's network may have no resolver.
smtpd_peername_lookup = no
smtpd_tls_chain_files = $conf/$mx_name.key, $conf/$mx_name.pem
smtpd_tls_security_level = may
smtpd_tls_loglevel = 1
CONF

# Only what an SMTP session without mail needs; nothing chrooted (a chroot would need
# copies of /etc files inside the queue).
cat >"$conf/master.cf" <<CONF
$address:smtp inet n - n - - smtpd
$address12:smtp inet n - n - - smtpd
  -o smtpd_tls_protocols=TLSv1.2
  -o syslog_name=postfix-tls12
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

failed() {
  echo "interop-smtp: $1; Postfix's log:" >&2
  cat "$work/postfix.log" >&2 || echo "(none: Postfix logs to syslog until its postlogd runs)" >&2
  exit 1
}
postfix -c "$conf" check || failed "postfix check failed"
postfix -c "$conf" start || failed "postfix did not start"

for _ in $(seq 1 50); do
  if openssl s_client -connect "$address:25" -starttls smtp -brief </dev/null >/dev/null 2>&1; then
    break
  fi
  postfix -c "$conf" status >/dev/null 2>&1 || failed "postfix is not running"
  sleep 0.2
done

# One file at a time: each reads Postfix's one log for its own sessions.
[ $# -gt 0 ] || set -- test/interop/mail-tls-postfix.test.ts test/interop/tls-scan-postfix.test.ts
NETDIAG_INTEROP_SMTP="$address" \
NETDIAG_INTEROP_SMTP12="$address12" \
NETDIAG_INTEROP_SMTP_NAME="$mx_name" \
NETDIAG_INTEROP_SMTP_CA="$conf/ca.pem" \
NETDIAG_INTEROP_SMTP_CHAIN="$conf/$mx_name.pem" \
NETDIAG_INTEROP_SMTP_LOG="$work/postfix.log" \
  npx vitest run --no-file-parallelism "$@" || failed "the interop test failed"
