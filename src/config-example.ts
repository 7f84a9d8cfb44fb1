// The documented example configuration, printed by `service config`. Under tsx it is read from the
// repository; build.mjs replaces this module with one returning the file's text, because the
// executable ships without the repository's files.
import { readFileSync } from 'node:fs';

export function exampleConfig(): string {
  return readFileSync(new URL('../config.example.toml', import.meta.url), 'utf8');
}
