import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorCatalogMarkdown, openApiJson } from '../src/docs/reference.js';
import { Errors } from '../src/domain/errors.js';

describe('generated reference docs', () => {
  it('docs/errors.md is the current catalog (run `npm run docs` after changing it)', () => {
    expect(readFileSync('docs/errors.md', 'utf8')).toBe(errorCatalogMarkdown());
  });

  it('docs/openapi.json is the document the server serves (run `npm run docs` after changing a route)', async () => {
    expect(readFileSync('docs/openapi.json', 'utf8')).toBe(await openApiJson());
  });

  it('every catalog code is unique and has a 4xx or 5xx status', () => {
    const codes = Object.values(Errors).map((k) => k.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const kind of Object.values(Errors)) expect(kind.status).toBeGreaterThanOrEqual(400);
  });
});
