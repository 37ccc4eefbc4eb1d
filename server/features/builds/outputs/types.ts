/** Where the app is, for a framework's output rules. */
export interface AppAt {
  /** The checkout (or uploaded files): the repository's root. */
  src: string;
  /** The app's folder: `src`, or `rootDirectory` inside it. */
  app: string;
  /** The app's package.json dependencies and devDependencies, by name. */
  dependencies: Record<string, string>;
}

/** A Node.js server a framework's build made, and what the edge serves itself in front of it. */
export interface ServerOutput {
  /** The folder stored as the server's files (absolute): all the server needs at run time. */
  root: string;
  /** Shell command that starts it, run in `root`, listening on $PORT. */
  startCommand: string;
  /** Folders of static files the edge answers itself at exactly their paths, under a URL prefix. */
  assets: { dir: string; prefix: string }[];
  /** Folders (relative to `root`) the server writes at run time: the deployment's own, kept across restarts. */
  writable: string[];
  /** Variables the server needs to run behind the edge (never secrets). */
  env: Record<string, string>;
  /** For the build log: "Next.js server (standalone output)". */
  description: string;
}

/**
 * How one framework's build output is deployed. Frameworks without rules (Vite, Angular, a plain
 * Express server) are deployed as they are detected: static files, or the app's folder run by
 * its start command.
 */
export interface FrameworkOutput {
  /** Variables the build command runs with, so that it makes what Slipway deploys. */
  buildEnv?(at: AppAt): Promise<Record<string, string>> | Record<string, string>;
  /** A line for the build log about what buildEnv set, and why. */
  describeBuildEnv?(at: AppAt): string | null;
  /** After the build: the server it made, or null when it made a static site. */
  server(at: AppAt): Promise<ServerOutput | null>;
}
