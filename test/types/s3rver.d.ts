/** s3rver ships no types: what the tests use of it. */
declare module 's3rver' {
  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory: string;
    configureBuckets?: { name: string }[];
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}

/** s3rver's object model, for writing objects into its store directly (test/helpers/s3-server.ts). */
declare module 's3rver/lib/models/object.js' {
  export default class S3Object {
    constructor(bucket: string, key: string, content: Buffer, metadata: Record<string, string>);
  }
}
