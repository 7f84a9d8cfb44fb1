// Embedded metric store for project sources (owned by the metrics engine).
export const METRICS_SCHEMA = `
SELECT 1;
`;
