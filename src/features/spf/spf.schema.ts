import { type Static, Type } from 'typebox';
import { AttributionFields, Nullable } from '../../api-schema.js';
import { ReasonSchema } from '../dnssec/dnssec.schema.js';
import { SPF_RESULTS } from './spf-types.js';

export const SpfQuerySchema = Type.Object({
  ip: Type.String({
    minLength: 1,
    maxLength: 64,
    description:
      'The SMTP client’s address, IPv4 or IPv6 (an IPv4-mapped IPv6 address counts as IPv4). Public or not: it is ' +
      'only compared with the policy, never contacted.',
    examples: ['192.0.2.1'],
  }),
  sender: Type.Optional(
    Type.String({
      maxLength: 512,
      description:
        'MAIL FROM: `user@domain`, `@domain` (the local part is then `postmaster`, RFC 7208 §4.3) or empty ' +
        '(a bounce: the HELO identity is checked as `postmaster@<helo>`, §2.4).',
      examples: ['alice@example.com'],
    }),
  ),
  helo: Type.Optional(
    Type.String({
      maxLength: 512,
      description: 'The HELO/EHLO name (for %{h}, and the checked identity when `sender` is empty).',
      examples: ['mail.example.com'],
    }),
  ),
  domain: Type.Optional(
    Type.String({
      maxLength: 1024,
      description:
        'The domain whose policy is checked. Default: the sender’s domain, or the HELO name when the sender is ' +
        'empty (RFC 7208 §2.4).',
    }),
  ),
});
export type SpfQuery = Static<typeof SpfQuerySchema>;

const SpfResultSchema = Type.Enum([...SPF_RESULTS], {
  description: 'The check_host() result as RFC 7208 §2.6 names it.',
});

const TraceEntrySchema = Type.Object(
  {
    step: Type.Enum(['record', 'term', 'result', 'omitted'], {
      description:
        '`record`: the SPF record looked up for `domain`; `term`: one mechanism or modifier evaluated; ' +
        '`result`: check_host()’s result for `domain`; `omitted`: `count` more terms of that record that ' +
        'matched nothing without a DNS lookup, or were not reached, are not listed (the first 50 are).',
    }),
    depth: Type.Integer({
      minimum: 0,
      description: 'Nesting: 0 for the checked domain, one more through each include or redirect.',
    }),
    domain: Type.String({ description: 'The <domain> of this step.' }),
    via: Type.Optional(Type.Enum(['check', 'include', 'redirect'])),
    record: Type.Optional(
      Type.String({
        description: 'The selected `v=spf1` record (its first 2 047 characters and “…” if longer).',
      }),
    ),
    term: Type.Optional(
      Type.String({
        description: 'The term as written in the record (its first 255 characters and “…” if longer).',
      }),
    ),
    target: Type.Optional(Type.String({ description: 'The name the term queried, macros expanded.' })),
    lookup: Type.Optional(
      Type.Boolean({ description: 'Counted against the limit of 10 DNS-querying terms (§4.6.4).' }),
    ),
    void: Type.Optional(
      Type.Boolean({ description: 'The lookup found nothing: counted against the limit of 2 void lookups.' }),
    ),
    outcome: Type.Optional(
      Type.Enum(['match', 'no_match', 'error', 'not_reached'], {
        description: '`not_reached`: an earlier mechanism had already matched.',
      }),
    ),
    result: Type.Optional(SpfResultSchema),
    count: Type.Optional(
      Type.Integer({ minimum: 1, description: '`omitted`: how many terms are not listed.' }),
    ),
    detail: Type.String({ description: 'What happened, in words (at most 600 characters).' }),
  },
  { additionalProperties: false },
);

export const SpfResponseSchema = Type.Object(
  {
    domain: Type.String({ description: 'The domain whose policy was checked.' }),
    ip: Type.String({ description: 'The client address as compared.' }),
    sender: Type.String({
      description: 'The <sender> checked: `local@domain` after the RFC 7208 §4.3 defaults.',
    }),
    helo: Nullable(Type.String()),
    identity: Type.Enum(['mailfrom', 'helo'], { description: 'Which identity was checked (§2.3, §2.4).' }),
    result: SpfResultSchema,
    explanation: Type.Optional(
      Type.String({
        description:
          'On `fail`: the text of the policy’s exp= modifier, macros expanded (§6.2); at most 512 characters, ' +
          'cut with “…” past that.',
      }),
    ),
    explanation_note: Type.Optional(
      Type.String({
        description:
          'Why `explanation` is absent or shortened although exp= named a text: a TXT record longer than 1 024 ' +
          'characters or with more than 32 macros is not used, an expansion past 512 characters is cut.',
      }),
    ),
    problem: Type.Optional(
      Type.String({ description: 'On `permerror` or `temperror`: what went wrong, where.' }),
    ),
    matched: Type.Optional(
      Type.Object(
        {
          mechanism: Type.String({ description: 'The mechanism that matched the address.' }),
          record_domain: Type.String({ description: 'The domain whose record holds it.' }),
          depth: Type.Integer({ minimum: 0, description: 'Include/redirect depth of that record.' }),
        },
        {
          additionalProperties: false,
          description:
            'Where the evaluation matched. Through an include, the mechanism inside the included record that ' +
            'matched (the include’s own qualifier gives the result; the trace shows both).',
        },
      ),
    ),
    lookups: Type.Integer({
      minimum: 0,
      description: 'DNS-querying terms evaluated (limit 10, §4.6.4); evaluation stops at the 11th.',
    }),
    lookup_limit: Type.Integer({ description: 'RFC 7208 §4.6.4: 10.' }),
    void_lookups: Type.Integer({ minimum: 0, description: 'Lookups that found nothing (limit 2, §4.6.4).' }),
    void_lookup_limit: Type.Integer({ description: 'RFC 7208 §4.6.4: 2.' }),
    trace: Type.Array(TraceEntrySchema, {
      description: 'The evaluation step by step, in order; `depth` nests includes and redirects.',
    }),
    received_spf: Type.String({
      description:
        'A Received-SPF header field value (RFC 7208 §9.1), ready to paste after "Received-SPF: ".',
    }),
    authentication_results: Type.String({
      description: 'The `spf=` result clause of an Authentication-Results header field (RFC 8601 §2.7.2).',
    }),
    dnssec: Type.Optional(
      Type.Object(
        {
          status: Type.Enum(['bogus']),
          reason: ReasonSchema,
          questions: Type.Array(
            Type.Object({ name: Type.String(), type: Type.String() }, { additionalProperties: false }),
            { description: 'The questions the resolvers refused (SERVFAIL) that netdiag finds bogus.' },
          ),
          unvalidated_result: SpfResultSchema,
          message: Type.String(),
        },
        {
          additionalProperties: false,
          description:
            "Present when a lookup failed because DNSSEC is broken (netdiag's own validation finds it bogus): " +
            '`reason` is the first broken link. `result` is what a receiver whose resolver validates concludes ' +
            '(temperror); `unvalidated_result` is check_host() on the records as the domain’s servers publish them, ' +
            'what a receiver that does not validate concludes.',
        },
      ),
    ),
    dns_queries: Type.Integer({ minimum: 0, description: 'Distinct DNS questions asked.' }),
    checked_at: Type.String({ format: 'date-time' }),
    ...AttributionFields,
  },
  { additionalProperties: false },
);
export type SpfResponse = Static<typeof SpfResponseSchema>;
