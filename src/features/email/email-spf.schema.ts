/**
 * GET /api/email-security: the SPF check's part of the response,
 * `details.spf` (see email.schema.ts for the whole and why nullable fields
 * are type arrays): the include/redirect tree, the lookup counts past the
 * limit, and where receivers stop with permerror.
 */
import { Type } from 'typebox';
import { Nullable } from '../../api-schema.js';

const SpfTermSchema = Type.Object({
  term: Type.String(),
  lookups: Type.Integer({ minimum: 0, maximum: 1 }),
  void: Type.Boolean(),
  note: Type.Optional(Type.String()),
});

const SpfNodeSchema = Type.Object({
  domain: Type.String(),
  via: Type.Enum(['root', 'include', 'redirect']),
  qualifier: Type.Enum(['+', '-', '~', '?']),
  depth: Type.Integer({ minimum: 0 }),
  parent: Nullable(Type.Integer({ minimum: 0, description: 'Index of the parent node in `tree`.' })),
  state: Type.Enum(
    ['ok', 'none', 'multiple_records', 'syntax_error', 'loop', 'macro', 'not_followed', 'error'],
    {
      description:
        'not_followed: our work cap (40 records, 15 deep) was reached; the 10-lookup limit never stops the walk.',
    },
  ),
  record: Nullable(
    Type.String({ description: 'The record (its first 2 047 characters and “…” when longer).' }),
  ),
  lookups: Type.Integer({ minimum: 0, description: 'DNS-querying terms in the whole record.' }),
  void_lookups: Type.Integer({ minimum: 0 }),
  terms: Type.Array(SpfTermSchema, { description: 'The record’s terms in order: the first 50.' }),
  terms_omitted: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Terms after the first 50, not listed.' }),
  ),
  problem: Type.Optional(Type.String()),
});

const SpfEvaluatedTermSchema = Type.Object({
  term: Type.String(),
  domain: Type.String({ description: 'The domain whose record holds the term.' }),
  result: Type.Enum(['pass', 'fail', 'softfail', 'neutral'], {
    description:
      'What the senders it matches get: the term’s qualifier, or for a term inside includes the outermost include’s.',
  }),
});

const SpfPermerrorAtSchema = Type.Object(
  {
    reason: Type.Enum(
      ['lookup_limit', 'void_lookup_limit', 'mx_host_limit', 'no_record', 'multiple_records', 'syntax_error'],
      {
        description:
          'lookup_limit: the 11th DNS-querying term; void_lookup_limit: the 3rd void lookup; mx_host_limit: an mx ' +
          'term with more than 10 hosts; no_record, multiple_records, syntax_error: what the include or redirect ' +
          'target publishes.',
      },
    ),
    term: Type.String({ examples: ['include:_spf.vendor.example'] }),
    domain: Type.String({ description: 'The domain whose record holds the term.' }),
    path: Type.Array(Type.String(), {
      description:
        'The include and redirect terms followed from the domain’s own record to that record, outermost first ' +
        '(empty: the domain’s own record).',
    }),
    node: Type.Integer({ minimum: 0, description: 'The term is `tree[node].terms[term_index]`.' }),
    term_index: Type.Integer({
      minimum: 0,
      description: 'Its place among the record’s terms (listed in `terms` when among the first 50).',
    }),
    lookups: Type.Integer({
      minimum: 0,
      description: 'DNS-querying terms counted up to and including this one.',
    }),
    void_lookups: Type.Integer({
      minimum: 0,
      description: 'Void lookups counted up to and including this one.',
    }),
    evaluated_before: Type.Array(SpfEvaluatedTermSchema, {
      description:
        'The terms evaluated before it whose matches end the evaluation (ip4, ip6, a, mx, ptr, exists not void; ' +
        'includes not followed here), in evaluation order: mail they match never reaches the permerror and gets ' +
        '`result`. A term inside an include whose qualifier, or an inner include’s, is not "+" is left out: it ' +
        'decides nothing, its matches only make that include not match and evaluation goes on after it. ' +
        'The first 50.',
    }),
    evaluated_before_omitted: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Terms evaluated before it after the first 50, not listed.' }),
    ),
  },
  {
    description:
      'Where receivers stop with permerror when evaluating a sender no earlier term matches: the first such term ' +
      'in evaluation order (left to right, depth first through includes, a redirect after the record’s ' +
      'mechanisms, RFC 7208 §4.6). null when no term does, when the whole record is a permerror (record_count > ' +
      '1, a syntax error in the domain’s own record) or on a temperror. With lookup_count_complete false a ' +
      'receiver may stop earlier.',
  },
);

export const SpfDetails = Type.Object({
  state: Type.Enum(['none', 'evaluated', 'error']),
  record_count: Type.Integer({ minimum: 0 }),
  valid: Type.Boolean(),
  within_limits: Type.Boolean(),
  permerror: Type.Boolean({
    description:
      'Receivers return permerror: for every sender, or, when permerror_at is set, for every sender not matched ' +
      'before that term.',
  }),
  lookup_count: Type.Integer({
    minimum: 0,
    description:
      'DNS-querying terms (include, a, mx, ptr, exists, redirect) through the whole tree, counted past the ' +
      'limit: the exact total, so the excess is lookup_count − lookup_limit.',
  }),
  lookup_limit: Type.Integer({ description: '10 (RFC 7208 §4.6.4).' }),
  lookup_count_complete: Type.Boolean({
    description:
      'false: an include or redirect was not followed (its domain-spec has macros, or the work cap of 40 ' +
      'records, 15 deep, was reached); the count is a lower bound.',
  }),
  void_lookup_count: Type.Integer({ minimum: 0 }),
  void_lookup_limit: Type.Integer({ description: '2 (RFC 7208 §4.6.4).' }),
  void_lookup_count_complete: Type.Boolean({
    description:
      'false: lookup_count_complete is false, or a/mx/exists terms were left unresolved (work cap of 40 terms); the ' +
      'void count is a lower bound. Terms with macros and ptr depend on each message and are never resolved.',
  }),
  permerror_at: Nullable(SpfPermerrorAtSchema),
  effective_all: Nullable(
    Type.String({ description: 'The "all" that ends evaluation at the top, through redirects.' }),
  ),
  tree: Type.Array(SpfNodeSchema, {
    description:
      'The include/redirect tree in pre-order: depth first, a record’s includes as written, then its redirect ' +
      '(the order receivers evaluate them).',
  }),
});
