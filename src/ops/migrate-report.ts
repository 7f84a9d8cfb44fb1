// The lines `service migrate` prints, and the comparison of two metric summaries.
import type { MetricSummary } from './migrate-metrics';

export type Mismatches = string[];

/** A sum as printed: exact, or with 17 significant digits when the exact text is long. */
export function formatSum(sum: string): string {
  return sum.length <= 32 ? sum : Number(sum).toPrecision(17);
}

export const tableLine = (table: string, rows: number) => `table ${table}: ${rows} rows`;

/**
 * One line per granularity of a project, `project <id> <granularity>: <n> buckets, <n> leaves,
 * sum <decimal>`, from the source's summary; a granularity whose target differs is added to
 * `mismatches` with both exact sums (the comparison is exact whatever a line shows).
 */
export function summaryLines(
  projectId: string,
  source: MetricSummary,
  target: MetricSummary,
  mismatches: Mismatches,
): string[] {
  const names = [...new Set([...Object.keys(source), ...Object.keys(target)])].sort();
  if (names.length === 0) return [`project ${projectId}: no buckets`];
  return names.map((g) => {
    const a = source[g] ?? { buckets: 0, leaves: 0, sum: '0' };
    const b = target[g] ?? { buckets: 0, leaves: 0, sum: '0' };
    if (a.buckets !== b.buckets || a.leaves !== b.leaves || a.sum !== b.sum) {
      mismatches.push(
        `project ${projectId} ${g}: ${a.buckets} buckets, ${a.leaves} leaves, sum ${a.sum} copied as ${b.buckets} buckets, ${b.leaves} leaves, sum ${b.sum}`,
      );
    }
    return `project ${projectId} ${g}: ${a.buckets} buckets, ${a.leaves} leaves, sum ${formatSum(a.sum)}`;
  });
}
