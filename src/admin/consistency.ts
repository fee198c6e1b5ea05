/** Kept for src/index.ts, which imports the admin router from here; the route, service and SQL live beside it. */
export { admin } from "./admin.routes";
export { checkConsistency, type Difference } from "./consistency.service";
