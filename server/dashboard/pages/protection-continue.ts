import { html } from '../html.ts';
import { layout, type View } from '../layout.ts';

/**
 * On the way back to a protected page after signing in: a refresh, not a redirect, because a
 * redirect right after the sign-in form would take the form to another origin, which the
 * dashboard's `form-action 'self'` forbids. The link is there for a browser that does not follow it.
 */
export function protectionContinuePage(view: View, host: string, location: string) {
  return layout(view, {
    title: `Opening ${host}`,
    refresh: location,
    body: html`<section class="narrow">
      <h1>Opening ${host}</h1>
      <p>You are signed in. <a href="${location}" rel="noreferrer">Continue to ${host}</a>.</p>
    </section>`,
  });
}
