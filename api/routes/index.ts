import type { RouteContract } from './contract.ts';
import { projects } from './projects.ts';

export { projects };
export { contract, pathOf, seg, type Method, type PathParams, type RouteContract } from './contract.ts';

/** Every route's contract, by tag: the server serves each entry once, the client calls them. */
export const contracts = { projects } satisfies Record<string, Record<string, RouteContract>>;

/** Every entry of every tag, in one list. */
export const allContracts = (): RouteContract[] =>
  Object.values(contracts).flatMap((tag) => Object.values(tag));
