import type { Sandbox } from '../../../platform/sandbox/index.ts';

export interface CheckoutOptions {
  /** https, http, ssh, git or file URL, or a local path. */
  repositoryUrl: string;
  /** What to advise when the repository cannot be read; default: check the URL and that it is public. */
  unreachableHint?: string;
  /** A branch name (`main`) or a full ref (`refs/pull/12/head`). */
  ref: string;
  /** Pin this commit (7 to 40 hex characters) instead of the head of `ref`. */
  commit?: string | null;
  /** Directory the repository is checked out into (created; should not exist or be empty). */
  workspace: string;
  log: (line: string) => void;
  /** For the whole checkout. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** PATH that git is found on; default the server's. */
  path?: string;
  /** git runs in it, with the workspace writable and a local repository readable. */
  sandbox: Sandbox;
}

export interface CheckoutResult {
  /** Full 40-character hash of the checked-out commit. */
  commitHash: string;
  /** The commit author's e-mail. */
  author: string;
  commitMessage: string;
}

/**
 * What one checkout knows once it has started (checkout.ts makes it), passed to the functions
 * that run git and fetch rather than closed over.
 */
export interface GitSession {
  opts: CheckoutOptions;
  /** The URL git is given (a local path made absolute). */
  repository: string;
  /** The URL as the log shows it (credentials redacted). */
  shown: string;
  env: Record<string, string>;
  /** When the whole checkout must be done (epoch ms). */
  deadline: number;
  /** Parts of the URL never shown in the log (user and password). */
  secrets: string[];
  /** The local repository's directory, or null for a remote one. */
  local: string | null;
}

/** What one git command printed, and whether it succeeded. */
export interface GitOutput {
  ok: boolean;
  output: string[];
}
