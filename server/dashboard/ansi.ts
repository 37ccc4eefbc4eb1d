import { escapeHtml } from './html.ts';

/**
 * One log line with its ANSI colours as HTML: SGR codes (bold, dim, italic, underline, the 16
 * colours, foreground and background) become `<span class>`; other escape sequences (cursor
 * moves, titles) are dropped, and of a line redrawn with carriage returns the last drawing stays.
 */
export function ansiToHtml(line: string): string {
  const text = line.slice(line.lastIndexOf('\r', line.length - 2) + 1).replace(/\r$/, '');
  const state = { fg: 0, bg: 0, bold: false, dim: false, italic: false, underline: false };
  let out = '';
  let open = false;
  // eslint-disable-next-line no-control-regex
  const re = /\x1b\[([0-9;]*)([A-Za-z])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]?/g;
  let last = 0;
  const classes = () =>
    [
      state.fg && `f${state.fg}`,
      state.bg && `b${state.bg}`,
      state.bold && 'ab',
      state.dim && 'ad',
      state.italic && 'ai',
      state.underline && 'au',
    ].filter(Boolean);
  const emit = (chunk: string) => {
    if (chunk === '') return;
    out += escapeHtml(chunk);
  };
  for (let m = re.exec(text); m; m = re.exec(text)) {
    emit(text.slice(last, m.index));
    last = re.lastIndex;
    if (m[2] !== 'm') continue;
    const codes = (m[1] || '0').split(';').map((c) => Number(c || 0));
    for (let i = 0; i < codes.length; i++) {
      const c = codes[i]!;
      if (c === 0)
        Object.assign(state, { fg: 0, bg: 0, bold: false, dim: false, italic: false, underline: false });
      else if (c === 1) state.bold = true;
      else if (c === 2) state.dim = true;
      else if (c === 3) state.italic = true;
      else if (c === 4) state.underline = true;
      else if (c === 22) state.bold = state.dim = false;
      else if (c === 23) state.italic = false;
      else if (c === 24) state.underline = false;
      else if ((c >= 30 && c <= 37) || (c >= 90 && c <= 97)) state.fg = c;
      else if (c === 39) state.fg = 0;
      else if ((c >= 40 && c <= 47) || (c >= 100 && c <= 107)) state.bg = c;
      else if (c === 49) state.bg = 0;
      // 256 colours and true colour: their arguments are skipped, the text keeps the default.
      else if (c === 38 || c === 48) i += codes[i + 1] === 5 ? 2 : 4;
    }
    if (open) out += '</span>';
    const cls = classes();
    open = cls.length > 0;
    if (open) out += `<span class="${cls.join(' ')}">`;
  }
  emit(text.slice(last));
  if (open) out += '</span>';
  return out;
}
