// Builds the console into ../assets: app.js (bundled, minified), app.css and index.html.
// `node build.mjs --check` builds into a temporary directory and fails when ../assets differs.
import * as esbuild from "esbuild";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const assets = join(here, "..", "assets");
const FILES = ["index.html", "console/app.js", "console/app.css"];

async function bundle(entry, extra) {
  const result = await esbuild.build({
    entryPoints: [join(here, entry)],
    bundle: true,
    write: false,
    minify: true,
    sourcemap: false,
    legalComments: "eof",
    target: "es2020",
    charset: "utf8",
    logLevel: "warning",
    absWorkingDir: here,
    ...extra,
  });
  if (result.outputFiles.length !== 1) throw new Error(`${entry}: expected one output file`);
  return result.outputFiles[0].contents;
}

async function buildInto(dir) {
  const js = await bundle("src/main.js", { format: "esm", platform: "browser", outfile: join(dir, "console/app.js") });
  const css = await bundle("src/style.css", { loader: { ".css": "css" }, outfile: join(dir, "console/app.css") });
  const html = readFileSync(join(here, "index.html"));
  mkdirSync(join(dir, "console"), { recursive: true });
  writeFileSync(join(dir, "console/app.js"), js);
  writeFileSync(join(dir, "console/app.css"), css);
  writeFileSync(join(dir, "index.html"), html);
}

if (process.argv.includes("--check")) {
  const tmp = mkdtempSync(join(tmpdir(), "handoff-console-"));
  try {
    await buildInto(tmp);
    const stale = FILES.filter((f) => {
      const target = join(assets, f);
      return !existsSync(target) || !readFileSync(target).equals(readFileSync(join(tmp, f)));
    });
    if (stale.length) {
      const names = stale.map((f) => relative(process.cwd(), join(assets, f)) || f).join(", ");
      console.error(`console assets are stale: ${names} differ from the sources; run \`make console\``);
      process.exit(1);
    }
    console.log("console assets are up to date");
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
} else {
  await buildInto(assets);
  for (const f of FILES) console.log(`wrote ${relative(process.cwd(), join(assets, f))}`);
}
