/**
 * The server as a real process, started as `npm start` starts it (dist/main.js) on a free port, and a
 * plain HTTP client for it: for the end-to-end tests.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { cleanEnv, ROOT } from '../cli/run-ordergate.js';

const MAIN = join(ROOT, 'dist', 'main.js');
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;

export interface ServerProcess {
  child: ChildProcessWithoutNullStreams;
  url: string;
  /** Everything written to stderr so far. */
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export const children = new Set<ChildProcessWithoutNullStreams>();

/** Starts the server as `npm start` does, on a free port (PORT=0), and reads its URL from the log. */
export function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: cleanEnv({ ...env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' }),
  });
  children.add(child);
  let stderr = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the server did not report listening within ${START_TIMEOUT_MS} ms: ${stderr}`)),
      START_TIMEOUT_MS,
    );
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before listening: ${stderr}`));
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      // Complete lines only: a chunk may end in the middle of one.
      for (const line of stderr.split('\n').slice(0, -1)) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'ordergate listening' && entry.url) {
          clearTimeout(timer);
          resolve({ child, url: entry.url, stderr: () => stderr, exited });
          return;
        }
      }
    });
    child.stdout.resume();
  });
}

export async function stopServer(server: ServerProcess) {
  server.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `the server did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM; its last log lines:\n${server.stderr().split('\n').slice(-8).join('\n')}`,
          ),
        ),
      STOP_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([server.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls until the condition holds, for at most `ms`. */
export async function eventually(condition: () => boolean, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return condition();
}

export async function call(
  url: string,
  method: string,
  path: string,
  options: { body?: unknown; token?: string; apiKey?: string } = {},
  // Answers are read field by field.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  const response = await fetch(url + path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}
