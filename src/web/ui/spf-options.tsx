/**
 * The SPF check's inputs besides the box (which holds the client's address):
 * the sender, the HELO name and, under "More options", the domain whose
 * policy is checked. One of the three is needed, so the sender is required
 * until another is given and the browser asks for it before "Look up".
 */
import type { ComponentChildren, Ref } from 'preact';
import { useState } from 'preact/hooks';
import type { PageState } from '../state';

interface SpfOptionsProps {
  state: PageState;
  onChange: (state: PageState) => void;
  /** The sender field, which the page focuses when the tool is picked without one. */
  senderInput: Ref<HTMLInputElement>;
}

/** One labelled text field; the browser's own autocorrection would only get in the way of names. */
function Field({
  label,
  value,
  placeholder,
  onInput,
  required,
  inputRef,
}: {
  label: ComponentChildren;
  value: string;
  placeholder: string;
  onInput: (value: string) => void;
  required?: boolean;
  inputRef?: Ref<HTMLInputElement>;
}) {
  return (
    <label>
      {label}{' '}
      <input
        ref={inputRef}
        type="text"
        value={value}
        placeholder={placeholder}
        autoComplete="off"
        autoCapitalize="off"
        spellcheck={false}
        required={required}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
    </label>
  );
}

export function SpfOptions({ state, onChange, senderInput }: SpfOptionsProps) {
  // Open when the page opened on a domain; afterwards the reader decides.
  const [more, setMore] = useState(state.domain !== '');
  const identityGiven = Boolean(state.sender.trim() || state.helo.trim() || state.domain.trim());
  return (
    <div class="options spf-options">
      <p class="hint">
        The box above holds the connecting mail server’s IP address. Give the sender it claims (MAIL FROM), or
        only its HELO name for a bounce.
      </p>
      <Field
        label="Sender (MAIL FROM)"
        inputRef={senderInput}
        value={state.sender}
        placeholder="alice@example.com"
        required={!identityGiven}
        onInput={(sender) => onChange({ ...state, sender })}
      />
      <Field
        label={
          <>
            HELO name <span class="muted">(optional)</span>
          </>
        }
        value={state.helo}
        placeholder="mail.example.com"
        onInput={(helo) => onChange({ ...state, helo })}
      />
      <details open={more} onToggle={(e) => setMore(e.currentTarget.open)}>
        <summary>More options</summary>
        <Field
          label={
            <>
              Domain whose policy to check{' '}
              <span class="muted">(default: the sender’s, or the HELO name)</span>
            </>
          }
          value={state.domain}
          placeholder="example.com"
          onInput={(domain) => onChange({ ...state, domain })}
        />
      </details>
    </div>
  );
}
