// Per-granularity retention of project sources (SPEC section 11): a JSON object from granularity
// text to a timeframe (`{"1m":"7d"}`), or NULL when only expire_after (if any) applies.
export const RETENTION_SCHEMA = `
ALTER TABLE sources ADD COLUMN retention TEXT;
`;
