import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as grpcTypes from '@grpc/grpc-js';
import type * as gossipGrpcTypes from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/gossip_grpc_pb.js';
import type * as gossipPbTypes from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/gossip_pb.js';
import type * as sharedPbTypes from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/shared_pb.js';
import type * as streamsGrpcTypes from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_grpc_pb.js';
import type * as streamsPbTypes from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_pb.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hasCode } from '../../src/core/errors.ts';
import type { EventStore, RecordedEvent } from '../../src/eventStore/eventStore.ts';
import { createKurrentDbEventStore } from '../../src/eventStore/kurrentdb/kurrentDbEventStore.ts';
import { createLogSink } from '../support/logSink.ts';
import { runEventStoreContract } from './contract.ts';
import { collect, ids, newEvent, newEvents, unique, waitUntil } from './helpers.ts';

/**
 * The KurrentDB adapter over an in-process protocol fake: a real gRPC server on loopback that
 * speaks the subset of KurrentDB's `event_store.client.streams.Streams` service the adapter uses
 * (Append, Read of a stream, Read and subscribe on `$all` with filters), over an in-memory log.
 *
 * What this proves: the adapter's own plumbing (what it sends through `@kurrent/kurrentdb-client`
 * and its Rust bridge, how it pages, dedupes, orders onCaughtUp, stops, resubscribes after the
 * server drops) works end to end. What it cannot prove: that KurrentDB behaves like this fake.
 * The fake follows the documented rules (idempotent retries with the same expected revision,
 * best-effort dedup with `any`: https://github.com/EventStore/documentation/blob/master/docs/clients/dotnet/21.2/appending/optimistic-concurrency-and-idempotence.md;
 * `$all` reads inclusive of the start position,
 * subscriptions exclusive; one position per event) and the real run stays
 * `kurrentdb.contract.int.test.ts` with KURRENTDB_URL set.
 */

// The client's own grpc-js and protobuf modules, so the fake speaks exactly its wire format.
const clientRequire = createRequire(createRequire(import.meta.url).resolve('@kurrent/kurrentdb-client'));
const grpc = clientRequire('@grpc/grpc-js') as typeof grpcTypes;
const generated = (file: string): unknown => clientRequire(`../generated/kurrentdb/protocols/v1/${file}`);
const pb = generated('streams_pb.js') as typeof streamsPbTypes;
const shared = generated('shared_pb.js') as typeof sharedPbTypes;
const { StreamsService } = generated('streams_grpc_pb.js') as typeof streamsGrpcTypes;
const gossipPb = generated('gossip_pb.js') as typeof gossipPbTypes;
const { GossipService } = generated('gossip_grpc_pb.js') as typeof gossipGrpcTypes;
const { Timestamp } = clientRequire('google-protobuf/google/protobuf/timestamp_pb') as {
  Timestamp: { fromDate(d: Date): never };
};

type Stored = {
  streamId: string;
  revision: bigint;
  id: string;
  type: string;
  contentType: string;
  data: Uint8Array;
  customMetadata: Uint8Array;
  created: Date;
  position: bigint;
};

type FakeKurrentDb = {
  /** Node 0's port. */
  port: number;
  /** Every node's port (`nodes` of them, one log shared by all). */
  ports: readonly number[];
  /** Which node gossip names as the leader (the others are followers); settable. */
  leader: number;
  /** Appends each node took, for assertions. */
  appendsServed: (node: number) => number;
  /** Stops one node (its connections dropped) or, with `start`, brings it back on its port. */
  stopNode(node: number): Promise<void>;
  startNode(node: number): Promise<void>;
  /** Every event in log order, system events included. */
  log: readonly Stored[];
  /** Appends the fake acknowledged without writing (its own idempotency), for assertions. */
  idempotentAcks: () => number;
  /** Drops every connection and stops listening; `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
};

const uuidToString = (uuid: sharedPbTypes.UUID | undefined): string => {
  if (!uuid) throw new Error('no id');
  if (uuid.hasString()) return uuid.getString();
  const s = uuid.getStructured()!;
  const hex = (v: string) => BigInt.asUintN(64, BigInt(v)).toString(16).padStart(16, '0');
  const h = hex(s.getMostSignificantBits()) + hex(s.getLeastSignificantBits());
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

const stringToUuid = (id: string, structured: boolean): sharedPbTypes.UUID => {
  const uuid = new shared.UUID();
  if (!structured) return uuid.setString(id);
  const h = id.replaceAll('-', '');
  const s = new shared.UUID.Structured();
  s.setMostSignificantBits(BigInt.asIntN(64, BigInt(`0x${h.slice(0, 16)}`)).toString());
  s.setLeastSignificantBits(BigInt.asIntN(64, BigInt(`0x${h.slice(16)}`)).toString());
  return uuid.setStructured(s);
};

const streamName = (identifier: sharedPbTypes.StreamIdentifier | undefined): string =>
  Buffer.from(identifier!.getStreamName_asU8()).toString('utf8');

/**
 * Starts the fake on a free loopback port, with a few system events in the log already. With
 * `nodes` > 1 it listens as that many "nodes" on as many ports, over one shared log, and answers
 * the Gossip service (`event_store.client.gossip.Gossip/Read`, what clients ask gossip seeds) with
 * every node running, `leader` as LEADER and the rest as FOLLOWER: enough for the client's
 * discovery through several seeds and its rediscovery when the leader goes away. It does not
 * model replication, elections or NotLeader answers: any node serves any request.
 */
const startFakeKurrentDb = async (options: { nodes?: number } = {}): Promise<FakeKurrentDb> => {
  const nodeCount = options.nodes ?? 1;
  const log: Stored[] = [];
  const streams = new Map<string, Stored[]>();
  const live = new Set<(e: Stored) => void>();
  let nextPosition = 1000n;
  let idempotentAcks = 0;

  const write = (streamId: string, e: Omit<Stored, 'streamId' | 'revision' | 'position' | 'created'>) => {
    const stream = streams.get(streamId) ?? [];
    streams.set(streamId, stream);
    const stored: Stored = {
      ...e,
      streamId,
      revision: BigInt(stream.length),
      position: nextPosition,
      created: new Date(),
    };
    // Positions are byte offsets in the real log: increasing, with gaps.
    nextPosition += 97n + BigInt(e.data.length + e.customMetadata.length);
    stream.push(stored);
    log.push(stored);
    for (const notify of live) notify(stored);
    return stored;
  };
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));
  const system = (streamId: string, type: string, data: unknown) =>
    write(streamId, {
      id: randomUUID(),
      type,
      contentType: 'application/json',
      data: json(data),
      customMetadata: new Uint8Array(),
    });
  system('$stats-127.0.0.1:2113', '$statsCollected', { cpu: 1 });
  system('$projections-$by_category-result', 'Result', { ok: true }); // user-ish type, $ stream
  system('$$$stats-127.0.0.1:2113', '$metadata', { $maxAge: 86400 });

  /** A stream as readers see it: `$maxCount` from its metadata stream applied. */
  const visible = (streamId: string): Stored[] | undefined => {
    const events = streams.get(streamId);
    if (!events) return undefined;
    const meta = streams.get(`$$${streamId}`)?.at(-1);
    const maxCount = meta
      ? (JSON.parse(Buffer.from(meta.data).toString()) as { $maxCount?: number }).$maxCount
      : undefined;
    return maxCount ? events.slice(-maxCount) : events;
  };

  const toReadResp = (e: Stored, structured: boolean): streamsPbTypes.ReadResp => {
    const recorded = new pb.ReadResp.ReadEvent.RecordedEvent();
    recorded.setId(stringToUuid(e.id, structured));
    recorded.setStreamIdentifier(new shared.StreamIdentifier().setStreamName(Buffer.from(e.streamId)));
    recorded.setStreamRevision(e.revision.toString());
    recorded.setCommitPosition(e.position.toString());
    recorded.setPreparePosition(e.position.toString());
    recorded.getMetadataMap().set('type', e.type);
    recorded.getMetadataMap().set('content-type', e.contentType);
    // .NET ticks (100 ns) since the Unix epoch, as KurrentDB sends them.
    recorded.getMetadataMap().set('created', (BigInt(e.created.getTime()) * 10_000n).toString());
    recorded.setCustomMetadata(e.customMetadata);
    recorded.setData(e.data);
    const readEvent = new pb.ReadResp.ReadEvent();
    readEvent.setEvent(recorded);
    readEvent.setCommitPosition(e.position.toString());
    return new pb.ReadResp().setEvent(readEvent);
  };

  const filterOf = (options: streamsPbTypes.ReadReq.Options): ((e: Stored) => boolean) => {
    if (!options.hasFilter()) return () => true;
    const f = options.getFilter()!;
    const onStream = f.hasStreamIdentifier();
    const expr = onStream ? f.getStreamIdentifier()! : f.getEventType()!;
    const regex = expr.getRegex() ? new RegExp(expr.getRegex()) : undefined;
    const prefixes = expr.getPrefixList();
    return (e) => {
      const subject = onStream ? e.streamId : e.type;
      return regex ? regex.test(subject) : prefixes.some((p) => subject.startsWith(p));
    };
  };

  const read: grpcTypes.handleServerStreamingCall<streamsPbTypes.ReadReq, streamsPbTypes.ReadResp> = (
    call,
  ) => {
    const options = call.request.getOptions()!;
    const structured = options.getUuidOption()?.hasStructured() ?? false;
    const backwards = options.getReadDirection() === pb.ReadReq.Options.ReadDirection.BACKWARDS;
    const count = options.hasCount() ? Number(options.getCount()) : Number.POSITIVE_INFINITY;

    if (options.hasStream()) {
      const s = options.getStream()!;
      const events = visible(streamName(s.getStreamIdentifier()));
      if (!events) {
        const notFound = new pb.ReadResp.StreamNotFound().setStreamIdentifier(s.getStreamIdentifier());
        call.write(new pb.ReadResp().setStreamNotFound(notFound));
        call.end();
        return;
      }
      const from = s.hasRevision() ? BigInt(s.getRevision()) : undefined;
      const selected = backwards
        ? events.filter((e) => from === undefined || s.hasEnd() || e.revision <= from).reverse()
        : events.filter((e) => from === undefined || s.hasStart() || e.revision >= from);
      for (const e of selected.slice(0, count)) call.write(toReadResp(e, structured));
      call.end();
      return;
    }

    const all = options.getAll()!;
    const matches = filterOf(options);
    const at = all.hasPosition() ? BigInt(all.getPosition()!.getCommitPosition()) : undefined;

    if (!options.hasSubscription()) {
      // Reads of $all are inclusive of the start position forwards, exclusive backwards.
      const selected = backwards
        ? log.filter((e) => at === undefined || all.hasEnd() || e.position < at).reverse()
        : log.filter((e) => at === undefined || all.hasStart() || e.position >= at);
      for (const e of selected.filter(matches).slice(0, count)) call.write(toReadResp(e, structured));
      call.end();
      return;
    }

    // Subscriptions are exclusive of the start position. Catch-up walks the log as it grows, at
    // the pace the client reads (gRPC flow control, as the real server does), so events appended
    // while a slow subscriber catches up are part of its catch-up; at the end of the log it says
    // "caught up" and goes live in the same turn, so nothing falls between the two.
    call.write(
      new pb.ReadResp().setConfirmation(
        new pb.ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID()),
      ),
    );
    let closed = false;
    const onAppend = (e: Stored) => {
      if (matches(e)) call.write(toReadResp(e, structured));
    };
    const forget = () => {
      closed = true;
      live.delete(onAppend);
    };
    call.on('cancelled', forget);
    call.on('close', forget);
    const after = all.hasEnd() ? (log.at(-1)?.position ?? -1n) : (at ?? -1n);
    let index = log.findIndex((e) => e.position > after);
    if (index === -1) index = log.length;
    const catchUp = async () => {
      while (!closed) {
        if (index >= log.length) {
          const head = (log.at(-1)?.position ?? 0n).toString();
          call.write(
            new pb.ReadResp().setCheckpoint(
              new pb.ReadResp.Checkpoint().setCommitPosition(head).setPreparePosition(head),
            ),
          );
          const caughtUp = new pb.ReadResp.CaughtUp();
          caughtUp.setTimestamp(Timestamp.fromDate(new Date()));
          caughtUp.setPosition(new pb.ReadResp.Position().setCommitPosition(head).setPreparePosition(head));
          call.write(new pb.ReadResp().setCaughtUp(caughtUp));
          live.add(onAppend);
          return;
        }
        const e = log[index++]!;
        if (matches(e) && !call.write(toReadResp(e, structured))) {
          await new Promise<void>((resolve) => {
            call.once('drain', resolve);
            call.once('cancelled', resolve);
          });
        }
      }
    };
    void catchUp();
  };

  const append: grpcTypes.handleClientStreamingCall<streamsPbTypes.AppendReq, streamsPbTypes.AppendResp> = (
    call,
    callback,
  ) => {
    let options: streamsPbTypes.AppendReq.Options | undefined;
    const proposed: streamsPbTypes.AppendReq.ProposedMessage[] = [];
    call.on('data', (req: streamsPbTypes.AppendReq) => {
      if (req.hasOptions()) options = req.getOptions();
      else proposed.push(req.getProposedMessage()!);
    });
    call.on('end', () => {
      const streamId = streamName(options!.getStreamIdentifier());
      const existing = streams.get(streamId) ?? [];
      const current = BigInt(existing.length) - 1n; // -1: no stream
      const incoming = proposed.map((m) => uuidToString(m.getId()));
      const success = (revision: bigint, position: bigint) => {
        const ok = new pb.AppendResp.Success().setCurrentRevision(revision.toString());
        ok.setPosition(
          new pb.AppendResp.Position()
            .setCommitPosition(position.toString())
            .setPreparePosition(position.toString()),
        );
        callback(null, new pb.AppendResp().setSuccess(ok));
      };
      const wrongVersion = () => {
        const w = new pb.AppendResp.WrongExpectedVersion();
        if (current < 0n) w.setCurrentNoStream(new shared.Empty());
        else w.setCurrentRevision(current.toString());
        if (options!.hasRevision()) w.setExpectedRevision(options!.getRevision());
        else if (options!.hasNoStream()) w.setExpectedNoStream(new shared.Empty());
        else if (options!.hasStreamExists()) w.setExpectedStreamExists(new shared.Empty());
        else w.setExpectedAny(new shared.Empty());
        callback(null, new pb.AppendResp().setWrongExpectedVersion(w));
      };
      /** The stored events at revisions from..from+n-1 when they carry exactly these ids. */
      const storedAt = (from: bigint) => {
        const slice = existing.slice(Number(from), Number(from) + incoming.length);
        return slice.length === incoming.length && slice.every((e, i) => e.id === incoming[i])
          ? slice
          : undefined;
      };
      const idempotent = (events: Stored[]) => {
        idempotentAcks += 1;
        success(events.at(-1)!.revision, events.at(-1)!.position);
      };

      const expected = options!.hasRevision()
        ? BigInt(options!.getRevision())
        : options!.hasNoStream()
          ? -1n
          : undefined;
      if (expected !== undefined) {
        // E2: a stale expected revision whose following events carry these ids is a retry.
        if (expected < current) {
          const retry = storedAt(expected + 1n);
          return retry ? idempotent(retry) : wrongVersion();
        }
        if (expected > current) return wrongVersion();
      } else {
        if (options!.hasStreamExists() && current < 0n) return wrongVersion();
        // E3: with any / stream_exists only a retry of the stream's latest events is caught.
        const retry = storedAt(current - BigInt(incoming.length) + 1n);
        if (retry && incoming.length > 0) return idempotent(retry);
      }
      if (proposed.length === 0) return success(current, log.at(-1)?.position ?? 0n);
      let last: Stored | undefined;
      for (const [i, m] of proposed.entries()) {
        last = write(streamId, {
          id: incoming[i]!,
          type: m.getMetadataMap().get('type') ?? '',
          contentType: m.getMetadataMap().get('content-type') ?? 'application/octet-stream',
          data: m.getData_asU8(),
          customMetadata: m.getCustomMetadata_asU8(),
        });
      }
      success(last!.revision, last!.position);
    });
  };

  const servers: (grpcTypes.Server | undefined)[] = new Array(nodeCount).fill(undefined);
  const ports: number[] = new Array(nodeCount).fill(0);
  const appendsServed: number[] = new Array(nodeCount).fill(0);
  let leader = 0;
  const gossip: grpcTypes.handleUnaryCall<sharedPbTypes.Empty, gossipPbTypes.ClusterInfo> = (
    _call,
    callback,
  ) => {
    const members = ports.flatMap((p, i) => {
      if (servers[i] === undefined) return [];
      const member = new gossipPb.MemberInfo();
      member.setInstanceId(stringToUuid(`00000000-0000-4000-8000-00000000000${i}`, false));
      member.setTimeStamp(String(Date.now()));
      member.setState(
        i === leader ? gossipPb.MemberInfo.VNodeState.LEADER : gossipPb.MemberInfo.VNodeState.FOLLOWER,
      );
      member.setIsAlive(true);
      member.setHttpEndPoint(new gossipPb.EndPoint().setAddress('127.0.0.1').setPort(p));
      return [member];
    });
    callback(null, new gossipPb.ClusterInfo().setMembersList(members));
  };
  const startNode = async (node: number) => {
    const s = new grpc.Server();
    const counted: typeof append = (call, callback) => {
      appendsServed[node] = (appendsServed[node] ?? 0) + 1;
      append(call, callback);
    };
    s.addService(StreamsService, {
      read,
      append: counted,
    } as unknown as grpcTypes.UntypedServiceImplementation);
    s.addService(GossipService, { read: gossip } as unknown as grpcTypes.UntypedServiceImplementation);
    ports[node] = await new Promise<number>((resolve, reject) =>
      s.bindAsync(`127.0.0.1:${ports[node] ?? 0}`, grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    servers[node] = s;
  };
  const stopNode = async (node: number) => {
    servers[node]?.forceShutdown();
    servers[node] = undefined;
  };
  for (let i = 0; i < nodeCount; i++) await startNode(i);
  return {
    get port() {
      return ports[0]!;
    },
    ports,
    get leader() {
      return leader;
    },
    set leader(node: number) {
      leader = node;
    },
    appendsServed: (node) => appendsServed[node] ?? 0,
    stopNode,
    startNode,
    log,
    idempotentAcks: () => idempotentAcks,
    start: async () => {
      for (let i = 0; i < nodeCount; i++) if (servers[i] === undefined) await startNode(i);
    },
    stop: async () => {
      live.clear();
      for (let i = 0; i < nodeCount; i++) await stopNode(i);
    },
  };
};

let fake: FakeKurrentDb;
beforeAll(async () => {
  fake = await startFakeKurrentDb();
});
afterAll(async () => {
  await fake.stop();
});

// The client's Rust bridge waits one discovery interval (500 ms by default) before it first
// connects; every contract test opens a fresh store, so a short interval keeps the file quick.
const url = () => `kurrentdb://127.0.0.1:${fake.port}?tls=false&discoveryInterval=20`;

runEventStoreContract(
  'kurrentdb adapter over an in-process protocol fake (not KurrentDB)',
  () => createKurrentDbEventStore({ connectionString: url() }),
  // Several processes' worth of data lives in the fake for the whole file, like a real server.
  { reopensSameData: true, bulkEvents: 1500 },
);

describe('KurrentDB adapter over the protocol fake', () => {
  const stores: EventStore[] = [];
  const open = async (
    options: {
      idempotencyWindow?: number;
      logger?: ReturnType<ReturnType<typeof createLogSink>['logger']>;
    } = {},
  ) => {
    const store = await createKurrentDbEventStore({
      connectionString: url(),
      connectTimeoutMs: 2000,
      ...options,
    });
    stores.push(store);
    return store;
  };
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  it('stores kind in metadata on the wire and splits it out again', async () => {
    const store = await open();
    const stream = `${unique('order')}-1`;
    const command = newEvent('PlaceOrder', { sku: 'A' }, { kind: 'command', metadata: { actor: 'U1' } });
    await store.appendToStream(stream, [command]);
    const wire = fake.log.find((e) => e.id === command.id)!;
    expect(JSON.parse(Buffer.from(wire.customMetadata).toString())).toEqual({
      actor: 'U1',
      $kind: 'command',
    });
    expect(wire.contentType).toBe('application/json');
    const [read] = await store.readStream(stream);
    expect(read).toMatchObject({ kind: 'command', metadata: { actor: 'U1' }, data: { sku: 'A' } });
  });

  it("reports the server's own idempotent acknowledgement as deduplicated when the originals are past the window", async () => {
    const store = await open({ idempotencyWindow: 1 });
    const stream = `${unique('order')}-1`;
    const first = newEvents(3, 'First');
    const original = await store.appendToStream(stream, first, { expectedRevision: 'no_stream' });
    await store.appendToStream(stream, newEvents(5, 'Later'), { expectedRevision: 2 });
    const acks = fake.idempotentAcks();

    const retried = await store.appendToStream(stream, first, { expectedRevision: 'no_stream' });

    expect(fake.idempotentAcks()).toBe(acks + 1); // the server, not the window, caught it
    expect(retried).toEqual({ nextExpectedRevision: 7, position: original.position, deduplicated: true });
    expect(await store.readStream(stream)).toHaveLength(8);
  });

  it('a retry with any whose originals are past the window is written again: the documented limit', async () => {
    const store = await open({ idempotencyWindow: 1 });
    const stream = `${unique('order')}-1`;
    const first = newEvents(2, 'First');
    await store.appendToStream(stream, first);
    await store.appendToStream(stream, newEvents(3, 'Later'));

    const retried = await store.appendToStream(stream, first, { expectedRevision: 'any' });

    expect(retried.deduplicated).toBe(false);
    expect(ids(await store.readStream(stream)).filter((id) => id === first[0]!.id)).toHaveLength(2);
  });

  it('checkpoints and system events never reach port readers', async () => {
    const store = await open();
    const cat = unique('order');
    const processor = unique('processor');
    const r = await store.appendToStream(`${cat}-1`, newEvents(2));
    await store.storeCheckpoint(processor, r.position - 1n);
    await store.storeCheckpoint(processor, r.position);

    expect(await store.readCheckpoint(processor)).toBe(r.position);
    // $maxCount: 1 was set on the checkpoint stream, so only the latest checkpoint stays visible.
    const metadata = fake.log.filter((e) => e.streamId === `$$switchboardCheckpoint-${processor}`);
    expect(metadata.map((e) => JSON.parse(Buffer.from(e.data).toString()))).toEqual([{ $maxCount: 1 }]);
    expect(await store.headPosition()).toBe(r.position);
    const everything = await store.readAll();
    expect(everything.some((e) => e.streamId.startsWith('$') || e.type.startsWith('$'))).toBe(false);
    expect(everything.some((e) => e.streamId.includes(processor))).toBe(false);
    expect(everything.at(-1)?.position).toBe(r.position);
    const listed = await store.listStreams();
    expect(listed[0]?.streamId).toBe(`${cat}-1`);
    expect(listed.some((s) => s.streamId.startsWith('$') || s.streamId.includes(processor))).toBe(false);
  });

  it('a subscription survives the server going away: it resubscribes from where it was, no gap, no duplicate', async () => {
    const sink = createLogSink();
    const store = await open({ logger: sink.logger() });
    const cat = unique('order');
    const filter = { streamPrefixes: [`${cat}-`] };
    await store.appendToStream(`${cat}-1`, newEvents(3, 'Before'));
    const c = collect(store, 'start', filter);
    await c.caughtUp;

    await fake.stop();
    await waitUntil(
      () => sink.lines().some((l) => l['msg'] === 'KurrentDB subscription dropped; resubscribing'),
      'the subscription to notice',
    );
    expect(store.isOpen()).toBe(false);
    await fake.start();
    await waitUntil(() => store.isOpen(), 'the store to see the server again', 20_000);
    const after = newEvents(3, 'After');
    await store.appendToStream(`${cat}-1`, after);
    await c.waitFor(6);
    await c.subscription.stop();

    const all = await store.readAll({ filter });
    expect(ids(c.events)).toEqual(ids(all));
    expect(c.caughtUpCalls()).toBe(1);
    const dropped = sink.lines().find((l) => l['msg'] === 'KurrentDB subscription dropped; resubscribing');
    expect(hasCode(Object.assign(new Error(), dropped?.['err']), 'SB_STORE_UNAVAILABLE')).toBe(true);
  });

  it('onCaughtUp comes after every catch-up event was handled, even when handling is slow', async () => {
    const store = await open();
    const cat = unique('order');
    const stored = newEvents(40);
    await store.appendToStream(`${cat}-1`, stored);
    const handled: RecordedEvent[] = [];
    let handledAtCaughtUp = -1;
    const sub = store.subscribe({
      from: 'start',
      filter: { streamPrefixes: [`${cat}-`] },
      onEvent: async (e) => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        handled.push(e);
      },
      onCaughtUp: () => {
        handledAtCaughtUp = handled.length;
      },
    });
    await waitUntil(() => handledAtCaughtUp >= 0, 'onCaughtUp');
    await sub.stop();
    expect(handledAtCaughtUp).toBe(40);
    expect(ids(handled)).toEqual(ids(stored));
  });
});

describe('KurrentDB adapter over a three-node protocol fake: several gossip seeds', () => {
  // Three "nodes" of one fake log, each answering gossip. Proves what our connection string and
  // adapter do with several seeds (through the client's JavaScript side and its Rust bridge), not
  // how a real cluster elects a leader or replicates.
  let cluster: FakeKurrentDb;
  const stores: EventStore[] = [];
  beforeAll(async () => {
    cluster = await startFakeKurrentDb({ nodes: 3 });
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });
  afterAll(async () => {
    await cluster.stop();
  });
  const seeds = () => cluster.ports.map((p) => `127.0.0.1:${p}`).join(',');

  it('connects through a seed list whose first seeds are down, and writes to the node gossip names leader', async () => {
    cluster.leader = 2;
    await cluster.stopNode(0);
    try {
      const store = await createKurrentDbEventStore({
        connectionString: `kurrentdb://${seeds()}?tls=false&discoveryInterval=20&nodePreference=leader`,
        connectTimeoutMs: 10_000,
      });
      stores.push(store);
      const before = [cluster.appendsServed(1), cluster.appendsServed(2)];
      const cat = unique('order');
      await store.appendToStream(`${cat}-1`, newEvents(2));
      expect(await store.readStream(`${cat}-1`)).toHaveLength(2);
      expect(cluster.appendsServed(2)).toBeGreaterThan(before[1]!);
      expect(cluster.appendsServed(1)).toBe(before[0]);
    } finally {
      await cluster.startNode(0);
    }
  });

  it('after the leader goes away, finds the new one through the other seeds: appends resume, the subscription has no gap and no duplicate', async () => {
    cluster.leader = 0;
    const sink = createLogSink();
    const store = await createKurrentDbEventStore({
      connectionString: `kurrentdb://${seeds()}?tls=false&discoveryInterval=20`,
      connectTimeoutMs: 10_000,
      logger: sink.logger(),
    });
    stores.push(store);
    const cat = unique('order');
    const filter = { streamPrefixes: [`${cat}-`] };
    const servedBy0 = cluster.appendsServed(0);
    await store.appendToStream(`${cat}-1`, newEvents(3, 'Before'));
    expect(cluster.appendsServed(0)).toBeGreaterThan(servedBy0);
    const c = collect(store, 'start', filter);
    await c.caughtUp;

    // The leader dies and gossip names node 1: what a client sees of a failover.
    cluster.leader = 1;
    await cluster.stopNode(0);
    try {
      await waitUntil(
        () => sink.lines().some((l) => l['msg'] === 'KurrentDB subscription dropped; resubscribing'),
        'the subscription to notice',
      );
      const servedBy1 = cluster.appendsServed(1);
      const after = newEvents(3, 'After');
      // The first append may meet the dead channel (SB_STORE_UNAVAILABLE); a retry with the same
      // ids is what callers do, and must not write them twice.
      await waitUntil(async () => {
        try {
          await store.appendToStream(`${cat}-1`, after, { expectedRevision: 2 });
          return true;
        } catch (e) {
          if (hasCode(e, 'SB_STORE_UNAVAILABLE')) {
            await new Promise((resolve) => setTimeout(resolve, 200));
            return false;
          }
          throw e;
        }
      }, 'an append to reach the new leader');
      expect(cluster.appendsServed(1)).toBeGreaterThan(servedBy1);
      await c.waitFor(6);
      await c.subscription.stop();

      const all = await store.readAll({ filter });
      expect(all).toHaveLength(6);
      expect(ids(c.events)).toEqual(ids(all));
      expect(c.caughtUpCalls()).toBe(1);
      await waitUntil(() => store.isOpen(), 'the store to report itself available again');
    } finally {
      await cluster.startNode(0);
    }
  });
});
