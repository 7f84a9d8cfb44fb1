// Shapes of the API objects the interface reads (SPEC sections 4 and 6).
import type { WidgetConfig } from '../widgets/types';

export interface User {
  id: string;
  email: string;
  name: string | null;
}
export interface Organization {
  id: string;
  name: string;
  slug: string;
}
export interface Account {
  user: User;
  organization: Organization | null;
  membership: { id: string; role: string; organization_id: string } | null;
}

export interface Source {
  id: string;
  type: 'project' | 'database';
  display_name: string;
  driver?: string;
  time_zone: string;
  beginning_of_week: number;
  granularities: string[];
  default_timeframe: string;
  default_granularity: string;
  expire_after?: number | null;
  setup_status?: string | null;
}

export interface SegmentItem {
  label: string;
  value: string;
  default?: boolean;
}
export interface Segment {
  id?: string;
  name: string;
  label?: string;
  type: 'select' | 'text';
  placeholder?: string | null;
  default_value?: string | null;
  groups?: { label: string; items: SegmentItem[] }[];
}

export interface Dashboard {
  id: string;
  name: string;
  key: string;
  visibility: boolean;
  locked: boolean;
  source_type: 'project' | 'database';
  source_id: string;
  group_id: string | null;
  position: number;
  default_timeframe: string;
  default_granularity: string;
  payload: { grid?: WidgetConfig[]; [k: string]: unknown };
  segments: Segment[];
  /** the version it was loaded at; a save sends it back so a change saved meanwhile is not lost */
  updated_at?: string;
}

export interface DashboardGroup {
  id: string;
  name: string;
  position: number;
}

export interface SourceToken {
  id: string;
  name: string;
  last5: string;
  read: boolean;
  write: boolean;
  source_id: string;
  inserted_at: string;
}
