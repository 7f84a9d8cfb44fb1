// Small data hooks shared by the pages.
import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import type { Account } from './types';
import { ApiError } from './api';

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload: () => void;
  setData: (data: T) => void;
}

/** Runs `load` when `deps` change (aborting the previous run) and on reload(). */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: string | null; loading: boolean }>({
    data: null,
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(controller.signal).then(
      (data) => !controller.signal.aborted && setState({ data, error: null, loading: false }),
      (err: Error) =>
        !controller.signal.aborted && setState({ data: null, error: err.message, loading: false }),
    );
    return () => controller.abort();
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  const setData = useCallback((data: T) => setState({ data, error: null, loading: false }), []);
  return { ...state, reload, setData };
}

export interface SessionValue {
  account: Account;
  /** read the account again (after creating an organization) */
  refresh: () => void;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<SessionValue | null>(null);

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside a signed-in page');
  return value;
}

/** Sets document.title for the page. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · Metrics` : 'Metrics';
  }, [title]);
}

/** Calls `fn` every `ms` (null: never), with the latest fn. */
export function useInterval(fn: () => void, ms: number | null): void {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    if (ms === null) return;
    const id = setInterval(() => saved.current(), ms);
    return () => clearInterval(id);
  }, [ms]);
}

export interface FormSubmit {
  submit: (e: Event) => Promise<void>;
  /** the failure's message (the API's own for its errors), until the next submit */
  error: string | null;
  /** true while the action runs; stays true after success (the page moves on) */
  busy: boolean;
}

/** A form's submit handler: reads its fields, runs `action`, shows what failed. */
export function useFormSubmit(action: (form: FormData) => Promise<void>): FormSubmit {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      await action(form);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
      setBusy(false);
    }
  };
  return { submit, error, busy };
}
