/**
 * The settings schema (src/config.ts) as a whole: every leaf names its own environment variable, its default
 * is what an unset variable gives, and every refusal is one line that starts with the variable's name.
 * The single settings' rules are tested beside the feature each one governs (test/http, test/oms).
 */
import fc from 'fast-check';
import Type, { type TSchema } from 'typebox';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { PasswordHashCost } from '../src/auth/credentials.js';
import { ConfigError, ConfigSchema, loadConfig, type Config } from '../src/config.js';

interface Leaf {
  env: string;
  path: string[];
  schema: TSchema & { default?: string | number | boolean | null; minimum?: number; maximum?: number };
}

function leavesOf(schema: TSchema, path: string[] = []): Leaf[] {
  const env = (schema as Record<string, unknown>)['x-env'];
  if (typeof env === 'string') return [{ env, path, schema }];
  return Object.entries((schema as { properties: Record<string, TSchema> }).properties).flatMap(([key, member]) =>
    leavesOf(member, [...path, key]),
  );
}

const leaves = leavesOf(ConfigSchema);
const at = (config: Config, path: string[]): unknown =>
  path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], config);
const wholeNumbers = leaves.filter((leaf) => Type.IsInteger(leaf.schema));
const flags = leaves.filter((leaf) => Type.IsBoolean(leaf.schema));

function refusalOf(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`${JSON.stringify(env)} was accepted`);
}

describe('the settings schema', () => {
  it('names a distinct environment variable for each setting', () => {
    expect(leaves.length).toBeGreaterThan(30);
    expect(new Set(leaves.map((leaf) => leaf.env)).size).toBe(leaves.length);
    for (const leaf of leaves) expect(leaf.env, leaf.path.join('.')).toMatch(/^[A-Z][A-Z0-9_]+$/);
  });

  it('gives each setting its default when its variable is unset or empty', () => {
    const unset = loadConfig({});
    const empty = loadConfig(Object.fromEntries(leaves.map((leaf) => [leaf.env, ''])));
    expect(empty).toEqual(unset);
    for (const leaf of leaves) expect(at(unset, leaf.path), leaf.env).toEqual(leaf.schema.default);
  });

  it('reads a default written out as that default', () => {
    for (const leaf of leaves) {
      const fallback = leaf.schema.default;
      if (fallback === null) continue;
      // METRICS_HOST set needs METRICS_PORT set.
      expect(at(loadConfig({ METRICS_PORT: '9464', [leaf.env]: String(fallback) }), leaf.path), leaf.env).toEqual(
        fallback,
      );
    }
  });

  it('reads any whole number in range, and refuses other text naming the variable', () => {
    for (const leaf of wholeNumbers) {
      const { minimum = 0, maximum = Number.MAX_SAFE_INTEGER } = leaf.schema;
      fc.assert(
        fc.property(fc.integer({ min: minimum, max: maximum }), (value) => {
          expect(at(loadConfig({ [leaf.env]: String(value) }), leaf.path)).toBe(value);
        }),
        { numRuns: 20 },
      );
      fc.assert(
        fc.property(
          fc.string({ minLength: 1 }).filter((text) => !/^\d+$/.test(text)),
          (text) => {
            expect(refusalOf({ [leaf.env]: text })).toBe(`${leaf.env} must be a whole number, got "${text}"`);
          },
        ),
        { numRuns: 20 },
      );
      expect(refusalOf({ [leaf.env]: String(maximum + 1) })).toBe(
        `${leaf.env} must be between ${minimum} and ${maximum}, got ${maximum + 1}`,
      );
    }
  });

  it('reads flags spelled true or false, and refuses anything else naming the variable', () => {
    expect(flags.length).toBeGreaterThan(3);
    for (const leaf of flags) {
      expect(at(loadConfig({ [leaf.env]: 'true' }), leaf.path)).toBe(true);
      expect(at(loadConfig({ [leaf.env]: 'false' }), leaf.path)).toBe(false);
      for (const text of ['TRUE', '1', 'yes', ' true'])
        expect(refusalOf({ [leaf.env]: text })).toBe(`${leaf.env} must be true or false, got "${text}"`);
    }
  });

  it('refuses a faulty value of any setting with one line that starts with its variable', () => {
    for (const leaf of leaves) {
      if (leaf.env === 'HOST' || leaf.env === 'DATABASE_URL') continue; // any text is taken as it is
      const message = refusalOf({ METRICS_PORT: '9464', [leaf.env]: 'not a value\u0001' });
      expect(message.startsWith(`${leaf.env} `), message).toBe(true);
      expect(message).not.toContain('\n');
    }
  });

  it("refuses BSE's iBBS settings unless all four come together, naming those unset", () => {
    const nse = {
      EXCHANGE_LINK: 'nse',
      EXCHANGE_NSE_URL: 'https://eofsuat.example/api',
      EXCHANGE_NSE_MEMBER_CODE: 'M1',
      EXCHANGE_NSE_LOGIN_ID: 'api',
      EXCHANGE_NSE_PASSWORD: 'secret',
    };
    expect(refusalOf({ ...nse, EXCHANGE_BSE_MEMBER_CODE: 'B123', EXCHANGE_BSE_OUTBOX: '/srv/out' })).toMatch(
      /needs all of .*; unset: EXCHANGE_BSE_INBOX, EXCHANGE_BSE_RECORD_DIR$/,
    );
    expect(refusalOf({ ...nse, EXCHANGE_BSE_MEMBER_CODE: 'b-1' })).toMatch(/^EXCHANGE_BSE_MEMBER_CODE /);
    const all = { EXCHANGE_BSE_OUTBOX: '/o', EXCHANGE_BSE_INBOX: '/i', EXCHANGE_BSE_RECORD_DIR: '/r' };
    expect(loadConfig({ ...nse, EXCHANGE_BSE_MEMBER_CODE: 'B123', ...all }).exchange).toMatchObject({
      bseMemberCode: 'B123',
      bseOutbox: '/o',
    });
  });

  it('gives the settings the types the service relies on', () => {
    expectTypeOf<Config['port']>().toEqualTypeOf<number>();
    expectTypeOf<Config['publicUrl']>().toEqualTypeOf<string | null>();
    expectTypeOf<Config['trustProxy']>().toEqualTypeOf<boolean | string>();
    expectTypeOf<Config['passwordHashCost']>().toEqualTypeOf<PasswordHashCost>();
    expectTypeOf<Config['omsEmbedded']>().toEqualTypeOf<boolean>();
    expectTypeOf<Config['rateLimits']['redisUrl']>().toEqualTypeOf<string | null>();
    expectTypeOf<Config['metrics']>().toEqualTypeOf<{ port: number | null; host: string; token: string | null }>();
  });
});
