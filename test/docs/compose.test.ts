/**
 * docs/serving.md's compose file, checked as Docker Compose would read it (there is no Docker
 * here): YAML, valid against the Compose Specification's JSON schema (vendored under
 * test/schemas/compose), and every setting it gives parley is one parley has.
 */
import { describe, expect, test } from "bun:test";
import Ajv from "ajv";
import { settingNamed } from "../../src/config/settings.ts";
import schema from "../schemas/compose/compose-spec.json";
import { codeBlocks, read } from "./markdown.ts";

const blocks = codeBlocks(read("docs/serving.md"), "yaml").filter((b) => /^services:/m.test(b.code));
const compose = Bun.YAML.parse(blocks[0]?.code ?? "") as any;
const validate = new Ajv({ strict: false, allErrors: true, validateSchema: false }).compile(schema);

describe("docs/serving.md: the compose file for several gateways", () => {
  test("there is one, and the Compose Specification's schema accepts it", () => {
    expect(blocks).toHaveLength(1);
    const valid = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  test("the schema is not a rubber stamp: a misspelt key or a port of the wrong shape is refused", () => {
    expect(validate({ ...compose, services: { ...compose.services, lb: { ...compose.services.lb, port: ["8000:8000"] } } })).toBe(false);
    expect(validate({ ...compose, services: { ...compose.services, db: { ...compose.services.db, healthcheck: { test: 5 } } } })).toBe(false);
  });

  test("Postgres, Redis, two gateways on both and a load balancer in front of them", () => {
    const gateways = Object.entries(compose.services).filter(([, s]: [string, any]) => s.command?.[0] === "parley");
    expect(gateways.map(([name]) => name)).toEqual(["gateway-1", "gateway-2"]);
    for (const [, gateway] of gateways as [string, any][]) {
      expect(gateway.environment.DATABASE_URL).toStartWith("postgres://");
      expect(new URL(gateway.environment.DATABASE_URL).hostname).toBe("db");
      expect(new URL(gateway.environment.REDIS_URL).hostname).toBe("redis");
      // Every variable it sets is a parley setting.
      for (const key of Object.keys(gateway.environment)) expect(settingNamed(key) ?? key).not.toBeString();
    }
    const nginx = compose.configs.nginx.content as string;
    expect(nginx).toContain("server gateway-1:8000; server gateway-2:8000;");
    expect(compose.services.lb.configs[0].source).toBe("nginx");
  });
});
