declare module "har-schema" {
  /** The HAR 1.2 JSON schemas (draft-06), one per object of the format, by name. */
  const schemas: Record<string, Record<string, unknown>>;
  export default schemas;
}
