// PLACEHOLDER until the header module lands (issue 34).
import type { ReceivedHop } from '../features/message/message.schema.js';
import type { HeaderField } from './headers.js';

export function parseReceivedHeaders(_fields: HeaderField[]): ReceivedHop[] {
  return [];
}

export function receivingHop(
  _hops: ReceivedHop[],
): { index: number; ip: string; helo: string | null; mail_from: string | null; why: string } | null {
  return null;
}
