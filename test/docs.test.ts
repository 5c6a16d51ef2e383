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

describe("the console's screenshots (issue 25)", () => {
  it('docs/console/ holds every view, desktop and phone, as `npm run screenshots` writes them, and docs/console.md links each', async () => {
    const { CONSOLE_VIEWS, SIZES } = await import('../scripts/console-screenshots.js');
    const page = readFileSync('docs/console.md', 'utf8');
    for (const file of ['login', ...CONSOLE_VIEWS.map((view) => view.file)]) {
      for (const size of SIZES) {
        const name = `${file}-${size.name}.png`;
        // A PNG's signature and its IHDR width, the viewport's.
        const png = readFileSync(`docs/console/${name}`);
        expect(png.subarray(1, 4).toString('latin1'), name).toBe('PNG');
        expect(png.readUInt32BE(16), name).toBe(size.viewport.width);
        expect(page, name).toContain(`(console/${name})`);
      }
    }
    expect(readFileSync('README.md', 'utf8')).toContain('docs/console.md#screenshots');
  });
});
