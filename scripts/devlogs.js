#!/usr/bin/env node
// Follows the dev stack's log files and prints them tersely, one prefixed
// line per record:  node scripts/devlogs.js api=.dev/logs/api.log worker=…
// JSON (slog) records become "name LEVEL msg key=value …"; other lines are
// printed as they are. Long lines are cut unless they are warnings or errors
// (the full text stays in the log file). Set DEV_LOG_WIDTH to change the cut.
'use strict';

const fs = require('fs');

const width = Number(process.env.DEV_LOG_WIDTH || 160);
const color = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code, s) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
const nameColors = [36, 35, 33, 32, 34];
const levelColors = { DEBUG: 90, INFO: 32, WARN: 33, ERROR: 31 };

const files = process.argv.slice(2).map((arg, i) => {
  const eq = arg.indexOf('=');
  return { name: arg.slice(0, eq), path: arg.slice(eq + 1), offset: 0, rest: '', color: nameColors[i % nameColors.length] };
});
const pad = Math.max(...files.map((f) => f.name.length), 1);

function value(v) {
  if (v === null || typeof v !== 'object') {
    const s = String(v);
    return /[\s"=]/.test(s) ? JSON.stringify(s) : s;
  }
  return JSON.stringify(v);
}

function format(f, line) {
  let level = '';
  let text = line;
  if (line.startsWith('{')) {
    try {
      const rec = JSON.parse(line);
      level = String(rec.level || '').toUpperCase();
      const attrs = Object.entries(rec)
        .filter(([k]) => !['time', 'level', 'msg'].includes(k))
        .map(([k, v]) => `${k}=${value(v)}`);
      text = [rec.msg, ...attrs].join(' ');
    } catch {
      // not JSON after all: print as is
    }
  }
  const important = level === 'WARN' || level === 'ERROR' || /\b(panic|fatal|error)\b/i.test(level ? '' : text);
  if (!important && text.length > width) text = text.slice(0, width - 1) + '…';
  const lvl = level ? paint(levelColors[level] || 0, level.padEnd(5)) + ' ' : '';
  return `${paint(f.color, f.name.padEnd(pad))} ${lvl}${text}`;
}

function poll(f) {
  let st;
  try {
    st = fs.statSync(f.path);
  } catch {
    return;
  }
  if (st.size < f.offset) {
    f.offset = 0; // truncated or replaced
    f.rest = '';
  }
  if (st.size === f.offset) return;
  const fd = fs.openSync(f.path, 'r');
  try {
    const buf = Buffer.alloc(Math.min(st.size - f.offset, 1 << 20));
    const n = fs.readSync(fd, buf, 0, buf.length, f.offset);
    f.offset += n;
    const lines = (f.rest + buf.subarray(0, n).toString('utf8')).split('\n');
    f.rest = lines.pop();
    for (const line of lines) {
      if (line.trim() !== '') process.stdout.write(format(f, line) + '\n');
    }
  } finally {
    fs.closeSync(fd);
  }
}

const parent = process.ppid;
setInterval(() => {
  // Orphaned (the dev script died without stopping us): exit.
  if (process.ppid !== parent) process.exit(0);
  for (const f of files) poll(f);
}, 200);
process.stdout.on('error', () => process.exit(0));
// Ctrl-C reaches the whole process group: keep printing the other
// processes' shutdown logs until the dev script stops us with SIGTERM.
process.on('SIGINT', () => {});
for (const sig of ['SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    for (const f of files) poll(f);
    process.exit(0);
  });
}
