// The two functions of mime-types the edge uses (the package ships no types of its own).
declare module 'mime-types' {
  /** The content type of a file name or extension, or false when unknown. */
  export function lookup(pathOrExtension: string): string | false;
  /** The default charset of a content type (`UTF-8` for text), or false. */
  export function charset(type: string): string | false;
}

// mime-db: the registry mime-types reads, here for its `compressible` flags.
declare module 'mime-db' {
  const db: Record<string, { compressible?: boolean; extensions?: string[]; charset?: string }>;
  export default db;
}
