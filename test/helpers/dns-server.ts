import dns2 from 'dns2';

const { Packet } = dns2;

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for SLIPWAY_DNS_SERVERS or pebble's -dnsserver. */
  address: string;
  port: number;
  /** TXT records by lowercase name: each record is its character strings (chunks). */
  txt: Map<string, string[][]>;
  /** A records by lowercase name. */
  a: Map<string, string>;
  /** Every question asked, as `TYPE name`. */
  asked: string[];
  close(): Promise<void>;
}

/** RFC 1035 response code "name does not exist" (dns2's typings lack Packet.RCODE). */
const NXDOMAIN = 3;

const TYPE_NAME: Record<number, string> = {
  [Packet.TYPE.A]: 'A',
  [Packet.TYPE.AAAA]: 'AAAA',
  [Packet.TYPE.TXT]: 'TXT',
};

/**
 * A real DNS server on 127.0.0.1 (UDP) whose records the test sets. A name with no record of
 * any type answers NXDOMAIN; a known name without the asked type answers no records.
 */
export async function startDnsServer(): Promise<TestDnsServer> {
  const txt = new Map<string, string[][]>();
  const a = new Map<string, string>();
  const asked: string[] = [];
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      // Plain objects are what dns2 encodes; its typings want its own Resource class.
      const answer = (r: object) => response.answers.push(r as (typeof response.answers)[number]);
      const [question] = request.questions;
      if (question) {
        const name = question.name.toLowerCase();
        asked.push(`${TYPE_NAME[question.type] ?? question.type} ${name}`);
        if (question.type === Packet.TYPE.TXT) {
          for (const chunks of txt.get(name) ?? []) {
            answer({
              name: question.name,
              type: Packet.TYPE.TXT,
              class: Packet.CLASS.IN,
              ttl: 1,
              data: chunks,
            });
          }
        }
        if (question.type === Packet.TYPE.A && a.has(name)) {
          answer({
            name: question.name,
            type: Packet.TYPE.A,
            class: Packet.CLASS.IN,
            ttl: 1,
            address: a.get(name),
          });
        }
        if (!txt.has(name) && !a.has(name)) response.header.rcode = NXDOMAIN;
      }
      void send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = addresses.udp!.port;
  return { address: `127.0.0.1:${port}`, port, txt, a, asked, close: () => server.close() };
}
