/**
 * A progress line on stderr while a lookup runs: from the start for the slow tools (a live
 * measurement), after a second for any other, and only when stderr is a terminal, so pipes and
 * logs never see it. It erases itself before the answer is printed.
 */

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const TICK_MS = 100;
/** A lookup still running after this gets a progress line too. */
export const PROGRESS_AFTER_MS = 1_000;

export interface Progress {
  /** Changes what the line says (a second phase: loading the relay lists, then the lookup). */
  say(text: string): void;
  stop(): void;
}

export interface ProgressTarget {
  isTTY?: boolean | undefined;
  write(text: string): boolean;
}

const SILENT: Progress = { say: () => {}, stop: () => {} };

export function startProgress(
  stream: ProgressTarget,
  text: string,
  opts: { delayMs?: number } = {},
): Progress {
  if (stream.isTTY !== true) return SILENT;
  const started = performance.now();
  let label = text;
  let frame = 0;
  let shown = false;
  const draw = () => {
    shown = true;
    const elapsed = ((performance.now() - started) / 1000).toFixed(1);
    stream.write(`\r\u001b[2K${FRAMES[frame++ % FRAMES.length]} ${label} ${elapsed} s`);
  };
  let ticker: NodeJS.Timeout | undefined;
  const begin = setTimeout(() => {
    draw();
    ticker = setInterval(draw, TICK_MS);
    ticker.unref();
  }, opts.delayMs ?? 0);
  begin.unref();
  return {
    say(next) {
      label = next;
    },
    stop() {
      clearTimeout(begin);
      clearInterval(ticker);
      if (shown) stream.write('\r\u001b[2K');
    },
  };
}
