// Builds the console into the Python package, so the wheel serves it without Node.js.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const monaco = fileURLToPath(new URL("./node_modules/monaco-editor/esm/vs", import.meta.url));

export default defineConfig({
  base: "./",
  resolve: { alias: { "monaco-esm": monaco } },
  worker: { format: "es" },
  build: {
    outDir: "../litestar_userio/console/static",
    emptyOutDir: true,
    assetsDir: "assets",
    target: "es2022",
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 8000,
    reportCompressedSize: false,
  },
});
