/**
 * The iBBS link's folders (src/oms/links/bse-ibbs/files.ts) on a real file system, a temporary folder per
 * test: an upload file is written whole (no `.tmp` left), never overwritten, and a folder that cannot be
 * written is an Error naming it; the inbox lists complete files only, oldest first, and moves each to done/
 * or to failed/ with its reason, so that a file listed again after markDone is not applied twice.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Inbox, writeUploadFile } from '../../src/oms/links/bse-ibbs/files.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ordergate-ibbs-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const UPLOAD = 'OFSBID_6789_20261207093005_0001.csv';
const ROW = 'ACME,NII,R1,UCC1,,100,1300.25,2,0,N\r\n';

describe('writeUploadFile', () => {
  it('writes the file whole and leaves no .tmp', async () => {
    const path = await writeUploadFile(dir, UPLOAD, ROW);
    expect(path).toBe(join(dir, UPLOAD));
    expect(readFileSync(path, 'utf8')).toBe(ROW);
    expect(readdirSync(dir)).toEqual([UPLOAD]);
  });

  it('replaces a .tmp left by a write that never finished', async () => {
    writeFileSync(join(dir, `${UPLOAD}.tmp`), 'ACME,NII,R1,UC');
    await writeUploadFile(dir, UPLOAD, ROW);
    expect(readdirSync(dir)).toEqual([UPLOAD]);
    expect(readFileSync(join(dir, UPLOAD), 'utf8')).toBe(ROW);
  });

  it('refuses to overwrite a file, and leaves it as it was', async () => {
    await writeUploadFile(dir, UPLOAD, ROW);
    await expect(writeUploadFile(dir, UPLOAD, 'other')).rejects.toThrow(
      /exists already: an upload file is never overwritten/,
    );
    expect(readFileSync(join(dir, UPLOAD), 'utf8')).toBe(ROW);
    expect(readdirSync(dir)).toEqual([UPLOAD]);
  });

  it('an unwritable folder is an Error naming the folder', async () => {
    const missing = join(dir, 'no-such-folder');
    await expect(writeUploadFile(missing, UPLOAD, ROW)).rejects.toThrow(
      `the upload folder ${missing} cannot be written (ENOENT)`,
    );
    const aFile = join(dir, 'a-file');
    writeFileSync(aFile, '');
    await expect(writeUploadFile(aFile, UPLOAD, ROW)).rejects.toThrow(
      `the upload folder ${aFile} cannot be written (ENOTDIR)`,
    );
    // A folder without write permission (a root process writes anyway: checked only for another user).
    if (process.getuid?.() !== 0) {
      const readOnly = join(dir, 'read-only');
      mkdirSync(readOnly, { mode: 0o500 });
      await expect(writeUploadFile(readOnly, UPLOAD, ROW)).rejects.toThrow(
        `the upload folder ${readOnly} cannot be written`,
      );
      expect(readdirSync(readOnly)).toEqual([]);
    }
  });

  it('refuses a name that is a path, or one that ends in .tmp', async () => {
    await expect(writeUploadFile(dir, '../escape.csv', ROW)).rejects.toThrow(/is not a file name/);
    await expect(writeUploadFile(dir, `${UPLOAD}.tmp`, ROW)).rejects.toThrow(/ends in .tmp/);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('Inbox', () => {
  const older = 'SUCCESS_6789_20261207093005_0001.csv';
  const newer = 'REJECT_6789_20261207093005_0002.csv';
  const latest = 'ALLOC_6789_20261208180000_0001.csv';

  const put = (name: string, text = ROW) => writeFileSync(join(dir, name), text);

  it('lists complete files only, oldest first: never a .tmp, a hidden file or a folder', async () => {
    for (const name of [latest, newer, older, `${latest}.tmp`, '.~lock.csv#']) put(name);
    mkdirSync(join(dir, 'done'));
    const inbox = new Inbox(dir);
    expect(await inbox.list()).toEqual([older, newer, latest]);
    expect(await inbox.read(older)).toBe(ROW);
  });

  it('sees a file written by writeUploadFile only once it is whole', async () => {
    const inbox = new Inbox(dir);
    put(`${older}.tmp`, 'ACME,NII');
    expect(await inbox.list()).toEqual([]);
    await writeUploadFile(dir, older, ROW);
    expect(await inbox.list()).toEqual([older]);
  });

  it('moves a done file to done/: listed again, it is not there to apply twice', async () => {
    put(older);
    put(newer);
    const inbox = new Inbox(dir);
    const applied: string[] = [];
    for (let round = 0; round < 2; round += 1) {
      for (const name of await inbox.list()) {
        applied.push(name);
        await inbox.markDone(name);
      }
    }
    expect(applied).toEqual([older, newer]);
    expect(readdirSync(inbox.doneDir).sort()).toEqual([newer, older].sort());
    expect(readFileSync(join(inbox.doneDir, older), 'utf8')).toBe(ROW);
    await expect(inbox.markDone(older)).rejects.toThrow(`${older} cannot be moved from the inbox ${dir} (ENOENT)`);
  });

  it('keeps both when a file of the same name arrives again', async () => {
    const inbox = new Inbox(dir);
    put(older, 'first');
    await inbox.markDone(older);
    put(older, 'second');
    expect(await inbox.markDone(older)).toBe(join(inbox.doneDir, `${older}.2`));
    expect(readFileSync(join(inbox.doneDir, older), 'utf8')).toBe('first');
    expect(readFileSync(join(inbox.doneDir, `${older}.2`), 'utf8')).toBe('second');
  });

  it('sets a file aside in failed/, its reason written beside it', async () => {
    put(older, 'junk');
    put(newer);
    const inbox = new Inbox(dir);
    const target = await inbox.setAside(older, 'line 1: 1 fields where a success row has 10');
    expect(target).toBe(join(inbox.failedDir, older));
    expect(await inbox.list()).toEqual([newer]);
    expect(readdirSync(inbox.failedDir).sort()).toEqual([older, `${older}.reason.txt`]);
    expect(readFileSync(target, 'utf8')).toBe('junk');
    expect(readFileSync(`${target}.reason.txt`, 'utf8')).toBe('line 1: 1 fields where a success row has 10\n');
    await expect(inbox.setAside('gone.csv', 'why')).rejects.toThrow(/gone.csv cannot be moved from the inbox/);
    expect(readdirSync(inbox.failedDir).sort()).toEqual([older, `${older}.reason.txt`]);
  });

  it('an inbox folder that cannot be read is an Error naming it', async () => {
    const missing = join(dir, 'nowhere');
    await expect(new Inbox(missing).list()).rejects.toThrow(`the inbox folder ${missing} cannot be read (ENOENT)`);
    expect(existsSync(missing)).toBe(false);
  });
});
