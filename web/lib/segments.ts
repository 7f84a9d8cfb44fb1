// The key substitution of segments, shared with the server's share-link reads (one implementation).
export { captureGroups, hasSegments, substituteKey } from '../../src/shared/key-segments';
