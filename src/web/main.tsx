import { render } from 'preact';
import { App, type PageLookups } from './app';
import { Challenge, sendWithSession } from './challenge';
import { Lookups } from './lookups';
import { PageHistory } from './page-history';
import { TurnstileWidget } from './turnstile';
import './styles.css';

const challenge = new Challenge({ widget: new TurnstileWidget() });
const lookups: PageLookups = new Lookups({ run: (call, signal) => sendWithSession(call, signal, challenge) });

render(
  <App challenge={challenge} lookups={lookups} pageHistory={new PageHistory(window)} />,
  document.getElementById('app')!,
);
