// Request bodies: JSON (plain or gzip) read with a hard byte limit applied AFTER inflating, so a
// gzip bomb is cut off while it expands; multipart only where a route asks for it (uploads).
// What a body holds in memory is charged to the server-wide budget (body-budget.ts) until its
// request is done.
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { Context, Next } from 'koa';
import { AppError, badRequest, payloadTooLarge, unsupportedMediaType } from '../../errors';
import { parseJsonText } from '../../lib/json';
import { stateOf } from '../state';
import { readUpload } from './upload';
import { type BodyBudget, type BodyCharge, createBodyBudget } from './body-budget';

// What an inflater costs besides its output (zlib state, 32 KiB window, output buffer: about
// 125 KiB of RSS measured here), charged
// up front so that bodies that never send past their gzip header still count.
const GUNZIP_COST = 128 * 1024;
// Without a budget (direct callers, tests) nothing is capped.
const UNLIMITED = createBodyBudget(Number.MAX_SAFE_INTEGER);

function isJsonType(ctx: Context): boolean {
  const type = ctx.request.type; // media type without parameters, lower-cased
  return (
    type === '' || type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))
  );
}

function hasBody(ctx: Context): boolean {
  const length = ctx.get('content-length');
  if (length !== '') return Number(length) > 0;
  return ctx.get('transfer-encoding') !== '';
}

function encodingOf(ctx: Context): 'identity' | 'gzip' {
  const enc = ctx.get('content-encoding').trim().toLowerCase();
  if (enc === '' || enc === 'identity') return 'identity';
  if (enc === 'gzip' || enc === 'x-gzip') return 'gzip';
  throw unsupportedMediaType(`Unsupported Content-Encoding: ${enc.slice(0, 40)} (use gzip or none)`);
}

function tooLarge(limit: number): AppError {
  return payloadTooLarge(`Request body exceeds the limit of ${limit} bytes`);
}

/** One body being read. Plain functions over this state rather than per-request named closures. */
interface BodyRead {
  source: Readable;
  stream: Readable;
  chunks: Buffer[];
  size: number;
  charge: BodyCharge;
  /** bytes charged up front from Content-Length */
  prepaid: number;
  done: boolean;
  resolve(body: Buffer): void;
  reject(err: unknown): void;
}

function finishRead(read: BodyRead, err: unknown): void {
  if (read.done) return;
  read.done = true;
  const { source, stream, chunks } = read;
  // The request keeps its listeners (and so `read`) until the connection closes: let go of the
  // chunks now, or a refused or finished body would stay in memory uncharged.
  read.chunks = [];
  stream.removeAllListeners('data');
  if (err) {
    if (stream !== source) stream.destroy();
    read.reject(err);
  } else read.resolve(Buffer.concat(chunks, read.size));
}

function onChunk(read: BodyRead, chunk: Buffer, limit: number): void {
  read.size += chunk.length;
  if (read.size > limit) return finishRead(read, tooLarge(limit));
  try {
    const unpaid = Math.min(chunk.length, read.size - read.prepaid);
    if (unpaid > 0) read.charge.take(unpaid);
  } catch (err) {
    return finishRead(read, err);
  }
  read.chunks.push(chunk);
}

/**
 * A body refused before it was all received is not read on: its connection closes once the answer
 * is out. Draining it would keep the connection (and what its socket buffers, ~64 KiB) until the
 * client stops sending; hundreds of such connections were most of the memory they cost.
 */
function refuseRest(ctx: Context): void {
  if (ctx.req.complete) return;
  ctx.req.pause();
  ctx.set('Connection', 'close');
}

/**
 * Reads the whole body, inflating gzip, refusing past `limit` bytes of (inflated) content. What it
 * keeps is charged to `charge`, which the caller closes once the request is done (503 past the cap).
 */
export function readRawBody(
  ctx: Context,
  limit: number,
  charge: BodyCharge = UNLIMITED.open(),
): Promise<Buffer> {
  return readAll(ctx, limit, charge).catch((err: unknown) => {
    refuseRest(ctx);
    throw err;
  });
}

function readAll(ctx: Context, limit: number, charge: BodyCharge): Promise<Buffer> {
  const encoding = encodingOf(ctx);
  const declared = Number(ctx.get('content-length') || 0);
  if (encoding === 'identity' && declared > limit) return Promise.reject(tooLarge(limit));
  // A declared plain body is paid for before any of it is read, so one that does not fit is refused
  // at once instead of after part of it was read for nothing.
  const prepaid = encoding === 'identity' && Number.isSafeInteger(declared) && declared > 0 ? declared : 0;
  try {
    charge.take(encoding === 'gzip' ? GUNZIP_COST : prepaid);
  } catch (err) {
    return Promise.reject(err);
  }
  return new Promise<Buffer>((resolve, reject) => {
    const source: Readable = ctx.req;
    const stream: Readable = encoding === 'gzip' ? source.pipe(createGunzip()) : source;
    const read: BodyRead = {
      source,
      stream,
      chunks: [],
      size: 0,
      charge,
      prepaid,
      done: false,
      resolve,
      reject,
    };
    stream.on('data', (chunk: Buffer) => onChunk(read, chunk, limit));
    stream.on('end', () => finishRead(read, null));
    stream.on('error', (err: Error & { code?: string }) => {
      if (stream !== source) return finishRead(read, badRequest('Request body is not valid gzip'));
      finishRead(read, new AppError('bad_request', `Could not read request body: ${err.code ?? 'aborted'}`));
    });
    source.on('aborted', () => finishRead(read, badRequest('Request body was aborted')));
  });
}

/** The bytes of a JSON body, or undefined when there is none; 415 for another media type. */
async function readJsonBytes(ctx: Context, limit: number, charge: BodyCharge): Promise<Buffer | undefined> {
  if (!hasBody(ctx)) return undefined;
  if (!isJsonType(ctx))
    throw unsupportedMediaType(`Unsupported Content-Type: ${ctx.request.type} (use application/json)`);
  return readRawBody(ctx, limit, charge);
}

/** Parses a JSON body into the request state's body (undefined when there is none). */
export function jsonBody(limit: number, budget: BodyBudget = UNLIMITED) {
  return async function parseJson(ctx: Context, next: Next): Promise<void> {
    const charge = budget.open();
    try {
      const raw = await readJsonBytes(ctx, limit, charge);
      if (raw !== undefined) stateOf(ctx).body = parseJsonText(raw); // the bytes are not kept past here
      await next();
    } finally {
      charge.close();
    }
  };
}

/**
 * Keeps a JSON body as bytes in the request state's rawBody (undefined when there is none), for a handler
 * that parses it elsewhere (the batch endpoint parses large bodies off the event loop).
 */
export function rawJsonBody(limit: number, budget: BodyBudget = UNLIMITED) {
  return async function keepJsonBytes(ctx: Context, next: Next): Promise<void> {
    const charge = budget.open();
    try {
      stateOf(ctx).rawBody = await readJsonBytes(ctx, limit, charge);
      await next();
    } finally {
      charge.close();
    }
  };
}

/** JSON, or multipart/form-data with one file field at most `uploadLimit` bytes (saved to a temp file). */
export function jsonOrMultipartBody(
  limit: number,
  uploadLimit: number,
  uploadDir: string,
  budget: BodyBudget = UNLIMITED,
) {
  const json = jsonBody(limit, budget);
  const upload = { uploadDir, maxFileBytes: uploadLimit, maxFieldsBytes: limit };
  return async function parseJsonOrMultipart(ctx: Context, next: Next): Promise<void> {
    if (ctx.request.type !== 'multipart/form-data') return json(ctx, next);
    encodingOf(ctx);
    // Files go to disk; the fields (at most `limit` bytes) are what a multipart parse holds.
    const charge = budget.open();
    try {
      charge.take(limit);
      await readUpload(ctx, next, upload);
    } finally {
      charge.close();
    }
  };
}

/**
 * The parsed body, taken off the context: a large batch then need not stay in memory while its
 * points wait for their commit (under load it would outlive young-generation collections).
 */
export function takeBody(ctx: Context): unknown {
  const state = stateOf(ctx);
  const body = state.body;
  state.body = undefined;
  return body;
}

/** A body as a JSON object, or 400 (arrays, strings, null and empty bodies are not objects). */
export function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest('Request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

/** A body that may be left out, but if sent must be a JSON object (400 otherwise). */
export function optionalObjectBody(body: unknown): Record<string, unknown> | undefined {
  return body === undefined ? undefined : objectBody(body);
}

/** The bytes rawJsonBody kept, taken off the context (see takeBody). */
export function takeRawBody(ctx: Context): Buffer | undefined {
  const state = stateOf(ctx);
  const raw = state.rawBody;
  state.rawBody = undefined;
  return raw;
}
