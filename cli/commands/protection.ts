import type { Command } from '../command.ts';

export const protection: Command = {
  name: 'protection',
  summary: "show or set who may open the project's URLs; bypass secrets and share links",
  help: `Usage: slipway protection [--json]
       slipway protection set <none|previews|all>
       slipway protection bypass [rm]
       slipway protection share <deployment-id> [--hours <n>] [--json]
       slipway protection share list [--json]
       slipway protection share revoke <link-id>

  (none)   prints the project's protection: none, previews or all
  set      changes it (admins): previews protects previews' own and branch URLs,
           all protects production's URLs and custom domains too
  bypass   makes a new bypass secret (admins) and prints it, this once; send it as the
           x-slipway-protection-bypass header. "bypass rm" removes it
  share    makes a link to a deployment (admins) that anyone can open without an account
           for --hours (1 to 720, default 24), and prints it, this once.
           "share list" lists the project's links (without their tokens); "share revoke"
           ends a link (admins) and every cookie it set

The project is the linked one, or --project (with --org).

  slipway protection set previews
  curl -H "x-slipway-protection-bypass: $(slipway protection bypass)" https://web-1a2b3c4d.example.com/`,
  options: {
    hours: { type: 'string' },
    project: { type: 'string' },
    org: { type: 'string' },
  },
  run: (p, io) => import('../run/protection.ts').then((m) => m.protection(p, io)),
};
