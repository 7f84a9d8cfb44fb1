// Pretty JSON with the line of every field, named the way the server's 422 bodies name them
// (`payload.grid[w1].path`, `segments[0].groups[1].items[2].value`): an array element that has a
// string `id` is named by it as well as by its index. Used by the JSON editor to show an error at
// its field. Pure, unit-tested in test/unit/web-json-lines.test.ts.

export interface PrettyJson {
  text: string;
  /** field name -> 1-based line */
  lines: Map<string, number>;
}

export function prettyWithLines(value: unknown): PrettyJson {
  const out: string[] = [];
  const lines = new Map<string, number>();
  const mark = (names: string[]) => {
    for (const name of names) if (name && !lines.has(name)) lines.set(name, out.length + 1);
  };
  const write = (node: unknown, names: string[], indent: string, head: string, tail: string) => {
    mark(names);
    if (node && typeof node === 'object') {
      const entries: [string[], unknown][] = Array.isArray(node)
        ? node.map((item, i) => {
            const id =
              item && typeof item === 'object' && typeof (item as { id?: unknown }).id === 'string'
                ? (item as { id: string }).id
                : null;
            return [names.flatMap((n) => [`${n}[${i}]`, ...(id !== null ? [`${n}[${id}]`] : [])]), item];
          })
        : Object.entries(node).map(([k, v]) => [names.length ? names.map((n) => `${n}.${k}`) : [k], v]);
      if (entries.length === 0)
        return void out.push(`${indent}${head}${Array.isArray(node) ? '[]' : '{}'}${tail}`);
      out.push(`${indent}${head}${Array.isArray(node) ? '[' : '{'}`);
      const keys = Array.isArray(node) ? null : Object.keys(node);
      entries.forEach(([childNames, child], i) => {
        const childHead = keys ? `${JSON.stringify(keys[i])}: ` : '';
        write(child, childNames, `${indent}  `, childHead, i < entries.length - 1 ? ',' : '');
      });
      out.push(`${indent}${Array.isArray(node) ? ']' : '}'}${tail}`);
      return;
    }
    out.push(`${indent}${head}${JSON.stringify(node) ?? 'null'}${tail}`);
  };
  write(value, [], '', '', '');
  return { text: out.join('\n'), lines };
}

/** The line of a field, or of its nearest named ancestor (a missing field points at its object). */
export function lineOfField(lines: Map<string, number>, field: string): number | null {
  let name = field;
  while (name) {
    const line = lines.get(name);
    if (line !== undefined) return line;
    const cut = Math.max(name.lastIndexOf('.'), name.lastIndexOf('['));
    if (cut <= 0) break;
    name = name.slice(0, cut);
  }
  return lines.get(name) ?? null;
}
