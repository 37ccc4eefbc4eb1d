import type { Command } from '../command.ts';

export const promote: Command = {
  name: 'promote',
  summary: 'make a live preview the production deployment',
  help: `Usage: slipway promote <deployment> [--json]

Makes a live preview deployment its project's production deployment, without a rebuild,
and prints the production URL.

  slipway promote dpl_2Zk9...`,
  options: {},
  run: (p, io) => import('../run/promote.ts').then((m) => m.promote(p, io)),
};
