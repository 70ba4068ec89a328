/**
 * The throughput load generator: wrk (Debian package `wrk`, installed here when missing), driven by a
 * Lua script generated for each run. wrk is written in C and needs a fraction of the CPU autocannon
 * does for the same load, which matters on a 2-core machine where the generator shares the cores with
 * the server, PostgreSQL and Redis.
 *
 * The script gives every request its body and path in turn (request n, counted per wrk thread, takes
 * body n and path n modulo their counts), with the time of day in ISO 8601 in place of the time marker,
 * and keeps the books the durability checks need:
 *
 * - The run has three phases on the wall clock: warm-up (unmeasured), the measured seconds, and the
 *   drain. When the measured seconds are over, each connection sends nothing more (wrk's `delay()`
 *   holds it far beyond the run) once its last request is answered, so no request is left half done.
 * - Every request sent and every answer received is counted per thread, with the answers' statuses,
 *   so `sent === answered` says that nothing was left in flight at the end.
 * - Answers received within the measured seconds give the rate; the parent samples the server's CPU at
 *   the same two instants (`windowStartMs` and `windowEndMs`, epoch milliseconds, shared by both).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface WrkRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  bodies?: string[];
  nowPlaceholder?: string;
  paths?: string[];
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
}

export interface WrkResult {
  /** Requests written, over every thread and phase. */
  sent: number;
  /** Answers received, over every thread and phase. */
  answered: number;
  /** Answers received within the measured seconds, by status. */
  measuredByStatus: Record<string, number>;
  /** Answers received during the whole run (warm-up, measured, drain), by status. */
  answeredByStatus: Record<string, number>;
  /** wrk's own counts of socket errors (connect, read, write, timeout). */
  errors: { connect: number; read: number; write: number; timeout: number };
  /** wrk's latency percentiles over the whole run, in milliseconds. */
  p50Ms: number;
  p99Ms: number;
  /** The measured window, epoch milliseconds. */
  windowStartMs: number;
  windowEndMs: number;
}

/** Seconds after the measured window for the last answers to arrive. */
const DRAIN_SECONDS = 3;
/** Time for wrk to start and connect before its warm-up counts. */
const START_MARGIN_MS = 300;
/** An ISO 8601 time of day is always this long: 2026-11-26T00:00:00.000Z. */
const ISO_LENGTH = 24;

let checked: string | undefined;

/** The wrk binary's version; installs the Debian package when wrk is missing and this process may. */
export function wrkVersion(): string {
  if (checked) return checked;
  const version = () => {
    // `wrk -v` prints its banner and exits 1.
    try {
      return execFileSync('wrk', ['-v'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      const out = (err as { stdout?: string }).stdout;
      if (out && /wrk/.test(out)) return out;
      throw err;
    }
  };
  try {
    checked = version();
  } catch {
    process.stderr.write('wrk is missing: installing the Debian package wrk (apt-get install -y wrk)\n');
    try {
      execFileSync('apt-get', ['install', '-y', '-q', 'wrk'], {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      });
      checked = version();
    } catch (err) {
      throw new Error(`wrk is not installed and could not be installed (${(err as Error).message}); install the Debian package wrk`);
    }
  }
  return (checked = /wrk\s+(\S+)/.exec(checked)?.[1] ?? checked.trim());
}

/** A Lua long string that holds `text` whatever it contains. */
function luaString(text: string): string {
  let level = 0;
  // The text's last character is followed by the closing bracket: a final `]` must not close early.
  while (`${text}]`.includes(`]${'='.repeat(level)}]`)) level++;
  const eq = '='.repeat(level);
  // A newline right after the opening bracket is dropped by Lua: add one so a leading newline survives.
  return `[${eq}[\n${text}]${eq}]`;
}

/**
 * Each request prepared whole by wrk.format (path, headers, body and its Content-Length), split where
 * the time goes: a placeholder as long as an ISO time keeps the length right.
 */
function script(request: WrkRequest, windowStartMs: number, windowEndMs: number): string {
  const marker = request.nowPlaceholder;
  const fill = '\u0001'.repeat(ISO_LENGTH);
  const bodies = (request.bodies ?? []).map((body) => (marker ? body.split(marker).join(fill) : body));
  const paths = request.paths ?? [new URL(request.url).pathname + new URL(request.url).search];
  // wrk.format adds no Host header of its own when given headers: HTTP/1.1 requires one.
  const headers = Object.entries({ Host: new URL(request.url).host, ...request.headers })
    .map(([name, value]) => `[ ${luaString(name)} ] = ${luaString(value)}`)
    .join(',\n');
  return `-- generated by test/bench/lib/wrk.ts
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_usec; } hrs_timeval;
int gettimeofday(hrs_timeval *tv, void *tz);
]]
local tv = ffi.new("hrs_timeval")
local function now_ms()
  ffi.C.gettimeofday(tv, nil)
  return tonumber(tv.tv_sec) * 1000 + math.floor(tonumber(tv.tv_usec) / 1000)
end

local WINDOW_START = ${windowStartMs}
local WINDOW_END = ${windowEndMs}
local FILL = ${luaString(fill)}
local method = ${luaString(request.method)}
local headers = {
${headers}
}
local paths = { ${paths.map(luaString).join(',\n')} }
local bodies = { ${bodies.map(luaString).join(',\n')} }

-- One entry per (path, body) pair used in turn: the request split at the time placeholders.
local prepared = {}
local count = math.max(#paths, #bodies, 1)
for i = 1, count do
  local path = paths[((i - 1) % #paths) + 1]
  local body = #bodies > 0 and bodies[((i - 1) % #bodies) + 1] or nil
  local text = wrk.format(method, path, headers, body)
  local parts = {}
  local from = 1
  while true do
    local s, e = string.find(text, FILL, from, true)
    if not s then break end
    parts[#parts + 1] = string.sub(text, from, s - 1)
    from = e + 1
  end
  parts[#parts + 1] = string.sub(text, from)
  prepared[i] = parts
end

local threads = {}
function setup(thread)
  threads[#threads + 1] = thread
end

sent = 0
answered = 0
measured = {}
everything = {}
local turn = 0
local second, prefix = -1, ""

local function iso_now()
  ffi.C.gettimeofday(tv, nil)
  local s = tonumber(tv.tv_sec)
  if s ~= second then
    second = s
    prefix = os.date("!%Y-%m-%dT%H:%M:%S", s)
  end
  return string.format("%s.%03dZ", prefix, math.floor(tonumber(tv.tv_usec) / 1000))
end

-- wrk asks delay() before every request it writes: past the measured window a connection that has
-- its answer sends nothing more. Requests are counted here rather than in request(), which wrk also
-- calls once before the run to check the script.
function delay()
  if now_ms() >= WINDOW_END then return 3600000 end
  sent = sent + 1
  return 0
end

function request()
  turn = turn + 1
  local parts = prepared[((turn - 1) % count) + 1]
  if #parts == 1 then return parts[1] end
  return table.concat(parts, iso_now())
end

function response(status, headers, body)
  answered = answered + 1
  local key = tostring(status)
  everything[key] = (everything[key] or 0) + 1
  local t = now_ms()
  if t >= WINDOW_START and t < WINDOW_END then
    measured[key] = (measured[key] or 0) + 1
  end
end

local function tally(into, from)
  for k, v in pairs(from) do into[k] = (into[k] or 0) + v end
end

local function json_counts(t)
  local out = {}
  for k, v in pairs(t) do out[#out + 1] = string.format("%q:%d", k, v) end
  return "{" .. table.concat(out, ",") .. "}"
end

function done(summary, latency, requests)
  local total_sent, total_answered, m, e = 0, 0, {}, {}
  for _, thread in ipairs(threads) do
    total_sent = total_sent + thread:get("sent")
    total_answered = total_answered + thread:get("answered")
    tally(m, thread:get("measured"))
    tally(e, thread:get("everything"))
  end
  io.write(string.format(
    'WRK_RESULT {"sent":%d,"answered":%d,"measured":%s,"everything":%s,"errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d},"p50":%d,"p99":%d}\\n',
    total_sent, total_answered, json_counts(m), json_counts(e),
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;
}

export interface WrkRun {
  /** Resolves at the start of the measured window (epoch ms `windowStartMs`). */
  windowStart: Promise<void>;
  /** Resolves at its end. */
  windowEnd: Promise<void>;
  result: Promise<WrkResult>;
}

const sleepUntil = (epochMs: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, epochMs - Date.now())));

/** Starts wrk on `request`; the caller samples what it measures at `windowStart` and `windowEnd`. */
export function runWrk(request: WrkRequest): WrkRun {
  wrkVersion();
  const dir = mkdtempSync(join(tmpdir(), 'hrs-wrk-'));
  const scriptPath = join(dir, 'load.lua');
  const started = Date.now();
  const windowStartMs = started + START_MARGIN_MS + request.warmupSeconds * 1000;
  const windowEndMs = windowStartMs + request.durationSeconds * 1000;
  writeFileSync(scriptPath, script(request, windowStartMs, windowEndMs));
  const threads = Math.max(1, Math.min(2, request.connections));
  const seconds = Math.ceil((windowEndMs - started) / 1000) + DRAIN_SECONDS;
  const child = spawn(
    'wrk',
    ['-t', String(threads), '-c', String(request.connections), '-d', `${seconds}s`, '--timeout', '10s', '-s', scriptPath, request.url],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const result = new Promise<WrkResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      rmSync(dir, { recursive: true, force: true });
      const line = stdout.split('\n').find((l) => l.startsWith('WRK_RESULT '));
      if (code !== 0 || !line) {
        reject(new Error(`wrk ended (${signal ?? `code ${code}`}) without a result: ${stderr.trim() || stdout.trim()}`));
        return;
      }
      const raw = JSON.parse(line.slice('WRK_RESULT '.length)) as {
        sent: number;
        answered: number;
        measured: Record<string, number>;
        everything: Record<string, number>;
        errors: WrkResult['errors'];
        p50: number;
        p99: number;
      };
      resolve({
        sent: raw.sent,
        answered: raw.answered,
        measuredByStatus: raw.measured,
        answeredByStatus: raw.everything,
        errors: raw.errors,
        p50Ms: raw.p50 / 1000,
        p99Ms: raw.p99 / 1000,
        windowStartMs,
        windowEndMs,
      });
    });
  });
  return { windowStart: sleepUntil(windowStartMs), windowEnd: sleepUntil(windowEndMs), result };
}
