import { astro } from './astro.ts';
import { nextjs } from './nextjs.ts';
import { nuxt } from './nuxt.ts';
import { sveltekit } from './sveltekit.ts';
import type { FrameworkOutput } from './types.ts';

export type { AppAt, FrameworkOutput, ServerOutput } from './types.ts';

/** The frameworks whose build may make a server, by @vercel/frameworks slug. */
const OUTPUTS: Record<string, FrameworkOutput> = {
  nextjs,
  sveltekit,
  'sveltekit-1': sveltekit,
  nuxtjs: nuxt,
  astro,
};

export const frameworkOutput = (slug: string): FrameworkOutput | null => OUTPUTS[slug] ?? null;
