import { angular } from './angular.ts';
import { astro } from './astro.ts';
import { nextjs } from './nextjs.ts';
import { nitroOutput } from './nitro.ts';
import { nuxt } from './nuxt.ts';
import { sveltekit } from './sveltekit.ts';
import type { FrameworkOutput } from './types.ts';

export type { AppAt, FrameworkOutput, ServerOutput } from './types.ts';

const tanstackStart = nitroOutput('TanStack Start server (Nitro, node-server preset)');

/** The frameworks whose build may make a server, by @vercel/frameworks slug. */
const OUTPUTS: Record<string, FrameworkOutput> = {
  nextjs,
  sveltekit,
  'sveltekit-1': sveltekit,
  nuxtjs: nuxt,
  astro,
  angular,
  'solidstart-1': nitroOutput('SolidStart server (Nitro through vinxi, node-server preset)'),
  'tanstack-start': tanstackStart,
  'tanstack-start-lovable': tanstackStart,
};

export const frameworkOutput = (slug: string): FrameworkOutput | null => OUTPUTS[slug] ?? null;
