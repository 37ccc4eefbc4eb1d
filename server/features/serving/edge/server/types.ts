import type { IncomingMessage } from 'node:http';
import type { ArtifactReader } from '../artifact-reader.ts';
import type { RuntimeLauncher } from '../launcher.ts';
import type { ProtectionGate } from '../protection-gate.ts';
import type { Proxy } from '../proxy.ts';
import type { HostResolver } from '../resolve-host.ts';
import type { RuntimeSupervisor } from '../runtime.ts';

/** One answered request, for traffic metrics. */
export interface RequestRecord {
  /** null when the host matched no project. */
  projectId: string | null;
  deploymentId: string | null;
  /** The Host header, lowercased and without port. */
  host: string;
  status: number;
  /** From the request's arrival until its response was written out or the client left. */
  durationMs: number;
  /** Body bytes sent. */
  bytes: number;
}

export interface EdgeServerOptions {
  resolver: HostResolver;
  /** The artifact store's root directory (config.artifactsDir). */
  artifactsRoot: string;
  /**
   * Runs server apps; deployments it supervises are proxied to instead of served as files, over
   * connections it opens from inside their sandboxes when it can (openConnection).
   */
  supervisor?: Pick<RuntimeSupervisor, 'portOf'> &
    Partial<Pick<RuntimeSupervisor, 'openConnection' | 'canConnect'>>;
  /**
   * Forwards requests to apps; by default one over `supervisor`'s connections (proxyFor). Given
   * when the launcher must ask it which apps are answering (Proxy.inUse).
   */
  proxy?: Proxy;
  /** Starts `node` deployments on demand; without it they answer 503 unless already supervised. */
  launcher?: Pick<RuntimeLauncher, 'ensure' | 'touch' | 'runningPort'>;
  /** Called once per response, synchronously: keep it cheap (push to a buffer). */
  onRequest?: (record: RequestRecord) => void;
  /**
   * True for the service's own health probes (a valid `X-Slipway-Probe` header): they are
   * answered as any request but not passed to `onRequest`, so they never count as traffic. The
   * header is removed before a request reaches a server app, whatever this answers.
   */
  isProbe?: (token: string) => boolean;
  /** Unexpected failures (the client gets a 500 page). */
  onError?: (err: unknown, req: IncomingMessage) => void;
  /**
   * Answers ACME HTTP-01 challenges: the key authorization of a token, or null to serve the path
   * as usual. Such requests belong to no project and are not recorded.
   */
  acmeChallenge?: (token: string) => Promise<string | null>;
  /** Parsed manifests kept, by their size as stored (config.edgeManifestCacheBytes; default 64 MiB). */
  manifestCacheBytes?: number;
  /**
   * The artifact reader, to share its manifests with the launcher (which writes server apps out
   * from them); by default one of its own, bounded by `manifestCacheBytes`.
   */
  artifacts?: ArtifactReader;
  /** Small files' bytes kept (config.edgeFileCacheBytes; default 256 MiB). */
  fileCacheBytes?: number;
  /**
   * Decides requests to protected hosts (docs/protection.md). Without it a protected host answers
   * 401 to everyone but the service's own probes: protection fails closed.
   */
  protection?: ProtectionGate;
}
