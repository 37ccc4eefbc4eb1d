import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import dotenv from 'dotenv';
import { EnvEnvironment, type EnvVar } from '../../api/schemas/env.ts';
import { flag, type Parsed, positionals, printJson, str } from '../command.ts';
import type { Io } from '../io.ts';
import { openSession, targetProject } from '../session.ts';
import { table } from '../table.ts';
import { didYouMean } from '../suggest.ts';
import { UsageError } from '../usage-error.ts';

/** The first line of a pulled file: a pull may replace a file that starts with it. */
const PULLED = '# Pulled by `slipway env pull`';
const DEFAULT_FILE = '.env.local';

function environmentOf(p: Parsed) {
  const parsed = EnvEnvironment.safeParse(str(p, 'environment') ?? 'production');
  if (!parsed.success)
    throw new UsageError(`--environment must be one of ${EnvEnvironment.options.join(', ')}.`);
  return parsed.data;
}

async function list(p: Parsed, io: Io): Promise<number> {
  positionals(p, ['subcommand']);
  const session = await openSession(io);
  const project = await targetProject(session, io, { project: str(p, 'project'), org: str(p, 'org') });
  const environment = str(p, 'environment') === undefined ? undefined : environmentOf(p);
  const vars: EnvVar[] = [];
  for await (const v of session.client.iterate.env(project.id, { environment, limit: 100 })) vars.push(v);
  if (flag(p, 'json')) printJson(io, vars);
  else if (vars.length === 0)
    io.err(`${project.name} has no environment variables${environment ? ` in ${environment}` : ''}.\n`);
  else {
    io.out(
      table(
        ['KEY', 'ENVIRONMENT', 'VALUE'],
        vars.map((v) => [v.key, v.environment, v.encrypted ? '(secret)' : (v.value ?? '')]),
      ),
    );
  }
  return 0;
}

async function pull(p: Parsed, io: Io): Promise<number> {
  const [, given] = positionals(p, ['subcommand', 'file']);
  const file = resolve(io.cwd, given ?? DEFAULT_FILE);
  const environment = environmentOf(p);
  const existing = await readFile(file, 'utf8').catch(() => null);
  if (existing !== null && !existing.startsWith(PULLED) && !flag(p, 'force')) {
    throw new Error(`${file} exists and was not written by slipway env pull: pass --force to replace it.`);
  }
  const session = await openSession(io);
  const project = await targetProject(session, io, { project: str(p, 'project'), org: str(p, 'org') });
  const text = await session.client.env.export(project.id, { format: 'env', environment });
  const count = text.split('\n').filter((l) => /^[A-Za-z_]/.test(l)).length;
  // Plaintext secrets: readable by the owner alone.
  await writeFile(file, `${PULLED} (${project.name}, ${environment})\n${text}`, { mode: 0o600 });
  if (flag(p, 'json')) printJson(io, { file, environment, variables: count });
  else io.err(`Wrote ${count} ${environment} variables of ${project.name} to ${file}.\n`);
  return 0;
}

async function push(p: Parsed, io: Io): Promise<number> {
  const [, given] = positionals(p, ['subcommand', 'file']);
  const file = resolve(io.cwd, given ?? DEFAULT_FILE);
  const text = await readFile(file, 'utf8').catch(() => {
    throw new Error(`Cannot read ${file}: name a dotenv file, e.g. slipway env push .env.production.`);
  });
  const parsed = dotenv.parse(text);
  const variables = Object.entries(parsed).map(([key, value]) => ({
    key,
    value,
    ...(flag(p, 'secret') ? { encrypted: true } : {}),
  }));
  if (variables.length === 0) throw new Error(`${file} holds no variables (KEY=value lines).`);
  const environment = environmentOf(p);
  const session = await openSession(io);
  const project = await targetProject(session, io, { project: str(p, 'project'), org: str(p, 'org') });
  const result = await session.client.env.import(project.id, {
    variables,
    environment,
    overwrite: flag(p, 'overwrite'),
  });
  if (flag(p, 'json')) printJson(io, result);
  else {
    io.err(
      `${project.name} (${environment}): ${result.created} created, ${result.updated} updated, ${result.skipped} left as they were` +
        (result.skipped ? ' (--overwrite replaces them)' : '') +
        '.\n',
    );
  }
  return 0;
}

export async function env(p: Parsed, io: Io): Promise<number> {
  const [sub] = positionals(p, ['subcommand', 'file'], 1);
  if (sub === 'ls' || sub === 'list') return list(p, io);
  if (sub === 'pull') return pull(p, io);
  if (sub === 'push') return push(p, io);
  throw new UsageError(
    `Unknown subcommand "${sub}": expected ls, pull or push.${didYouMean(sub ?? '', ['ls', 'pull', 'push'])}`,
  );
}
