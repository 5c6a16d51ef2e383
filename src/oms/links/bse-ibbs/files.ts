/**
 * The iBBS link's folders: an upload file is written whole and then renamed into the outbox, and the inbox
 * lists only complete downloads and moves each one away (to done/ or failed/) once the link has applied it
 * or set it aside, so that no file is read half-written or applied twice. The bse-ibbs link writes its
 * upload files with writeUploadFile and reads the exchange's answers through an Inbox; the simulator reads
 * the link's outbox through an Inbox of its own.
 *
 * Decision: a file still being written is recognised by its name: the writer (we, the exchange or whoever
 * puts the exchange's downloads in the inbox) writes `<name>.tmp` and renames it to `<name>` when whole, as
 * writeUploadFile does; names ending in `.tmp`, and hidden names (starting with a dot), are never listed.
 * One writer per outbox and one reader per inbox (the link holding the session lease): a name is checked
 * free before it is taken. Moving a file to done/ is the last step of applying it: the link that crashes
 * in between finds it again, and applies each of its rows idempotently (by reference and bid id).
 */
import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { compareFileNames } from './mapping.js';

/** The suffix of a file being written. */
export const TMP_SUFFIX = '.tmp';

/** A name of a file in a folder: no path, not `.` or `..`. */
function plainName(name: string): string {
  if (name === '' || name === '.' || name === '..' || /[/\\\0]/.test(name)) {
    throw new Error(`"${name}" is not a file name`);
  }
  return name;
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | null)?.code ?? String(error);
}

/** Whether `path` exists (a folder that cannot be read is an error, not a no). */
async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return false;
    throw error;
  }
}

/** Writes `content` to `path` (replacing it) and flushes it to the disk. */
async function writeSynced(path: string, content: string): Promise<void> {
  const handle = await open(path, 'w', 0o644);
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Flushes a folder's entries (a rename in it) to the disk. */
async function syncFolder(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** `path` written whole: `<path>.tmp` written and flushed, then renamed, then its folder flushed. */
async function writeWhole(dir: string, name: string, content: string): Promise<string> {
  const path = join(dir, name);
  const tmp = path + TMP_SUFFIX;
  try {
    await writeSynced(tmp, content);
    await rename(tmp, path);
    await syncFolder(dir);
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    throw error;
  }
  return path;
}

/**
 * Writes a new file into `dir` whole (see writeWhole) and answers its path. A name already there is refused
 * (a file of the folders is never overwritten); a leftover `<name>.tmp` (a write that never finished) is
 * replaced. A folder that cannot be written is an Error naming it as the `role` folder.
 */
async function writeNewFile(role: string, dir: string, name: string, content: string): Promise<string> {
  plainName(name);
  if (name.endsWith(TMP_SUFFIX)) throw new Error(`"${name}" ends in ${TMP_SUFFIX}: no reader would take it`);
  const path = join(dir, name);
  const unwritable = (error: unknown) =>
    new Error(`the ${role} folder ${dir} cannot be written (${codeOf(error)})`, { cause: error });
  const taken = await exists(path).catch((error: unknown) => {
    throw unwritable(error);
  });
  if (taken) throw new Error(`${path} exists already: an ${role} file is never overwritten`);
  return writeWhole(dir, name, content).catch((error: unknown) => {
    throw unwritable(error);
  });
}

/** Writes an upload file into the outbox `dir` whole (writeNewFile); a name already there is refused. */
export async function writeUploadFile(dir: string, name: string, content: string): Promise<string> {
  return writeNewFile('upload', dir, name, content);
}

/**
 * Writes a download file into `dir` whole, as the exchange (the simulator's iBBS desk) does (writeNewFile):
 * the link's inbox lists it only once renamed; a name already there is refused.
 */
export async function writeDownloadFile(dir: string, name: string, content: string): Promise<string> {
  return writeNewFile('download', dir, name, content);
}

/**
 * An upload in two steps, for a writer that must record it between them (the link: its own copy is written
 * after the outbox's `.tmp` and before the rename, so that a crash leaves either nothing published or a
 * record of it). stageUpload writes `<name>.tmp` whole and flushed (no reader lists it); publishUpload
 * renames it to `<name>`; discardStaged removes a stage never published. The name checks and errors are
 * writeUploadFile's.
 */
export async function stageUpload(dir: string, name: string, content: string): Promise<void> {
  plainName(name);
  const path = join(dir, name);
  try {
    if (await exists(path)) throw new Error(`${path} exists already: an upload file is never overwritten`);
    await writeSynced(path + TMP_SUFFIX, content);
  } catch (error) {
    await unlink(path + TMP_SUFFIX).catch(() => undefined);
    if (codeOf(error) === String(error)) throw error;
    throw new Error(`the upload folder ${dir} cannot be written (${codeOf(error)})`, { cause: error });
  }
}

export async function publishUpload(dir: string, name: string): Promise<void> {
  const path = join(dir, plainName(name));
  try {
    await rename(path + TMP_SUFFIX, path);
    await syncFolder(dir);
  } catch (error) {
    throw new Error(`the upload folder ${dir} cannot be written (${codeOf(error)})`, { cause: error });
  }
}

export async function discardStaged(dir: string, name: string): Promise<void> {
  await unlink(join(dir, plainName(name)) + TMP_SUFFIX).catch(() => undefined);
}

/** Whether `<name>.tmp` is in `dir`: staged, never published. */
export async function isStaged(dir: string, name: string): Promise<boolean> {
  return exists(join(dir, plainName(name)) + TMP_SUFFIX);
}

/** Whether `name` is in `dir`. */
export async function isInFolder(dir: string, name: string): Promise<boolean> {
  return exists(join(dir, plainName(name)));
}

/** `name` in `dir`, or `<name>.2`, `<name>.3`, ... if taken: a file moved there never replaces another. */
async function freeName(dir: string, name: string): Promise<string> {
  let candidate = name;
  for (let n = 2; await exists(join(dir, candidate)); n += 1) candidate = `${name}.${n}`;
  return candidate;
}

/**
 * A folder of downloads: `list()` names the complete files, oldest first; each is then moved by rename,
 * once applied, to `done/`, or, when it cannot be, to `failed/` with its reason beside it.
 */
export class Inbox {
  readonly doneDir: string;
  readonly failedDir: string;

  constructor(readonly dir: string) {
    this.doneDir = join(dir, 'done');
    this.failedDir = join(dir, 'failed');
  }

  /** The complete files (no `.tmp`, no hidden name, no folder), oldest first (compareFileNames). */
  async list(): Promise<string[]> {
    const entries = await readdir(this.dir, { withFileTypes: true }).catch((error: unknown) => {
      throw new Error(`the inbox folder ${this.dir} cannot be read (${codeOf(error)})`, { cause: error });
    });
    return entries
      .filter((entry) => entry.isFile() && !entry.name.endsWith(TMP_SUFFIX) && !entry.name.startsWith('.'))
      .map((entry) => entry.name)
      .sort(compareFileNames);
  }

  /** A listed file's text. */
  async read(name: string): Promise<string> {
    return readFile(join(this.dir, plainName(name)), 'utf8');
  }

  /** Moves an applied file to done/ (a name there already: `<name>.2`, ...); answers where it went. */
  async markDone(name: string): Promise<string> {
    await mkdir(this.doneDir, { recursive: true });
    const target = join(this.doneDir, await freeName(this.doneDir, plainName(name)));
    await this.moveTo(name, target);
    return target;
  }

  /**
   * Moves a file the link cannot apply to failed/, and writes `reason` beside it in `<name>.reason.txt`;
   * answers where the file went. The reason is written first (as a `.tmp`), so that no file is set aside
   * without it.
   */
  async setAside(name: string, reason: string): Promise<string> {
    await mkdir(this.failedDir, { recursive: true });
    const target = join(this.failedDir, await freeName(this.failedDir, plainName(name)));
    const reasonPath = `${target}.reason.txt`;
    await writeSynced(reasonPath + TMP_SUFFIX, reason.endsWith('\n') ? reason : `${reason}\n`);
    try {
      await this.moveTo(name, target);
    } catch (error) {
      await unlink(reasonPath + TMP_SUFFIX).catch(() => undefined);
      throw error;
    }
    await rename(reasonPath + TMP_SUFFIX, reasonPath);
    await syncFolder(this.failedDir);
    return target;
  }

  /** Renames a file of the inbox to `target` (in a subfolder: one file system) and flushes both folders. */
  private async moveTo(name: string, target: string): Promise<void> {
    try {
      await rename(join(this.dir, name), target);
    } catch (error) {
      throw new Error(`${name} cannot be moved from the inbox ${this.dir} (${codeOf(error)})`, { cause: error });
    }
    await syncFolder(this.dir);
    await syncFolder(dirname(target));
  }
}
