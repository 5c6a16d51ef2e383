/**
 * What parsed JSON may not hold, at any depth. Prototype pollution: a "__proto__" key, or a "constructor"
 * object holding "prototype"; the body parser refuses such bodies (e-117), and so do the JSON texts carried
 * inside a body (an order cart's `orders` string), so that no later merge of either can pollute a
 * prototype. And characters no store keeps as sent (e-125), in bodies, paths and queries alike.
 */

/** Where a parsed value holds a "__proto__" key or a "constructor" object with a "prototype" key, as a field path (`at` prefixes it); undefined if nowhere. */
export function prototypeKeyIn(value: unknown, at = ''): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = prototypeKeyIn(item, `${at}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  const field = (name: string) => (at === '' ? name : `${at}.${name}`);
  if (Object.hasOwn(value, '__proto__')) return field('__proto__');
  const constructor = Object.hasOwn(value, 'constructor') ? (value as { constructor: unknown }).constructor : undefined;
  if (typeof constructor === 'object' && constructor !== null && Object.hasOwn(constructor, 'prototype'))
    return field('constructor.prototype');
  for (const [name, item] of Object.entries(value)) {
    const found = prototypeKeyIn(item, field(name));
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * A character no store of ordergate's keeps as sent: NUL (U+0000), which PostgreSQL's text refuses (the
 * whole transaction fails: another user's bids with it), and a lone UTF-16 surrogate, which no UTF-8 text
 * can hold (the driver would store U+FFFD in its place, other than sent). Refused at the edge on both
 * databases, so that a string stored on one is stored on the other.
 */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What unstorable character `text` holds, in words ("NUL (U+0000)"); null when none. */
export function unstorableCharacterIn(text: string): string | null {
  const match = UNSTORABLE.exec(text);
  if (match === null) return null;
  const code = match[0].charCodeAt(0);
  return code === 0 ? 'NUL (U+0000)' : `a lone UTF-16 surrogate (U+${code.toString(16).toUpperCase()})`;
}

/**
 * Where a parsed value holds a key or a string with an unstorable character, as a field path (`at`
 * prefixes it), and which character; undefined when nowhere.
 */
export function unstorableStringIn(value: unknown, at = ''): { field: string; character: string } | undefined {
  if (typeof value === 'string') {
    const character = unstorableCharacterIn(value);
    return character === null ? undefined : { field: at, character };
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = unstorableStringIn(item, `${at}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [name, item] of Object.entries(value)) {
    const field = at === '' ? name : `${at}.${name}`;
    const inKey = unstorableCharacterIn(name);
    if (inKey !== null) return { field, character: inKey };
    const found = unstorableStringIn(item, field);
    if (found !== undefined) return found;
  }
  return undefined;
}
