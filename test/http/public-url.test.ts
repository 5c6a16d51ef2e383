/**
 * PUBLIC_URL: behind TLS or a proxy the server cannot see the URL its clients use, so the operator names
 * it, and the login answer's live order socket is that URL; without it, the login request's own protocol
 * and Host. A bad value stops the server at start-up with one clear line.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startTestServer, TEST_PASSWORD, type TestServer } from '../support/server.js';

describe('PUBLIC_URL', () => {
  const servers: TestServer[] = [];
  afterAll(() => Promise.all(servers.map((server) => server.close())));

  async function messageSocketOf(publicUrl?: string): Promise<{ messageSocket: string; url: string }> {
    const server = await startTestServer(publicUrl === undefined ? {} : { publicUrl });
    servers.push(server);
    await server.createUser('pat');
    const login = await server.call('POST', '/authentication/v1/user/session', {
      body: { user_id: 'pat', login_type: 'PASSWORD', password: TEST_PASSWORD, source: 'WEBAPI' },
    });
    expect(login.status, login.text).toBe(200);
    return { messageSocket: login.body.data.others.messageSocket, url: server.url };
  }

  it("names the live order socket at the operator's URL when set, and at the request's own otherwise", async () => {
    expect((await messageSocketOf('https://api.example.com')).messageSocket).toBe('https://api.example.com');
    const direct = await messageSocketOf();
    expect(direct.messageSocket).toBe(direct.url);
  });

  it('is read as an origin; anything else is refused with the setting named', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://api.example.com:8443/' }).publicUrl).toBe('https://api.example.com:8443');
    expect(loadConfig({}).publicUrl).toBeNull();
    for (const bad of [
      'api.example.com',
      'ftp://api.example.com',
      'https://api.example.com/ordergate',
      'https://api.example.com/?x=1',
    ]) {
      expect(() => loadConfig({ PUBLIC_URL: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ PUBLIC_URL: bad }), bad).toThrow(/PUBLIC_URL/);
    }
  });
});
