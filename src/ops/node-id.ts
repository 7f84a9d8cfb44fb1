// The id of this node (GET /metrics, the lease rows of cluster mode): `hostname:pid`, with `:N`
// after it for the Nth server a process starts (tests start many in one process).
import os from 'node:os';

let started = 0;

export function newNodeId(): string {
  started++;
  const id = `${os.hostname()}:${process.pid}`;
  return started === 1 ? id : `${id}:${started}`;
}
