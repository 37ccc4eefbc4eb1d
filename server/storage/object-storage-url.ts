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
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `SLIPWAY_OBJECT_STORAGE must be a URL such as ${EXAMPLE}, got "${raw}"`;
  }
  if (url.protocol !== 's3:' || !url.hostname) {
    return `SLIPWAY_OBJECT_STORAGE must be an s3:// URL naming the bucket, such as ${EXAMPLE}, got "${raw}"`;
  }
  if (url.username || url.password) {
    return 'SLIPWAY_OBJECT_STORAGE must not hold credentials: set SLIPWAY_OBJECT_STORAGE_KEY_ID and SLIPWAY_OBJECT_STORAGE_SECRET (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)';
  }
  const bucket = url.hostname;
  const prefix = url.pathname.replace(/^\/+|\/+$/g, '');
  if (prefix && !/^[a-z0-9_.-]+(\/[a-z0-9_.-]+)*$/.test(prefix)) {
    return `SLIPWAY_OBJECT_STORAGE's prefix must be lowercase letters, digits and _ . - / , got "${prefix}"`;
  }
  const known = new Set(['endpoint', 'region']);
  const unknown = [...url.searchParams.keys()].find((k) => !known.has(k));
  if (unknown)
    return `SLIPWAY_OBJECT_STORAGE has an unknown option "${unknown}": only endpoint and region are read`;
  const region = url.searchParams.get('region') ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1';
  const endpoint = url.searchParams.get('endpoint');
  let bucketUrl: string;
  if (endpoint) {
    if (!/^https?:\/\/[^/?#]+\/?$/.test(endpoint)) {
      return `SLIPWAY_OBJECT_STORAGE's endpoint must be an http(s) URL without a path, such as http://127.0.0.1:9000, got "${endpoint}"`;
    }
    bucketUrl = `${endpoint.replace(/\/$/, '')}/${bucket}/`;
  } else {
    bucketUrl = `https://${bucket}.s3.${region}.amazonaws.com/`;
  }
  const accessKeyId = env.SLIPWAY_OBJECT_STORAGE_KEY_ID ?? env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.SLIPWAY_OBJECT_STORAGE_SECRET ?? env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    return 'SLIPWAY_OBJECT_STORAGE needs credentials: set SLIPWAY_OBJECT_STORAGE_KEY_ID and SLIPWAY_OBJECT_STORAGE_SECRET, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY';
  }
  const sessionToken = env.SLIPWAY_OBJECT_STORAGE_KEY_ID ? undefined : env.AWS_SESSION_TOKEN;
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
