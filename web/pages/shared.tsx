// A dashboard opened through a read-only share link (/s/<token>): no sign-in, no edit controls;
// every read goes through the link (GET /api/v1/shared/<token>...).
import { get } from '../lib/api';
import { useLoad, useTitle } from '../lib/hooks';
import type { Dashboard, Source } from '../lib/types';
import { ErrorNotice, Skeleton } from '../components';
import { DashboardView } from './dashboard';

export function SharedDashboardPage({ token }: { token: string }) {
  const loaded = useLoad(
    (signal) =>
      get<{ dashboard: Dashboard; source: Omit<Source, 'id' | 'display_name'> }>(`/shared/${token}`, {
        signal,
      }),
    [token],
  );
  useTitle(loaded.data?.dashboard.name ?? 'Shared dashboard');
  if (loaded.error)
    return (
      <main>
        <ErrorNotice
          message={loaded.error === 'Not found' ? 'This link does not exist or was revoked.' : loaded.error}
        />
      </main>
    );
  if (!loaded.data)
    return (
      <main>
        <Skeleton lines={2} />
      </main>
    );
  const source: Source = { ...loaded.data.source, id: `shared-${token.slice(-5)}`, display_name: '' };
  return <DashboardView dashboard={loaded.data.dashboard} source={source} shareToken={token} />;
}
