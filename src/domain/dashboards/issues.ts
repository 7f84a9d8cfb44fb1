// Turns valibot issues into the field names of a 422 body and collects errors from several checks,
// so one answer lists every broken field. Field names: object keys joined by `.`, array positions
// as `[n]` (`segments[0].groups[1].items[2].value`); callers pass a prefix for nested documents
// (`payload.grid[kpi-1]`).
import type { BaseIssue } from 'valibot';
import { invalid } from '../../errors';
import type { FieldErrors } from '../../model/dashboard';

/** Appends a path segment: keys with `.`, array indexes and labels in brackets. */
export function fieldPath(prefix: string, key: string | number): string {
  if (typeof key === 'number') return `${prefix}[${key}]`;
  return prefix === '' ? key : `${prefix}.${key}`;
}

function issueField(prefix: string, issue: BaseIssue<unknown>): string {
  let field = prefix;
  for (const item of issue.path ?? []) {
    const key = item.key;
    field = fieldPath(field, typeof key === 'number' ? key : String(key));
  }
  return field;
}

// valibot reports a missing object key with the object schema's own message; say it plainly.
function issueMessage(issue: BaseIssue<unknown>): string {
  const missingKey =
    (issue.type === 'object' || issue.type === 'loose_object') && issue.path && issue.input === undefined;
  return missingKey ? 'is required' : issue.message;
}

// A 422 names at most this many fields: a megabyte of broken widgets must not make a
// multi-megabyte answer (the first ones show what is wrong).
const MAX_FIELDS = 100;

export class ErrorBag {
  readonly fields: FieldErrors = {};
  private count = 0;

  add(field: string, message: string): void {
    const name = field === '' ? 'body' : field;
    const known = Object.hasOwn(this.fields, name);
    if (!known && this.count >= MAX_FIELDS) return;
    if (!known) this.count += 1;
    const list = (this.fields[name] ??= []);
    if (!list.includes(message)) list.push(message);
  }

  addIssues(prefix: string, issues: readonly BaseIssue<unknown>[]): void {
    for (const issue of issues) this.add(issueField(prefix, issue), issueMessage(issue));
  }

  /** True when an error was recorded for `field` or anything inside it (`source` covers `source.id`). */
  has(field: string): boolean {
    return Object.keys(this.fields).some(
      (name) => name === field || name.startsWith(`${field}.`) || name.startsWith(`${field}[`),
    );
  }

  get empty(): boolean {
    return Object.keys(this.fields).length === 0;
  }

  /** Throws the 422 when anything was collected. */
  throwIfAny(): void {
    if (!this.empty) throw invalid(this.fields);
  }
}
