/**
 * `EVENT_STORE_URL` rules shared by the configuration check (`src/config.ts`) and the store opener
 * (`openEventStore.ts`), so that what the one accepts the other opens. Pure: no store or client here.
 *
 * KurrentDB URLs: the schemes the official client parses (`kurrentdb`, `kurrent`, `kdb`, and the
 * deprecated `esdb`, each also `+discover`) and our own alias `eventstore`; several gossip seeds
 * are a comma-separated host list (`kurrentdb://node1:2113,node2:2113,node3:2113?tls=true`).
 * Credentials (`user:password@`) may be in the URL, so it is shown redacted and its password is a
 * secret for the logger's scrubber.
 *
 * @example isKurrentDbUrl('kurrentdb://node1:2113,node2:2113?tls=true'); // true
 */

const KURRENTDB_URL = /^(?:kurrentdb|kurrent|kdb|esdb|eventstore)(?:\+discover)?:\/\/./;

/** True for a URL the KurrentDB adapter opens. */
export const isKurrentDbUrl = (url: string): boolean => KURRENTDB_URL.test(url);

/** The URL fit for logs and messages: whatever sits between `//` (or `:/`) and `@` replaced. */
export const redactStoreUrl = (url: string): string => url.replace(/^([^@/?#]*:\/*)[^@/?#]*@/, '$1***@');

/**
 * The password in the URL's credentials, as written and percent-decoded (both may turn up in a
 * log line); `[]` without credentials.
 */
export const storeUrlSecrets = (url: string): string[] => {
  const userinfo = /^[^@/?#]*:\/*([^@/?#]*)@/.exec(url)?.[1];
  const colon = userinfo?.indexOf(':') ?? -1;
  if (userinfo === undefined || colon < 0) return [];
  const password = userinfo.slice(colon + 1);
  if (password === '') return [];
  let decoded = password;
  try {
    decoded = decodeURIComponent(password);
  } catch {
    // Not valid percent-encoding: the client would refuse it too; the raw form is the secret.
  }
  return [...new Set([password, decoded])];
};
