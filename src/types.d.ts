// Assets imported with `with { type: "file" }` resolve to a path that `bun build --compile` embeds.
declare module "swagger-ui-dist/*" {
  const path: string;
  export default path;
}
