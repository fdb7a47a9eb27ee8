import type { ErrorClassifier, VendorErrorInfo } from '../http.ts';

/** The incident service's error bodies, and what they mean beyond their HTTP status (see http.ts). */

const asStringArray = (v: unknown): string[] | undefined => {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  // Newer endpoints return `errors` as an object of field → messages.
  if (v && typeof v === 'object') {
    return Object.entries(v).flatMap(([k, msgs]) =>
      Array.isArray(msgs) ? msgs.map((m) => `${k}: ${String(m)}`) : [`${k}: ${String(msgs)}`],
    );
  }
  return undefined;
};

/** `{ error: { code, message, errors } }` (REST) or `{ status, message, errors }` (Events API). */
export const parsePagerDutyError = (json: unknown): VendorErrorInfo | undefined => {
  if (!json || typeof json !== 'object') return undefined;
  const body = json as { error?: unknown; message?: unknown; errors?: unknown; status?: unknown };
  if (body.error && typeof body.error === 'object') {
    const e = body.error as { code?: unknown; message?: unknown; errors?: unknown };
    return {
      code: typeof e.code === 'number' || typeof e.code === 'string' ? e.code : undefined,
      message: typeof e.message === 'string' ? e.message : undefined,
      errors: asStringArray(e.errors),
    };
  }
  if (typeof body.message === 'string') {
    return { message: body.message, errors: asStringArray(body.errors) };
  }
  return undefined;
};

const mentions = (info: VendorErrorInfo | undefined, re: RegExp) =>
  [info?.message, ...(info?.errors ?? [])].some((s) => typeof s === 'string' && re.test(s));

/**
 * PagerDuty's numeric error codes (`error.code` in the body) refined beyond the status-based
 * mapping. The list is PagerDuty's:
 * https://github.com/PagerDuty/developer-docs/blob/94224391aa3eac8fa73ea6a6af542dee0613d3e8/docs/REST-API/14-Errors.md
 */
export const classifyPagerDutyError: ErrorClassifier = (status, info) => {
  const code = info?.code === undefined ? undefined : Number(info.code);
  if (code === 1008 || code === 2013 || mentions(info, /requester user not found/i)) {
    return { code: 'SB_UNMAPPED_USER', reason: 'requester_not_found' };
  }
  if (code === 1001 || mentions(info, /already resolved/i)) {
    return { code: 'SB_UPSTREAM_REJECTED', reason: 'already_resolved' };
  }
  if (mentions(info, /matching dedup key already exists|incident key.*already/i)) {
    return { code: 'SB_UPSTREAM_REJECTED', reason: 'duplicate_incident_key' };
  }
  if (status === 413) return { code: 'SB_UPSTREAM_REJECTED', reason: 'too_many_incidents' };
  if (code === 2012 || status === 402) return { code: 'SB_UPSTREAM_REJECTED', reason: 'account_expired' };
  if (code === 2002) return { code: 'SB_UPSTREAM_REJECTED', reason: 'arguments_caused_error' };
  if (code === 2016) return { code: 'SB_VALIDATION', reason: 'from_header_missing' };
  if (code === 2001) return { code: 'SB_VALIDATION', reason: 'invalid_input' };
  if (code === 2100) return { code: 'SB_NOT_FOUND', reason: 'not_found' };
  if (code === 2010) return { reason: 'access_denied' };
  return undefined;
};
