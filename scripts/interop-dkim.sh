#!/usr/bin/env bash
# DKIM interop check: a message signed by a real signer, Debian's OpenDKIM behind
# Postfix, verified by netdiag's POST /api/message.
#
# Makes an RSA 2048 key with opendkim-genkey, starts OpenDKIM as a signing milter
# (mode s, relaxed/simple, From oversigned as Debian's config does, one
# Domain/Selector/KeyFile, on 127.0.0.1:8891) and a
# Postfix instance of its own (scripts/lib-postfix.sh: config, queue and log in a
# temp dir) on port 25 of 127.0.0.79, with OpenDKIM as its milter for SMTP and
# local submission. Postfix accepts mail for interop.test and delivers it with
# virtual(8) to a Maildir: one file per message, the message as Postfix and
# OpenDKIM wrote it (Return-Path and Delivered-To added on top, nothing else
# changed; an mbox would quote body lines starting "From "). Then it runs
# test/interop/message-opendkim.test.ts, which sends a message over SMTP, reads
# the delivered file and asks POST /api/message about it (the key record in a
# fake DNS server), with OpenDKIM's own verifier (`opendkim -t`) as a second
# witness. Nothing is relayed: only interop.test is accepted.
#
# Arguments replace the test file given to vitest; INTEROP_DKIM_ADDRESS moves the
# SMTP address, INTEROP_DKIM_MILTER_PORT the milter's port, INTEROP_DKIM_KEEP=1
# keeps the temp dirs (Postfix's config, Maildir and log in $TMPDIR or /tmp; the key and
# OpenDKIM's config in /run, or INTEROP_DKIM_KEYS_BASE).
#
# Needs root (Postfix's master binds port 25 and drops to its own user; OpenDKIM
# drops to its own), postfix, opendkim and opendkim-tools; installs them with
# apt-get when missing (CI).
set -euo pipefail

cd "$(dirname "$0")/.."

address="${INTEROP_DKIM_ADDRESS:-127.0.0.79}"
milter_port="${INTEROP_DKIM_MILTER_PORT:-8891}"
domain=interop.test
selector=interop2048
canonicalization=relaxed/simple

. scripts/lib-postfix.sh
postfix_require_root interop-dkim
postfix_need interop-dkim postfix:postfix opendkim:opendkim opendkim-genkey:opendkim-tools
postfix_instance interop-dkim

# The key, at test time, and OpenDKIM's config, outside /tmp: OpenDKIM refuses a config or key
# file in a path any directory of which others may write (sticky or not), and a key others
# can read. It reads the key as its own user.
keys="$(mktemp -d "${INTEROP_DKIM_KEYS_BASE:-/run}/netdiag-interop-dkim.XXXXXX")"

stop_opendkim() {
  local pid
  if [ -f "$keys/opendkim.pid" ]; then
    pid="$(tr -dc 0-9 <"$keys/opendkim.pid" || true)"
    # SIGKILL: it keeps nothing to flush (no log, no stats), and after SIGTERM libmilter's
    # listener takes seconds to notice.
    if [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; then
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
    fi
  fi
  [ -n "${INTEROP_DKIM_KEEP:-}" ] || rm -rf "$keys"
}
postfix_exit_hooks+=(stop_opendkim)
opendkim-genkey -b 2048 -h sha256 -d "$domain" -s "$selector" -D "$keys"
cat >"$keys/opendkim.conf" <<CONF
Mode s
Domain $domain
Selector $selector
KeyFile $keys/$selector.private
Canonicalization $canonicalization
SignatureAlgorithm rsa-sha256
# As Debian's /etc/opendkim.conf ships: From is in h= once more than the message has it, so a
# From added on the way breaks the signature (the verifier hashed an empty field for it).
OversignHeaders From
# The test's client connects from 127.0.0.1; only internal hosts' mail is signed.
InternalHosts 127.0.0.0/8
Socket inet:$milter_port@127.0.0.1
UserID opendkim:opendkim
PidFile $keys/opendkim.pid
Background yes
Syslog no
CONF
chmod 755 "$keys"
chown -R opendkim:opendkim "$keys"
opendkim -x "$keys/opendkim.conf" || postfix_failed "opendkim did not start"

# The Maildir belongs to the user virtual(8) delivers as (never root).
mkdir "$work/mail"
chown nobody:nogroup "$work/mail"
{
  postfix_main_cf
  cat <<CONF
myhostname = mx.$domain
mydestination =
relay_domains =
local_transport = error:local delivery is disabled
# interop.test's mail goes to one Maildir (the trailing slash), whoever the recipient.
virtual_mailbox_domains = $domain
virtual_mailbox_base = $work/mail
virtual_mailbox_maps = static:inbox/
virtual_uid_maps = static:$(id -u nobody)
virtual_gid_maps = static:$(id -g nobody)
smtpd_milters = inet:127.0.0.1:$milter_port
non_smtpd_milters = \$smtpd_milters
# A milter that cannot be reached refuses the mail (4xx) rather than letting it through unsigned.
milter_default_action = tempfail
CONF
} >"$conf/main.cf"
{
  cat <<CONF
$address:smtp inet n - n - - smtpd
virtual unix - n n - - virtual
CONF
  postfix_master_cf
} >"$conf/master.cf"

postfix_start

# Readiness: both listening (a connection is all that is asked; OpenDKIM answers only milter).
listening() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
for _ in $(seq 1 50); do
  if listening 127.0.0.1 "$milter_port" && listening "$address" 25; then break; fi
  postfix -c "$conf" status >/dev/null 2>&1 || postfix_failed "postfix is not running"
  sleep 0.1
done
listening 127.0.0.1 "$milter_port" || postfix_failed "opendkim is not listening on 127.0.0.1:$milter_port"
listening "$address" 25 || postfix_failed "postfix is not listening on $address:25"

[ $# -gt 0 ] || set -- test/interop/message-opendkim.test.ts
NETDIAG_INTEROP_DKIM="$address" \
NETDIAG_INTEROP_DKIM_DOMAIN="$domain" \
NETDIAG_INTEROP_DKIM_SELECTOR="$selector" \
NETDIAG_INTEROP_DKIM_CANONICALIZATION="$canonicalization" \
NETDIAG_INTEROP_DKIM_KEY_RECORD="$keys/$selector.txt" \
NETDIAG_INTEROP_DKIM_MAILDIR="$work/mail/inbox" \
  npx vitest run --no-file-parallelism "$@" || postfix_failed "the interop test failed"
