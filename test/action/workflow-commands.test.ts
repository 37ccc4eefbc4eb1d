import { beforeAll, describe, expect, it } from 'vitest';
import { startStub } from '../helpers/stub-server.ts';
import { ensureBundle } from './bundle.ts';
import { parseCommands, runAction } from './run-action.ts';

const TOKEN = 'slw_0123456789abcdefghijklmnopqrstuvwxyzABCD';

/** What the bundle prints, read back the way GitHub's runner reads it. */
describe('the action: workflow commands', () => {
  beforeAll(() => ensureBundle(), 180_000);

  it('writes an error message with %, CR, LF, :: and , so that the runner reads it back exactly', async () => {
    // Every character the runner's protocol gives a meaning to, and an escape sequence as text.
    const message = '100% sure\r\nline two :: after, the colons %0A %25 ::error::not a command\rend';
    const stub = await startStub((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: false, error: { code: 'UNAUTHORIZED', message } }));
    });
    try {
      const r = await runAction({
        inputs: { 'api-url': stub.url, 'api-token': TOKEN, project: 'prj_0123456789abcdefghij' },
      });
      expect(r.code).toBe(1);
      const commands = parseCommands(r.stdout);
      expect(commands.filter((c) => c.command === 'error')).toEqual([
        {
          command: 'error',
          properties: {},
          data: `Slipway answered 401 UNAUTHORIZED: ${message}\nCheck the api-token input: create a token with \`slipway token create\`.`,
        },
      ]);
      // The token was masked first, and the message is one line of the log.
      expect(commands[0]).toEqual({ command: 'add-mask', properties: {}, data: TOKEN });
      expect(r.stdout.split('\n').filter((l) => l.startsWith('::error::'))).toHaveLength(1);
    } finally {
      await stub.close();
    }
  });
});
