// Replaced at bundle time by build.mjs (esbuild define); the fallback serves `npm start`.
declare const __SERVICE_VERSION__: string | undefined;
export const SERVER_VERSION: string = typeof __SERVICE_VERSION__ === 'string' ? __SERVICE_VERSION__ : '0.1.0';
