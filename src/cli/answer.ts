/** One answer shape for both ways of asking (in-process route, remote API), and what it means for the exit status. */

export interface Answer {
  /** The HTTP status; 0 when the API could not be reached. */
  status: number;
  body: unknown;
  /** Whole seconds from Retry-After, when sent. */
  retryAfter: number | null;
}

export const EXIT = {
  ok: 0,
  /** The lookup failed: an upstream failure (502), a limit (429), the gate (403), overload (503), no API. */
  failed: 1,
  /** Bad input: the route's 400, or a command line that cannot be run. */
  usage: 2,
} as const;

export function exitStatus(answer: Answer): number {
  if (answer.status === 200) return EXIT.ok;
  return answer.status === 400 ? EXIT.usage : EXIT.failed;
}
