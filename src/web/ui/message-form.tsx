/**
 * The message tool's input, in place of the one-line box: a paste box for the message (up to
 * MESSAGE_MAX_BYTES, 2 MiB by default) and, folded away, who connected to the receiving server.
 * No field has a `name`: a form submitted without the page's script sends nothing of the message
 * in a URL. The page keeps what is typed in memory only (never the URL, history or storage).
 */
import type { PastedMessage } from '../tools';

const FIELDS: readonly { key: Exclude<keyof PastedMessage, 'message'>; label: string; hint: string }[] = [
  { key: 'ip', label: 'Connecting IP', hint: 'e.g. 192.0.2.1' },
  { key: 'helo', label: 'HELO name', hint: 'e.g. mail.example.com' },
  { key: 'mail_from', label: 'MAIL FROM', hint: 'e.g. bounces@example.com' },
];

export function MessageForm({
  value,
  onChange,
}: {
  value: PastedMessage;
  onChange: (value: PastedMessage) => void;
}) {
  return (
    <div class="message-form">
      <label for="message" class="label">
        Message: paste it whole (headers and body), or its headers alone
      </label>
      <textarea
        id="message"
        class="message-box mono"
        rows={10}
        required
        autoComplete="off"
        autoCapitalize="off"
        spellcheck={false}
        placeholder={
          'Received: from mail.example.com …\nDKIM-Signature: v=1; a=rsa-sha256; d=example.com; …\nFrom: …'
        }
        value={value.message}
        onInput={(e) => onChange({ ...value, message: e.currentTarget.value })}
        aria-describedby="message-hint"
      />
      <p id="message-hint" class="hint">
        In your mail program: “Show original” or “View source”. Up to 2 MiB. The message is checked once and
        not kept: not in the address bar, the history or the service’s logs.
      </p>
      <details class="message-envelope">
        <summary class="message-envelope-summary">
          Who connected (optional: read from the Received headers otherwise)
        </summary>
        <div class="options">
          {FIELDS.map((f) => (
            <label key={f.key}>
              {f.label}{' '}
              <input
                type="text"
                class={`envelope-${f.key}`}
                value={value[f.key]}
                placeholder={f.hint}
                autoComplete="off"
                autoCapitalize="off"
                spellcheck={false}
                onInput={(e) => onChange({ ...value, [f.key]: e.currentTarget.value })}
              />
            </label>
          ))}
        </div>
      </details>
      <button type="submit" class="primary message-check">
        Check
      </button>
    </div>
  );
}
