// Light, dark or system theme: chosen on the account page or in the header, remembered in
// localStorage, applied as data-theme on <html> (the CSS tokens in web/styles/theme.css follow it).
import { useEffect, useState } from 'preact/hooks';

export type ThemeChoice = 'light' | 'dark' | 'system';
const KEY = 'theme';
const listeners = new Set<() => void>();
const darkQuery = () => matchMedia('(prefers-color-scheme: dark)');

export function themeChoice(): ThemeChoice {
  const saved = localStorage.getItem(KEY);
  return saved === 'light' || saved === 'dark' ? saved : 'system';
}

export function resolvedTheme(choice = themeChoice()): 'light' | 'dark' {
  if (choice !== 'system') return choice;
  return darkQuery().matches ? 'dark' : 'light';
}

export function applyTheme(): void {
  document.documentElement.dataset.theme = resolvedTheme();
  for (const listener of listeners) listener();
}

export function setThemeChoice(choice: ThemeChoice): void {
  if (choice === 'system') localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, choice);
  applyTheme();
}

/** Follows the operating system while the choice is `system`. */
export function watchSystemTheme(): void {
  darkQuery().addEventListener('change', applyTheme);
}

/** [choice, resolved theme]; re-renders when either changes. */
export function useTheme(): [ThemeChoice, 'light' | 'dark'] {
  const [, setTick] = useState(0);
  useEffect(() => {
    const update = () => setTick((n) => n + 1);
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return [themeChoice(), resolvedTheme()];
}
