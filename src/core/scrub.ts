/**
 * The one scrubber: replaces secrets and credential-shaped values in text with `[Redacted]`.
 * Used by the logger on every serialised line, by the upstream HTTP client on whatever a vendor
 * answered (gateways echo the `Authorization` header they got), and wherever an error becomes data
 * (`errorMessageOf`: failure events, parked events, replies). Credentials must never reach the
 * store or a message people see
 * (https://cheatsheetseries.owasp.org/cheatsheets/Logging_Cheat_Sheet.html#data-to-exclude).
 *
 * What it removes:
 * - configured secret values (`knowSecrets`, or the `secrets` given to `createScrubber`), as they
 *   appear raw and inside JSON strings;
 * - shapes: Slack `xox*-` / `xapp-` tokens, `Authorization: …` values, `Bearer …`,
 *   `Token token=…` (PagerDuty REST auth), `Basic …`, JWTs, `hooks.slack.com` URLs (response URLs,
 *   incoming webhooks), userinfo in URLs (`https://user:pass@host`), E.164 phone numbers.
 *
 * @example
 * knowSecrets(config.secrets); // once at start (createLogger does it)
 * scrubText('HTTP 401: bad header Authorization: Token token=u+abc123xyz') // 'HTTP 401: bad header [Redacted]'
 */

export const REDACTED = '[Redacted]';

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Patterns that look like credentials or personal data wherever they appear in a text. */
const SHAPES: readonly RegExp[] = [
  // An Authorization header written out, whatever its scheme: its whole value goes (the name stays).
  /(?<=\b(?:proxy-)?authorization\\?["']?\s*[:=]\s*\\?["']?)(?!\[Redacted\])(?:[A-Za-z-]+\s+)?[^\s"'\\,;}]+/gi,
  /xox[abposre]-[A-Za-z0-9-]{6,}/g, // Slack bot/user/config tokens
  /xapp-[A-Za-z0-9-]{6,}/g, // Slack app-level tokens
  /\b[Bb]earer\s+[A-Za-z0-9._~+/=-]{8,}/g, // Bearer …
  /\b[Bb]asic\s+[A-Za-z0-9+/=]{8,}/g, // Basic base64(user:pass)
  /\bToken\s+token\s*=\s*[^\s"',;}]{4,}/gi, // PagerDuty REST auth header
  /eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, // JWTs
  /https?:\/\/hooks\.slack\.com\/[^\s"'\\<>]+/gi, // response_url / incoming webhooks
  /(?<=\b[a-z][a-z0-9+.-]*:\/\/)[^\s/:@"'<>]+:[^\s/@"'<>]*(?=@)/gi, // userinfo in URLs (basic auth)
  /\+[1-9]\d{6,14}\b/g, // E.164 phone numbers
];

/**
 * Builds a scrubber: configured secrets (raw and as they appear inside JSON strings) and the
 * credential shapes above are replaced by `[Redacted]`. Secrets shorter than 6 characters are
 * ignored: replacing them would shred ordinary words.
 */
export const createScrubber = (secrets: Iterable<string> = []): ((text: string) => string) => {
  const literals = [...new Set(secrets)]
    .filter((s) => typeof s === 'string' && s.length >= 6)
    .flatMap((s) => [s, JSON.stringify(s).slice(1, -1), encodeURIComponent(s)])
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp);
  const patterns = [...(literals.length > 0 ? [new RegExp(literals.join('|'), 'g')] : []), ...SHAPES];
  return (text) => {
    let out = text;
    for (const p of patterns) out = out.replace(p, REDACTED);
    return out;
  };
};

const known = new Set<string>();
let scrubKnown = createScrubber();

/**
 * Adds secret values (Config.secrets) to those `scrubText` removes. The set only grows: forgetting a
 * secret is never safer, and one process may hold several apps (tests).
 */
export const knowSecrets = (secrets: Iterable<string>): void => {
  let added = false;
  for (const s of secrets) {
    if (typeof s === 'string' && s.length >= 6 && !known.has(s)) {
      known.add(s);
      added = true;
    }
  }
  if (added) scrubKnown = createScrubber(known);
};

/** Scrubs `text` of the known secrets and of every credential shape. */
export const scrubText = (text: string): string => scrubKnown(text);
