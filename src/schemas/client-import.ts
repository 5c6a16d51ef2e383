/**
 * The clients file of `ordergate users import-clients` (docs/operations.md, "The clients file"): CSV as
 * RFC 4180 writes it (comma-separated, a field in double quotes may hold commas, line breaks and doubled
 * quotes; CRLF or LF line ends; a UTF-8 byte order mark is dropped), a header row naming the columns
 * `user_id`, `ucc`, `pan` and optionally `client_type` and `custodian_code`, in any order, then one client a
 * record. A column the header leaves out keeps what is recorded; an empty cell of a column it names sets
 * the default (CLI) or removes (the custodian code). Each record is checked alone: a record's problem
 * refuses that record, never the others; a file that is no clients file at all (no header, a column missing
 * or unknown), or whose quote opens and never closes (every line after it would be read as one field), is
 * refused whole.
 */
import { CLIENT_TYPES, checkedMemberDataChange, type ClientMember } from '../domain/access/member-data.js';

/** The columns of a clients file: the first three are required. */
export const CLIENT_COLUMNS = ['user_id', 'ucc', 'pan', 'client_type', 'custodian_code'] as const;
const REQUIRED_COLUMNS = CLIENT_COLUMNS.slice(0, 3);

/** A user id as ordergate takes it (ordergate users add). */
export const USER_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

const UNCLOSED_QUOTE = 'a quoted field is not closed before the end of the file';

/** One record of a CSV text: its fields, the line it starts on (1 the first), or why it cannot be read. */
export interface CsvRecord {
  line: number;
  fields: string[];
  /** Set when the record cannot be read (an unclosed quote, text after a closing quote): its fields are what was read. */
  problem?: string;
}

/**
 * The records of a CSV text, as RFC 4180 writes them. A quoted field may span lines (its record is named
 * by the line it starts on); a blank line is no record. Never throws: a record it cannot read carries its
 * problem, and reading goes on at the next line.
 */
export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  const input = text.startsWith('\uFEFF') ? text.slice(1) : text;
  let i = 0;
  let line = 1;
  while (i < input.length) {
    const start = line;
    const fields: string[] = [];
    let problem: string | undefined;
    // One record: fields until an unquoted line end or the end of the text.
    for (;;) {
      let field = '';
      if (input[i] === '"') {
        i++;
        let closed = false;
        while (i < input.length) {
          const c = input[i]!;
          if (c === '"') {
            if (input[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            closed = true;
            break;
          }
          if (c === '\n') line++;
          field += c;
          i++;
        }
        if (!closed) {
          problem = UNCLOSED_QUOTE;
        } else if (i < input.length && input[i] !== ',' && input[i] !== '\n' && input[i] !== '\r') {
          problem = 'text after the closing quote of a field (a quote inside a quoted field is written "")';
          // Skip the rest of the line: the record cannot be read.
          while (i < input.length && input[i] !== '\n') i++;
        }
      } else {
        while (i < input.length && input[i] !== ',' && input[i] !== '\n' && input[i] !== '\r') {
          if (input[i] === '"' && problem === undefined)
            problem = 'a quote inside an unquoted field (quote the whole field and double the quote)';
          field += input[i];
          i++;
        }
      }
      fields.push(field);
      if (i < input.length && input[i] === ',') {
        i++;
        continue;
      }
      break;
    }
    // The line end: CRLF, LF or a lone CR.
    if (input[i] === '\r') i++;
    if (input[i] === '\n') i++;
    line++;
    const blank = fields.length === 1 && fields[0] === '' && problem === undefined;
    if (!blank) records.push(problem === undefined ? { line: start, fields } : { line: start, fields, problem });
  }
  return records;
}

/** A record of the clients file, checked: the client's member data, whole, or why it is refused. */
export type ClientLine =
  | { line: number; userId: string; member: ClientMember; problems?: undefined }
  | { line: number; userId: string | null; problems: string[] };

/** The clients file, read: its records, each checked alone (refused ones with their problems). Throws (a message) for a file that is no clients file. */
export function parseClientsFile(text: string): ClientLine[] {
  const [header, ...records] = parseCsv(text);
  if (header === undefined)
    throw new Error('the file is empty: it needs a header row (user_id,ucc,pan,client_type,custodian_code)');
  if (header.problem !== undefined) throw new Error(`the header row (line ${header.line}): ${header.problem}`);
  const names = header.fields.map((name) => name.trim().toLowerCase());
  const unknown = names.filter((name) => !(CLIENT_COLUMNS as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new Error(
      `the header row names unknown columns ${unknown.map((name) => `"${name}"`).join(', ')}: the columns are ${CLIENT_COLUMNS.join(', ')}`,
    );
  const twice = names.filter((name, index) => names.indexOf(name) !== index);
  if (twice.length > 0) throw new Error(`the header row names ${twice.join(', ')} twice`);
  const missing = REQUIRED_COLUMNS.filter((name) => !names.includes(name));
  if (missing.length > 0)
    throw new Error(`the header row lacks the columns ${missing.join(', ')} (user_id, ucc and pan are required)`);
  const column = (name: (typeof CLIENT_COLUMNS)[number]) => names.indexOf(name);
  const unclosed = records.find((record) => record.problem === UNCLOSED_QUOTE);
  if (unclosed !== undefined)
    throw new Error(
      `line ${unclosed.line}: a quoted field opens there and is not closed before the end of the file (nothing is applied: the lines after it would be read as one field)`,
    );
  const seen = new Map<string, number>();
  return records.map((record): ClientLine => {
    const value = (name: (typeof CLIENT_COLUMNS)[number]) => {
      const index = column(name);
      return index < 0 ? '' : (record.fields[index] ?? '').trim();
    };
    const userId = value('user_id');
    const named = userId === '' ? null : userId;
    if (record.problem !== undefined) return { line: record.line, userId: named, problems: [record.problem] };
    if (record.fields.length !== names.length)
      return {
        line: record.line,
        userId: named,
        problems: [`${record.fields.length} fields where the header names ${names.length}`],
      };
    const problems: string[] = [];
    if (!USER_ID_PATTERN.test(userId))
      problems.push(
        userId === ''
          ? 'user_id is empty'
          : `user_id "${userId}" must be 1 to 64 letters, digits, dots, dashes or underscores`,
      );
    const ucc = value('ucc');
    const pan = value('pan');
    if (ucc === '') problems.push('ucc is empty');
    if (pan === '') problems.push('pan is empty');
    const clientType = value('client_type');
    const custodian = value('custodian_code');
    const checked = checkedMemberDataChange({
      ...(ucc !== '' && { ucc }),
      ...(pan !== '' && { pan }),
      // A column the header leaves out keeps what is recorded.
      ...(column('client_type') >= 0 && { clientType: clientType === '' ? CLIENT_TYPES[0] : clientType.toUpperCase() }),
      ...(column('custodian_code') >= 0 && { custodianCode: custodian === '' ? null : custodian }),
    });
    problems.push(...checked.problems);
    // A user's id is its line's only when the line is taken: a refused line leaves it to a corrected one after.
    const earlier = problems.length === 0 ? seen.get(userId) : undefined;
    if (earlier !== undefined) problems.push(`user_id ${userId} is on line ${earlier} already`);
    if (problems.length > 0 || checked.change === null) return { line: record.line, userId: named, problems };
    seen.set(userId, record.line);
    const { change } = checked;
    return {
      line: record.line,
      userId,
      member: {
        ucc: change.ucc!,
        pan: change.pan!,
        ...(change.clientType !== undefined && { clientType: change.clientType }),
        ...(change.custodianCode !== undefined && { custodianCode: change.custodianCode }),
      },
    };
  });
}
