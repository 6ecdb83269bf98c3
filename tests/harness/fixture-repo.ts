// A small, deterministic source tree for tests and the demo: a TypeScript
// project whose files mention `status` often enough that `rg -n status` prints
// tens of kilobytes, and one long file worth reading whole.

/** Files by relative path. `modules` sets how many service files there are. */
export function fixtureRepo(modules = 60): Record<string, string> {
  const files: Record<string, string> = {
    "README.md": "# StatusBadge\n\nA small service that renders build status badges.\n",
    "package.json": JSON.stringify({ name: "status-badge", version: "1.0.0", type: "module" }, null, 2),
  };
  for (let i = 0; i < modules; i++) {
    const name = `service${String(i).padStart(2, "0")}`;
    const retries = i % 7 === 3 ? "if (res.status === 503) return retry(req);" : "// no retry";
    const lines = [
      `// ${name}: fetches and caches the build status of one project.`,
      `import { fetchStatus, type Status } from "../lib/status.ts";`,
      "",
      `export async function ${name}Status(req: Request): Promise<Status> {`,
      "  const res = await fetchStatus(req);",
      `  ${retries}`,
      "  if (res.status >= 400) throw new Error(`status ${res.status} from upstream`);",
      "  const body = await res.json();",
      "  return { state: body.status, updatedAt: body.updated_at, source: " + JSON.stringify(name) + " };",
      "}",
      "",
      `export function ${name}Label(status: Status): string {`,
      "  switch (status.state) {",
      '    case "passing": return "build: passing";',
      '    case "failing": return "build: failing";',
      "    default: return `status: ${status.state}`;",
      "  }",
      "}",
    ];
    files[`src/services/${name}.ts`] = `${lines.join("\n")}\n`;
  }
  const lib: string[] = ["// Shared status types and the HTTP client.", "export type Status = { state: string; updatedAt: string; source: string };", ""];
  for (let i = 0; i < 400; i++) {
    lib.push(`export const STATUS_CODE_${i} = ${200 + (i % 300)}; // status code table entry ${i}`);
  }
  lib.push("export async function fetchStatus(req: Request): Promise<Response> {", "  return fetch(req);", "}");
  files["src/lib/status.ts"] = `${lib.join("\n")}\n`;
  return files;
}
