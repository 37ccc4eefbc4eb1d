import { html } from '../html.ts';
import { errorBox, layout, notice, type View } from '../layout.ts';

export function signInPage(
  view: View,
  opts: { next: string; error?: string; message?: string; github: boolean },
) {
  const { base } = view;
  return layout(view, {
    title: 'Sign in',
    body: html`<section class="narrow">
      <h1>Sign in to Slipway</h1>
      ${notice(opts.message)} ${errorBox(opts.error)}
      <form method="post" action="${base}/sign-in" class="stack">
        <input type="hidden" name="next" value="${opts.next}" />
        <label for="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          required
          placeholder="slw_…"
          aria-describedby="token-help"
        />
        <p id="token-help" class="muted">
          Create one on the server with
          <code>npx slipway token create --email you@example.com --name browser</code>, or
          <code>POST /v1/user/tokens</code>. The session lasts until you sign out, the token is revoked, or it
          expires.
        </p>
        <button type="submit" class="primary">Sign in</button>
      </form>
      ${
        opts.github &&
        html`<p class="or">or</p>
          <a class="button" href="${base}/sign-in/github?next=${encodeURIComponent(opts.next)}"
            >Sign in with GitHub</a
          >`
      }
    </section>`,
  });
}
