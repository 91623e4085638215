/**
 * Colour for people on a terminal, and nothing for pipes: ANSI SGR codes only when stdout is a
 * TTY and NO_COLOR (https://no-color.org) is unset; FORCE_COLOR decides either way when set,
 * as Node's own tty module reads it (FORCE_COLOR=0 off, anything else on).
 */
import { stripVTControlCharacters } from 'node:util';
import type { Tone } from '../client/words.js';

/** The site's tones, one union for both (src/client/words.ts): the same verdict has the same colour. */
export type { Tone };

export interface Style {
  readonly colour: boolean;
  tone(tone: Tone, text: string): string;
  bold(text: string): string;
  dim(text: string): string;
}

const SGR: Record<Tone | 'bold' | 'dim', [number, number]> = {
  ok: [32, 39],
  warn: [33, 39],
  bad: [31, 39],
  error: [35, 39],
  info: [36, 39],
  muted: [2, 22],
  bold: [1, 22],
  dim: [2, 22],
};

function paint(on: boolean, [open, close]: [number, number], text: string): string {
  return on && text !== '' ? `\u001b[${open}m${text}\u001b[${close}m` : text;
}

export function createStyle(colour: boolean): Style {
  return {
    colour,
    tone: (tone, text) => paint(colour, SGR[tone], text),
    bold: (text) => paint(colour, SGR.bold, text),
    dim: (text) => paint(colour, SGR.dim, text),
  };
}

export function wantsColour(
  stream: { isTTY?: boolean | undefined },
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.NODE_DISABLE_COLORS !== undefined) return false;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

/** Columns a string takes on a terminal: escape codes take none. */
export function visibleWidth(text: string): number {
  return [...stripVTControlCharacters(text)].length;
}
