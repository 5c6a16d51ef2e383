/**
 * Reads a V8 CPU profile (`npm run bench -- --cpu-prof` writes them to bench-results/profiles/) and prints
 * where the busy samples went: per function as self time and inclusive time (a sample counts once for each
 * function on its stack, however often it recurs), and per file the same. With `--callers NAME`, the
 * stacks that lead to the function NAME, five frames up, with their shares.
 *
 * Usage: npx tsx bench/profile-summary.ts [--top 40] [--callers NAME] [PROFILE]
 * (PROFILE: the newest file of bench-results/profiles/ when left out)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

const PROFILES = join(import.meta.dirname, '..', 'bench-results', 'profiles');

function newestProfile(): string {
  const files = readdirSync(PROFILES)
    .filter((file) => file.endsWith('.cpuprofile'))
    .map((file) => join(PROFILES, file));
  if (files.length === 0) throw new Error(`no .cpuprofile in ${PROFILES}: run npm run bench -- --cpu-prof first`);
  return files.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]!;
}

/** Where a frame's code lives, from node_modules/, dist/ or src/ on (or the function's name for a native frame). */
const fileOf = (node: ProfileNode) =>
  node.callFrame.url.replace(/^.*\/(node_modules\/(?:@[^/]+\/)?[^/]+|dist|src)\//, '$1/') ||
  node.callFrame.functionName;
const functionOf = (node: ProfileNode) =>
  `${node.callFrame.functionName || '(anonymous)'} ${fileOf(node)}:${node.callFrame.lineNumber + 1}`;

function summarize(profile: Profile, top: number, callers: string | undefined): string[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const tables = {
    self: new Map<string, number>(),
    inclusive: new Map<string, number>(),
    'files, self': new Map<string, number>(),
    'files, inclusive': new Map<string, number>(),
  };
  const callerStacks = new Map<string, number>();
  const add = (table: Map<string, number>, key: string) => table.set(key, (table.get(key) ?? 0) + 1);
  let busy = 0;
  for (const id of profile.samples) {
    const leaf = byId.get(id)!;
    if (leaf.callFrame.functionName === '(idle)') continue;
    busy += 1;
    add(tables.self, functionOf(leaf));
    add(tables['files, self'], fileOf(leaf));
    const stack: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) stack.push(byId.get(at)!);
    for (const key of new Set(stack.map(functionOf))) add(tables.inclusive, key);
    for (const key of new Set(stack.map(fileOf))) add(tables['files, inclusive'], key);
    if (callers !== undefined) {
      const names = stack.map((node) => node.callFrame.functionName || '(anonymous)');
      const at = names.indexOf(callers);
      if (at >= 0) add(callerStacks, names.slice(at, at + 5).join(' < '));
    }
  }
  const share = (count: number) => `${((100 * count) / busy).toFixed(2).padStart(6)} %`;
  const rows = (table: Map<string, number>) => [...table].sort((a, b) => b[1] - a[1]).slice(0, top);
  const lines = [`${profile.samples.length} samples, ${busy} busy (the shares below are of those)`];
  for (const [name, table] of Object.entries(tables)) {
    lines.push('', `-- ${name}`, ...rows(table).map(([key, count]) => `${share(count)}  ${key}`));
  }
  if (callers !== undefined)
    lines.push(
      '',
      `-- stacks leading to ${callers}`,
      ...rows(callerStacks).map(([key, count]) => `${share(count)}  ${key}`),
    );
  return lines;
}

const program = new Command()
  .name('profile-summary')
  .argument('[profile]', 'a .cpuprofile file (the newest of bench-results/profiles/ by default)')
  .option('--top <n>', 'rows per table', (value) => Number.parseInt(value, 10), 40)
  .option('--callers <name>', 'also list the stacks that lead to this function')
  .action((file: string | undefined, options: { top: number; callers?: string }) => {
    const path = file ?? newestProfile();
    const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
    process.stdout.write(`${path}\n${summarize(profile, options.top, options.callers).join('\n')}\n`);
  });
program.parse();
