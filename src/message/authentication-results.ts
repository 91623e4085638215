// PLACEHOLDER until the header module lands (issue 34).
import type { MessageAnalysis } from '../features/message/message.schema.js';
import type { HeaderField } from './headers.js';

type Header = Omit<MessageAnalysis['authentication_results'][number], 'disagreements'>;

export function trustAuthenticationResults(_fields: HeaderField[], _receivingIndex: number | null): Header[] {
  return [];
}

export function disagreements(
  _header: Header,
  _ours: {
    dkim: { domain: string | null; selector: string | null; result: string; reason: string | null }[];
    spf: string | null;
    dmarc: string;
    arc: string;
  },
): string[] {
  return [];
}
