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

/**
 * A deployment's status, polled while it is on its way: the badge changes as it does (queued,
 * building, deploying), and the final state reloads the page, for its URL, reason and actions
 * (when its build log streams, the log's end does that).
 */
function followStatus(status) {
  const url = status.dataset.liveStatus;
  const streaming = document.querySelector('ol.log[data-stream]') !== null;
  const tick = async () => {
    if (!document.hidden) {
      try {
        const res = await fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
        const type = res.headers.get('content-type') || '';
        if (res.ok && type.startsWith('application/json')) {
          const d = await res.json();
          const badge = status.querySelector('.badge');
          if (badge && badge.dataset.status !== d.status) {
            badge.className = `badge s-${d.status}`;
            badge.dataset.status = d.status;
            badge.textContent = d.status;
          }
          if (d.status === 'live' || d.status === 'failed') {
            if (!streaming) window.location.reload();
            return;
          }
        }
      } catch {
        // The next tick tries again.
      }
    }
    setTimeout(tick, 1500);
  };
  setTimeout(tick, 1500);
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
const status = document.querySelector('[data-live-status]');
if (status) followStatus(status);
for (const tbody of document.querySelectorAll('tbody[data-live-rows]')) refreshRows(tbody);
for (const form of document.querySelectorAll('form[method="post"]')) oncePerSubmit(form);
for (const button of document.querySelectorAll('button[data-copy]')) copyButton(button);
