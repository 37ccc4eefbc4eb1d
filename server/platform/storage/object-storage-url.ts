/** Where the objects are and how to reach them (SLIPWAY_OBJECT_STORAGE and the credentials). */
export interface ObjectStorageConfig {
  /** The setting as given, to name the store in logs (it holds no secret). */
  url: string;
  bucket: string;
  /** Put in front of every key: `slipway/` or empty. */
  prefix: string;
  /** The bucket's base URL, ending with `/` (`http://127.0.0.1:9000/bucket/`, `https://bucket.s3.eu-west-1.amazonaws.com/`). */
  bucketUrl: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface ObjectStorageEnv {
  SLIPWAY_OBJECT_STORAGE?: string | undefined;
  SLIPWAY_OBJECT_STORAGE_KEY_ID?: string | undefined;
  SLIPWAY_OBJECT_STORAGE_SECRET?: string | undefined;
  AWS_ACCESS_KEY_ID?: string | undefined;
  AWS_SECRET_ACCESS_KEY?: string | undefined;
  AWS_SESSION_TOKEN?: string | undefined;
  AWS_REGION?: string | undefined;
  AWS_DEFAULT_REGION?: string | undefined;
}

const EXAMPLE = 's3://my-bucket/slipway?endpoint=http://127.0.0.1:9000&region=us-east-1';

/**
 * `s3://BUCKET[/PREFIX][?endpoint=URL&region=NAME]`: without `endpoint`, AWS S3 in `region`
 * (virtual-hosted, `https://BUCKET.s3.REGION.amazonaws.com`); with it, any S3-compatible store
 * (MinIO, R2, Garage, Ceph) addressed by path (`ENDPOINT/BUCKET/KEY`). Credentials come from
 * SLIPWAY_OBJECT_STORAGE_KEY_ID and _SECRET, else the usual AWS variables. Undefined when unset;
 * a string saying what is wrong when it cannot be used.
 */
export function parseObjectStorage(env: ObjectStorageEnv): ObjectStorageConfig | string | undefined {
  const raw = env.SLIPWAY_OBJECT_STORAGE?.trim();
  if (!raw) return undefined;
  return parseS3Url(raw, env, { name: 'SLIPWAY_OBJECT_STORAGE', credentials: 'object-storage' });
}

export interface S3UrlOptions {
  /** What the URL is, in messages: `SLIPWAY_OBJECT_STORAGE`, `The backup URL`. */
  name: string;
  /**
   * Whose credentials come first: the object storage's own (SLIPWAY_OBJECT_STORAGE_KEY_ID and
   * _SECRET, then AWS_*), or the usual AWS variables (`aws`: AWS_*, then the object storage's).
   */
  credentials: 'object-storage' | 'aws';
  /** Upper-case letters allowed in the prefix (a backup's folder name has them). */
  anyCase?: boolean;
}

/** An `s3://` URL (the syntax parseObjectStorage documents) as a store's settings, or what is wrong. */
export function parseS3Url(
  raw: string,
  env: ObjectStorageEnv,
  opts: S3UrlOptions,
): ObjectStorageConfig | string {
  const { name } = opts;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${name} must be a URL such as ${EXAMPLE}, got "${raw}"`;
  }
  if (url.protocol !== 's3:' || !url.hostname) {
    return `${name} must be an s3:// URL naming the bucket, such as ${EXAMPLE}, got "${raw}"`;
  }
  if (url.username || url.password) {
    return `${name} must not hold credentials: set SLIPWAY_OBJECT_STORAGE_KEY_ID and SLIPWAY_OBJECT_STORAGE_SECRET (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)`;
  }
  const bucket = url.hostname;
  const prefix = url.pathname.replace(/^\/+|\/+$/g, '');
  const part = opts.anyCase ? '[A-Za-z0-9_.-]+' : '[a-z0-9_.-]+';
  if (prefix && !new RegExp(`^${part}(/${part})*$`).test(prefix)) {
    return `${name}'s prefix must be ${opts.anyCase ? '' : 'lowercase '}letters, digits and _ . - / , got "${prefix}"`;
  }
  const known = new Set(['endpoint', 'region']);
  const unknown = [...url.searchParams.keys()].find((k) => !known.has(k));
  if (unknown) return `${name} has an unknown option "${unknown}": only endpoint and region are read`;
  const region = url.searchParams.get('region') ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1';
  const endpoint = url.searchParams.get('endpoint');
  let bucketUrl: string;
  if (endpoint) {
    if (!/^https?:\/\/[^/?#]+\/?$/.test(endpoint)) {
      return `${name}'s endpoint must be an http(s) URL without a path, such as http://127.0.0.1:9000, got "${endpoint}"`;
    }
    bucketUrl = `${endpoint.replace(/\/$/, '')}/${bucket}/`;
  } else {
    bucketUrl = `https://${bucket}.s3.${region}.amazonaws.com/`;
  }
  const own = env.SLIPWAY_OBJECT_STORAGE_KEY_ID && env.SLIPWAY_OBJECT_STORAGE_SECRET;
  const aws = env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY;
  const useAws = opts.credentials === 'aws' ? Boolean(aws) || !own : !env.SLIPWAY_OBJECT_STORAGE_KEY_ID;
  const accessKeyId = useAws ? env.AWS_ACCESS_KEY_ID : env.SLIPWAY_OBJECT_STORAGE_KEY_ID;
  const secretAccessKey = useAws ? env.AWS_SECRET_ACCESS_KEY : env.SLIPWAY_OBJECT_STORAGE_SECRET;
  if (!accessKeyId || !secretAccessKey) {
    return opts.credentials === 'aws'
      ? `${name} needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or SLIPWAY_OBJECT_STORAGE_KEY_ID and SLIPWAY_OBJECT_STORAGE_SECRET)`
      : `${name} needs credentials: set SLIPWAY_OBJECT_STORAGE_KEY_ID and SLIPWAY_OBJECT_STORAGE_SECRET, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`;
  }
  const sessionToken = useAws ? env.AWS_SESSION_TOKEN : undefined;
  return {
    url: raw,
    bucket,
    prefix: prefix ? `${prefix}/` : '',
    bucketUrl,
    region,
    accessKeyId,
    secretAccessKey,
    ...(sessionToken ? { sessionToken } : {}),
  };
}
