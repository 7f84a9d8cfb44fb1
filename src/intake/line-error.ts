// The parse error of every line-based format (line protocol, Graphite, StatsD, and the mapping of
// their samples): it names the 1-based line, which the Influx endpoints quote and listeners count.
export class LineError extends Error {
  readonly line: number;
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.name = new.target.name;
    this.line = line;
  }
}
