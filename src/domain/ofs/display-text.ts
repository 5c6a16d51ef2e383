/**
 * Text from outside that ordergate stores and prints on a line of its own output (an operator's import
 * file, a command's argument, a row stored before a rule existed), issue 47 row 5:
 *
 * - the characters no such text may hold, each named as U+XXXX in an error: the control characters (C0,
 *   NUL included, DEL and C1), which break or forge a line; the bidirectional controls, which reorder what
 *   a terminal shows; the zero-width and other invisible characters, which make two different texts look
 *   alike; the line and paragraph separators; and half of a surrogate pair alone, which is no character;
 * - a value printed as one field of a space-separated line, quoted and escaped when it needs to be;
 * - the exchange identifiers, symbol and series, taken only as NSE and BSE write them (docs/operations.md,
 *   "OFS issue file").
 */

/** Named refused characters; any other refused one is named by its kind alone. */
const NAMES: Record<number, string> = {
  0x00: 'null',
  0x09: 'tab',
  0x0a: 'line feed',
  0x0b: 'line tabulation',
  0x0c: 'form feed',
  0x0d: 'carriage return',
  0x1b: 'escape',
  0x7f: 'delete',
  0x85: 'next line',
  0xad: 'soft hyphen',
  0x061c: 'Arabic letter mark',
  0x200b: 'zero width space',
  0x200c: 'zero width non-joiner',
  0x200d: 'zero width joiner',
  0x200e: 'left-to-right mark',
  0x200f: 'right-to-left mark',
  0x2028: 'line separator',
  0x2029: 'paragraph separator',
  0x202a: 'left-to-right embedding',
  0x202b: 'right-to-left embedding',
  0x202c: 'pop directional formatting',
  0x202d: 'left-to-right override',
  0x202e: 'right-to-left override',
  0x2060: 'word joiner',
  0x2061: 'function application',
  0x2062: 'invisible times',
  0x2063: 'invisible separator',
  0x2064: 'invisible plus',
  0x2066: 'left-to-right isolate',
  0x2067: 'right-to-left isolate',
  0x2068: 'first strong isolate',
  0x2069: 'pop directional isolate',
  0xfeff: 'zero width no-break space, the byte order mark',
};

/** The kind of a refused code point (what completes "U+XXXX, ..."), or null when it may be held. */
function refusedKind(cp: number): string | null {
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return 'a control character';
  if (cp === 0x2028 || cp === 0x2029) return 'a line break';
  // Unicode's Bidi_Control characters, every one of them.
  if (
    cp === 0x061c ||
    cp === 0x200e ||
    cp === 0x200f ||
    (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2066 && cp <= 0x2069)
  ) {
    return 'a bidirectional control';
  }
  if (cp === 0xad || (cp >= 0x200b && cp <= 0x200d) || (cp >= 0x2060 && cp <= 0x2064) || cp === 0xfeff)
    return 'an invisible character';
  if (cp >= 0xd800 && cp <= 0xdfff) return 'half of a surrogate pair alone (no character)';
  return null;
}

const codePoint = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * The first character of the text that no text from outside may hold, named: "U+000A (line feed), a
 * control character"; null when there is none. Spaces, letters of any script and emoji may be held.
 */
export function unsafeCharacter(text: string): string | null {
  // A string iterates by code point; half of a surrogate pair alone comes as itself.
  for (const char of text) {
    const cp = char.codePointAt(0)!;
    const kind = refusedKind(cp);
    if (kind === null) continue;
    const name = NAMES[cp];
    return name === undefined ? `${codePoint(cp)}, ${kind}` : `${codePoint(cp)} (${name}), ${kind}`;
  }
  return null;
}

/**
 * Where the first refused character of a JSON value is, in its strings and its field names, named as the
 * import's errors name fields ("[1].listings[0].series.RETAIL holds U+202E (right-to-left override), a
 * bidirectional control"); null when there is none. `path` is the value's own name ('' for the file).
 */
export function unsafeTextIn(value: unknown, path = ''): string | null {
  if (typeof value === 'string') {
    const character = unsafeCharacter(value);
    return character === null ? null : `${path === '' ? 'the file' : path} holds ${character}`;
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = unsafeTextIn(item, `${path}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const inKey = unsafeCharacter(key);
      if (inKey !== null)
        return `${path === '' ? 'the file' : path} has a field name (${quoted(key)}) that holds ${inKey}`;
      const found = unsafeTextIn(item, path === '' ? key : `${path}.${key}`);
      if (found !== null) return found;
    }
  }
  return null;
}

const ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * The text in double quotes, as JSON writes a string, with every refused character escaped (`\n`,
 * `\u202e`): it reads back as the text with JSON.parse, and it holds no line break and nothing a terminal
 * would reorder or hide. For messages that quote what they were given.
 */
export function quoted(text: string): string {
  let out = '"';
  for (const char of text) {
    const escape = ESCAPES[char];
    if (escape !== undefined) out += escape;
    else if (refusedKind(char.codePointAt(0)!) !== null)
      out += `\\u${char.codePointAt(0)!.toString(16).padStart(4, '0')}`;
    else out += char;
  }
  return `${out}"`;
}

/**
 * The text with each refused character written as `\uXXXX` and nothing else changed: for a message that
 * holds what it was given (a file's refused value), printed on a line of its own.
 */
export function withUnsafeEscaped(text: string): string {
  let out = '';
  for (const char of text) {
    const cp = char.codePointAt(0)!;
    out += refusedKind(cp) === null ? char : `\\u${cp.toString(16).padStart(4, '0')}`;
  }
  return out;
}

/**
 * A value printed as one field of a space-separated line (`registered: offer <offer_id> <symbol> ...`):
 * as it is when it is printable ASCII without a space, a quote or a backslash, which every identifier
 * ordergate takes is; else `quoted`, so that a value stored before a rule cannot forge a line, shift the
 * fields after it or hide a character.
 */
export function displayToken(text: string): string {
  return /^[!#-[\]-~]+$/.test(text) ? text : quoted(text);
}

/**
 * An exchange symbol as NSE and BSE write it: upper-case letters, digits, `&`, `-` and `_`, beginning with
 * a letter or a digit, words apart by one space (BSE's JK AGRI, ALAN SCOTT), at most 20 characters. Checked against NSE's list of
 * equity symbols (2,187, October 2025: M&M, BAJAJ-AUTO, L&TFH, 3MINDIA, MCDOWELL-N, at most 10 characters)
 * and BSE's list of equity security ids (3,951, July 2024: at most 11 characters). A regular expression
 * for a JSON schema's `pattern` (the unicode flag, as Ajv uses it), the length in it: one rule, one message.
 */
export const EXCHANGE_SYMBOL_MAX_LENGTH = 20;
export const EXCHANGE_SYMBOL_PATTERN = `^(?=.{1,${EXCHANGE_SYMBOL_MAX_LENGTH}}$)[A-Z0-9][A-Z0-9&_-]*( [A-Z0-9&_-]+)*$`;
export const EXCHANGE_SYMBOL_RULE = `1 to ${EXCHANGE_SYMBOL_MAX_LENGTH} upper-case letters, digits, &, - and _, beginning with a letter or a digit, words apart by one space, as NSE and BSE write it (M&M, BAJAJ-AUTO, 3MINDIA, JK AGRI)`;

/** A series as the exchanges write it: NSE's two characters (RS, IS, ES, EQ), BSE's group of one or two (A, B, XT). */
export const EXCHANGE_SERIES_PATTERN = '^[A-Z0-9]{1,2}$';
export const EXCHANGE_SERIES_RULE = '1 or 2 upper-case letters or digits, as the exchange writes it';
