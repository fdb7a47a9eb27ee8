import { describe, expect, it } from 'vitest';
import {
  createOpenApiValidator,
  loadOpenApiDocument,
  type OpenApiDocument,
} from '../../sandbox/simulators/openapi.ts';
import { PAGERDUTY_SPEC_PATCHES } from '../../sandbox/simulators/pagerduty/index.ts';

const SPECS = new URL('../../sandbox/simulators/pagerduty/specs/', import.meta.url);
const rest = () => loadOpenApiDocument(new URL('rest-openapiv3.json', SPECS));
const headers = {
  accept: 'application/vnd.pagerduty+json;version=2',
  'content-type': 'application/json; charset=utf-8',
  authorization: 'Token token=x',
  from: 'ana@example.org',
};
const json = (v: unknown) => Buffer.from(JSON.stringify(v));

describe('loadOpenApiDocument', () => {
  it('parses a document once and hands back the same object', () => {
    expect(rest()).toBe(rest());
    expect(rest().openapi).toMatch(/^3\./);
  });
});

describe('createOpenApiValidator over the PagerDuty REST document', () => {
  const v = createOpenApiValidator(rest(), { name: 'test-rest', patches: PAGERDUTY_SPEC_PATCHES });

  it('accepts a well-formed list request and coerces its query', () => {
    const r = v.validateRequest({
      method: 'GET',
      url: '/incidents?statuses[]=triggered&statuses[]=acknowledged&limit=10&total=true&sort_by=created_at:desc,incident_number',
      headers,
    });
    expect(r.route?.operationId).toBe('listIncidents');
    expect(r.issues).toEqual([]);
    expect(r.query).toMatchObject({
      limit: 10,
      total: true,
      'statuses[]': ['triggered', 'acknowledged'],
      sort_by: ['created_at:desc', 'incident_number'],
    });
  });

  it('reports bad enums, wrong types, unknown parameters, missing headers and credentials', () => {
    const r = v.validateRequest({
      method: 'GET',
      url: '/incidents?statuses[]=open&limit=ten&statuses=triggered',
      headers: {},
    });
    const found = r.issues.map((i) => `${i.where}:${i.name ?? ''}`);
    expect(found).toEqual(
      expect.arrayContaining([
        'query:statuses[]',
        'query:limit',
        'query:statuses',
        'header:Accept',
        'header:Content-Type',
        'security:',
      ]),
    );
  });

  it('validates bodies, header formats and path parameters of writes', () => {
    const ok = v.validateRequest({
      method: 'PUT',
      url: '/incidents/Q1',
      headers,
      body: json({ incident: { type: 'incident_reference', status: 'acknowledged' } }),
    });
    expect(ok.route).toMatchObject({ operationId: 'updateIncident', pathParams: { id: 'Q1' } });
    expect(ok.issues).toEqual([]);

    const bad = v.validateRequest({
      method: 'PUT',
      url: '/incidents/Q1',
      headers: { ...headers, from: 'not-an-email' },
      body: json({ incident: { status: 'closed' } }),
    });
    expect(bad.issues.map((i) => i.message)).toEqual(
      expect.arrayContaining([
        'must match format "email"',
        "/incident missing required property 'type'",
        '/incident/status must be one of ["resolved","acknowledged","triggered"]',
      ]),
    );
    const noFrom = v.validateRequest({
      method: 'POST',
      url: '/incidents/Q1/notes',
      headers: { ...headers, from: undefined },
      body: json({ note: { content: 'x' } }),
    });
    expect(noFrom.issues).toEqual([{ where: 'header', name: 'From', message: 'required header missing' }]);
  });

  it('reports a missing or unparsable body and a body on a GET', () => {
    expect(v.validateRequest({ method: 'POST', url: '/incidents', headers }).issues).toEqual([
      { where: 'body', message: 'request body required' },
    ]);
    expect(
      v.validateRequest({ method: 'POST', url: '/incidents', headers, body: '{"incident":' }).issues,
    ).toContainEqual({
      where: 'body',
      message: 'body is not valid JSON',
    });
    expect(v.validateRequest({ method: 'GET', url: '/services', headers, body: '{}' }).issues).toContainEqual(
      {
        where: 'body',
        message: 'GET takes no body',
      },
    );
  });

  it('prefers literal paths over templates and reports unknown routes', () => {
    expect(v.match('GET', '/users/me')?.operationId).toBe('getCurrentUser');
    expect(v.match('GET', '/users/PUSR001')).toMatchObject({
      operationId: 'getUser',
      pathParams: { id: 'PUSR001' },
    });
    const r = v.validateRequest({ method: 'GET', url: '/incidentz', headers });
    expect(r.route).toBeUndefined();
    expect(r.issues[0]?.where).toBe('route');
    expect(v.match('PATCH', '/incidents/Q1')).toBeUndefined();
  });

  it('applies documented patches: a string incident body only validates with the patch', () => {
    const body = json({
      incident: {
        type: 'incident',
        title: 't',
        service: { id: 'P1', type: 'service_reference' },
        body: { type: 'incident_body', details: 'text' },
      },
    });
    expect(v.validateRequest({ method: 'POST', url: '/incidents', headers, body }).issues).toEqual([]);
    const unpatched = createOpenApiValidator(rest(), {
      name: 'test-unpatched',
      operations: ['createIncident'],
    });
    expect(unpatched.validateRequest({ method: 'POST', url: '/incidents', headers, body }).issues).toEqual([
      { where: 'body', message: '/incident/body/details must be object' },
    ]);
    // The shared parsed document is not modified by patching.
    const schemas = (
      rest().components as { schemas: Record<string, { properties: Record<string, unknown> }> }
    ).schemas;
    expect(schemas.IncidentBody?.properties.details).toMatchObject({ type: 'object' });
  });

  it('routes only the listed operations when given a subset', () => {
    const only = createOpenApiValidator(rest(), { name: 'test-subset', operations: ['getIncident'] });
    expect(only.match('GET', '/incidents/Q1')?.operationId).toBe('getIncident');
    expect(only.match('GET', '/incidents')).toBeUndefined();
  });

  it('checks response bodies, treating nulls as absent', () => {
    const incident = {
      id: 'Q1',
      type: 'incident',
      incident_number: 1,
      title: 't',
      status: 'triggered',
      created_at: '2026-11-22T10:00:00Z',
      resolved_at: null,
      priority: null,
      service: { id: 'P1', type: 'service_reference' },
    };
    expect(v.validateResponse('getIncident', 200, { incident })).toEqual([]);
    expect(v.validateResponse('getIncident', 200, { incident: { ...incident, status: 'open' } })).toEqual([
      {
        where: 'response',
        message: '/incident/status must be one of ["triggered","acknowledged","resolved"]',
      },
    ]);
    expect(v.validateResponse('getIncident', 200, {})).toEqual([
      { where: 'response', message: "missing required property 'incident'" },
    ]);
    expect(v.validateResponse('getIncident', 418, {})[0]?.message).toContain('not documented');
  });
});

describe('createOpenApiValidator over the Events API document', () => {
  const doc: OpenApiDocument = loadOpenApiDocument(new URL('events-v2-openapiv3.json', SPECS));
  const v = createOpenApiValidator(doc, { name: 'test-events', basePath: '/v2', ignoreSecurity: true });

  it('serves paths under the base path', () => {
    expect(v.match('POST', '/v2/enqueue')?.operationId).toBe('createV2Event');
    expect(v.match('POST', '/v2/change/enqueue')?.operationId).toBe('createChangeEvent');
    expect(v.match('POST', '/enqueue')).toBeUndefined();
  });

  it('requires the trigger payload fields', () => {
    const r = v.validateRequest({
      method: 'POST',
      url: '/v2/enqueue',
      headers: { 'content-type': 'application/json' },
      body: json({ routing_key: 'k', event_action: 'trigger', payload: { summary: 's' } }),
    });
    expect(r.issues.map((i) => i.message).sort()).toEqual([
      "/payload missing required property 'severity'",
      "/payload missing required property 'source'",
    ]);
  });
});
