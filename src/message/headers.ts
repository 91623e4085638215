// PLACEHOLDER until the header module lands (issue 34).
export interface HeaderField {
  name: string;
  value: string;
  index: number;
}

export function parseMessage(raw: Buffer): {
  fields: HeaderField[];
  body: Buffer | null;
  normalized: Buffer;
} {
  return { fields: [], body: raw, normalized: raw };
}

export function headerFrom(_fields: HeaderField[]): { address: string | null; domain: string | null } {
  return { address: null, domain: null };
}
