// Records the hash of the console's source next to the build, so a test (without Node.js) sees stale assets.
// Keep the file list in step with tests/console/test_assets.py.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const tops = ["index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "scripts", "src"];

function walk(path) {
  return statSync(path).isDirectory() ? readdirSync(path).sort().flatMap((name) => walk(join(path, name))) : [path];
}

const hash = createHash("sha256");
for (const file of tops.flatMap((top) => walk(join(root, top))).sort()) {
  hash.update(relative(root, file).split("\\").join("/") + "\0");
  hash.update(readFileSync(file));
  hash.update("\0");
}
const out = join(root, "../litestar_userio/console/static/source.sha256");
writeFileSync(out, hash.digest("hex") + "\n");
console.log("source hash written to", out);
