import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import * as ajvFormats from 'ajv-formats';
import { parse as parseYaml } from 'yaml';

/**
 * A request validator over a vendor's OpenAPI 3.0 document, for simulators: each simulator checks
 * the requests it receives (and its own answers) against the vendor's published document, vendored
 * beside it in `sandbox/simulators/<vendor>/specs/`. Documents may be JSON or YAML. Schemas are
 * compiled lazily, per operation, on first use, so a 2.7 MB document costs one parse and only the
 * operations a test hits.
 *
 * @example
 * const doc = loadOpenApiDocument(new URL('./specs/rest-openapiv3.json', import.meta.url));
 * const validator = createOpenApiValidator(doc, { name: 'pd-rest', basePath: serverBasePath(doc) });
 * const result = validator.validateRequest({ method: 'GET', url: '/incidents?limit=5', headers, body });
 * if (result.issues.length > 0) answer400(result.issues);
 */
export type OpenApiDocument = {
  readonly openapi: string;
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly components?: Readonly<Record<string, unknown>>;
  readonly servers?: ReadonlyArray<{ readonly url: string }>;
  readonly security?: ReadonlyArray<Readonly<Record<string, readonly string[]>>>;
};

export type ValidationIssue = {
  readonly where: 'route' | 'path' | 'query' | 'header' | 'body' | 'security' | 'response';
  /** Parameter or header name, or the JSON pointer inside the body. */
  readonly name?: string;
  readonly message: string;
};

export type RouteMatch = {
  readonly operationId: string;
  readonly method: string;
  readonly pathTemplate: string;
  readonly pathParams: Readonly<Record<string, string>>;
};

export type ValidatedRequest = {
  /** Undefined when no operation of the document matches the method and path. */
  readonly route: RouteMatch | undefined;
  readonly issues: readonly ValidationIssue[];
  /** Query values coerced to the declared types (arrays for array parameters). */
  readonly query: Readonly<Record<string, unknown>>;
  /**
   * The parsed body: JSON, or a form-encoded body as an object with each field coerced to its
   * declared type; undefined when there was none (or it did not parse).
   */
  readonly body: unknown;
};

export type IncomingRequestLike = {
  readonly method: string;
  /** Path and query, as in `IncomingMessage.url`. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** Raw body; empty or undefined means no body. */
  readonly body?: Buffer | string | undefined;
};

/** A documented correction to the vendor document, applied before compiling (keep the reason!). */
export type OpenApiPatch = {
  /** JSON pointer into the document, e.g. `/components/schemas/IncidentBody/properties/details`. */
  readonly pointer: string;
  readonly value: unknown;
  readonly reason: string;
};

export type OpenApiValidatorOptions = {
  /** Unique name for the document inside ajv (several validators may coexist). */
  readonly name: string;
  /** Path prefix the document's paths live under, e.g. `/v2` for a server URL ending in /v2. */
  readonly basePath?: string;
  /** Only these operationIds are routable (others answer as unknown routes). Default: all. */
  readonly operations?: readonly string[];
  readonly patches?: readonly OpenApiPatch[];
  /** Query parameters the operation does not declare are issues unless this is true. */
  readonly allowUnknownQuery?: boolean;
  /** Skip the `security` check (for documents whose auth lives in the body, e.g. routing keys). */
  readonly ignoreSecurity?: boolean;
};

export type OpenApiValidator = {
  match(method: string, url: string): RouteMatch | undefined;
  validateRequest(request: IncomingRequestLike): ValidatedRequest;
  /**
   * Checks a response body against the documented schema for that status. Null-valued properties
   * are treated as absent first: vendor documents routinely omit `nullable` on fields that are null.
   */
  validateResponse(operationId: string, status: number, body: unknown): readonly ValidationIssue[];
};

const documentCache = new Map<string, OpenApiDocument>();

/**
 * Reads and parses a document once per process (the PagerDuty REST file is 2.7 MB): `.yml` and
 * `.yaml` files with the `yaml` package (the Vonage documents), anything else as JSON.
 */
export const loadOpenApiDocument = (file: string | URL): OpenApiDocument => {
  const key = String(file);
  const cached = documentCache.get(key);
  if (cached) return cached;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(
      `OpenAPI document not found at ${key}: each simulator's vendor documents are vendored beside it, in sandbox/simulators/<vendor>/specs/`,
      { cause: err },
    );
  }
  const doc = (/\.ya?ml$/i.test(key) ? parseYaml(text) : JSON.parse(text)) as OpenApiDocument | null;
  if (typeof doc?.openapi !== 'string' || !doc.openapi.startsWith('3.')) {
    throw new Error(`${key} is not an OpenAPI 3 document`);
  }
  documentCache.set(key, doc);
  return doc;
};

/**
 * The path prefix of the document's first server URL (`https://api.nexmo.com/v2/verify` →
 * `/v2/verify`, `https://{api-region}.nexmo.com/v1` → `/v1`, `https://rest.nexmo.com` → ``): what
 * to pass as `basePath` when the simulator serves the API at the root of its own origin.
 */
export const serverBasePath = (document: OpenApiDocument): string => {
  const url = document.servers?.[0]?.url ?? '';
  return url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '').replace(/\/+$/, '');
};

type JsonObject = Record<string, unknown>;
type Parameter = {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonObject;
  style?: string;
  explode?: boolean;
};
type Operation = {
  operationId: string;
  method: string;
  pathTemplate: string;
  regex: RegExp;
  paramNames: string[];
  literalSegments: number;
  parameters: Parameter[];
  requestBody: { required?: boolean; content?: Record<string, { schema?: JsonObject }> } | undefined;
  responses: Record<string, unknown>;
  security: ReadonlyArray<Readonly<Record<string, readonly string[]>>> | undefined;
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

const unescapePointer = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');

const resolvePointer = (doc: unknown, ref: string): unknown => {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, got ${ref}`);
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    if (!isObject(node) && !Array.isArray(node)) return undefined;
    node = (node as JsonObject)[unescapePointer(raw)];
  }
  return node;
};

/** Follows `$ref`s until a non-reference object (parameters, responses, schemas for type lookup). */
const deref = (doc: unknown, node: unknown): unknown => {
  let current = node;
  for (let i = 0; i < 20 && isObject(current) && typeof current.$ref === 'string'; i++) {
    current = resolvePointer(doc, current.$ref);
  }
  return current;
};

/**
 * Makes OpenAPI 3.0 schema dialect acceptable to ajv: `nullable` without `type` is dropped (ajv
 * refuses it), and `example`-like vendor keywords are left for `strict: false` to ignore.
 */
const normalize = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(normalize);
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'example' || k === 'examples' || k === 'x-examples') {
      out[k] = v;
      continue;
    }
    out[k] = normalize(v);
  }
  if ('nullable' in out && !('type' in out)) delete out.nullable;
  return out;
};

const rewriteRefs = (node: unknown, docId: string): unknown => {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, docId));
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] =
      k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${docId}${v}` : rewriteRefs(v, docId);
  }
  return out;
};

const stripNulls = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(stripNulls);
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(node)) if (v !== null) out[k] = stripNulls(v);
  return out;
};

const applyPatch = (root: JsonObject, patch: OpenApiPatch) => {
  const parts = patch.pointer.split('/').slice(1).map(unescapePointer);
  const last = parts.pop();
  if (last === undefined) throw new Error(`bad patch pointer ${patch.pointer}`);
  let node: unknown = root;
  for (const p of parts) {
    if (!isObject(node)) throw new Error(`patch pointer ${patch.pointer} does not exist`);
    node = node[p];
  }
  if (!isObject(node)) throw new Error(`patch pointer ${patch.pointer} does not exist`);
  node[last] = patch.value;
};

const headerValue = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(', ') : v;
};

const schemaType = (doc: unknown, schema: unknown): string | undefined => {
  const s = deref(doc, schema);
  if (!isObject(s)) return undefined;
  if (typeof s.type === 'string') return s.type;
  for (const key of ['allOf', 'oneOf', 'anyOf']) {
    const list = s[key];
    if (Array.isArray(list)) {
      for (const sub of list) {
        const t = schemaType(doc, sub);
        if (t) return t;
      }
    }
  }
  return undefined;
};

const JSON_MEDIA = 'application/json';
const FORM = 'application/x-www-form-urlencoded';

/** Query and path values arrive as strings; coerce them to the declared primitive type. */
const coerce = (value: string, type: string | undefined): unknown => {
  if (type === 'integer') return /^-?\d+$/.test(value) ? Number(value) : value;
  if (type === 'number') return value.trim() !== '' && !Number.isNaN(Number(value)) ? Number(value) : value;
  if (type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  return value;
};

const formatErrors = (errors: readonly ErrorObject[] | null | undefined): string[] =>
  (errors ?? []).map((e) => {
    const at = e.instancePath === '' ? '' : `${e.instancePath} `;
    if (e.keyword === 'enum') return `${at}must be one of ${JSON.stringify(e.params.allowedValues)}`;
    if (e.keyword === 'required')
      return `${at}missing required property '${String(e.params.missingProperty)}'`;
    return `${at}${e.message ?? e.keyword}`;
  });

let validatorCount = 0;

export const createOpenApiValidator = (
  document: OpenApiDocument,
  options: OpenApiValidatorOptions,
): OpenApiValidator => {
  validatorCount += 1;
  const docId = `openapi-${options.name}-${validatorCount}`;
  const basePath = (options.basePath ?? '').replace(/\/$/, '');
  const allowed = options.operations ? new Set(options.operations) : undefined;

  let components = (document.components ?? {}) as JsonObject;
  if (options.patches && options.patches.length > 0) {
    components = structuredClone(components);
    for (const patch of options.patches) {
      if (!patch.pointer.startsWith('/components/')) throw new Error('patches may only touch /components');
      applyPatch({ components } as JsonObject, patch);
    }
  }
  // The lookup document for $ref resolution when reading parameter types and response objects.
  const lookup = { ...document, components };

  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, logger: false });
  const addFormats = (ajvFormats as unknown as { default: (a: Ajv) => void }).default;
  addFormats(ajv);
  // Vendor formats that are not JSON Schema formats: accept any string.
  for (const f of ['url', 'tzinfo', 'activesupport-time-zone', 'datetime', 'hex']) ajv.addFormat(f, true);
  ajv.addSchema({ $id: docId, components: normalize(components) } as JsonObject);

  const operations: Operation[] = [];
  for (const [pathTemplate, item] of Object.entries(document.paths)) {
    const shared = Array.isArray(item.parameters) ? (item.parameters as unknown[]) : [];
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op) || typeof op.operationId !== 'string') continue;
      if (allowed && !allowed.has(op.operationId)) continue;
      const paramNames: string[] = [];
      const source = pathTemplate
        .split('/')
        .map((seg) =>
          seg.replace(/\{([^}]+)\}|[^{}]+/g, (m, name?: string) => {
            if (name !== undefined) {
              paramNames.push(name);
              return '([^/]+)';
            }
            return m.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          }),
        )
        .join('/');
      const byKey = new Map<string, Parameter>();
      for (const p of [...shared, ...((op.parameters as unknown[]) ?? [])]) {
        const param = deref(lookup, p) as Parameter | undefined;
        if (param) byKey.set(`${param.in}:${param.name}`, param);
      }
      operations.push({
        operationId: op.operationId,
        method: method.toUpperCase(),
        pathTemplate,
        regex: new RegExp(`^${source}$`),
        paramNames,
        literalSegments: pathTemplate.split('/').filter((s) => s !== '' && !s.includes('{')).length,
        parameters: [...byKey.values()],
        requestBody: deref(lookup, op.requestBody) as Operation['requestBody'],
        responses: (op.responses as Record<string, unknown>) ?? {},
        security: (op.security as Operation['security']) ?? document.security,
      });
    }
  }
  // `/users/me` must win over `/users/{id}`: prefer more literal segments.
  operations.sort((a, b) => b.literalSegments - a.literalSegments);

  const compiled = new Map<string, ValidateFunction>();
  const compile = (key: string, schema: unknown): ValidateFunction => {
    let fn = compiled.get(key);
    if (!fn) {
      fn = ajv.compile(rewriteRefs(normalize(schema), docId) as JsonObject);
      compiled.set(key, fn);
    }
    return fn;
  };

  const match = (method: string, url: string): RouteMatch | undefined => {
    const pathname = new URL(url, 'http://sim.invalid').pathname;
    if (basePath !== '' && !pathname.startsWith(basePath)) return undefined;
    const rel = pathname.slice(basePath.length) || '/';
    for (const op of operations) {
      if (op.method !== method.toUpperCase()) continue;
      const m = op.regex.exec(rel);
      if (!m) continue;
      const pathParams: Record<string, string> = {};
      op.paramNames.forEach((n, i) => {
        pathParams[n] = decodeURIComponent(m[i + 1] ?? '');
      });
      return { operationId: op.operationId, method: op.method, pathTemplate: op.pathTemplate, pathParams };
    }
    return undefined;
  };

  const checkValue = (op: Operation, param: Parameter, value: unknown, issues: ValidationIssue[]) => {
    if (!param.schema) return;
    const fn = compile(`${op.operationId}:${param.in}:${param.name}`, param.schema);
    if (!fn(value)) {
      for (const message of formatErrors(fn.errors)) {
        issues.push({ where: param.in === 'cookie' ? 'header' : param.in, name: param.name, message });
      }
    }
  };

  /** A form-encoded body as an object, each field coerced to the type its property declares. */
  const formBody = (raw: string, schema: unknown): JsonObject => {
    const properties = isObject(schema) && isObject(schema.properties) ? schema.properties : {};
    const out: JsonObject = {};
    for (const [k, v] of new URLSearchParams(raw)) out[k] = coerce(v, schemaType(lookup, properties[k]));
    return out;
  };

  const validateRequest = (request: IncomingRequestLike): ValidatedRequest => {
    const route = match(request.method, request.url);
    const issues: ValidationIssue[] = [];
    const url = new URL(request.url, 'http://sim.invalid');
    let body: unknown;
    const raw = request.body === undefined ? '' : request.body.toString();
    const mediaType = (headerValue(request.headers, 'content-type') ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    const form = mediaType === FORM;
    // A form body is parsed once the operation is known, to coerce its fields to the declared types.
    if (raw.length > 0 && !form) {
      try {
        body = JSON.parse(raw);
      } catch {
        issues.push({ where: 'body', message: 'body is not valid JSON' });
      }
    }
    if (!route) {
      issues.push({
        where: 'route',
        message: `${request.method} ${url.pathname} is not an operation of the document`,
      });
      return { route, issues, query: {}, body };
    }
    const op = operations.find((o) => o.operationId === route.operationId)!;
    const query: Record<string, unknown> = {};

    for (const param of op.parameters) {
      const itemType = schemaType(lookup, param.schema);
      if (param.in === 'path') {
        const v = route.pathParams[param.name];
        if (v === undefined || v === '') issues.push({ where: 'path', name: param.name, message: 'missing' });
        else checkValue(op, param, coerce(v, itemType), issues);
      } else if (param.in === 'header') {
        const v = headerValue(request.headers, param.name);
        if (v === undefined) {
          if (param.required)
            issues.push({ where: 'header', name: param.name, message: 'required header missing' });
          continue;
        }
        // Media-type parameters (`; charset=utf-8`) are not part of the enumerated value.
        const value = param.name.toLowerCase() === 'content-type' ? (v.split(';')[0] ?? '').trim() : v;
        checkValue(op, param, coerce(value, itemType), issues);
      } else if (param.in === 'query') {
        const values = url.searchParams.getAll(param.name);
        if (values.length === 0) {
          if (param.required)
            issues.push({ where: 'query', name: param.name, message: 'required parameter missing' });
          continue;
        }
        if (itemType === 'array') {
          const resolved = deref(lookup, param.schema) as JsonObject;
          const inner = schemaType(lookup, resolved.items);
          const explode = param.explode ?? (param.style ?? 'form') === 'form';
          const list = explode ? values : (values[0] ?? '').split(',');
          if (!explode && values.length > 1) {
            issues.push({
              where: 'query',
              name: param.name,
              message: 'repeated, but declared explode: false',
            });
          }
          const coerced = list.map((v) => coerce(v, inner));
          query[param.name] = coerced;
          checkValue(op, param, coerced, issues);
        } else if (values.length > 1 && !param.name.endsWith('[]')) {
          issues.push({ where: 'query', name: param.name, message: 'given more than once' });
        } else {
          // `statuses[]`-style parameters are declared with a scalar schema and exploded: check each.
          const coerced = values.map((v) => coerce(v, itemType));
          query[param.name] = param.name.endsWith('[]') ? coerced : coerced[0];
          for (const v of coerced) checkValue(op, param, v, issues);
        }
      }
    }
    if (!options.allowUnknownQuery) {
      const declared = new Set(op.parameters.filter((p) => p.in === 'query').map((p) => p.name));
      for (const key of new Set(url.searchParams.keys())) {
        if (!declared.has(key))
          issues.push({ where: 'query', name: key, message: 'not a parameter of this operation' });
      }
    }

    if (!options.ignoreSecurity && op.security && op.security.length > 0) {
      const schemes = ((components.securitySchemes as JsonObject | undefined) ?? {}) as Record<
        string,
        JsonObject
      >;
      const satisfied = op.security.some((req) =>
        Object.keys(req).every((name) => {
          const scheme = schemes[name];
          if (!scheme) return true;
          if (scheme.type === 'apiKey' && scheme.in === 'header') {
            return headerValue(request.headers, String(scheme.name)) !== undefined;
          }
          if (scheme.type === 'http' || scheme.type === 'oauth2') {
            return headerValue(request.headers, 'authorization') !== undefined;
          }
          return true;
        }),
      );
      if (!satisfied) issues.push({ where: 'security', message: 'no credentials in the documented form' });
    }

    const rb = op.requestBody;
    if (rb) {
      const media = form ? FORM : JSON_MEDIA;
      const declared = Object.keys(rb.content ?? {});
      if (raw.length === 0) {
        // Vendor documents often omit `requestBody.required` although the schema needs properties.
        const schema = deref(lookup, rb.content?.[media]?.schema) as JsonObject | undefined;
        const needsProperties = Array.isArray(schema?.required) && schema.required.length > 0;
        if (rb.required || needsProperties) issues.push({ where: 'body', message: 'request body required' });
      } else if (mediaType !== '' && declared.length > 0 && !declared.includes(media)) {
        issues.push({
          where: 'header',
          name: 'Content-Type',
          message: `${mediaType} is not a media type of this operation (${declared.join(', ')})`,
        });
      } else {
        const schema = rb.content?.[media]?.schema;
        if (form) body = formBody(raw, deref(lookup, schema));
        if (schema && body !== undefined) {
          const fn = compile(form ? `${op.operationId}:body:form` : `${op.operationId}:body`, schema);
          if (!fn(body))
            for (const message of formatErrors(fn.errors)) issues.push({ where: 'body', message });
        }
      }
    } else if (raw.length > 0 && ['GET', 'DELETE', 'HEAD'].includes(op.method)) {
      issues.push({ where: 'body', message: `${op.method} takes no body` });
    }
    return { route, issues, query, body };
  };

  const validateResponse = (
    operationId: string,
    status: number,
    body: unknown,
  ): readonly ValidationIssue[] => {
    const op = operations.find((o) => o.operationId === operationId);
    if (!op) return [{ where: 'response', message: `unknown operation ${operationId}` }];
    const key = String(status);
    const declared = op.responses[key] ?? op.responses[`${key[0]}XX`] ?? op.responses.default;
    if (declared === undefined) {
      return [{ where: 'response', message: `status ${status} is not documented for ${operationId}` }];
    }
    const response = deref(lookup, declared) as JsonObject | undefined;
    const schema = (response?.content as Record<string, { schema?: unknown }> | undefined)?.[
      'application/json'
    ]?.schema;
    if (!schema) return [];
    const fn = compile(`${operationId}:response:${key}`, schema);
    if (fn(stripNulls(body))) return [];
    return formatErrors(fn.errors).map((message) => ({ where: 'response' as const, message }));
  };

  return { match, validateRequest, validateResponse };
};
