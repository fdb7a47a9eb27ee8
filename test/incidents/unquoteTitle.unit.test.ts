import { describe, expect, it } from 'vitest';
import { unquoteTitle } from '../../src/incidents/enrich.ts';

describe('unquoteTitle', () => {
  it('drops one pair of wrapping quotes, straight or curly', () => {
    expect(unquoteTitle('"Database on fire"')).toBe('Database on fire');
    expect(unquoteTitle('“Database on fire”')).toBe('Database on fire');
    expect(unquoteTitle("  'Disk 95%'  ")).toBe('Disk 95%');
  });
  it('keeps quotes that are part of the title, and titles that are only quotes', () => {
    expect(unquoteTitle('Login says "invalid token"')).toBe('Login says "invalid token"');
    expect(unquoteTitle('Database on fire')).toBe('Database on fire');
    expect(unquoteTitle('""')).toBe('""');
    expect(unquoteTitle('"Login" fails for "bob"')).toBe('"Login" fails for "bob"');
    expect(unquoteTitle("'Bob's disk'")).toBe("'Bob's disk'");
  });
});
