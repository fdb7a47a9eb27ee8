import { describe, expect, it } from 'vitest';
import { incidentDecider } from '../../../machines/incident/decider.ts';
import { incidentStreamId } from '../../../machines/incident/streams.ts';
import { INCIDENT_ACTION } from '../../../src/incidents/blocks/incidentIds.ts';
import { incidentList, MAX_LIST_ROWS } from '../../../src/incidents/blocks/incidentList.ts';
import { type IncidentView, toIncidentView } from '../../../src/incidents/blocks/incidentView.ts';
import { ACKED, OPEN } from '../../machines/incident/fixtures.ts';
import { expectWithinSlackLimits, interactiveElements, visibleText } from '../../slack/blocks/blockKit.ts';

const view = (events: typeof OPEN, streamId: string): IncidentView =>
  toIncidentView(streamId, events.reduce(incidentDecider.evolve, incidentDecider.initialState()));

describe('incident list', () => {
  it('one row per incident with status, who acked, and a Show button carrying the stream id', () => {
    const rows = [view(OPEN, incidentStreamId('PINC042')), view(ACKED, incidentStreamId('PINC043'))];
    const { text, blocks } = incidentList(rows);
    expect(text).toBe('Open incidents: 2');
    const shows = interactiveElements(blocks).filter((e) => e.action_id === INCIDENT_ACTION.show);
    expect(shows.map((e) => e.value)).toEqual(['incident-PINC042', 'incident-PINC043']);
    const all = visibleText(blocks);
    expect(all).toContain(
      ':red_circle: Triggered · :rotating_light: high · Payments DB · assigned <@UANA01> · since <!date^1795312830^{date_short_pretty} at {time}|Nov 22, 02:00 UTC>',
    );
    expect(all).toContain('acked by <@UANA01>');
  });

  it('caps the rows and says how many more there are', () => {
    const many = Array.from({ length: 120 }, (_, i) => view(OPEN, incidentStreamId(`P${i}`)));
    const { blocks } = incidentList(many, { total: 130 });
    expectWithinSlackLimits(blocks);
    expect(interactiveElements(blocks)).toHaveLength(MAX_LIST_ROWS);
    expect(visibleText(blocks)).toContain(`Showing ${MAX_LIST_ROWS} of 130`);
  });

  it('says when nothing is open', () => {
    const { text, blocks } = incidentList([]);
    expect(text).toBe('Open incidents: none');
    expect(interactiveElements(blocks)).toEqual([]);
  });
});
