/** Unescapes the five XML entities (keys and tokens in a listing). */
function xmlText(s: string): string {
  return s.replace(/&(lt|gt|quot|apos|amp);/g, (_m, e: string) =>
    e === 'lt' ? '<' : e === 'gt' ? '>' : e === 'quot' ? '"' : e === 'apos' ? "'" : '&',
  );
}

export function tag(xml: string, name: string): string | undefined {
  const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml);
  return m ? xmlText(m[1]!) : undefined;
}

/** One page of ListObjectsV2: its objects and the token of the next page, if any. */
export function parseListing(xml: string): {
  objects: { key: string; size: number; modifiedAt: Date }[];
  next?: string;
} {
  const objects = [...xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)].map(([, body]) => ({
    key: tag(body!, 'Key') ?? '',
    size: Number(tag(body!, 'Size') ?? 0),
    modifiedAt: new Date(tag(body!, 'LastModified') ?? 0),
  }));
  const next = tag(xml, 'IsTruncated') === 'true' ? tag(xml, 'NextContinuationToken') : undefined;
  return next ? { objects, next } : { objects };
}
