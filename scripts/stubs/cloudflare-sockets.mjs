// `cloudflare:sockets` for bundles that only read the app's route declarations (scripts/openapi.mjs): nothing connects.
export function connect() {
  throw new Error("cloudflare:sockets is not available outside workerd");
}
