import { describe, expect, it } from 'vitest';
import {
  createOpenApiValidator,
  loadOpenApiDocument,
  type OpenApiValidator,
  serverBasePath,
} from '../../sandbox/simulators/openapi.ts';

/**
 * The vendored comms documents (YAML) load through the same loader the PagerDuty simulator uses,
 * and the validator matches and checks real requests against them: the calls the verification
 * lifecycle will make (start a verification, check a code, send an SMS through Messages or the SMS
 * API, place a voice call), each at the path the vendor serves it under.
 */

const SPECS = new URL('../../sandbox/simulators/vonage/specs/', import.meta.url);
const load = (file: string) => loadOpenApiDocument(new URL(file, SPECS));
const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const BASIC = { authorization: `Basic ${Buffer.from('abcd1234:secret').toString('base64')}` };
const BEARER = { authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln' };
const JSON_BODY = { 'content-type': 'application/json' };
const FORM_BODY = { 'content-type': 'application/x-www-form-urlencoded' };

const validator = (file: string, name: string): OpenApiValidator => {
  const doc = load(file);
  return createOpenApiValidator(doc, { name, basePath: serverBasePath(doc) });
};

describe('the vendored comms documents', () => {
  it.each([
    ['vonage-verify-v2-openapi.yml', '3.0.2', 'https://api.nexmo.com/v2/verify', '/v2/verify'],
    ['vonage-messages-openapi.yml', '3.0.3', 'https://{api-region}.nexmo.com/v1', '/v1'],
    ['vonage-voice-openapi.yml', '3.0.0', 'https://api.nexmo.com/v1/calls', '/v1/calls'],
    ['vonage-sms-openapi.yml', '3.0.0', 'https://rest.nexmo.com', ''],
  ])('%s loads as OpenAPI %s, served under %s', (file, version, server, basePath) => {
    const doc = load(file);
    expect(doc.openapi).toBe(version);
    expect(doc.servers?.[0]?.url).toBe(server);
    expect(serverBasePath(doc)).toBe(basePath);
    expect(Object.keys(doc.paths).length).toBeGreaterThan(0);
    expect(load(file)).toBe(doc);
  });
});

describe('Verify v2', () => {
  const v = validator('vonage-verify-v2-openapi.yml', 'test-verify');

  it('matches POST /v2/verify (start a verification) and accepts a well-formed SMS workflow', () => {
    const r = v.validateRequest({
      method: 'POST',
      url: '/v2/verify',
      headers: { ...BASIC, ...JSON_BODY },
      body: json({ brand: 'Switchboard', workflow: [{ channel: 'sms', to: '447700900000' }] }),
    });
    expect(r.route?.operationId).toBe('newRequest');
    expect(r.issues).toEqual([]);
  });

  it('matches POST /v2/verify/{request_id} (check a code) with its path parameter', () => {
    const requestId = 'c11236f4-00bf-4b89-84ba-88b25df97315';
    const r = v.validateRequest({
      method: 'POST',
      url: `/v2/verify/${requestId}`,
      headers: { ...BEARER, ...JSON_BODY },
      body: json({ code: '1234' }),
    });
    expect(r.route).toMatchObject({ operationId: 'checkCode', pathParams: { request_id: requestId } });
    expect(r.issues).toEqual([]);
  });

  it('reports a start request that breaks the document: an unknown channel, no credentials', () => {
    const r = v.validateRequest({
      method: 'POST',
      url: '/v2/verify',
      headers: JSON_BODY,
      body: json({ brand: 'Switchboard', workflow: [{ channel: 'carrier-pigeon', to: '447700900000' }] }),
    });
    expect(r.route?.operationId).toBe('newRequest');
    expect(r.issues).toContainEqual({ where: 'security', message: 'no credentials in the documented form' });
    expect(r.issues).toContainEqual({ where: 'body', message: '/workflow/0/channel must be one of ["sms"]' });
  });
});

describe('Messages', () => {
  const v = validator('vonage-messages-openapi.yml', 'test-messages');

  it('matches POST /v1/messages and accepts an SMS', () => {
    const r = v.validateRequest({
      method: 'POST',
      url: '/v1/messages',
      headers: { ...BEARER, ...JSON_BODY },
      body: json({
        message_type: 'text',
        channel: 'sms',
        to: '447700900000',
        from: 'Switchboard',
        text: 'Your Switchboard code is 1234',
      }),
    });
    expect(r.route?.operationId).toBe('SendMessage');
    expect(r.issues).toEqual([]);
  });

  it('does not match a path outside the server prefix', () => {
    expect(v.match('POST', '/messages')).toBeUndefined();
    expect(v.match('POST', '/v2/messages')).toBeUndefined();
  });
});

describe('Voice', () => {
  const v = validator('vonage-voice-openapi.yml', 'test-voice');

  it('matches POST /v1/calls (place a call) and accepts a call that reads a message out', () => {
    const r = v.validateRequest({
      method: 'POST',
      url: '/v1/calls',
      headers: { ...BEARER, ...JSON_BODY },
      body: json({
        to: [{ type: 'phone', number: '447700900000' }],
        from: { type: 'phone', number: '447700900001' },
        ncco: [{ action: 'talk', text: 'Incident 42 needs you' }],
      }),
    });
    expect(r.route?.operationId).toBe('createCall');
    expect(r.issues).toEqual([]);
  });

  it('matches GET /v1/calls/{uuid} to getCall, not to the collection', () => {
    expect(v.match('GET', '/v1/calls/63f61863-4a51-4f6b-86e1-46edebcf9356')).toMatchObject({
      operationId: 'getCall',
      pathParams: { uuid: '63f61863-4a51-4f6b-86e1-46edebcf9356' },
    });
    expect(v.match('GET', '/v1/calls')?.operationId).toBe('getCalls');
  });
});

describe('SMS (form-encoded bodies)', () => {
  const v = validator('vonage-sms-openapi.yml', 'test-sms');
  const form = (fields: Record<string, string>) => Buffer.from(new URLSearchParams(fields).toString());

  it('matches POST /sms/json and checks the form fields against the schema, typed', () => {
    const r = v.validateRequest({
      method: 'POST',
      url: '/sms/json',
      headers: { ...BASIC, ...FORM_BODY },
      body: form({ from: 'Switchboard', to: '447700900000', text: 'Your code is 1234', ttl: '60000' }),
    });
    expect(r.route).toMatchObject({ operationId: 'send-an-sms', pathParams: { format: 'json' } });
    expect(r.issues).toEqual([]);
    expect(r.body).toEqual({
      from: 'Switchboard',
      to: '447700900000',
      text: 'Your code is 1234',
      ttl: 60000,
    });
  });

  it('reports a missing field, a bad path parameter, and a JSON body the operation does not take', () => {
    const missing = v.validateRequest({
      method: 'POST',
      url: '/sms/json',
      headers: { ...BASIC, ...FORM_BODY },
      body: form({ from: 'Switchboard', text: 'no recipient' }),
    });
    expect(missing.issues.map((i) => i.message)).toContain("missing required property 'to'");

    const badFormat = v.validateRequest({
      method: 'POST',
      url: '/sms/yaml',
      headers: { ...BASIC, ...FORM_BODY },
      body: form({ from: 'Switchboard', to: '447700900000', text: 'x' }),
    });
    expect(badFormat.issues).toEqual([expect.objectContaining({ where: 'path', name: 'format' })]);

    const asJson = v.validateRequest({
      method: 'POST',
      url: '/sms/json',
      headers: { ...BASIC, ...JSON_BODY },
      body: json({ from: 'Switchboard', to: '447700900000', text: 'x' }),
    });
    expect(asJson.issues).toEqual([
      {
        where: 'header',
        name: 'Content-Type',
        message: 'application/json is not a media type of this operation (application/x-www-form-urlencoded)',
      },
    ]);
  });
});
