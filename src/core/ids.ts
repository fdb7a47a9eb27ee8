import { createHash, randomUUID } from 'node:crypto';

/** Namespace for every Switchboard UUIDv5 (itself a v5 of the URL namespace and 'switchboard'). */
export const SWITCHBOARD_NAMESPACE = '2f1c9c9e-5b8e-5d4a-9d0e-6a1f6c1b7e30';

const parseUuid = (uuid: string): Buffer => {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new TypeError(`not a UUID: ${uuid}`);
  return Buffer.from(hex, 'hex');
};

const formatUuid = (bytes: Buffer): string => {
  const h = bytes.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
};

/**
 * RFC 9562 UUIDv5 (SHA-1, name-based): the same name always gives the same id, so a redelivered
 * Slack request or webhook maps to the same event id and the store dedupes it.
 *
 * @example uuidv5('slack:command:' + triggerId) // stable across Slack retries
 */
// Namespaces are few (ours, plus the RFC's in tests): parse each once, not on every id.
const namespaces = new Map<string, Buffer>();
const namespaceBytes = (namespace: string): Buffer => {
  let bytes = namespaces.get(namespace);
  if (!bytes) {
    bytes = parseUuid(namespace);
    if (namespaces.size < 64) namespaces.set(namespace, bytes);
  }
  return bytes;
};

export const uuidv5 = (name: string, namespace: string = SWITCHBOARD_NAMESPACE): string => {
  const hash = createHash('sha1').update(namespaceBytes(namespace)).update(name, 'utf8').digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return formatUuid(bytes);
};

/** A fresh random id, for things that have no natural key. */
export const newId = (): string => randomUUID();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID.test(value);
