// multipart/form-data with at most one file (SQLite uploads), read with formidable into the staging
// folder. Every file this request staged is tracked from its first byte, so none outlives the
// request: not on a refusal (a second file, a file over the limit), not when the client disconnects
// midway, not when the handler fails. Staged names are random without the client's extension (a
// 300-character extension once made the file name too long: ENAMETOOLONG, a 500); the handler reads
// the extension from the client's file name. Leftovers of a crash are removed at start
// (domain/sqlite-migration.ts).
import { rm } from 'node:fs/promises';
import type { Context, Next } from 'koa';
import formidable, { errors as formidableErrors, type File } from 'formidable';
import { AppError, badRequest, invalidField, isDiskFull, payloadTooLarge } from '../../errors';
import { stateOf } from '../state';

export interface UploadOptions {
  uploadDir: string;
  /** bytes of the one file */
  maxFileBytes: number;
  /** bytes of all text fields together */
  maxFieldsBytes: number;
}

/** Removes a staged file once its write stream is closed (so the stream cannot create it again). */
async function removeStaged(file: File): Promise<void> {
  const stream = (
    file as unknown as { _writeStream?: NodeJS.WritableStream & { closed?: boolean; destroy(): void } }
  )._writeStream;
  if (stream && !stream.closed) {
    await new Promise<void>((resolve) => {
      stream.once('close', () => resolve());
      stream.destroy();
    });
  }
  await rm(file.filepath, { force: true });
}

function toAppError(err: unknown, options: UploadOptions): unknown {
  if (isDiskFull(err)) return err; // 507, like every other write on a full disk
  const e = err as { code?: number; httpCode?: number };
  if (e.code === formidableErrors.maxFilesExceeded)
    return invalidField('sqlite_file', 'only one file may be uploaded');
  if (e.code === formidableErrors.aborted) return badRequest('Request body was aborted');
  if (e.httpCode === 413)
    return payloadTooLarge(`Upload exceeds the limit: one file of at most ${options.maxFileBytes} bytes`);
  return badRequest('Malformed multipart body');
}

/** Single values as strings, repeated ones as arrays (what the body schemas expect of a form). */
function flatten<T>(record: Record<string, T[] | undefined>): Record<string, T | T[]> {
  const out: Record<string, T | T[]> = {};
  for (const [key, values] of Object.entries(record)) {
    if (values && values.length > 0) out[key] = values.length === 1 ? values[0]! : values;
  }
  return out;
}

/** Reads the form into the request state's body and files, runs `next`, then removes what is still staged. */
export async function readUpload(ctx: Context, next: Next, options: UploadOptions): Promise<void> {
  const staged: File[] = [];
  const form = formidable({
    uploadDir: options.uploadDir,
    keepExtensions: false,
    maxFiles: 1,
    maxFileSize: options.maxFileBytes,
    maxTotalFileSize: options.maxFileBytes,
    maxFields: 50,
    maxFieldsSize: options.maxFieldsBytes,
    allowEmptyFiles: true,
    minFileSize: 0,
  });
  form.on('fileBegin', (_name, file) => staged.push(file));
  try {
    const parsed = await new Promise<[formidable.Fields, formidable.Files]>((resolve, reject) => {
      // A client that goes away midway: formidable may not hear of it, the request's close says so.
      ctx.req.once('close', () => {
        if (!ctx.req.complete)
          reject(Object.assign(new Error('aborted'), { code: formidableErrors.aborted }));
      });
      form.parse(ctx.req, (err, fields, files) => (err ? reject(err) : resolve([fields, files])));
    }).catch((err: unknown) => {
      ctx.req.resume(); // drain what the client still sends so the answer can go out
      throw toAppError(err, options);
    });
    const state = stateOf(ctx);
    state.body = flatten(parsed[0]);
    state.files = flatten(parsed[1]);
    await next();
  } finally {
    await Promise.all(staged.map((file) => removeStaged(file).catch(() => undefined)));
  }
}
