import type { Command } from '../command.ts';

export const env: Command = {
  name: 'env',
  summary: 'list, download or upload environment variables',
  help: `Usage: slipway env ls   [--environment <e>] [--json]
       slipway env pull [file] [--environment <e>] [--force]
       slipway env push [file] [--environment <e>] [--overwrite] [--secret]

  ls     lists the project's variables; secrets show as (secret)
  pull   writes one environment's variables, secrets in plaintext, to a dotenv file
         (default .env.local, mode 0600); it replaces only a file it wrote before,
         unless --force
  push   sends a dotenv file's variables (default .env.local) in one all-or-nothing
         import; existing keys are left as they are unless --overwrite; --secret marks
         new variables secret

--environment is production (default), preview or development. The project is the linked
one, or --project (with --org).

  slipway env pull --environment development
  slipway env push .env.production --overwrite`,
  options: {
    environment: { type: 'string' },
    project: { type: 'string' },
    org: { type: 'string' },
    force: { type: 'boolean' },
    overwrite: { type: 'boolean' },
    secret: { type: 'boolean' },
  },
  run: (p, io) => import('../run/env.ts').then((m) => m.env(p, io)),
};
