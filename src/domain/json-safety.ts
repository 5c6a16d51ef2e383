/**
 * Prototype pollution in parsed JSON: a "__proto__" key, or a "constructor" object holding "prototype",
 * at any depth. The body parser refuses such bodies (e-117), and so do the JSON texts carried inside a
 * body (an order cart's `orders` string), so that no later merge of either can pollute a prototype.
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
  if (typeof constructor === 'object' && constructor !== null && Object.hasOwn(constructor, 'prototype')) return field('constructor.prototype');
  for (const [name, item] of Object.entries(value)) {
    const found = prototypeKeyIn(item, field(name));
    if (found !== undefined) return found;
  }
  return undefined;
}
