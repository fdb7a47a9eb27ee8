import { describe, expect, it } from 'vitest';
import { createServiceDirectory } from '../../src/incidents/services.ts';

const SERVICES = [
  { id: 'PSVC001', name: 'Payments API', escalationPolicyId: 'PEP1' },
  { id: 'PSVC002', name: 'Payments DB', escalationPolicyId: 'PEP1' },
  { id: 'PSVC003', name: 'Platform Gateway', escalationPolicyId: 'PEP2' },
];

const directory = () => {
  let fetches = 0;
  const d = createServiceDirectory({
    now: () => 0,
    listServices: async () => {
      fetches += 1;
      return SERVICES;
    },
  });
  return { d, fetches: () => fetches };
};

describe('service directory', () => {
  it('resolves ids, exact names and unique prefixes, case-insensitively', async () => {
    const { d, fetches } = directory();
    expect((await d.resolve('psvc003')).name).toBe('Platform Gateway');
    expect((await d.resolve('payments db')).id).toBe('PSVC002');
    expect((await d.resolve('plat')).id).toBe('PSVC003');
    await expect(d.resolve('payments')).rejects.toMatchObject({ code: 'SB_NOT_FOUND' });
    await expect(d.resolve('billing')).rejects.toThrow(/No service matches “billing”.*Payments API/);
    expect(fetches()).toBe(1);
  });

  it('splits "<service> <title>" on the longest service name', async () => {
    const { d } = directory();
    expect(await d.split('Payments API  card auth failing')).toEqual({
      service: SERVICES[0],
      rest: 'card auth failing',
    });
    expect(await d.split('PSVC002 replication lag')).toEqual({
      service: SERVICES[1],
      rest: 'replication lag',
    });
    expect(await d.split('platform edge down')).toEqual({ service: SERVICES[2], rest: 'edge down' });
    await expect(d.split('billing is down')).rejects.toMatchObject({ code: 'SB_NOT_FOUND' });
  });

  it('answers cached() without waiting', async () => {
    const { d } = directory();
    expect(d.cached()).toBeUndefined();
    await d.all();
    expect(d.cached()?.map((s) => s.id)).toEqual(['PSVC001', 'PSVC002', 'PSVC003']);
  });
});
