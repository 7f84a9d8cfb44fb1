// Request bodies: JSON (plain or gzip) read with a hard byte limit applied AFTER inflating, so a
// gzip bomb is cut off while it expands; multipart only where a route asks for it (uploads).
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { Context, Next } from 'koa';
import { AppError, badRequest, payloadTooLarge, unsupportedMediaType } from '../../errors';
import { parseJsonText } from '../../lib/json';
import { readUpload } from './upload';

function isJsonType(ctx: Context): boolean {
  const type = ctx.request.type; // media type without parameters, lower-cased
  return type === '' || type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
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
  done: boolean;
  resolve(body: Buffer): void;
  reject(err: unknown): void;
}

function finishRead(read: BodyRead, err: unknown): void {
  if (read.done) return;
  read.done = true;
  const { source, stream } = read;
  stream.removeAllListeners('data');
  if (err) {
    if (stream !== source) stream.destroy();
    source.resume(); // drain what the client still sends so the answer can go out
    read.reject(err);
  } else read.resolve(Buffer.concat(read.chunks, read.size));
}

function onChunk(read: BodyRead, chunk: Buffer, limit: number): void {
  read.size += chunk.length;
  if (read.size > limit) return finishRead(read, tooLarge(limit));
  read.chunks.push(chunk);
}

/** Reads the whole body, inflating gzip, refusing past `limit` bytes of (inflated) content. */
export function readRawBody(ctx: Context, limit: number): Promise<Buffer> {
  const encoding = encodingOf(ctx);
  const declared = Number(ctx.get('content-length') || 0);
  if (encoding === 'identity' && declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise<Buffer>((resolve, reject) => {
    const source: Readable = ctx.req;
    const stream: Readable = encoding === 'gzip' ? source.pipe(createGunzip()) : source;
    const read: BodyRead = { source, stream, chunks: [], size: 0, done: false, resolve, reject };
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
async function readJsonBytes(ctx: Context, limit: number): Promise<Buffer | undefined> {
  if (!hasBody(ctx)) return undefined;
  if (!isJsonType(ctx)) throw unsupportedMediaType(`Unsupported Content-Type: ${ctx.request.type} (use application/json)`);
  return readRawBody(ctx, limit);
}

/** Parses a JSON body into ctx.state.body (undefined when there is none). */
export function jsonBody(limit: number) {
  return async function parseJson(ctx: Context, next: Next): Promise<void> {
    const raw = await readJsonBytes(ctx, limit);
    if (raw !== undefined) ctx.state.body = parseJsonText(raw); // the bytes are not kept past here
    await next();
  };
}

/**
 * Keeps a JSON body as bytes in ctx.state.rawBody (undefined when there is none), for a handler
 * that parses it elsewhere (the batch endpoint parses large bodies off the event loop).
 */
export function rawJsonBody(limit: number) {
  return async function keepJsonBytes(ctx: Context, next: Next): Promise<void> {
    ctx.state.rawBody = await readJsonBytes(ctx, limit);
    await next();
  };
}

/** JSON, or multipart/form-data with one file field at most `uploadLimit` bytes (saved to a temp file). */
export function jsonOrMultipartBody(limit: number, uploadLimit: number, uploadDir: string) {
  const json = jsonBody(limit);
  const upload = { uploadDir, maxFileBytes: uploadLimit, maxFieldsBytes: limit };
  return async function parseJsonOrMultipart(ctx: Context, next: Next): Promise<void> {
    if (ctx.request.type !== 'multipart/form-data') return json(ctx, next);
    encodingOf(ctx);
    await readUpload(ctx, next, upload);
  };
}

/**
 * The parsed body, taken off the context: a large batch then need not stay in memory while its
 * points wait for their commit (under load it would outlive young-generation collections).
 */
export function takeBody(ctx: Context): unknown {
  const body: unknown = ctx.state.body;
  ctx.state.body = undefined;
  return body;
}

/** The body as a JSON object, or 400 (arrays, strings, null and empty bodies are not objects). */
export function bodyObject(ctx: Context): Record<string, unknown> {
  const body: unknown = ctx.state.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest('Request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

/** The bytes rawJsonBody kept, taken off the context (see takeBody). */
export function takeRawBody(ctx: Context): Buffer | undefined {
  const raw = ctx.state.rawBody as Buffer | undefined;
  ctx.state.rawBody = undefined;
  return raw;
}
