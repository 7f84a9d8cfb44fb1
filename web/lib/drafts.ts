// Unsaved dashboard edits kept in sessionStorage (this tab only), so that a reload, a page left by
// mistake or a sign-in in between (the session ended in another tab) does not lose them. A draft
// remembers the version it was made from, so saving it later still refuses to overwrite a change
// saved meanwhile (docs/dashboards.md).
import type { WidgetConfig } from '../widgets/types';

export interface Draft {
  grid: WidgetConfig[];
  /** the dashboard's updated_at the draft was made from */
  updated_at?: string;
  /** when it was last changed (ms) */
  saved_at: number;
}

const key = (dashboardId: string) => `dashboard-draft:${dashboardId}`;

export function readDraft(dashboardId: string): Draft | null {
  try {
    const text = sessionStorage.getItem(key(dashboardId));
    const draft = text ? (JSON.parse(text) as Draft) : null;
    return draft && Array.isArray(draft.grid) ? draft : null;
  } catch {
    return null;
  }
}

export function writeDraft(dashboardId: string, draft: Draft): void {
  try {
    sessionStorage.setItem(key(dashboardId), JSON.stringify(draft));
  } catch {
    // storage full or disabled: the leave guard still asks
  }
}

export function clearDraft(dashboardId: string): void {
  try {
    sessionStorage.removeItem(key(dashboardId));
  } catch {
    // nothing kept
  }
}
