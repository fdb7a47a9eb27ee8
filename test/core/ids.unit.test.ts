import { describe, expect, it } from 'vitest';
import { isUuid, uuidv5 } from '../../src/core/ids.ts';

describe('uuidv5', () => {
  it('matches the RFC 9562 example (www.example.com in the DNS namespace)', () => {
    expect(uuidv5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
  });
  it('is stable for a name and differs between names', () => {
    expect(uuidv5('slack:trigger:1')).toBe(uuidv5('slack:trigger:1'));
    expect(uuidv5('slack:trigger:1')).not.toBe(uuidv5('slack:trigger:2'));
    expect(isUuid(uuidv5('x'))).toBe(true);
  });
});
