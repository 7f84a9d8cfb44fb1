// Leaves whose writes are checked for overflow before they are accepted (domain/metrics/overflow.ts).
import type { Db } from './db';
import type { LargeLeaf } from '../model/write-set';

export interface LargeLeavesRepo {
  all(): LargeLeaf[];
  add(leaf: LargeLeaf): void;
}

export function createLargeLeavesRepo(db: Db): LargeLeavesRepo {
  const all = db.prepare<[], { source_id: string; key: string; path: string }>(
    'SELECT source_id, key, path FROM metric_large_leaves',
  );
  const add = db.prepare<[string, string, string]>(
    'INSERT OR IGNORE INTO metric_large_leaves (source_id, key, path) VALUES (?, ?, ?)',
  );
  return {
    all: () => all.all().map((r) => ({ sourceId: r.source_id, key: r.key, path: r.path })),
    add: (leaf) => void add.run(leaf.sourceId, leaf.key, leaf.path),
  };
}
