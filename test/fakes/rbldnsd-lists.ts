/**
 * The blocklists test/fakes/rbldnsd-hierarchy.ts serves, as data: each list's rbldnsd datasets
 * (in rbldnsd's own formats, man rbldnsd(8)) and every subject the tests ask about, with what
 * rbldnsd answers for it (A records and TXT, or nothing: NXDOMAIN).
 *
 * Addresses are from the documentation ranges (RFC 5737, RFC 3849) plus the RFC 5782 test
 * points; domains under .test. The codes follow the real lists' conventions: 127.0.0.x for IP
 * lists, 127.0.1.x for domain lists (Spamhaus DBL), 127.255.255.252/254/255 for "we refuse to
 * answer you" (Spamhaus: typo in the zone name / query through a public resolver / too many
 * queries), and a list that answers 127.0.0.2 for everything, as dead lists have done.
 */

export type BlocklistKind = 'ip4' | 'ip6' | 'domain';

export interface BlocklistEntry {
  zone: string;
  kind: BlocklistKind;
  /** The address or domain asked about (not the query name). */
  subject: string;
  /** The A records rbldnsd answers, sorted; empty: not listed (NXDOMAIN). */
  a: string[];
  /** The TXT strings rbldnsd answers, sorted; may be empty for a listed subject (a `:2:` entry). */
  txt: string[];
  about: string;
}

export interface Dataset {
  /** rbldnsd's dataset type. */
  type: 'ip4set' | 'ip4trie' | 'ip6trie' | 'dnset';
  file: string;
  lines: string[];
}

export interface BlocklistSpec {
  zone: string;
  /** What the list is for the tests: a plain list, one that refuses, one that lists everything. */
  role: 'list' | 'refusing' | 'lists-everything';
  /** The kinds of subject it is asked about (a zone of an ip4 and an ip6 dataset is both). */
  kinds: BlocklistKind[];
  /** With $SOA and $NS, as real lists have; without, rbldnsd answers NODATA with no SOA. */
  soa: boolean;
  datasets: Dataset[];
  entries: BlocklistEntry[];
}

const NS = ['rbl1.dnsbl-hosts.test.', 'rbl2.dnsbl-hosts.test.'];

/** A dataset file: $SOA/$NS when the list has them (rbldnsd takes the first it finds per zone). */
export function rbldnsdData(list: BlocklistSpec, dataset: Dataset, serial: number): string {
  const head =
    list.soa && dataset === list.datasets[0]
      ? [`$SOA 300 ${NS[0]} hostmaster.${list.zone}. ${serial} 3600 600 86400 60`, `$NS 300 ${NS.join(' ')}`]
      : [];
  return `${[...head, '$TTL 300', ...dataset.lines].join('\n')}\n`;
}

type Row = [subject: string, a: string[], txt: string[], about: string];

function entries(zone: string, kind: BlocklistKind, rows: Row[]): BlocklistEntry[] {
  return rows.map(([subject, a, txt, about]) => ({
    zone,
    kind,
    subject,
    a: [...a].sort(),
    txt: [...txt].sort(),
    about,
  }));
}

const notListed = (subject: string, about: string): Row => [subject, [], [], about];

const IP4_LOOKUP = 'Listed: https://dnsbl.example/lookup?ip=';

/** dnsbl.example: two ip4set datasets in one zone, as zen.spamhaus.org joins SBL, XBL and PBL. */
const DNSBL4: BlocklistSpec = {
  zone: 'dnsbl.example',
  role: 'list',
  kinds: ['ip4'],
  soa: true,
  datasets: [
    {
      type: 'ip4set',
      file: 'dnsbl4',
      lines: [
        `:127.0.0.2:${IP4_LOOKUP}$`,
        '127.0.0.2',
        '198.51.100.0/24 :3:Spam network, see https://dnsbl.example/lookup?ip=$',
        '!198.51.100.77',
        '203.0.113.64/26 :4:Dynamic range $',
        // An A value and, with the second colon, no TXT at all.
        '192.0.2.200 :2:',
      ],
    },
    { type: 'ip4set', file: 'pbl4', lines: [':127.0.0.11:Policy: end-user range $', '203.0.113.0/24'] },
  ],
  entries: entries('dnsbl.example', 'ip4', [
    ['127.0.0.2', ['127.0.0.2'], [`${IP4_LOOKUP}127.0.0.2`], 'the RFC 5782 test point, listed'],
    notListed('127.0.0.1', 'the RFC 5782 test point that must not be listed'),
    [
      '198.51.100.0',
      ['127.0.0.3'],
      ['Spam network, see https://dnsbl.example/lookup?ip=198.51.100.0'],
      'first of a /24',
    ],
    [
      '198.51.100.255',
      ['127.0.0.3'],
      ['Spam network, see https://dnsbl.example/lookup?ip=198.51.100.255'],
      'last of a /24',
    ],
    notListed('198.51.99.255', 'just below the /24'),
    notListed('198.51.101.0', 'just above the /24'),
    notListed('198.51.100.77', 'excluded from the /24 (!198.51.100.77)'),
    [
      '198.51.100.78',
      ['127.0.0.3'],
      ['Spam network, see https://dnsbl.example/lookup?ip=198.51.100.78'],
      'beside the excluded address',
    ],
    [
      '203.0.113.64',
      ['127.0.0.4', '127.0.0.11'],
      ['Dynamic range 203.0.113.64', 'Policy: end-user range 203.0.113.64'],
      'first of a /26, in two datasets',
    ],
    [
      '203.0.113.127',
      ['127.0.0.4', '127.0.0.11'],
      ['Dynamic range 203.0.113.127', 'Policy: end-user range 203.0.113.127'],
      'last of the /26',
    ],
    [
      '203.0.113.63',
      ['127.0.0.11'],
      ['Policy: end-user range 203.0.113.63'],
      'just below the /26: the /24 of the other dataset only',
    ],
    ['203.0.113.128', ['127.0.0.11'], ['Policy: end-user range 203.0.113.128'], 'just above the /26'],
    ['192.0.2.200', ['127.0.0.2'], [], 'listed with no TXT (NODATA for TXT)'],
    notListed('192.0.2.1', 'an address no dataset lists'),
  ]),
};

const DNSBL6: BlocklistSpec = {
  zone: 'dnsbl6.example',
  role: 'list',
  kinds: ['ip6'],
  soa: true,
  datasets: [
    {
      type: 'ip6trie',
      file: 'dnsbl6',
      lines: [
        ':127.0.0.2:IPv6 listed: $',
        '::ffff:7f00:2',
        '2001:db8:1::/48 :3:IPv6 spam network $',
        '!2001:db8:1::25',
        '2001:db8:2::1 :4:One host',
      ],
    },
  ],
  entries: entries('dnsbl6.example', 'ip6', [
    [
      '::ffff:7f00:2',
      ['127.0.0.2'],
      ['IPv6 listed: ::ffff:7f00:2'],
      'the RFC 5782 §5 IPv6 test point, listed',
    ],
    notListed('::ffff:7f00:1', 'the RFC 5782 §5 IPv6 test point that must not be listed'),
    ['2001:db8:1::', ['127.0.0.3'], ['IPv6 spam network 2001:db8:1::'], 'first of a /48'],
    [
      '2001:db8:1:ffff:ffff:ffff:ffff:ffff',
      ['127.0.0.3'],
      ['IPv6 spam network 2001:db8:1:ffff:ffff:ffff:ffff:ffff'],
      'last of the /48',
    ],
    notListed('2001:db8:0:ffff:ffff:ffff:ffff:ffff', 'just below the /48'),
    notListed('2001:db8:2::', 'just above the /48'),
    notListed('2001:db8:1::25', 'excluded from the /48'),
    ['2001:db8:1::26', ['127.0.0.3'], ['IPv6 spam network 2001:db8:1::26'], 'beside the excluded address'],
    ['2001:db8:2::1', ['127.0.0.4'], ['One host'], 'a single /128'],
    notListed('2001:db8:2::2', 'beside the single /128'),
  ]),
};

const DBL: BlocklistSpec = {
  zone: 'dbl.example',
  role: 'list',
  kinds: ['domain'],
  soa: true,
  datasets: [
    {
      type: 'dnset',
      file: 'dbl',
      lines: [
        ':127.0.1.2:Spam domain $',
        'test', // RFC 5782 §5: TEST must be listed (INVALID must not)
        'spam.test',
        '.badsite.test :127.0.1.4:Phishing $', // the domain and every name below it
        '!ok.badsite.test',
        '*.wild.test :127.0.1.5:Wildcard $', // names below wild.test, not wild.test itself
      ],
    },
  ],
  entries: entries('dbl.example', 'domain', [
    ['test', ['127.0.1.2'], ['Spam domain test'], 'the RFC 5782 §5 domain test point, listed'],
    notListed('invalid', 'the RFC 5782 §5 domain test point that must not be listed'),
    ['spam.test', ['127.0.1.2'], ['Spam domain spam.test'], 'a domain listed by itself'],
    notListed('www.spam.test', 'below a domain listed by itself (no wildcard)'),
    [
      'badsite.test',
      ['127.0.1.4'],
      ['Phishing badsite.test'],
      'a domain listed with its subdomains (.badsite.test)',
    ],
    ['a.b.badsite.test', ['127.0.1.4'], ['Phishing badsite.test'], 'two levels below .badsite.test'],
    notListed('ok.badsite.test', 'excluded below .badsite.test'),
    ['x.wild.test', ['127.0.1.5'], ['Wildcard wild.test'], 'below a wildcard entry'],
    notListed('wild.test', 'the wildcard entry’s own name (*.wild.test does not list it)'),
    notListed('clean.test', 'a domain no entry lists'),
  ]),
};

/** Answers "refused" codes: .254 to everyone (as Spamhaus answers a public resolver), .252/.255 to some. */
const REFUSING: BlocklistSpec = {
  zone: 'refuse.example',
  role: 'refusing',
  kinds: ['ip4'],
  soa: false,
  datasets: [
    {
      type: 'ip4trie', // the longest matching prefix wins
      file: 'refuse4',
      lines: [
        '0.0.0.0/0 :127.255.255.254:Query via public resolver refused',
        '198.51.100.0/24 :127.255.255.252:Typing error in DNSBL name',
        '203.0.113.9 :127.255.255.255:Excessive number of queries',
      ],
    },
  ],
  entries: entries('refuse.example', 'ip4', [
    ['127.0.0.2', ['127.255.255.254'], ['Query via public resolver refused'], 'the test point, refused'],
    [
      '127.0.0.1',
      ['127.255.255.254'],
      ['Query via public resolver refused'],
      'the unlisted test point, refused too',
    ],
    ['198.51.100.5', ['127.255.255.252'], ['Typing error in DNSBL name'], 'the "typing error" refusal'],
    ['203.0.113.9', ['127.255.255.255'], ['Excessive number of queries'], 'the "too many queries" refusal'],
    ['192.0.2.1', ['127.255.255.254'], ['Query via public resolver refused'], 'any other address'],
  ]),
};

const EVERYTHING: BlocklistSpec = {
  zone: 'all.example',
  role: 'lists-everything',
  kinds: ['ip4', 'ip6'],
  soa: false,
  datasets: [
    { type: 'ip4trie', file: 'all4', lines: ['0.0.0.0/0 :127.0.0.2:Everything is listed'] },
    { type: 'ip6trie', file: 'all6', lines: ['::/0 :127.0.0.2:Everything is listed'] },
  ],
  entries: [
    ...entries('all.example', 'ip4', [
      [
        '127.0.0.1',
        ['127.0.0.2'],
        ['Everything is listed'],
        'the test point that must not be listed, listed',
      ],
      ['192.0.2.1', ['127.0.0.2'], ['Everything is listed'], 'any address'],
    ]),
    ...entries('all.example', 'ip6', [
      [
        '::ffff:7f00:1',
        ['127.0.0.2'],
        ['Everything is listed'],
        'the IPv6 test point that must not be listed, listed',
      ],
      ['2001:db8::1', ['127.0.0.2'], ['Everything is listed'], 'any IPv6 address'],
    ]),
  ],
};

export const BLOCKLISTS: BlocklistSpec[] = [DNSBL4, DNSBL6, DBL, REFUSING, EVERYTHING];
