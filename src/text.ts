/**
 * Text that a remote party wrote, shown to a person: cut to a length the
 * answer can afford. Records, replies and banners are the other side's to
 * fill, so every place that shows one bounds it.
 */

/** The text, or its first `max - 1` characters and an ellipsis. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
