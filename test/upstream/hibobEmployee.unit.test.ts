import { describe, expect, it } from 'vitest';
import { employeeField, parseEmployee } from '../../src/upstream/hibob.ts';

/**
 * Reading one employee of a people-search answer: slash notation, nested category objects, the
 * default set's top-level root fields, `work.reportsTo` as a string id or an employee reference,
 * list fields with display values; hostile shapes never throw.
 */
describe('parseEmployee', () => {
  it('reads slash notation first, then nested objects, then top-level root fields', () => {
    const raw = {
      '/root/id': '41',
      '/work/title': 'SRE',
      work: { title: 'ignored: slash notation wins', site: 'Lisbon', reportsTo: '77' },
      email: 'ana@example.org',
    };
    expect(employeeField(raw, 'work.title')).toBe('SRE');
    expect(parseEmployee(raw)).toMatchObject({
      id: '41',
      title: 'SRE',
      site: 'Lisbon',
      managerId: '77',
      email: 'ana@example.org',
    });
  });

  it('takes work.reportsTo as an employee reference object, and a numeric id', () => {
    expect(
      parseEmployee({ id: 41, work: { reportsTo: { id: '77', email: 'lead@example.org' } } })?.managerId,
    ).toBe('77');
    expect(parseEmployee({ '/root/id': '41', '/work/reportsTo': 77 })?.managerId).toBe('77');
    expect(parseEmployee({ '/root/id': '41', '/work/reportsTo': null })?.managerId).toBeUndefined();
  });

  it('takes the display text of a list field given as an object', () => {
    expect(
      parseEmployee({ '/root/id': '41', '/work/department': { value: '1234', name: 'Engineering' } }),
    ).toMatchObject({ department: 'Engineering' });
  });

  it('drops an employee without a usable id, and never throws on hostile shapes', () => {
    expect(parseEmployee({})).toBeUndefined();
    expect(parseEmployee({ '/root/id': '../../admin' })).toBeUndefined();
    expect(parseEmployee({ '/root/id': { id: '41' } })).toBeUndefined();
    expect(
      parseEmployee({ '/root/id': '41', work: 'not an object', '/work/reportsTo': { email: 'x' } }),
    ).toEqual({
      id: '41',
    });
  });
});
