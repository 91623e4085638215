/** Types of build-inputs.mjs (plain JavaScript: ensure-built.mjs runs it without tsx). */
export type Part = 'server' | 'web';
export const DIST: string;
export const STATE_FILE: string;
export const WEB_SRC: string;
export const CLIENT_SRC: string;
export const API_TYPES: string;
export function filesUnder(dir: string, keep: (path: string) => boolean): string[];
export function serverSources(): string[];
export function serverData(): string[];
export function inputHash(part: Part): string;
export function readState(): Partial<Record<Part, string>>;
export function isCurrent(part: Part, hash: string, state?: Partial<Record<Part, string>>): boolean;
