/**
 * The OpenAPI document is read by the API's users, who have none of the project's spec files: no text in
 * it may send them to one ("(seed 2.1)", "product.md"). Every string of the document is checked, so a
 * summary, a description or an example written later is held to the same rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

/** A section of the seed spec ("seed 2.1") or any Markdown file ("product.md", "docs/errors.md"). */
const SPEC_REFERENCE = /\bseeds?\b|\.md\b/i;

/** Every string in `value` with its JSON path, e.g. ["paths./x.post.summary", "Place a bid"]. */
function stringsOf(value: unknown, path = ''): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) => stringsOf(child, path === '' ? key : `${path}.${key}`));
}

describe('OpenAPI document text', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('cites no spec file that its readers do not have', async () => {
    const res = await server.call('GET', '/openapi.json');
    expect(res.status).toBe(200);
    const citing = stringsOf(res.body).filter(([, text]) => SPEC_REFERENCE.test(text));
    expect(citing).toEqual([]);
  });
});
