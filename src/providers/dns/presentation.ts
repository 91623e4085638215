/**
 * Zone-file presentation of rdata (RFC 1035 §5.1 and each type's RFC), the
 * way `dig +short` prints it with one difference we chose for the API: names
 * carry no trailing dot (the root stays "."). Character-strings are quoted,
 * with `"` and `\` escaped and non-printable bytes as \DDD, like dig.
 */
import type { DnsRR, SvcbData } from './types.js';

export function presentation(rr: DnsRR): string {
  switch (rr.type) {
    case 'A':
    case 'AAAA':
      return rr.data.address;
    case 'CNAME':
    case 'DNAME':
      return rr.data.target;
    case 'NS':
    case 'PTR':
      return rr.data.host;
    case 'MX':
      return `${rr.data.priority} ${rr.data.exchange}`;
    case 'TXT':
      return rr.data.strings.map(quoted).join(' ');
    case 'SOA': {
      const d = rr.data;
      return `${d.mname} ${d.rname} ${d.serial} ${d.refresh} ${d.retry} ${d.expire} ${d.minimum}`;
    }
    case 'CAA':
      return `${rr.data.flags} ${rr.data.tag} ${quoted(rr.data.value)}`;
    case 'SRV':
      return `${rr.data.priority} ${rr.data.weight} ${rr.data.port} ${rr.data.target}`;
    case 'DS':
      return `${rr.data.keyTag} ${rr.data.algorithm} ${rr.data.digestType} ${rr.data.digest}`;
    case 'DNSKEY':
      return `${rr.data.flags} ${rr.data.protocol} ${rr.data.algorithm} ${rr.data.publicKey}`;
    case 'RRSIG': {
      const d = rr.data;
      return [
        d.typeCovered,
        d.algorithm,
        d.labels,
        d.originalTtl,
        sigTime(d.expiration),
        sigTime(d.inception),
        d.keyTag,
        d.signerName,
        d.signature,
      ].join(' ');
    }
    case 'NSEC':
      return [rr.data.nextDomain, ...rr.data.types].join(' ');
    case 'NSEC3': {
      const d = rr.data;
      return [
        d.algorithm,
        d.flags,
        d.iterations,
        d.salt === '' ? '-' : d.salt,
        d.nextHashedOwner,
        ...d.types,
      ].join(' ');
    }
    case 'TLSA':
      return `${rr.data.usage} ${rr.data.selector} ${rr.data.matchingType} ${rr.data.data}`;
    case 'SVCB':
    case 'HTTPS':
      return svcb(rr.data);
    default:
      // RFC 3597 §5 generic form: \# <length> <hex>.
      return rr.data.rdata === '' ? '\\# 0' : `\\# ${rr.data.rdata.length / 2} ${rr.data.rdata}`;
  }
}

/** A character-string in double quotes (RFC 1035 §5.1), escaped byte by byte as dig does. */
export function quoted(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, 'utf8')) {
    if (byte === 0x22 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte < 0x20 || byte > 0x7e) out += `\\${byte.toString().padStart(3, '0')}`;
    else out += String.fromCharCode(byte);
  }
  return `${out}"`;
}

/** RRSIG times as YYYYMMDDHHmmSS in UTC (RFC 4034 §3.2). */
function sigTime(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

function svcb(d: SvcbData): string {
  const params = d.params.map((p) => (p.value === '' ? p.key : `${p.key}=${p.value}`));
  return [String(d.priority), d.target, ...params].join(' ');
}
