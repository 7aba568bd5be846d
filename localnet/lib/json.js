// JSON helpers that keep u64 values exact.
//
// Solana JSON-RPC carries u64 values (lamports, rentEpoch = 2^64-1, token
// amounts) as bare JSON numbers, which JavaScript numbers cannot hold exactly.
// Values are kept as BigInt in memory and written back as bare integers.

/** Serializes a value; BigInt becomes a bare integer literal. */
export function stringify(value) {
  const parts = [];
  write(value, parts);
  return parts.join('');
}

function write(v, out) {
  switch (typeof v) {
    case 'bigint':
      out.push(v.toString());
      return;
    case 'number':
      out.push(Number.isFinite(v) ? JSON.stringify(v) : 'null');
      return;
    case 'string':
      out.push(JSON.stringify(v));
      return;
    case 'boolean':
      out.push(v ? 'true' : 'false');
      return;
    case 'undefined':
    case 'function':
    case 'symbol':
      out.push('null');
      return;
  }
  if (v === null) {
    out.push('null');
    return;
  }
  if (typeof v.toJSON === 'function' && !(v instanceof Uint8Array)) {
    write(v.toJSON(), out);
    return;
  }
  if (Array.isArray(v)) {
    out.push('[');
    for (let i = 0; i < v.length; i++) {
      if (i) out.push(',');
      write(v[i], out);
    }
    out.push(']');
    return;
  }
  out.push('{');
  let first = true;
  for (const k of Object.keys(v)) {
    const x = v[k];
    if (x === undefined || typeof x === 'function') continue;
    if (!first) out.push(',');
    first = false;
    out.push(JSON.stringify(k), ':');
    write(x, out);
  }
  out.push('}');
}

/**
 * Parses JSON text; integer literals too large for a double to hold exactly
 * (more than 15 digits) are returned as decimal strings instead of numbers.
 * Throws SyntaxError on malformed input.
 */
export function parse(text) {
  return JSON.parse(quoteBigInts(text));
}

function quoteBigInts(text) {
  // Fast path: no long digit runs at all.
  if (!/\d{16}/.test(text)) return text;
  let out = '';
  let last = 0;
  let inStr = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inStr) {
      if (c === 92) i++; // backslash: skip escaped char
      else if (c === 34) inStr = false;
      continue;
    }
    if (c === 34) {
      inStr = true;
      continue;
    }
    if (c === 45 || (c >= 48 && c <= 57)) {
      let j = i;
      if (text.charCodeAt(j) === 45) j++;
      const ds = j;
      while (j < text.length && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
      const nd = j - ds;
      const nc = text.charCodeAt(j);
      const isInt = nc !== 46 && nc !== 101 && nc !== 69; // not . e E
      if (isInt && nd > 15) {
        out += text.slice(last, i) + '"' + text.slice(i, j) + '"';
        last = j;
      }
      // skip the rest of a number token (fraction/exponent)
      while (j < text.length && /[0-9.eE+-]/.test(text[j])) j++;
      i = j - 1;
    }
  }
  return out + text.slice(last);
}
