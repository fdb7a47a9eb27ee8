import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSwitchboard } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { ALL_LIFECYCLES } from '../../src/lifecycleList.ts';
import { TEST_DATA_KEYS } from '../support/dataKeys.ts';
import { createLogSink } from '../support/logSink.ts';
import { tempDir } from '../support/startApp.ts';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe('Socket Mode', () => {
  it('takes Slack over the socket: the HTTP port serves ops endpoints but no /slack/events', async () => {
    const config = loadConfig(
      {
        SLACK_BOT_TOKEN: 'xoxb-socket-test',
        SLACK_APP_TOKEN: 'xapp-1-socket-test',
        SWITCHBOARD_DATA_KEYS: TEST_DATA_KEYS,
        EVENT_STORE_URL: `sqlite:${join(tmp.dir, 'socket.db')}`,
        PORT: '0',
      },
      ALL_LIFECYCLES,
    );
    const sb = await createSwitchboard({ config, logger: createLogSink().logger(), host: '127.0.0.1' });
    // Only the HTTP side: start() would also open the WebSocket to Slack.
    const port = await sb.http.listen(0, '127.0.0.1');
    try {
      expect(
        (await fetch(`http://127.0.0.1:${port}/slack/events`, { method: 'POST', body: '{}' })).status,
      ).toBe(404);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      await sb.stop();
    }
    expect(sb.store.isOpen()).toBe(false);
  });
});
