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
# postfix and openssl; installs them with apt-get when missing (CI). The
# instance's common parts are scripts/lib-postfix.sh's.
set -euo pipefail

cd "$(dirname "$0")/.."

address="${INTEROP_SMTP_ADDRESS:-127.0.0.77}"
address12="${INTEROP_SMTP12_ADDRESS:-127.0.0.78}"
mx_name=mx.interop.test

. scripts/lib-postfix.sh
postfix_require_root interop-smtp
postfix_need interop-smtp postfix:postfix openssl:openssl
postfix_instance interop-smtp
npx tsx test/interop/export-test-pki.ts "$conf" "$mx_name"

{
  postfix_main_cf
  cat <<CONF
myhostname = $mx_name
# Mail for nobody: no local domains, no relaying, every recipient refused.
mydestination =
relay_domains =
local_transport = error:local delivery is disabled
smtpd_relay_restrictions = reject_unauth_destination
smtpd_recipient_restrictions = reject
smtpd_tls_chain_files = $conf/$mx_name.key, $conf/$mx_name.pem
smtpd_tls_security_level = may
smtpd_tls_loglevel = 1
CONF
} >"$conf/main.cf"

# Only what an SMTP session without mail needs.
{
  cat <<CONF
$address:smtp inet n - n - - smtpd
$address12:smtp inet n - n - - smtpd
  -o smtpd_tls_protocols=TLSv1.2
  -o syslog_name=postfix-tls12
CONF
  postfix_master_cf
} >"$conf/master.cf"

postfix_start

for _ in $(seq 1 50); do
  if openssl s_client -connect "$address:25" -starttls smtp -brief </dev/null >/dev/null 2>&1; then
    break
  fi
  postfix -c "$conf" status >/dev/null 2>&1 || postfix_failed "postfix is not running"
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
  npx vitest run --no-file-parallelism "$@" || postfix_failed "the interop test failed"
