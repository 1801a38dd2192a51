// Vite build of the dashboard. The output (dist/) is committed and embedded in the Go binary
// (embed.go), so the build must be deterministic: same sources → byte-identical dist
// (`scripts/web.sh check` rebuilds into a temp dir and compares). Nothing here may depend on
// the time, the machine or the absolute path.
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({
  // paymentsd serves the app at /dashboard/ (server/dashboard_page.go).
  base: "/dashboard/",
  plugins: [react()],
  // `npx vite` (development only): the app calls the API on its own origin, so the dev server
  // forwards /v1 to a paymentsd on :8080 (`make run`). Not part of the build.
  server: {
    proxy: { "/v1": { target: "http://127.0.0.1:8080", changeOrigin: false } },
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // The page's CSP is script-src 'self' with no 'unsafe-inline': the modulepreload polyfill
    // Vite would inline into index.html is disabled (every browser we target supports it).
    modulePreload: { polyfill: false },
    sourcemap: false,
    // Never inline assets as data: URIs into JS/CSS: files are simpler to audit under the CSP.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    target: "es2022",
  },
});
