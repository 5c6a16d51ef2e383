/** A fresh database seeded with the CLI, as an operator does: the demo user, its API key, OFS issues. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoOfsIssue } from '../../../../src/cli/demo.js';
import { runOrdergate } from '../../../../test/cli/run-ordergate.js';

export interface Demo {
  user_id: string;
  password: string;
  api_key: string;
  access_token: string;
  ofs_issues: { exchange: 'NSE_EQ' | 'BSE_EQ'; scrip_token: number; symbol: string; series: string }[];
}

export interface Workspace {
  dir: string;
  env: Record<string, string>;
  remove(): void;
}

export function workspace(prefix: string, settings: Record<string, string> = {}): Workspace {
  const dir = mkdtempSync(join(tmpdir(), `ordergate-client-${prefix}-`));
  return {
    dir,
    // A fast OMS, so that bids move on within a test.
    env: { DATABASE_URL: `sqlite:${join(dir, 'ordergate.db')}`, OMS_POLL_MS: '50', ...settings },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** `ordergate demo --json`: the demo user (retail, Rs 10,00,000), a new API key, the demo issue open for a day. */
export async function seedDemo(space: Workspace): Promise<Demo> {
  const result = await runOrdergate(['demo', '--json'], { env: space.env });
  if (result.code !== 0) throw new Error(`ordergate demo failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as Demo;
}

/**
 * `ordergate ofs import` of an issue like the demo's, on BSE_EQ 543210, whose windows close `closeInMs` from
 * now and whose allotments settle `settlementSeconds` after they are made.
 */
export async function importClosingIssue(space: Workspace, closeInMs: number, settlementSeconds: number) {
  const issue = {
    ...demoOfsIssue(Date.now(), closeInMs),
    exchange: 'BSE_EQ' as const,
    scrip_token: 543210,
    settlement_delay_seconds: settlementSeconds,
  };
  const file = join(space.dir, `issue-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify([issue]));
  const result = await runOrdergate(['ofs', 'import', file], { env: space.env });
  if (result.code !== 0) throw new Error(`ordergate ofs import failed: ${result.stderr}`);
  return issue;
}
