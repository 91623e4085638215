#!/usr/bin/env bash
# DNS interop check: our client against a real resolver (unbound from Debian).
#
# Starts unbound on loopback with the zone in test/interop/unbound-zone.conf,
# listening for UDP and TCP on 127.0.0.1:5399, DNS over TLS on :8853 and DNS
# over HTTPS (HTTP/2) on :8453 with a certificate from the test CA, then runs
# test/interop/dns-unbound.test.ts (the other interop suites have scripts of
# their own or run in npm test), which asks the same questions through our
# client over each transport and compares the answers with dig's. Ports can be moved with
# INTEROP_DNS_PORT, INTEROP_DOT_PORT and INTEROP_DOH_PORT.
#
# Needs unbound (built with libnghttp2, as Debian's is) and dig; installs both
# with apt-get when missing and running as root (CI), otherwise says what to install.
set -euo pipefail

cd "$(dirname "$0")/.."

dns_port="${INTEROP_DNS_PORT:-5399}"
dot_port="${INTEROP_DOT_PORT:-8853}"
doh_port="${INTEROP_DOH_PORT:-8453}"

if ! command -v unbound >/dev/null || ! command -v dig >/dev/null; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends unbound dnsutils >/dev/null
  else
    echo "interop-dns: unbound and dig are required (apt-get install unbound dnsutils)" >&2
    exit 1
  fi
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/netdiag-interop-dns.XXXXXX")"
unbound_pid=""
cleanup() {
  if [ -n "$unbound_pid" ] && kill -0 "$unbound_pid" 2>/dev/null; then
    kill "$unbound_pid"
    wait "$unbound_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

npx tsx test/interop/export-test-pki.ts "$work"
cp test/interop/unbound-zone.conf "$work/zone.conf"

cat >"$work/unbound.conf" <<CONF
server:
  # Run unprivileged-friendly, in the foreground, with everything in $work.
  username: ""
  chroot: ""
  directory: "$work"
  use-syslog: no
  logfile: "$work/unbound.log"
  verbosity: 1
  do-ip6: no
  interface: 127.0.0.1@$dns_port
  interface: 127.0.0.1@$dot_port
  interface: 127.0.0.1@$doh_port
  port: $dns_port
  tls-port: $dot_port
  https-port: $doh_port
  tls-service-key: "$work/server.key"
  tls-service-pem: "$work/server.pem"
  access-control: 127.0.0.0/8 allow
  # Local data only: no validator (no trust anchor to fetch), never recurse out.
  module-config: "iterator"
  do-not-query-localhost: yes
  include: "$work/zone.conf"
remote-control:
  control-enable: no
CONF

unbound-checkconf "$work/unbound.conf"
unbound -d -p -c "$work/unbound.conf" &
unbound_pid=$!

for _ in $(seq 1 50); do
  if dig @127.0.0.1 -p "$dns_port" +short +time=1 +tries=1 interop.test SOA >/dev/null 2>&1; then
    break
  fi
  if ! kill -0 "$unbound_pid" 2>/dev/null; then
    echo "interop-dns: unbound exited; its log:" >&2
    cat "$work/unbound.log" >&2 || true
    exit 1
  fi
  sleep 0.2
done

NETDIAG_INTEROP_DNS=1 \
NETDIAG_INTEROP_DNS_UDP="udp://127.0.0.1:$dns_port" \
NETDIAG_INTEROP_DNS_TCP="tcp://127.0.0.1:$dns_port" \
NETDIAG_INTEROP_DNS_DOT="tls://127.0.0.1:$dot_port" \
NETDIAG_INTEROP_DNS_DOH="https://127.0.0.1:$doh_port/dns-query" \
NETDIAG_INTEROP_DNS_CA="$work/ca.pem" \
  npx vitest run test/interop/dns-unbound.test.ts
