// A project source as the domain holds it (embedded store, UTC, every calendar granularity), for
// tests below HTTP; `patch` changes what a test needs.
import type { Source } from '../../src/domain/types';

export function projectSource(patch: Partial<Source> = {}): Source {
  return {
    id: 'b3f1c7a2-0000-4000-8000-000000000001',
    organizationId: 'org',
    type: 'project',
    displayName: 'Shop',
    driver: null,
    timeZone: 'UTC',
    beginningOfWeek: 1,
    granularities: ['1m', '1h', '1d', '1w', '1mo', '1q', '1y'],
    defaultTimeframe: '24h',
    defaultGranularity: '1h',
    expireAfter: null,
    projectClusterId: null,
    config: {},
    setupStatus: null,
    createdAt: 0,
    ...patch,
  };
}
