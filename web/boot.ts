// The first script of every page (a small classic script, web/lib/prefetch.ts): on a dashboard's page
// it starts reading the dashboard, the sources and then the series before the interface's module has
// downloaded, so the first metrics read leaves within a round trip or two of the navigation.
import { prefetchForLocation } from './lib/prefetch';

prefetchForLocation(location.pathname, location.search);
