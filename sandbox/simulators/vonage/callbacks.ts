import { Ajv, type ValidateFunction } from 'ajv';
import * as ajvFormats from 'ajv-formats';
import type { OpenApiDocument, ValidationIssue } from '../openapi.ts';

/**
 * Checks the webhooks the simulator sends against the schemas the vendored documents give for
 * them (their `x-webhooks`): message status and inbound SMS (Messages: `messageStatusSMS`,
 * `inboundMessageSMS`), verify summaries and events (Verify v2: `VerifyResource`,
 * `VerifyResourceEventCallBackExample`). Voice call events have no schema in the vendored Voice
 * document and are not checked. What breaks them is a simulator bug, recorded as a violation:
 * the bot's parsers are written against these shapes.
 */
export type CallbackSchema = Readonly<{ document: OpenApiDocument; schema: string }>;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** OpenAPI 3.0 → ajv: `nullable` without `type` is dropped (ajv refuses it), as ../openapi.ts does. */
const normalize = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(normalize);
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = k === 'example' || k === 'examples' ? v : normalize(v);
  if ('nullable' in out && !('type' in out)) delete out.nullable;
  return out;
};

export const createCallbackValidator = () => {
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, logger: false });
  (ajvFormats as unknown as { default: (a: Ajv) => void }).default(ajv);
  const docIds = new Map<OpenApiDocument, string>();
  const compiled = new Map<string, ValidateFunction>();

  const compile = ({ document, schema }: CallbackSchema): ValidateFunction => {
    let docId = docIds.get(document);
    if (!docId) {
      docId = `vonage-callbacks-${docIds.size + 1}`;
      docIds.set(document, docId);
      ajv.addSchema({ $id: docId, components: normalize(document.components ?? {}) } as Json);
    }
    const key = `${docId}#${schema}`;
    let fn = compiled.get(key);
    if (!fn) {
      fn = ajv.compile({ $ref: `${docId}#/components/schemas/${schema}` });
      compiled.set(key, fn);
    }
    return fn;
  };

  return {
    /** The issues of `body` against the named component schema; empty when it conforms. */
    validate(target: CallbackSchema, body: unknown): ValidationIssue[] {
      const fn = compile(target);
      if (fn(body)) return [];
      return (fn.errors ?? []).map((e) => ({
        where: 'body' as const,
        ...(e.instancePath ? { name: e.instancePath } : {}),
        message: `${target.schema}${e.instancePath} ${e.message ?? 'is invalid'}`,
      }));
    },
  };
};
