declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** An empty D1 database of the tests alone (vitest.config.ts), for the store-upgrade test. */
    UPGRADE_DB: D1Database;
  }
}
