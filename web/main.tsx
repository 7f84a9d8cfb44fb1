// The web interface's entry: theme first (no flash of the wrong one), then the app.
import { render } from 'preact';
import './styles/theme.css';
import './styles/app.css';
import './styles/alerts.css';
import { applyTheme, watchSystemTheme } from './lib/theme';
import { App } from './app';
import { prefetchForLocation, prefetchStarted } from './lib/prefetch';

applyTheme();
if (!prefetchStarted()) prefetchForLocation(location.pathname, location.search); // web/boot.ts did not run
watchSystemTheme();
render(<App />, document.getElementById('app')!);
