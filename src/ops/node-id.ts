// The id of this node (GET /metrics, the holder of the jobs' lease in cluster mode, PostgreSQL's
// application_name): `hostname:pid:random`, new at every start, so that a restarted process (in a
// container: the same host name and pid 1) is a new holder, and servers of one process differ.
import { randomBytes } from 'node:crypto';
import os from 'node:os';

export function newNodeId(): string {
  return `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}
