// The web interface's files inside the single executable: build.mjs embeds every file of
// .build/web as a SEA asset named `web/<path>`, with `web/manifest.json` listing them. Read only
// when the interface is first asked for, so start-up does no work for it.

type SeaModule = typeof import('node:sea');

function seaModule(): SeaModule | null {
  const sea = process.getBuiltinModule?.('node:sea') as SeaModule | undefined;
  return sea && typeof sea.isSea === 'function' && sea.isSea() ? sea : null;
}

export const WEB_ASSET_PREFIX = 'web/';

/** A reader of the embedded web files, or null outside the executable. */
export function embeddedWebFiles(): ((name: string) => Buffer | null) | null {
  const sea = seaModule();
  if (!sea) return null;
  return (name) => {
    try {
      return Buffer.from(sea.getAsset(WEB_ASSET_PREFIX + name));
    } catch {
      return null; // not embedded
    }
  };
}
