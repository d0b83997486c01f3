import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import type { Socket } from 'node:net';
import dns2 from 'dns2';

const { Packet } = dns2;

/** The records of one name. A TXT record is a string (split into 255-byte strings on the wire) or its strings. */
export interface ZoneEntry {
  TXT?: Array<string | string[]>;
  MX?: Array<{ exchange: string; priority: number }>;
  A?: string[];
  AAAA?: string[];
  /** Answer SERVFAIL for every query of this name. */
  servfail?: boolean;
}

/** A zone: names (lower-case, no trailing dot) and their records. Names not listed answer NXDOMAIN. */
export type Zone = Record<string, ZoneEntry>;

/** An authoritative DNS server on loopback (UDP and TCP on one port), serving a zone a test can edit. */
export interface DnsZoneServer {
  /** `127.0.0.1:<port>`, for `Resolver.setServers`. */
  readonly address: string;
  /** The zone served: edit it between queries (nothing is cached). */
  zone: Zone;
  /** A resolver pointed at this server only (patient: the server always answers). */
  resolver(): Resolver;
  /** Queries answered so far, as `NAME TYPE`. */
  readonly queries: string[];
  close(): Promise<void>;
}

/** Response codes (RFC 1035 4.1.1); dns2's types leave out its `Packet.RCODE` table. */
const SERVFAIL = 2;
const NXDOMAIN = 3;

const TYPE_NAMES = new Map<number, string>(
  Object.entries(Packet.TYPE).map(([name, code]) => [code as number, name]),
);

/** Starts a server for `zone` on 127.0.0.1 (a free port, UDP and TCP: long DKIM keys need TCP without EDNS). */
export async function startDnsZone(zone: Zone): Promise<DnsZoneServer> {
  const queries: string[] = [];
  const server = {
    zone,
    queries,
  } as { zone: Zone; queries: string[] };

  const handle = (
    request: InstanceType<typeof Packet>,
    send: (response: InstanceType<typeof Packet>) => void,
  ) => {
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    for (const question of request.questions) {
      const name = question.name.toLowerCase().replace(/\.$/, '');
      const type = TYPE_NAMES.get(question.type) ?? String(question.type);
      queries.push(`${name} ${type}`);
      const entry = server.zone[name];
      if (!entry) {
        response.header.rcode = NXDOMAIN;
        continue;
      }
      if (entry.servfail) {
        response.header.rcode = SERVFAIL;
        continue;
      }
      const answer = (record: Record<string, unknown>) =>
        response.answers.push(
          Packet.createResourceFromQuestion(question, { class: Packet.CLASS.IN, ttl: 1, ...record }),
        );
      if (type === 'TXT') {
        for (const text of entry.TXT ?? []) answer({ data: typeof text === 'string' ? chunks(text) : text });
      } else if (type === 'MX') {
        for (const mx of entry.MX ?? []) answer(mx);
      } else if (type === 'A') {
        for (const address of entry.A ?? []) answer({ address });
      } else if (type === 'AAAA') {
        for (const address of entry.AAAA ?? []) answer({ address });
      }
    }
    send(response);
  };

  // The UDP port is picked first and TCP takes the same number: another process may hold it for TCP, so a
  // port that fails is given up and another one tried.
  const sockets = new Set<Socket>();
  let servers:
    | { udp: ReturnType<typeof dns2.createUDPServer>; tcp: ReturnType<typeof dns2.createTCPServer> }
    | undefined;
  let port = 0;
  for (let attempt = 1; !servers; attempt++) {
    const udpServer = dns2.createUDPServer(handle);
    await udpServer.listen(0, '127.0.0.1');
    port = udpServer.address().port;
    const tcpServer = dns2.createTCPServer(handle);
    tcpServer.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    try {
      await new Promise<void>((resolve, reject) => {
        tcpServer.once('error', reject);
        tcpServer.listen(port, '127.0.0.1', () => resolve());
      });
      servers = { udp: udpServer, tcp: tcpServer };
    } catch (error) {
      await new Promise<void>((resolve) => udpServer.close(() => resolve()));
      if (attempt >= 5) throw error;
    }
  }
  const { udp, tcp } = servers;
  const address = `127.0.0.1:${port}`;
  return Object.assign(server, {
    address,
    // A server that always answers gets patient waits: under a loaded suite the test process itself can stall
    // past a short timeout, and a lost answer reads as "no record" (a flaky "not seen").
    resolver: () => resolverFor(address, { timeout: 3000, tries: 2 }),
    async close() {
      for (const socket of sockets) socket.destroy();
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  });
}

/** A UDP "DNS server" on loopback that reads every query and never answers. */
export async function startSilentDns(): Promise<{
  address: string;
  resolver(): Resolver;
  close(): Promise<void>;
}> {
  const socket: UdpSocket = createSocket('udp4');
  socket.on('message', () => {});
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const address = `127.0.0.1:${socket.address().port}`;
  return {
    address,
    resolver: () => resolverFor(address, { timeout: 300, tries: 1 }),
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** A resolver of `address` only. The silent server's waits are short: it must end a test in well under a second. */
function resolverFor(address: string, waits: { timeout: number; tries: number }): Resolver {
  const resolver = new Resolver(waits);
  resolver.setServers([address]);
  return resolver;
}

/** A TXT value as DNS carries it: character strings of at most 255 bytes. */
function chunks(text: string): string[] {
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += 255) parts.push(text.slice(i, i + 255));
  return parts.length > 0 ? parts : [''];
}

/** Adds records as a domain's owner would publish them (the shape of the core's records to publish). */
export function publish(
  zone: Zone,
  records: ReadonlyArray<{ type: 'TXT' | 'MX'; name: string; value: string; priority?: number }>,
): Zone {
  for (const record of records) {
    const entry = zone[record.name] ?? {};
    zone[record.name] = entry;
    if (record.type === 'TXT') entry.TXT = [...(entry.TXT ?? []), record.value];
    else entry.MX = [...(entry.MX ?? []), { exchange: record.value, priority: record.priority ?? 10 }];
  }
  return zone;
}
