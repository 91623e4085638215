/** What the page shows of the challenge flow (challenge.ts): its phase, and the slot the widget renders into. */
import { Component } from 'preact';
import type { ChallengeView } from '../challenge';
import { SLOT_ID } from '../turnstile';

/** The widget's container: never re-rendered, because the widget owns what is inside it. */
class WidgetSlot extends Component {
  override shouldComponentUpdate(): boolean {
    return false;
  }
  override render() {
    return <div id={SLOT_ID} class="widget-slot" />;
  }
}

const TEXT: Record<ChallengeView['phase'], string> = {
  idle: '',
  loading: 'Loading the verification widget…',
  widget: 'Lookups need a quick check that you are a person. It lasts 15 minutes.',
  verifying: 'Verifying…',
  failed: 'Verification did not complete.',
};

export function ChallengePanel({ view }: { view: ChallengeView }) {
  return (
    <section class="card challenge" hidden={view.phase === 'idle'} aria-labelledby="challenge-title">
      <h2 id="challenge-title">Quick check</h2>
      <p aria-live="polite">{TEXT[view.phase]}</p>
      <WidgetSlot />
      {view.phase === 'failed' && view.message && <p class="error-text">{view.message}</p>}
    </section>
  );
}
