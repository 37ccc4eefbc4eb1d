// Slipway dashboard: the pages work without this script; it makes them follow changes live.

/** A build log that streams: lines arrive as HTML rendered by the server (colours escaped there). */
function followLog(log) {
  const state = document.getElementById('log-state');
  const source = new EventSource(log.dataset.stream);
  const atBottom = () => window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  source.onmessage = (e) => {
    const stick = atBottom();
    const li = document.createElement('li');
    li.innerHTML = e.data;
    log.append(li);
    if (stick) li.scrollIntoView({ block: 'end' });
  };
  source.addEventListener('end', (e) => {
    source.close();
    const end = JSON.parse(e.data);
    if (state) state.textContent = `The deployment is ${end.status}.`;
    // The page shows the final state, the URL and the actions that now apply.
    window.location.reload();
  });
}

/** A table of deployments refreshed while any of them is still on its way (and, slower, for new ones). */
function refreshRows(tbody) {
  const url = tbody.dataset.liveRows;
  let timer;
  let last = null;
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(tick, tbody.dataset.live === 'busy' ? 2000 : 10000);
  };
  const tick = async () => {
    if (document.hidden) return schedule();
    try {
      const res = await fetch(url, { headers: { accept: 'text/html' }, credentials: 'same-origin' });
      if (res.ok) {
        const html = await res.text();
        if (html !== last) {
          last = html;
          tbody.innerHTML = html;
        }
        const busy = tbody.querySelector('tr[data-final="0"]') !== null;
        tbody.dataset.live = busy ? 'busy' : 'idle';
      }
    } finally {
      schedule();
    }
  };
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) tick();
  });
  schedule();
}

/** Forms are sent once (a second click while the first is on its way does nothing); removals ask first. */
function oncePerSubmit(form) {
  form.addEventListener('submit', (e) => {
    if (form.dataset.sent || (form.dataset.confirm && !window.confirm(form.dataset.confirm))) {
      e.preventDefault();
      return;
    }
    form.dataset.sent = '1';
  });
}

/** A button that copies a field's value (a deploy hook's URL, shown once); without this script it stays hidden. */
function copyButton(button) {
  const field = document.getElementById(button.dataset.copy);
  if (!field || !navigator.clipboard) return;
  button.hidden = false;
  button.addEventListener('click', async () => {
    await navigator.clipboard.writeText(field.value);
    button.textContent = 'Copied';
  });
}

const log = document.querySelector('ol.log[data-stream]');
if (log) followLog(log);
for (const tbody of document.querySelectorAll('tbody[data-live-rows]')) refreshRows(tbody);
for (const form of document.querySelectorAll('form[method="post"]')) oncePerSubmit(form);
for (const button of document.querySelectorAll('button[data-copy]')) copyButton(button);
