import { html } from '../html.ts';
import { layout, type View } from '../layout.ts';

export function errorPage(view: View, title: string, message: string) {
  return layout(view, {
    title,
    body: html`<section class="narrow">
      <h1>${title}</h1>
      <p role="alert">${message}</p>
      <p><a href="${view.base}/">All projects</a></p>
    </section>`,
  });
}
